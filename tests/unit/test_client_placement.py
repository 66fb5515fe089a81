"""The client placement's Dask cluster (cassperf.experiments.clients, dask_tls), without
Cassandra: one worker process per location, TLS with per-experiment certificates (a peer
without them is refused), private files removed after, a lost worker failing only its task."""

from __future__ import annotations

import os
import signal
import stat
import time
from pathlib import Path

import pytest

from cassperf.cluster import LocalCluster
from cassperf.errors import ConfigError
from cassperf.experiments.clients import ClientPlacement, Location, locations, parse_client_hosts
from cassperf.experiments.dask_tls import temporary_security


def _where() -> tuple[int, str]:
    return os.getpid(), os.environ.get("DASK_WORKER_NAME", "")


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _slow(seconds: float) -> str:
    time.sleep(seconds)
    return "done"


def _tls_without_certificate(host: str, port: int) -> str:
    """Connect with TLS but no client certificate (and no check of the server's): "refused"
    when the scheduler ends the connection during or right after the handshake."""
    import socket
    import ssl

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection((host, port), timeout=5) as raw:
        try:
            with ctx.wrap_socket(raw) as tls:
                tls.sendall(b"\x00" * 16)
                return "refused" if tls.recv(1) == b"" else "accepted"
        except (ssl.SSLError, ConnectionResetError, BrokenPipeError):
            return "refused"


def test_locations_from_counts_and_from_client_hosts() -> None:
    assert locations(["dc1", "dc2"], 2) == [Location("dc1-c1", "dc1"), Location("dc1-c2", "dc1"),
                                            Location("dc2-c1", "dc2"), Location("dc2-c2", "dc2")]
    assert locations(["dc1", "dc2"], 1, "dc1=10.0.0.20+10.0.0.21,dc2=10.1.0.20") == [
        Location("dc1-c1", "dc1", "10.0.0.20"), Location("dc1-c2", "dc1", "10.0.0.21"),
        Location("dc2-c1", "dc2", "10.1.0.20")]
    assert parse_client_hosts("") == {}
    with pytest.raises(ConfigError, match=r"^client_hosts 'dc1': expected DC=HOST\[\+HOST...\]"):
        parse_client_hosts("dc1")
    with pytest.raises(ConfigError, match=r"^client_hosts names DC 'dc3', which the study does not use; DCs: dc1, dc2$"):
        locations(["dc1", "dc2"], 1, "dc3=vm")


def test_certificates_are_private_and_removed_after() -> None:
    with temporary_security() as (security, files):
        assert stat.S_IMODE(files.folder.stat().st_mode) == 0o700
        assert sorted(p.name for p in files.folder.iterdir()) == ["ca.pem", "cert.pem", "key.pem"]
        assert {stat.S_IMODE(p.stat().st_mode) for p in files.folder.iterdir()} == {0o600}
        assert security.require_encryption is True
        assert "PRIVATE KEY" in files.key.read_text()
        folder = files.folder
    assert not folder.exists()


def _scratch() -> str:
    from distributed import get_worker

    return str(get_worker().local_directory)


def test_one_worker_process_per_location_over_tls_and_a_peer_without_certs_is_refused(tmp_path: Path) -> None:
    from distributed import Client

    handle = LocalCluster("multidc-place", "dc1:1,dc2:1", first_address="127.0.21.1", root=tmp_path)
    with ClientPlacement(handle, locations(["dc1", "dc2"]), root=tmp_path) as place:
        assert sorted(place.workers) == ["dc1-c1", "dc2-c1"]
        assert all(addr.startswith("tls://127.0.0.1:") for addr in place.workers.values())
        pids = {name: place.submit(name, _where).result(timeout=60)[0] for name in place.workers}
        assert len(set(pids.values())) == 2 and os.getpid() not in pids.values()
        address = place.client.scheduler.address
        assert address.startswith("tls://127.0.0.1:")
        host, port = address.removeprefix("tls://").rsplit(":", 1)
        assert _tls_without_certificate(host, int(port)) == "refused"
        with temporary_security() as (stranger, _):       # certificates of another experiment's CA
            with pytest.raises((OSError, TimeoutError)):
                Client(address, security=stranger, timeout=5)
        folder = place.security.tls_ca_file
        assert Path(folder).exists()
        scratch = Path(place.scratch)                       # Dask's scratch: private, not /tmp/dask-scratch-space
        assert scratch.stat().st_mode & 0o777 == 0o700 and (scratch / "dask-scratch-space").is_dir()
        assert all(place.submit(name, _scratch).result(timeout=60).startswith(str(scratch)) for name in place.workers)
    assert not Path(folder).exists() and not scratch.exists()


def test_a_worker_that_dies_fails_only_its_own_task(tmp_path: Path) -> None:
    from distributed import KilledWorker, wait

    handle = LocalCluster("multidc-place", "dc1:1,dc2:1", first_address="127.0.21.1", root=tmp_path)
    with ClientPlacement(handle, locations(["dc1", "dc2"]), root=tmp_path) as place:
        dead, alive = place.submit("dc2-c1", _die), place.submit("dc1-c1", _slow, 3.0)
        wait([dead, alive], timeout=120)
        assert alive.result() == "done"
        assert dead.status == "error" and isinstance(dead.exception(), KilledWorker)
