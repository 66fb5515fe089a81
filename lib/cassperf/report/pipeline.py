"""The main job: run every report notebook with a parameter set, export HTML, write the index.

The embedded local cluster is started once (or reused) before the notebooks run, so they all
share it; it is stopped at the end only if this pipeline started it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cassperf import config

#: Report notebooks in the order they run, with the parameter sets they know.
REPORT_NOTEBOOKS: list[str] = ["00-cluster-overview.ipynb", "00-log-explorer.ipynb"]

#: Parameter sets: "local" runs on the embedded cluster in minutes.
PARAMETER_SETS: dict[str, dict[str, dict[str, Any]]] = {
    "local": {},
}


@dataclass(frozen=True)
class NotebookResult:
    notebook: str
    ok: bool
    duration_s: float
    html: Path
    error: str | None


def git_commit(root: Path) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def run_reports(notebooks: list[str] | None = None, parameter_set: str = "local",
                reports_dir: Path | None = None, start_cluster: bool = True, cluster_name: str = "cassperf",
                first_address: str = "127.0.0.1") -> list[NotebookResult]:
    """Run the report notebooks (all of REPORT_NOTEBOOKS by default), export each to HTML and
    write reports/index.html. Every notebook gets the parameters `cluster_name` and
    `first_address` of the embedded cluster, plus its entries of the parameter set."""
    from cassperf.report.execute import execute  # papermill and nbconvert load in seconds: only when used
    from cassperf.report.html import export_html
    from cassperf.report.index import write_index

    reports = reports_dir or config.reports_dir()
    names = notebooks or REPORT_NOTEBOOKS
    params = PARAMETER_SETS.get(parameter_set)
    if params is None:
        from cassperf.errors import ConfigError
        raise ConfigError(f"unknown parameter set {parameter_set!r}; known: {', '.join(PARAMETER_SETS)}")
    cluster = None
    started_here = False
    if start_cluster:
        from cassperf.cluster.local import LocalCluster
        cluster = LocalCluster(cluster_name, "dc1:1", first_address=first_address)
        started_here = not all(s.up for s in cluster.status())
        cluster.start()
    results = []
    try:
        for name in names:
            src = config.notebooks_dir() / name
            executed = reports / "executed" / name
            ex = execute(src, executed, {"cluster_name": cluster_name, "first_address": first_address,
                                         **params.get(name, {})})
            html_path = reports / (Path(name).stem + ".html")
            title = export_html(executed, html_path) if executed.exists() else name
            results.append((NotebookResult(name, ex.ok, ex.duration_s, html_path, ex.error), title))
    finally:
        if cluster is not None and started_here:
            cluster.stop()
    write_index(reports / "index.html",
                [{"title": t, "html": r.html.name, "notebook": r.notebook, "ok": r.ok, "duration_s": r.duration_s,
                  "error": r.error} for r, t in results],
                git_commit(config.project_root()))
    return [r for r, _ in results]
