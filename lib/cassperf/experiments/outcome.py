"""A study's stored outcome, read back: its record and its runs (what analysis and the report use).

``load_outcome(study)`` reads the record of the study's plan (or, for ``analyse_only`` with
parameters that ran under another plan, the newest record of the same study and experiment,
whose parameters then stand for the study) and loads its runs: the measured runs of every arm
(complete, failed and cut short; analysis decides what it uses and says why), the warm-up and
the calibration steps.

Imported runs. Where no executor ran the study here, its outcome is made of runs imported from a
real cluster's logs (``cassperf import --label study=<name> --label arm=<arm> ...``): every run
labelled with the study's name (and the label filter; an ``experiment`` label, where a run has
one, must be the study's) that no executor made. Each needs an ``arm`` label naming an arm of the
study; its block is its ``block`` label, or else its position among its arm's runs in the order
they started (the first run of each arm is block 1, and so on). The analysis is the same: two
or more runs of each arm compared block by block, a single run per arm gives figures and no
verdict (its comparison has too few runs, and says so).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from cassperf import config
from cassperf.errors import ConfigError
from cassperf.experiments.executor import STUDIES_DIR, record_path
from cassperf.experiments.study import Study


@dataclass
class StudyOutcome:
    """The study (its parameters as run), its record (dict), and its runs by role."""

    study: Study
    record: dict[str, Any]
    runs: list[Any]                                   # role=measure, in order of block and position
    warmup: list[Any] = field(default_factory=list)
    calibration: list[Any] = field(default_factory=list)
    note: str = ""                                    # how the record was chosen, when not the plan asked
    folders: dict[str, Path] = field(default_factory=dict)   # run_id -> its folder (raw output, profiles)

    def runs_of(self, arm: str, usable: bool = True) -> list[Any]:
        """The runs of ``arm``; ``usable``: complete and not failed only."""
        return [r for r in self.runs if r.labels.get("arm") == arm
                and (not usable or (r.manifest.get("complete") and not r.manifest.get("failed")))]

    @property
    def calibrated(self) -> Any:
        """What calibration found (cassperf.experiments.study.Calibrated), or None."""
        from cassperf.experiments.study import Calibrated

        c = self.record.get("calibration")
        return Calibrated.from_json(c) if c else None

    @property
    def arm_names(self) -> list[str]:
        return [a["name"] for a in self.record.get("arms", [])]


def study_from_record(record: Mapping[str, Any]) -> Study:
    """The study object the record was made with (its class and parameters)."""
    module, _, name = str(record["study_class"]).rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    params = {k: (tuple(v) if isinstance(v, list) else v) for k, v in record["parameters"].items()}
    try:
        return cls(**params)
    except TypeError as exc:
        raise ConfigError(f"the stored {record.get('study')} study of experiment {record.get('experiment')!r} was "
                          f"made by another version of {name} ({exc}); run it again, or analyse it with the "
                          f"parameters it ran with") from None


def _records(root: Path, study: Study) -> list[tuple[float, Path]]:
    folder = root / STUDIES_DIR
    if not folder.is_dir():
        return []
    found = folder.glob(f"{study.name}--{study.experiment}--*.json")
    return sorted((p.stat().st_mtime, p) for p in found)


def load_outcome(study: Study, root: str | Path | None = None, empty_ok: bool = False,
                 **label_filter: str) -> StudyOutcome:
    """The stored outcome of ``study`` (module doc). When nothing is stored: LookupError, or with
    ``empty_ok`` an outcome with no run whose note says so (a report of imported runs only)."""
    from cassperf.results.catalog import catalog
    from cassperf.results.store import load_run

    root = Path(root) if root is not None else config.runs_dir()
    path, note = record_path(root, study), ""
    if not path.exists():
        others = _records(root, study)
        imported = imported_outcome(study, root, **label_filter) if not others else None
        if imported is not None:
            return imported
        if not others and empty_ok:
            return StudyOutcome(study, {}, [], note=f"no {study.name} runs of experiment {study.experiment!r} are "
                                                     f"stored under {root}: nothing of this study ran here")
        if not others:
            raise LookupError(f"no stored {study.name} study with experiment={study.experiment!r} under {root}; "
                              f"run it (analyse_only=False) or name the experiment that ran")
        path = others[-1][1]
        note = (f"these parameters never ran; the newest {study.name} runs of experiment {study.experiment!r} "
                f"are shown with the parameters they ran with ({path.name})")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: unreadable study record ({exc})") from None
    as_run = study_from_record(record) if note else study
    frame = catalog(root, include_failed=True, study=record["study"], experiment=record["experiment"],
                    plan=record["plan"], **label_filter)
    by_id = {rid: p for rid, p in zip(frame.get("run_id", []), frame.get("path", []), strict=True)}
    order = {(str(b), a): i for i, (b, _, a) in enumerate(record.get("order", []))}
    runs = [load_run(Path(p)) for rid, p in by_id.items()]
    measured = sorted((r for r in runs if r.labels.get("role") == "measure"),
                      key=lambda r: (order.get((r.labels.get("block"), r.labels.get("arm")), 10 ** 9), r.run_id))
    ids = {rid for w in record.get("warmup", []) for rid in w.get("runs", [])}
    cal = set((record.get("calibration") or {}).get("runs", []))
    return StudyOutcome(as_run, record, measured, [r for r in runs if r.run_id in ids],
                        [r for r in runs if r.run_id in cal], note,
                        {r.run_id: Path(by_id[r.run_id]) for r in measured if r.run_id in by_id})


#: labels of runs an executor made (an imported run has none of them)
EXECUTED = ("plan", "role")


def imported_outcome(study: Study, root: str | Path | None = None, **label_filter: str) -> StudyOutcome | None:
    """The outcome of the runs imported for ``study`` (module doc), None when there are none.
    ConfigError naming the runs when one has no ``arm`` label."""
    from cassperf.results.catalog import catalog
    from cassperf.results.store import load_run

    root = Path(root) if root is not None else config.runs_dir()
    frame = catalog(root, include_failed=True, study=study.name, **label_filter)
    if frame.empty:
        return None
    mine = pd.Series(True, index=frame.index)
    for col in EXECUTED:
        if col in frame.columns:
            mine &= frame[col].isna()
    if "experiment" in frame.columns:
        mine &= frame["experiment"].isna() | (frame["experiment"] == study.experiment)
    frame = frame[mine]
    if frame.empty:
        return None
    # an import stores a log's tables (a settings dump, a GC summary) as a run of their own: nothing measured
    runs = [r for r in (load_run(Path(p)) for p in frame["path"]) if not (r.intervals.empty and r.histograms.empty)]
    if not runs:
        return None
    for run in runs:
        run.labels.update(study.arm_labels(run.labels))
    nameless = [r.run_id for r in runs if not str(r.labels.get("arm", "")).strip()]
    if nameless:
        raise ConfigError(f"imported {study.name} runs whose arm is not known: {', '.join(nameless[:5])}"
                          f"{' ...' if len(nameless) > 5 else ''}; label each with the arm it is (cassperf import "
                          f"--label study={study.name} --label arm=ARM{study.ARM_LABELS_HINT}), arms such as: "
                          + "; ".join(repr(a) for a in _arm_names(study)[:8]))
    runs = [_named_op(r) for r in sorted(runs, key=lambda r: (str(r.manifest.get("started_utc") or ""), r.run_id))]
    seen: dict[str, int] = {}
    arms: dict[str, dict[str, str]] = {}
    for run in runs:
        arm = str(run.labels["arm"])
        seen[arm] = seen.get(arm, 0) + 1
        run.labels.setdefault("block", str(seen[arm]))
        run.labels["role"] = "measure"
        arms.setdefault(arm, {k: str(v) for k, v in run.labels.items() if k not in ("arm", "block", "role", "study")})
    bad = [f"{r.run_id} (block={r.labels['block']!r})" for r in runs if not str(r.labels["block"]).isdigit()]
    if bad:
        raise ConfigError(f"imported {study.name} runs whose block label is no block number: {', '.join(bad[:5])}; "
                          f"label blocks 1, 2, ... (or leave the label out: each arm's runs are then numbered in the "
                          f"order they started)")
    order = []
    for block in sorted({int(r.labels["block"]) for r in runs}):
        inside = [r for r in runs if int(r.labels["block"]) == block]          # in the order they started
        order += [[block, i, str(r.labels["arm"])] for i, r in enumerate(inside, 1)]
    record = {"study": study.name, "experiment": study.experiment, "imported": True,
              "arms": [{"name": name, "labels": labels} for name, labels in arms.items()], "order": order,
              "log": [f"{len(runs)} imported runs of {len(arms)} arms, no executor record"]}
    single = sorted(a for a in arms if seen[a] < 2)
    note = (f"{len(runs)} runs imported from logs ({', '.join(sorted({str(r.manifest.get('tool')) for r in runs}))}), "
            f"no executor record: arms and blocks from their labels"
            + (f"; {', '.join(repr(a) for a in single)} {'has' if len(single) == 1 else 'have'} a single run: figures "
               f"without a verdict (a verdict needs the run-to-run spread of 2 or more runs)" if single else ""))
    return StudyOutcome(study, record, runs, note=note)


def _named_op(run: Any) -> Any:
    """A run whose log holds only aggregate rows (a cassandra-stress write or read prints its
    one op as 'total') with those rows named by its op: the ``op`` label, else the recorded
    command's first word (write, read). In memory only: the stored run is not touched."""
    import dataclasses

    from cassperf.analysis.select import TOTAL_OPS, canonical_op, ops_of

    if not set(ops_of(run)) <= set(TOTAL_OPS):
        return run
    command = str(run.manifest.get("command") or "").split()
    op = canonical_op(run.labels.get("op") or (command[0] if command else ""))
    if op not in ("write", "read"):
        return run
    intervals = run.intervals.assign(op=run.intervals["op"].map(lambda o: op if canonical_op(o) in TOTAL_OPS else o))
    return dataclasses.replace(run, intervals=intervals)


def _arm_names(study: Study) -> list[str]:
    try:
        return [a.name for a in study.arms(None)]
    except Exception:  # noqa: BLE001 - a plan that cannot be drawn without its cluster: no list to offer
        return ["(see the study's arms in its report)"]


def usable(run: Any) -> bool:
    return bool(run.manifest.get("complete")) and not run.manifest.get("failed")


def parse_label_filter(text: str) -> dict[str, str]:
    """``"source=paper,dc=dc1"`` -> ``{"source": "paper", "dc": "dc1"}`` (a notebook parameter)."""
    out: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"label filter {part!r}: expected KEY=VALUE[,KEY=VALUE...], e.g. 'source=prod'")
        out[key.strip()] = value.strip()
    return out
