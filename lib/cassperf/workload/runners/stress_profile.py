"""cassandra-stress *user profiles* <-> WorkloadSpec, for what simple mode cannot run: deletes.

Simple mode has no delete operation (see ``stress_cmdline``), so a spec with ``op="delete"`` or
a ratio with a delete weight (the garbagecollect experiment's read:write:delete = 5:4:1) runs as
``cassandra-stress user`` with a profile YAML this module renders. The profile describes the
same schema simple mode creates, ``<keyspace>.standard1`` (``key blob PRIMARY KEY``, ``"C0"`` ..
``"C{n-1}" blob``), with the CQL of ``stress_cmdline.schema_cql(spec)`` verbatim, so replication,
compaction and compression -- including ``chunk_length_in_kb``, which simple mode cannot pass --
come from the profile itself. The command line is

  user profile=gc.yaml ops(insert=4,read=5,delete=1) duration=10m cl=LOCAL_QUORUM
  -rate threads=64 fixed=2000/s -pop dist=UNIFORM(1..10000000) -log interval=1 hdrfile=gc.hdr
  -mode native cql3 connectionsPerHost=128

in the simple-mode renderer's canonical order and display rules (its helpers are reused:
``count_args``, ``rate_pop_args``, ``client_args``, ``display_command``). A spec without a
delete share still renders simple mode (``stress_cmdline.to_stress_args``): the seeds' commands stay exactly as
they were; the profile is used when the spec needs it (``needs_profile``) or the caller asks.

Rules, checked against apache/cassandra tools/stress (StressProfile.java, StressYaml.java,
settings/SettingsCommandUser.java, settings/OptionAnyProbabilities.java,
settings/OptionDistribution.java, settings/SettingsPopulation.java, settings/SettingsRate.java,
settings/SettingsCommandPreDefined.java, generate/SeedManager.java, generate/values/Generator.java,
GeneratorConfig.java, Bytes.java, HexBytes.java, operations/userdefined/SchemaInsert.java) and
tools/cqlstress-example.yaml:

- ``ops(name=weight,...)``: ``insert`` is the write (SettingsCommandUser treats that name
  specially); other names are query names, looked up lower-cased. Spec weights map write ->
  insert, read -> read, delete -> delete; only non-zero weights are written (as simple mode's
  ratio). One op is ``ops(insert=1)`` / ``ops(read=1)`` / ``ops(delete=1)``; a mixed spec with a
  single non-zero weight is refused (user mode could not tell it from the plain op).
- The key population is ``-pop`` on the command line, as in simple mode: SettingsPopulation
  applies to user mode, and SeedManager picks each op's seed from it (reads and the delete
  query draw from its read side). A columnspec ``population`` is something else: the universe
  of values a column draws from, seeded per row (Generator.setSeed, Bytes.generate; default
  uniform(1..100B), which simple mode's key also uses), so it is never written and is refused
  when parsed. Without ``-pop`` both modes default alike: seq=1..n for insert-only, else
  gaussian(1..n).
- columnspec: ``key`` ``size: fixed(10)`` (simple mode's ``keysize=`` default is 10 bytes),
  each column ``size: fixed(column_size)``; a column without a size would get uniform(4..8).
  Keys of these maps must be lower case (StressProfile.lowerCase does not lower them).
- insert: ``partitions: fixed(1)`` (one partition per op; one row, as standard1 has no
  clustering) and ``batchtype: UNLOGGED`` (the default is LOGGED; SchemaInsert sends a
  one-statement batch as the bare statement, so each insert op is one UPDATE either way).
- queries: ``read: SELECT * FROM standard1 WHERE key = ?`` and ``delete: DELETE FROM
  standard1 WHERE key = ?``, both ``fields: samerow`` (bind the key of the generated row).
- In user mode the blob key is random bytes (Bytes, salt "seed for stresskey") while simple
  mode writes hex text (HexBytes, salt "randomstrkey"): the same seed is a different key, so a
  table loaded in simple mode is not found by user-mode reads and deletes. Load it in user mode
  (``op="write"`` through the profile, i.e. ``ops(insert=1)``) before a mixed run with deletes.
- Op names in the output are the ops(...) names: ``insert``, ``read``, ``delete`` (simple mode
  prints ``WRITE`` / ``READ``).

Parsing back (``parse_user_command`` with the profile's text) gives the equal spec for every
spec the renderer produces, with one normalisation: ``replication=None`` renders as
cassandra-stress's default (SimpleStrategy, factor 1) and reads back as that. Anything a profile
holds that WorkloadSpec does not model raises a ConfigError naming the file, the key and what is
modelled. Profiles are read with PyYAML's safe loader (``yaml.safe_load``'s, in its libyaml build
when present).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cassperf.errors import ConfigError
from cassperf.workload.spec import (
    Compaction,
    Compression,
    Ratio,
    Replication,
    WorkloadSpec,
    WorkloadSpecError,
    _path,
    parse_count,
)
from cassperf.workload.runners.stress_cmdline import (
    client_args,
    command_options,
    command_tokens,
    count_args,
    display_command,
    has_delete,
    parse_client_groups,
    parse_multi,
    parse_pop_group,
    parse_rate_group,
    rate_pop_args,
    schema_cql,
    split_groups,
)

#: Bytes of cassandra-stress's simple-mode key (SettingsCommandPreDefined ``keysize=`` default).
KEY_SIZE = 10
TABLE = "standard1"
#: The file name the stress runner gives the profile in the run's raw/ folder.
PROFILE_NAME = "cassandra-stress-profile.yaml"
READ_CQL = f"SELECT * FROM {TABLE} WHERE key = ?"
DELETE_CQL = f"DELETE FROM {TABLE} WHERE key = ?"
QUERIES = {"read": READ_CQL, "delete": DELETE_CQL}
#: WorkloadSpec ratio names -> cassandra-stress user-mode op names.
OP_NAMES = {"write": "insert", "read": "read", "delete": "delete"}

_TOP_KEYS = ("keyspace", "keyspace_definition", "table", "table_definition", "columnspec", "insert", "queries")
_MODELLED_QUERIES = f"read: {READ_CQL} and delete: {DELETE_CQL}, each with fields: samerow"
_MODELLED_TABLE = (f'{TABLE} (key blob PRIMARY KEY, "C0".."C<n-1>" blob) WITH compression = {{...}} '
                   f'[AND compaction = {{...}}]')
_MODELLED_COLUMNS = "name and size: fixed(N) for key (N = 10) and every column (one N for all)"
_MODELLED_INSERT = "partitions: fixed(1) and batchtype: UNLOGGED"

# CREATE KEYSPACE IF NOT EXISTS "ksgc" WITH replication = {'class': 'org.apache.cassandra.locator.NetworkTopologyStrategy', 'dc1' : '3'} AND durable_writes = true;
_KEYSPACE_CQL_RE = re.compile(
    r"\s*CREATE\s+KEYSPACE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\"?)(\w+)\1\s+WITH\s+replication\s*=\s*\{([^{}]*)\}"
    r"(?:\s+AND\s+durable_writes\s*=\s*true)?\s*;?\s*", re.IGNORECASE)
# CREATE TABLE IF NOT EXISTS ksgc.standard1 (key blob PRIMARY KEY \n, "C0" blob ...) WITH compression = {} AND compaction = {...};
_TABLE_CQL_RE = re.compile(
    r"\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(?:(\"?)(\w+)\1\s*\.\s*)?(\"?)(\w+)\3\s*\((.*)\)"
    r"\s*(?:WITH\s+(.*?))?\s*;?\s*", re.IGNORECASE | re.DOTALL)
# key blob PRIMARY KEY   |   "C0" blob
_COLUMN_RE = re.compile(r"\s*(\"?)(\w+)\1\s+(\w+)(\s+PRIMARY\s+KEY)?\s*", re.IGNORECASE)
# compression = {'class' : 'LZ4Compressor', 'chunk_length_in_kb' : '16'}
_TABLE_OPTION_RE = re.compile(r"\s*(\w+)\s*=\s*\{([^{}]*)\}\s*", re.IGNORECASE)
# 'dc1' : '3'
_MAP_ITEM_RE = re.compile(r"\s*'([^']*)'\s*:\s*'([^']*)'\s*")
# fixed(10), FIXED(818), fixed(1k)
_FIXED_RE = re.compile(r"\s*fixed\(\s*([0-9]+[kmb]?)\s*\)\s*", re.IGNORECASE)
# '3' (ASCII digits only: str.isdigit() takes '³', which int() refuses)
_WHOLE_RE = re.compile(r"[0-9]+")
# "C12" -> 12
_VALUE_COLUMN_RE = re.compile(r"C(0|[1-9][0-9]*)")
#: yaml.safe_load's loader, in C when PyYAML was built with libyaml (about 14x faster here).
_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class ProfileSchema:
    """What a profile fixes of a spec (the rest comes from the command line)."""

    keyspace: str
    replication: Replication
    compaction: Compaction | None
    compression: Compression | None
    column_count: int
    column_size: int            # bytes per column value
    queries: tuple[str, ...]    # query names defined (of read, delete)


# ---------------------------------------------------------------------------------- render

def needs_profile(spec: WorkloadSpec) -> bool:
    """True when simple mode cannot run ``spec`` and a user profile must (a delete share)."""
    return has_delete(spec)


def _scalar(text: str) -> str:
    """A YAML scalar: plain when it reads back as itself, else double-quoted (JSON is YAML)."""
    if re.fullmatch(r"[A-Za-z0-9_.\-]+", text) and yaml.safe_load(text) == text:
        return text
    return json.dumps(text)


def _literal(cql: str) -> str:
    """A ``|`` block for CQL that ends with one newline (as schema_cql's statements do)."""
    return "|\n" + "".join(f"  {line}\n" for line in cql.rstrip("\n").split("\n"))


def profile_yaml(spec: WorkloadSpec) -> str:
    """The user profile for ``spec``'s schema and row shape (the same for every op mix)."""
    keyspace_cql, table_cql = schema_cql(spec)
    lines = [
        "# cassandra-stress user profile for a cassperf WorkloadSpec (cassperf.workload.runners.stress_profile):",
        "# the schema cassandra-stress creates in simple mode, and the read and delete queries.",
        f"keyspace: {_scalar(spec.keyspace)}",
        f"keyspace_definition: {_literal(keyspace_cql)}".rstrip("\n"),
        f"table: {TABLE}",
        f"table_definition: {_literal(table_cql)}".rstrip("\n"),
        "columnspec:",
        "  - name: key",
        f"    size: fixed({KEY_SIZE})",
    ]
    for i in range(spec.column_count):
        lines += [f"  - name: C{i}", f"    size: fixed({spec.column_size})"]
    lines += ["insert:", "  partitions: fixed(1)", "  batchtype: UNLOGGED", "queries:"]
    for name, cql in QUERIES.items():
        lines += [f"  {name}:", f"    cql: {cql}", "    fields: samerow"]
    return "\n".join(lines) + "\n"


def ops_arg(spec: WorkloadSpec) -> str:
    """``ops(insert=4,read=5,delete=1)`` for a mix, ``ops(insert=1)`` for a plain write."""
    if spec.ratio is None:
        return f"ops({OP_NAMES[spec.op]}=1)"
    weights = spec.ratio.items()
    if len(weights) == 1:
        name, weight = weights[0]
        raise WorkloadSpecError("ratio", f"a mix of one operation (ratio {name}={weight}) cannot be told from "
                                         f"op={name!r} in cassandra-stress user mode (both are "
                                         f"ops({OP_NAMES[name]}=...)): give op={name!r} instead")
    return "ops(" + ",".join(f"{OP_NAMES[k]}={v}" for k, v in weights) + ")"


def to_user_args(spec: WorkloadSpec, profile_path: str) -> list[str]:
    """cassandra-stress arguments (argv after the program name) running ``spec`` in user mode
    with the profile at ``profile_path`` (relative paths resolve in cassandra-stress's cwd)."""
    path = _path("profile", profile_path)
    return ["user", f"profile={path}", ops_arg(spec), *count_args(spec), *rate_pop_args(spec), *client_args(spec)]


def to_user_command(spec: WorkloadSpec, profile_path: str) -> str:
    """The one-line display form of ``to_user_args`` (no program name)."""
    return display_command(to_user_args(spec, profile_path))


# ---------------------------------------------------------------------------------- parse profile

def _bad(source: str, key: str, problem: str, modelled: str) -> ConfigError:
    return ConfigError(f"{source}: {key}: {problem}; modelled: {modelled}")


def _cql_map(source: str, key: str, body: str, modelled: str) -> dict[str, str]:
    items: dict[str, str] = {}
    for part in body.split(",") if body.strip() else []:
        m = _MAP_ITEM_RE.fullmatch(part)
        if not m:
            raise _bad(source, key, f"map entry {part.strip()!r} is not 'name' : 'value'", modelled)
        if m.group(1) in items:
            raise _bad(source, key, f"{m.group(1)!r} is given twice", modelled)
        items[m.group(1)] = m.group(2)
    return items


def _spec_part(source: str, key: str, build: Any, *args: Any) -> Any:
    """Build a spec part, naming the file and key in the spec's own error."""
    try:
        return build(*args)
    except WorkloadSpecError as exc:
        raise ConfigError(f"{source}: {key}: {exc}") from None


def _replication(source: str, cql: str) -> tuple[str, Replication]:
    modelled = ("CREATE KEYSPACE [IF NOT EXISTS] name WITH replication = {'class': SimpleStrategy or "
                "NetworkTopologyStrategy, factors} [AND durable_writes = true]")
    m = _KEYSPACE_CQL_RE.fullmatch(cql)
    if not m:
        if re.search(r"durable_writes\s*=\s*false", cql, re.IGNORECASE):
            raise _bad(source, "keyspace_definition", "durable_writes = false is not modelled", modelled)
        raise _bad(source, "keyspace_definition", f"this statement is not modelled: {' '.join(cql.split())}",
                   modelled)
    items = _cql_map(source, "keyspace_definition", m.group(3), modelled)
    strategy = items.pop("class", None)
    if strategy is None:
        raise _bad(source, "keyspace_definition", "replication has no 'class'", modelled)
    if strategy.rsplit(".", 1)[-1] == "SimpleStrategy" and set(items) == {"replication_factor"} \
            and _WHOLE_RE.fullmatch(items["replication_factor"]):
        return m.group(2), _spec_part(source, "keyspace_definition", Replication, strategy,
                                      int(items["replication_factor"]))
    if not all(_WHOLE_RE.fullmatch(v) for v in items.values()):
        raise _bad(source, "keyspace_definition", f"replication factors {items} are not all whole numbers", modelled)
    return m.group(2), _spec_part(source, "keyspace_definition", Replication, strategy, None,
                                  tuple((k, int(v)) for k, v in items.items()))


def _table(source: str, cql: str, keyspace: str) -> tuple[int, Compaction | None, Compression | None]:
    key = "table_definition"
    m = _TABLE_CQL_RE.fullmatch(cql)
    if not m:
        raise _bad(source, key, f"this is not a CREATE TABLE statement: {' '.join(cql.split())}", _MODELLED_TABLE)
    if m.group(2) is not None and m.group(2) != keyspace:
        raise _bad(source, key, f"the table is in keyspace {m.group(2)!r}, not {keyspace!r}", _MODELLED_TABLE)
    if m.group(4) != TABLE:
        raise _bad(source, key, f"table {m.group(4)!r} is not modelled", _MODELLED_TABLE)
    body = m.group(5)
    if re.search(r"PRIMARY\s+KEY\s*\(", body, re.IGNORECASE):
        raise _bad(source, key, "a compound primary key (clustering columns) is not modelled", _MODELLED_TABLE)
    columns = [_COLUMN_RE.fullmatch(part) for part in body.split(",")]
    first = columns[0]
    if first is None or first.group(2).lower() != "key" or first.group(3).lower() != "blob" or not first.group(4):
        raise _bad(source, key, f"the first column {body.split(',')[0].strip()!r} is not key blob PRIMARY KEY",
                   _MODELLED_TABLE)
    indices = []
    for part, col in zip(body.split(",")[1:], columns[1:], strict=True):
        name = _VALUE_COLUMN_RE.fullmatch(col.group(2)) if col is not None and col.group(1) else None
        if col is None or name is None or col.group(4):
            raise _bad(source, key, f"column {part.strip()!r} is not modelled", _MODELLED_TABLE)
        if col.group(3).lower() != "blob":
            raise _bad(source, key, f"column {col.group(2)!r} is {col.group(3)}, not blob", _MODELLED_TABLE)
        indices.append(int(name.group(1)))
    if not indices or sorted(indices) != list(range(len(indices))):
        raise _bad(source, key, f"the value columns are {sorted(indices)}, not C0..C<n-1>", _MODELLED_TABLE)
    options: dict[str, dict[str, str]] = {}
    for part in re.split(r"\s+AND\s+", m.group(6) or "", flags=re.IGNORECASE) if m.group(6) else []:
        opt = _TABLE_OPTION_RE.fullmatch(part)
        name = opt.group(1).lower() if opt else ""
        if opt is None or name not in ("compression", "compaction"):
            raise _bad(source, key, f"table option {part.strip()!r} is not modelled", _MODELLED_TABLE)
        if name in options:
            raise _bad(source, key, f"{name} is given twice", _MODELLED_TABLE)
        options[name] = _cql_map(source, key, opt.group(2), _MODELLED_TABLE)
    if "compression" not in options:
        raise _bad(source, key, "no compression = {...}: the server would pick its own default", _MODELLED_TABLE)
    comp = options["compression"]
    compression = None
    if comp:
        extra = set(comp) - {"class", "chunk_length_in_kb"}
        if "class" not in comp or extra:
            raise _bad(source, key, f"compression {comp} is not modelled", "compression = {} or {'class': "
                       "compressor[, 'chunk_length_in_kb': N]}")
        chunk = comp.get("chunk_length_in_kb")
        if chunk is not None and not _WHOLE_RE.fullmatch(chunk):
            raise _bad(source, key, f"chunk_length_in_kb {chunk!r} is not a whole number", "a power of two")
        compression = _spec_part(source, key, Compression, comp["class"], int(chunk) if chunk else None)
    compaction = None
    if "compaction" in options:
        opts = dict(options["compaction"])
        strategy = opts.pop("class", None)
        if strategy is None:
            raise _bad(source, key, "compaction has no 'class'", "compaction = {'class': strategy, options}")
        compaction = _spec_part(source, key, Compaction, strategy, tuple(opts.items()))
    return len(indices), compaction, compression


def _fixed_size(source: str, key: str, value: object) -> int:
    m = _FIXED_RE.fullmatch(value) if isinstance(value, str) else None
    if not m:
        raise _bad(source, key, f"size {value!r} is not modelled", _MODELLED_COLUMNS)
    return parse_count(m.group(1))


def _columnspec(source: str, specs: object, column_count: int) -> int:
    if not isinstance(specs, list):
        raise _bad(source, "columnspec", f"{specs!r} is not a list", _MODELLED_COLUMNS)
    names = ["key"] + [f"C{i}" for i in range(column_count)]
    sizes: dict[str, int] = {}
    for i, entry in enumerate(specs):
        where = f"columnspec[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise _bad(source, where, f"{entry!r} has no name", _MODELLED_COLUMNS)
        name = entry["name"]
        where = f"columnspec[{i}] ({name})"
        for k in entry:
            if k not in ("name", "size"):
                why = " (which partitions are visited is -pop on the command line)" if k == "population" else ""
                raise _bad(source, where, f"{k} is not modelled{why}", _MODELLED_COLUMNS)
        if name not in names:
            raise _bad(source, where, "no such column in table_definition", _MODELLED_COLUMNS)
        if name in sizes:
            raise _bad(source, where, "the column is given twice", _MODELLED_COLUMNS)
        if "size" not in entry:
            raise _bad(source, where, "no size (cassandra-stress would use uniform(4..8))", _MODELLED_COLUMNS)
        sizes[name] = _fixed_size(source, where, entry["size"])
    missing = [n for n in names if n not in sizes]
    if missing:
        raise _bad(source, "columnspec", f"no entry for {', '.join(missing)} (cassandra-stress would size it "
                                         f"uniform(4..8))", _MODELLED_COLUMNS)
    if sizes["key"] != KEY_SIZE:
        raise _bad(source, "columnspec (key)", f"size fixed({sizes['key']}) is not modelled", _MODELLED_COLUMNS)
    column_sizes = {sizes[n] for n in names[1:]}
    if len(column_sizes) != 1:
        raise _bad(source, "columnspec", f"the columns have different sizes {sorted(column_sizes)}",
                   _MODELLED_COLUMNS)
    return column_sizes.pop()


def _insert(source: str, insert: object) -> None:
    if not isinstance(insert, dict):
        raise _bad(source, "insert", f"{insert!r} is not a mapping", _MODELLED_INSERT)
    for k, v in insert.items():
        fixed = _FIXED_RE.fullmatch(v) if isinstance(v, str) else None
        ok = (k == "partitions" and fixed is not None and parse_count(fixed.group(1)) == 1) \
            or (k == "batchtype" and v == "UNLOGGED")
        if not ok:
            raise _bad(source, f"insert.{k}", f"{v!r} is not modelled", _MODELLED_INSERT)
    if set(insert) != {"partitions", "batchtype"}:
        missing = sorted({"partitions", "batchtype"} - set(insert))
        raise _bad(source, "insert", f"no {', '.join(missing)} (cassandra-stress's default differs)", _MODELLED_INSERT)


def _normal_cql(cql: str) -> str:
    return " ".join(cql.replace(";", " ").split()).lower()


def _queries(source: str, queries: object, keyspace: str) -> tuple[str, ...]:
    if not isinstance(queries, dict):
        raise _bad(source, "queries", f"{queries!r} is not a mapping", _MODELLED_QUERIES)
    for name, query in queries.items():
        where = f"queries.{name}"
        if name not in QUERIES:
            raise _bad(source, where, "this query is not modelled", _MODELLED_QUERIES)
        if not isinstance(query, dict):
            raise _bad(source, where, f"{query!r} is not a mapping of cql and fields", _MODELLED_QUERIES)
        for k in query:
            if k not in ("cql", "fields"):
                raise _bad(source, f"{where}.{k}", "not modelled", _MODELLED_QUERIES)
        for k in ("cql", "fields"):
            if k not in query:
                raise _bad(source, f"{where}.{k}", "missing", _MODELLED_QUERIES)
        expected = _normal_cql(QUERIES[name])
        given = _normal_cql(str(query["cql"]))
        if given not in (expected, expected.replace(f" {TABLE} ", f" {keyspace}.{TABLE} ")):
            raise _bad(source, f"{where}.cql", f"{query['cql']!r} is not modelled", _MODELLED_QUERIES)
        if str(query["fields"]).lower() != "samerow":
            raise _bad(source, f"{where}.fields", f"{query['fields']!r} is not modelled", _MODELLED_QUERIES)
    return tuple(q for q in QUERIES if q in queries)


def parse_profile(text: str, source: str = "<profile>") -> ProfileSchema:
    """The schema and row shape a user profile fixes; ``source`` names it in errors."""
    try:
        doc = yaml.load(text, Loader=_SAFE_LOADER)  # noqa: S506 -- a safe loader, as yaml.safe_load
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"{source}: not YAML: {getattr(exc, 'problem', None) or exc}{where}") from None
    if not isinstance(doc, dict):
        got = "an empty document" if doc is None else f"a {type(doc).__name__}"
        raise ConfigError(f"{source}: a cassandra-stress profile is a YAML mapping, got {got}")
    for k in doc:
        if k not in _TOP_KEYS:
            raise _bad(source, str(k), "not modelled", f"a profile holds {', '.join(_TOP_KEYS)}")
    for k in _TOP_KEYS:
        if k not in doc:
            raise _bad(source, k, "missing", f"a profile holds {', '.join(_TOP_KEYS)}")
    keyspace = doc["keyspace"]
    if not isinstance(keyspace, str):
        raise _bad(source, "keyspace", f"{keyspace!r} is not a name", "a keyspace name")
    try:
        WorkloadSpec(n=1, keyspace=keyspace)
    except WorkloadSpecError as exc:
        raise ConfigError(f"{source}: keyspace: {exc}") from None
    if doc["table"] != TABLE:
        raise _bad(source, "table", f"{doc['table']!r} is not modelled", TABLE)
    for k in ("keyspace_definition", "table_definition"):
        if not isinstance(doc[k], str):
            raise _bad(source, k, f"{doc[k]!r} is not CQL text", "the CQL schema_cql renders")
    ks_name, replication = _replication(source, doc["keyspace_definition"])
    if ks_name != keyspace:
        raise _bad(source, "keyspace_definition", f"it creates keyspace {ks_name!r}, not {keyspace!r}",
                   "the keyspace named by keyspace:")
    column_count, compaction, compression = _table(source, doc["table_definition"], keyspace)
    column_size = _columnspec(source, doc["columnspec"], column_count)
    _insert(source, doc["insert"])
    queries = _queries(source, doc["queries"], keyspace)
    return ProfileSchema(keyspace, replication, compaction, compression, column_count, column_size, queries)


# ---------------------------------------------------------------------------------- parse command

_USER_KNOWN = "profile=, ops(...), no-warmup, n=, duration=, cl="


def _ops(tok: str) -> dict[str, int]:
    """``ops(insert=4,read=5,delete=1)`` -> spec ratio weights {"write": 4, "read": 5, "delete": 1}."""
    names = {v: k for k, v in OP_NAMES.items()}
    weights: dict[str, int] = {}
    for name, weight in parse_multi(tok, "ops"):
        op = names.get(name.lower())
        if op is None:
            raise ConfigError(f"ops name {name!r} is not one of insert, read, delete (the operations a "
                              f"cassperf profile defines)")
        if op in weights:
            raise ConfigError(f"ops name {name!r} is given twice")
        if not re.fullmatch(r"[0-9]+", weight):
            raise ConfigError(f"ops weight {name}={weight} must be a whole number >= 0 "
                              f"(WorkloadSpec ratios are whole numbers)")
        weights[op] = int(weight)
    return weights


def parse_user_command(command: str | Sequence[str], profile_text: str | None = None, *,
                       profile_dir: str | Path | None = None) -> WorkloadSpec:
    """A ``cassandra-stress user profile=... ops(...) ...`` command line (display string or
    argv, with or without the program name) and its profile as a WorkloadSpec.

    ``profile_text`` is the profile's YAML; when None it is read from the ``profile=`` path
    (relative to ``profile_dir``, default the current folder). Raises ConfigError naming any
    option or profile key WorkloadSpec does not model."""
    tokens = command_tokens(command)
    word, params, groups = split_groups(tokens)
    if word.lower() != "user":
        raise ConfigError(f"{word!r} is not a cassandra-stress user command (parse simple-mode commands with "
                          f"stress_cmdline.parse_stress_command)")
    for group in ("-col", "-schema"):
        if group in groups:
            raise ConfigError(f"{group} is not modelled in user mode: the profile's table_definition and "
                              f"columnspec give the schema and the columns")
    kw: dict[str, object] = {}
    profile: str | None = None
    weights: dict[str, int] | None = None
    for key, tok in command_options(params, kw, "user"):
        if key == "profile" and "=" in tok:
            profile = tok.split("=", 1)[1]
        elif key == "ops":
            weights = _ops(tok)
        else:
            raise ConfigError(f"unknown user option {tok!r} (known: {_USER_KNOWN})")
    if profile is None:
        raise ConfigError("user needs profile=<file>")
    if weights is None:
        raise ConfigError("user needs ops(name=weight,...)")
    source = profile
    if profile_text is None:
        path = Path(profile.removeprefix("file://"))
        if not path.is_absolute():
            path = Path(profile_dir or ".") / path
        source = str(path)
        try:
            profile_text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read the cassandra-stress profile {path}: {exc}") from None
    schema = parse_profile(profile_text, source)
    for op, weight in weights.items():
        if weight and op != "write" and op not in schema.queries:
            raise ConfigError(f"ops({OP_NAMES[op]}=...) names a query {source} does not define "
                              f"(it defines {', '.join(schema.queries) or 'none'})")
    nonzero = {op: w for op, w in weights.items() if w}
    if len(nonzero) == 1:
        kw["op"] = next(iter(nonzero))
    else:
        kw["op"] = "mixed"
        kw["ratio"] = Ratio.of(weights)  # all zero raises, naming the weights
    parse_rate_group(groups, kw, None)  # user mode without -rate ramps threads (SettingsRate)
    parse_pop_group(groups, kw)
    parse_client_groups(groups, kw)
    return WorkloadSpec(keyspace=schema.keyspace, replication=schema.replication, compaction=schema.compaction,
                        compression=schema.compression, column_count=schema.column_count,
                        column_size=schema.column_size, **kw)  # type: ignore[arg-type]
