"""The container root filesystem's build is atomic: a build killed half-way leaves nothing that
counts as finished, and the next build's clean-up ends the debootstrap it left running, unmounts
what it mounted and removes its folder. (The finished build is exercised by test_container_node.)"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from cassperf.cluster import rootfs

pytestmark = [pytest.mark.cluster,
              pytest.mark.skipif(shutil.which("debootstrap") is None or os.geteuid() != 0,
                                 reason="building a root filesystem needs root and debootstrap: run `make container`")]


def referring(folder: Path) -> list[int]:
    return [p.pid for p in psutil.process_iter(["cmdline"]) if any(str(folder) in a for a in p.info["cmdline"] or [])
            and p.pid != os.getpid()]


def test_a_killed_build_leaves_nothing_that_looks_finished_and_is_cleared_next_time(tmp_path):
    cache = tmp_path / "rootfs"
    code = f"from cassperf.cluster.rootfs import ensure_rootfs; ensure_rootfs(17, root=__import__('pathlib').Path({str(cache)!r}))"
    builder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        work = None
        while time.monotonic() < deadline and work is None:   # debootstrap has begun writing its target
            found = [p for p in cache.glob(".building-*") if (p / "debootstrap").is_dir()] if cache.is_dir() else []
            work = found[0] if found else None
            time.sleep(0.2)
        assert work is not None, "debootstrap never started"
        assert work.name == f".building-debian-bookworm-java17-{builder.pid}"
    finally:
        builder.send_signal(signal.SIGKILL)
        builder.wait()
    assert rootfs.find(17, cache) is None
    assert sorted(p.name for p in cache.iterdir()) == [work.name, ".lock", "debian-bookworm-java17.build.log"]
    assert referring(work), "the killed build's debootstrap should still run (nothing ends it but the clean-up)"
    assert rootfs.remove_stale_builds(cache) == [work]
    assert sorted(p.name for p in cache.iterdir()) == [".lock", "debian-bookworm-java17.build.log"]
    assert referring(work) == []
    assert not any(str(work) in line for line in Path("/proc/self/mountinfo").read_text().splitlines())
