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
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: certificates live this long: an experiment's placement, with a wide margin
VALIDITY = dt.timedelta(days=2)


@dataclass(frozen=True)
class TlsFiles:
    """Where one experiment's certificate material is (PEM files, mode 0600)."""

    folder: Path
    ca_cert: Path
    cert: Path
    key: Path


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def make_certificates(folder: Path, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> TlsFiles:
    """A CA and one certificate it signs (usable by server and client: scheduler, workers and
    the notebook's client all present it), written into `folder` (must exist, mode 0700)."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = dt.datetime.now(dt.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cassperf experiment CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
          .not_valid_after(now + VALIDITY)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cassperf experiment")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    files = TlsFiles(folder, folder / "ca.pem", folder / "cert.pem", folder / "key.pem")
    _write_private(files.ca_cert, ca.public_bytes(serialization.Encoding.PEM))
    _write_private(files.cert, cert.public_bytes(serialization.Encoding.PEM))
    _write_private(files.key, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                serialization.NoEncryption()))
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
