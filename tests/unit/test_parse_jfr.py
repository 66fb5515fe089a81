"""Flight Recorder files -> stack samples (cassperf.parsers.jfr), on a real recording of a
Cassandra 5.0.6 node under writes (tests/fixtures/jfr-5.0, made by tests/fixtures/capture_jfr.py):
its samples and GC pauses, on its run's time axis; many recordings in one JVM; a cache beside the
runs that is rebuilt, never trusted blindly; and a recording cut short at several points, an empty
file or a text file, each one line naming the file, what was expected and the fix."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from cassperf.analysis.profiles import pools_of
from cassperf.parsers.jfr import CACHE_DIR, BadRecording, JfrUnavailable, convert_jfr, profile_samples, read_jfr
from cassperf.results.model import Run
from cassperf.results.store import save_run

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "jfr-5.0" / "node1_cassandra5.0.6_jdk17_write-3s_cassperf.jfr"
RUN = json.loads(FIXTURE.with_name(FIXTURE.name + ".run.json").read_text())


@pytest.fixture(scope="module")
def tables():
    return read_jfr(FIXTURE)


def test_a_real_recording_gives_its_samples_threads_stacks_and_period(tables) -> None:
    s = tables.samples
    assert tables.period == "20 ms"
    assert list(s.columns) == ["state", "thread", "stack", "epoch_ns"]
    assert (len(s), s["stack"].nunique(), s["thread"].nunique()) == (244, 225, 24)
    assert set(s["state"]) == {"java"}
    # by thread name, 66 samples ran in MutationStage; by their stacks, 51 of those were native transport
    # requests run by shared-pool workers that JFR knew under an older name (analysis.profiles.sample_pool)
    assert pools_of(s["thread"]).value_counts().to_dict() == {
        "Native-Transport-Requests": 106, "MutationStage": 66, "epollEventLoopGroup": 61, "PerDiskMemtableFlushWriter": 7,
        "MemtableFlushWriter": 3, "RMI TCP Connection": 1}
    assert pools_of(s["thread"], s["stack"]).value_counts().to_dict() == {
        "Native-Transport-Requests": 157, "epollEventLoopGroup": 61, "MutationStage": 13, "PerDiskMemtableFlushWriter": 7,
        "MemtableFlushWriter": 3, "RMI TCP Connection": 1, "ReadStage": 1, "SharedPool-Worker": 1}
    # frames root -> leaf, each package.Class.method, no JVM-start-specific addresses of hidden classes
    frames = {f for stack in s["stack"].astype(str) for f in stack.split(";")}
    assert len(frames) == 648
    assert [f for f in frames if not re.fullmatch(r"[\w$]+(\.[\w$<>]+)+", f)] == ["[truncated]"]
    assert s["stack"].astype(str).str.startswith("[truncated];").sum() == 2       # two samples deeper than 64 frames
    assert "org.apache.cassandra.transport.Dispatcher.processRequest" in frames
    assert "org.apache.cassandra.cql3.statements.ModificationStatement.execute" in frames
    assert "org.apache.cassandra.db.Mutation.apply" in frames
    t0 = int(round(RUN["t0_epoch_s"] * 1e9))
    rel = (s["epoch_ns"] - t0) / 1e9
    # the recording started with the run's 1 s warm-up, before t0
    assert RUN["profile"]["timing_s"]["started_at_s"] - 0.05 <= rel.min() < 0 and rel.max() < 3.5


def test_a_recording_without_a_collection_has_an_empty_gc_table(tables) -> None:
    assert tables.gc.empty
    assert list(tables.gc.columns) == ["event", "name", "cause", "epoch_ns", "duration_ns"]


def test_the_runs_recordings_are_read_on_its_time_axis_and_cached_beside_the_runs(tmp_path: Path, tables) -> None:
    root = tmp_path / "runs"
    manifest = {"run_id": "r1", "tool": "cassperf-engine", "labels": {"arm": "write"}, "started_utc":
                pd.Timestamp(RUN["t0_epoch_s"], unit="s", tz="UTC").isoformat(), "t0_epoch_s": RUN["t0_epoch_s"],
                "profile": RUN["profile"]}
    save_run(Run(manifest), root=root, raw={"profiles/node1.jfr": FIXTURE.read_bytes()})
    save_run(Run({"run_id": "r2", "tool": "cassperf-engine", "started_utc": manifest["started_utc"]}), root=root)
    found = profile_samples(["r1", "r2"], root=root)
    assert found.notes == ["run r2: no profile (recorded without one)"]
    assert found.periods == {"r1": "20 ms"}
    s = found.samples
    assert list(s.columns) == ["run_id", "node", "state", "thread", "pool", "stack", "time_s", "count"]
    assert len(s) == len(tables.samples) and set(s["run_id"]) == {"r1"} and set(s["node"]) == {"node1"}
    expected = (tables.samples["epoch_ns"] - int(round(RUN["t0_epoch_s"] * 1e9))) / 1e9
    assert s["time_s"].tolist() == pytest.approx(expected.tolist(), abs=1e-9)
    assert (s["count"] == 1).all()
    assert s["pool"].value_counts().to_dict() == pools_of(tables.samples["thread"], tables.samples["stack"]) \
        .value_counts().to_dict()
    assert found.gc.empty and list(found.gc.columns) == ["run_id", "node", "event", "name", "cause", "time_s",
                                                         "duration_ms"]
    cached = sorted(p.name for p in (root / CACHE_DIR / "r1").iterdir())
    assert [p.split("-", 1)[0] for p in cached] == ["node1"] * 3 and cached[0].endswith(".gc.parquet")
    # from the cache: no JVM (a Java that does not exist is never asked)
    again = profile_samples([root / "r1"], java=tmp_path / "no-java")
    pd.testing.assert_frame_equal(again.samples.astype({c: str for c in ("run_id", "node", "state", "thread", "pool",
                                                                          "stack")}),
                                  s.astype({c: str for c in ("run_id", "node", "state", "thread", "pool", "stack")}))


def test_many_recordings_are_read_in_one_jvm_each_answered_in_order(tmp_path: Path) -> None:
    other = tmp_path / "copy.jfr"
    shutil.copy(FIXTURE, other)
    text = tmp_path / "node2.jfr"
    text.write_text("INFO  [main] 2026-11-21 23:12:01,100 CassandraDaemon.java:600 - Startup complete\n" * 3)
    got = convert_jfr([FIXTURE, text, other])
    assert [type(g).__name__ for g in got] == ["JfrTables", "BadRecording", "JfrTables"]
    assert len(got[0].samples) == len(got[2].samples)
    assert str(got[1]) == (f"{text}: expected a whole Java Flight Recorder file, as a node writes it when its "
                           f"recording stops (the reader said: IOException: Not a Flight Recorder file); fix: a "
                           f"recording cut short (a killed run, a full disk) cannot be read: delete the file to leave "
                           f"its run without this profile, or run the run again")


@pytest.mark.parametrize("share", [0.0, 0.001, 0.1, 0.5, 0.9, 0.999])
def test_a_recording_cut_short_is_one_line_naming_the_file_and_the_fix(tmp_path: Path, share: float) -> None:
    whole = FIXTURE.read_bytes()
    bad = tmp_path / "node1.jfr"
    bad.write_bytes(whole[: int(len(whole) * share)])
    with pytest.raises(BadRecording) as caught:
        read_jfr(bad)
    line = str(caught.value)
    assert "\n" not in line
    assert line.startswith(f"{bad}: expected a whole Java Flight Recorder file, as a node writes it when its "
                           f"recording stops (the reader said: ")
    assert line.endswith("; fix: a recording cut short (a killed run, a full disk) cannot be read: delete the file to "
                         "leave its run without this profile, or run the run again")


def test_a_bad_recording_of_a_run_is_a_note_or_raised_when_asked(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    half = FIXTURE.read_bytes()[: FIXTURE.stat().st_size // 2]
    save_run(Run({"run_id": "r1", "tool": "cassperf-engine", "t0_epoch_s": RUN["t0_epoch_s"],
                  "started_utc": "2026-11-21T00:00:00Z"}), root=root, raw={"profiles/node1.jfr": half})
    found = profile_samples(["r1"], root=root)
    assert found.samples.empty and len(found.notes) == 1
    assert found.notes[0].startswith(f"{root / 'r1' / 'raw' / 'profiles' / 'node1.jfr'}: expected a whole Java")
    assert profile_samples(["r1"], root=root, java=tmp_path / "no-java").notes == found.notes    # cached too
    with pytest.raises(BadRecording):
        profile_samples(["r1"], root=root, errors="raise")


def test_no_java_to_read_with_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(JfrUnavailable, match=r"cannot read Flight Recorder files|did not convert the recordings"):
        convert_jfr([FIXTURE], java=tmp_path / "bin" / "java")


def test_a_damaged_cache_entry_is_rebuilt_and_a_run_given_twice_is_read_once(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    save_run(Run({"run_id": "r1", "tool": "cassperf-engine", "t0_epoch_s": RUN["t0_epoch_s"],
                  "started_utc": "2026-11-21T00:00:00Z"}), root=root, raw={"profiles/node1.jfr": FIXTURE.read_bytes()})
    first = profile_samples(["r1"], root=root)
    (samples,) = (root / CACHE_DIR / "r1").glob("*.samples.parquet")
    samples.write_bytes(b"not parquet")
    again = profile_samples(["r1", root / "r1"], root=root)
    assert len(again.samples) == len(first.samples) == 244
