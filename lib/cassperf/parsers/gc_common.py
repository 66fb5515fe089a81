"""What both GC log parsers produce: the record types, their columnar builders and the
per-interval aggregation that joins GC with workload intervals.

Three tables, one row per event (ParseResult.tables):

pauses      stop-the-world collections (GcPause): young, mixed, full, remark, cleanup,
            initial-mark and "other" pauses.
concurrent  concurrent phases (GcConcurrent), which do NOT stop the application: CMS
            concurrent mark/preclean/sweep/reset, G1 concurrent mark cycle and its sub-phases.
            They are kept apart from `pauses` so that sums over `pauses` are stopped time only.
safepoints  every safepoint the JVM logged (GcSafepoint): "Total time for which application
            threads were stopped" (JDK 8..16) or 'Safepoint "...", ... Total: N ns' (JDK 17+).
            GC pauses are safepoints too, so this table overlaps `pauses`; it also holds the
            non-GC stops (deoptimization, biased-lock revocation, ...).

Units: times are UTC timestamps (`time`, pandas datetime64[ns, UTC], NaT where the log has no
wall-clock decorator/date stamp), JVM uptime in seconds (`uptime_s`, NaN where absent),
durations in milliseconds (`*_ms`), heap sizes in MiB (`*_mb`: the JVM's "M", 2**20 bytes).

`time` and `uptime_s` are always the START of the event. JDK 8 stamps a collection when it
starts; unified logging (and every safepoint or concurrent-phase line) prints it when it ends, so
for those the parser subtracts the logged duration from the logged time.

`kind` vocabulary for pauses (KINDS): young, mixed, full, initial-mark (CMS initial mark, or a
G1 young pause that also starts a concurrent cycle: JDK 8 "(young) (initial-mark)", JDK 12+
"Pause Young (Concurrent Start)"), remark, cleanup, other (e.g. Shenandoah "Init Update Refs").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np
import pandas as pd

#: the times a GC log line may carry; others are corrupted decorators (counted as bad times)
_FIRST_TIME = pd.Timestamp("1970-01-01", tz="UTC")
_LAST_TIME = pd.Timestamp("2200-01-01", tz="UTC")

KINDS = ("young", "mixed", "full", "initial-mark", "remark", "cleanup", "other")

#: ISO-8601 wall-clock time as both JDK 8 (-XX:+PrintGCDateStamps) and unified logging (`time`,
#: `utctime` decorators) print it: 2024-08-23T12:45:13.657+0530
ISO_FORMAT = "%Y-%m-%dT%H:%M:%S.%f%z"

_UNIT_MB = {"B": 1.0 / (1024 * 1024), "K": 1.0 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0 * 1024}

#: Longest duration accepted as real (ms): 30 days. Longer values come from corrupted lines and
#: would overflow timestamps; parsers drop such events with a warning.
MAX_DURATION_MS = 30 * 24 * 3600 * 1000.0


def num(value: str) -> float:
    """A number as HotSpot printed it: decimal point, or decimal comma under some locales
    ('0,0355137'). HotSpot prints no thousands separators, so a comma is always decimal."""
    return float(value.replace(",", ".")) if "," in value else float(value)


def to_mb(value: str, unit: str) -> float:
    """A JVM heap size ('95232.0', 'K') in MiB."""
    return num(value) * _UNIT_MB[unit]


@dataclass(frozen=True)
class GcPause:
    """One stop-the-world collection."""

    time: pd.Timestamp | None       # start of the pause, UTC (None/NaT: no wall clock in the log)
    uptime_s: float                 # JVM uptime at the start of the pause, s (NaN if absent)
    gc_id: int | None               # unified logging's GC(n); None for JDK 8
    kind: str                       # one of KINDS
    collector: str                  # ParNew, CMS, G1, Parallel, Serial, Shenandoah, ZGC, unknown
    cause: str | None               # "G1 Evacuation Pause", "Allocation Failure", ...
    heap_before_mb: float           # whole heap occupancy before, MiB (NaN if not logged)
    heap_after_mb: float            # after, MiB (NaN if not logged, e.g. CMS remark)
    heap_total_mb: float            # heap capacity after, MiB
    pause_ms: float                 # stop-the-world duration as the JVM printed it, ms
    line_no: int                    # 1-based line where the record starts (its end, unified)


@dataclass(frozen=True)
class GcConcurrent:
    """One concurrent (not stop-the-world) phase."""

    time: pd.Timestamp | None       # start of the phase, UTC
    uptime_s: float                 # JVM uptime at its start, s
    gc_id: int | None
    collector: str
    phase: str                      # "mark", "abortable-preclean", "Mark Cycle", "Mark From Roots", ...
    duration_ms: float              # wall-clock duration of the phase, ms
    line_no: int


@dataclass(frozen=True)
class GcSafepoint:
    """One safepoint (application threads stopped)."""

    time: pd.Timestamp | None       # start of the stop, UTC
    uptime_s: float
    operation: str | None           # VM operation ("G1CollectForAllocation"), JDK 17+ only
    stopped_ms: float               # total time threads were stopped, including ttsp_ms, ms
    ttsp_ms: float                  # time to reach the safepoint ("Stopping threads took"), ms
    line_no: int


RecordType = type[GcPause] | type[GcConcurrent] | type[GcSafepoint]

_DTYPES: dict[str, str] = {
    "time": "datetime64[ns, UTC]", "uptime_s": "float64", "gc_id": "Int64", "kind": "string",
    "collector": "string", "cause": "string", "heap_before_mb": "float64",
    "heap_after_mb": "float64", "heap_total_mb": "float64", "pause_ms": "float64",
    "line_no": "int64", "phase": "string", "duration_ms": "float64", "operation": "string",
    "stopped_ms": "float64", "ttsp_ms": "float64",
}


def columns_of(record_type: RecordType) -> dict[str, str]:
    """Column name -> dtype of the table built from `record_type`."""
    return {f.name: _DTYPES[f.name] for f in fields(record_type)}


PAUSE_COLUMNS = columns_of(GcPause)
CONCURRENT_COLUMNS = columns_of(GcConcurrent)
SAFEPOINT_COLUMNS = columns_of(GcSafepoint)

_DURATION_FIELD = {GcPause: "pause_ms", GcConcurrent: "duration_ms", GcSafepoint: "stopped_ms"}


class EventColumns:
    """Columnar builder for one record type: append plain tuples, build one DataFrame at the end.

    A row is (iso, epoch_ms, <the record's other fields in declaration order>): the wall-clock
    time as the parser found it — an ISO string (see ISO_FORMAT) or epoch milliseconds (NaN when
    absent). Hot loops may append to `rows` directly. `logged_at_end` says the log line was
    printed when the event ended; `frame()` then moves time and uptime back by the event's
    duration so that both mean its start.
    """

    def __init__(self, record_type: RecordType, logged_at_end: bool) -> None:
        self.record_type = record_type
        self.names = [f.name for f in fields(record_type) if f.name != "time"]
        self.rows: list[tuple[Any, ...]] = []
        self.logged_at_end = logged_at_end
        self.bad_times = 0        # ISO strings or epoch values that were not valid timestamps
        self._columns: dict[str, list[Any]] | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, iso: str | None, epoch_ms: float, *values: Any) -> None:
        self.rows.append((iso, epoch_ms, *values))

    def columns(self) -> dict[str, list[Any]]:
        """The rows transposed (computed once; edit the lists in place before frame())."""
        if self._columns is None:
            names = ["_iso", "_epoch_ms", *self.names]
            lists = [list(c) for c in zip(*self.rows)] if self.rows else [[] for _ in names]
            self._columns = dict(zip(names, lists))
        return self._columns

    def column(self, name: str) -> list[Any]:
        return self.columns()[name]

    def frame(self) -> pd.DataFrame:
        cols = self.columns()
        iso = pd.Series(cols["_iso"], dtype=object)
        times = pd.to_datetime(iso, format=ISO_FORMAT, utc=True, errors="coerce")
        # 1970..2200 only, as for the uptime decorator below: year 0024 parsed, then failed to
        # fit nanoseconds (OutOfBoundsDatetime from deep inside pandas; found by the fuzz test)
        times = times.where((times >= _FIRST_TIME) & (times < _LAST_TIME))
        epoch = np.asarray(cols["_epoch_ms"], dtype="float64")
        if len(epoch) and not np.all(np.isnan(epoch)):
            # 1970..2200 only: anything else is a corrupted decorator, not a time
            ok = (epoch > 0) & (epoch < 7.3e12)
            from_epoch = pd.to_datetime(pd.Series(np.where(ok, epoch, np.nan)), unit="ms", utc=True)
            times = times.where(times.notna(), from_epoch)
            self.bad_times += int(np.sum(~ok & ~np.isnan(epoch)))
        self.bad_times += int((iso.notna() & times.isna()).sum())
        times = times.astype("datetime64[ns, UTC]")
        data: dict[str, Any] = {}
        for name in self.names:
            data[name] = pd.Series(cols[name], dtype=_DTYPES[name] if name != "gc_id" else object)
        if self.logged_at_end and len(times):
            duration = data[_DURATION_FIELD[self.record_type]].astype("float64")
            times = times - pd.to_timedelta(duration.round(6), unit="ms")
            data["uptime_s"] = data["uptime_s"] - duration / 1000.0
        data["time"] = times
        schema = columns_of(self.record_type)
        out = pd.DataFrame({name: data[name] for name in schema})
        for name, dtype in schema.items():
            if str(out[name].dtype) != dtype:
                out[name] = out[name].astype(dtype)
        return out.reset_index(drop=True)


def records(frame: pd.DataFrame, record_type: RecordType) -> list[Any]:
    """Rows of a pauses/concurrent/safepoints table as frozen records (NA -> None/NaN)."""
    out = []
    names = [f.name for f in fields(record_type)]
    for row in frame[names].itertuples(index=False):
        values = []
        for name, value in zip(names, row):
            if value is pd.NA or value is pd.NaT:
                value = None
            elif name == "gc_id" and value is not None:
                value = int(value)
            values.append(value)
        out.append(record_type(*values))
    return out


def gc_per_interval(pauses: pd.DataFrame, interval_s: float = 1.0,
                    axis: Literal["auto", "time", "uptime"] = "auto",
                    start: Any = None, end: Any = None) -> pd.DataFrame:
    """GC pauses per fixed interval, for joining with workload intervals.

    Returns one row per interval from the first to the last interval touched by a pause (or
    from `start` to `end` when given, so empty intervals at the edges are kept), columns:

    interval_start  start of the interval: a UTC timestamp (axis "time") or JVM uptime in s
                    (axis "uptime"). Intervals are aligned to multiples of `interval_s` since the
                    epoch (time) or since JVM start (uptime). "auto" uses time when every pause
                    has one, else uptime.
    gc_count        pauses that START in the interval
    gc_time_ms      stopped time that falls inside the interval, ms: a pause that crosses a
                    boundary is split, so gc_time_ms never exceeds the interval and its sum equals
                    the sum of pause_ms
    gc_max_ms       longest pause that starts in the interval, ms (0.0 when none)

    Rows whose axis value or pause_ms is missing are ignored.
    """
    if interval_s <= 0 or not math.isfinite(interval_s):
        raise ValueError(f"interval_s must be a positive number, got {interval_s!r}")
    if axis == "auto":
        has_time = "time" in pauses and len(pauses) and pauses["time"].notna().all()
        axis = "time" if has_time else "uptime"
    if axis not in ("time", "uptime"):
        raise ValueError(f"axis must be 'auto', 'time' or 'uptime', got {axis!r}")
    step = int(round(interval_s * 1e9))
    ms = pauses["pause_ms"].to_numpy(dtype="float64", na_value=np.nan)
    if axis == "time":
        t = pd.to_datetime(pauses["time"], utc=True).dt.as_unit("ns")
        valid = t.notna().to_numpy() & ~np.isnan(ms)
        start_ns = t[valid].astype("int64").to_numpy() if valid.any() else np.zeros(0, "int64")
    else:
        up = pauses["uptime_s"].to_numpy(dtype="float64", na_value=np.nan)
        valid = ~np.isnan(up) & ~np.isnan(ms)
        start_ns = np.round(up[valid] * 1e9).astype("int64")
    dur_ns = np.round(ms[valid] * 1e6).astype("int64")
    end_ns = start_ns + dur_ns
    first = start_ns // step
    last = np.maximum((end_ns - 1) // step, first)

    def bound(value: Any) -> int | None:
        if value is None:
            return None
        if axis == "time":
            ts = pd.Timestamp(value)
            ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
            return int(ts.value // step)
        return int(np.floor(float(value) * 1e9 / step))

    lo = bound(start)
    hi = bound(end)
    if lo is None:
        lo = int(first.min()) if len(first) else None
    if hi is None:
        hi = int(last.max()) if len(last) else None
    if lo is None or hi is None or hi < lo:
        n = 0
        lo = hi = 0
    else:
        n = hi - lo + 1
    count = np.zeros(n, dtype="int64")
    total = np.zeros(n, dtype="float64")
    peak = np.zeros(n, dtype="float64")
    keep = (first >= lo) & (first <= hi)
    np.add.at(count, first[keep] - lo, 1)
    np.maximum.at(peak, first[keep] - lo, ms[valid][keep])
    single = first == last
    sel = single & keep
    np.add.at(total, first[sel] - lo, dur_ns[sel] / 1e6)
    for s_ns, e_ns, b0, b1 in zip(start_ns[~single], end_ns[~single], first[~single], last[~single]):
        for b in range(int(b0), int(b1) + 1):
            if lo <= b <= hi:
                overlap = min(e_ns, (b + 1) * step) - max(s_ns, b * step)
                total[b - lo] += overlap / 1e6
    starts_ns = (np.arange(n, dtype="int64") + lo) * step
    if axis == "time":
        interval_start: Any = pd.to_datetime(starts_ns, unit="ns", utc=True)
    else:
        interval_start = starts_ns / 1e9
    return pd.DataFrame({"interval_start": interval_start, "gc_count": count,
                         "gc_time_ms": total, "gc_max_ms": peak})


def kind_from_label(words: str, groups: list[str]) -> str:
    """Pause kind from a unified-logging label: 'Young' + ['Concurrent Start', 'G1 ...'] etc."""
    w = words.strip().lower()
    flags = {g.lower() for g in groups}
    if w == "young":
        if "concurrent start" in flags:
            return "initial-mark"
        if "mixed" in flags:
            return "mixed"
        return "young"
    if w in ("mixed",):
        return "mixed"
    if w in ("full",):
        return "full"
    if w in ("initial mark", "init mark", "mark start"):
        return "initial-mark"
    if w in ("remark", "final mark", "mark end", "final remark"):
        return "remark"
    if w == "cleanup":
        return "cleanup"
    return "other"


def split_groups(label: str) -> tuple[str, list[str]]:
    """'Young (Normal) (G1 Evacuation Pause)' -> ('Young', ['Normal', 'G1 Evacuation Pause']);
    'Full (System.gc())' -> ('Full', ['System.gc()']). Top-level parentheses only."""
    words_end = label.find("(")
    if words_end < 0:
        return label.strip(), []
    words = label[:words_end].strip()
    groups: list[str] = []
    depth = 0
    begin = 0
    for i in range(words_end, len(label)):
        ch = label[i]
        if ch == "(":
            if depth == 0:
                begin = i + 1
            depth += 1
        elif ch == ")" and depth > 0:
            depth -= 1
            if depth == 0:
                groups.append(label[begin:i].strip())
    return words, groups


#: G1 (JDK 12+) young-pause types printed before the cause: "Pause Young (Normal) (cause)"
G1_YOUNG_TYPES = frozenset({"Normal", "Concurrent Start", "Prepare Mixed", "Mixed"})


def cause_from_groups(groups: list[str]) -> str | None:
    """The GC cause among a label's groups: the first that is not a G1 young-pause type."""
    for g in groups:
        if g not in G1_YOUNG_TYPES:
            return g
    return None
