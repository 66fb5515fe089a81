"""Stopping a node whose parent is another process (the report pipeline starts the nodes, the
notebook's kernel restarts them for a cold run): the exited node is a zombie of that parent until
it reaps it. terminate() must count it as gone as soon as it has exited (not wait out its timeout
for the pid to vanish), and not before: its ports must be free when terminate() returns."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil

from cassperf.cluster import process
from cassperf.cluster.preflight import port_free

NODE = """
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
print("port", s.getsockname()[1], flush=True)
time.sleep(120)
"""
PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]])
print("pid", child.pid, flush=True)
time.sleep(120)    # never reaps the child: once it exits it stays a zombie
"""


def test_a_node_that_exited_as_another_process_zombie_is_gone_at_once_with_its_ports_free(tmp_path: Path) -> None:
    root = tmp_path / "node1"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, NODE, process.marker(root)], stdout=subprocess.PIPE,
                              text=True)
    try:
        said = dict(parent.stdout.readline().split() for _ in range(2))
        pid, port = int(said["pid"]), int(said["port"])
        assert process.is_ours(pid, root) and not port_free("127.0.0.1", port)
        t0 = time.monotonic()
        killed = process.terminate({pid: root}, timeout_s=30)
        took = time.monotonic() - t0
        assert killed == [] and took < 5, f"terminate took {took:.1f} s"
        assert port_free("127.0.0.1", port), "terminate returned before the node had closed its port"
        assert psutil.Process(pid).status() == psutil.STATUS_ZOMBIE     # still unreaped by its parent
    finally:
        parent.kill()
        parent.wait()
