"""The sampler's resource rows without a node: the host CPU split, /proc/diskstats, a process's
storage bytes, the client's processes (real child processes), and the Jolokia answers for dropped
messages and local reads and writes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import namedtuple
from pathlib import Path

import pandas as pd
import pytest

from cassperf.cluster.access import JOLOKIA_POLICY
from cassperf.sampler import NodeRef
from cassperf.sampler.client import ClientProcesses, ClientSource
from cassperf.sampler.host import DiskCounters, HostSource, cpu_split, device_of, diskstats
from cassperf.sampler.jolokia_source import JolokiaSource

Times = namedtuple("Times", "user nice system idle iowait irq softirq steal guest guest_nice")


def test_cpu_split_of_two_readings() -> None:
    before = Times(100, 0, 50, 800, 10, 0, 0, 0, 0, 0)
    after = Times(160, 10, 65, 880, 20, 2, 3, 20, 30, 0)      # 200 s of CPU in all (guest is inside user)
    # busy: 200 - idle 80 - iowait 10; user 60 + nice 10; system 15 + irq 2 + softirq 3
    assert cpu_split(before, after) == {"host_cpu_pct": 55.0, "host_cpu_user_pct": 35.0, "host_cpu_system_pct": 10.0,
                                        "host_cpu_iowait_pct": 5.0, "host_cpu_steal_pct": 10.0}
    assert cpu_split(before, before) == {}


def test_cpu_split_leaves_out_what_a_platform_lacks() -> None:
    Mac = namedtuple("Mac", "user nice system idle")
    assert cpu_split(Mac(0, 0, 0, 0), Mac(30, 0, 10, 60)) == {"host_cpu_pct": 40.0, "host_cpu_user_pct": 30.0,
                                                              "host_cpu_system_pct": 10.0}


# a line of this machine's /proc/diskstats (kernel 6.x: 20 fields)
DISKSTATS = """ 254       0 vda 189704 61901 14051738 45192 211057 287223 33949296 245263 0 60724 313162 38952 44 14095920 7387 50053 15318
   7       0 loop0 1341 1 68406 223 1453 3096 159644 1570 0 1652 3038 20 0 2228250 2 1060 1242
"""


def test_diskstats_counters_of_the_devices_asked_for() -> None:
    assert diskstats(DISKSTATS, ["vda", "sdz"]) == {
        "vda": DiskCounters(reads=189704, read_bytes=14051738 * 512, writes=211057, write_bytes=33949296 * 512,
                            busy_ms=60724)}


def test_device_of_a_folder() -> None:
    assert device_of("/nonexistent/folder") is None
    if Path("/dev/shm").is_dir() and os.major(os.stat("/dev/shm").st_dev) == 0:
        assert device_of("/dev/shm") is None                     # tmpfs: no block device
    root = device_of("/")
    if root is not None:
        st = os.stat("/")
        assert Path(os.readlink(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")).name == root


def test_a_nodes_process_gives_its_storage_bytes(tmp_path: Path) -> None:
    script = (f"import os; f = open({str(tmp_path / 'x')!r}, 'wb'); f.write(os.urandom(1 << 20)); f.flush(); "
              "os.fsync(f.fileno()); print('ok', flush=True); import time; time.sleep(30)")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ok"
        node = NodeRef("node1", "127.0.0.1", "node1", pid=lambda: proc.pid, storage=(str(tmp_path),))
        host = HostSource(hostname="box")
        host.prime([node])
        got = {r.metric: r.value for r in host.read_process(node)}
    finally:
        proc.kill()
        proc.wait()
    assert {"process_cpu_pct", "process_rss_bytes", "process_read_bytes", "process_write_bytes"} <= set(got)
    assert got["process_write_bytes"] >= 1 << 20
    assert "node_page_cache_bytes" not in got                     # no cgroup of its own: none read
    assert host.devices == ([device_of(str(tmp_path))] if device_of(str(tmp_path)) else [])


def test_the_client_source_reads_each_process_and_a_tools_children() -> None:
    tool = subprocess.Popen(["/bin/sh", "-c", "sleep 30 & wait"])
    try:
        deadline = time.monotonic() + 5
        import psutil

        # until the child has exec'd sleep (forked, it is a second sh for a moment)
        while not any(c.name() == "sleep" for c in psutil.Process(tool.pid).children()) \
                and time.monotonic() < deadline:
            time.sleep(0.02)
        clients = ClientProcesses()
        clients.add("engine", os.getpid())
        clients.add("cassandra-stress", tool.pid, tree=True)
        source = ClientSource(clients)
        first = source.read()
        second = source.read()
    finally:
        tool.kill()
        tool.wait()
    nodes = [r.node for r in first]
    sleeper = [n for n in nodes if n.startswith("client:cassandra-stress/sleep-")]
    assert nodes.count("client:engine") == 2 and nodes.count("client:cassandra-stress") == 2 and len(set(sleeper)) == 1
    assert all(r.metric == "client_cpu_s" for r in first)
    zero = [r for r in first if r.node == "client:engine"][0]
    assert zero.value == 0.0 and zero.time == pd.Timestamp(psutil.Process().create_time(), unit="s", tz="UTC")
    assert [r.node for r in second].count("client:engine") == 1      # the zero row only once
    assert ClientSource(ClientProcesses()).sample([]) == []


# the answers a Jolokia agent gives to JolokiaSource.requests() for one table (Cassandra 5.0.6 shapes)
def jolokia_answers(source: JolokiaSource) -> list[dict]:
    gc = {"java.lang:name=G1 Young Generation,type=GarbageCollector": {"CollectionCount": 4, "CollectionTime": 120}}
    dropped = {"org.apache.cassandra.metrics:name=Dropped,scope=MUTATION,type=DroppedMessage": {"Count": 7},
               "org.apache.cassandra.metrics:name=Dropped,scope=READ,type=DroppedMessage": {"Count": 2}}
    values = [gc, 0, 3, 1000, 0, 0, dropped, 2, 5000, 800, None]
    reqs = source.requests()
    assert len(reqs) == len(values)
    return [{"status": 200, "value": v, "request": r} for v, r in zip(values, reqs, strict=True)]


def test_jolokia_gives_dropped_messages_and_local_reads_and_writes() -> None:
    source = JolokiaSource(lambda node: None, tables=[("ks", "t")])   # type: ignore[arg-type,return-value]
    mbeans = [r["mbean"] for r in source.requests()]
    assert "org.apache.cassandra.metrics:type=DroppedMessage,scope=*,name=Dropped" in mbeans
    assert "org.apache.cassandra.metrics:type=Table,keyspace=ks,scope=t,name=WriteLatency" in mbeans
    readings, problems = source._readings("node1", pd.Timestamp("2026-11-27T12:00:00Z"), jolokia_answers(source))
    got = {r.metric: r.value for r in readings}
    assert problems == []
    assert {k: got[k] for k in ("dropped_messages", "local_writes:ks.t", "local_reads:ks.t", "live_sstables:ks.t",
                                "gc_time_ms")} == {"dropped_messages": 9.0, "local_writes:ks.t": 5000.0,
                                                   "local_reads:ks.t": 800.0, "live_sstables:ks.t": 2.0,
                                                   "gc_time_ms": 120.0}


def test_the_agents_policy_allows_dropped_messages() -> None:
    assert "<name>org.apache.cassandra.metrics:type=DroppedMessage,*</name>" in JOLOKIA_POLICY


@pytest.mark.parametrize("metric", ["host_cpu_user_pct", "process_read_bytes", "node_page_cache_bytes",
                                    "disk_busy_ms", "client_cpu_s", "dropped_messages", "local_writes"])
def test_every_new_metric_is_documented(metric: str) -> None:
    from cassperf.sampler.names import HOST_METRICS, METRICS

    assert metric in {**HOST_METRICS, **METRICS}
