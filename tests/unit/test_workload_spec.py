"""WorkloadSpec: what a valid spec holds, and the exact error each bad value gets."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cassperf.errors import ConfigError
from cassperf.workload import (
    CONSISTENCY_LEVELS,
    Compaction,
    Compression,
    Population,
    Rate,
    Ratio,
    Replication,
    WorkloadSpec,
    WorkloadSpecError,
    warn_replication,
)
from cassperf.workload import spec as spec_module
from tests.unit.test_analysis_imports import imported_names

ALL_LEVELS = "ONE, TWO, THREE, QUORUM, ALL, LOCAL_ONE, LOCAL_QUORUM, EACH_QUORUM, SERIAL, LOCAL_SERIAL"


def error_of(**kwargs: object) -> WorkloadSpecError:
    with pytest.raises(WorkloadSpecError) as info:
        WorkloadSpec(**kwargs)  # type: ignore[arg-type]
    return info.value


# ------------------------------------------------------------------------------ defaults

def test_defaults_are_cassandra_stress_defaults_and_the_project_row():
    spec = WorkloadSpec(n=1000)
    assert (spec.op, spec.cl, spec.concurrency, spec.rate) == ("write", "LOCAL_ONE", 200, Rate())
    assert (spec.column_count, spec.column_size, spec.row_bytes) == (5, 818, 4090)
    assert (spec.keyspace, spec.replication, spec.population) == ("keyspace1", None, None)
    assert (spec.warmup, spec.interval_s, spec.prepared, spec.ratio) == (True, 1.0, False, None)


def test_spec_is_frozen_hashable_and_compares_by_value():
    a = WorkloadSpec(n=10, cl="quorum")
    b = WorkloadSpec(n=10, cl="QUORUM")
    assert a == b and hash(a) == hash(b)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.n = 20  # type: ignore[misc]


def test_errors_are_config_errors_that_name_the_field():
    err = error_of(n=10, concurrency=0)
    assert isinstance(err, ConfigError)
    assert err.field == "concurrency"
    assert str(err) == "concurrency (threads) must be a whole number > 0, got 0"


# ------------------------------------------------------------------------------ op and ratio

def test_mixed_without_ratio_gets_cassandra_stress_default_one_to_one():
    assert WorkloadSpec(op="mixed", n=10).ratio == Ratio(write=1, read=1)


def test_ratio_from_mapping_in_any_case():
    spec = WorkloadSpec(op="MIXED", n=10, ratio={"Read": 5, "write": 4, "delete": 1})
    assert spec.op == "mixed"
    assert spec.ratio == Ratio(write=4, read=5, delete=1)
    assert spec.ratio.items() == [("write", 4), ("read", 5), ("delete", 1)]


def test_all_zero_ratio_is_an_error():
    err = error_of(op="mixed", n=10, ratio={"write": 0, "read": 0})
    assert err.field == "ratio"
    assert str(err) == "ratio(write=0,read=0) is all zero: give at least one weight > 0 (of write, read, delete)"
    with pytest.raises(WorkloadSpecError, match=r"^ratio\(write=0,read=0,delete=0\) is all zero"):
        Ratio()


@pytest.mark.parametrize("weights, message", [
    ({"write": -1, "read": 2}, "ratio weight write=-1 must be a whole number >= 0"),
    ({"write": 1.5}, "ratio weight write=1.5 must be a whole number >= 0"),
    ({"update": 1}, "ratio operation 'update' is not one of write, read, delete"),
])
def test_bad_ratio_weights(weights, message):
    assert str(error_of(op="mixed", n=10, ratio=weights)) == message


def test_ratio_only_for_mixed():
    assert str(error_of(op="read", n=10, ratio={"read": 1})) == "ratio is only for op=mixed, not op=read"


def test_unknown_op_lists_the_ops():
    err = error_of(op="wrte", n=10)
    assert err.field == "op"
    assert str(err) == "operation 'wrte' is not one of write, read, mixed, delete (did you mean write?)"


# ------------------------------------------------------------------------------ n / duration

@pytest.mark.parametrize("given, seconds", [("30s", 30), ("10m", 600), ("2h", 7200), ("10M", 600), (45, 45)])
def test_duration_forms(given, seconds):
    assert WorkloadSpec(duration=given).duration == seconds


@pytest.mark.parametrize("given", ["10", "10x", "0s", "-5s", -5, 0, True, "1.5m"])
def test_bad_durations(given):
    err = error_of(duration=given)
    assert err.field == "duration"
    assert "duration" in str(err) and repr(given) in str(err)


def test_n_and_duration_both_given():
    err = error_of(n=10, duration="10m")
    assert (err.field, str(err)) == ("n", "n and duration are both given: give n (an op count) or duration, not both")


def test_neither_n_nor_duration():
    assert str(error_of()) == "give n (an op count) or duration (seconds, or like '30s', '10m')"


@pytest.mark.parametrize("n", [0, -1, 2.5, True])
def test_n_must_be_a_positive_whole_number(n):
    assert str(error_of(n=n)) == f"n (op count) must be a whole number > 0, got {n!r}"


# ------------------------------------------------------------------------------ consistency

@pytest.mark.parametrize("level", CONSISTENCY_LEVELS)
def test_every_consistency_level_case_insensitive(level):
    assert WorkloadSpec(n=1, cl=level.lower()).cl == level


def test_misspelt_consistency_level_suggests_the_nearest():
    err = error_of(n=1, cl="LOCAL_QUARUM")
    assert err.field == "cl"
    assert str(err) == f"consistency level 'LOCAL_QUARUM' is not one of {ALL_LEVELS} (did you mean LOCAL_QUORUM?)"


def test_unrelated_consistency_level_has_no_suggestion():
    assert str(error_of(n=1, cl="BANANA")) == f"consistency level 'BANANA' is not one of {ALL_LEVELS}"


def test_any_is_not_offered():
    # cassandra-stress accepts ANY for writes; the workbook's experiments never use it.
    assert "is not one of" in str(error_of(n=1, cl="ANY"))


# ------------------------------------------------------------------------------ rate

@pytest.mark.parametrize("text, rate", [
    ("unlimited", Rate()),
    ("throttle=500/s", Rate("throttle", 500)),
    ("FIXED=2000/s", Rate("fixed", 2000)),
    ("fixed=0/s", Rate()),        # 0/s is "no limit" to cassandra-stress
    ("throttle=0/s", Rate()),
])
def test_rate_forms(text, rate):
    assert Rate.parse(text) == rate
    assert WorkloadSpec(n=1, rate=text).rate == rate  # type: ignore[arg-type]


def test_fixed_rate_is_response_time():
    assert Rate("fixed", 10).is_fixed and not Rate("throttle", 10).is_fixed


@pytest.mark.parametrize("text, message", [
    ("fixed=-5/s", "rate fixed=-5/s: the rate must be a whole number of ops/s > 0 (e.g. fixed=2000/s)"),
    ("throttle=1.5/s", "rate throttle=1.5/s: the rate must be a whole number of ops/s > 0 (e.g. throttle=2000/s)"),
    ("fast", "rate 'fast' is not one of unlimited, throttle=X/s, fixed=X/s"),
    ("fixed=100", "rate 'fixed=100' is not one of unlimited, throttle=X/s, fixed=X/s"),
])
def test_bad_rates(text, message):
    with pytest.raises(WorkloadSpecError) as info:
        Rate.parse(text)
    assert (info.value.field, str(info.value)) == ("rate", message)


def test_rate_constructor_checks_the_number():
    with pytest.raises(WorkloadSpecError, match=r"^rate fixed=0/s: the rate must be"):
        Rate("fixed", 0)
    with pytest.raises(WorkloadSpecError, match=r"^rate mode 'steady' is not one of unlimited, throttle, fixed$"):
        Rate("steady", 5)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ population

@pytest.mark.parametrize("text, pop", [
    ("seq=1..10000000", Population("seq", 1, 10_000_000)),
    ("seq=1..10M", Population("seq", 1, 10_000_000)),
    ("uniform(1..1000)", Population("uniform", 1, 1000)),
    ("dist=UNIFORM(1..1000)", Population("uniform", 1, 1000)),
    ("gaussian(1..1000)", Population("gaussian", 1, 1000)),
    ("GAUSSIAN(1..1000,500,100)", Population("gaussian", 1, 1000, 500.0, 100.0)),
    ("dist=normal(1..1000,500.5,0.25)", Population("gaussian", 1, 1000, 500.5, 0.25)),
])
def test_population_forms(text, pop):
    assert Population.parse(text) == pop


@pytest.mark.parametrize("text, message", [
    ("seq=10..1", "population seq(10..1): low must be <= high"),
    ("uniform(5..4)", "population uniform(5..4): low must be <= high"),
    ("zipf(1..10)", "population distribution 'zipf' is not one of seq, uniform, gaussian"),
    ("gaussian(1..10,5)", "population 'gaussian(1..10,5)': expected gaussian(a..b) or gaussian(a..b,mean,stdev)"),
    ("uniform(1..10,5,2)", "population 'uniform(1..10,5,2)': expected uniform(a..b)"),
    ("gaussian(1..10,5,0)", "population gaussian stdev must be a finite number > 0, got 0.0"),
    ("gaussian(1..10,x,1)", "population 'gaussian(1..10,x,1)': mean and stdev must be numbers"),
    ("1..10", "population '1..10' is not one of seq=a..b, uniform(a..b), gaussian(a..b[,mean,stdev])"),
])
def test_bad_populations(text, message):
    with pytest.raises(WorkloadSpecError) as info:
        WorkloadSpec(n=1, population=text)  # type: ignore[arg-type]
    assert (info.value.field, str(info.value)) == ("population", message)


def test_mean_needs_stdev():
    with pytest.raises(WorkloadSpecError, match="^population gaussian takes both mean and stdev, or neither$"):
        Population("gaussian", 1, 10, mean=5.0)


# ------------------------------------------------------------------------------ schema options

def test_replication_shorthands():
    assert WorkloadSpec(n=1, replication=3).replication == Replication.simple(3)  # type: ignore[arg-type]
    nts = WorkloadSpec(n=1, replication={"dc1": 3, "dc2": 2}).replication  # type: ignore[arg-type]
    assert nts == Replication("NetworkTopologyStrategy", dc_factors=(("dc1", 3), ("dc2", 2)))
    assert nts.factors() == {"dc1": 3, "dc2": 2}
    assert Replication("org.apache.cassandra.locator.SimpleStrategy", factor=2).strategy == "SimpleStrategy"
    # one DC without replicas is a real layout (dc2 holds none); only all-zero is refused
    assert Replication.network_topology(dc1=3, dc2=0).factors() == {"dc1": 3, "dc2": 0}


@pytest.mark.parametrize("build, message", [
    (lambda: Replication("NetworkTopolgyStrategy", dc_factors=(("dc1", 3),)),
     "replication strategy 'NetworkTopolgyStrategy' is not one of SimpleStrategy, NetworkTopologyStrategy "
     "(did you mean NetworkTopologyStrategy?)"),
    (lambda: Replication.network_topology(dc1=-1), "replication factor for dc1 must be a whole number >= 0, got -1"),
    (lambda: Replication.network_topology({"dc 1": 3}),
     "data centre name 'dc 1' must be letters, digits, '_', '-', '.' (and not class, factor, replication_factor, "
     "strategy)"),
    (lambda: Replication("NetworkTopologyStrategy"), "NetworkTopologyStrategy needs at least one DC, e.g. {'dc1': 3}"),
    (lambda: Replication("SimpleStrategy", factor=3, dc_factors=(("dc1", 3),)),
     "SimpleStrategy takes one replication factor, not per-DC factors (use NetworkTopologyStrategy for those)"),
    # a factor of 0 stores nothing: every operation of the run would fail (issue 11, item 3)
    (lambda: Replication.simple(0),
     "replication factor 0 keeps no copy of any row, so every request fails; give a factor of 1 or more"),
    (lambda: WorkloadSpec(n=1, replication=0),  # type: ignore[arg-type]
     "replication factor 0 keeps no copy of any row, so every request fails; give a factor of 1 or more"),
    (lambda: Replication.network_topology(dc1=0, dc2=0),
     "replication factor 0 in every data centre (dc1=0, dc2=0) keeps no copy of any row, so every request "
     "fails; give at least one DC a factor of 1 or more, e.g. dc1=1"),
])
def test_bad_replication(build, message):
    with pytest.raises(WorkloadSpecError) as info:
        build()
    assert (info.value.field, str(info.value)) == ("replication", message)


@pytest.mark.parametrize("alias, cls", [("LCS", "LeveledCompactionStrategy"), ("stcs", "SizeTieredCompactionStrategy"),
                                        ("UCS", "UnifiedCompactionStrategy"),
                                        ("LeveledCompactionStrategy", "LeveledCompactionStrategy")])
def test_compaction_aliases(alias, cls):
    assert Compaction(alias).strategy == cls


def test_compaction_options_keep_order_and_text():
    comp = Compaction.of("LCS", sstable_size_in_mb=160, fanout_size=10)
    assert comp.options == (("sstable_size_in_mb", "160"), ("fanout_size", "10"))


def test_bad_compaction():
    with pytest.raises(WorkloadSpecError) as info:
        Compaction("XCS")
    assert str(info.value).startswith("compaction strategy 'XCS' is not one of LeveledCompactionStrategy, "
                                      "SizeTieredCompactionStrategy, UnifiedCompactionStrategy,")
    with pytest.raises(WorkloadSpecError, match=r"^compaction option sstable_size_in_mb='1,6': the value must be"):
        Compaction("LCS", (("sstable_size_in_mb", "1,6"),))


def test_compression():
    assert Compression("lz4", 16) == Compression("LZ4Compressor", 16)
    with pytest.raises(WorkloadSpecError) as info:
        Compression("LZ4", 12)
    assert str(info.value) == "chunk_length_in_kb must be a power of two > 0 (4, 16, 64...), got 12"
    with pytest.raises(WorkloadSpecError, match=r"^compressor 'LZ5' is not one of .*\(did you mean LZ4\?\)$"):
        Compression("LZ5")


@pytest.mark.parametrize("name, value, message", [
    ("replication", True, "replication must be a Replication (or None), got True"),
    ("compaction", 3, "compaction must be a Compaction (or None), got 3"),
    ("population", 10, "population must be a Population (or None), got 10"),
])
def test_wrong_types_are_named(name, value, message):
    err = error_of(n=1, **{name: value})
    assert (err.field, str(err)) == (name, message)


def test_keyspace_must_be_lowercase():
    err = error_of(n=1, keyspace="KS1")
    assert (err.field, str(err)) == ("keyspace", "keyspace 'KS1' must be lowercase letters, digits and _, "
                                                 "starting with a letter, at most 48 characters")


# ------------------------------------------------------------------------------ client options

def test_paths_cannot_hold_spaces():
    err = error_of(n=1, hdr_file="my run.hdr")
    assert err.field == "hdr_file"
    assert str(err).startswith("hdr_file 'my run.hdr' must be a path of letters, digits")


def test_paths_cannot_end_in_a_separator_cassandra_stress_would_glue():
    # '-log file=a= -mode ...' would become 'file=a=-mode' after cassandra-stress's repair
    assert error_of(n=1, log_file="a=").field == "log_file"
    assert error_of(n=1, hdr_file="a,").field == "hdr_file"
    assert WorkloadSpec(n=1, hdr_file="runs/a=b,c.hdr").hdr_file == "runs/a=b,c.hdr"


def test_graph_options_need_a_graph_file():
    err = error_of(n=1, graph_revision="rf3")
    assert (err.field, str(err)) == ("graph_revision", "graph_revision needs graph_file "
                                                       "(cassandra-stress -graph requires file=)")


@pytest.mark.parametrize("interval, message", [
    (0, "interval_s must be > 0 seconds in whole milliseconds, got 0"),
    (0.0005, "interval_s must be > 0 seconds in whole milliseconds, got 0.0005"),
])
def test_bad_interval(interval, message):
    assert str(error_of(n=1, interval_s=interval)) == message


def test_sub_second_interval():
    assert WorkloadSpec(n=1, interval_s=0.5).interval_s == 0.5


def test_node_names():
    assert WorkloadSpec(n=1, nodes=["127.0.0.1", "127.0.0.2"]).nodes == ("127.0.0.1", "127.0.0.2")  # type: ignore[arg-type]
    assert str(error_of(n=1, nodes=("-x",))) == "node '-x' must be a host name or address (no ',', '=', spaces)"


# ------------------------------------------------------------------------------ warn_replication

def test_no_warnings_when_every_dc_has_enough_nodes():
    spec = WorkloadSpec(n=1, cl="LOCAL_QUORUM", replication={"dc1": 3, "dc2": 3}, local_dc="dc1")
    assert warn_replication(spec, {"dc1": 3, "dc2": 4}) == []


def test_rf3_on_two_nodes_breaks_three_and_all_but_not_quorum():
    # Cassandra counts blockFor from the configured RF: QUORUM of 3 is 2, which 2 nodes can hold.
    spec = WorkloadSpec(n=1, cl="QUORUM", replication={"dc1": 3})
    assert warn_replication(spec, {"dc1": 2}) == ["RF 3 in dc1 with 2 nodes: THREE, ALL requests will fail"]


def test_rf3_on_one_node_breaks_quorum_and_names_the_spec_level():
    spec = WorkloadSpec(n=1, cl="LOCAL_QUORUM", replication={"dc1": 3})
    assert warn_replication(spec, {"dc1": ["127.0.0.1"]}) == [
        "RF 3 in dc1 with 1 node: TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, EACH_QUORUM, SERIAL, LOCAL_SERIAL "
        "requests will fail",
        "cl=LOCAL_QUORUM cannot be met: it needs 2 replicas in dc1, which holds 1",
    ]


def test_multi_dc_all_and_each_quorum():
    spec = WorkloadSpec(n=1, cl="ALL", replication={"dc1": 3, "dc2": 3}, local_dc="dc1")
    assert warn_replication(spec, {"dc1": 3, "dc2": 2}) == [
        "RF 3 in dc2 with 2 nodes: ALL requests will fail",
        "cl=ALL cannot be met: it needs 6 replicas, and only 5 can be placed",
    ]
    each = dataclasses.replace(spec, cl="EACH_QUORUM")
    assert warn_replication(each, {"dc1": 3, "dc2": 1})[-1] == \
        "cl=EACH_QUORUM cannot be met: it needs a quorum in every DC, and dc2 cannot hold one"


def test_dc_missing_from_topology_and_local_dc_missing():
    spec = WorkloadSpec(n=1, cl="LOCAL_ONE", replication={"dc1": 1, "dc3": 1}, local_dc="dc3")
    assert warn_replication(spec, {"dc1": 1, "dc2": 1}) == [
        "local DC dc3 is not in the topology (dc1, dc2)",
        # THREE is not listed: with RF 1 + 1 it fails whatever the topology
        "RF 1 in dc3 (not in the topology) with 0 nodes: TWO, QUORUM, ALL, LOCAL_ONE, LOCAL_QUORUM, EACH_QUORUM, "
        "SERIAL, LOCAL_SERIAL requests will fail",
        "cl=LOCAL_ONE cannot be met: it needs 1 replica in dc3, which holds 0",
    ]


def test_simple_strategy_on_two_dcs():
    spec = WorkloadSpec(n=1, replication=3)  # type: ignore[arg-type]
    assert warn_replication(spec, {"dc1": 1, "dc2": 1}) == [
        "SimpleStrategy on a cluster with 2 DCs (dc1, dc2): replicas are placed without regard to DCs; "
        "use NetworkTopologyStrategy",
        "RF 3 in the cluster (SimpleStrategy ignores DCs) with 2 nodes: THREE, ALL requests will fail",
    ]


def test_level_beyond_the_replication_factor_is_reported_once():
    spec = WorkloadSpec(n=1, cl="THREE", replication={"dc1": 2})
    assert warn_replication(spec, {"dc1": 5}) == ["cl=THREE cannot be met: it needs 3 replicas, and only 2 can be placed"]


def test_default_replication_is_rf1():
    assert warn_replication(WorkloadSpec(n=1), {"datacenter1": 1}) == []


def test_the_spec_knows_no_tool_command_line():
    """The translation to cassandra-stress lives beside the runners (runners.stress_cmdline),
    one way only: spec.py imports nothing of cassperf but its errors and the declared constraints
    its checks use, and has no to_stress_*."""
    names = imported_names(Path(spec_module.__file__))
    assert [n for n in names if n.startswith("cassperf")] == [
        "cassperf.constraints", "cassperf.constraints.PowerOfTwo", "cassperf.constraints.Whole", "cassperf.errors",
        "cassperf.errors.ConfigError"]
    assert [a for a in dir(WorkloadSpec) if "stress" in a] == []
