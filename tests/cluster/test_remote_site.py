"""A named remote cluster, end to end: a 3-node TLS + authentication site in a network namespace
of its own (tests/cluster/remote_site.py), driven only as a user drives their own cluster.

`cassperf report` runs in the workbook's namespace with `-p contact_points 10.60.0.1`, the
role's name and password in CASSPERF_USERNAME / CASSPERF_PASSWORD and the site's CA file in
CASSPERF_SSL_CA: no cluster folder, no nodetool (none on PATH, CASSANDRA_HOME unset), no
Jolokia, no JMX reachable (the nodes' JMX listens on the site's own loopback).

- 01's test set runs every arm on the site; each run's sampler says once what it could not read.
- 03's test set is refused in one line naming what is missing (JMX for nodetool garbagecollect);
  its report says the claims are not addressable there and stores no run.
- Both reports' headers name the cluster as it describes itself: name, release, nodes, DC.
- A wrong password, an untrusted CA and an unreachable contact point each end `cassperf report`
  with one line (exit 2) before any run or report is written.
"""

from __future__ import annotations

import html as html_text
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from cassperf.cluster.tls import ensure_cluster_tls
from cassperf.experiments.executor import STUDIES_DIR
from cassperf.results.store import load_run
from tests.cluster.remote_site import NOBODY, NODES, RemoteSite

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
CAUSE = "no nodetool here (CASSANDRA_HOME unset and none on PATH)"
SAMPLED = (f"no JMX/Jolokia ({CAUSE}): node metrics (JVM GC, compactions, table and SSTable counters) not sampled; "
           f"CQL virtual tables read: system_views.thread_pools, system_views.sstable_tasks")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    remote = RemoteSite(tmp_path_factory.mktemp("site-data"))
    try:
        yield remote.start()
    finally:
        remote.stop()
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert remote.site_ns not in left and remote.workbook_ns not in left


def report(site: RemoteSite, home: Path, notebook: str, *, password: str | None = None, ca: Path | None = None,
           contact: str = NODES[0], **more: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """`cassperf report` of `notebook`'s test set against the site from the workbook's namespace,
    as a user runs it, with ``more`` as `-p NAME VALUE`; (the finished process, its wall time in s)."""
    user, role_password = site.role()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSPERF_") and k != "CASSANDRA_HOME"}
    env.update({"PATH": f"{Path(sys.executable).parent}:/usr/sbin:/usr/bin:/sbin:/bin",
                "CASSPERF_DATA": str(home / "data"), "CASSPERF_REPORTS": str(home / "reports"),
                "CASSPERF_USERNAME": user, "CASSPERF_PASSWORD": password or role_password,
                "CASSPERF_SSL_CA": str(ca or site.ca_file)})
    cmd = site.workbook([sys.executable, "-m", "cassperf.cli", "report", "--notebook", notebook, "--params",
                         str(ROOT / "notebooks" / "params" / "test" / f"{notebook}.yaml"),
                         "-p", "contact_points", contact, "-p", "local_dc", "dc1",
                         *[x for name, value in more.items() for x in ("-p", name, value)]])
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=1800)
    return proc, time.monotonic() - t0


def published(home: Path, notebook: str) -> tuple[str, dict]:
    """(the report's HTML, the JSON the study published: claims, figures) of `notebook`."""
    [html] = (home / "reports").glob(f"{notebook}*.html")
    [executed] = (home / "reports" / "executed").glob(f"{notebook}*.ipynb")
    for cell in nbformat.read(executed, as_version=4).cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {}).get("application/json")
            if isinstance(data, dict) and "claims" in data:
                return html.read_text(), data
    raise AssertionError(f"{executed} published no claims")


def check_header(html: str) -> None:
    """The cluster as it describes itself over CQL, in the report's header."""
    for row in ("<th>Name</th><td>site</td>", "<th>Kind</th><td>your cluster</td>", "<th>Cassandra</th><td>5.0.6</td>",
                "<th>Nodes</th><td>3 (3 up)</td>", "<th>Data centers</th><td>dc1: 3 nodes</td>",
                "<th>Reached at</th><td>10.60.0.1 port 9042, TLS, password authentication</td>",
                f"<th>Sampled</th><td>{SAMPLED}</td>"):
        assert row in html, row


def test_01_and_03_test_sets_against_a_remote_tls_auth_site(site, tmp_path):
    proc, took_03 = report(site, tmp_path, "03-garbagecollect-impact")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    html, data = published(tmp_path, "03-garbagecollect-impact")
    check_header(html)
    refused = (f"Nothing was run for this report: not addressable on this cluster: the garbagecollect and placebo arms "
               f"need nodetool (JMX) on every node, and this cluster offers none here: {CAUSE}. Nothing was run; to "
               f"run them, install Cassandra's tools here (CASSANDRA_HOME) and open the nodes' JMX port to "
               f"this host (credentials in CASSPERF_JMX_USERNAME / CASSPERF_JMX_PASSWORD).")
    assert refused in html_text.unescape(html)
    assert {c["verdict"] for c in data["claims"]} == {"not shown"} and len(data["claims"]) == 7
    assert all(c["reason"].startswith("not addressable on this cluster") for c in data["claims"])
    assert not (tmp_path / "data" / "runs").exists() or not any((tmp_path / "data" / "runs").glob("*/manifest.json"))

    # without the thread sweep's two arms, the mixed arm and the warm pass, and at given concurrencies, so with no
    # calibration ladder (01's notebook test runs those): 8 steps and 6 runs fewer (166 s against 182 s in CI)
    proc, took_01 = report(site, tmp_path, "01-replication-factor", thread_sweep_rfs="[]", mixed_rfs="[]",
                           warm_arm_s="0", write_threads="8", read_threads="8", thread_sweep="[8]")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    html, data = published(tmp_path, "01-replication-factor")
    check_header(html)
    assert "your cluster of 3 nodes in dc1 (Cassandra 5.0.6)" in html
    runs = [load_run(p.parent) for p in (tmp_path / "data" / "runs").glob("*/manifest.json")]
    measured = [r for r in runs if r.labels.get("role") == "measure"]
    arms = {r.labels["arm"] for r in measured}
    assert len(arms) >= 6 and "write rf=3" in arms and len(measured) == 2 * len(arms)    # every arm in 2 blocks
    assert all(r.manifest.get("complete") and not r.manifest.get("failed") for r in measured)
    for run in measured:                 # the sampler said once what it could not read, and read the rest
        # (a node read that failed under load is another warning of its own, not asserted here)
        # and the profiler, once, that it has no way into a named cluster's JVMs
        assert [w for w in run.warnings if "JMX" in w] == [
            f"sampler: {SAMPLED}", "profile not recorded: a named cluster is not profiled: the workbook has no JMX "
            "session with its nodes' JVMs (profiles are taken on the embedded cluster)"], run.warnings
        assert {"compactions_active", "pool_MutationStage_completed"} <= set(run.metrics["metric"])
        assert "gc_count" not in set(run.metrics["metric"])
    [record] = (tmp_path / "data" / "runs" / STUDIES_DIR).glob("replication-factor--*.json")
    slots = json.loads(record.read_text())["slots"]
    cold = [s["note"] for key, s in slots.items() if key.endswith(" run=a")]
    assert len(cold) == 2 and all(f"memtables not flushed and key and row caches not invalidated (no JMX: {CAUSE})"
                                  in note for note in cold), cold
    assert {c["verdict"] for c in data["claims"]} <= {"holds", "does not hold", "not shown", "control"}
    print(f"\nagainst the remote site: 03 test set {took_03:.0f} s, 01 test set {took_01:.0f} s (cassperf report "
          f"wall time)")


def test_bad_credentials_untrusted_ca_unreachable_node_each_one_line_before_any_run(site, tmp_path):
    other_ca = ensure_cluster_tls(tmp_path / "elsewhere", [("node1", NODES[0])]).ca
    cases = [
        ({"password": "not-the-password"}, f"cannot connect to {NODES[0]} port 9042: {NODES[0]}: the node refused the "
         f"username and password (bad credentials); check CASSPERF_USERNAME / CASSPERF_PASSWORD "
         f"(docs/guides/your-cluster.md)"),
        ({"ca": other_ca}, f"cannot connect to {NODES[0]} port 9042: {NODES[0]}: its TLS certificate is not signed by "
         f"a CA this client trusts (certificate verify failed); check that CASSPERF_SSL_CA names the CA that signed "
         f"the nodes' certificates"),
        ({"contact": NOBODY}, f"cannot connect to {NOBODY} port 9042: {NOBODY}: no route to host; check that the "
         f"nodes are up and the contact points and port are right"),
    ]
    for k, (given, line) in enumerate(cases):
        home = tmp_path / f"case{k}"
        proc, _ = report(site, home, "01-replication-factor", **given)
        assert (proc.returncode, proc.stderr, proc.stdout) == (2, f"cassperf: error: {line}\n", "")
        assert not (home / "data").exists() and not (home / "reports").exists()
