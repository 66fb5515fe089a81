"""Before a report runs: the studies its notebooks run, checked, costed and matched against this
machine; and ``run_reports``, the report pipeline (cassperf.report.pipeline) with those checks.

    check_studies(resolved) -> [(notebook, Study)]   each study notebook's parameters made into its
                                                      Study and checked against the cluster they name
    host_gap_lines(studies) -> [line]                 what this machine will not make, with the command
                                                      that adds it (cassperf.experiments.host_needs)
    machine_lines(studies) -> [line]                  what the studies need built once (a container
                                                      root filesystem), built now
    plan_reports(...) -> [line]                       ``cassperf report --plan``: arms, runs, load time
                                                      and data size per notebook, nothing started
    run_reports(...)                                  the pipeline, these checks first

The report pipeline knows notebooks, parameter sets, clusters and HTML; the studies know their
plans. This module, above both, is where they meet.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cassperf.errors import ConfigError
from cassperf.experiments.host_needs import Host
from cassperf.experiments.study import Study
from cassperf.report.clusters import cluster_need, starts_own_clusters
from cassperf.report.params import Resolved, set_label
from cassperf.report.pipeline import NotebookResult, selected
from cassperf.report.pipeline import run_reports as run_pipeline


def study_class(notebook: Path) -> type | None:
    """The Study class a study notebook runs (its metadata ``cassperf.study``), or None."""
    import importlib

    import nbformat

    path = (nbformat.read(notebook, as_version=4).metadata.get("cassperf") or {}).get("study")
    if not path:
        return None
    module, _, name = str(path).rpartition(".")
    return getattr(importlib.import_module(module), name)


def check_studies(resolved: list[Resolved]) -> list[tuple[Resolved, Study]]:
    """Every selected study notebook's parameters made into its Study and checked against the
    cluster they name, before any cluster starts: a bad value is one ConfigError line naming
    the notebook. Returns the (notebook, Study) pairs, notebooks that run no study left out."""
    made = []
    for res in resolved:
        cls = study_class(res.notebook)
        if cls is None:
            continue
        try:
            study = cls.from_parameters(res.effective)
            if not res.effective.get("analyse_only"):
                study.check_parameters(res.effective)
        except ConfigError as exc:
            raise ConfigError(f"{res.notebook.name}: {exc}") from None
        made.append((res, study))
    return made


def host_gap_lines(studies: list[tuple[Resolved, Study]], host: Host | None = None) -> list[str]:
    """What this machine will not make of the studies that run (not analyse_only), one line each
    with the command that adds it (cassperf.experiments.host_needs), under a heading; [] when nothing
    is missing. ``host``: what the machine has (default: this one)."""
    from cassperf.experiments import host_needs

    found = host_needs.gaps([(res.notebook.stem, study, str(res.effective.get("contact_points") or ""))
                             for res, study in studies if not res.effective.get("analyse_only")], host)
    if not found:
        return []
    return ["not made on this machine (each report says so too):", *(f"  {gap.line()}" for gap in found)]


def machine_lines(studies: list[tuple[Resolved, Study]]) -> list[str]:
    """What the studies that run (not analyse_only) need built on this machine once, built now
    (Study.prepare_machine), one line each naming the notebook."""
    return [f"{res.notebook.name}: {line}" for res, study in studies if not res.effective.get("analyse_only")
            for line in study.prepare_machine()]


def plan_reports(notebooks: list[str] | None = None, parameter_set: str = "local",
                 explicit: dict[str, Any] | None = None, notebooks_dir: Path | None = None,
                 host: Host | None = None) -> list[str]:
    """What ``run_reports`` with these arguments would run, in words (cassperf.experiments.cost):
    per selected notebook its arms, runs, load time and data size, then what this machine will not
    make (host_gap_lines). The parameters are checked as run_reports checks them, but no cluster
    is started or connected to, and nothing is written."""
    from cassperf.experiments.cost import overhead_note, plan_lines

    resolved = selected(notebooks, parameter_set, dict(explicit or {}), notebooks_dir)
    studies = dict((res.notebook, study) for res, study in check_studies(resolved))
    label = set_label(parameter_set)
    out: list[str] = []
    for res in resolved:
        points = str(res.effective.get("contact_points") or "").strip()
        need = cluster_need(res.effective)
        where = (f"your cluster {points}" if points else f"the embedded cluster {need.label}" if need
                 else "embedded clusters of its own, one per deployment" if starts_own_clusters(res.effective)
                 else "no cluster")
        heading = f"{res.notebook.stem}, parameter set {label}, on {where}:"
        study = studies.get(res.notebook)
        if study is None:
            out += [heading, "  runs no study (no load)"]
        elif res.effective.get("analyse_only"):
            out += [heading, "  analyse_only: runs no load (it reads the stored runs)"]
        else:
            out += plan_lines(heading, study, embedded=not points)
    out += host_gap_lines(list((res, studies[res.notebook]) for res in resolved if res.notebook in studies), host)
    out.append(overhead_note())
    return out


def run_reports(notebooks: list[str] | None = None, parameter_set: str = "local",
                explicit: dict[str, Any] | None = None, **options: Any) -> list[NotebookResult]:
    """The report pipeline (cassperf.report.pipeline.run_reports, same arguments) with the studies
    checked before anything starts and what this machine will not make said first."""
    def preflight(resolved: list[Resolved]) -> list[str]:
        studies = check_studies(resolved)
        return host_gap_lines(studies) + machine_lines(studies)

    log: Callable[[str], None] = options.pop("log", lambda line: None)
    return run_pipeline(notebooks, parameter_set, explicit, log=log, preflight=preflight, **options)
