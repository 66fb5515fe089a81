"""The one executor: runs any Study (cassperf.experiments.study) on a cluster, resumably.

In order, every step recorded in the study's record (``<runs>/.studies/<study>--<experiment>--
<plan>.json``, rewritten atomically after every step) and every run stored with its labels:

1. ``study.check_cluster(cluster)`` refuses a cluster the plan cannot run on, before any load.
2. What a killed run left is released (cassperf.cluster.reaper), then the study's contexts open
   (its clusters: one per deployment, a loop filesystem ...) and its runner (client placement).
   The first time, each context's cluster is kept in the record as it names itself, with the
   keyspaces it held then (``clusters``: what the study creates there is its own, for
   ``cassperf clean``).
3. Preparations (role=load): the rows the arms read, once per plan; skipped while stored and
   their keyspace exists.
4. Warm-up (role=warmup), on every context, each time the executor has runs to make: steps of
   load until throughput stops rising (cassperf.experiments.calibrate). With ``profile`` (the
   default), the nodes' Flight Recorder is set up before step 3 (cluster.profiler). When every run of the
   plan is stored, nothing is started (no context opens), loaded, warmed or run.
5. Calibration (role=calibration), once per plan: the knee of throughput against concurrency;
   kept in the record, so a resumed study runs the same arms.
6. The arms, plus the A/A twin of ``study.aa_arm``, in ``repeats`` randomized interleaved blocks
   (cassperf.experiments.schedule); the seed and the order go into the record.

Resume. A slot (block, arm) whose run is stored complete is done (a failed run too: it is
listed, never re-run); a run cut short by a kill (complete=false, not failed) is left out and its
slot runs again, the slot's earlier runs marked failed with that reason (an arm with clients
per DC may have left one client's run complete beside another's cut short: it is not counted
twice). A slot whose clients did not all finish (a runner raises :class:`PartialRun`: a client
lost) is stored ``partial`` with the runs that did, and is never re-run. The labels of a
measured run: study, experiment, plan, role=measure, arm, block, position, seed, tool, spec_key,
and the arm's own.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from cassperf import config
from cassperf.errors import ConfigError
from cassperf.experiments.calibrate import StepFailed, find_knee, warm_up
from cassperf.experiments.quiet import Quiet, wait_quiet
from cassperf.experiments.runner import PartialRun
from cassperf.experiments.schedule import Slot, schedule
from cassperf.experiments.study import AA_SUFFIX, Arm, Calibrated, Study, aa_twin

STUDIES_DIR = ".studies"
#: unrecorded load before each calibration step (the ladder's steps follow each other; the warm-up
#: steps and the warm pass, whose load nobody measures, take none)
CALIBRATION_WARMUP_S = 0.5


# -- the study's record --------------------------------------------------------------------------
def record_path(root: Path, study: Study) -> Path:
    return root / STUDIES_DIR / f"{study.name}--{study.experiment}--{study.plan_key()}.json"


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    os.replace(tmp, path)


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class StudyRecord:
    """What the executor did for one plan: parameters, seed, order, warm-up, calibration, each
    slot's runs and status, and the log."""

    path: Path
    data: dict[str, Any]

    @classmethod
    def open(cls, root: Path, study: Study) -> "StudyRecord":
        path = record_path(root, study)
        if path.exists():
            try:
                return cls(path, json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError) as exc:
                raise ConfigError(f"{path}: unreadable study record ({exc}); move it away to start this plan "
                                  f"afresh") from None
        params = {f.name: getattr(study, f.name) for f in dataclasses.fields(study)}
        return cls(path, {"study": study.name, "experiment": study.experiment, "plan": study.plan_key(),
                          "study_class": f"{type(study).__module__}.{type(study).__qualname__}",
                          "parameters": params, "seed": study.seed, "created_utc": _now(), "warmup": [],
                          "calibration": None, "arms": [], "order": [], "slots": {}, "log": []})

    def save(self) -> None:
        self.data["updated_utc"] = _now()
        _write_json(self.path, self.data)

    def log(self, line: str) -> None:
        self.data["log"].append(f"{datetime.now(timezone.utc).strftime('%H:%M:%S')} {line}")

    @property
    def calibrated(self) -> Calibrated | None:
        c = self.data.get("calibration")
        return Calibrated.from_json(c) if c else None


# -- the executor --------------------------------------------------------------------------------
@dataclass
class Execution:
    """What one call of :func:`execute` did: the record, and counts of runs by status."""

    record: StudyRecord
    ran: int = 0
    skipped: int = 0
    failed: int = 0
    rerun: int = 0
    partial: int = 0
    seconds: float = 0.0


def _stored(root: Path, study: Study) -> pd.DataFrame:
    """Every stored run of this plan (failed ones too), with the executor's label columns."""
    from cassperf.results.catalog import catalog

    frame = catalog(root, include_failed=True, study=study.name, experiment=study.experiment, plan=study.plan_key())
    for col in ("role", "arm", "block", "name"):
        if col not in frame.columns:
            frame[col] = pd.Series(pd.NA, index=frame.index, dtype="string")
    frame["failed"] = frame["failed"].astype(bool) if "failed" in frame.columns else False
    return frame


def _keyspaces(cluster: Any) -> set[str]:
    try:
        rows = cluster.session().execute("SELECT keyspace_name FROM system_schema.keyspaces")
        return {row[0] for row in rows}
    except Exception:  # noqa: BLE001 - unknown: nothing is taken as present, so preparations run
        return set()


def _rate(root: Path, run_ids: list[str]) -> float:
    """ops/s of the stored runs together (the sum of each run's summary rates)."""
    from cassperf.results.store import load_run

    total = 0.0
    for rid in run_ids:
        s = load_run(rid, root=root).summary
        total += float(s["rate_ops_s"].fillna(0).sum()) if not s.empty else 0.0
    return total


def _mine(stored: pd.DataFrame, arm: str, block: int) -> pd.DataFrame:
    """The stored measured runs of one slot."""
    s = stored
    return s[(s["role"] == "measure") & (s["arm"] == arm) & (s["block"] == str(block))]


def _cut(mine: pd.DataFrame) -> pd.DataFrame:
    """The runs of a slot cut short by a kill: incomplete and not marked failed."""
    return mine[~mine["complete"].astype(bool) & ~mine["failed"]]


def _done(mine: pd.DataFrame) -> bool:
    """A slot is done when a run of it is stored complete and none was cut short (module doc)."""
    return bool(mine["complete"].any()) and _cut(mine).empty


def pending(study: Study, stored: pd.DataFrame, calibrated: Calibrated | None) -> int:
    """How many slots of the plan are not done (no complete stored run, or one cut short)."""
    arms = study.arms(calibrated)
    names = [a.name for a in arms] + ([study.aa_arm(arms) + AA_SUFFIX] if study.aa and arms else [])
    return sum(not _done(_mine(stored, name, block)) for name in names for block in range(1, study.repeats + 1))


class _Executor:
    """One execution of a study inside its open contexts and runner (see execute)."""

    def __init__(self, study: Study, contexts: Mapping[str, Any], runner: Any, root: Path, record: StudyRecord,
                 log: Callable[[str], None], profiler: Any = None) -> None:
        self.study, self.contexts, self.runner, self.root, self.record = study, contexts, runner, root, record
        self.profiler = profiler
        self._log = log
        self.stored = _stored(root, study)
        self.done = Execution(record)
        self.base = {"study": study.name, "experiment": study.experiment, "plan": study.plan_key(),
                     "seed": str(study.seed)}

    def say(self, line: str) -> None:
        self.record.log(line)
        self._log(line)

    def run_arm(self, arm: Arm, labels: Mapping[str, str], sample: bool = True,
                warmup_s: float | None = None, profile: bool = False, load: bool = False) -> list[str]:
        """``arm`` once; ``warmup_s`` of unrecorded load first (default: the study's); ``profile``:
        with the nodes' CPU profiles when the study takes them (measured runs); ``load``: a
        preparation load (its failed writes retried, none may be lost: LocalRunner.run)."""
        options: dict[str, Any] = {"profile": self.profiler} if profile and self.profiler is not None else {}
        if load:
            options["load"] = True
        return self.runner.run(arm, self.contexts[arm.context], {**self.base, **labels}, root=self.root,
                               warmup_s=self.study.warmup_s if warmup_s is None else warmup_s, sample=sample,
                               sampler=self.study.SAMPLER, **options)

    def note_clusters(self) -> None:
        """Each context's cluster as it names itself and the keyspaces it held, kept in the record
        (``clusters``) the first time the plan runs there: what the study then creates there is
        its own (cassperf.experiments.made, ``cassperf clean``)."""
        from cassperf.experiments.made import cluster_identity

        known = self.record.data.setdefault("clusters", {})
        for name, cluster in self.contexts.items():
            if name not in known:
                known[name] = cluster_identity(cluster)
        self.record.save()

    def measure_setting(self) -> None:
        """Each context's page-cache bound and its keyspaces' data per node (experiments.setting),
        kept in the record (``setting``), measured each execution once the data is loaded."""
        from cassperf.experiments.setting import measure_setting

        keyspaces: dict[str, list[str]] = {}
        for prep in self.study.preparations():
            keyspaces.setdefault(prep.context, []).append(prep.spec.keyspace)
        self.record.data["setting"] = {name: measure_setting(c, keyspaces.get(name, []))
                                       for name, c in self.contexts.items()}
        self.record.save()

    def prepare(self) -> None:
        """Preparations (role=load), skipped while stored and their keyspace exists."""
        present = {name: _keyspaces(c) for name, c in self.contexts.items()}
        s = self.stored
        for prep in self.study.preparations():
            old = s[(s["role"] == "load") & (s["name"] == prep.name) & s["complete"] & ~s["failed"]]
            if not old.empty and prep.spec.keyspace in present[prep.context]:
                self.say(f"load {prep.name}: stored already as {old['run_id'].iloc[-1]}, kept")
                continue
            t = time.monotonic()
            arm = Arm(f"load {prep.name}", {}, spec=prep.spec, tool=prep.tool, context=prep.context)
            ids = self.run_arm(arm, {"role": "load", "name": prep.name}, sample=False, load=True)
            self.say(f"load {prep.name}: {time.monotonic() - t:.0f} s (run {', '.join(ids)})")
        self.record.save()

    def warm(self) -> None:
        """Warm-up steps on every context until throughput stops rising (each execution)."""
        spec = self.study.warm_spec()
        if spec is None or self.study.warm_max_steps <= 0:
            return
        step_spec = dataclasses.replace(spec, duration=self.study.warm_step_s, n=None)
        for name in self.contexts:
            runs: list[str] = []

            def step(name: str = name, runs: list[str] = runs) -> float:
                ids = self.run_arm(Arm("warm-up", {}, spec=step_spec, context=name),      # load alone: no
                                   {"role": "warmup", "name": f"{name or 'cluster'} step {len(runs) + 1}"},
                                   sample=False, warmup_s=0.0)                             # warm-up of its own
                runs.extend(ids)
                return _rate(self.root, ids)

            rates, why = warm_up(step, self.study.warm_max_steps, self.say)
            self.record.data["warmup"].append({"context": name, "utc": _now(), "runs": runs, "rates_ops_s": rates,
                                               "step_s": self.study.warm_step_s, "stopped": why})
            self.say(f"warm-up{' of ' + name if name else ''}: {why}")
            self.record.save()

    def warm_arms(self, arms: Sequence[Arm]) -> None:
        """The warm pass: each arm's load once for ``warm_arm_s`` seconds (role=warmup, without its
        before and during actions), right before block 1, so that block 1 does not carry what
        the first read of a keyspace or the first run at a concurrency costs (the cluster warm-up
        loads one keyspace at one concurrency). Left out when block 1 is stored already."""
        seconds = self.study.warm_arm_s
        if seconds <= 0 or all(_done(_mine(self.stored, a.name, 1)) for a in arms):
            return
        runs: list[str] = []
        t = time.monotonic()
        for arm in arms:
            if arm.name.endswith(AA_SUFFIX):
                continue
            short = dataclasses.replace(
                arm, name=f"warm pass {arm.name}", before=None, during=None, follows=None,
                spec=dataclasses.replace(arm.spec, duration=seconds, n=None) if arm.spec is not None else None,
                clients=tuple((dc, dataclasses.replace(s, duration=seconds, n=None)) for dc, s in arm.clients))
            try:
                runs.extend(self.run_arm(short, {"role": "warmup", "name": f"warm pass {arm.name}"}, sample=False,
                                         warmup_s=0.0))
            except Exception as exc:  # noqa: BLE001 - a warm pass that fails costs nothing measured; said
                self.say(f"warm pass {arm.name}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        self.record.data["warm_pass"] = {"utc": _now(), "runs": runs, "step_s": seconds}
        self.say(f"warm pass: every arm once for {seconds} s, unmeasured ({time.monotonic() - t:.0f} s)")
        self.record.save()

    def find_knee(self) -> Calibrated | None:
        """The knee, found once per plan and kept in the record."""
        found = self.record.calibrated
        spec = self.study.calibration_spec()
        if found is not None or spec is None:
            return found
        from cassperf.workload.run import RunFailedError

        runs: list[str] = []

        def at(concurrency: int) -> float:
            step = dataclasses.replace(spec, duration=self.study.calibrate_s, n=None, concurrency=concurrency)
            try:
                ids = self.run_arm(Arm("calibration", {}, spec=step, context=next(iter(self.contexts))),
                                   {"role": "calibration", "name": f"{spec.op} at {concurrency}"}, sample=False,
                                   warmup_s=min(self.study.warmup_s, CALIBRATION_WARMUP_S))
            except RunFailedError as exc:
                if exc.__cause__ is not None:     # a crash (node, tool, driver), not the cluster's answer
                    raise
                runs.append(exc.run_id)           # its operations failed: past saturation, find_knee ends below it
                raise StepFailed(f"{exc.reason}; run {exc.run_id}") from exc
            runs.extend(ids)
            return _rate(self.root, ids)

        try:
            found = find_knee(at, spec.op, log=self.say)
        except StepFailed as exc:             # at 1 or 2 in flight: nothing to calibrate on
            raise exc.__cause__ if exc.__cause__ is not None else exc
        self.record.data["calibration"] = {**found.to_json(), "runs": runs, "step_s": self.study.calibrate_s}
        self.say(found.note)
        self.record.save()
        return found

    def arms(self, calibrated: Calibrated | None) -> tuple[list[Arm], list[Slot]]:
        arms = self.study.arms(calibrated)
        if self.study.aa and arms:
            arms = [*arms, aa_twin(arms, self.study.aa_arm(arms))]
        order = schedule([a.name for a in arms], {a.name: a.follows for a in arms}, self.study.repeats,
                         self.study.seed, every_order=self.study.ALL_ORDERS)
        self.record.data["arms"] = [{"name": a.name, "labels": dict(a.labels), "context": a.context,
                                     "follows": a.follows,
                                     "spec": repr(a.spec) if a.spec else [f"{dc}: {s!r}" for dc, s in a.clients]}
                                    for a in arms]
        self.record.data["order"] = [[s.block, s.position, s.arm] for s in order]
        self.record.save()
        return arms, order

    def prepare_profiles(self) -> None:
        """Before anything else: open the profiler's JMX sessions and set up Flight Recorder on
        every node. Its first start in a JVM throws away compiled code (cluster.profiler): on a
        node just started there is little to throw away, and the preparations and the warm-up,
        which runs until throughput stops rising, come after; what cannot be profiled is said
        once here (and in each run)."""
        if self.profiler is None:
            return
        for name, cluster in {id(c): (n, c) for n, c in self.contexts.items()}.values():
            for line in self.profiler.prepare(cluster):
                self.say(f"profiles{' of ' + name if name else ''}: {line}")

    def wait_quiet(self) -> Quiet | None:
        """Before a measured run: the study's local nodes idle, or quiet_max_s passed (None: no wait)."""
        if self.study.quiet_max_s <= 0:
            return None
        clusters = list({id(c): c for c in self.contexts.values()}.values())
        return wait_quiet(clusters, self.study.quiet_max_s)

    def run_slot(self, slot: Slot, i: int, total: int, arm: Arm) -> None:
        from cassperf.workload.run import RunFailedError

        from cassperf.results.store import mark_failed

        mine = _mine(self.stored, arm.name, slot.block)
        title = f"[{i}/{total}] block {slot.block} #{slot.position} {arm.name}"
        cut = _cut(mine)
        if _done(mine):
            self.done.skipped += 1
            return
        if not mine.empty:
            self.done.rerun += 1
            for rid, path, failed in zip(mine["run_id"], mine["path"], mine["failed"], strict=True):
                if not failed:
                    mark_failed(path, "cut short (incomplete): its slot ran again" if rid in set(cut["run_id"]) else
                                "left out: another client of its slot was cut short, and the slot ran again")
            self.say(f"{title}: run {', '.join(cut['run_id'])} was cut short (incomplete): left out, run again")
        labels = {"role": "measure", "arm": arm.name, "block": str(slot.block), "position": str(slot.position),
                  "pool": arm.pool_label, **arm.labels}
        t = time.monotonic()
        quiet = self.wait_quiet()
        note = arm.before(self.contexts[arm.context]) if arm.before is not None else None
        if quiet is not None:
            note = f"{quiet.note}; {note}" if note else quiet.note
        key = f"{slot.block}/{arm.name}"
        try:
            ids = self.run_arm(arm, labels, profile=True)
        except RunFailedError as exc:
            self.done.failed += 1
            self.record.data["slots"][key] = {"runs": [exc.run_id], "status": "failed", "note": exc.reason}
            self.say(f"{title}: FAILED ({exc.reason}); run {exc.run_id} kept, marked failed")
            self.record.save()
            return
        except PartialRun as exc:
            status = "partial" if exc.ran else "failed"
            self.done.partial += status == "partial"
            self.done.failed += status == "failed"
            self.record.data["slots"][key] = {"runs": exc.run_ids, "status": status, "note": exc.note,
                                              "seconds": round(time.monotonic() - t, 1)}
            self.say(f"{title}: {status.upper()} ({exc.note}); runs {', '.join(exc.run_ids)} kept")
            self.record.save()
            return
        self.done.ran += 1
        seconds = time.monotonic() - t
        self.record.data["slots"][key] = {"runs": ids, "status": "ran", "note": note or "", "seconds": round(seconds, 1),
                                          **({} if quiet is None else {"quiet": quiet.to_json()})}
        self.say(f"{title}: {', '.join(ids)} ({seconds:.0f} s)" + (f"; {note}" if note else ""))
        self.record.save()


def execute(study: Study, cluster: Any, *, root: str | Path | None = None,
            log: Callable[[str], None] = lambda line: None, progress: bool | TextIO = False) -> Execution:
    """Run ``study`` on ``cluster`` (module doc) and return what was done."""
    root = Path(root) if root is not None else config.runs_dir()
    study.check_cluster(cluster)
    record = StudyRecord.open(root, study)
    t0 = time.monotonic()
    if (record.calibrated is not None or study.calibration_spec() is None) \
            and not pending(study, _stored(root, study), record.calibrated):
        record.log("every run of the plan is stored: nothing started, loaded, warmed or run")
        log(record.data["log"][-1])
        record.save()
        return Execution(record, seconds=time.monotonic() - t0)
    from cassperf.cluster.local import LocalCluster
    from cassperf.cluster.nodeconf import env_jvm_note
    from cassperf.cluster.reaper import reap

    for line in reap([cluster.root] if isinstance(cluster, LocalCluster) else [], say=log):
        record.log(line)                      # what a killed run left, released before the contexts open
    from cassperf.cluster.profiler import Profiler

    with study.contexts(cluster) as contexts, study.runner(contexts) as runner, \
            (Profiler() if study.profile else nullcontext()) as profiler:
        ex = _Executor(study, contexts, runner, root, record, log, profiler)
        ex.note_clusters()
        if isinstance(cluster, LocalCluster):      # as it was started
            env_note = env_jvm_note(cluster.recorded_state().get("env_jvm_options"))
        else:                                      # None: the study starts its own clusters now
            env_note = env_jvm_note() if cluster is None else None
        notes = study.setting_notes() + ([env_note] if env_note else [])
        if notes:
            record.data["notes"] = notes
            for line in notes:
                ex.say(f"setting: {line}")
        ex.prepare_profiles()                 # first: the loads and the warm-up absorb Flight Recorder's set-up
        ex.prepare()
        ex.warm()
        found = study.baseline(contexts, runner)
        if found:
            record.data.setdefault("baseline", []).append({"utc": _now(), **found})
            record.save()
        ex.measure_setting()
        arms, order = ex.arms(ex.find_knee())
        ex.warm_arms(arms)
        by_name = {a.name: a for a in arms}
        bar = None
        if progress:
            from tqdm.std import tqdm      # text: updates in place in a notebook and a terminal, no widgets

            bar = tqdm(total=len(order), unit="run", desc=study.name, leave=False, dynamic_ncols=True,
                       file=None if progress is True else progress)
        try:
            for i, slot in enumerate(order, 1):
                ex.run_slot(slot, i, len(order), by_name[slot.arm])
                if bar is not None:
                    bar.update(1)
        finally:
            if bar is not None:
                bar.close()
            d = ex.done
            d.seconds = time.monotonic() - t0
            ex.say(f"{d.ran} runs ran, {d.skipped} stored already, {d.failed} failed, "
                   + (f"{d.partial} partial (a client lost), " if d.partial else "")
                   + f"{d.rerun} cut short before and run again; {d.seconds:.0f} s")
            record.save()
    return ex.done
