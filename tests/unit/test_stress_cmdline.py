"""cassandra-stress command lines: exact renders, parse/render round trips, the schema CQL,
and the error each unsupported or malformed option gets."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import PUBLIC_FIXTURES
from cassperf.errors import ConfigError
from cassperf.workload import (
    Compaction,
    Compression,
    Population,
    Rate,
    Ratio,
    Replication,
    WorkloadSpec,
    WorkloadSpecError,
)
from cassperf.workload.runners.stress_cmdline import (
    DELETE_NOT_IN_SIMPLE_MODE,
    parse_stress_command,
    schema_cql,
    to_stress_args,
    to_stress_command,
)

FUZZ = settings(max_examples=int(os.environ.get("CASSPERF_FUZZ_EXAMPLES", "150")), deadline=None)

SEED_WRITE = (
    'write no-warmup n=10000000 cl=LOCAL_QUORUM -rate threads=256 throttle=0/s -pop seq=1..10000000 '
    '-col size=FIXED(818) -schema keyspace=ks410rf3 "replication(strategy=NetworkTopologyStrategy, dc1=3)" '
    '-log interval=1 hdrfile=run.hdr -mode native cql3 connectionsPerHost=128 -graph file=run.html'
)
SEED_WRITE_SPEC = WorkloadSpec(
    op="write", warmup=False, n=10_000_000, cl="LOCAL_QUORUM", concurrency=256, rate=Rate(),
    population=Population("seq", 1, 10_000_000), column_size=818, keyspace="ks410rf3",
    replication=Replication.network_topology(dc1=3), interval_s=1, hdr_file="run.hdr",
    connections_per_host=128, graph_file="run.html",
)
MIXED = (
    'mixed ratio(write=4,read=5) duration=10m cl=LOCAL_QUORUM -rate threads=64 fixed=2000/s '
    '-pop dist=UNIFORM(1..10000000) -col size=FIXED(818) -schema keyspace=ksgc '
    '"compaction(strategy=LeveledCompactionStrategy, sstable_size_in_mb=160)" compression=LZ4Compressor '
    '-log interval=1 hdrfile=gc.hdr -mode native cql3 connectionsPerHost=128'
)
MIXED_SPEC = WorkloadSpec(
    op="mixed", ratio=Ratio(write=4, read=5), duration="10m", cl="LOCAL_QUORUM", concurrency=64,
    rate=Rate("fixed", 2000), population=Population("uniform", 1, 10_000_000), keyspace="ksgc",
    compaction=Compaction.of("LCS", sstable_size_in_mb=160), compression=Compression("LZ4"),
    hdr_file="gc.hdr", connections_per_host=128,
)
SEEDS = [
    SEED_WRITE,
    MIXED,
    # the replication-factor experiment's read "a" / "b" runs and CL sweep
    'read no-warmup n=10000000 cl=ONE -rate threads=256 throttle=0/s -pop dist=UNIFORM(1..10000000) '
    '-col size=FIXED(818) -schema keyspace=ks410rf3 -log interval=1 hdrfile=read-a.hdr '
    '-mode native cql3 connectionsPerHost=128 -graph file=rf.html revision=rf3-read-a title=rf3',
    # multi-dc: replicated keyspace, a client in dc2
    'write no-warmup duration=30s cl=EACH_QUORUM -rate threads=64 throttle=5000/s -pop seq=1..1000000 '
    '-col size=FIXED(818) -schema keyspace=ksmdc "replication(strategy=NetworkTopologyStrategy, dc1=3, dc2=3)" '
    '-log interval=1 -mode native cql3 prepared connectionsPerHost=8 maxPending=256 '
    '-node datacenter=dc2 127.0.0.4,127.0.0.5',
    'read n=1000 cl=LOCAL_ONE -rate threads=16 throttle=0/s -pop dist=GAUSSIAN(1..1000,500,100.5) '
    '-col size=FIXED(100) n=FIXED(10) "-schema" "replication(strategy=SimpleStrategy, factor=1)" '
    '-log interval=500ms file=read.log -mode native cql3',
]


# ------------------------------------------------------------------------------ exact renders

def test_seed_write_renders_exactly():
    assert to_stress_command(SEED_WRITE_SPEC) == SEED_WRITE
    assert to_stress_args(SEED_WRITE_SPEC) == [
        "write", "no-warmup", "n=10000000", "cl=LOCAL_QUORUM", "-rate", "threads=256", "throttle=0/s",
        "-pop", "seq=1..10000000", "-col", "size=FIXED(818)", "-schema", "keyspace=ks410rf3",
        "replication(strategy=NetworkTopologyStrategy, dc1=3)", "-log", "interval=1", "hdrfile=run.hdr",
        "-mode", "native", "cql3", "connectionsPerHost=128", "-graph", "file=run.html",
    ]


def test_seed_write_parses_to_the_spec():
    assert parse_stress_command(SEED_WRITE) == SEED_WRITE_SPEC


def test_mixed_fixed_rate_renders_exactly():
    assert to_stress_command(MIXED_SPEC) == MIXED
    assert parse_stress_command(MIXED) == MIXED_SPEC


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_seed_strings_render_back_identically(seed):
    assert to_stress_command(parse_stress_command(seed)) == seed


def test_quoted_option_group_and_sub_second_interval_parse():
    spec = parse_stress_command(SEEDS[4])
    assert (spec.column_count, spec.column_size, spec.interval_s, spec.log_file) == (10, 100, 0.5, "read.log")
    assert spec.population == Population("gaussian", 1, 1000, 500.0, 100.5)
    assert spec.replication == Replication.simple(1)
    assert to_stress_command(spec) == SEEDS[4].replace('"-schema"', "-schema")


def test_defaults_that_cassandra_stress_shares_are_left_out():
    spec = WorkloadSpec(n=100, column_size=34, concurrency=4)
    assert to_stress_command(spec) == "write n=100 cl=LOCAL_ONE -rate threads=4 throttle=0/s -log interval=1 " \
                                       "-mode native cql3"


def test_mixed_default_ratio_and_simple_strategy():
    spec = WorkloadSpec(op="mixed", n=500, concurrency=8, replication=Replication.simple(3), prepared=True)
    assert to_stress_command(spec) == (
        'mixed ratio(write=1,read=1) n=500 cl=LOCAL_ONE -rate threads=8 throttle=0/s -col size=FIXED(818) '
        '-schema "replication(strategy=SimpleStrategy, factor=3)" -log interval=1 -mode native cql3 prepared')


@pytest.mark.parametrize("seconds, text", [(30, "30s"), (600, "10m"), (90, "90s"), (7200, "2h"), (5400, "90m")])
def test_duration_uses_the_largest_whole_unit(seconds, text):
    assert f" duration={text} " in to_stress_command(WorkloadSpec(duration=seconds))


# ------------------------------------------------------------------------------ delete, compression

def test_delete_share_cannot_be_expressed_in_simple_mode():
    spec = WorkloadSpec(op="mixed", duration="10m", ratio={"read": 5, "write": 4, "delete": 1})
    with pytest.raises(WorkloadSpecError) as info:
        to_stress_args(spec)
    assert str(info.value) == DELETE_NOT_IN_SIMPLE_MODE
    assert str(info.value) == (
        "a delete share cannot be expressed in cassandra-stress simple mode: its commands are read, write, mixed, "
        "counter_read and counter_write, and mixed ratio(...) takes only those; run deletes with a "
        "cassandra-stress user profile (a DELETE query in ops(...)): "
        "cassperf.workload.runners.stress_profile.profile_yaml(spec) and to_user_args(spec, profile_path), which "
        "run_cassandra_stress uses by itself for such a spec, or with the python-driver engine")
    with pytest.raises(WorkloadSpecError, match="^a delete share cannot be expressed"):
        to_stress_command(WorkloadSpec(op="delete", n=10))


def test_delete_in_a_parsed_ratio_is_rejected():
    with pytest.raises(ConfigError) as info:
        parse_stress_command("mixed ratio(write=4,read=5,delete=1) duration=10m -rate threads=4")
    assert str(info.value) == ("ratio option 'delete' is not one of write, read "
                               "(cassandra-stress simple mode has no delete operation)")


@pytest.mark.parametrize("schema, message", [
    ("replication(factor=0)",
     "replication factor 0 keeps no copy of any row, so every request fails; give a factor of 1 or more"),
    ("replication(strategy=NetworkTopologyStrategy, dc1=0)",
     "replication factor 0 in every data centre (dc1=0) keeps no copy of any row, so every request fails; "
     "give at least one DC a factor of 1 or more, e.g. dc1=1"),
])
def test_a_replication_factor_of_0_is_refused_before_anything_runs(schema, message):
    # issue 11, item 3: `-schema "replication(factor=0)"` used to run, 0 ops and 100 errors, complete=True
    with pytest.raises(WorkloadSpecError) as info:
        parse_stress_command(f'write n=100 -rate threads=1 -schema "{schema}"')
    assert (info.value.field, str(info.value)) == ("replication", message)


def test_cassperf_run_refuses_a_replication_factor_of_0_in_one_line(tmp_path):
    # no cluster is asked for and nothing is stored: the command line is refused first
    env = {**os.environ, "CASSPERF_HOME": str(tmp_path)}
    env.pop("CASSPERF_DATA", None)
    out = subprocess.run([sys.executable, "-m", "cassperf.cli", "run", "write", "n=100", "-rate", "threads=1",
                          "-schema", "replication(factor=0)"], env=env, capture_output=True, text=True, timeout=120)
    assert (out.returncode, out.stdout, out.stderr) == (
        2, "", "cassperf: error: replication factor 0 keeps no copy of any row, so every request fails; "
               "give a factor of 1 or more\n")
    assert not (tmp_path / "data").exists()


def test_chunk_length_needs_a_precreated_table():
    spec = dataclasses.replace(MIXED_SPEC, compression=Compression("LZ4", 16))
    with pytest.raises(WorkloadSpecError) as info:
        to_stress_command(spec)
    assert str(info.value) == (
        "cassandra-stress -schema compression= takes a compressor class only, so chunk_length_in_kb=16 cannot be "
        "passed: create the table first with schema_cql(spec) and render with schema_precreated=True")
    assert to_stress_command(spec, schema_precreated=True) == MIXED


# ------------------------------------------------------------------------------ schema CQL

def test_schema_cql_matches_cassandra_stress_text():
    keyspace, table = schema_cql(SEED_WRITE_SPEC)
    assert keyspace == ("CREATE KEYSPACE IF NOT EXISTS \"ks410rf3\" WITH replication = {'class': "
                        "'org.apache.cassandra.locator.NetworkTopologyStrategy', 'dc1' : '3'} "
                        "AND durable_writes = true;\n")
    assert table == ('CREATE TABLE IF NOT EXISTS ks410rf3.standard1 (key blob PRIMARY KEY \n, "C0" blob\n, '
                     '"C1" blob\n, "C2" blob\n, "C3" blob\n, "C4" blob) WITH compression = {};\n')


def test_schema_cql_lcs_lz4_with_chunk_length():
    spec = dataclasses.replace(MIXED_SPEC, compression=Compression("LZ4", 16))
    keyspace, table = schema_cql(spec)
    assert keyspace == ("CREATE KEYSPACE IF NOT EXISTS \"ksgc\" WITH replication = {'class': "
                        "'org.apache.cassandra.locator.SimpleStrategy', 'replication_factor' : '1'} "
                        "AND durable_writes = true;\n")
    assert table.endswith(") WITH compression = {'class' : 'LZ4Compressor', 'chunk_length_in_kb' : '16'} AND "
                          "compaction = { 'class' : 'LeveledCompactionStrategy', 'sstable_size_in_mb' : '160'};\n")


def test_schema_cql_orders_columns_by_bytes_and_adds_counter1():
    spec = WorkloadSpec(n=1, column_count=12, replication={"dc1": 3, "dc2": 2})  # type: ignore[arg-type]
    keyspace, table, counter = schema_cql(spec, counter_table=True)
    assert "'dc1' : '3', 'dc2' : '2'}" in keyspace
    assert re.findall(r'"(C\d+)"', table) == ["C0", "C1", "C10", "C11", "C2", "C3", "C4", "C5", "C6", "C7",
                                               "C8", "C9"]
    assert counter.startswith('CREATE TABLE IF NOT EXISTS keyspace1.counter1 (key blob PRIMARY KEY,\n, "C0" counter')


# ------------------------------------------------------------------------------ parsing real commands

def test_parse_cassandra_4_1_command_from_the_fixture_sidecar():
    spec = parse_stress_command("cassandra-stress write no-warmup n=25000 cl=one -rate threads=3 -node 10.17.64.5")
    assert (spec.n, spec.cl, spec.concurrency, spec.nodes, spec.column_size) == (25000, "ONE", 3, ("10.17.64.5",), 34)
    assert spec.prepared  # no -mode: cassandra-stress prepares statements
    assert to_stress_command(spec) == ("write no-warmup n=25000 cl=ONE -rate threads=3 throttle=0/s -log interval=1 "
                                        "-mode native cql3 prepared -node 10.17.64.5")


def test_parse_argv_with_program_path_and_count_suffix():
    spec = parse_stress_command(["./tools/bin/cassandra-stress", "write", "n=10k", "-rate", "threads=10", "limit=500/s"])
    assert (spec.n, spec.rate) == (10_000, Rate("throttle", 500))  # limit= is the pre-3.x name


def test_written_without_rate_uses_stress_default_threads():
    assert parse_stress_command("write n=10000").concurrency == 200


def test_spaces_after_commas_are_repaired_as_cassandra_stress_does():
    a = parse_stress_command('write n=1 -rate threads=1 -schema "replication(strategy=NetworkTopologyStrategy,  dc1=3, dc2=1)"')
    b = parse_stress_command("write n=1 -rate threads=1 -schema replication(strategy=NetworkTopologyStrategy,dc1=3,dc2=1)")
    assert a == b and a.replication == Replication.network_topology(dc1=3, dc2=1)


def sidecar_commands() -> list[str]:
    folder = PUBLIC_FIXTURES / "cassandra-stress"
    out = []
    for sidecar in sorted(folder.glob("*.source.txt")):
        for line in sidecar.read_text(encoding="utf-8").splitlines():
            m = re.match(r"command(?: \([^)]*\))?: (\S*cassandra-stress .*?)(?:\s{2,}\(.*)?$", line)
            if m:
                out.append(m.group(1))
    return out


def test_every_fixture_command_parses_or_gets_a_config_error():
    commands = sidecar_commands()
    assert len(commands) == 6
    parsed, refused = [], []
    for command in commands:
        try:
            parsed.append(parse_stress_command(command))
        except ConfigError as exc:
            refused.append(str(exc))
    assert [s.n for s in parsed] == [10000, 25000]
    assert refused == ["operation 'user' is not one of write, read, mixed "
                       "(cassandra-stress user / counter commands are not modelled by WorkloadSpec)"] * 4


# ------------------------------------------------------------------------------ errors

@pytest.mark.parametrize("command, message", [
    ("", "empty cassandra-stress command line"),
    ("write n=1 -rate threads=4 -foo 1", "unknown option '-foo' (known: -rate, -pop, -col, -schema, -log, -mode, -graph, -node)"),
    ("write n=1 -rate threads=4 bogus=1", "unknown -rate option 'bogus=1' (known: threads=, throttle=, fixed=)"),
    ("write n=1 truncate=always -rate threads=4", "unknown write option 'truncate=always' (known: no-warmup, n=, duration=, cl=)"),
    ("mixed n=1 clustering=GAUSSIAN(1..10) -rate threads=4",
     "unknown mixed option 'clustering=GAUSSIAN(1..10)' (known: no-warmup, n=, duration=, cl=, ratio(...))"),
    ("write n=1 -rate threads=4 -log level=verbose", "unknown -log option 'level=verbose' (known: interval=, hdrfile=, file=)"),
    ("write n=1 -rate threads=4 -mode native cql3 user=cassandra",
     "unknown -mode option 'user=cassandra' (known: connectionsPerHost=, maxPending=, native, cql3, prepared)"),
    ("write n=1 -rate threads=4 -pop seq=1..10 no-wrap", "-pop takes one of seq=a..b or dist=NAME(a..b), got 'seq=1..10 no-wrap'"),
    ("write n=1 -rate threads=4 -col size=UNIFORM(1..10)", "-col 'size=UNIFORM(1..10)': only FIXED(n) distributions are modelled"),
    ("write n=1 -rate threads=4 -node whitelist 127.0.0.1", "unknown -node option 'whitelist' (known: datacenter=, host[,host...])"),
    ("write n=1 -rate threads=4 -schema compression=LZ4Compressor chunk=16",
     "unknown -schema option 'chunk=16' (known: keyspace=, replication(...), compaction(...), compression=)"),
    ("read n=1 -rate auto", "-rate 'auto': auto thread ramps are not modelled; give threads=N"),
    ("read n=1 -rate threads>=4", "-rate 'threads>=4': auto thread ramps are not modelled; give threads=N"),
    ("read n=1", "no -rate threads=N: cassandra-stress would ramp threads (auto mode), which WorkloadSpec does not model"),
    ("write n=1 -rate threads=4 fixed=10/s throttle=20/s", "-rate has both fixed and throttle set: choose one"),
    ("write n=1 -rate threads=4 -rate threads=5", "-rate is given twice"),
    ("write n=1 n=2 -rate threads=4", "write option n is given twice"),
    ("user profile=x.yaml ops(insert=1) n=1", "operation 'user' is not one of write, read, mixed "
     "(cassandra-stress user / counter commands are not modelled by WorkloadSpec)"),
    ("write n=ten -rate threads=4", "'n=ten': n must be digits with an optional k/m/b suffix"),
    ("write duration=10 -rate threads=4", "'duration=10': duration must be digits and a unit s, m or h (e.g. 10m)"),
    ("write n=1 -rate threads=4 -log interval=1m", "-log interval=1m: expected seconds or Nms (e.g. 1, 1s, 500ms)"),
    ("write n=1 -rate threads=4 'unclosed", "cannot split the command line into arguments: No closing quotation"),
    ("write n=1 -rate threads=4 -schema replication(strategy=NetworkTopologyStrategy,dc1=x)",
     "replication factor dc1=x must be a whole number"),
])
def test_bad_command_lines(command, message):
    with pytest.raises(ConfigError) as info:
        parse_stress_command(command)
    assert str(info.value) == message


@pytest.mark.parametrize("command, field, start", [
    ("write n=1 cl=LOCAL_QUARUM -rate threads=4", "cl", "consistency level 'LOCAL_QUARUM' is not one of ONE, TWO"),
    ("write n=1 -rate threads=4 fixed=-5/s", "rate", "rate fixed=-5/s: the rate must be a whole number"),
    ("write n=1 duration=1m -rate threads=4", "n", "n and duration are both given"),
    ("write n=1 -rate threads=4 -pop dist=ZIPF(1..9)", "population", "population distribution 'ZIPF' is not one of"),
    ("mixed ratio(write=0,read=0) n=1 -rate threads=4", "ratio", "ratio(write=0,read=0) is all zero"),
    ("write n=1 -rate threads=4 -schema compaction(strategy=XCS)", "compaction", "compaction strategy 'XCS' is not"),
])
def test_spec_errors_surface_through_the_parser(command, field, start):
    with pytest.raises(WorkloadSpecError) as info:
        parse_stress_command(command)
    assert info.value.field == field
    assert str(info.value).startswith(start)


# ------------------------------------------------------------------------------ property tests

_names = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
_paths = st.from_regex(r"[A-Za-z0-9_./~+@%:,=\-]{0,23}[A-Za-z0-9_./~+@%:\-]", fullmatch=True)
_words = st.from_regex(r"[A-Za-z0-9_.:\-]{1,12}", fullmatch=True)
_dcs = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,8}", fullmatch=True).filter(
    lambda d: d.lower() not in {"strategy", "factor", "replication_factor", "class"})
_finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@st.composite
def populations(draw: st.DrawFn) -> Population | None:
    kind = draw(st.sampled_from([None, "seq", "uniform", "gaussian"]))
    if kind is None:
        return None
    low = draw(st.integers(0, 10**12))
    high = draw(st.integers(low, 10**12 + 1))
    if kind == "gaussian" and draw(st.booleans()):
        return Population("gaussian", low, high, draw(_finite), draw(_finite.filter(lambda x: x > 0)))
    return Population(kind, low, high)


@st.composite
def specs(draw: st.DrawFn) -> WorkloadSpec:
    op = draw(st.sampled_from(["write", "read", "mixed"]))
    ratio = None
    if op == "mixed":
        w, r = draw(st.tuples(st.integers(0, 50), st.integers(0, 50)).filter(lambda t: any(t)))
        ratio = Ratio(write=w, read=r)
    use_n = draw(st.booleans())
    replication = draw(st.one_of(
        st.none(), st.integers(1, 9).map(Replication.simple),
        st.dictionaries(_dcs, st.integers(0, 9), min_size=1, max_size=3).filter(lambda f: any(f.values()))
        .map(Replication.network_topology)))
    compaction = draw(st.one_of(st.none(), st.builds(
        Compaction, st.sampled_from(["LCS", "STCS", "UCS", "TWCS"]),
        st.dictionaries(_names.filter(lambda k: k not in ("class", "strategy")),
                        st.from_regex(r"[A-Za-z0-9_.\-]{1,8}", fullmatch=True), max_size=3)
        .map(lambda d: tuple(d.items())))))
    graph_file = draw(st.one_of(st.none(), _paths))
    return WorkloadSpec(
        op=op, ratio=ratio,
        n=draw(st.integers(1, 10**12)) if use_n else None,
        duration=None if use_n else draw(st.integers(1, 10**6)),
        warmup=draw(st.booleans()),
        cl=draw(st.sampled_from(["ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_ONE", "LOCAL_QUORUM",
                                 "EACH_QUORUM", "SERIAL", "LOCAL_SERIAL"])),
        concurrency=draw(st.integers(1, 4096)),
        rate=draw(st.one_of(st.just(Rate()), st.builds(Rate, st.sampled_from(["throttle", "fixed"]),
                                                       st.integers(1, 10**7)))),
        population=draw(populations()),
        column_count=draw(st.integers(1, 40)),
        column_size=draw(st.sampled_from([34, 818, 1]) | st.integers(1, 10**6)),
        keyspace=draw(st.just("keyspace1") | _names),
        replication=replication, compaction=compaction,
        compression=draw(st.one_of(st.none(), st.sampled_from(["LZ4", "Snappy", "Deflate", "Zstd"]).map(Compression))),
        interval_s=draw(st.integers(1, 120_000)) / 1000,
        local_dc=draw(st.one_of(st.none(), _words)),
        nodes=tuple(draw(st.lists(st.from_regex(r"[a-z0-9][a-z0-9.\-]{0,12}", fullmatch=True), max_size=3))),
        hdr_file=draw(st.one_of(st.none(), _paths)),
        log_file=draw(st.one_of(st.none(), _paths)),
        graph_file=graph_file,
        graph_revision=draw(st.none() | _words) if graph_file else None,
        graph_title=draw(st.none() | _words) if graph_file else None,
        connections_per_host=draw(st.none() | st.integers(1, 1024)),
        max_pending=draw(st.none() | st.integers(1, 32768)),
        prepared=draw(st.booleans()),
    )


ROUND_TRIPS = {"n": 0}


@FUZZ
@given(specs())
def test_parse_of_render_is_identity(spec):
    ROUND_TRIPS["n"] += 1
    text = to_stress_command(spec)
    assert parse_stress_command(text) == spec
    assert parse_stress_command(to_stress_args(spec)) == spec
    assert to_stress_command(parse_stress_command(text)) == text


def _mutate(text: str, data: st.DataObject) -> str:
    tokens = text.split(" ")
    for _ in range(data.draw(st.integers(1, 4))):
        action = data.draw(st.sampled_from(["delete", "duplicate", "swap", "truncate", "replace", "insert"]))
        if not tokens:
            break
        i = data.draw(st.integers(0, len(tokens) - 1))
        if action == "delete":
            del tokens[i]
        elif action == "duplicate":
            tokens.insert(i, tokens[i])
        elif action == "swap":
            j = data.draw(st.integers(0, len(tokens) - 1))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif action == "truncate":
            tokens[i] = tokens[i][: data.draw(st.integers(0, len(tokens[i])))]
        elif action == "replace" and tokens[i]:
            k = data.draw(st.integers(0, len(tokens[i]) - 1))
            tokens[i] = tokens[i][:k] + data.draw(st.characters(codec="utf-8")) + tokens[i][k + 1:]
        elif action == "insert":
            tokens.insert(i, data.draw(st.text(alphabet='abc=()-,./"\'\\ 0123456789', max_size=12)))
    return " ".join(tokens)


FUZZED = {"n": 0}


@FUZZ
@given(st.sampled_from(SEEDS), st.data())
def test_mutated_seed_commands_parse_or_raise_config_error(seed, data):
    FUZZED["n"] += 1
    text = _mutate(seed, data)
    try:
        spec = parse_stress_command(text)
    except ConfigError:
        return
    assert isinstance(spec, WorkloadSpec)
    # whatever parsed renders (no delete, no chunk length can come from a command) and reads back
    assert parse_stress_command(to_stress_command(spec)) == spec


def teardown_module() -> None:
    """Report how many generated inputs the two property tests tried (visible with -s)."""
    print(f"\n[stress_cmdline] round trips tried: {ROUND_TRIPS['n']}, fuzzed command lines: {FUZZED['n']}")
