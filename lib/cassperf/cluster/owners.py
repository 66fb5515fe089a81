"""Owner records: who started each thing the workbook leaves running beyond a process.

A local cluster's nodes, a loop filesystem (mount, loop device, backing file) and a DC network
(namespaces, delay router) outlive the process that made them: a node runs in a session of its
own, a mount stays mounted. Each gets a record here, written when it is made and removed when
it is released, naming its owner: the process that made it (pid and start time, so a recycled
pid never looks alive), or the user (``kept``: `cassperf cluster start` hands its cluster over;
no run ever reaps it). A record whose owner is dead names what a killed run left behind: the
next run adopts it (it wants that very cluster) or releases it (cassperf.cluster.reaper).

Records live in ``<data>/clusters/.owners/<kind>-<key>.json`` (folder 0700, files 0600,
written atomically): beside the clusters' folders, never inside the thing itself, so a cluster
whose folder is on a loop mount is found also when the mount is gone. Kinds: ``cluster``
(folder, name, state, nodes with pid files, pids and start times, its DC network), ``network``
(namespaces and delay router of a DC network), ``loopfs`` (mount point, loop device, backing
file).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psutil

from cassperf import config

KINDS = ("cluster", "network", "loopfs")
#: create times closer than this are the same process start (one clock tick is 0.01 s), s
SAME_START_S = 0.005


def say(line: str) -> None:
    """Where a run says what it found of a dead owner when no one gave it a log: stderr."""
    print(f"cassperf: {line}", file=sys.stderr, flush=True)


def found(what: str, owner: "Owner", done: str) -> str:
    """The one line a run says about a thing a dead owner left: what, whose, what was done:
    `found cluster x (node1 pid 4242) left by dead pid 4100 (cassperf report): stopped`."""
    return f"found {what} left by dead {owner.describe()}: {done}"


def _label(argv: list[str]) -> str:
    """A short name for a command line: `cassperf report`, `python -m ipykernel_launcher`,
    `python -c`, `pytest tests/x.py`."""
    if not argv:
        return "?"
    names = [Path(argv[0]).name]
    rest = argv[1:]
    if names[0].startswith("python") and rest:
        if rest[0] in ("-m", "-c"):
            return " ".join(["python", *rest[:2]]) if rest[0] == "-m" else "python -c"
        names, rest = [Path(rest[0]).name], rest[1:]
    return " ".join(names + rest[:1])


@dataclass(frozen=True)
class Owner:
    """The process that owns a thing (pid, start time in s since the epoch, a short command
    label), or the user (``kept``: what handed it over, e.g. "cassperf cluster start")."""

    pid: int | None = None
    started: float | None = None
    command: str = ""
    kept: str | None = None

    def alive(self) -> bool:
        """This very process still runs: the pid exists with the recorded start time, not as a
        zombie. A kept thing has no process and counts as alive (never reaped)."""
        if self.kept is not None:
            return True
        if self.pid is None or self.started is None:
            return False
        try:
            proc = psutil.Process(self.pid)
            return abs(proc.create_time() - self.started) < SAME_START_S and proc.status() != psutil.STATUS_ZOMBIE
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            return False
        except psutil.AccessDenied:
            return True

    def is_me(self) -> bool:
        return self.kept is None and self.pid == os.getpid() and self.alive()

    def describe(self) -> str:
        """`pid 4100 (cassperf report)`, or `kept (cassperf cluster start)`."""
        return f"kept ({self.kept})" if self.kept is not None else f"pid {self.pid} ({self.command})"

    def state(self) -> str:
        """`owner pid 4100 (cassperf report), alive|dead`, or `kept (cassperf cluster start)`."""
        if self.kept is not None:
            return self.describe()
        return f"owner {self.describe()}, {'alive' if self.alive() else 'dead'}"

    def to_json(self) -> dict[str, Any]:
        if self.kept is not None:
            return {"kept": self.kept}
        return {"pid": self.pid, "started": self.started, "command": self.command}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Owner":
        if data.get("kept"):
            return cls(kept=str(data["kept"]))
        return cls(int(data["pid"]), float(data["started"]), str(data.get("command", "")))


def me() -> Owner:
    """This process as an owner."""
    proc = psutil.Process()
    try:
        argv = proc.cmdline()
    except psutil.Error:
        argv = []
    return Owner(proc.pid, proc.create_time(), _label(argv))


@dataclass(frozen=True)
class Record:
    """One owned thing: its kind, key (the file name's tail), owner and what it is (``data``)."""

    kind: str
    key: str
    owner: Owner
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return record_path(self.kind, self.key)


def registry() -> Path:
    """The folder of the records: <data>/clusters/.owners."""
    return config.clusters_dir() / ".owners"


def record_path(kind: str, key: str) -> Path:
    if kind not in KINDS or not key or "/" in key or key.startswith("."):
        raise ValueError(f"owner record {kind!r}/{key!r}: kind one of {KINDS}, key a plain file name part")
    return registry() / f"{kind}-{key}.json"


def _private_folder() -> Path:
    folder = registry()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if folder.stat().st_mode & 0o777 != 0o700:
        folder.chmod(0o700)
    return folder


def write(record: Record) -> Record:
    """Write `record` atomically (a 0600 temporary file, fsync, rename) in the 0700 registry."""
    _private_folder()
    path = record.path
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    body = {"kind": record.kind, "key": record.key, "owner": record.owner.to_json(),
            "written_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), **record.data}
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(body, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return record


def _load(path: Path) -> Record | None:
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        kind, key, owner = body.pop("kind"), body.pop("key"), Owner.from_json(body.pop("owner"))
    except (OSError, ValueError, KeyError, TypeError):
        return None        # gone meanwhile, or not a record: nothing of ours to act on
    body.pop("written_utc", None)
    return Record(kind, key, owner, body)


def read(kind: str, key: str) -> Record | None:
    return _load(record_path(kind, key))


def records(kind: str | None = None) -> list[Record]:
    """Every readable record (of `kind`), sorted by kind order, then key."""
    folder = registry()
    try:
        paths = sorted(folder.glob("*.json"))
    except OSError:
        return []
    found = [r for p in paths if (r := _load(p)) is not None and r.kind in KINDS and (kind is None or r.kind == kind)]
    return sorted(found, key=lambda r: (KINDS.index(r.kind), r.key))


def claim(kind: str, key: str, data: dict[str, Any]) -> tuple[Record, Owner | None]:
    """Record (or update) the thing `kind`/`key` as this process's, unless it is kept or another
    live process owns it (then only its data is updated). Returns the record and, when this
    took it over from a dead owner, that owner."""
    old = read(kind, key)
    if old is not None and not old.owner.is_me() and old.owner.alive():
        return write(Record(kind, key, old.owner, data)), None
    taken = old.owner if old is not None and not old.owner.is_me() else None
    return write(Record(kind, key, me(), data)), taken


def keep(kind: str, key: str, by: str) -> Record | None:
    """Hand the thing to the user (``kept`` by `by`): no process owns it any more."""
    old = read(kind, key)
    return None if old is None else write(Record(kind, key, Owner(kept=by), old.data))


def remove(kind: str, key: str) -> None:
    """Forget the record (the thing was released); nothing when there is none."""
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        record_path(kind, key).unlink()
