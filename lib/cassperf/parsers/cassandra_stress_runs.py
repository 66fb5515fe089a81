"""What one cassandra-stress iteration printed -> a Run, with the tool's figures cross-checked.

Consistency checks (each mismatch is a warning on the ParseResult and the Run, never a fix):
- the last `total` interval row's cumulative `total ops` equals the op count of the auto-rate
  summary table for the same thread count, where both are printed;
- the table's `total` op/s equals the Results block's Op rate (both rounded to whole ops/s);
- the last interval's `time` agrees with `Total operation time` (which is truncated to seconds).

GC figures without JMX. cassandra-stress reads the nodes' GC over JMX (StressMetrics ->
JmxCollector). When it cannot connect it prints `Failed to connect over JMX; not collecting these
stats` (on stderr, once per warm-up op and once per run) and goes on printing 0 in the interval
rows' gc columns (gc: #, max ms, sum ms, sdv ms, mb) and in the Results block's GC lines (count 0,
memory 0 B, time 0.0 s, avg NaN, stddev 0.0). Those zeros are not measurements: for a run the
message belongs to (see cassandra_stress._Scan.jmx_failed), every GC column of its intervals and
summary (and its rows of the auto-rate table) is NaN/NA, with one warning naming the message's line,
and manifest gc_collected=False. Without the message (e.g. stdout captured alone) the figures are
kept as printed and gc_collected is None: the output does not say.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from cassperf.parsers.cassandra_stress_rows import Header, Rows, align_times, op_mask, whole_numbers
from cassperf.parsers.cassandra_stress_settings import command_from_settings, rate_and_latency_type
from cassperf.parsers.cassandra_stress_summary import ResultsBlock, summary_rows
from cassperf.results.model import INTERVAL_COLUMNS, Run

if TYPE_CHECKING:
    from cassperf.parsers.base import ParseResult


@dataclass
class RunText:
    """What the scan collected for one run before it becomes a Run."""

    index: int
    first_line: int
    threads: int | None = None
    auto_step: bool = False
    ops: list[str] = field(default_factory=list)
    running_line: str | None = None
    header: Header | None = None
    header_line: int | None = None
    header_text: str | None = None
    blocks: list[Rows] = field(default_factory=list)
    results: ResultsBlock | None = None
    improvement_pct: int | None = None
    exceptions: Counter[str] = field(default_factory=Counter)
    first_exception: dict[str, tuple[int, str]] = field(default_factory=dict)
    skipped: int = 0
    failed: bool = False
    jmx_failed: list[tuple[int, str]] = field(default_factory=list)   # (line_no, line) of the JMX failure message

    @property
    def has_data(self) -> bool:
        return self.header is not None or bool(self.blocks) or self.results is not None

    @property
    def last_row_line(self) -> int | None:
        lines = [b.last_row_line for b in self.blocks if b.last_row_line is not None]
        return max(lines) if lines else self.header_line


class _Warner:
    """Warnings go to the ParseResult (with line) and to the Run (as text)."""

    def __init__(self, result: ParseResult) -> None:
        self.result = result
        self.texts: list[str] = []

    def __call__(self, line_no: int | None, line: str | None, expected: str) -> None:
        self.result.warn(line_no, line, expected)
        self.texts.append(str(self.result.warnings[-1]))


def op_column(ops: pa.Array) -> pd.api.extensions.ExtensionArray:
    """The op column as pandas' "string" dtype without copying the strings."""
    chunked = ops if isinstance(ops, pa.ChunkedArray) else pa.chunked_array([ops], type=pa.string())
    if pd.StringDtype().storage == "pyarrow":
        return pd.arrays.ArrowStringArray(chunked)
    return pd.array(chunked.to_pylist(), dtype="string")


def _intervals(run: RunText, warn: _Warner) -> tuple[pd.DataFrame | None, pa.Array | None, dict[str, np.ndarray]]:
    blocks = [b for b in run.blocks if len(b)]
    if not blocks:
        return None, None, {}
    if len(blocks) == 1:
        ops = blocks[0].ops
        values = dict(blocks[0].values)
    else:
        ops = pa.concat_arrays([b.ops for b in blocks])
        values = {c: np.concatenate([b.values[c] for b in blocks]) for c in blocks[0].values}
    for col in whole_numbers(values, INTERVAL_COLUMNS):
        warn(run.header_line, None, f"whole numbers in interval column {col}; other values set to NA")
    frame: dict[str, Any] = {"op": op_column(ops), **values}
    if "time_s" in values:
        frame["time_s"] = align_times(ops, values["time_s"])
    return pd.DataFrame(frame, copy=False), ops, values


def _last_counts(ops: pa.Array | None, values: dict[str, np.ndarray]) -> dict[str, int]:
    """op -> cumulative `total ops` of its last interval row."""
    if ops is None or "count" not in values or len(ops) == 0:
        return {}
    counts = values["count"]
    distinct = pc.unique(ops).to_pylist()
    if len(distinct) == 1:
        return {str(distinct[0]): int(counts[-1])}
    return {str(op): int(counts[np.flatnonzero(op_mask(ops, op))[-1]]) for op in distinct}


def _table_rows(table: pd.DataFrame | None, run: RunText) -> pd.DataFrame | None:
    if table is None or not run.auto_step or run.threads is None:
        return None
    rows = table[table["threads"] == run.threads]
    return rows if len(rows) else None


def _check(run: RunText, warn: _Warner, last: dict[str, int], table_rows: pd.DataFrame | None,
           values: dict[str, np.ndarray]) -> None:
    where = run.last_row_line
    if table_rows is not None:
        tot = table_rows[table_rows["op"] == "total"]
        if len(tot) and "total" in last and "count" in tot and int(tot["count"].iloc[0]) != last["total"]:
            warn(where, None, f"the last interval row's cumulative total ops ({last['total']}) to equal the "
                              f"auto-rate summary table's total ops for {run.threads} threads "
                              f"({int(tot['count'].iloc[0])})")
        results = run.results
        if (len(tot) and results is not None and "rate_ops_s" in results.total and "rate_ops_s" in tot
                and not math.isnan(results.total["rate_ops_s"])
                and round(float(tot["rate_ops_s"].iloc[0])) != round(results.total["rate_ops_s"])):
            warn(results.first_line, None, f"the Results Op rate ({results.total['rate_ops_s']:g}) to equal the "
                                           f"auto-rate summary table's op/s for {run.threads} threads "
                                           f"({float(tot['rate_ops_s'].iloc[0]):g})")
    if run.results is not None and "duration_s" in run.results.total and "time_s" in values and len(values["time_s"]):
        last_time = float(values["time_s"][-1])
        duration = run.results.total["duration_s"]
        if not (duration - 0.05 <= last_time < duration + 1.05):
            warn(run.results.last_line, None, f"Total operation time ({duration:g} s) to match the last interval's "
                                              f"time ({last_time:g} s)")


def gc_not_collected(frame: pd.DataFrame, rows: pd.Series | None = None) -> list[str]:
    """Replace the gc_* columns of `frame` (every row, or where the boolean `rows` is True) with
    NaN (NA in integer columns), as new columns: parsed columns may be read-only views. Returns
    the columns' names."""
    keep = pd.Series(False, index=frame.index) if rows is None else ~rows.astype(bool)
    columns = [c for c in frame.columns if str(c).startswith("gc_")]
    for col in columns:
        integer = str(frame[col].dtype) in ("Int64", "int64")
        values = frame[col].astype("Int64" if integer else "float64")
        frame[col] = values.where(keep, pd.NA if integer else np.nan)
    return columns


def build_run(run: RunText, scan: Any, settings: dict[str, dict[str, str]] | None,
              table: pd.DataFrame | None) -> Run:
    """One Run from the collected text of one iteration (`scan` is cassandra_stress._Scan)."""
    warn = _Warner(scan.result)
    complete = True
    intervals, ops, values = _intervals(run, warn)
    last = _last_counts(ops, values)
    table_rows = _table_rows(table, run)
    summary = None
    if run.results is not None:
        if table_rows is not None and "count" in table_rows:
            counts: dict[str, int | None] = {str(o): int(c) for o, c in zip(table_rows["op"], table_rows["count"])}
        else:
            counts = dict(last)
            if len(run.results.ops) == 1 and set(last) == {"total"}:
                counts[run.results.ops[0]] = last["total"]
        summary = pd.DataFrame(summary_rows(run.results, counts))
        if not run.results.complete:
            complete = False
            warn(run.results.last_line, None, "a complete Results block; missing: " + ", ".join(run.results.missing))
    elif run.header is not None or run.blocks:
        complete = False
        warn(run.last_row_line, None, "a Results block after the interval rows; the run's output ends here "
                                      "(truncated), its intervals are kept")
    if run.failed:
        complete = False
    _check(run, warn, last, table_rows, values)
    for cls, n in run.exceptions.items():
        line_no, line = run.first_exception[cls]
        warn(line_no, line, f"interval rows only; {n} line(s) of {cls} were printed during run {run.index} "
                            "(skipped; counted in manifest client_exceptions)")

    if run.jmx_failed:
        line_no, line = run.jmx_failed[-1]
        cleared = [c for frame in (intervals, summary) if frame is not None for c in gc_not_collected(frame)]
        warn(line_no, line, f"GC figures of run {run.index} measured over JMX; cassandra-stress printed this "
                            f"message ({len(run.jmx_failed)} time(s)), so the zeros it then prints for GC are not "
                            "measurements: "
                            f"set to NaN ({', '.join(dict.fromkeys(cleared)) or 'no GC columns printed'})")

    echo = scan.command
    command, source = (echo, "echo") if echo else (command_from_settings(settings) if settings else None, "settings")
    rate, latency_type = rate_and_latency_type(echo, echo is not None, settings, run.auto_step)
    threads = run.threads
    if threads is None and settings and settings.get("Rate", {}).get("Thread Count", "").isdigit():
        threads = int(settings["Rate"]["Thread Count"])
    manifest: dict[str, Any] = {
        "tool": "cassandra-stress",
        "tool_version": None,                     # the output never states it
        "format_generation": run.header.generation if run.header is not None else None,
        "command": command,
        "command_source": source if command else None,
        "threads": threads,
        "latency_type": latency_type,
        "rate": rate,
        "labels": {"threads": str(threads)} if threads is not None else {},
        "source": scan.result.source,
        "complete": complete,
        "count_is_total": True,
        "run_index": run.index,
        "ops": run.ops or (run.results.ops if run.results is not None else []),
        "improvement_pct": run.improvement_pct,
        "client_exceptions": dict(run.exceptions),
        "skipped_lines": run.skipped,
        "settings": settings,
        "settings_complete": (not scan.settings_cut) if settings else None,
        "java_version": scan.java_version,
        "gc_collected": False if run.jmx_failed else None,
    }
    if scan.cluster_name or scan.hosts:
        manifest["cluster"] = {"name": scan.cluster_name, "hosts": scan.hosts}
    return Run(manifest=manifest, intervals=intervals, summary=summary, warnings=warn.texts)
