"""Processes of local nodes: start one, find it again by pid file, stop it. Only our own pids
are ever signalled: a pid counts as ours when its command line carries the node's marker
(-Dcassperf.node=<node folder>) and it is not a zombie."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import psutil


def marker(node_root: Path) -> str:
    return f"-Dcassperf.node={node_root}"


def is_ours(pid: int, node_root: Path) -> bool:
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return marker(node_root) in proc.cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False


def read_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def live_pid(pid_file: Path, node_root: Path) -> int | None:
    """The pid in `pid_file` if that process is alive and ours, else None."""
    pid = read_pid(pid_file)
    return pid if pid is not None and is_ours(pid, node_root) else None


def spawn(cmd: list[str], cwd: Path, log_path: Path, pid_file: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start `cmd` in its own session (Ctrl-C in a notebook does not reach it), stdout and stderr
    appended to `log_path`, pid written to `pid_file`."""
    log = open(log_path, "ab")  # noqa: SIM115 - handed to the child
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=env)
    finally:
        log.close()
    pid_file.write_text(f"{proc.pid}\n")
    return proc


def terminate(pids: dict[int, Path], timeout_s: float = 60.0) -> list[int]:
    """SIGTERM every pid that is ours, wait up to `timeout_s` until each has exited, then
    SIGKILL those left. Returns the pids that needed SIGKILL.

    Which processes are ours is decided once, by their command line (is_ours), and each is then
    held by a psutil handle (pid plus start time): an exiting JVM loses its command line, and a
    pid reused meanwhile by another process is never signalled. A node that exited is gone even
    while it is a zombie, as long as no thread of it runs: a node started by another process (the
    report pipeline) stays that process's zombie until it reaps it, and waiting for the pid to
    vanish would wait the whole timeout."""
    procs = []
    for pid, root in pids.items():
        if not is_ours(pid, root):
            continue
        try:
            proc = psutil.Process(pid)
            proc.send_signal(signal.SIGTERM)
            procs.append(proc)
        except psutil.NoSuchProcess:
            pass
    killed = []
    for proc in _wait_exited(procs, timeout_s):
        try:
            proc.kill()          # psutil checks that pid and start time are still this process's
            killed.append(proc.pid)
        except psutil.NoSuchProcess:
            pass
    _wait_exited([p for p in procs if p.pid in killed], 10)
    return killed


def _running(proc: psutil.Process) -> bool:
    """The process (this pid and start time) has a thread left running."""
    try:
        if not proc.is_running():
            return False
        if proc.status() != psutil.STATUS_ZOMBIE:
            return True
        # A JVM whose main thread has ended shows its pid as a zombie while its other threads still
        # run (and hold its sockets); it has exited only when no thread is left but the leader.
        return len(os.listdir(f"/proc/{proc.pid}/task")) > 1
    except (psutil.NoSuchProcess, FileNotFoundError, ProcessLookupError):
        return False


def _wait_exited(procs: list[psutil.Process], timeout_s: float, poll_s: float = 0.1) -> list[psutil.Process]:
    """Wait until every one of `procs` has exited (vanished, or a zombie with no thread left);
    the ones still running after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    left = [p for p in procs if _running(p)]
    while left and time.monotonic() < deadline:
        time.sleep(poll_s)
        left = [p for p in left if _running(p)]
    return left


def wait_for_log(path: Path, offset: int, needle: str, alive: "callable[[], bool]", timeout_s: float,
                 poll_s: float = 0.2) -> bool:
    """Wait until `needle` appears in `path` after byte `offset`. Returns False when the process
    died (alive() false) first; raises TimeoutError after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    buf = b""
    pos = offset
    needle_b = needle.encode()
    while True:
        if path.exists():
            with open(path, "rb") as f:
                f.seek(pos)
                chunk = f.read()
            if chunk:
                pos += len(chunk)
                buf = (buf + chunk)[-(len(needle_b) + 65536):]
                if needle_b in buf:
                    return True
        if not alive():
            return False
        if time.monotonic() > deadline:
            raise TimeoutError(f"{needle!r} not seen in {path} within {timeout_s:.0f} s")
        time.sleep(poll_s)


def wait_for_port(address: str, port: int, alive: "callable[[], bool]", timeout_s: float,
                  poll_s: float = 0.1) -> bool:
    """Wait until a TCP connection to (address, port) succeeds. False when the process died first;
    TimeoutError after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection((address, port), timeout=1.0):
                return True
        except OSError:
            pass
        if not alive():
            return False
        if time.monotonic() > deadline:
            raise TimeoutError(f"{address}:{port} did not accept connections within {timeout_s:.0f} s")
        time.sleep(poll_s)


def tail(path: Path, lines: int = 30) -> list[str]:
    if not path.exists():
        return []
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - 64 * 1024))
        data = f.read().decode("utf-8", "replace")
    return data.splitlines()[-lines:]
