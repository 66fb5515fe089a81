"""Checks made before anything starts: free ports, free memory."""

from __future__ import annotations

import errno
import socket
from dataclasses import dataclass

import psutil

from cassperf.errors import ConfigError

#: Off-heap memory of a node beyond its heap (RSS was about 1.5 GB with a 1 GB heap).
NODE_OVERHEAD_MB = 600


@dataclass(frozen=True)
class PortUse:
    address: str
    port: int
    role: str        # e.g. "native_transport_port of node1"


def port_owner(address: str, port: int) -> str:
    """Who listens on (address, port): 'pid 123 (java ...)' where the OS tells, else 'another process'."""
    try:
        for conn in psutil.net_connections(kind="inet"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and \
                    conn.laddr.ip in (address, "0.0.0.0", "::", "127.0.0.1" if address.startswith("127.") else address):
                if conn.pid:
                    try:
                        proc = psutil.Process(conn.pid)
                        return f"pid {conn.pid} ({' '.join(proc.cmdline())[:120]})"
                    except psutil.Error:
                        return f"pid {conn.pid}"
    except psutil.Error:
        pass
    return "another process"


def port_free(address: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # as the JVM does: connections in TIME_WAIT from a previous run do not make a port busy
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def check_ports(uses: list[PortUse]) -> None:
    """Raise ConfigError naming the first port that is taken, who took it, and the fix."""
    for use in uses:
        if not port_free(use.address, use.port):
            raise ConfigError(
                f"port {use.port} on {use.address} ({use.role}) is already taken by {port_owner(use.address, use.port)}; "
                "stop that process, or give this cluster other addresses (first_address='127.0.1.1') or ports")


def check_memory(nodes: int, heap_mb: int, spec: str) -> None:
    """Refuse, before anything starts, to start more than the machine's free memory holds."""
    if nodes <= 0:
        return
    need_mb = nodes * (heap_mb + NODE_OVERHEAD_MB)
    free_mb = psutil.virtual_memory().available // (1024 * 1024)
    if need_mb > free_mb:
        raise ConfigError(
            f"topology {spec} needs about {need_mb / 1024:.1f} GiB ({nodes} nodes to start x ({heap_mb} MB heap + "
            f"{NODE_OVERHEAD_MB} MB off-heap)) but {free_mb / 1024:.1f} GiB is free; use fewer nodes or a smaller "
            "heap (heap_mb=...)")
