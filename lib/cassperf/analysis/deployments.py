"""The deployment study's table (the published deployment comparison): row rate of write, read and mixed
per deployment, one table per machine, with node CPU per 1,000 rows beside each figure.

A run enters as: its ``deployment`` label (the row), its workload (the column: the ``op``
label, else the first word of the cassandra-stress command the manifest recorded: write, read
or mixed) and its machine (cassperf.analysis.machines: runs of different hardware never share a
table).

Figures are over the whole measured run, as cassandra-stress's own "Row rate" line is (rows /
run time). Where the tool printed its own summary over that run (an imported cassandra-stress
log's ``Row rate : 4,962 row/s``), its figure is published (``row_rate_source`` says "tool
summary"): the intervals' length-weighted rate differs from it by the tool's own rounding and
the partial last interval, and a reader checks the table against the log. Otherwise
``row_rate_s`` is length-weighted over the run's intervals; a run with an aggregate op
(``total``) uses it, otherwise its ops are summed (a mixed run's reads and writes). Several runs
of one deployment and workload (the study's repeats) are one cell: their mean, with the 95% CI
half width of the mean over the runs. Rows vs ops:
the engine counts one row per write, and per read the rows it found (one, or none for a key
never written); cassandra-stress's default ``standard1`` table does the same, so on these
workloads row rate equals op rate unless a read missed. Node CPU: cassperf.analysis.node_cpu
over the same window, NaN for a run without the sampler's process CPU (every imported log).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from cassperf.analysis.format import fmt_rows
from cassperf.analysis.machines import MachineGroup, machine_groups
from cassperf.analysis.node_cpu import cpu_ms_per_1k_rows, node_cpu_cores
from cassperf.analysis.select import run_name
from cassperf.analysis.tables import runs_frame
from cassperf.analysis.windows import Window
from cassperf.results.model import Run

DEPLOYMENT_LABEL = "deployment"
WORKLOADS = ("write", "read", "mixed")
TOTAL_OPS = ("total", "all")
ROW_COLUMNS = ["run_id", "machine", "deployment", "workload", "row_rate_s", "row_rate_source", "rate_ops_s",
               "node_cpu_cores", "cpu_ms_per_1k_rows", "cv", "unstable", "window_start_s", "window_end_s"]
ENGINE_TOOL = "cassperf-engine"


def summary_row_rate(run: Run) -> float:
    """The row rate a tool printed in its own summary of the whole run (the ``total`` row of an
    imported cassandra-stress log's Results), NaN where it printed none or the engine ran."""
    s = run.summary
    if str(run.manifest.get("tool", "")) == ENGINE_TOOL or s.empty or "row_rate_s" not in s.columns:
        return math.nan
    total = s[s["op"].astype(str).isin(TOTAL_OPS)]
    value = total["row_rate_s"].astype("float64").dropna() if not total.empty else pd.Series(dtype="float64")
    return float(value.iloc[-1]) if not value.empty else math.nan


def workload_of(run: Run) -> str | None:
    """write / read / mixed: the ``op`` label, else the recorded command's first word; None
    for anything else (a user profile, counters)."""
    op = run.labels.get("op")
    if not op:
        command = str(run.manifest.get("command") or "").strip().split()
        op = command[0] if command else ""
    op = str(op).strip().lower()
    return op if op in WORKLOADS else None


def run_row(run: Run, machine: str) -> dict[str, Any]:
    """One run's figures over its whole measured window (module doc)."""
    frame = runs_frame([run], steady=False)
    total = frame[frame["op"].isin(TOTAL_OPS)]
    used = total if not total.empty else frame
    window = Window(float(frame["window_start_s"].min()), float(frame["window_end_s"].max()), "run")
    printed = summary_row_rate(run)
    row_rate = printed if math.isfinite(printed) else float(used["row_rate_s"].sum(min_count=1))
    cores = node_cpu_cores(run, window)
    cvs = [float(c) for c in used["cv"] if c is not None and math.isfinite(float(c))]
    return {"run_id": run_name(run), "machine": machine, "deployment": str(run.labels.get(DEPLOYMENT_LABEL, "")),
            "workload": workload_of(run), "row_rate_s": row_rate,
            "row_rate_source": "tool summary" if math.isfinite(printed) else "intervals",
            "rate_ops_s": float(used["rate_ops_s"].sum()),
            "node_cpu_cores": cores, "cpu_ms_per_1k_rows": cpu_ms_per_1k_rows(cores, row_rate),
            "cv": max(cvs) if cvs else math.nan, "unstable": bool(used["unstable"].any()),
            "window_start_s": window.start_s, "window_end_s": window.end_s}


def deployment_rows(runs: Sequence[Run]) -> tuple[pd.DataFrame, list[MachineGroup]]:
    """One row per run with a deployment label and a known workload (ROW_COLUMNS), and the
    machine groups they fall in (``machine`` is the group's title)."""
    usable = [r for r in runs if r.labels.get(DEPLOYMENT_LABEL) and workload_of(r)]
    groups = machine_groups(usable)
    rows = [run_row(run, g.title) for g in groups for run in g.runs]
    return pd.DataFrame(rows, columns=ROW_COLUMNS), groups


def column_title(workload: str) -> str:
    return f"{workload.capitalize()} (row/s)"


def cpu_title(workload: str) -> str:
    return f"{workload.capitalize()} node CPU (ms/1k rows)"


def published_table(rows: pd.DataFrame, machine: str) -> pd.DataFrame:
    """The published layout for one machine: Deployment, then per workload its row rate and
    the node CPU per 1,000 rows beside it ("-" where there is no run, "n/a" where no CPU was
    sampled). Several runs of one deployment and workload: their mean, "± h" the 95% CI half width
    of that mean over the runs. Deployments in order of first run."""
    from scipy import stats as sps

    mine = rows[rows["machine"] == machine]
    out = []
    for deployment in dict.fromkeys(mine["deployment"]):
        line: dict[str, str] = {"Deployment": deployment}
        for w in WORKLOADS:
            hit = mine[(mine["deployment"] == deployment) & (mine["workload"] == w)]
            rates = hit["row_rate_s"].astype("float64").dropna()
            if rates.empty:
                line[column_title(w)] = line[cpu_title(w)] = "-"
                continue
            cell = fmt_rows(float(rates.mean()))
            if len(rates) >= 2:
                half = float(sps.t.ppf(0.975, len(rates) - 1) * rates.std(ddof=1) / math.sqrt(len(rates)))
                cell += f" ± {fmt_rows(half)}"
            line[column_title(w)] = cell
            line[cpu_title(w)] = fmt_rows(float(hit["cpu_ms_per_1k_rows"].astype("float64").mean()), 1)
        out.append(line)
    columns = ["Deployment", *[c for w in WORKLOADS for c in (column_title(w), cpu_title(w))]]
    return pd.DataFrame(out, columns=columns)


def deployment_tables(runs: Sequence[Run]) -> list[tuple[MachineGroup, pd.DataFrame]]:
    """One published table per machine (module doc), with the group (title, runs, note)."""
    rows, groups = deployment_rows(runs)
    return [(g, published_table(rows, g.title)) for g in groups]

