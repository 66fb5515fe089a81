"""Run a study's plan of workloads in order, with progress, resumable.

A plan is a list of :class:`Step`: the labels that name the run (every parameter of the
sweep: rf, op, threads, cl, run a/b, ...), the WorkloadSpec, the tool, and an optional
``before`` action (e.g. empty the caches for a cold run "a"). :func:`execute` runs the steps
one after another through the one entry point (``cassperf.workload.run.run_spec``).

Resuming. Every step's labels carry ``spec_key``, a short hash of the workload and tool. A step
whose labels match a stored run that is complete and not failed is skipped, so a sweep
stopped half-way (Ctrl-C, a crash, a killed kernel) and started again runs only the rest.
Data matters as much as labels: a step is only skipped while the keyspace it uses still
exists on the cluster (a destroyed cluster gets its writes again, not reads of nothing).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from cassperf.analysis.sweep import SPEC_KEY_LABEL, done_mask
from cassperf.errors import ConfigError
from cassperf.results.catalog import catalog
from cassperf.workload.spec import WorkloadSpec


def spec_key(spec: WorkloadSpec, tool: str) -> str:
    """12 hex digits naming the workload exactly (its cassandra-stress form, the tool, the
    compaction and compression it asks for, the rate)."""
    text = "|".join([tool, repr(spec)])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Step:
    """One run of a plan. ``labels`` name it (str values); ``before(cluster) -> note`` runs
    first (its note is kept in the outcome); ``during`` as in run_spec."""

    labels: Mapping[str, str]
    spec: WorkloadSpec
    tool: str = "engine"
    before: Callable[[Any], str | None] | None = None
    during: Callable[[Any], Any] | None = None
    run_options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def full_labels(self) -> dict[str, str]:
        return {**{k: str(v) for k, v in self.labels.items()}, "tool": self.tool,
                SPEC_KEY_LABEL: spec_key(self.spec, self.tool)}

    @property
    def title(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.labels.items() if k not in ("study", "experiment"))


@dataclass
class Outcome:
    step: Step
    run_id: str | None
    status: str          # "ran", "skipped" (stored already), "failed"
    note: str = ""


def stored_runs(root: str | Path | None = None, **label_filters: str) -> pd.DataFrame:
    """The catalog of usable runs with these labels (failed runs left out, as catalog() does)."""
    frame = catalog(root, **label_filters)
    return frame if "failed" in frame.columns else frame.assign(failed=pd.Series(False, index=frame.index))


def _keyspaces(cluster: Any) -> set[str]:
    try:
        session = cluster.session()
        return {row[0] for row in session.execute("SELECT keyspace_name FROM system_schema.keyspaces")}
    except Exception:  # noqa: BLE001 - unknown: then nothing is taken as present, and steps run
        return set()


def execute(steps: Sequence[Step], cluster: Any, *, root: str | Path | None = None, resume: bool = True,
            sampler: Mapping[str, Any] | None = None, progress: bool = True,
            log: Callable[[str], None] = print) -> list[Outcome]:
    """Run ``steps`` in order (module doc); returns one Outcome per step. A failed run is
    stored, marked failed, reported, and the sweep goes on with the next step."""
    from cassperf.workload.run import RunFailedError, run_spec

    runs = stored_runs(root) if resume else pd.DataFrame()
    present = _keyspaces(cluster) if resume else set()
    outcomes: list[Outcome] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(steps), unit="run", desc="sweep", dynamic_ncols=True)
    try:
        for i, step in enumerate(steps, 1):
            labels = step.full_labels
            done = runs[done_mask(labels, runs)] if not runs.empty else runs
            if resume and not done.empty and step.spec.keyspace in present:
                outcomes.append(Outcome(step, str(done["run_id"].iloc[-1]), "skipped", "stored already"))
                log(f"[{i}/{len(steps)}] {step.title}: stored already as {done['run_id'].iloc[-1]}, skipped")
            else:
                note = step.before(cluster) if step.before is not None else None
                if note:
                    log(f"[{i}/{len(steps)}] {step.title}: {note}")
                tables = [(step.spec.keyspace, "standard1")]
                sampling = None if sampler is None else {"tables": tables, **dict(sampler)}
                try:
                    run = run_spec(step.spec, cluster, tool=step.tool, labels=labels, sampler=sampling,
                                   during=step.during, root=root, progress=False, **dict(step.run_options))
                except RunFailedError as exc:
                    outcomes.append(Outcome(step, exc.run_id, "failed", exc.reason))
                    log(f"[{i}/{len(steps)}] {step.title}: FAILED ({exc.reason}); run {exc.run_id} kept, marked failed")
                else:
                    outcomes.append(Outcome(step, run.run_id, "ran", note or ""))
                    log(f"[{i}/{len(steps)}] {step.title}: {_headline(run)} (run {run.run_id})")
                present.add(step.spec.keyspace)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return outcomes


def _headline(run: Any) -> str:
    s = run.summary
    if s.empty:
        return "no summary"
    ops = int(s["count"].fillna(0).sum())
    rate = float(s["rate_ops_s"].fillna(0).sum())
    return f"{ops:,} ops, {rate:,.0f} ops/s ({run.manifest.get('latency_type')} time)"


def outcomes_frame(outcomes: Sequence[Outcome]) -> pd.DataFrame:
    """One row per step: its labels, run id, status and note."""
    return pd.DataFrame([{**o.step.labels, "run_id": o.run_id, "status": o.status, "note": o.note}
                         for o in outcomes])



def parse_label_filter(text: str) -> dict[str, str]:
    """``"source=paper,dc=dc1"`` -> ``{"source": "paper", "dc": "dc1"}`` (a notebook parameter)."""
    out: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"label filter {part!r}: expected KEY=VALUE[,KEY=VALUE...], e.g. 'source=prod'")
        out[key.strip()] = value.strip()
    return out


def latest_runs(group_by: Sequence[str], root: str | Path | None = None, **label_filters: str) -> list[Any]:
    """The newest complete, non-failed run per distinct value of the ``group_by`` labels among
    the runs with ``label_filters`` (stored by a sweep, or imported with those labels), loaded.
    A run without one of the group_by labels is grouped under "" for it."""
    from cassperf.results.store import load_run

    runs = stored_runs(root, **label_filters)
    if runs.empty:
        return []
    runs = runs[runs["complete"] & ~runs["failed"]]
    keys = [k for k in group_by if k in runs.columns]
    if keys:
        grouped = runs.assign(**{k: runs[k].astype("string").fillna("") for k in keys})
        newest = grouped.sort_values("run_id").groupby(keys, sort=False).tail(1)
    else:
        newest = runs.sort_values("run_id")
    return [load_run(Path(p)) for p in newest.sort_values("run_id")["path"]]


#: Above this many operations in one run the embedded cluster (every node on this machine) would
#: take hours: such a parameter set is for a real cluster.
EMBEDDED_MAX_OPS = 2_000_000


def check_embedded_scale(contact_points: str, **sizes: int) -> None:
    """Refuse published-scale sizes (e.g. rows=10,000,000) on the embedded cluster, naming the
    parameter and the fix, instead of a run that would not finish."""
    if contact_points.strip():
        return
    for name, value in sizes.items():
        if value > EMBEDDED_MAX_OPS:
            raise ConfigError(f"{name}={value:,} is the published scale, for a real cluster: on the embedded "
                              f"cluster (every node on this machine) it would take hours. Give contact_points of "
                              f"your cluster (-p contact_points 10.0.0.4,...), or use the local parameter set")
