"""Stopping a node whose parent is another process (the report pipeline starts the nodes, the
notebook's kernel restarts them for a cold run): the exited node is a zombie of that parent until
it reaps it, and terminate() must count it as gone at once, not wait out its timeout."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil

from cassperf.cluster import process

PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", sys.argv[1]])
print(child.pid, flush=True)
time.sleep(120)    # never reaps the child: once it exits it stays a zombie
"""


def test_a_node_that_exited_as_another_process_zombie_is_gone_at_once(tmp_path: Path) -> None:
    root = tmp_path / "node1"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, process.marker(root)], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(parent.stdout.readline())
        deadline = time.monotonic() + 10
        while not process.is_ours(pid, root) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.is_ours(pid, root)
        t0 = time.monotonic()
        killed = process.terminate({pid: root}, timeout_s=30)
        took = time.monotonic() - t0
        assert killed == [] and took < 5, f"terminate took {took:.1f} s"
        assert psutil.Process(pid).status() == psutil.STATUS_ZOMBIE     # still unreaped by its parent
    finally:
        parent.kill()
        parent.wait()
