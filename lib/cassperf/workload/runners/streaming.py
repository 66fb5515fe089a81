"""What the stress-tool runners share: finding an executable, running it with its output
streamed line by line into the run folder and a progress bar, and storing what the parser
made of that output in the same run.

The tool runs in its own session (process group), so stopping it (timeout, Ctrl-C) stops the
JVM a launcher script started too, and nothing else.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pandas as pd

from cassperf.errors import ConfigError
from cassperf.parsers.base import ParseResult
from cassperf.results.model import Run

#: Seconds a stopped tool gets between SIGTERM and SIGKILL.
TERMINATE_GRACE_S = 10.0


class ToolNotFoundError(ConfigError):
    """A stress tool is not installed where the runner looks for it; the message says where it
    looked and how to get the tool."""


def is_executable_file(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def which(name: str, path_var: str | None) -> Path | None:
    """`name` in the directories of a PATH string (the first executable file), or None."""
    for directory in (path_var or "").split(os.pathsep):
        if directory:
            candidate = Path(directory) / name
            if is_executable_file(candidate):
                return candidate
    return None


@dataclass
class Anchor:
    """Where the tool's clock starts in UTC: the arrival time of its first progress row minus
    the tool time that row carries (seconds since the tool's own start of measurement)."""

    utc: pd.Timestamp | None = None

    def see(self, arrived: pd.Timestamp, tool_time_s: float) -> None:
        if self.utc is None:
            self.utc = arrived - pd.Timedelta(seconds=tool_time_s)


@dataclass
class Progress:
    """A tqdm bar fed by the tool's progress rows. `parse_row(line)` returns (done, tool time
    in s) for a progress row, else None; `done` is in the bar's unit (ops or seconds)."""

    parse_row: Callable[[str], tuple[float, float] | None]
    total: float | None
    unit: str
    desc: str
    enabled: bool = True
    anchor: Anchor = field(default_factory=Anchor)
    rows: int = 0
    _bar: Any = None

    def __post_init__(self) -> None:
        if self.enabled:
            from tqdm.auto import tqdm
            self._bar = tqdm(total=self.total, unit=self.unit, desc=self.desc, dynamic_ncols=True)

    def line(self, text: str) -> None:
        try:
            got = self.parse_row(text)
        except (ValueError, IndexError):
            got = None
        if got is None:
            return
        done, tool_time_s = got
        self.rows += 1
        self.anchor.see(pd.Timestamp.now(tz="UTC"), tool_time_s)
        if self._bar is not None:
            target = min(done, self.total) if self.total else done
            self._bar.update(max(0.0, target - self._bar.n))

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


@dataclass(frozen=True)
class ProcessOutcome:
    argv: list[str]
    returncode: int
    lines: int
    started_utc: pd.Timestamp
    duration_s: float
    timed_out: bool


def _stop_group(proc: subprocess.Popen[str]) -> None:
    """SIGTERM the tool's process group, SIGKILL it after TERMINATE_GRACE_S."""
    for sig, wait_s in ((signal.SIGTERM, TERMINATE_GRACE_S), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def stream_process(argv: Sequence[str], out: IO[str], on_line: Callable[[str], None] | None = None, *,
                   env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
                   timeout_s: float | None = None) -> ProcessOutcome:
    """Run argv with stdout and stderr merged, writing every line to `out` as it arrives and
    passing it to `on_line`. A timeout or Ctrl-C stops the tool's process group (Ctrl-C is
    re-raised after the tool has stopped)."""
    started_utc = pd.Timestamp.now(tz="UTC")
    t0 = time.monotonic()
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            text=True, encoding="utf-8", errors="replace", bufsize=1,
                            env=dict(env) if env is not None else None, cwd=cwd, start_new_session=True)
    timed_out = threading.Event()
    timer = None
    if timeout_s is not None:
        def expire() -> None:
            timed_out.set()
            _stop_group(proc)
        timer = threading.Timer(timeout_s, expire)
        timer.daemon = True
        timer.start()
    lines = 0
    try:
        assert proc.stdout is not None
        for text in proc.stdout:
            out.write(text)
            lines += 1
            if on_line is not None:
                on_line(text.rstrip("\r\n"))
        returncode = proc.wait()
    except BaseException:
        _stop_group(proc)
        raise
    finally:
        if timer is not None:
            timer.cancel()
        out.flush()
    return ProcessOutcome(list(argv), returncode, lines, started_utc, time.monotonic() - t0, timed_out.is_set())


def store_result(writer: Any, result: ParseResult, anchor: Anchor, *, table_prefix: str) -> list[Run]:
    """Append the parsed runs' frames to the writer. Interval times are moved from the tool's
    clock to the run's (seconds since the writer's started_utc) using `anchor`; the shift is
    recorded in the manifest (tool_started_utc, tool_time_offset_s). Several runs in one output
    get an `iteration` column. Parser warnings become run warnings."""
    runs = result.runs
    offset = None
    if anchor.utc is not None:
        offset = (anchor.utc - pd.Timestamp(writer.manifest["started_utc"])).total_seconds()
        writer.manifest["tool_started_utc"] = anchor.utc.isoformat().replace("+00:00", "Z")
        writer.manifest["tool_time_offset_s"] = offset
    elif runs:
        writer.warn(f"{result.format}: no progress row was seen while the tool ran; interval times stay on "
                    f"the tool's clock (seconds since it began measuring)")
    for index, run in enumerate(runs):
        intervals = run.intervals.copy()
        if offset is not None:
            intervals["time_s"] = intervals["time_s"] + offset
        summary = run.summary.copy()
        if len(runs) > 1:
            intervals["iteration"] = index
            summary["iteration"] = index
        writer.append_intervals(intervals)
        writer.append_summary(summary)
        if not run.histograms.empty:
            writer.append_histograms(run.histograms)
        for note in run.warnings:
            writer.warn(f"{result.format}: {note}")
    for name, frame in result.tables.items():
        writer.add_table(f"{table_prefix}{name}", frame)
    for problem in result.warnings:
        writer.warn(f"{result.format}: {problem}")
    if not result.complete:
        writer.warn(f"{result.format}: the tool's output was cut short; its figures cover what was printed")
    if runs:
        first = runs[0].manifest
        for key in ("tool_version", "latency_type", "histogram_unit"):
            if first.get(key) not in (None, ""):
                writer.manifest[key] = first[key]
        if len(runs) > 1:
            writer.warn(f"{result.format}: the output holds {len(runs)} runs; their rows carry `iteration`")
    return runs


def tail_text(path: Path, lines: int = 40) -> str:
    """The last `lines` lines of a text file ('' when it cannot be read)."""
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
