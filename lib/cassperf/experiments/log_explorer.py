"""Log explorer: import every log in a folder or glob into a store, and give back tidy frames
for the notebook: the runs table, intervals of every run, GC pauses, and what could not be read.

Nothing is guessed: a file no parser recognises is listed in `problems` with the formats tried;
so is a file whose content the store already holds (imported once, never counted twice).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from cassperf import parsers
from cassperf.parsers.paths import expand_paths
from cassperf.errors import CassperfError
from cassperf.results.catalog import DuplicateImportError, catalog, import_parsed


@dataclass
class Explored:
    runs: pd.DataFrame                      # the catalog of imported runs
    intervals: pd.DataFrame                 # every run's intervals + run_id, tool, file
    gc_pauses: pd.DataFrame                 # pauses tables of GC logs + file
    problems: pd.DataFrame                  # file, error
    formats: pd.DataFrame = field(default_factory=pd.DataFrame)  # file, format, runs, tables, warnings


def explore(pattern: str | Path, store: Path) -> Explored:
    """Parse and import every file under `pattern` (a folder or a glob) into the run store at `store`."""
    files = expand_paths([str(pattern)])
    intervals, pauses, problems, formats = [], [], [], []
    for path in files:
        try:
            result = parsers.parse(path)
        except (CassperfError, OSError) as exc:
            problems.append({"file": path.name, "error": str(exc).splitlines()[0]})
            continue
        try:
            import_parsed(result, {"file": path.name, "format": result.format}, root=store)
        except DuplicateImportError as exc:          # already in this store: listed, not counted twice
            problems.append({"file": path.name, "error": str(exc)})
            continue
        formats.append({"file": path.name, "format": result.format, "runs": len(result.runs),
                        "tables": ", ".join(result.tables), "warnings": len(result.warnings),
                        "complete": result.complete})
        for i, run in enumerate(result.runs):
            if not run.intervals.empty:
                frame = run.intervals.copy()
                frame.insert(0, "run", f"{path.name} #{i + 1}")
                frame.insert(1, "tool", run.manifest.get("tool"))
                intervals.append(frame)
        if "pauses" in result.tables:
            frame = result.tables["pauses"].copy()
            frame.insert(0, "file", path.name)
            pauses.append(frame)
    return Explored(runs=catalog(store), intervals=_concat(intervals), gc_pauses=_concat(pauses),
                    problems=pd.DataFrame(problems, columns=["file", "error"]),
                    formats=pd.DataFrame(formats, columns=["file", "format", "runs", "tables", "warnings", "complete"]))


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def throughput_over_time(intervals: pd.DataFrame) -> go.Figure:
    """ops/s per interval, one line per run and op type."""
    fig = go.Figure()
    if not intervals.empty:
        for (run, op), g in intervals.groupby(["run", "op"], sort=False):
            fig.add_scatter(x=g["time_s"], y=g["rate_ops_s"], mode="lines", name=f"{run} {op}")
    fig.update_layout(title="Throughput over time", xaxis_title="time since start (s)", yaxis_title="ops/s")
    return fig


def latency_over_time(intervals: pd.DataFrame, percentile: str = "p99") -> go.Figure:
    """Per-interval latency percentile as the tool reported it (one line per run and op type)."""
    col = f"latency_{percentile}_ms"
    fig = go.Figure()
    if not intervals.empty and col in intervals:
        for (run, op), g in intervals.groupby(["run", "op"], sort=False):
            if g[col].notna().any():
                fig.add_scatter(x=g["time_s"], y=g[col], mode="lines", name=f"{run} {op}")
    fig.update_layout(title=f"Latency {percentile} over time (per interval, as each tool reported it)",
                      xaxis_title="time since start (s)", yaxis_title=f"{percentile} latency (ms)")
    return fig


def gc_pauses_over_time(pauses: pd.DataFrame) -> go.Figure:
    """Each stop-the-world pause as a point: JVM uptime (s) against pause length (ms)."""
    fig = go.Figure()
    if not pauses.empty:
        for file, g in pauses.groupby("file", sort=False):
            fig.add_scatter(x=g["uptime_s"], y=g["pause_ms"], mode="markers", name=file,
                            text=g.get("cause"), hovertemplate="%{text}<br>%{y:.1f} ms at %{x:.0f} s")
    fig.update_layout(title="GC pauses", xaxis_title="JVM uptime (s)", yaxis_title="pause (ms)")
    return fig
