"""Stress-tool runners: where cassandra-stress and latte are looked for, the clear error when
they are absent, the exact argv built from a WorkloadSpec, the streaming of a real subprocess,
and the storing of real cassandra-stress output in a run. A run against a real latte (on a
real node) is skipped with its reason when latte is not installed."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from cassperf.cluster import RemoteCluster
from cassperf.parsers import parse
from cassperf.results.store import RunWriter, load_run
from cassperf.workload import WorkloadSpec, WorkloadSpecError
from cassperf.workload.runners import (
    ToolNotFoundError, latte_commands, locate_cassandra_stress, locate_latte, run_cassandra_stress, run_latte,
    stress_argv,
)
from cassperf.workload.runners.latte_runner import WORKLOAD, LatteProgress, reads_without_row, rune_string
from cassperf.workload.runners.streaming import Anchor, Progress, store_result, stream_process
from cassperf.workload.runners.stress_runner import stress_progress_row

CS_FIXTURE = "cassandra-stress/cs_4.1.11_write_n25000_threads3_full_crystalloide.txt"


def tool_file(path: Path, executable: bool = True) -> Path:
    """An empty file where a tool would be (never run: only its place and mode matter)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    path.chmod(0o755 if executable else 0o644)
    return path


# ---- locating cassandra-stress ----------------------------------------------------------------

@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    """cassandra-stress in all three places: $CASSANDRA_STRESS, $CASSANDRA_HOME/tools/bin, PATH."""
    return {"explicit": tool_file(tmp_path / "custom" / "my-stress"),
            "home": tmp_path / "cassandra-5.0.6",
            "in_home": tool_file(tmp_path / "cassandra-5.0.6" / "tools" / "bin" / "cassandra-stress"),
            "path_dir": tmp_path / "bin",
            "on_path": tool_file(tmp_path / "bin" / "cassandra-stress")}


def test_cassandra_stress_is_looked_for_in_CASSANDRA_STRESS_then_CASSANDRA_HOME_then_PATH(places):
    env = {"CASSANDRA_STRESS": str(places["explicit"]), "CASSANDRA_HOME": str(places["home"]),
           "PATH": str(places["path_dir"])}
    assert locate_cassandra_stress(env) == places["explicit"]
    del env["CASSANDRA_STRESS"]
    assert locate_cassandra_stress(env) == places["in_home"]
    del env["CASSANDRA_HOME"]
    assert locate_cassandra_stress(env) == places["on_path"]


def test_a_cassandra_stress_that_is_not_executable_is_passed_over(places, tmp_path):
    places["in_home"].chmod(0o644)
    first = tool_file(tmp_path / "first" / "cassandra-stress", executable=False)
    env = {"CASSANDRA_HOME": str(places["home"]), "PATH": f"{first.parent}{os.pathsep}{places['path_dir']}"}
    assert locate_cassandra_stress(env) == places["on_path"]
    places["on_path"].chmod(0o644)
    with pytest.raises(ToolNotFoundError) as err:
        locate_cassandra_stress(env)
    assert f"$CASSANDRA_HOME/tools/bin/cassandra-stress ({places['in_home']}) is not executable" in str(err.value)


def test_absent_cassandra_stress_is_a_clear_error_naming_every_place(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ToolNotFoundError) as err:
        locate_cassandra_stress({"PATH": str(empty)})
    assert str(err.value) == (
        "cassandra-stress was not found: $CASSANDRA_HOME/tools/bin: CASSANDRA_HOME is not set; no cassandra-stress "
        "on PATH; CASSANDRA_STRESS is not set. Set CASSANDRA_STRESS to the script, or CASSANDRA_HOME to a Cassandra "
        "install (the Apache tarball has tools/bin/cassandra-stress), or put cassandra-stress on PATH. It is not on "
        "Maven Central; without it, run the workload with latte (`make latte`) or the python-driver engine")
    with pytest.raises(ToolNotFoundError, match=r"\$CASSANDRA_HOME/tools/bin/cassandra-stress \(.*\) does not exist"):
        locate_cassandra_stress({"PATH": str(empty), "CASSANDRA_HOME": str(tmp_path / "nowhere")})


@pytest.mark.parametrize("make, why", [
    (lambda p: p, "does not exist"),
    (lambda p: tool_file(p, executable=False), "is not executable (chmod +x?)"),
    (lambda p: (p.mkdir(), p)[1], "is not a file"),
])
def test_a_wrong_CASSANDRA_STRESS_is_an_error_not_a_silent_fallback(places, tmp_path, make, why):
    target = make(tmp_path / "stress-here")
    env = {"CASSANDRA_STRESS": str(target), "PATH": str(places["path_dir"])}
    with pytest.raises(ToolNotFoundError) as err:
        locate_cassandra_stress(env)
    assert str(err.value).startswith(f"CASSANDRA_STRESS={target} {why}; point it at the cassandra-stress script")


def test_running_without_cassandra_stress_fails_before_the_run_gets_any_output(tmp_path):
    spec = WorkloadSpec(op="write", n=1000)
    with RunWriter(tool="cassandra-stress", root=tmp_path) as run:
        with pytest.raises(ToolNotFoundError, match="CASSANDRA_STRESS"):
            run_cassandra_stress(spec, run, env={"PATH": str(tmp_path)}, progress=False)
        assert list((run.path / "raw").iterdir()) == []


# ---- cassandra-stress argv ---------------------------------------------------------------------

SEED = WorkloadSpec(op="write", n=10_000_000, warmup=False, cl="LOCAL_QUORUM", concurrency=256,
                    population="seq=1..10000000", keyspace="ks410rf3", replication={"dc1": 3},
                    hdr_file="run.hdr", connections_per_host=128)


def test_stress_argv_is_the_executable_and_the_specs_arguments():
    assert stress_argv(SEED, "/opt/cassandra/tools/bin/cassandra-stress") == [
        "/opt/cassandra/tools/bin/cassandra-stress", "write", "no-warmup", "n=10000000", "cl=LOCAL_QUORUM",
        "-rate", "threads=256", "throttle=0/s", "-pop", "seq=1..10000000", "-col", "size=FIXED(818)",
        "-schema", "keyspace=ks410rf3", "replication(strategy=NetworkTopologyStrategy, dc1=3)",
        "-log", "interval=1", "hdrfile=run.hdr", "-mode", "native", "cql3", "connectionsPerHost=128"]


def test_stress_argv_takes_contact_points_and_port_from_the_cluster_when_the_spec_names_no_nodes():
    spec = WorkloadSpec(op="read", duration="30s", cl="ONE", concurrency=16)
    argv = stress_argv(spec, "cs", RemoteCluster("10.0.0.5,10.0.0.6", port=9142))
    assert argv == ["cs", "read", "duration=30s", "cl=ONE", "-rate", "threads=16", "throttle=0/s",
                    "-col", "size=FIXED(818)", "-log", "interval=1", "-mode", "native", "cql3",
                    "-node", "10.0.0.5,10.0.0.6", "-port", "native=9142"]
    named = WorkloadSpec(op="read", duration="30s", cl="ONE", concurrency=16, nodes=("10.1.1.1",))
    assert stress_argv(named, "cs", RemoteCluster("10.0.0.5"))[-2:] == ["-node", "10.1.1.1"]


def test_stress_argv_refuses_what_cassandra_stress_cannot_run():
    with pytest.raises(WorkloadSpecError, match="delete share cannot be expressed"):
        stress_argv(WorkloadSpec(op="mixed", ratio={"read": 5, "write": 4, "delete": 1}, n=100), "cs")


def test_progress_rows_of_real_cassandra_stress_output(fixtures):
    text = (fixtures / CS_FIXTURE).read_text()
    rows = [r for r in map(stress_progress_row, text.splitlines()) if r is not None]
    assert len(rows) == 52 and rows[0] == (4.0, 1.0) and rows[-1] == (25000.0, 51.8)
    # sample line: WARN  15:43:31,966 Query '...' generated server side warning(s): ...
    assert stress_progress_row("WARN  15:43:31,966 Query 'x' generated server side warning(s)") is None


def test_parsed_stress_output_is_stored_on_the_runs_clock(fixtures, tmp_path):
    raw = fixtures / CS_FIXTURE
    parsed = parse(raw, format="cassandra-stress")
    with RunWriter(tool="cassandra-stress", root=tmp_path) as run:
        started = pd.Timestamp(run.manifest["started_utc"])
        anchor = Anchor()
        progress = Progress(stress_progress_row, total=25000, unit="op", desc="test", enabled=False,
                            anchor=anchor)
        arrival = pd.Timestamp.now(tz="UTC")
        for line in raw.read_text().splitlines():
            progress.line(line)
        assert progress.rows == 52
        # the first row (tool time 1.0 s) arrived at about `arrival`: the tool's clock began 1 s before
        assert abs((anchor.utc - (arrival - pd.Timedelta(seconds=1.0))).total_seconds()) < 0.5
        store_result(run, parsed, anchor, table_prefix="cassandra_stress_")
    loaded = load_run(run.path)
    offset = loaded.manifest["tool_time_offset_s"]
    assert offset == pytest.approx((anchor.utc - started).total_seconds())
    tool_times = parsed.runs[0].intervals["time_s"]
    assert list(loaded.intervals["time_s"]) == pytest.approx(list(tool_times + offset))
    total = loaded.summary[loaded.summary["op"] == "total"].iloc[0]
    assert total["rate_ops_s"] == 483 and total["latency_p99_ms"] == 92.8 and total["count"] == 25000
    assert loaded.manifest["tool_started_utc"].endswith("Z")
    # cassandra-stress prints a running total of ops: the stored run says so, and the analysis
    # differences it (without the flag every interval would count all ops so far: ~26x the rate)
    assert loaded.manifest["count_is_total"] is True
    from cassperf.analysis import runs_frame

    whole = runs_frame([loaded], op="total", steady=False).iloc[0]
    assert whole["rate_ops_s"] == pytest.approx(483, rel=0.05)       # the tool's own figure for the run


# ---- latte ---------------------------------------------------------------------------------------

def test_latte_is_looked_for_in_LATTE_then_PATH_then_cargo_bin(tmp_path):
    explicit = tool_file(tmp_path / "x" / "latte-0.29")
    on_path = tool_file(tmp_path / "bin" / "latte")
    cargo = tool_file(tmp_path / "home" / ".cargo" / "bin" / "latte")
    env = {"LATTE": str(explicit), "PATH": str(on_path.parent), "HOME": str(tmp_path / "home")}
    assert locate_latte(env) == explicit
    del env["LATTE"]
    assert locate_latte(env) == on_path
    on_path.chmod(0o644)
    assert locate_latte(env) == cargo
    cargo.unlink()
    with pytest.raises(ToolNotFoundError) as err:
        locate_latte(env)
    assert str(err.value) == (
        f"latte was not found: not on PATH, not at {cargo}, and LATTE is not set. Install it with `make latte`, "
        f"or `cargo install latte-cli --version 0.29.0` (about 10 minutes to build)")


@pytest.mark.parametrize("make, why", [
    (lambda p: p, "does not exist"),
    (lambda p: tool_file(p, executable=False), "is not executable (chmod +x?)"),
    (lambda p: (p.mkdir(), p)[1], "is not a file"),
])
def test_a_wrong_LATTE_is_an_error_not_a_silent_fallback(tmp_path, make, why):
    target = make(tmp_path / "latte-here")
    on_path = tool_file(tmp_path / "bin" / "latte")
    with pytest.raises(ToolNotFoundError) as err:
        locate_latte({"LATTE": str(target), "PATH": str(on_path.parent), "HOME": str(tmp_path)})
    assert str(err.value) == f"LATTE={target} {why}; point it at latte, or unset it to search PATH and ~/.cargo/bin"


def test_latte_commands_for_a_counted_write():
    spec = WorkloadSpec(op="write", n=5000, cl="ONE", concurrency=64, column_size=100, warmup=False)
    cmd = latte_commands(spec, "/bin/latte", cluster=RemoteCluster("127.0.12.3"), report_path="raw/r.json",
                         log_dir="raw")
    assert cmd.run == [
        "/bin/latte", "--log-dir", "raw", "run", str(WORKLOAD), "-f", "write", "-d", "5000", "-w", "0",
        "-t", "1", "-p", "64", "-s", "1s", "--consistency", "ONE",
        "-P", 'keyspace="keyspace1"', "-P", "columns=5", "-P", "column_size=100",
        "-P", 'key_dist="seq"', "-P", "key_low=1", "-P", "key_high=5000", "-q", "-o", "raw/r.json", "127.0.12.3"]
    assert cmd.schema == [
        "/bin/latte", "--log-dir", "raw", "schema", str(WORKLOAD), "-P", 'keyspace="keyspace1"',
        "-P", 'keyspace_cql="CREATE KEYSPACE IF NOT EXISTS \\"keyspace1\\" WITH replication = {\'class\': '
              '\'org.apache.cassandra.locator.SimpleStrategy\', \'replication_factor\' : \'1\'} AND durable_writes = true"',
        "-P", 'table_cql="CREATE TABLE IF NOT EXISTS keyspace1.standard1 (key blob PRIMARY KEY \\n, \\"C0\\" blob\\n, '
              '\\"C1\\" blob\\n, \\"C2\\" blob\\n, \\"C3\\" blob\\n, \\"C4\\" blob) WITH compression = {}"',
        "127.0.12.3"]
    assert cmd.notes == []


def test_latte_commands_for_a_mix_with_deletes_at_a_rate_over_threads():
    spec = WorkloadSpec(op="mixed", ratio={"read": 5, "write": 4, "delete": 1}, duration="10m", cl="LOCAL_QUORUM",
                        concurrency=100, rate="throttle=2000/s", local_dc="dc1", population="uniform(1..5000)",
                        interval_s=0.5, connections_per_host=4, max_pending=128, hdr_file="x.hdr",
                        nodes=("10.0.0.1", "10.0.0.2"))
    cmd = latte_commands(spec, "latte", worker_threads=3)
    assert cmd.run == [
        "latte", "run", str(WORKLOAD), "-f", "write:4,read:5,delete:1", "-d", "600s", "-t", "3", "-p", "34",
        "-r", "2000", "-s", "500ms", "--consistency", "LOCAL_QUORUM", "--datacenter", "dc1", "-c", "4",
        "-P", 'keyspace="keyspace1"', "-P", "columns=5", "-P", "column_size=818",
        "-P", 'key_dist="uniform"', "-P", "key_low=1", "-P", "key_high=5000", "-q", "10.0.0.1", "10.0.0.2"]
    assert cmd.notes == [
        "concurrency 100 over 3 latte worker threads: 34 per thread, 102 requests in flight",
        "rate throttle=2000/s runs as latte -r 2000: latte has one rate mode, a fixed schedule",
        "max_pending=128 has no latte equivalent and is ignored (latte keeps its JSON report; `latte hdr <report>` "
        "writes an HDR log)",
        "hdr_file=x.hdr has no latte equivalent and is ignored (latte keeps its JSON report; `latte hdr <report>` "
        "writes an HDR log)"]


def test_latte_reads_default_to_cassandra_stress_gaussian_population():
    cmd = latte_commands(WorkloadSpec(op="read", n=1000), "latte")
    params = [cmd.run[i + 1] for i, a in enumerate(cmd.run) if a == "-P"]
    assert params[-5:] == ['key_dist="gaussian"', "key_low=1", "key_high=1000", "key_mean=500.5", "key_stdev=166.5"]
    dur = latte_commands(WorkloadSpec(op="read", duration=60, population="gaussian(1..100,50,10)"), "latte")
    params = [dur.run[i + 1] for i, a in enumerate(dur.run) if a == "-P"]
    assert params[-5:] == ['key_dist="gaussian"', "key_low=1", "key_high=100", "key_mean=50.0", "key_stdev=10.0"]


def test_latte_refuses_serial_consistency_and_bad_thread_counts():
    with pytest.raises(WorkloadSpecError, match="latte has no consistency level SERIAL"):
        latte_commands(WorkloadSpec(op="write", n=10, cl="SERIAL"), "latte")
    with pytest.raises(WorkloadSpecError, match="latte worker_threads must be a whole number >= 1, got 0"):
        latte_commands(WorkloadSpec(op="write", n=10), "latte", worker_threads=0)


def test_rune_string_literals_escape_quotes_backslashes_and_newlines():
    assert rune_string('a "b"\\c\nd') == '"a \\"b\\"\\\\c\\nd"'


LATTE029 = Path(__file__).resolve().parent.parent / "fixtures" / "latte-0.29"


@pytest.mark.parametrize(("name", "expected"), [
    ("read-no-rows", (5000, 5000)),      # latte's own key bytes on a table cassandra-stress wrote: Rows [row] 0
    ("read-rows-found", None),           # after latte wrote those keys: Rows [row] 5000
    ("mixed-read-write", None),          # a mix: latte prints rows only in total (writes return none)
    ("write-rate500", None),
])
def test_latte_reads_that_found_no_row_are_counted_from_its_summary(name, expected):
    assert reads_without_row(parse(LATTE029 / f"{name}.txt", format="latte")) == expected


def test_latte_progress_counts_cycles_from_log_rows():
    bar = LatteProgress(counted=True)
    # latte 0.29 LOG rows (report/mod.rs Sample format: time, cycles, errors, throughput, latencies)
    assert bar("   1.000     19891         0     19888             0.4       1.3       1.9       2.6       3.4"
               "       6.1      11.4      22.8") == (19891.0, 1.0)
    assert bar("   2.000     20109         0     20109             0.4       1.2       1.8       2.5       3.3"
               "       5.8      10.9      19.0") == (40000.0, 2.0)
    assert bar("     [s]      [op]      [op]    [op/s]             Min        25") is None


# ---- streaming a real subprocess ----------------------------------------------------------------

def test_stream_process_writes_lines_as_they_come_and_passes_the_exit_code(tmp_path):
    seen: list[str] = []
    script = "import sys\nfor i in range(3): print(f'line {i}', flush=True)\nprint('oops', file=sys.stderr)\nsys.exit(3)"
    with open(tmp_path / "out.txt", "w") as out:
        outcome = stream_process([sys.executable, "-c", script], out, seen.append)
    assert outcome.returncode == 3 and outcome.lines == 4 and not outcome.timed_out
    assert seen == ["line 0", "line 1", "line 2", "oops"]
    assert (tmp_path / "out.txt").read_text() == "line 0\nline 1\nline 2\noops\n"


def test_stream_process_stops_the_whole_process_group_at_its_timeout(tmp_path):
    # the child starts a grandchild (as cassandra-stress's launcher script starts java); both must go
    script = ("import subprocess, sys, time\n"
              "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
              "print(p.pid, flush=True)\ntime.sleep(60)")
    lines: list[str] = []
    t0 = time.monotonic()
    with open(tmp_path / "out.txt", "w") as out:
        outcome = stream_process([sys.executable, "-c", script], out, lines.append, timeout_s=1.0)
    assert outcome.timed_out and outcome.returncode != 0 and time.monotonic() - t0 < 15
    grandchild = int(lines[0])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(grandchild):
        time.sleep(0.05)
    assert not _alive(grandchild)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


# ---- a real latte on a real node ----------------------------------------------------------------

def _latte_or_skip() -> Path:
    try:
        return locate_latte()
    except ToolNotFoundError as exc:
        pytest.skip(f"latte is not installed, so the real-latte runner test does not run ({exc})")


@pytest.mark.cluster
def test_latte_writes_and_reads_keyspace1_standard1_into_one_run_with_the_sampler(make_cluster, tmp_path):
    from cassperf.sampler import ClusterSampler

    latte = _latte_or_skip()
    cluster = make_cluster("runners", "dc1:1", "127.0.12.3").start()
    write = WorkloadSpec(op="write", n=3000, cl="ONE", concurrency=32, column_size=100, warmup=False)
    with RunWriter(tool="latte", root=tmp_path) as run, \
            ClusterSampler(cluster, tables=[("keyspace1", "standard1")], interval_s=1, writer=run, host=False):
        result = run_latte(write, run, cluster=cluster, executable=latte, progress=False, timeout_s=300)
    assert result.process.returncode == 0
    loaded = load_run(run.path)
    session = cluster.session()
    assert session.execute("SELECT COUNT(*) FROM keyspace1.standard1").one()[0] == 3000
    row = session.execute("SELECT * FROM keyspace1.standard1 LIMIT 1").one()
    assert [len(v) for v in row] == [10, 100, 100, 100, 100, 100]       # key blob(10), C0..C4 of column_size
    assert loaded.manifest["tool"] == "latte" and loaded.manifest["tool_version"] == "0.29.0"
    assert list(loaded.events["name"]) == ["latte-schema:start", "latte-schema:end", "latte:start", "latte:end"]
    assert int(loaded.intervals["count"].sum()) == 3000                 # every cycle in some LOG row
    assert list(loaded.summary["count"]) == [3000, 3000]                # resp_time and cycle_time rows
    start, end = loaded.events["time_s"].iloc[2], loaded.events["time_s"].iloc[3]
    assert loaded.intervals["time_s"].between(start, end + 1).all()     # on the run's clock
    assert {"gc_count", "live_sstables:keyspace1.standard1"} <= set(loaded.metrics["metric"])
    assert (run.path / "raw" / "latte.txt").stat().st_size > 0 and (run.path / "raw" / "latte-report.json").exists()

    # reads visit the keys the write made: every read returns its row
    read = WorkloadSpec(op="read", n=2000, cl="ONE", concurrency=32, population="uniform(1..3000)")
    with RunWriter(tool="latte", root=tmp_path) as run2:
        run_latte(read, run2, cluster=cluster, executable=latte, schema=False, progress=False, timeout_s=300)
    again = load_run(run2.path)
    assert list(again.summary["count"]) == [2000, 2000] and list(again.summary["rows"]) == [2000, 2000]
    assert not any("found no row" in w for w in again.warnings)

    # keys latte never wrote: latte says nothing of it, the run does
    missed = WorkloadSpec(op="read", n=1000, cl="ONE", concurrency=32, population="uniform(5001..6000)")
    with RunWriter(tool="latte", root=tmp_path) as run3:
        run_latte(missed, run3, cluster=cluster, executable=latte, schema=False, progress=False, timeout_s=300)
    warned = [w for w in load_run(run3.path).warnings if "found no row" in w]
    assert len(warned) == 1 and warned[0].startswith("latte: 1,000 of 1,000 reads (100.0%) found no row; "), warned


def test_a_stress_hdr_log_is_stored_on_the_runs_clock_by_its_epoch_times(tmp_path):
    from cassperf.results import hdr
    from cassperf.parsers.hdr_log import write_hdr_log
    from cassperf.workload.runners.stress_runner import _store_hdr

    with RunWriter(tool="cassandra-stress", root=tmp_path) as run:
        started = pd.Timestamp(run.manifest["started_utc"]).timestamp()
        # the tool began measuring 3.25 s after the run's start; intervals of 1 s from there
        rows = [("WRITE-st", float(s), float(s + 1), hdr.histogram_from_samples([1_000_000 + s] * 10)) for s in range(4)]
        path = tmp_path / "stress.hdr"
        write_hdr_log(rows, path, start_epoch_s=started + 3.25)
        _store_hdr(run, path)
    loaded = load_run(run.path)
    assert list(loaded.histograms["start_s"]) == pytest.approx([3.25, 4.25, 5.25, 6.25], abs=1e-3)
    assert list(loaded.histograms["end_s"]) == pytest.approx([4.25, 5.25, 6.25, 7.25], abs=1e-3)
