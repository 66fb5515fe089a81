"""The sampler's parts that need no node: metric names, the nodetool fallback's parsing of real
Apache 5.0.6 nodetool output (tests/fixtures/nodetool-5.0), and the sampling loop's rules
(overruns, repeated errors, a bug in a source, rows written as samples are taken), driven by
scripted sources that stand in for a node, not for a tool."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pytest

from cassperf.cluster.access import Credentials
from cassperf.cluster.base import ClusterHandle
from cassperf.cluster.jolokia import JolokiaEndpoint
from cassperf.errors import CassperfError, ClusterError, ConfigError
from cassperf.results.store import RunWriter, load_run
from cassperf.sampler import ClusterSampler, NodeRef, Outcome, Reading, Source, split_metric
from cassperf.sampler.base import read_node
from cassperf.sampler.names import MetricName, pool_metric
from cassperf.sampler.nodetool_source import NodetoolSource, mxdump_beans, parse_levels

NODETOOL_50 = Path(__file__).resolve().parents[1] / "fixtures" / "nodetool-5.0"
WHEN = pd.Timestamp("2026-11-21T23:12:00Z")


def capture(command: str) -> str:
    return (NODETOOL_50 / f"nodetool_{command}_cassandra5.0.6_cassperf.txt").read_text()


def by_metric(readings: list[Reading]) -> dict[str, float]:
    return {r.metric: r.value for r in readings}


# ---- names -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name, parts", [
    ("live_sstables:keyspace1.standard1", MetricName("live_sstables", table="keyspace1.standard1")),
    ("sstables_level_0:ks.t", MetricName("sstables_level_0", table="ks.t")),
    ("pool_Native-Transport-Requests_pending", MetricName("pool_pending", pool="Native-Transport-Requests")),
    ("pool_MutationStage_completed", MetricName("pool_completed", pool="MutationStage")),
    ("gc_count", MetricName("gc_count")),
    ("host_net_recv_bytes", MetricName("host_net_recv_bytes")),
])
def test_metric_names_come_apart_into_base_and_table_or_pool(name, parts):
    assert split_metric(name) == parts


def test_pool_metric_takes_only_known_fields():
    assert pool_metric("ReadStage", "blocked") == "pool_ReadStage_blocked"
    with pytest.raises(ValueError, match="thread pool field 'queued' is not one of pending, blocked, active, completed"):
        pool_metric("ReadStage", "queued")


# ---- the nodetool fallback's parsing ----------------------------------------------------------

@pytest.mark.parametrize("text, levels", [
    ("[0, 1, 0, 0, 0, 0, 0, 0, 0]", [0, 1, 0, 0, 0, 0, 0, 0, 0]),
    ("[10/4, 3, 0]", [10, 3, 0]),          # a level over its limit prints count/limit
    ("[2]", [2]),
])
def test_level_lists_as_tablestats_prints_them(text, levels):
    assert parse_levels(text) == levels


@pytest.mark.parametrize("text", ["0, 1, 0", "[0, x, 0]", "[]", "[1,, 2]"])
def test_level_lists_that_are_not_are_refused(text):
    with pytest.raises(ValueError):
        parse_levels(text)


def test_tablestats_of_an_lcs_table_gives_live_sstables_and_levels():
    source = NodetoolSource(None, tables=[("ks50", "standard1")])
    readings, problems = source.parse_tablestats("node1", WHEN, capture("tablestats"))
    source.close()
    assert problems == []
    assert by_metric(readings) == {"live_sstables:ks50.standard1": 1.0,
                                   "local_writes:ks50.standard1": 20000.0, "local_reads:ks50.standard1": 4000.0,
                                   **{f"sstables_level_{n}:ks50.standard1": float(n == 1) for n in range(9)}}
    assert {r.node for r in readings} == {"node1"} and {r.time for r in readings} == {WHEN}


def test_tablestats_without_the_table_says_so():
    source = NodetoolSource(None, tables=[("ks50", "standard1"), ("ks50", "gone")])
    readings, problems = source.parse_tablestats("node1", WHEN, capture("tablestats"))
    source.close()
    assert problems == ["tablestats printed no table ks50.gone"]
    assert "live_sstables:ks50.standard1" in by_metric(readings)


def test_compactionstats_gives_pending_completed_bytes_and_running_tasks():
    source = NodetoolSource(None, tasks=True)
    readings, problems = source.parse_compactionstats("node1", WHEN, capture("compactionstats"))
    source.close()
    assert problems == []
    assert by_metric(readings) == {"compactions_pending": 0.0, "compactions_completed": 8.0,
                                   "bytes_compacted": 268874603.0, "compactions_active": 0.0}


def test_tpstats_gives_the_four_pool_fields_per_pool():
    source = NodetoolSource(None, pools=True)
    readings, _ = source.parse_tpstats("node1", WHEN, capture("tpstats"))
    source.close()
    got = by_metric(readings)
    assert {k: got[k] for k in ("pool_MutationStage_completed", "pool_ReadStage_completed",
                                "pool_CompactionExecutor_completed", "pool_MutationStage_pending",
                                "pool_MutationStage_blocked", "pool_MutationStage_active")} == {
        "pool_MutationStage_completed": 3213.0, "pool_ReadStage_completed": 893.0,
        "pool_CompactionExecutor_completed": 67.0, "pool_MutationStage_pending": 0.0,
        "pool_MutationStage_blocked": 0.0, "pool_MutationStage_active": 0.0}


def test_tpstats_dropped_section_is_summed_over_message_types():
    text = capture("tpstats")
    text = text.replace("\nREAD_RSP                          0 ", "\nREAD_RSP                          12")
    text = text.replace("\nRANGE_REQ                         0 ", "\nRANGE_REQ                         3 ")
    source = NodetoolSource(None)                # dropped only: no pools
    readings, _ = source.parse_tpstats("node1", WHEN, text)
    untouched, _ = source.parse_tpstats("node1", WHEN, capture("tpstats"))
    source.close()
    assert by_metric(readings) == {"dropped_messages": 15.0}
    assert by_metric(untouched) == {"dropped_messages": 0.0}
    assert source.commands()["tpstats"] == ["tpstats"]
    assert "tpstats" not in NodetoolSource(None, dropped=False).commands()


def test_gcstats_without_sjk_adds_up_each_calls_collections():
    source = NodetoolSource(None)
    source.use_sjk = False
    first, _ = source.parse_gc("node1", WHEN, capture("gcstats"))
    second, _ = source.parse_gc("node1", WHEN, capture("gcstats"))
    other, _ = source.parse_gc("node2", WHEN, capture("gcstats"))
    source.close()
    assert by_metric(first) == {"gc_count": 5.0, "gc_time_ms": 314.0}
    assert by_metric(second) == {"gc_count": 10.0, "gc_time_ms": 628.0}
    assert by_metric(other) == {"gc_count": 5.0, "gc_time_ms": 314.0}


# The shape `nodetool sjk mxdump -q 'java.lang:type=GarbageCollector,*'` printed on Apache 5.0.6
MXDUMP_GC = json.dumps({"beans": [
    {"name": "java.lang:name=G1 Young Generation,type=GarbageCollector", "CollectionCount": 10,
     "CollectionTime": 812, "LastGcInfo": {"duration": 266}},
    {"name": "java.lang:name=G1 Old Generation,type=GarbageCollector", "CollectionCount": 1,
     "CollectionTime": 40}]}, indent=2)
MXDUMP_TIMEOUTS = json.dumps({"beans": [
    {"name": "org.apache.cassandra.metrics:type=ClientRequest,scope=Write-LOCAL_QUORUM,name=Timeouts", "Count": 9},
    {"name": "org.apache.cassandra.metrics:type=ClientRequest,scope=Read,name=Timeouts", "Count": 2},
    {"name": "org.apache.cassandra.metrics:type=ClientRequest,scope=Write,name=Timeouts", "Count": 7}]})


def test_sjk_mxdump_gives_gc_sums_and_read_write_timeouts():
    source = NodetoolSource(None)
    gc, _ = source.parse_gc("node1", WHEN, MXDUMP_GC)
    timeouts, _ = source.parse_timeouts("node1", WHEN, MXDUMP_TIMEOUTS)
    source.close()
    assert by_metric(gc) == {"gc_count": 11.0, "gc_time_ms": 852.0}
    assert by_metric(timeouts) == {"read_timeouts": 2.0, "write_timeouts": 7.0}


def test_mxdump_output_without_beans_is_an_error_quoting_it():
    with pytest.raises(CassperfError, match="sjk mxdump printed no JSON beans: 'Unknown command sjk'"):
        mxdump_beans("Unknown command sjk")
    assert mxdump_beans('WARN something\n{"beans": []}') == []


# ---- host ------------------------------------------------------------------------------------

def test_host_cpu_is_measured_between_samples_by_the_source_itself():
    import psutil

    from cassperf.sampler.host import HostSource

    host = HostSource(hostname="box")
    end = time.monotonic() + 0.3
    while time.monotonic() < end:                 # keep a core busy
        pass
    psutil.cpu_percent(interval=None)             # another caller must not move the source's window
    readings = by_metric(host.read_host())
    assert 100 / psutil.cpu_count() * 0.5 <= readings["host_cpu_pct"] <= 100
    assert 0 <= readings["host_cpu_iowait_pct"] <= 100
    disks = {"host_disk_read_bytes", "host_disk_write_bytes"} if psutil.disk_io_counters() else set()
    assert set(readings) == {"host_cpu_pct", "host_cpu_user_pct", "host_cpu_system_pct", "host_cpu_iowait_pct",
                             "host_cpu_steal_pct", "host_load_1m", "host_mem_used_bytes",
                             "host_net_recv_bytes", "host_net_sent_bytes", *disks}
    assert {r.node for r in host.read_host()} == {"host:box"}


# ---- the sampling loop ------------------------------------------------------------------------

NODES = [NodeRef("node1", "127.0.12.9", "node1")]


class Scripted(Source):
    """Returns a counter per node; optionally slow, failing for a node, or buggy."""

    def __init__(self, name: str = "scripted", delay_s: float = 0.0, fail: str | None = None,
                 bug_after: int | None = None) -> None:
        self.name = name
        self.delay_s = delay_s
        self.fail = fail
        self.bug_after = bug_after
        self.calls = 0
        self.closed = False
        self.active = 0
        self.max_active = 0

    def sample(self, nodes: Sequence[NodeRef]) -> list[Outcome]:
        self.calls += 1
        if self.bug_after is not None and self.calls > self.bug_after:
            raise RuntimeError("a bug in the source")
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        time.sleep(self.delay_s)
        self.active -= 1

        def read(node: NodeRef) -> list[Reading]:
            if self.fail == node.name:
                raise ClusterError(f"{node.name} is down")
            return [Reading(pd.Timestamp.now(tz="UTC"), node.name, "calls", float(self.calls))]
        return [read_node(n.name, lambda n=n: read(n)) for n in nodes]

    def close(self) -> None:
        self.closed = True


def test_rows_reach_the_writer_as_samples_are_taken_and_phases_become_events(tmp_path):
    source = Scripted()
    with RunWriter(tool="sampler-test", root=tmp_path) as run:
        with ClusterSampler(None, interval_s=0.05, writer=run, sources=[source], nodes=NODES) as sampler:
            deadline = time.monotonic() + 10
            while sampler.samples < 3 and time.monotonic() < deadline:
                time.sleep(0.01)
            on_disk = (run.path / "metrics.jsonl").read_text().splitlines()
            assert len(on_disk) >= 3 * 2          # a value and a cost row per sample, before stop
            with sampler.phase("compact", "nodetool compact ks t"):
                pass
        assert source.closed
    loaded = load_run(run.path)
    calls = loaded.metrics[loaded.metrics["metric"] == "calls"]["value"].tolist()
    assert calls == [float(n) for n in range(1, sampler.samples + 1)]
    assert set(loaded.metrics["metric"]) == {"calls", "sampler_scripted_ms"}
    assert list(loaded.events["name"]) == ["compact:start", "compact:end"]
    assert loaded.manifest["sampler"] == {"interval_s": 0.05, "sources": ["scripted"], "tables": [],
                                          "nodes": ["node1"]}


def test_a_node_that_cannot_be_read_is_warned_about_once_and_counted_at_stop():
    nodes = [*NODES, NodeRef("node2", "127.0.12.10", "node2")]
    sampler = ClusterSampler(None, interval_s=0.02, sources=[Scripted(fail="node2")], nodes=nodes)
    with sampler:
        deadline = time.monotonic() + 10
        while sampler.samples < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
    n = sampler.samples
    assert [w for w in sampler.warnings if "took longer" not in w] == [     # (a loaded machine may overrun)
        "sampler: scripted on node2: ClusterError: node2 is down",
        f"sampler: scripted on node2: the error above repeated in {n} samples in all"]
    frame = sampler.frame()
    assert set(frame.loc[frame["metric"] == "calls", "node"]) == {"node1"}
    assert len(frame[(frame["node"] == "node2") & (frame["metric"] == "sampler_scripted_ms")]) == n


def test_a_sample_slower_than_the_interval_skips_ticks_and_says_so_once():
    sampler = ClusterSampler(None, interval_s=0.05, sources=[Scripted(delay_s=0.12)], nodes=NODES,
                             final_sample=False)
    with sampler:
        time.sleep(0.6)
    assert sampler.overruns >= 2
    assert sampler.warnings == ["sampler: a sample took longer than interval_s=0.05 s; skipping missed ticks "
                                "(sources: scripted)"]
    assert 3 <= sampler.samples <= 7        # one per 0.12 s, not bunched to catch up


def test_a_bug_in_a_source_stops_the_thread_and_stop_raises_it():
    source = Scripted(bug_after=2)
    sampler = ClusterSampler(None, interval_s=0.02, sources=[source], nodes=NODES).start()
    deadline = time.monotonic() + 10
    while sampler._thread is not None and sampler._thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(ClusterError, match="the sampler stopped after 2 samples: RuntimeError: a bug in the source"):
        sampler.stop()
    assert source.closed


def test_without_a_writer_rows_and_events_stay_in_memory_and_a_failed_phase_is_noted():
    sampler = ClusterSampler(None, sources=[Scripted()], nodes=NODES)
    sampler.sample_once()
    with pytest.raises(ZeroDivisionError):
        with sampler.phase("garbagecollect", "gc ks t"):
            1 / 0
    sampler.stop()
    assert list(sampler.frame()["metric"]) == ["calls", "sampler_scripted_ms"]
    events = sampler.events_frame()
    assert list(events["name"]) == ["garbagecollect:start", "garbagecollect:end"]
    assert events["detail"].iloc[1] == "gc ks t [failed: ZeroDivisionError: division by zero]"


def test_a_sampler_runs_once():
    sampler = ClusterSampler(None, interval_s=1, sources=[Scripted()], nodes=NODES, final_sample=False).start()
    with pytest.raises(ClusterError, match="already started"):
        sampler.start()
    sampler.stop()


@pytest.mark.parametrize("kwargs, message", [
    ({"interval_s": 0}, "interval_s must be a number of seconds > 0, got 0"),
    ({"interval_s": True}, "interval_s must be a number of seconds > 0, got True"),
    ({"tables": [("ks", "t; DROP")]}, "tables: each item must be (keyspace, table) of letters, digits and _, got "
                                      "('ks', 't; DROP')"),
    ({"tables": ["ks.t"]}, "tables: each item must be (keyspace, table) of letters, digits and _, got 'ks.t'"),
    ({"jmx": "rmi"}, "jmx must be one of auto, jolokia, nodetool, none; got 'rmi'"),
])
def test_bad_settings_are_config_errors_naming_the_setting(kwargs, message):
    with pytest.raises(ConfigError) as err:
        ClusterSampler(None, sources=[], nodes=NODES, **kwargs)
    assert str(err.value) == message


def test_sampling_while_the_thread_samples_is_serialised():
    source = Scripted(delay_s=0.01)
    sampler = ClusterSampler(None, interval_s=0.01, sources=[source], nodes=NODES).start()
    threads = [threading.Thread(target=sampler.sample_once) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sampler.stop()
    assert source.max_active == 1 and source.calls >= 6       # never two samples at once


# ---- what the sampler asks of a cluster handle ------------------------------------------------

class _Handle(ClusterHandle):
    """A cluster handle whose nodes run elsewhere; `agents` gives it Jolokia endpoints."""

    def __init__(self, agents: bool) -> None:
        super().__init__()
        self.agents = agents

    contact_points = property(lambda self: ["127.0.4.1"])
    port = property(lambda self: 9042)
    local_dc = property(lambda self: "dc1")

    def _driver_kwargs(self) -> dict:
        return {}

    def nodetool(self, node, *args, timeout=120.0) -> str:
        return f"nodetool {node} {' '.join(args)}"

    def jolokia_endpoint(self, node):
        if not self.agents:
            return super().jolokia_endpoint(node)
        return JolokiaEndpoint(f"http://{node}:8778/jolokia", Credentials("u", "p"))


def test_a_handle_without_agents_is_sampled_by_nodetool_as_a_reader_and_one_with_agents_by_jolokia():
    plain = ClusterSampler(_Handle(agents=False), nodes=NODES, virtual_tables=False, host=False)
    assert [s.name for s in plain.sources] == ["nodetool"]
    assert _Handle(agents=False).nodetool_read("n1", "tpstats") == "nodetool n1 tpstats"   # the default
    assert _Handle(agents=False).local_nodes() is None
    with pytest.raises(ConfigError, match="jmx='jolokia' needs a cluster whose nodes have a Jolokia agent"):
        ClusterSampler(_Handle(agents=False), nodes=NODES, jmx="jolokia", virtual_tables=False, host=False)
    plain.stop()

    with_agents = ClusterSampler(_Handle(agents=True), nodes=NODES, virtual_tables=False, host=False)
    [source] = with_agents.sources
    assert source.name == "jolokia"
    assert source.endpoint_for(NODES[0]) == JolokiaEndpoint(f"http://{NODES[0].handle}:8778/jolokia",
                                                            Credentials("u", "p"))
    with_agents.stop()
    templated = ClusterSampler(_Handle(agents=False), nodes=NODES, virtual_tables=False, host=False,
                               jolokia_url="http://{address}:8778/jolokia")
    assert templated.sources[0].endpoint_for(NODES[0]) == JolokiaEndpoint(f"http://{NODES[0].address}:8778/jolokia")
    templated.stop()


def test_the_sampler_imports_nothing_of_the_local_cluster():
    import ast

    package = Path(__file__).resolve().parents[2] / "lib" / "cassperf" / "sampler"
    imported = set()
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
    assert "cassperf.cluster.local" not in imported and "cassperf.cluster" not in imported
