"""cassandra-stress user profiles: the exact profile and command for the garbagecollect
experiment's read:write:delete = 5:4:1 spec, round trips over generated specs, the error each
profile or command that WorkloadSpec does not model gets, the stress runner writing the profile
into the run (with a stand-in cassandra-stress), and how the output parser names user-mode ops."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cassperf.cluster import RemoteCluster
from cassperf.errors import ConfigError
from cassperf.parsers import parse
from cassperf.results.store import RunWriter, load_run
from cassperf.workload import Compaction, Compression, Population, Rate, Ratio, Replication, WorkloadSpec
from cassperf.workload.runners import run_cassandra_stress, stress_argv
from cassperf.workload.spec import WorkloadSpecError
from cassperf.workload.runners.stress_cmdline import (
    DELETE_NOT_IN_SIMPLE_MODE,
    schema_cql,
    to_stress_args,
    to_stress_command,
)
from cassperf.workload.runners.stress_profile import (
    PROFILE_NAME,
    ProfileSchema,
    needs_profile,
    parse_profile,
    parse_user_command,
    profile_yaml,
    to_user_args,
    to_user_command,
)
from tests.fuzzing import mutated
from tests.unit.test_stress_cmdline import sidecar_commands, specs

FUZZ = settings(max_examples=int(os.environ.get("CASSPERF_FUZZ_EXAMPLES", "150")), deadline=None)

# The garbagecollect-impact experiment: fixed-rate read:write:delete = 5:4:1 on an LCS + LZ4 table
GC_SPEC = WorkloadSpec(
    op="mixed", ratio=Ratio(write=4, read=5, delete=1), duration="10m", cl="LOCAL_QUORUM", concurrency=64,
    rate=Rate("fixed", 2000), population=Population("uniform", 1, 10_000_000), keyspace="ksgc",
    replication=Replication.network_topology(dc1=3), compaction=Compaction.of("LCS", sstable_size_in_mb=160),
    compression=Compression("LZ4", 16), hdr_file="gc.hdr", connections_per_host=128,
)
GC_PROFILE = '''\
# cassandra-stress user profile for a cassperf WorkloadSpec (cassperf.workload.runners.stress_profile):
# the schema cassandra-stress creates in simple mode, and the read and delete queries.
keyspace: ksgc
keyspace_definition: |
  CREATE KEYSPACE IF NOT EXISTS "ksgc" WITH replication = {'class': 'org.apache.cassandra.locator.NetworkTopologyStrategy', 'dc1' : '3'} AND durable_writes = true;
table: standard1
table_definition: |
  CREATE TABLE IF NOT EXISTS ksgc.standard1 (key blob PRIMARY KEY\x20
  , "C0" blob
  , "C1" blob
  , "C2" blob
  , "C3" blob
  , "C4" blob) WITH compression = {'class' : 'LZ4Compressor', 'chunk_length_in_kb' : '16'} AND compaction = { 'class' : 'LeveledCompactionStrategy', 'sstable_size_in_mb' : '160'};
columnspec:
  - name: key
    size: fixed(10)
  - name: C0
    size: fixed(818)
  - name: C1
    size: fixed(818)
  - name: C2
    size: fixed(818)
  - name: C3
    size: fixed(818)
  - name: C4
    size: fixed(818)
insert:
  partitions: fixed(1)
  batchtype: UNLOGGED
queries:
  read:
    cql: SELECT * FROM standard1 WHERE key = ?
    fields: samerow
  delete:
    cql: DELETE FROM standard1 WHERE key = ?
    fields: samerow
'''  # \x20: schema_cql's 'PRIMARY KEY ' line ends with a space (cassandra-stress's own CQL does)
GC_COMMAND = ("user profile=gc.yaml ops(insert=4,read=5,delete=1) duration=10m cl=LOCAL_QUORUM -rate threads=64 "
              "fixed=2000/s -pop dist=UNIFORM(1..10000000) -log interval=1 hdrfile=gc.hdr -mode native cql3 "
              "connectionsPerHost=128")


# ------------------------------------------------------------------------------ exact renders

def test_garbagecollect_profile_renders_exactly():
    assert profile_yaml(GC_SPEC) == GC_PROFILE


def test_profile_carries_schema_cql_verbatim_including_the_chunk_length():
    doc = yaml.safe_load(GC_PROFILE)
    assert [doc["keyspace_definition"], doc["table_definition"]] == schema_cql(GC_SPEC)
    assert "'chunk_length_in_kb' : '16'" in doc["table_definition"]
    assert doc["insert"] == {"partitions": "fixed(1)", "batchtype": "UNLOGGED"}
    assert [c["name"] for c in doc["columnspec"]] == ["key", "C0", "C1", "C2", "C3", "C4"]


def test_garbagecollect_command_renders_exactly():
    assert to_user_command(GC_SPEC, "gc.yaml") == GC_COMMAND
    assert to_user_args(GC_SPEC, "gc.yaml") == [
        "user", "profile=gc.yaml", "ops(insert=4,read=5,delete=1)", "duration=10m", "cl=LOCAL_QUORUM",
        "-rate", "threads=64", "fixed=2000/s", "-pop", "dist=UNIFORM(1..10000000)", "-log", "interval=1",
        "hdrfile=gc.hdr", "-mode", "native", "cql3", "connectionsPerHost=128"]


def test_garbagecollect_command_and_profile_parse_to_the_spec():
    assert parse_user_command(GC_COMMAND, GC_PROFILE) == GC_SPEC
    assert parse_user_command(["/opt/c/tools/bin/cassandra-stress", *to_user_args(GC_SPEC, "gc.yaml")],
                              GC_PROFILE) == GC_SPEC


def test_parse_profile_gives_the_schema_part():
    assert parse_profile(GC_PROFILE, "gc.yaml") == ProfileSchema(
        "ksgc", Replication.network_topology(dc1=3), Compaction.of("LCS", sstable_size_in_mb=160),
        Compression("LZ4", 16), 5, 818, ("read", "delete"))


@pytest.mark.parametrize("op, ops", [("write", "ops(insert=1)"), ("read", "ops(read=1)"), ("delete", "ops(delete=1)")])
def test_a_single_operation_is_one_op_name(op, ops):
    spec = WorkloadSpec(op=op, n=1000, warmup=False, concurrency=8, keyspace="ksgc")
    assert to_user_command(spec, "p.yaml") == (f"user profile=p.yaml {ops} no-warmup n=1000 cl=LOCAL_ONE -rate "
                                               f"threads=8 throttle=0/s -log interval=1 -mode native cql3")
    back = parse_user_command(to_user_command(spec, "p.yaml"), profile_yaml(spec))
    assert back == dataclasses.replace(spec, replication=Replication.simple(1))


def test_only_a_delete_share_needs_the_profile():
    assert needs_profile(GC_SPEC) and needs_profile(WorkloadSpec(op="delete", n=1))
    assert not needs_profile(WorkloadSpec(op="mixed", ratio={"write": 1, "read": 1}, n=1))
    assert not needs_profile(WorkloadSpec(op="mixed", ratio={"write": 1, "read": 1, "delete": 0}, n=1))


def test_a_mix_of_one_operation_is_refused():
    spec = WorkloadSpec(op="mixed", ratio={"delete": 3}, n=10)
    with pytest.raises(WorkloadSpecError) as info:
        to_user_args(spec, "p.yaml")
    assert info.value.field == "ratio"
    assert str(info.value) == ("a mix of one operation (ratio delete=3) cannot be told from op='delete' in "
                               "cassandra-stress user mode (both are ops(delete=...)): give op='delete' instead")


def test_a_profile_path_cassandra_stress_would_split_is_refused():
    with pytest.raises(WorkloadSpecError, match=r"^profile 'my profile.yaml' must be a path"):
        to_user_args(GC_SPEC, "my profile.yaml")


@pytest.mark.parametrize("keyspace", ["yes", "null", "on", "true", "off"])
def test_keyspace_names_yaml_would_read_as_other_types_are_quoted(keyspace):
    spec = dataclasses.replace(GC_SPEC, keyspace=keyspace)
    text = profile_yaml(spec)
    assert f'keyspace: "{keyspace}"\n' in text
    assert yaml.safe_load(text)["keyspace"] == keyspace
    assert parse_user_command(to_user_command(spec, "p.yaml"), text) == spec


def test_the_profile_is_read_from_the_profile_path(tmp_path):
    (tmp_path / "gc.yaml").write_text(GC_PROFILE)
    assert parse_user_command(GC_COMMAND, profile_dir=tmp_path) == GC_SPEC
    absolute = GC_COMMAND.replace("profile=gc.yaml", f"profile=file://{tmp_path}/gc.yaml")
    assert parse_user_command(absolute) == GC_SPEC
    with pytest.raises(ConfigError) as info:
        parse_user_command(GC_COMMAND, profile_dir=tmp_path / "nowhere")
    assert str(info.value).startswith(f"cannot read the cassandra-stress profile {tmp_path / 'nowhere' / 'gc.yaml'}: ")


# ------------------------------------------------------------------------------ bad profiles

BAD_PROFILES = [
    ("queries:\n", "token_range_queries: {}\nqueries:\n",
     "token_range_queries: not modelled; modelled: a profile holds keyspace, keyspace_definition, table, "
     "table_definition, columnspec, insert, queries"),
    ("insert:\n  partitions: fixed(1)\n  batchtype: UNLOGGED\n", "",
     "insert: missing; modelled: a profile holds keyspace, keyspace_definition, table, table_definition, "
     "columnspec, insert, queries"),
    ("    fields: samerow\n  delete:",
     "    fields: samerow\n  simple1:\n    cql: select * from standard1 where key = ? LIMIT 100\n"
     "    fields: samerow\n  delete:",
     "queries.simple1: this query is not modelled; modelled: read: SELECT * FROM standard1 WHERE key = ? and "
     "delete: DELETE FROM standard1 WHERE key = ?, each with fields: samerow"),
    ("    fields: samerow\n  delete:", "    fields: multirow\n  delete:",
     "queries.read.fields: 'multirow' is not modelled; modelled: read: SELECT * FROM standard1 WHERE key = ? and "
     "delete: DELETE FROM standard1 WHERE key = ?, each with fields: samerow"),
    ("DELETE FROM standard1", 'DELETE "C0" FROM standard1',
     "queries.delete.cql: 'DELETE \"C0\" FROM standard1 WHERE key = ?' is not modelled; modelled: read: SELECT * "
     "FROM standard1 WHERE key = ? and delete: DELETE FROM standard1 WHERE key = ?, each with fields: samerow"),
    ("    fields: samerow\n  delete:", "    fields: samerow\n    consistencyLevel: ONE\n  delete:",
     "queries.read.consistencyLevel: not modelled; modelled: read: SELECT * FROM standard1 WHERE key = ? and "
     "delete: DELETE FROM standard1 WHERE key = ?, each with fields: samerow"),
    ("  - name: key\n    size: fixed(10)\n", "  - name: key\n    size: fixed(10)\n    population: uniform(1..1000)\n",
     "columnspec[0] (key): population is not modelled (which partitions are visited is -pop on the command "
     "line); modelled: name and size: fixed(N) for key (N = 10) and every column (one N for all)"),
    ("  - name: C0\n    size: fixed(818)\n", "  - name: C0\n    size: fixed(818)\n    cluster: fixed(1)\n",
     "columnspec[1] (C0): cluster is not modelled; modelled: name and size: fixed(N) for key (N = 10) and every "
     "column (one N for all)"),
    ("  - name: C1\n    size: fixed(818)\n", "  - name: C1\n    size: uniform(1..10)\n",
     "columnspec[2] (C1): size 'uniform(1..10)' is not modelled; modelled: name and size: fixed(N) for key "
     "(N = 10) and every column (one N for all)"),
    ("size: fixed(10)", "size: fixed(16)",
     "columnspec (key): size fixed(16) is not modelled; modelled: name and size: fixed(N) for key (N = 10) and "
     "every column (one N for all)"),
    ("  - name: C2\n    size: fixed(818)\n", "  - name: C2\n    size: fixed(100)\n",
     "columnspec: the columns have different sizes [100, 818]; modelled: name and size: fixed(N) for key "
     "(N = 10) and every column (one N for all)"),
    ("  - name: C4\n    size: fixed(818)\n", "",
     "columnspec: no entry for C4 (cassandra-stress would size it uniform(4..8)); modelled: name and size: "
     "fixed(N) for key (N = 10) and every column (one N for all)"),
    ("  - name: C4\n    size: fixed(818)\n", "  - name: C4\n",
     "columnspec[5] (C4): no size (cassandra-stress would use uniform(4..8)); modelled: name and size: fixed(N) "
     "for key (N = 10) and every column (one N for all)"),
    ("  - name: C4\n    size: fixed(818)\n", "  - name: C4\n    size: fixed(818)\n  - name: C9\n    size: fixed(818)\n",
     "columnspec[6] (C9): no such column in table_definition; modelled: name and size: fixed(N) for key (N = 10) "
     "and every column (one N for all)"),
    ('"C4" blob)', '"C4" blob, ck int, PRIMARY KEY ((key), ck))',
     "table_definition: a compound primary key (clustering columns) is not modelled; modelled: standard1 (key "
     "blob PRIMARY KEY, \"C0\"..\"C<n-1>\" blob) WITH compression = {...} [AND compaction = {...}]"),
    ('"C2" blob', '"C2" text',
     "table_definition: column 'C2' is text, not blob; modelled: standard1 (key blob PRIMARY KEY, "
     "\"C0\"..\"C<n-1>\" blob) WITH compression = {...} [AND compaction = {...}]"),
    ('"C4" blob)', '"C4" blob\n  , value blob)',
     "table_definition: column 'value blob' is not modelled; modelled: standard1 (key blob PRIMARY KEY, "
     "\"C0\"..\"C<n-1>\" blob) WITH compression = {...} [AND compaction = {...}]"),
    ("'sstable_size_in_mb' : '160'};", "'sstable_size_in_mb' : '160'} AND gc_grace_seconds = 0;",
     "table_definition: table option 'gc_grace_seconds = 0' is not modelled; modelled: standard1 (key blob "
     "PRIMARY KEY, \"C0\"..\"C<n-1>\" blob) WITH compression = {...} [AND compaction = {...}]"),
    ("WITH compression = {'class' : 'LZ4Compressor', 'chunk_length_in_kb' : '16'} AND ", "WITH ",
     "table_definition: no compression = {...}: the server would pick its own default; modelled: standard1 (key "
     "blob PRIMARY KEY, \"C0\"..\"C<n-1>\" blob) WITH compression = {...} [AND compaction = {...}]"),
    ("'chunk_length_in_kb' : '16'}", "'chunk_length_in_kb' : '16', 'crc_check_chance' : '0.5'}",
     "table_definition: compression {'class': 'LZ4Compressor', 'chunk_length_in_kb': '16', 'crc_check_chance': "
     "'0.5'} is not modelled; modelled: compression = {} or {'class': compressor[, 'chunk_length_in_kb': N]}"),
    ("durable_writes = true", "durable_writes = false",
     "keyspace_definition: durable_writes = false is not modelled; modelled: CREATE KEYSPACE [IF NOT EXISTS] name "
     "WITH replication = {'class': SimpleStrategy or NetworkTopologyStrategy, factors} [AND durable_writes = true]"),
    ('EXISTS "ksgc"', 'EXISTS "other"',
     "keyspace_definition: it creates keyspace 'other', not 'ksgc'; modelled: the keyspace named by keyspace:"),
    ("EXISTS ksgc.standard1", "EXISTS other.standard1",
     "table_definition: the table is in keyspace 'other', not 'ksgc'; modelled: standard1 (key blob PRIMARY KEY, "
     "\"C0\"..\"C<n-1>\" blob) WITH compression = {...} [AND compaction = {...}]"),
    ("table: standard1", "table: typestest", "table: 'typestest' is not modelled; modelled: standard1"),
    ("partitions: fixed(1)", "partitions: uniform(1..50)",
     "insert.partitions: 'uniform(1..50)' is not modelled; modelled: partitions: fixed(1) and batchtype: UNLOGGED"),
    ("batchtype: UNLOGGED", "batchtype: LOGGED",
     "insert.batchtype: 'LOGGED' is not modelled; modelled: partitions: fixed(1) and batchtype: UNLOGGED"),
    ("  batchtype: UNLOGGED\n", "",
     "insert: no batchtype (cassandra-stress's default differs); modelled: partitions: fixed(1) and batchtype: "
     "UNLOGGED"),
    ("'dc1' : '3'", "'dc1' : 'three'",
     "keyspace_definition: replication factors {'dc1': 'three'} are not all whole numbers; modelled: CREATE "
     "KEYSPACE [IF NOT EXISTS] name WITH replication = {'class': SimpleStrategy or NetworkTopologyStrategy, "
     "factors} [AND durable_writes = true]"),
    ("'dc1' : '3'", "'dc1' : '\u00b3'",
     "keyspace_definition: replication factors {'dc1': '\u00b3'} are not all whole numbers; modelled: CREATE "
     "KEYSPACE [IF NOT EXISTS] name WITH replication = {'class': SimpleStrategy or NetworkTopologyStrategy, "
     "factors} [AND durable_writes = true]"),
    ("'chunk_length_in_kb' : '16'", "'chunk_length_in_kb' : '1\u00b3'",
     "table_definition: chunk_length_in_kb '1\u00b3' is not a whole number; modelled: a power of two"),
    ("locator.NetworkTopologyStrategy", "locator.EverywhereStrategy",
     "keyspace_definition: replication strategy 'EverywhereStrategy' is not one of SimpleStrategy, "
     "NetworkTopologyStrategy"),
    ("'chunk_length_in_kb' : '16'", "'chunk_length_in_kb' : '12'",
     "table_definition: chunk_length_in_kb must be a power of two > 0 (4, 16, 64...), got 12"),
    ("keyspace: ksgc", "keyspace: KS-GC",
     "keyspace: keyspace 'KS-GC' must be lowercase letters, digits and _, starting with a letter, at most 48 "
     "characters"),
]


@pytest.mark.parametrize("old, new, message", BAD_PROFILES, ids=[m.split(":")[0] + f"-{i}"
                                                                 for i, (_, _, m) in enumerate(BAD_PROFILES)])
def test_bad_profiles_name_the_file_the_key_and_what_is_modelled(old, new, message):
    assert old in GC_PROFILE
    with pytest.raises(ConfigError) as info:
        parse_user_command(GC_COMMAND, GC_PROFILE.replace(old, new, 1))
    assert str(info.value) == f"gc.yaml: {message}"


@pytest.mark.parametrize("text, message", [
    # (libyaml and PyYAML's pure-Python loader word this one alike)
    ('keyspace: "ksgc', "not YAML: found unexpected end of stream at line 1, column 16"),
    ("- a\n- b\n", "a cassandra-stress profile is a YAML mapping, got a list"),
    ("", "a cassandra-stress profile is a YAML mapping, got an empty document"),
])
def test_a_profile_that_is_not_a_yaml_mapping(text, message):
    with pytest.raises(ConfigError) as info:
        parse_profile(text, "gc.yaml")
    assert str(info.value) == f"gc.yaml: {message}"


def test_a_profile_without_the_query_ops_names():
    no_delete = GC_PROFILE.split("  delete:\n")[0]
    with pytest.raises(ConfigError) as info:
        parse_user_command(GC_COMMAND, no_delete)
    assert str(info.value) == "ops(delete=...) names a query gc.yaml does not define (it defines read)"
    read_only = GC_COMMAND.replace("ops(insert=4,read=5,delete=1)", "ops(insert=4,read=5)")
    assert parse_user_command(read_only, no_delete) == dataclasses.replace(GC_SPEC, ratio=Ratio(write=4, read=5))


# ------------------------------------------------------------------------------ bad command lines

@pytest.mark.parametrize("command, message", [
    ("mixed ratio(write=1) n=1 -rate threads=1", "'mixed' is not a cassandra-stress user command (parse "
     "simple-mode commands with stress_cmdline.parse_stress_command)"),
    ("user profile=gc.yaml ops(insert=1) n=1 -rate threads=1 -col size=FIXED(9)",
     "-col is not modelled in user mode: the profile's table_definition and columnspec give the schema and the "
     "columns"),
    ("user profile=gc.yaml ops(insert=1) n=1 -rate threads=1 -schema keyspace=x",
     "-schema is not modelled in user mode: the profile's table_definition and columnspec give the schema and "
     "the columns"),
    ("user profile=gc.yaml ops(insert=1) clustering=fixed(1) n=1 -rate threads=1",
     "unknown user option 'clustering=fixed(1)' (known: profile=, ops(...), no-warmup, n=, duration=, cl=)"),
    ("user profile=gc.yaml ops(insert=1,simple1=1) n=1 -rate threads=1",
     "ops name 'simple1' is not one of insert, read, delete (the operations a cassperf profile defines)"),
    ("user profile=gc.yaml ops(insert=1.5) n=1 -rate threads=1",
     "ops weight insert=1.5 must be a whole number >= 0 (WorkloadSpec ratios are whole numbers)"),
    ("user profile=gc.yaml ops(insert=1,INSERT=2) n=1 -rate threads=1", "ops name 'INSERT' is given twice"),
    ("user profile=gc.yaml ops(insert=0,read=0) n=1 -rate threads=1",
     "ratio(write=0,read=0) is all zero: give at least one weight > 0 (of write, read, delete)"),
    ("user ops(insert=1) n=1 -rate threads=1", "user needs profile=<file>"),
    ("user profile=gc.yaml n=1 -rate threads=1", "user needs ops(name=weight,...)"),
    ("user profile=gc.yaml profile=x.yaml ops(insert=1) n=1", "user option profile is given twice"),
    ("user profile=gc.yaml ops(insert=1) n=1",
     "no -rate threads=N: cassandra-stress would ramp threads (auto mode), which WorkloadSpec does not model"),
    ("user profile=gc.yaml ops(insert=1) n=1 -rate auto",
     "-rate 'auto': auto thread ramps are not modelled; give threads=N"),
    ("user profile=gc.yaml ops(insert=1) n=1 -rate threads=2 -insert batchtype=LOGGED",
     "unknown option '-insert' (known: -rate, -pop, -col, -schema, -log, -mode, -graph, -node)"),
])
def test_bad_user_command_lines(command, message):
    with pytest.raises(ConfigError) as info:
        parse_user_command(command, GC_PROFILE)
    assert str(info.value) == message


def test_the_fixtures_user_commands_get_a_config_error_naming_what_is_not_modelled():
    refused = []
    for command in sidecar_commands():
        if " user " not in command:
            continue
        with pytest.raises(ConfigError) as info:
            parse_user_command(command, GC_PROFILE)
        refused.append(str(info.value))
    not_ours = "is not one of insert, read, delete (the operations a cassperf profile defines)"
    assert refused == [f"ops name 'simple_big1' {not_ours}", f"ops name 'simple1' {not_ours}",
                       "-rate 'auto': auto thread ramps are not modelled; give threads=N",
                       f"ops name 'singletrans' {not_ours}"]


# ------------------------------------------------------------------------------ property tests

@st.composite
def profile_specs(draw: st.DrawFn) -> WorkloadSpec:
    """The simple-mode round trip's specs, with every op (delete too) and compression chunk lengths."""
    spec = draw(specs())
    op = draw(st.sampled_from(["write", "read", "delete", "mixed"]))
    ratio = None
    if op == "mixed":
        weights = draw(st.tuples(*[st.integers(0, 50)] * 3).filter(lambda t: sum(1 for w in t if w) >= 2))
        ratio = Ratio(*weights)
    compression = draw(st.none() | st.builds(Compression, st.sampled_from(["LZ4", "Snappy", "Deflate", "Zstd"]),
                                             st.none() | st.sampled_from([1, 4, 16, 64, 1024])))
    return dataclasses.replace(spec, op=op, ratio=ratio, compression=compression)


ROUND_TRIPS = {"n": 0}


@FUZZ
@given(profile_specs())
def test_parse_of_render_is_identity(spec):
    ROUND_TRIPS["n"] += 1
    text = profile_yaml(spec)
    command = to_user_command(spec, "run/profile.yaml")
    expected = dataclasses.replace(spec, replication=spec.replication or Replication.simple(1))
    assert parse_user_command(command, text) == expected
    assert parse_user_command(to_user_args(spec, "run/profile.yaml"), text) == expected
    assert profile_yaml(expected) == text
    assert to_user_command(parse_user_command(command, text), "run/profile.yaml") == command


FUZZED = {"n": 0}


@FUZZ
@given(mutated([GC_PROFILE]))
def test_mutated_profiles_parse_or_raise_config_error(text):
    FUZZED["n"] += 1
    try:
        schema = parse_profile(text, "gc.yaml")
    except ConfigError as exc:
        assert str(exc).startswith("gc.yaml: ")
        return
    assert isinstance(schema, ProfileSchema)


def teardown_module() -> None:
    """Report how many generated inputs the property tests tried (visible with -s)."""
    print(f"\n[stress_profile] round trips tried: {ROUND_TRIPS['n']}, mutated profiles: {FUZZED['n']}")


# ------------------------------------------------------------------------------ the stress runner

FAKE_STRESS = '''\
import json, os, pathlib, sys
args = sys.argv[1:]
profile = next((a.split("=", 1)[1] for a in args if a.startswith("profile=")), None)
record = {"argv": args, "cwd": os.getcwd(),
          "profile": pathlib.Path(profile).read_text() if profile else None}
pathlib.Path(os.environ["FAKE_STRESS_RECORD"]).write_text(json.dumps(record))
sys.stdout.write(pathlib.Path(os.environ["FAKE_STRESS_OUTPUT"]).read_text())
'''
CS_FIXTURE = "cassandra-stress/cs_4.1.11_write_n25000_threads3_full_crystalloide.txt"


@pytest.fixture
def fake_stress(tmp_path: Path, fixtures: Path) -> tuple[Path, dict[str, str], Path]:
    """A stand-in cassandra-stress: records its argv, cwd and the profile it was given, then
    prints a real cassandra-stress 4.1 capture (cassandra-stress itself is not installed here)."""
    exe = tmp_path / "bin" / "cassandra-stress"
    exe.parent.mkdir()
    exe.write_text(f"#!{sys.executable}\n{FAKE_STRESS}")
    exe.chmod(0o755)
    record = tmp_path / "record.json"
    env = {**os.environ, "FAKE_STRESS_RECORD": str(record), "FAKE_STRESS_OUTPUT": str(fixtures / CS_FIXTURE)}
    return exe, env, record


def _run(spec: WorkloadSpec, tmp_path: Path, fake: tuple[Path, dict[str, str], Path], **kw: object):
    exe, env, record = fake
    with RunWriter(tool="cassandra-stress", root=tmp_path / "runs") as run:
        run_cassandra_stress(spec, run, executable=exe, env=env, progress=False, **kw)
    return load_run(run.path), run.path, json.loads(record.read_text())


def test_stress_argv_in_user_mode_takes_contact_points_and_port_from_the_cluster():
    argv = stress_argv(GC_SPEC, "cs", RemoteCluster("10.0.0.5,10.0.0.6", port=9142), profile="p.yaml")
    assert argv[:4] == ["cs", "user", "profile=p.yaml", "ops(insert=4,read=5,delete=1)"]
    assert argv[-4:] == ["-node", "10.0.0.5,10.0.0.6", "-port", "native=9142"]
    with pytest.raises(WorkloadSpecError, match="^a delete share cannot be expressed"):
        stress_argv(GC_SPEC, "cs")


def test_runner_writes_the_profile_into_raw_and_runs_user_mode(tmp_path, fake_stress):
    spec = dataclasses.replace(GC_SPEC, hdr_file=None, duration=None, n=25_000)
    loaded, folder, seen = _run(spec, tmp_path, fake_stress)
    raw = folder / "raw"
    assert (raw / PROFILE_NAME).read_text() == profile_yaml(spec)
    assert seen["argv"] == to_user_args(spec, PROFILE_NAME) and seen["cwd"] == str(raw)
    assert seen["profile"] == profile_yaml(spec)  # the relative profile= path resolves in the tool's cwd
    assert loaded.manifest["command"] == (
        "cassandra-stress user profile=cassandra-stress-profile.yaml ops(insert=4,read=5,delete=1) n=25000 "
        "cl=LOCAL_QUORUM -rate threads=64 fixed=2000/s -pop dist=UNIFORM(1..10000000) -log interval=1 "
        "-mode native cql3 connectionsPerHost=128")
    assert loaded.manifest["stress_profile"] == "raw/cassandra-stress-profile.yaml"
    assert parse_user_command(loaded.manifest["command"], profile_dir=raw) == spec
    total = loaded.summary[loaded.summary["op"] == "total"].iloc[0]
    assert total["count"] == 25000  # the capture the stand-in printed was parsed into the run


def test_runner_keeps_simple_mode_for_a_spec_without_deletes(tmp_path, fake_stress):
    spec = WorkloadSpec(op="mixed", ratio={"write": 4, "read": 5}, n=25_000, concurrency=3)
    loaded, folder, seen = _run(spec, tmp_path, fake_stress)
    assert seen["argv"] == to_stress_args(spec) and seen["profile"] is None
    assert loaded.manifest["command"] == "cassandra-stress " + to_stress_command(spec)
    assert "stress_profile" not in loaded.manifest and not (folder / "raw" / PROFILE_NAME).exists()


def test_runner_uses_the_profile_when_asked(tmp_path, fake_stress):
    spec = WorkloadSpec(op="write", n=25_000, concurrency=3, compression=Compression("LZ4", 16))
    loaded, folder, seen = _run(spec, tmp_path, fake_stress, user_profile=True)
    assert seen["argv"][:3] == ["user", "profile=cassandra-stress-profile.yaml", "ops(insert=1)"]
    assert (folder / "raw" / PROFILE_NAME).read_text() == profile_yaml(spec)


def test_runner_forced_to_simple_mode_refuses_deletes_before_any_output(tmp_path, fake_stress):
    exe, env, record = fake_stress
    with RunWriter(tool="cassandra-stress", root=tmp_path / "runs") as run:
        with pytest.raises(WorkloadSpecError) as info:
            run_cassandra_stress(GC_SPEC, run, executable=exe, env=env, progress=False, user_profile=False)
        assert str(info.value) == DELETE_NOT_IN_SIMPLE_MODE
        assert list((run.path / "raw").iterdir()) == [] and not record.exists()


# ------------------------------------------------------------------------------ output of user-mode runs

@pytest.mark.parametrize("name, op, rates", [
    # sidecar: first step (4 threads) Op rate 24 op/s [insert: 24 op/s]; 8 threads 26 [insert: 43]
    ("cs_3.11_user_insert+simple1_autorate_ru-locale-decimal-comma_kmwork.log", "insert", [(24, 24), (26, 43)]),
    # sidecar: Op rates 4 thr 10,068; 8 thr 14,222 ([singletrans: ...] in the file)
    ("cs_dse51_user_singletrans_autorate_RTFAP2_read.log", "singletrans", [(10068, 10068), (14222, 14222)]),
])
def test_the_parser_names_user_mode_ops_by_their_ops_names(fixtures, name, op, rates):
    runs = parse(fixtures / "cassandra-stress" / name, format="cassandra-stress").runs
    for run, (total_rate, op_rate) in zip(runs, rates):
        summary = run.summary.set_index("op")
        assert set(summary.index) == {op, "total"}
        assert (summary.loc["total", "rate_ops_s"], summary.loc[op, "rate_ops_s"]) == (total_rate, op_rate)
