"""A study's stored outcome, read back: its record and its runs (what analysis and the report use).

``load_outcome(study)`` reads the record of the study's plan (or, for ``analyse_only`` with
parameters that ran under another plan, the newest record of the same study and experiment,
whose parameters then stand for the study) and loads its runs: the measured runs of every arm
(complete, failed and cut short; analysis decides what it uses and says why), the warm-up and
the calibration steps.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
                        [r for r in runs if r.run_id in cal], note)


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
