"""A real cassandra-stress on a real node, through the runner: simple mode and the 5:4:1 user profile.

cassandra-stress ships only in the Apache Cassandra tarball (not on Maven Central), so this
test skips unless one is found (``CASSANDRA_STRESS``, ``$CASSANDRA_HOME/tools/bin``, PATH).
It was run on 2026-11-22 with a source build of cassandra-stress (a reconstructed 5.0 / 4.1.1
mix compiled against cassandra-all 5.0.6, kept outside the project) against Cassandra 5.0.6.
"""

from __future__ import annotations

import pytest

from cassperf.results.store import RunWriter, load_run
from cassperf.workload import WorkloadSpec
from cassperf.workload.runners import ToolNotFoundError, locate_cassandra_stress, run_cassandra_stress

# alone: asserts a fixed rate kept; make test runs it with no other test beside it
pytestmark = [pytest.mark.cluster, pytest.mark.alone]
ADDRESS = "127.0.12.5"


@pytest.fixture
def stress():
    try:
        return locate_cassandra_stress()
    except ToolNotFoundError as exc:
        pytest.skip(f"cassandra-stress is not installed, so the real cassandra-stress test does not run ({exc})")


def test_real_cassandra_stress_simple_write_then_user_mode_mix_with_deletes(stress, make_cluster, tmp_path):
    cluster = make_cluster("realstress", "dc1:1", ADDRESS).start()
    session = cluster.session()

    # the seeds' simple-mode form: every row lands, with the spec's sizes
    write = WorkloadSpec(op="write", n=4000, cl="ONE", concurrency=16, column_size=100, warmup=False,
                         keyspace="ks_simple", population="seq=1..4000", hdr_file="write.hdr")
    with RunWriter(tool="cassandra-stress", root=tmp_path) as run:
        result = run_cassandra_stress(write, run, cluster=cluster, executable=stress, progress=False,
                                      timeout_s=600)
    assert result.process.returncode == 0
    loaded = load_run(run.path)
    assert session.execute("SELECT COUNT(*) FROM ks_simple.standard1").one()[0] == 4000
    assert [len(v) for v in session.execute("SELECT * FROM ks_simple.standard1 LIMIT 1").one()] == [10] + [100] * 5
    total = loaded.summary.set_index("op").loc["total"] if "total" in set(loaded.summary["op"]) \
        else loaded.summary.iloc[0]
    assert int(total["count"]) == 4000
    assert loaded.manifest["command"].startswith("cassandra-stress write no-warmup n=4000 cl=ONE -rate threads=16")
    # cassandra-stress cannot reach a local node's JMX (per-node loopback port): no GC figures, said so
    assert loaded.manifest.get("gc_collected") is False or loaded.intervals["gc_count"].isna().all()

    # the garbagecollect mix: a profile, a user-mode load, then read:write:delete 5:4:1
    common = dict(cl="ONE", concurrency=8, column_size=100, warmup=False, keyspace="ks_user",
                  population="uniform(1..3000)")
    load = WorkloadSpec(op="write", n=3000, **common)
    with RunWriter(tool="cassandra-stress", root=tmp_path) as run:
        run_cassandra_stress(load, run, cluster=cluster, executable=stress, progress=False, timeout_s=600,
                             user_profile=True)
    mix = WorkloadSpec(op="mixed", ratio={"read": 5, "write": 4, "delete": 1}, duration=10, rate="fixed=300/s",
                       **common)
    with RunWriter(tool="cassandra-stress", root=tmp_path) as run:
        result = run_cassandra_stress(mix, run, cluster=cluster, executable=stress, progress=False, timeout_s=600)
    assert result.process.returncode == 0
    loaded = load_run(run.path)
    assert (run.path / "raw" / "cassandra-stress-profile.yaml").is_file()
    assert "user profile=cassandra-stress-profile.yaml ops(insert=4,read=5,delete=1)" in loaded.manifest["command"]
    counts = loaded.summary.set_index("op")["count"]
    ops = {op: int(counts[op]) for op in ("insert", "read", "delete")}
    n = sum(ops.values())
    assert 2400 <= n <= 3300                                          # 300/s for 10 s
    for op, share in (("read", 0.5), ("insert", 0.4), ("delete", 0.1)):
        assert ops[op] / n == pytest.approx(share, abs=0.05), ops
    assert not [w for w in loaded.warnings if "JMX" not in w], loaded.warnings
