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


LEADER_GONE = """
import ctypes, signal, socket, sys, threading, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
# SIGTERM ends the main thread only, as when a JVM's main thread ends first: the pid then shows as
# a zombie while another thread runs on, holding the socket (a node slow to exit)
signal.signal(signal.SIGTERM, lambda *_: ctypes.CDLL(None).pthread_exit(None))
threading.Thread(target=time.sleep, args=(120,)).start()
print("port", s.getsockname()[1], flush=True)
time.sleep(120)
"""


def test_a_zombie_pid_whose_threads_still_run_has_not_exited(tmp_path: Path) -> None:
    """A JVM whose main thread has ended shows its pid as a zombie while its other threads hold its
    sockets: terminate() must wait for them (and SIGKILL after its timeout), not take it as gone."""
    root = tmp_path / "node1"
    node = subprocess.Popen([sys.executable, "-c", LEADER_GONE, process.marker(root)], stdout=subprocess.PIPE,
                            text=True)
    try:
        port = int(node.stdout.readline().split()[1])
        assert process.is_ours(node.pid, root) and not port_free("127.0.0.1", port)
        killed = process.terminate({node.pid: root}, timeout_s=2)
        assert killed == [node.pid], "a pid with live threads was taken as exited (or not killed: no command line)"
        node.wait(10)
        assert port_free("127.0.0.1", port)
    finally:
        node.kill()
        node.wait()
