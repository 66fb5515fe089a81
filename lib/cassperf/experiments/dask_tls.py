"""TLS for the Dask cluster that places an experiment's clients: per-experiment temporary
certificates, mutual authentication, encryption required.

Why: a Dask scheduler runs any function a connected client sends it, as the user it runs as.
Listening on loopback without TLS would let every local user of this machine (and on a real
cluster, anyone who reaches the scheduler's port) run code as us. With
:func:`temporary_security` every connection -- client to scheduler, scheduler to worker,
worker to worker -- is TLS, and each side must present a certificate signed by a CA made for
this experiment alone; a peer without one is refused during the handshake.

The files: a private folder (mode 0700, made by :func:`tempfile.mkdtemp`) holding the CA
certificate and one key pair signed by it (each file 0600). The CA's own key is never written:
it signs the one certificate in memory and is dropped, so nobody can sign another. The folder
is removed when the context exits. For workers on other machines (``SSHCluster``) the same
Security object is handed to distributed, which passes the certificate material to the workers
it starts; nothing needs copying by hand.
"""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cassperf.certs import issue, make_ca, write_private

#: certificates live this long: an experiment's placement, with a wide margin
VALIDITY = dt.timedelta(days=2)


@dataclass(frozen=True)
class TlsFiles:
    """Where one experiment's certificate material is (PEM files, mode 0600)."""

    folder: Path
    ca_cert: Path
    cert: Path
    key: Path


def make_certificates(folder: Path, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> TlsFiles:
    """A CA and one certificate it signs (usable by server and client: scheduler, workers and
    the notebook's client all present it), written into `folder` (must exist, mode 0700)."""
    ca = make_ca("cassperf experiment CA", VALIDITY)
    mine = issue(ca, "cassperf experiment", hosts, VALIDITY)
    files = TlsFiles(folder, folder / "ca.pem", folder / "cert.pem", folder / "key.pem")
    write_private(files.ca_cert, ca.cert_pem())
    write_private(files.cert, mine.cert_pem())
    write_private(files.key, mine.key_pem())
    return files


def security_of(files: TlsFiles) -> Any:
    """distributed's Security: TLS on every connection, the same certificate for each role,
    peers verified against the experiment's CA (mutual), encryption required."""
    from distributed.security import Security

    cert, key, ca = str(files.cert), str(files.key), str(files.ca_cert)
    return Security(require_encryption=True, tls_ca_file=ca,
                    tls_client_cert=cert, tls_client_key=key,
                    tls_scheduler_cert=cert, tls_scheduler_key=key,
                    tls_worker_cert=cert, tls_worker_key=key)


@contextmanager
def temporary_security(hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> Iterator[tuple[Any, TlsFiles]]:
    """(Security, files) for one experiment; the private folder and its files are removed on exit."""
    folder = Path(tempfile.mkdtemp(prefix="cassperf-dask-tls-"))     # mode 0700
    try:
        files = make_certificates(folder, hosts)
        yield security_of(files), files
    finally:
        shutil.rmtree(folder, ignore_errors=True)
