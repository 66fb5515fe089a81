"""CPU profiles on a real node (cassperf.cluster.profiler, cassperf.parsers.jfr): runs of the
engine writing and then reading, each with the node's Flight Recorder on from its t0 to the end
of its load, keep the node's recording in the run folder; read back, its samples lie on the
run's time axis and show the request path (the native transport, the write path in the writes,
the read path in the reads), and the differential of the two runs says so. A run folder the
recording cannot be named in is one warning line, and the run goes on. The recording's bytes cut
short at several points are each one line. A study profiles its measured runs (and only those)
by default, and none with profile=False; its per-arm tables come from the steady windows."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd
import pytest

from cassperf.analysis.profiles import (
    arm_samples,
    differential,
    frame_shares,
    in_window,
    pool_share_table,
    pool_shares,
)
from cassperf.cluster.profiler import Profiler
from cassperf.experiments.executor import execute
from cassperf.experiments.analysis import Analysis
from cassperf.experiments.outcome import StudyOutcome, load_outcome
from cassperf.experiments.study import Arm, Study
from cassperf.results.catalog import catalog
from cassperf.parsers.jfr import BadRecording, profile_samples, read_jfr
from cassperf.workload.run import run_spec
from cassperf.workload.spec import Population, WorkloadSpec
from tests.conftest import started_cluster

pytestmark = pytest.mark.cluster

KEYS = Population.parse("uniform(1..20000)")


@pytest.fixture(scope="module")
def node(request, tmp_path_factory):
    with started_cluster(request, tmp_path_factory, "profiles", "dc1:1", "127.0.32.1") as cluster:
        yield cluster


@pytest.fixture(scope="module")
def runs(node, tmp_path_factory):
    """A write run and a read run of the same keys, both profiled by one Profiler (as a study's)."""
    root = tmp_path_factory.mktemp("profiled-runs")
    with Profiler() as profiler:
        assert profiler.prepare(node) == []
        write = run_spec(WorkloadSpec(op="write", duration=8, concurrency=16, population=KEYS, keyspace="prof"),
                         node, root=root, progress=False, warmup_s=1.0, profile=profiler)
        read = run_spec(WorkloadSpec(op="read", duration=8, concurrency=16, population=KEYS, keyspace="prof"),
                        node, root=root, progress=False, warmup_s=1.0, profile=profiler)
    return root, write, read


def test_a_profiled_run_keeps_the_nodes_recording_and_says_how_it_was_taken(runs):
    root, write, read = runs
    for run in (write, read):
        section = run.manifest["profile"]
        assert section["files"] == {"node1": "raw/profiles/node1.jfr"}
        assert section["notes"] == [] and not [w for w in run.warnings if "profile" in w]
        assert section["sample_period_ms"] == 20 and section["settings"].startswith("cassperf.jfc: jdk.ExecutionSample")
        assert "prepare_s" in section["timing_s"] and not [n for n in section["notes"] if "set up" in n]
        assert -2.0 < section["timing_s"]["started_at_s"] < 0            # started with the 1 s warm-up
        assert section["timing_s"]["start_s"] < 2.0 and section["timing_s"]["stop_s"] < 10.0
        assert (root / run.run_id / "raw" / "profiles" / "node1.jfr").stat().st_size > 10_000


def test_the_samples_lie_on_the_runs_time_axis_and_show_the_request_path(runs):
    root, write, read = runs
    found = profile_samples([write.run_id, read.run_id], root=root)
    assert found.notes == [] and found.periods == {write.run_id: "20 ms", read.run_id: "20 ms"}
    s = found.samples
    for run in (write, read):
        mine = s[s["run_id"] == run.run_id]
        end = float(run.intervals["time_s"].max())
        start_s = run.manifest["profile"]["timing_s"]["started_at_s"]
        assert mine["time_s"].min() >= start_s - 0.05                    # nothing before the recording
        assert mine["time_s"].max() <= end + 1.0                         # nothing long after the load
        assert len(in_window(mine, 0.0, end)) > 0.75 * len(mine)         # the measured load's, mostly
        assert set(mine["node"]) == {"node1"} and set(mine["state"]) == {"java"}
        assert len(mine) > 100
    writes, reads = s[s["run_id"] == write.run_id], s[s["run_id"] == read.run_id]
    for part, path_frame in ((writes, "ModificationStatement.execute"), (reads, "SelectStatement.execute")):
        pools = pool_shares(part).set_index("pool")["share_pct"]
        assert pools.get("Native-Transport-Requests", 0) > 10, pools.head(8)
        frames = frame_shares(part, "inclusive").set_index("frame")["share_pct"]
        transport = frames[frames.index.str.startswith("org.apache.cassandra.transport.")]
        assert transport.max() > 10, frames.head(20)
        assert frames[frames.index.str.endswith(path_frame)].max() > 5, frames.head(30)
    write_path = frame_shares(writes, "inclusive").set_index("frame")["share_pct"]
    assert write_path[write_path.index.str.contains(r"org\.apache\.cassandra\.db\.Mutation\.")].max() > 2
    read_path = frame_shares(reads, "inclusive").set_index("frame")["share_pct"]
    assert read_path[read_path.index.str.contains("ReadCommand")].max() > 5
    pauses = found.gc[found.gc["event"] == "jdk.GCPhasePause"]
    assert len(pauses) >= 1 and (pauses["duration_ms"] > 0).all() and set(pauses["node"]) == {"node1"}
    diff = differential(writes, reads, "inclusive").set_index("key")["change_points"]
    assert diff[diff.index.str.endswith("SelectStatement.execute")].max() > 5
    assert diff[diff.index.str.endswith("ModificationStatement.execute")].min() < -5


def test_a_recording_cut_short_or_not_a_recording_is_one_line(runs, tmp_path):
    root, write, _ = runs
    whole = (root / write.run_id / "raw" / "profiles" / "node1.jfr").read_bytes()
    cuts = [10, 100, len(whole) // 3, len(whole) // 2, len(whole) - 100]
    for cut in cuts:
        bad = tmp_path / f"cut-{cut}.jfr"
        bad.write_bytes(whole[:cut])
        with pytest.raises(BadRecording) as caught:
            read_jfr(bad)
        line = str(caught.value)
        assert "\n" not in line and line.startswith(f"{bad}: expected a whole Java Flight Recorder file")
        assert "fix: a recording cut short" in line
    text = tmp_path / "node1.jfr"
    text.write_text("INFO  [main] 2026-11-21 23:12:01,100 CassandraDaemon.java:600 - Startup complete\n" * 3)
    with pytest.raises(BadRecording, match=r"\(the reader said: IOException: Not a Flight Recorder file\)"):
        read_jfr(text)
    copy = tmp_path / "runs" / write.run_id
    shutil.copytree(root / write.run_id, copy)
    (copy / "raw" / "profiles" / "node1.jfr").write_bytes(whole[: len(whole) // 2])
    found = profile_samples([copy])
    assert found.samples.empty and len(found.notes) == 1
    assert found.notes[0].startswith(f"{copy / 'raw' / 'profiles' / 'node1.jfr'}: expected a whole Java Flight")


def test_a_recording_that_cannot_be_named_is_one_warning_and_the_run_goes_on(node, tmp_path):
    root = tmp_path / "a,b"
    with Profiler() as profiler:
        run = run_spec(WorkloadSpec(op="write", duration=3, concurrency=8, population=KEYS, keyspace="prof"),
                       node, root=root, progress=False, warmup_s=0.5, profile=profiler)
    line = (f"profile not recorded: the run folder's path has a ',' in it ({root / run.run_id / 'raw' / 'profiles'}), "
            f"which JFR.stop's arguments cannot carry")
    assert run.complete and not run.manifest.get("failed")
    assert run.manifest["profile"]["notes"] == [line] and line in run.warnings
    assert run.manifest["profile"]["files"] == {}
    assert profile_samples([run.run_id], root=root).notes == [f"run {run.run_id}: no profile ({line})"]


class WriteReadAnalysis(Analysis):
    """One claim decided between the two arms (its verdict is not what the test checks)."""

    def claims(self, outcome: StudyOutcome, figures: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame([{"claim": "A/A", "verdict": "control"},
                             {"claim": "reads differ from writes", "verdict": "holds", "arm_a": "write",
                              "arm_b": "read"}])


@dataclass(frozen=True)
class WriteRead(Study):
    name: ClassVar[str] = "profiled"
    title: ClassVar[str] = "Writes and reads, profiled"
    source: ClassVar[str] = "tests"
    ANALYSIS: ClassVar[Any] = WriteReadAnalysis

    def _spec(self, op: str) -> WorkloadSpec:
        return WorkloadSpec(op=op, duration=self.run_s, concurrency=16, population=KEYS, keyspace="prof_study",
                            interval_s=self.interval_s)

    def warm_spec(self) -> WorkloadSpec:
        return self._spec("write")

    def arms(self, calibrated: Any) -> list[Arm]:
        return [Arm(op, {"op": op}, spec=self._spec(op)) for op in ("write", "read")]


def test_a_study_profiles_its_measured_runs_and_only_those_unless_told_not_to(node, tmp_path):
    study = WriteRead(experiment="on", repeats=2, run_s=4, interval_s=0.2, warm_step_s=2, warm_max_steps=2, aa=False)
    assert execute(study, node, root=tmp_path).ran == 4
    runs = catalog(tmp_path)
    measured = runs[runs["role"] == "measure"]
    assert len(measured) == 4 and (runs["role"] != "measure").sum() >= 1
    for role, path in zip(runs["role"], runs["path"], strict=True):
        recorded = sorted(p.name for p in (tmp_path / path / "raw" / "profiles").glob("*.jfr")) \
            if (tmp_path / path / "raw" / "profiles").exists() else []
        assert recorded == (["node1.jfr"] if role == "measure" else []), (role, path)
    outcome = load_outcome(study, root=tmp_path)
    found = profile_samples(measured["run_id"], root=tmp_path)
    assert found.notes == []
    concluded = study.analysis().conclude(outcome)
    samples = arm_samples(found.samples, concluded.figures)
    assert set(samples["arm"]) == {"write", "read"}
    table = pool_share_table(samples, order=["write", "read"])
    assert list(table.index) == ["write", "read"] and (table["samples"] > 50).all()
    assert table.loc["read"].get("ReadStage", 0) > table.loc["write"].get("ReadStage", 0)
    assert table.loc["write"].get("MutationStage", 0) > table.loc["read"].get("MutationStage", 0)
    # what the report shows: the same per-arm table, and the decided claim's differential
    evidence = concluded.profiles
    # every run with samples in its steady window counts (a 4 s run's window may hold none)
    assert evidence.notes == [] and evidence.runs == samples["run_id"].nunique() >= 3 and evidence.period == "20 ms"
    assert list(evidence.pools.index) == ["write", "read"]
    assert evidence.pools["samples"].tolist() == table["samples"].tolist()
    (claim,) = evidence.pairs
    assert (claim.arm_a, claim.arm_b, claim.note, claim.claims) == ("write", "read", "", ["reads differ from writes"])
    pools = claim.pools.set_index("key")["change_points"]
    # the reads' stage rises; the write path's pools fall (a local write may run on the request's own thread,
    # so MutationStage alone can hold 2% of a write arm's samples: the flushes and compactions it causes count too,
    # when they fall in a steady window: beside another test in CI's node phase none did, and MutationStage fell
    # 4.1 points, against ReadStage's rise of 11.9)
    write_side = sum(pools.get(p, 0.0) for p in ("MutationStage", "MemtableFlushWriter", "PerDiskMemtableFlushWriter",
                                                  "CompactionExecutor"))
    assert pools["ReadStage"] > 5 and write_side < -2, pools
    assert claim.tree is not None and claim.tree["samples_b"].iloc[0] == table.loc["read", "samples"]
    why = concluded.claims.set_index("claim")["why"]
    assert why["reads differ from writes"].startswith("read against write: ") and why["A/A"] == ""

    off = WriteRead(experiment="off", repeats=2, run_s=4, interval_s=0.2, warm_max_steps=0, aa=False, profile=False)
    assert execute(off, node, root=tmp_path / "off").ran == 4
    paths = catalog(tmp_path / "off")["path"]
    assert not any((tmp_path / "off" / p / "raw" / "profiles").exists() for p in paths)
    evidence = off.analysis().conclude(load_outcome(off, root=tmp_path / "off")).profiles
    assert evidence.empty and evidence.notes == ["no CPU profiles: the study ran with profile=False"]


def test_after_a_restart_the_session_reconnects_and_the_run_says_flight_recorder_was_set_up(node, tmp_path):
    spec = WorkloadSpec(op="write", duration=3, concurrency=8, population=KEYS, keyspace="prof")
    with Profiler() as profiler:
        assert profiler.prepare(node) == []
        before = run_spec(spec, node, root=tmp_path, progress=False, warmup_s=0.5, profile=profiler)
        node.stop(timeout_s=60)
        node.start()
        after = run_spec(spec, node, root=tmp_path, progress=False, warmup_s=0.5, profile=profiler)
    assert before.manifest["profile"]["notes"] == []
    assert after.manifest["profile"]["notes"] == [
        "Flight Recorder set up on node1 right before this run (its JVM started since the last one): the run's "
        "first seconds carry that set-up"]
    assert after.manifest["profile"]["files"] == {"node1": "raw/profiles/node1.jfr"}
    assert len(profile_samples([after.run_id], root=tmp_path).samples) > 20
