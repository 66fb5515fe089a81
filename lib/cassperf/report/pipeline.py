"""The main job: run the report notebooks with a parameter set, export each to HTML, write
reports/index.html.

Notebooks are found on disk (`notebooks/[0-9][0-9]-*.ipynb`). Each runs with its effective
parameters (defaults < parameter set < explicit; `cassperf.report.params`) on the embedded
cluster its parameters declare (`cassperf.report.clusters`), started, reused or replaced as
the notebooks need and stopped at the end if this run started it. Notebooks that need the same
cluster run one after the other (fewer restarts); the index stays in name order. Every
notebook gets a report, a failed one too (marked at the failing cell), and a row in the index
with its status, duration, parameter set and the runs it stored.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cassperf import config
from cassperf.errors import CassperfError, ConfigError
from cassperf.report.clusters import ClusterNeed, PipelineClusters, cluster_need, starts_own_clusters
from cassperf.report.params import Resolved, resolve, select_notebooks, set_label

@dataclass(frozen=True)
class NotebookResult:
    notebook: str
    ok: bool
    duration_s: float           # notebook execution, s
    html: Path | None           # the report; None when the notebook could not start
    error: str | None
    runs_stored: int
    parameter_set: str
    cluster: str
    cluster_s: float            # s spent providing its cluster (0 when reused)
    size_bytes: int


def git_commit(root: Path) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def _run_folders(runs: Path) -> set[str]:
    return {p.name for p in runs.iterdir() if p.is_dir() and not p.name.startswith(".")} if runs.is_dir() else set()


def load_seconds(runs: Path, folders: set[str]) -> float:
    """Seconds the runs in ``folders`` applied load: each manifest's ended_utc - started_utc
    (the recorded load) plus its engine warm-up (unrecorded load before started_utc). A run
    without both times counts 0."""
    total = 0.0
    for name in folders:
        try:
            m = json.loads((runs / name / "manifest.json").read_text(encoding="utf-8"))
            started = datetime.fromisoformat(m["started_utc"].replace("Z", "+00:00"))
            ended = datetime.fromisoformat(m["ended_utc"].replace("Z", "+00:00"))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        params = m.get("parameters") or {}
        warmup = float((params.get("engine") or {}).get("warmup_s") or 0.0) if params.get("warmup") else 0.0
        total += max(0.0, (ended - started).total_seconds()) + warmup
    return total


def check_named_clusters(resolved: list[Resolved]) -> None:
    """Every cluster of the user's the selected notebooks name (``contact_points``, not
    analyse_only) answers a first connection with the environment's credentials and TLS, before
    any notebook runs and any run is stored: else one ClusterError line (bad credentials, a CA
    the nodes' certificates do not chain to, no node reachable; base.connect_error_line)."""
    from cassperf.cluster.study import study_cluster

    asked: set[tuple[str, str]] = set()
    for res in resolved:
        points = str(res.effective.get("contact_points") or "").strip()
        local_dc = str(res.effective.get("local_dc") or "")
        if not points or res.effective.get("analyse_only") or (points, local_dc) in asked:
            continue
        asked.add((points, local_dc))
        handle = study_cluster(contact_points=points, local_dc=local_dc or None)
        try:
            handle.session()
        finally:
            handle.close()


def report_variant(parameter_set: str, explicit: dict[str, Any]) -> str:
    """'' for the published report (the local set, no explicit parameter but show_code); else
    the suffix of a report of its own beside it: the set's name, the experiment, and 6 hex
    digits of any other explicit parameters (so trying parameters never replaces a published
    report)."""
    import hashlib
    import re

    tried = {k: v for k, v in explicit.items() if k != "show_code"}
    parts = [] if parameter_set == "local" else [Path(parameter_set).stem]
    if "experiment" in tried:
        parts.append(f"exp-{tried.pop('experiment')}")
    if tried:
        parts.append(hashlib.sha256(json.dumps(tried, sort_keys=True, default=str).encode()).hexdigest()[:6])
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join(parts))


def claim_counts(executed: Path) -> dict[str, int] | None:
    """Verdict counts of the claims a study report published (its JSON output), or None."""
    import nbformat

    try:
        nb = nbformat.read(executed, as_version=4)
    except (OSError, ValueError):
        return None
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {}).get("application/json")
            if isinstance(data, dict) and isinstance(data.get("claims"), list):
                counts: dict[str, int] = {}
                for c in data["claims"]:
                    if not str(c.get("claim", "")).startswith("A/A control"):     # the control is not a finding
                        counts[str(c.get("verdict"))] = counts.get(str(c.get("verdict")), 0) + 1
                        if str(c.get("reason", "")).startswith("withheld"):        # by a significant A/A control
                            counts["withheld"] = counts.get("withheld", 0) + 1
                return counts
    return None


def execution_order(plans: list[tuple[Resolved, ClusterNeed | None]]) -> list[tuple[Resolved, ClusterNeed | None]]:
    """Notebooks needing the same cluster next to each other, in order of first appearance; within
    a cluster's name, those needing it in the same shape (heap, bounds) next to each other, so a
    shape is started once; then name order (and for notebooks needing none, name order).
    Notebooks that start their own clusters (`starts_own_clusters`) come last: the pipeline's
    clusters are stopped before them."""
    first: dict[str | None, int] = {}
    shape: dict[ClusterNeed | None, int] = {}
    for i, (_, need) in enumerate(plans):
        first.setdefault(need.name if need else None, i)
        shape.setdefault(need, i)
    return sorted(plans, key=lambda p: (starts_own_clusters(p[0].effective), first[p[1].name if p[1] else None],
                                        shape[p[1]], p[0].notebook.name))


def _cluster_label(res: Resolved, need: ClusterNeed | None) -> str:
    if need is not None:
        return need.label
    if res.effective.get("contact_points"):
        return f"yours: {res.effective['contact_points']}"
    if starts_own_clusters(res.effective):
        return "its own, one per deployment"
    return "none"


def selected(notebooks: list[str] | None, parameter_set: str, explicit: dict[str, Any],
              notebooks_dir: Path | None) -> list[Resolved]:
    """The selected notebooks' effective parameters; an explicit one no selected notebook declares
    is one ConfigError."""
    paths = select_notebooks(notebooks, notebooks_dir)
    resolved = [resolve(p, parameter_set, explicit) for p in paths]
    for key in explicit:
        if key != "show_code" and not any(key in r.declared for r in resolved):
            raise ConfigError(f"parameter {key!r} is not a parameter of any selected notebook "
                              f"({', '.join(p.name for p in paths)})")
    return resolved


def run_reports(notebooks: list[str] | None = None, parameter_set: str = "local",
                explicit: dict[str, Any] | None = None, reports_dir: Path | None = None,
                notebooks_dir: Path | None = None, show_code: bool = False, start_clusters: bool = True,
                clusters_root: Path | None = None, log: Callable[[str], None] = lambda line: None,
                preflight: Callable[[list[Resolved]], Sequence[str]] | None = None) -> list[NotebookResult]:
    """Run the report notebooks (all found on disk by default, or those named), export each to
    HTML in `reports_dir` (default reports/) and rebuild its index.html. Every parameter is
    checked before anything runs: an unknown key in a file, or an explicit one no selected
    notebook declares, is one ConfigError; a named cluster (contact_points) that does not let this
    client in is one ClusterError (check_named_clusters). `show_code` keeps the code in the reports (and sets
    the notebooks' `show_code` parameter where they have one). `start_clusters=False` starts
    nothing (the notebooks find or start their clusters). `log` gets one line per step.
    `preflight(resolved)`, before anything starts, checks what the notebooks run (it raises one
    ConfigError line for a bad value) and returns lines to log first (cassperf.workbook.preflight:
    the studies' parameters, what this machine will not make)."""
    from cassperf.report.index import write_index

    reports = reports_dir or config.reports_dir()
    explicit = dict(explicit or {})
    if show_code:
        explicit["show_code"] = True
    resolved = selected(notebooks, parameter_set, explicit, notebooks_dir)
    said = list(preflight(resolved)) if preflight is not None else []
    check_named_clusters(resolved)
    for line in said:
        log(line)
    variant = report_variant(parameter_set, explicit)
    plans = [(r, cluster_need(r.effective) if start_clusters else None) for r in resolved]
    label = set_label(parameter_set)
    commit = git_commit(config.project_root())
    clusters = PipelineClusters(clusters_root, log=log)
    if start_clusters:
        clusters.release_left([need for _, need in plans if need is not None])
    results: list[NotebookResult] = []
    try:
        for res, need in execution_order(plans):
            results.append(_run_one(res, need, clusters, reports, label, commit, show_code, log, variant))
    finally:
        stopped = clusters.stop_all()
        if stopped:
            log(f"stopped the clusters this run started: {', '.join(stopped)}")
        write_index(reports)
    return sorted(results, key=lambda r: r.notebook)


def _run_one(res: Resolved, need: ClusterNeed | None, clusters: PipelineClusters, reports: Path, label: str,
             commit: str | None, show_code: bool, log: Callable[[str], None], variant: str = "") -> NotebookResult:
    from cassperf.report.execute import execute  # papermill and nbconvert load in seconds: only when used
    from cassperf.report.html import export_html
    from cassperf.report.index import ReportRecord, write_record

    name = res.notebook.name
    cluster_s = 0.0
    error = None
    if need is not None:
        log(f"{name}: cluster {need.label}")
        try:
            provision = clusters.provide(need)
            cluster_s = provision.seconds
            if provision.stopped:
                log(f"  stopped {', '.join(provision.stopped)} (another shape)")
            log(f"  {'started' if provision.started else 'reused'} in {provision.seconds:.0f} s")
        except CassperfError as exc:
            error = f"cluster {need.name} could not start: {str(exc).splitlines()[0]}"
    elif starts_own_clusters(res.effective):
        stopped = clusters.stop_all()
        if stopped:
            log(f"{name}: starts its own cluster per deployment; stopped {', '.join(stopped)} first")
    stem = res.notebook.stem + (f"--{variant}" if variant else "")
    executed = reports / "executed" / f"{stem}.ipynb"
    from cassperf.report.header import PARAMETER_SET_ENV

    html_path: Path | None = reports / f"{stem}.html"
    duration, runs_stored, load_s, size, title = 0.0, 0, 0.0, 0, res.notebook.stem
    if error is None:
        log(f"{name}: running")
        executed.unlink(missing_ok=True)
        before = _run_folders(config.runs_dir())
        ex = execute(res.notebook, executed, res.given, env={PARAMETER_SET_ENV: label})
        new = _run_folders(config.runs_dir()) - before
        runs_stored, load_s = len(new), load_seconds(config.runs_dir(), new)
        duration, error = ex.duration_s, ex.error
    if executed.exists() and (error is None or duration > 0):
        exported = export_html(executed, html_path, show_code=show_code or bool(res.effective.get("show_code")))
        size, title = exported.size_bytes, exported.title
    else:
        html_path = None
    result = NotebookResult(name, error is None, duration, html_path, error, runs_stored, label,
                            _cluster_label(res, need), cluster_s, size)
    write_record(reports, ReportRecord(
        notebook=name, title=title, html=html_path.name if html_path else None, ok=result.ok, error=error,
        duration_s=duration, parameter_set=label, runs_stored=runs_stored, cluster=result.cluster,
        cluster_s=cluster_s, size_bytes=size, finished_utc=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        commit=commit, load_s=load_s, variant=variant, claims=claim_counts(executed) if executed.exists() else None))
    share = f", {load_s / duration:.0%} of it in workload runs" if duration > 0 and load_s > 0 else ""
    log(f"{'ok    ' if result.ok else 'FAILED'} {name} ({duration:.0f} s{share}, {runs_stored} runs stored)"
        + (f" -> {html_path}" if html_path else "") + (f"\n       {error}" if error else ""))
    return result
