"""The one data model: a Run is a manifest plus tidy frames.

Everything that produces results (the driver engine, a stress subprocess, a parser of a log
found on disk) yields a `Run`. Analysis and plots never care where a Run came from.

Frames (units are in the column names):

intervals   one row per (interval end, op type), see INTERVAL_COLUMNS
summary     one row per op type (the tool's own totals where it printed them), SUMMARY_COLUMNS
metrics     long format: time, node, metric, value (cluster and host samples), METRIC_COLUMNS
events      phases and marks: time, name, detail (e.g. a garbagecollect window), EVENT_COLUMNS
histograms  optional HDR histograms per op type and interval, HISTOGRAM_COLUMNS, each row one
            interval of one tag, `encoded` being HdrHistogram's compressed base64 form
tables      named frames of any shape (e.g. nodetool, GC or network tables kept with a run);
            no fixed schema, stored as they are

`time_s` is seconds since the run's start (float); `time` in metrics/events is a UTC
timestamp (pandas datetime64[ns, UTC]) or, where a source has only relative time, NaT with the
offset in `time_s`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

SCHEMA_VERSION = 1

#: Latency types. Service time: from the actual send to the response. Response time: from the
#: intended start under a fixed rate (coordinated omission corrected). "unknown" where the tool
#: does not say (most stress tools' console output is service time for unthrottled runs).
LATENCY_TYPES = ("service", "response", "unknown")

INTERVAL_COLUMNS: dict[str, str] = {
    "time_s": "float64",            # end of the interval, seconds since run start
    "op": "string",                 # op type: write, read, mixed, insert, simple1, delete, ...
    "count": "Int64",               # ops completed in the interval (or total so far: see count_is_total)
    "rate_ops_s": "float64",
    "partition_rate_s": "float64",
    "row_rate_s": "float64",
    "latency_mean_ms": "float64",
    "latency_p50_ms": "float64",
    "latency_p95_ms": "float64",
    "latency_p99_ms": "float64",
    "latency_p999_ms": "float64",
    "latency_max_ms": "float64",
    "errors": "Int64",
    "gc_count": "Int64",
    "gc_max_ms": "float64",
    "gc_total_ms": "float64",
}

SUMMARY_COLUMNS: dict[str, str] = {
    "op": "string",
    "count": "Int64",               # total ops
    "partitions": "Int64",
    "rows": "Int64",
    "rate_ops_s": "float64",
    "partition_rate_s": "float64",
    "row_rate_s": "float64",
    "latency_mean_ms": "float64",
    "latency_p50_ms": "float64",
    "latency_p95_ms": "float64",
    "latency_p99_ms": "float64",
    "latency_p999_ms": "float64",
    "latency_max_ms": "float64",
    "errors": "Int64",
    "duration_s": "float64",
}

METRIC_COLUMNS: dict[str, str] = {
    "time": "datetime64[ns, UTC]",
    "node": "string",
    "metric": "string",
    "value": "float64",
}

EVENT_COLUMNS: dict[str, str] = {
    "time": "datetime64[ns, UTC]",
    "time_s": "float64",
    "name": "string",
    "detail": "string",
}

HISTOGRAM_COLUMNS: dict[str, str] = {
    "tag": "string",                # op type
    "start_s": "float64",           # interval start, seconds since run start
    "end_s": "float64",
    "encoded": "string",            # HdrHistogram compressed base64; unit in manifest["histogram_unit"] ("ns" default, as cassandra-stress)
}


_EMPTY_TEMPLATES: dict[tuple[tuple[str, str], ...], pd.DataFrame] = {}


def empty_frame(columns: dict[str, str]) -> pd.DataFrame:
    """An empty frame with the given columns and dtypes (a copy of a cached template)."""
    key = tuple(columns.items())
    template = _EMPTY_TEMPLATES.get(key)
    if template is None:
        template = pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in columns.items()})
        _EMPTY_TEMPLATES[key] = template
    return template.copy()


def _conforms(frame: pd.DataFrame, columns: dict[str, str]) -> bool:
    if list(frame.columns[:len(columns)]) != list(columns):
        return False
    dtypes = frame.dtypes
    return all(str(dtypes.iloc[i]) == dtype for i, dtype in enumerate(columns.values())) and \
        isinstance(frame.index, pd.RangeIndex) and frame.index.start == 0 and frame.index.step == 1


def conform(frame: pd.DataFrame | list[dict[str, Any]] | None, columns: dict[str, str]) -> pd.DataFrame:
    """Return `frame` with exactly the schema's columns (missing ones added as NA) in order,
    cast to the schema's dtypes; extra columns are kept after them. The frame is built once
    from a dict of columns (inserting column by column costs ~15 ms a frame)."""
    if frame is None:
        return empty_frame(columns)
    if not isinstance(frame, pd.DataFrame):
        frame = pd.DataFrame(list(frame))
    elif _conforms(frame, columns):
        return frame
    data: dict[str, Any] = {}
    for name, dtype in columns.items():
        if name in frame.columns:
            col = frame[name]
            data[name] = col if str(col.dtype) == dtype else col.astype(dtype)
        else:
            data[name] = pd.Series(pd.NA if dtype in ("Int64", "string") else None, index=frame.index, dtype=dtype)
    for name in frame.columns:
        if name not in columns:
            data[name] = frame[name]
    out = pd.DataFrame(data, index=frame.index)
    return out.reset_index(drop=True) if not isinstance(out.index, pd.RangeIndex) or out.index.start != 0 \
        or out.index.step != 1 else out


@dataclass
class Run:
    """A manifest plus tidy frames. See the module docstring for the frames' schemas.

    manifest keys (all JSON-serialisable): schema_version, run_id, labels (dict of str),
    tool, tool_version, command, parameters, latency_type, cluster, machine, started_utc,
    ended_utc, git_commit, source (path of the raw file a parser read), complete (bool).
    """

    manifest: dict[str, Any]
    intervals: pd.DataFrame = field(default_factory=lambda: empty_frame(INTERVAL_COLUMNS))
    summary: pd.DataFrame = field(default_factory=lambda: empty_frame(SUMMARY_COLUMNS))
    metrics: pd.DataFrame = field(default_factory=lambda: empty_frame(METRIC_COLUMNS))
    events: pd.DataFrame = field(default_factory=lambda: empty_frame(EVENT_COLUMNS))
    histograms: pd.DataFrame = field(default_factory=lambda: empty_frame(HISTOGRAM_COLUMNS))
    warnings: list[str] = field(default_factory=list)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.manifest.setdefault("schema_version", SCHEMA_VERSION)
        self.manifest.setdefault("labels", {})
        self.manifest.setdefault("latency_type", "unknown")
        self.manifest.setdefault("complete", True)
        if self.manifest["latency_type"] not in LATENCY_TYPES:
            raise ValueError(f"latency_type must be one of {LATENCY_TYPES}, got {self.manifest['latency_type']!r}")
        self.intervals = conform(self.intervals, INTERVAL_COLUMNS)
        self.summary = conform(self.summary, SUMMARY_COLUMNS)
        self.metrics = conform(self.metrics, METRIC_COLUMNS)
        self.events = conform(self.events, EVENT_COLUMNS)
        self.histograms = conform(self.histograms, HISTOGRAM_COLUMNS)

    @property
    def run_id(self) -> str | None:
        return self.manifest.get("run_id")

    @property
    def labels(self) -> dict[str, str]:
        return self.manifest["labels"]

    @property
    def complete(self) -> bool:
        return bool(self.manifest.get("complete", True))
