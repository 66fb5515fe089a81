"""Resources on a real node (127.0.43.1): a page-cache bound holds under reads of a table several
times its size, and those reads reach the disk; the same node unbounded serves them from its page
cache. And a measured run stores the resource metrics the analysis reads, with plausible values."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
from pathlib import Path

import psutil
import pytest

from cassperf.analysis.resources import limit_of, node_resources, run_resources
from cassperf.analysis.windows import run_window
from cassperf.cluster import cgroups
from cassperf.workload.run import run_spec
from cassperf.workload.spec import Population, Rate, WorkloadSpec

# alone: drops the page cache and asserts disk and page-cache figures; make test runs it with no other test beside it
pytestmark = [pytest.mark.cluster, pytest.mark.alone]

KS = "pcbound"
ROWS = 75_000                 # x 4 KiB: about 300 MiB of SSTables, 4.7 x the bound
BOUND_MB = 64
READ_MB_S = 20                # the bounded node's disk reads throttled too
#: how far over the bound a sample may find the page cache: the governor's hysteresis plus what the
#: node's own memory may shrink by between two of its checks
SLACK_MB = 8
SAMPLER = {"tables": [(KS, "standard1")], "interval_s": 0.5}


def drop_caches() -> None:
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("1")


def resident_mb(folder: Path) -> float:
    """MiB of the folder's files in the page cache; a file removed between the listing and fincore
    (a compaction's) is left out."""
    files = [str(p) for p in folder.rglob("*") if p.is_file()]
    done = subprocess.run(["fincore", "--bytes", "--noheadings", "--raw", "-o", "RES", *files],
                          capture_output=True, text=True)
    gone = [line for line in done.stderr.splitlines() if line.strip()]
    assert all("No such file or directory" in line for line in gone), done.stderr
    return sum(int(x) for x in done.stdout.split()) / 2**20


def reads(cluster, root: Path, seconds: int = 6):
    spec = WorkloadSpec(op="read", duration=seconds, concurrency=32, keyspace=KS, interval_s=0.5, warmup=False,
                        population=Population("uniform", 1, ROWS))
    run = run_spec(spec, cluster, sampler=SAMPLER, progress=False, warmup_s=0, root=root)
    window = run_window(run)
    return run, run_resources(run, window.start_s, window.end_s)


def test_a_bounded_node_keeps_its_page_cache_and_reads_from_disk_and_unbounded_it_does_not(make_cluster, tmp_path):
    why = cgroups.problem(cgroups.current(), memory=True, io=True)
    if why is not None:
        pytest.skip(f"no memory cgroups here: {why}")
    if shutil.which("fincore") is None:
        pytest.skip("fincore (util-linux) is not installed")
    bounded = make_cluster("pcb", "dc1:1", "127.0.43.1", page_cache_mb=BOUND_MB, read_mb_s=READ_MB_S)
    bounded.start()
    pid = bounded.nodes[0].pid()
    assert pid is not None
    node_cgroup = cgroups.of_process(pid, "node1")
    assert node_cgroup is not None
    # no class-data archive: its mapped pages would be page cache inside the bound
    args = psutil.Process(pid).cmdline()
    assert [a for a in args if "SharedArchiveFile" in a or "DumpLoadedClassList" in a] == []
    assert bounded.bounds_line() == (f"page cache bound {BOUND_MB} MiB per node (memory cgroup); disk reads "
                                     f"throttled to {READ_MB_S} MB/s per node (block I/O cgroup)")
    run_spec(WorkloadSpec(op="write", n=ROWS, concurrency=32, keyspace=KS, interval_s=1.0, warmup=False), bounded,
             progress=False, warmup_s=0, root=tmp_path)
    bounded.nodetool(1, "flush", KS)
    # the bound is on clean page cache; compaction's output is dirty until written back, which counts as the
    # node's own memory but shows in its page cache: no compaction under the reads measured here
    bounded.nodetool(1, "disableautocompaction", KS)
    bounded.nodetool(1, "stop", "COMPACTION")
    # and none after the restart below: nodetool's switch does not outlive the node (CI of 5380aea: the
    # unbounded node compacted the table's 5 SSTables while they were being counted)
    bounded.session().execute(f"ALTER TABLE {KS}.standard1 WITH compaction = "
                              "{'class': 'SizeTieredCompactionStrategy', 'enabled': 'false'}")
    data = bounded.nodes[0].layout.data / KS
    size_mb = sum(p.stat().st_size for p in data.rglob("*") if p.is_file()) / 2**20
    assert size_mb > 4 * BOUND_MB
    drop_caches()
    reads(bounded, tmp_path)                              # cold: fills what the bound allows
    run, res = reads(bounded, tmp_path)                   # and again: still from disk
    [bound] = bounded.node_bounds()
    limits = run.metrics[run.metrics["metric"] == "node_memory_limit_bytes"]["value"]
    cache = run.metrics[run.metrics["metric"] == "node_page_cache_bytes"]["value"] / 2**20
    assert cache.max() <= BOUND_MB + SLACK_MB, cache.describe()
    assert res["page_cache_max_mb"] <= BOUND_MB + SLACK_MB
    assert not limits.empty and bound.room_bytes is not None
    assert abs(bound.room_bytes / 2**20 - BOUND_MB) <= SLACK_MB
    assert resident_mb(data) <= BOUND_MB + SLACK_MB       # nothing else holds the table's pages
    reads_done = res["ops"]
    assert res["node_read_mb"] * 1e6 >= 0.5 * reads_done * 4096, res    # most reads reached the disk
    window = run_window(run)
    assert res["node_read_mb"] / window.length_s <= READ_MB_S * 1.1       # at the throttle's pace
    assert bounded.nodes[0].pid() == pid                  # never killed: the same JVM throughout
    if node_cgroup.version == "v1":
        assert "oom_kill 0" in (node_cgroup.memory / "memory.oom_control").read_text()
    assert set(bounded.bounds.stalls()) == {"node1"}      # waits at the limit are counted (a few, under load)
    bounded.stop()
    assert not any(Path(f).exists() for f in bounded.bounds.folders())

    free = make_cluster("pcb", "dc1:1", "127.0.43.1")      # the same node and data, no bound
    free.start()
    assert free.bounds_line() == "page cache not bounded: each node may use the host's whole page cache"
    drop_caches()
    subprocess.run(["cat", *map(str, (p for p in data.rglob("*") if p.is_file()))], stdout=subprocess.DEVNULL,
                   check=True)
    # a first pass, as the bounded node had: the caches dropped above took the node's own jars with them, and a
    # fresh JVM reads classes from them as the read path first runs (CI of 6f13d3c: 7.3 MB of such reads, 6% of the
    # bounded node's 117 MB, in a trickle through the one measured pass)
    reads(free, tmp_path, seconds=3)
    _, res_free = reads(free, tmp_path)
    print(f"\ndisk reads in the measured pass: bounded {res['node_read_mb']:.1f} MB, "
          f"unbounded {res_free['node_read_mb']:.1f} MB")
    assert math.isnan(res_free["page_cache_max_mb"])       # no cgroup of its own: not measured
    assert resident_mb(data) > 2 * BOUND_MB
    assert res_free["node_read_mb"] < 0.05 * res["node_read_mb"], (res_free["node_read_mb"], res["node_read_mb"])


def test_a_run_stores_the_resource_metrics(make_cluster, tmp_path):
    cluster = make_cluster("use", "dc1:1", "127.0.43.1")
    cluster.start()
    spec = WorkloadSpec(op="write", duration=4, concurrency=16, keyspace="usecheck", interval_s=0.5,
                        rate=Rate.parse("fixed=1000/s"), warmup=False)

    def flush(writer):
        import time
        time.sleep(1.5)
        cluster.nodetool(1, "flush", "usecheck")

    run = run_spec(spec, cluster, sampler={"tables": [("usecheck", "standard1")], "interval_s": 1.0},
                   during=flush, progress=False, warmup_s=0.5, root=tmp_path)
    names = set(run.metrics["metric"].astype(str))
    assert {"host_cpu_user_pct", "host_cpu_system_pct", "host_cpu_steal_pct", "process_read_bytes",
            "process_write_bytes", "client_cpu_s", "dropped_messages", "local_writes:usecheck.standard1",
            "local_reads:usecheck.standard1"} <= names
    nodes = set(run.metrics["node"].astype(str))
    assert {"client:engine", "client:worker-0"} <= nodes
    assert any(n.startswith("disk:") for n in nodes) or os.major(os.stat(cluster.nodes[0].layout.data).st_dev) == 0
    window = run_window(run)
    res = run_resources(run, window.start_s, window.end_s)
    assert res["host_cpu_pct"] > 0 and res["host_cpu_user_pct"] > 0
    assert res["node_cpu_pct"] > 0 and res["client_cpu_pct"] > 0 and res["client_cpu_max_pct"] > 0
    assert res["node_write_mb"] > 0                          # the flush wrote an SSTable
    assert res["dropped_messages"] == 0 and res["timeouts"] == 0
    assert res["local_writes_per_write"] == pytest.approx(1.0, abs=0.15)    # RF 1: one replica per write
    assert math.isfinite(res["gc_pause_pct"]) and 0 <= res["gc_pause_pct"] < 100
    assert run.manifest["engine"]["fell_behind"] is False
    assert limit_of(res).measured
    per_node = node_resources(run, window.start_s, window.end_s)
    assert per_node["node"].tolist() == ["node1"]
    assert per_node["local_writes"].iloc[0] > 0
    costs = run.metrics[run.metrics["metric"].str.startswith("sampler_")].groupby("metric")["value"].median()
    print(f"\nresources over {window.start_s:.1f}-{window.end_s:.1f} s:",
          {k: round(v, 2) for k, v in res.items() if math.isfinite(v)}, f"-> {limit_of(res).label}")
    print("median sampling cost per source and sample (ms):", costs.round(2).to_dict())
