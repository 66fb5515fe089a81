"""`cassperf clean` on a real node, reached as a named cluster is (contact points, the role from
CASSPERF_USERNAME / CASSPERF_PASSWORD): a study's preparation makes its keyspace, clean lists it,
asks, keeps it on a no and drops it on --yes. A keyspace of the user's and one the next study names
but found there already are never listed or dropped, and asking for one is refused in one line."""

from __future__ import annotations

import io

import pytest

from cassperf.cli import main
from cassperf.experiments.executor import execute, record_path
from cassperf.experiments.replication_factor import RFStudy

pytestmark = pytest.mark.cluster

ADDRESS = "127.0.47.1"
#: the smallest RF study that still loads its keyspace in a preparation: one RF, two arms, no
#: calibration (every concurrency given), no warm-up, no A/A control
SMALL = dict(rfs=(1,), read_rfs=(1,), cold_read_rfs=(), cl_sweep=(), cl_sweep_rf=1, thread_sweep=(4,),
             thread_sweep_rfs=(), mixed_rfs=(), write_threads=4, read_threads=4, repeats=2, run_s=2, interval_s=0.1,
             warm_max_steps=0, warm_arm_s=0, aa=False, rows=200)


def _keyspaces(cluster) -> set[str]:  # noqa: ANN001 - a LocalCluster
    return {r[0] for r in cluster.session().execute("SELECT keyspace_name FROM system_schema.keyspaces")
            if not r[0].startswith("system")}


def test_clean_drops_what_a_study_made_there_and_nothing_else(make_cluster, tmp_path, monkeypatch, capsys):
    cluster = make_cluster("clean", "dc1:1", ADDRESS).start()
    runs = tmp_path / "data" / "runs"
    monkeypatch.setenv("CASSPERF_DATA", str(tmp_path / "data"))
    session = cluster.session()
    # the user's, before any study ran here; cleantest_b1 as the study would make it, so that it loads there
    session.execute("CREATE KEYSPACE userdata WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE KEYSPACE cleantest_b1 WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 1}")
    made = RFStudy(experiment="clean-a", keyspace_prefix="cleantest_a", **SMALL)
    found = RFStudy(experiment="clean-b", keyspace_prefix="cleantest_b", **SMALL)    # its keyspace was there
    for study in (made, found):
        done = execute(study, cluster, root=runs)
        assert (done.ran, done.failed) == (4, 0)
    assert _keyspaces(cluster) == {"userdata", "cleantest_a1", "cleantest_b1"}
    assert "cleantest_b1" in record_path(runs, found).read_text()          # kept as there before the study
    monkeypatch.setenv("CASSPERF_USERNAME", cluster.access().cql.user)      # as for a cluster of yours
    monkeypatch.setenv("CASSPERF_PASSWORD", cluster.access().cql.password)

    listing = [f"the studies of {runs} made on cluster clean at {ADDRESS}:",
               f"  cleantest_a1: replication-factor, experiment clean-a, record {record_path(runs, made).name}"]
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    assert main(["clean", "--contact-points", ADDRESS]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [*listing, "drop these 1 keyspace(s) and all their data? [y/N] nothing dropped"]
    assert _keyspaces(cluster) == {"userdata", "cleantest_a1", "cleantest_b1"}

    for keyspace in ("userdata", "cleantest_b1"):
        assert main(["clean", "--contact-points", ADDRESS, "--keyspace", keyspace, "--yes"]) == 2
        assert capsys.readouterr().err == (
            f"cassperf: error: {keyspace} on cluster clean at {ADDRESS}: no study of {runs} made it, so cassperf "
            f"clean leaves it alone (the studies made: cleantest_a1)\n")
    assert _keyspaces(cluster) == {"userdata", "cleantest_a1", "cleantest_b1"}

    assert main(["clean", "--contact-points", ADDRESS, "--yes"]) == 0
    assert capsys.readouterr().out.splitlines() == [*listing, "dropped cleantest_a1"]
    assert _keyspaces(cluster) == {"userdata", "cleantest_b1"}

    assert main(["clean", "--contact-points", ADDRESS, "--yes"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"nothing to drop: no study of {runs} made a keyspace that cluster clean at {ADDRESS} still holds"]
