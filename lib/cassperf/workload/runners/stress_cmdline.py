"""cassandra-stress command lines <-> WorkloadSpec, and the schema cassandra-stress creates.

Rendering follows the seeds' form, one canonical order:

  write no-warmup n=10000000 cl=LOCAL_QUORUM -rate threads=256 throttle=0/s
  -pop seq=1..10000000 -col size=FIXED(818) -schema keyspace=ks410rf3
  "replication(strategy=NetworkTopologyStrategy, dc1=3)" -log interval=1 hdrfile=run.hdr
  -mode native cql3 connectionsPerHost=128 -graph file=run.html

(one line). Rules, checked against apache/cassandra tools/stress (Settings*.java):

- ``mixed ratio(write=4,read=5)``: the ratio names only ops with a non-zero weight; for a
  user-given ratio cassandra-stress treats the ops left out as 0 (OptionEnumProbabilities).
- Simple mode has no delete operation (Command: read, write, counter_read, counter_write,
  mixed, user), so ``op="delete"`` or a ratio with ``delete`` raises a ConfigError; a delete
  share needs a user profile (``stress_profile``, which reuses the helpers below: count_args,
  rate_pop_args, client_args, display_command and the parse_* group parsers) or the
  python-driver engine.
- ``-rate threads=N throttle=X/s | fixed=X/s``; an unlimited rate is written
  ``throttle=0/s`` as the seeds do (0 means no limit to cassandra-stress).
- ``-col``: ``size=FIXED(s)`` only when s differs from cassandra-stress's default 34 bytes,
  ``n=FIXED(c)`` only when c differs from 5; ``-schema keyspace=`` only when not keyspace1.
- ``-schema compression=`` takes a compressor class only; a chunk length cannot be passed,
  so rendering one raises unless ``schema_precreated=True`` (create the table first with
  ``schema_cql``; cassandra-stress then keeps it: it runs CREATE ... IF NOT EXISTS).
- cl, ``-rate``, ``-log interval=`` and ``-mode native cql3`` are always written, so the
  command says what ran. ``native`` and ``cql3`` are accepted and ignored by 4.x.
- The display string quotes an argument only when it holds a space (as the seeds do); it is
  not shell-safe (parentheses): run ``to_stress_args`` as an argv list.

Parsing mirrors cassandra-stress: it joins the arguments, drops whitespace after ',', '=' and
'(' (StressSettings.repairParams), splits on spaces and groups by the ``-option`` words. Every
option WorkloadSpec does not model raises a ConfigError naming it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Sequence

from cassperf.errors import ConfigError
from cassperf.workload.spec import (
    STRESS_DEFAULT_COLUMN_COUNT,
    STRESS_DEFAULT_COLUMN_SIZE,
    Compaction,
    Compression,
    Population,
    Rate,
    Ratio,
    Replication,
    WorkloadSpec,
    WorkloadSpecError,
    format_duration,
    format_number,
    parse_count,
)

DELETE_NOT_IN_SIMPLE_MODE = (
    "a delete share cannot be expressed in cassandra-stress simple mode: its commands are "
    "read, write, mixed, counter_read and counter_write, and mixed ratio(...) takes only those; "
    "run deletes with a cassandra-stress user profile (a DELETE query in ops(...)): "
    "cassperf.workload.runners.stress_profile.profile_yaml(spec) and to_user_args(spec, profile_path), "
    "which run_cassandra_stress uses by itself for such a spec, or with the python-driver engine"
)

_GROUPS = ("-rate", "-pop", "-col", "-schema", "-log", "-mode", "-graph", "-node")
# FIXED(818) -- the only column distribution modelled
_FIXED_RE = re.compile(r"fixed\(([0-9]+[kmb]?)\)", re.IGNORECASE)
# ratio(write=4,read=5) / replication(strategy=NetworkTopologyStrategy,dc1=3) after repair
_MULTI_RE = re.compile(r"([a-z]+)\((.*)\)", re.IGNORECASE)
# interval=1, interval=1s, interval=500ms
_INTERVAL_RE = re.compile(r"([0-9]+)(ms|s|)")
# duration=10m
_DURATION_ARG_RE = re.compile(r"[0-9]+[smh]", re.IGNORECASE)


# ---------------------------------------------------------------------------------- render

def _rate_arg(rate: Rate) -> str:
    return "throttle=0/s" if rate.kind == "unlimited" else f"{rate.kind}={rate.ops_per_s}/s"


def _population_arg(pop: Population) -> str:
    if pop.kind == "seq":
        return f"seq={pop.low}..{pop.high}"
    extra = ""
    if pop.mean is not None and pop.stdev is not None:
        extra = f",{format_number(pop.mean)},{format_number(pop.stdev)}"
    return f"dist={pop.kind.upper()}({pop.low}..{pop.high}{extra})"


def _replication_arg(rep: Replication) -> str:
    if rep.strategy == "SimpleStrategy":
        return f"replication(strategy=SimpleStrategy, factor={rep.factor})"
    dcs = ", ".join(f"{dc}={rf}" for dc, rf in rep.dc_factors)
    return f"replication(strategy=NetworkTopologyStrategy, {dcs})"


def _compaction_arg(comp: Compaction) -> str:
    opts = "".join(f", {k}={v}" for k, v in comp.options)
    return f"compaction(strategy={comp.strategy}{opts})"


def _interval_arg(seconds: float) -> str:
    ms = round(seconds * 1000)
    return str(ms // 1000) if ms % 1000 == 0 else f"{ms}ms"


def count_args(spec: WorkloadSpec) -> list[str]:
    """The command's own options every cassandra-stress command takes, in the canonical order:
    ``[no-warmup] n=N|duration=D cl=CL`` (shared by simple mode and ``user`` mode)."""
    args = [] if spec.warmup else ["no-warmup"]
    args.append(f"n={spec.n}" if spec.n is not None else f"duration={format_duration(int(spec.duration or 0))}")
    args.append(f"cl={spec.cl}")
    return args


def rate_pop_args(spec: WorkloadSpec) -> list[str]:
    """``-rate threads=N throttle=X/s|fixed=X/s`` and, when set, ``-pop ...``."""
    args = ["-rate", f"threads={spec.concurrency}", _rate_arg(spec.rate)]
    if spec.population is not None:
        args += ["-pop", _population_arg(spec.population)]
    return args


def client_args(spec: WorkloadSpec) -> list[str]:
    """What the client records and how it connects: ``-log``, ``-mode``, ``-graph``, ``-node``."""
    args = ["-log", f"interval={_interval_arg(spec.interval_s)}"]
    if spec.hdr_file is not None:
        args.append(f"hdrfile={spec.hdr_file}")
    if spec.log_file is not None:
        args.append(f"file={spec.log_file}")
    args += ["-mode", "native", "cql3"]
    if spec.prepared:
        args.append("prepared")
    if spec.connections_per_host is not None:
        args.append(f"connectionsPerHost={spec.connections_per_host}")
    if spec.max_pending is not None:
        args.append(f"maxPending={spec.max_pending}")
    if spec.graph_file is not None:
        args += ["-graph", f"file={spec.graph_file}"]
        if spec.graph_revision is not None:
            args.append(f"revision={spec.graph_revision}")
        if spec.graph_title is not None:
            args.append(f"title={spec.graph_title}")
    if spec.local_dc is not None or spec.nodes:
        args.append("-node")
        if spec.local_dc is not None:
            args.append(f"datacenter={spec.local_dc}")
        if spec.nodes:
            args.append(",".join(spec.nodes))
    return args


def display_command(args: Sequence[str]) -> str:
    """The seeds' one-line display of an argv: arguments holding a space are double-quoted."""
    return " ".join(f'"{a}"' if " " in a else a for a in args)


def has_delete(spec: WorkloadSpec) -> bool:
    """True when ``spec`` deletes (op="delete" or a ratio with a delete weight)."""
    return spec.op == "delete" or (spec.ratio is not None and spec.ratio.delete > 0)


def to_stress_args(spec: WorkloadSpec, *, schema_precreated: bool = False) -> list[str]:
    """The cassandra-stress arguments (argv after the program name) for ``spec``."""
    if has_delete(spec):
        raise WorkloadSpecError("op", DELETE_NOT_IN_SIMPLE_MODE)
    if spec.compression is not None and spec.compression.chunk_length_in_kb is not None \
            and not schema_precreated:
        raise WorkloadSpecError(
            "compression",
            f"cassandra-stress -schema compression= takes a compressor class only, so "
            f"chunk_length_in_kb={spec.compression.chunk_length_in_kb} cannot be passed: create the "
            f"table first with schema_cql(spec) and render with schema_precreated=True")
    args = [spec.op]
    if spec.ratio is not None:
        args.append("ratio(" + ",".join(f"{k}={v}" for k, v in spec.ratio.items()) + ")")
    args += count_args(spec)
    args += rate_pop_args(spec)
    col = []
    if spec.column_size != STRESS_DEFAULT_COLUMN_SIZE:
        col.append(f"size=FIXED({spec.column_size})")
    if spec.column_count != STRESS_DEFAULT_COLUMN_COUNT:
        col.append(f"n=FIXED({spec.column_count})")
    if col:
        args += ["-col", *col]
    schema = []
    if spec.keyspace != "keyspace1":
        schema.append(f"keyspace={spec.keyspace}")
    if spec.replication is not None:
        schema.append(_replication_arg(spec.replication))
    if spec.compaction is not None:
        schema.append(_compaction_arg(spec.compaction))
    if spec.compression is not None:
        schema.append(f"compression={spec.compression.compressor}")
    if schema:
        args += ["-schema", *schema]
    return args + client_args(spec)


def to_stress_command(spec: WorkloadSpec, *, schema_precreated: bool = False) -> str:
    """The seeds' one-line form (no program name); arguments holding a space are double-quoted."""
    return display_command(to_stress_args(spec, schema_precreated=schema_precreated))


# ---------------------------------------------------------------------------------- schema

def schema_cql(spec: WorkloadSpec, *, counter_table: bool = False) -> list[str]:
    """CREATE KEYSPACE and CREATE TABLE keyspace.standard1 exactly as cassandra-stress builds
    them (SettingsSchema.createKeyspaceStatementCQL3 / createStandard1StatementCQL3): the
    keyspace double-quoted, the strategy class fully qualified, columns "C0".."Cn-1" in byte
    order, ``compression = {}`` when none is set. Additions cassandra-stress cannot express:
    ``'chunk_length_in_kb'`` in the compression map. ``counter_table`` adds counter1."""
    rep = spec.replication or Replication.simple(1)
    cls = f"org.apache.cassandra.locator.{rep.strategy}"
    if rep.strategy == "SimpleStrategy":
        pairs = [("replication_factor", str(rep.factor))]
    else:
        pairs = [(dc, str(rf)) for dc, rf in rep.dc_factors]
    keyspace = (f"CREATE KEYSPACE IF NOT EXISTS \"{spec.keyspace}\" WITH replication = {{'class': '{cls}'"
                + "".join(f", '{k}' : '{v}'" for k, v in pairs)
                + "} AND durable_writes = true;\n")
    names = sorted(f"C{i}" for i in range(spec.column_count))  # cassandra-stress sorts by bytes

    def table(name: str, head: str, col_type: str) -> str:
        cql = f"CREATE TABLE IF NOT EXISTS {spec.keyspace}.{name} ({head}"
        cql += "".join(f"\n, \"{c}\" {col_type}" for c in names)
        cql += ") WITH compression = {"
        if spec.compression is not None:
            cql += f"'class' : '{spec.compression.compressor}'"
            if spec.compression.chunk_length_in_kb is not None:
                cql += f", 'chunk_length_in_kb' : '{spec.compression.chunk_length_in_kb}'"
        cql += "}"
        if spec.compaction is not None:
            cql += f" AND compaction = {{ 'class' : '{spec.compaction.strategy}'"
            cql += "".join(f", '{k}' : '{v}'" for k, v in spec.compaction.options)
            cql += "}"
        return cql + ";\n"

    statements = [keyspace, table("standard1", "key blob PRIMARY KEY ", "blob")]
    if counter_table:
        statements.append(table("counter1", "key blob PRIMARY KEY,", "counter"))
    return statements


# ---------------------------------------------------------------------------------- parse

def _unknown(group: str, token: str, known: str) -> ConfigError:
    return ConfigError(f"unknown {group} option {token!r} (known: {known})")


def split_groups(tokens: list[str]) -> tuple[str, list[str], dict[str, list[str]]]:
    """(command word, its options, {"-rate": [...], ...}); unknown or repeated groups raise."""
    command, params = tokens[0], []
    groups: dict[str, list[str]] = {}
    current: list[str] = params
    for tok in tokens[1:]:
        if tok.startswith("-") and not re.fullmatch(r"-[0-9].*", tok):
            name = tok.lower()
            if name not in _GROUPS:
                raise ConfigError(f"unknown option {tok!r} (known: {', '.join(_GROUPS)})")
            if name in groups:
                raise ConfigError(f"{name} is given twice")
            groups[name] = current = []
        else:
            current.append(tok)
    return command, params, groups


def parse_multi(token: str, name: str) -> list[tuple[str, str]]:
    """``name(k=v,k2=v2)`` -> [(k, v), ...]; raises naming the malformed part."""
    m = _MULTI_RE.fullmatch(token)
    if not m or m.group(1).lower() != name:
        raise ConfigError(f"{token!r} is not {name}(key=value,...)")
    pairs = []
    for part in m.group(2).split(","):
        key, sep, value = part.partition("=")
        if not sep or not key or not value:
            raise ConfigError(f"{name}(...) part {part!r} is not key=value")
        pairs.append((key, value))
    return pairs


def _count(token: str, value: str, what: str) -> int:
    try:
        return parse_count(value)
    except ValueError:
        raise ConfigError(f"{token!r}: {what} must be digits with an optional k/m/b suffix") from None


def _fixed(token: str, value: str) -> int:
    m = _FIXED_RE.fullmatch(value)
    if not m:
        raise ConfigError(f"-col {token!r}: only FIXED(n) distributions are modelled")
    return _count(token, m.group(1), "FIXED(n)")


def option_key(token: str) -> str:
    """The name a command option is known by: 'n' for n=10, 'ratio' for ratio(write=1)."""
    return token.split("=", 1)[0].split("(", 1)[0].lower()


def parse_count_option(tok: str, kw: dict[str, object]) -> bool:
    """One of the options ``count_args`` renders (no-warmup, n=, duration=, cl=) onto ``kw``;
    False when ``tok`` is none of them."""
    key = option_key(tok)
    value = tok.split("=", 1)[1] if "=" in tok else ""
    if tok.lower() == "no-warmup":
        kw["warmup"] = False
    elif key == "n" and "=" in tok:
        kw["n"] = _count(tok, value, "n")
    elif key == "duration" and "=" in tok:
        if not _DURATION_ARG_RE.fullmatch(value):
            raise ConfigError(f"{tok!r}: duration must be digits and a unit s, m or h (e.g. 10m)")
        kw["duration"] = value.lower()
    elif key == "cl" and "=" in tok:
        kw["cl"] = value
    else:
        return False
    return True


def command_options(params: list[str], kw: dict[str, object], what: str) -> Iterator[tuple[str, str]]:
    """(key, token) of each option of a command (``what``: write, read, mixed, user) that is not
    one of the count options (those go onto ``kw``, see parse_count_option); an option given
    twice is refused."""
    seen: set[str] = set()
    for tok in params:
        key = option_key(tok)
        if key in seen:
            raise ConfigError(f"{what} option {key} is given twice")
        seen.add(key)
        if not parse_count_option(tok, kw):
            yield key, tok


def _parse_command(op_token: str, params: list[str], kw: dict[str, object]) -> None:
    op = op_token.lower()
    op = "write" if op == "insert" else op
    if op not in ("write", "read", "mixed"):
        raise ConfigError(f"operation {op_token!r} is not one of write, read, mixed "
                          f"(cassandra-stress user / counter commands are not modelled by WorkloadSpec)")
    kw["op"] = op
    known = "no-warmup, n=, duration=, cl=" + (", ratio(...)" if op == "mixed" else "")
    for key, tok in command_options(params, kw, op):
        if key == "ratio" and op == "mixed":
            weights: dict[str, int] = {}
            for name, weight in parse_multi(tok, "ratio"):
                if name.lower() not in ("write", "read"):
                    raise ConfigError(f"ratio option {name!r} is not one of write, read "
                                      f"(cassandra-stress simple mode has no delete operation)")
                if not re.fullmatch(r"[0-9]+", weight):
                    raise ConfigError(f"ratio weight {name}={weight} must be a whole number >= 0")
                weights[name.lower()] = int(weight)
            kw["ratio"] = Ratio.of(weights)
        else:
            raise _unknown(op, tok, known)


def _parse_rate(params: list[str], kw: dict[str, object]) -> None:
    threads = None
    rates: dict[str, Rate] = {}
    for tok in params:
        low = tok.lower()
        if low.startswith("threads="):
            value = tok.split("=", 1)[1]
            if not re.fullmatch(r"[0-9]+", value):
                raise ConfigError(f"-rate {tok!r}: threads must be a whole number")
            threads = int(value)
        elif low.startswith(("throttle=", "fixed=", "limit=")):
            kind = low.split("=", 1)[0]
            text = tok if kind != "limit" else "throttle=" + tok.split("=", 1)[1]  # pre-3.x name
            rates[kind] = Rate.parse(text)
        elif low in ("auto",) or low.startswith(("threads>=", "threads<=")):
            raise ConfigError(f"-rate {tok!r}: auto thread ramps are not modelled; give threads=N")
        else:
            raise _unknown("-rate", tok, "threads=, throttle=, fixed=")
    if threads is None:
        raise ConfigError("-rate needs threads=N (auto thread ramps are not modelled)")
    limited = [r for r in rates.values() if r.kind != "unlimited"]
    if len(limited) > 1:
        raise ConfigError("-rate has both fixed and throttle set: choose one")
    kw["concurrency"] = threads
    kw["rate"] = limited[0] if limited else Rate()


def _parse_schema(params: list[str], kw: dict[str, object]) -> None:
    for tok in params:
        low = tok.lower()
        if low.startswith("keyspace="):
            kw["keyspace"] = tok.split("=", 1)[1]
        elif low.startswith("compression="):
            kw["compression"] = Compression(tok.split("=", 1)[1])
        elif low.startswith("replication("):
            kw["replication"] = _parse_replication(parse_multi(tok, "replication"))
        elif low.startswith("compaction("):
            pairs = parse_multi(tok, "compaction")
            strategy = [v for k, v in pairs if k.lower() == "strategy"]
            if not strategy:
                raise ConfigError(f"{tok!r}: compaction(...) needs strategy=")
            kw["compaction"] = Compaction(strategy[0], tuple((k, v) for k, v in pairs if k.lower() != "strategy"))
        else:
            raise _unknown("-schema", tok, "keyspace=, replication(...), compaction(...), compression=")


def _parse_replication(pairs: list[tuple[str, str]]) -> Replication:
    strategy, factor, dcs = "SimpleStrategy", None, []
    for key, value in pairs:
        if key.lower() == "strategy":
            strategy = value
        elif key.lower() in ("factor", "replication_factor"):
            if not re.fullmatch(r"[0-9]+", value):
                raise ConfigError(f"replication factor {value!r} must be a whole number")
            factor = int(value)
        else:
            if not re.fullmatch(r"[0-9]+", value):
                raise ConfigError(f"replication factor {key}={value} must be a whole number")
            dcs.append((key, int(value)))
    rep = Replication(strategy, factor=factor, dc_factors=tuple(dcs)) \
        if factor is not None or dcs else Replication(strategy, factor=1)  # type: ignore[arg-type]
    return rep


def _parse_simple(group: str, params: list[str], kw: dict[str, object],
                  fields: dict[str, str], flags: dict[str, tuple[str, object]] | None = None) -> None:
    """``key=value`` options onto spec fields; ``flags`` are bare words."""
    flags = flags or {}
    known = ", ".join([*fields, *flags])
    for tok in params:
        key = tok.split("=", 1)[0] + "=" if "=" in tok else tok
        match = next((k for k in fields if k.lower() == key.lower()), None)
        flag = next((k for k in flags if k.lower() == tok.lower()), None)
        if match is not None:
            kw[fields[match]] = tok.split("=", 1)[1]
        elif flag is not None:
            name, value = flags[flag]
            if name:
                kw[name] = value
        else:
            raise _unknown(group, tok, known)


def command_tokens(command: str | Sequence[str]) -> list[str]:
    """A cassandra-stress command line (display string or argv, with or without the program
    name) as cassandra-stress sees it: joined, whitespace after ',', '=' and '(' dropped
    (StressSettings.repairParams), split on spaces. Raises ConfigError when empty."""
    try:
        tokens = shlex.split(command) if isinstance(command, str) else [str(t) for t in command]
    except ValueError as exc:  # an unclosed quote or a trailing backslash
        raise ConfigError(f"cannot split the command line into arguments: {exc}") from None
    if tokens and tokens[0].rsplit("/", 1)[-1] == "cassandra-stress":
        tokens = tokens[1:]
    tokens = re.sub(r"([,=(])\s+", r"\1", " ".join(tokens)).split()
    if not tokens:
        raise ConfigError("empty cassandra-stress command line")
    return tokens


def parse_rate_group(groups: dict[str, list[str]], kw: dict[str, object], default_threads: int | None) -> None:
    """``-rate`` onto ``kw``; without one, ``default_threads`` (cassandra-stress's threads=200
    for a counted write) or a ConfigError (it would ramp threads in auto mode)."""
    if "-rate" in groups:
        _parse_rate(groups["-rate"], kw)
    elif default_threads is not None:
        kw["concurrency"] = default_threads
    else:
        raise ConfigError("no -rate threads=N: cassandra-stress would ramp threads (auto mode), "
                          "which WorkloadSpec does not model")


def parse_pop_group(groups: dict[str, list[str]], kw: dict[str, object]) -> None:
    """``-pop seq=a..b`` or ``-pop dist=NAME(...)`` onto ``kw``."""
    if "-pop" in groups:
        if len(groups["-pop"]) != 1:
            raise ConfigError(f"-pop takes one of seq=a..b or dist=NAME(a..b), got {' '.join(groups['-pop'])!r}")
        tok = groups["-pop"][0]
        if not tok.lower().startswith(("seq=", "dist=")):
            raise _unknown("-pop", tok, "seq=, dist=")
        kw["population"] = Population.parse(tok)


def parse_client_groups(groups: dict[str, list[str]], kw: dict[str, object]) -> None:
    """``-log``, ``-mode``, ``-graph`` and ``-node`` onto ``kw`` (no ``-mode``: prepared, as
    cassandra-stress's default mode prepares statements)."""
    _parse_simple("-log", groups.get("-log", []), kw,
                  {"interval=": "interval_s", "hdrfile=": "hdr_file", "file=": "log_file"})
    if "interval_s" in kw:
        m = _INTERVAL_RE.fullmatch(str(kw["interval_s"]).lower())
        if not m:
            raise ConfigError(f"-log interval={kw['interval_s']}: expected seconds or Nms (e.g. 1, 1s, 500ms)")
        kw["interval_s"] = int(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
    kw.setdefault("prepared", True)
    if "-mode" in groups:
        kw["prepared"] = False
        _parse_simple("-mode", groups["-mode"], kw,
                      {"connectionsPerHost=": "connections_per_host", "maxPending=": "max_pending"},
                      {"native": ("", None), "cql3": ("", None), "prepared": ("prepared", True)})
        for name in ("connections_per_host", "max_pending"):
            if name in kw:
                value = str(kw[name])
                if not re.fullmatch(r"[0-9]+", value):
                    raise ConfigError(f"-mode {name}={value}: expected a whole number")
                kw[name] = int(value)
    if "-graph" in groups:
        _parse_simple("-graph", groups["-graph"], kw,
                      {"file=": "graph_file", "revision=": "graph_revision", "title=": "graph_title"})
    for tok in groups.get("-node", []):
        if tok.lower().startswith("datacenter="):
            kw["local_dc"] = tok.split("=", 1)[1]
        elif "=" not in tok and tok.lower() != "whitelist" and "nodes" not in kw:
            kw["nodes"] = tuple(tok.split(","))
        else:
            raise _unknown("-node", tok, "datacenter=, host[,host...]")


def parse_stress_command(command: str | Sequence[str]) -> WorkloadSpec:
    """A cassandra-stress simple-mode command line (display string or argv, with or without
    the program name) as a WorkloadSpec. Raises ConfigError naming any option not modelled."""
    tokens = command_tokens(command)
    op_token, params, groups = split_groups(tokens)
    kw: dict[str, object] = {"column_count": STRESS_DEFAULT_COLUMN_COUNT,
                             "column_size": STRESS_DEFAULT_COLUMN_SIZE, "prepared": True}
    _parse_command(op_token, params, kw)
    parse_rate_group(groups, kw, 200 if kw["op"] == "write" and "n" in kw else None)
    parse_pop_group(groups, kw)
    for tok in groups.get("-col", []):
        low = tok.lower()
        if low.startswith("size="):
            kw["column_size"] = _fixed(tok, tok.split("=", 1)[1])
        elif low.startswith("n="):
            kw["column_count"] = _fixed(tok, tok.split("=", 1)[1])
        else:
            raise _unknown("-col", tok, "size=FIXED(n), n=FIXED(n)")
    _parse_schema(groups.get("-schema", []), kw)
    parse_client_groups(groups, kw)
    return WorkloadSpec(**kw)  # type: ignore[arg-type]
