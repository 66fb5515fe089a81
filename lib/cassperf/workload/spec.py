"""WorkloadSpec: one workload, described once, validated on construction, frozen.

A spec says what load to run (op mix, count or duration, consistency level, concurrency,
rate mode, key population, row shape), against which schema (keyspace, replication,
compaction, compression of cassandra-stress's ``keyspace1.standard1`` table) and what the
client records (interval length, HDR log, graph file). The spec knows no tool's command line:
engines and runners turn it into load, and the translation to and from cassandra-stress
(``runners.stress_cmdline``: ``to_stress_args``, ``parse_stress_command``, ``schema_cql``, the
CQL cassandra-stress itself would run to create the schema) lives beside the runners.

Why frozen dataclasses and not pydantic: the project already writes records this way, the
model is small, and every error message here is ours, exact and testable (pydantic wraps
messages in its own ValidationError text); no new dependency is needed.

Every problem raises ``WorkloadSpecError`` (a ``ConfigError``) naming the field and the
allowed values. Units: durations and intervals in seconds, sizes in bytes, rates in ops/s.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from cassperf.constraints import PowerOfTwo, Whole
from cassperf.errors import ConfigError

OPS: tuple[str, ...] = ("write", "read", "mixed", "delete")
RATIO_OPS: tuple[str, ...] = ("write", "read", "delete")
CONSISTENCY_LEVELS: tuple[str, ...] = (
    "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_ONE", "LOCAL_QUORUM", "EACH_QUORUM",
    "SERIAL", "LOCAL_SERIAL",
)
RATE_KINDS: tuple[str, ...] = ("unlimited", "throttle", "fixed")
POPULATION_KINDS: tuple[str, ...] = ("seq", "uniform", "gaussian")
REPLICATION_STRATEGIES: tuple[str, ...] = ("SimpleStrategy", "NetworkTopologyStrategy")
COMPACTION_STRATEGIES: dict[str, str] = {
    "LCS": "LeveledCompactionStrategy",
    "STCS": "SizeTieredCompactionStrategy",
    "UCS": "UnifiedCompactionStrategy",
    "TWCS": "TimeWindowCompactionStrategy",
}
COMPRESSORS: dict[str, str] = {
    "LZ4": "LZ4Compressor",
    "SNAPPY": "SnappyCompressor",
    "DEFLATE": "DeflateCompressor",
    "ZSTD": "ZstdCompressor",
}
#: what a spec runs on (cassperf.workload.run.run_spec): the load engine or a stress tool as a subprocess
TOOLS = ("engine", "cassandra-stress", "latte")
#: cassandra-stress's own defaults (tools/stress SettingsColumn / SettingsCommand).
STRESS_DEFAULT_COLUMN_COUNT = 5
STRESS_DEFAULT_COLUMN_SIZE = 34
STRESS_DEFAULT_CL = "LOCAL_ONE"
#: The project's standard row: 5 columns x 818 bytes = 4,090 bytes (the seeds' "4 KiB rows").
DEFAULT_COLUMN_SIZE = 818

# keyspace1, ks410rf3 -- lowercase only: cassandra-stress quotes the keyspace in CREATE KEYSPACE
# but not in CREATE TABLE, so a mixed-case name would create two different keyspaces.
_KEYSPACE_RE = re.compile(r"[a-z][a-z0-9_]{0,47}")
# dc1, us-east-1, DC_2 -- no '=', ',', '(', ')' or spaces: they would break replication(...)
_DC_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
# sstable_size_in_mb=160, scaling_parameters=T4 -- compaction(...) sub-options
_OPTION_KEY_RE = re.compile(r"[a-z][a-z0-9_]*")
_OPTION_VALUE_RE = re.compile(r"[A-Za-z0-9_.\-]+")
_RESERVED_DC_NAMES = frozenset({"strategy", "factor", "replication_factor", "class"})
# run.hdr, /data/runs/2026-01-01T00:00/rf3.hdr -- no spaces, quotes, backslashes or parentheses:
# cassandra-stress re-splits its arguments on spaces and the one-line form is read back by shlex;
# no trailing ',' or '=': cassandra-stress drops the space after them, gluing on the next argument
_PATH_RE = re.compile(r"[A-Za-z0-9_./~+@%:,=\-]*[A-Za-z0-9_./~+@%:\-]")
# 10.17.64.5, node1.example, [::1] -- must not start with '-' (it would read as an option)
_NODE_RE = re.compile(r"[A-Za-z0-9\[][A-Za-z0-9_.:\-\[\]]*")
# 30s, 10m, 2h
_DURATION_RE = re.compile(r"([0-9]+)([smh])")
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600}
# throttle=500/s, fixed=2000/s (cassandra-stress -rate syntax; X must be a whole number)
_RATE_RE = re.compile(r"(throttle|fixed)=(-?[0-9]+(?:\.[0-9]*)?)/s", re.IGNORECASE)
# seq=1..10000000, uniform(1..1000), gaussian(1..1000,500,100), dist=UNIFORM(1..1000)
_SEQ_RE = re.compile(r"seq=([0-9]+[kmb]?)\.\.+([0-9]+[kmb]?)", re.IGNORECASE)
_DIST_RE = re.compile(r"(?:dist=)?([a-z]+)\((.*)\)", re.IGNORECASE)


class WorkloadSpecError(ConfigError):
    """A WorkloadSpec field has a value that cannot be run; ``field`` names it."""

    def __init__(self, field_name: str, message: str) -> None:
        self.field = field_name
        super().__init__(message)


def _fail(field_name: str, message: str) -> WorkloadSpecError:
    return WorkloadSpecError(field_name, message)


def _choice(field_name: str, label: str, value: str, allowed: Sequence[str]) -> str:
    """Normalise ``value`` case-insensitively to one of ``allowed`` or raise with a suggestion."""
    if not isinstance(value, str):
        raise _fail(field_name, f"{label} {value!r} is not one of {', '.join(allowed)}")
    for option in allowed:
        if option.lower() == value.strip().lower():
            return option
    message = f"{label} {value!r} is not one of {', '.join(allowed)}"
    close = difflib.get_close_matches(value.strip().upper(), [a.upper() for a in allowed], n=1, cutoff=0.6)
    if close:
        suggestion = next(a for a in allowed if a.upper() == close[0])
        message += f" (did you mean {suggestion}?)"
    raise _fail(field_name, message)


def _positive_int(field_name: str, value: object, what: str) -> int:
    if not Whole(1).accepts(value):
        raise _fail(field_name, f"{what} must be a whole number > 0, got {value!r}")
    return value


def parse_count(text: str) -> int:
    """cassandra-stress counts: digits with an optional k/m/b suffix (x1e3, x1e6, x1e9)."""
    m = re.fullmatch(r"([0-9]+)([kmb]?)", text.strip().lower())
    if not m:
        raise ValueError(text)
    return int(m.group(1)) * {"": 1, "k": 10**3, "m": 10**6, "b": 10**9}[m.group(2)]


def parse_duration(value: int | str) -> int:
    """Seconds from an int (seconds) or a cassandra-stress duration: '30s', '10m', '2h'."""
    if isinstance(value, bool):
        raise _fail("duration", f"duration must be seconds (int) or like '30s', '10m', '2h', got {value!r}")
    if isinstance(value, int):
        return _positive_int("duration", value, "duration (seconds)")
    m = _DURATION_RE.fullmatch(value.strip().lower()) if isinstance(value, str) else None
    if not m or int(m.group(1)) <= 0:
        raise _fail("duration", f"duration must be seconds (int) or like '30s', '10m', '2h' (> 0), got {value!r}")
    return int(m.group(1)) * _DURATION_UNITS[m.group(2)]


def format_duration(seconds: int) -> str:
    """The largest whole unit: 600 -> '10m', 90 -> '90s', 7200 -> '2h'."""
    for unit in ("h", "m"):
        if seconds % _DURATION_UNITS[unit] == 0:
            return f"{seconds // _DURATION_UNITS[unit]}{unit}"
    return f"{seconds}s"


def format_number(x: float) -> str:
    """Shortest text that parses back to the same float: 500.0 -> '500', 0.5 -> '0.5'."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@dataclass(frozen=True)
class Ratio:
    """Relative weights of a mixed workload, e.g. read:write:delete = 5:4:1."""

    write: int = 0
    read: int = 0
    delete: int = 0

    def __post_init__(self) -> None:
        for name in RATIO_OPS:
            value = getattr(self, name)
            if not Whole(0).accepts(value):
                raise _fail("ratio", f"ratio weight {name}={value!r} must be a whole number >= 0")
        if not any(getattr(self, name) for name in RATIO_OPS):
            given = ",".join(f"{name}={getattr(self, name)}" for name in RATIO_OPS if getattr(self, name) == 0)
            raise _fail("ratio", f"ratio({given}) is all zero: give at least one weight > 0 "
                                 f"(of {', '.join(RATIO_OPS)})")

    @classmethod
    def of(cls, weights: Mapping[str, int]) -> Ratio:
        """From a mapping such as ``{"read": 5, "write": 4, "delete": 1}`` (names case-insensitive)."""
        lowered: dict[str, int] = {}
        for name, weight in weights.items():
            key = name.lower() if isinstance(name, str) else name
            if key not in RATIO_OPS:
                raise _fail("ratio", f"ratio operation {name!r} is not one of {', '.join(RATIO_OPS)}")
            lowered[key] = weight
        if all(isinstance(w, int) and not isinstance(w, bool) and w == 0 for w in lowered.values()):
            given = ",".join(f"{k}={w}" for k, w in lowered.items())
            raise _fail("ratio", f"ratio({given}) is all zero: give at least one weight > 0 "
                                 f"(of {', '.join(RATIO_OPS)})")
        return cls(**lowered)

    def items(self) -> list[tuple[str, int]]:
        """Non-zero weights in the order write, read, delete."""
        return [(name, getattr(self, name)) for name in RATIO_OPS if getattr(self, name)]


@dataclass(frozen=True)
class Rate:
    """How fast to send: ``unlimited``; ``throttle`` (at most X ops/s, no schedule: service
    time); ``fixed`` (X ops/s on a schedule: latency measured from the intended start)."""

    kind: Literal["unlimited", "throttle", "fixed"] = "unlimited"
    ops_per_s: int | None = None

    def __post_init__(self) -> None:
        kind = _choice("rate", "rate mode", self.kind, RATE_KINDS)
        object.__setattr__(self, "kind", kind)
        if kind == "unlimited":
            if self.ops_per_s not in (None, 0):
                raise _fail("rate", f"rate mode unlimited takes no ops/s, got {self.ops_per_s!r}")
            object.__setattr__(self, "ops_per_s", None)
        elif not Whole(1).accepts(self.ops_per_s):
            raise _fail("rate", f"rate {kind}={self.ops_per_s}/s: the rate must be a whole number of "
                                f"ops/s > 0 (e.g. {kind}=2000/s)")

    @classmethod
    def parse(cls, text: str) -> Rate:
        """'unlimited', 'throttle=500/s', 'fixed=2000/s' (0/s means unlimited, as in cassandra-stress)."""
        t = text.strip()
        if t.lower() == "unlimited":
            return cls()
        m = _RATE_RE.fullmatch(t)
        if not m:
            raise _fail("rate", f"rate {text!r} is not one of unlimited, throttle=X/s, fixed=X/s")
        kind, number = m.group(1).lower(), m.group(2)
        if not re.fullmatch(r"-?[0-9]+", number):
            raise _fail("rate", f"rate {kind}={number}/s: the rate must be a whole number of ops/s > 0 "
                                f"(e.g. {kind}=2000/s)")
        value = int(number)
        if value == 0:
            return cls()
        return cls(kind, value)  # type: ignore[arg-type]

    @property
    def is_fixed(self) -> bool:
        """True when latency is response time (fixed rate, coordinated omission corrected)."""
        return self.kind == "fixed"


@dataclass(frozen=True)
class Population:
    """Which partition keys (seeds) the ops visit: a sequence ``seq=low..high`` or a
    distribution ``uniform(low..high)`` / ``gaussian(low..high[,mean,stdev])`` (inclusive)."""

    kind: Literal["seq", "uniform", "gaussian"]
    low: int
    high: int
    mean: float | None = None
    stdev: float | None = None

    def __post_init__(self) -> None:
        kind = _choice("population", "population distribution", self.kind, POPULATION_KINDS)
        object.__setattr__(self, "kind", kind)
        for name in ("low", "high"):
            v = getattr(self, name)
            if not Whole(0).accepts(v):
                raise _fail("population", f"population {name} must be a whole number >= 0, got {v!r}")
        if self.low > self.high:
            raise _fail("population", f"population {kind}({self.low}..{self.high}): low must be <= high")
        if (self.mean is None) != (self.stdev is None):
            raise _fail("population", "population gaussian takes both mean and stdev, or neither")
        if self.mean is not None and self.stdev is not None:
            if kind != "gaussian":
                raise _fail("population", f"population {kind} takes no mean/stdev (only gaussian does)")
            mean, stdev = float(self.mean), float(self.stdev)
            if not (mean == mean and abs(mean) != float("inf")):
                raise _fail("population", f"population gaussian mean must be a finite number, got {self.mean!r}")
            if not (stdev > 0 and stdev != float("inf")):
                raise _fail("population", f"population gaussian stdev must be a finite number > 0, got {self.stdev!r}")
            object.__setattr__(self, "mean", mean)
            object.__setattr__(self, "stdev", stdev)

    @classmethod
    def parse(cls, text: str) -> Population:
        """'seq=1..1000', 'uniform(1..1000)', 'gaussian(1..1000,500,100)', 'dist=UNIFORM(1..1000)'."""
        t = text.strip()
        m = _SEQ_RE.fullmatch(t)
        if m:
            return cls("seq", parse_count(m.group(1)), parse_count(m.group(2)))
        m = _DIST_RE.fullmatch(t)
        if not m:
            raise _fail("population", f"population {text!r} is not one of seq=a..b, uniform(a..b), "
                                      f"gaussian(a..b[,mean,stdev])")
        name = m.group(1).lower()
        name = {"gauss": "gaussian", "normal": "gaussian", "norm": "gaussian"}.get(name, name)
        if name not in ("uniform", "gaussian"):
            raise _fail("population", f"population distribution {m.group(1)!r} is not one of "
                                      f"seq, uniform, gaussian")
        args = [a.strip() for a in m.group(2).split(",")]
        bounds = re.fullmatch(r"([0-9]+[kmbKMB]?)\.\.+([0-9]+[kmbKMB]?)", args[0])
        arity_ok = len(args) == 1 or (name == "gaussian" and len(args) == 3)
        if not bounds or not arity_ok:
            form = "uniform(a..b)" if name == "uniform" else "gaussian(a..b) or gaussian(a..b,mean,stdev)"
            raise _fail("population", f"population {text!r}: expected {form}")
        low, high = parse_count(bounds.group(1)), parse_count(bounds.group(2))
        if len(args) == 3:
            try:
                mean, stdev = float(args[1]), float(args[2])
            except ValueError:
                raise _fail("population", f"population {text!r}: mean and stdev must be numbers") from None
            return cls("gaussian", low, high, mean, stdev)
        return cls(name, low, high)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Replication:
    """Keyspace replication: ``SimpleStrategy`` with one factor (>= 1), or ``NetworkTopologyStrategy``
    with a factor per data centre (in the order given; 0 keeps a DC free of replicas, but not
    every DC can be 0). A factor of 0 overall is refused: no copy of any row, every request fails."""

    strategy: Literal["SimpleStrategy", "NetworkTopologyStrategy"]
    factor: int | None = None
    dc_factors: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        strategy = self.strategy
        if isinstance(strategy, str) and strategy.startswith("org.apache.cassandra.locator."):
            strategy = strategy.rsplit(".", 1)[1]
        strategy = _choice("replication", "replication strategy", strategy, REPLICATION_STRATEGIES)
        object.__setattr__(self, "strategy", strategy)
        if strategy == "SimpleStrategy":
            if self.dc_factors:
                raise _fail("replication", "SimpleStrategy takes one replication factor, not per-DC factors "
                                           "(use NetworkTopologyStrategy for those)")
            if _replication_factor(self.factor, "SimpleStrategy") == 0:
                raise _fail("replication", "replication factor 0 keeps no copy of any row, so every request "
                                           "fails; give a factor of 1 or more")
            return
        if self.factor is not None:
            raise _fail("replication", "NetworkTopologyStrategy takes a factor per DC, e.g. {'dc1': 3}")
        pairs = tuple((dc, rf) for dc, rf in self.dc_factors)
        if not pairs:
            raise _fail("replication", "NetworkTopologyStrategy needs at least one DC, e.g. {'dc1': 3}")
        seen: set[str] = set()
        for dc, rf in pairs:
            if not isinstance(dc, str) or not _DC_RE.fullmatch(dc) or dc.lower() in _RESERVED_DC_NAMES:
                raise _fail("replication", f"data centre name {dc!r} must be letters, digits, '_', '-', '.' "
                                           f"(and not {', '.join(sorted(_RESERVED_DC_NAMES))})")
            if dc in seen:
                raise _fail("replication", f"data centre {dc} is given twice")
            seen.add(dc)
            _replication_factor(rf, dc)
        if all(rf == 0 for _, rf in pairs):
            shown = ", ".join(f"{dc}=0" for dc, _ in pairs)
            raise _fail("replication", f"replication factor 0 in every data centre ({shown}) keeps no copy of "
                                       f"any row, so every request fails; give at least one DC a factor of 1 or "
                                       f"more, e.g. {pairs[0][0]}=1")
        object.__setattr__(self, "dc_factors", pairs)

    @classmethod
    def simple(cls, factor: int) -> Replication:
        return cls("SimpleStrategy", factor=factor)

    @classmethod
    def network_topology(cls, factors: Mapping[str, int] | None = None, **dc_rf: int) -> Replication:
        merged = dict(factors or {})
        merged.update(dc_rf)
        return cls("NetworkTopologyStrategy", dc_factors=tuple(merged.items()))

    def factors(self) -> dict[str, int]:
        """Per-DC factors; SimpleStrategy reports ``{'*': rf}`` (it ignores DCs)."""
        if self.strategy == "SimpleStrategy":
            return {"*": int(self.factor or 0)}
        return dict(self.dc_factors)


def _replication_factor(rf: object, where: str) -> int:
    if not Whole(0).accepts(rf):
        raise _fail("replication", f"replication factor for {where} must be a whole number >= 0, got {rf!r}")
    return rf


@dataclass(frozen=True)
class Compaction:
    """Table compaction: a strategy class (aliases LCS, STCS, UCS, TWCS) and its sub-options in
    the order given, e.g. ``Compaction.of("LCS", sstable_size_in_mb=160)``."""

    strategy: str
    options: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        name = self.strategy
        if isinstance(name, str) and name.startswith("org.apache.cassandra.db.compaction."):
            name = name.rsplit(".", 1)[1]
        if isinstance(name, str) and name.upper() in COMPACTION_STRATEGIES:
            name = COMPACTION_STRATEGIES[name.upper()]
        allowed = list(COMPACTION_STRATEGIES.values())
        name = _choice("compaction", "compaction strategy", name, allowed + list(COMPACTION_STRATEGIES))
        object.__setattr__(self, "strategy", COMPACTION_STRATEGIES.get(name, name))
        pairs = tuple((str(k), str(v)) for k, v in self.options)
        for key, value in pairs:
            if not _OPTION_KEY_RE.fullmatch(key) or key in ("class", "strategy"):
                raise _fail("compaction", f"compaction option name {key!r} must be lowercase letters, "
                                          f"digits and _ (and not 'class' or 'strategy')")
            if not _OPTION_VALUE_RE.fullmatch(value):
                raise _fail("compaction", f"compaction option {key}={value!r}: the value must be letters, "
                                          f"digits, '_', '-', '.' (cassandra-stress splits on ',' and spaces)")
        if len({k for k, _ in pairs}) != len(pairs):
            raise _fail("compaction", "a compaction option is given twice")
        object.__setattr__(self, "options", pairs)

    @classmethod
    def of(cls, strategy: str, **options: object) -> Compaction:
        return cls(strategy, tuple((k, format_number(v) if isinstance(v, float) else str(v))
                                   for k, v in options.items()))


@dataclass(frozen=True)
class Compression:
    """SSTable compression: a compressor class (aliases LZ4, SNAPPY, DEFLATE, ZSTD) and an
    optional chunk length in KiB (a power of two)."""

    compressor: str
    chunk_length_in_kb: int | None = None

    def __post_init__(self) -> None:
        name = self.compressor
        if isinstance(name, str) and name.startswith("org.apache.cassandra.io.compress."):
            name = name.rsplit(".", 1)[1]
        if isinstance(name, str) and name.upper() in COMPRESSORS:
            name = COMPRESSORS[name.upper()]
        name = _choice("compression", "compressor", name, list(COMPRESSORS.values()) + list(COMPRESSORS))
        object.__setattr__(self, "compressor", COMPRESSORS.get(name, name))
        chunk = self.chunk_length_in_kb
        if chunk is not None:
            if not PowerOfTwo(1).accepts(chunk):
                raise _fail("compression", f"chunk_length_in_kb must be a power of two > 0 (4, 16, 64...), "
                                           f"got {chunk!r}")


def _path(field_name: str, value: str | None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _PATH_RE.fullmatch(value):
        raise _fail(field_name, f"{field_name} {value!r} must be a path of letters, digits and _ . / ~ + @ % "
                                f": , = - not ending in ',' or '=' (no spaces, quotes, backslashes or "
                                f"parentheses: cassandra-stress re-splits its arguments on spaces)")
    return value


def _word(field_name: str, value: str | None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9_.:\-]+", value):
        raise _fail(field_name, f"{field_name} {value!r} must be letters, digits, '_', '-', '.', ':' "
                                f"(cassandra-stress splits its arguments on spaces and ',')")
    return value


@dataclass(frozen=True, kw_only=True)
class WorkloadSpec:
    """One workload. Give ``n`` (operations) or ``duration`` (seconds, or '30s' / '10m' / '2h';
    stored as int seconds), never both. Defaults: LOCAL_ONE (cassandra-stress's default),
    unlimited rate, 5 columns of 818 bytes (the project's 4 KiB row), keyspace1, the
    replication / compaction / compression / population cassandra-stress picks (``None``)."""

    op: str = "write"
    ratio: Ratio | None = None              # op == "mixed" only; default write=1, read=1
    n: int | None = None                    # operations
    duration: int | None = None             # seconds (input may be '30s', '10m', '2h')
    warmup: bool = True
    cl: str = STRESS_DEFAULT_CL
    concurrency: int = 200                  # client threads (stress) / requests in flight (driver)
    rate: Rate = field(default_factory=Rate)
    population: Population | None = None    # None: cassandra-stress's default for the op
    column_count: int = STRESS_DEFAULT_COLUMN_COUNT
    column_size: int = DEFAULT_COLUMN_SIZE  # bytes per column value
    keyspace: str = "keyspace1"
    replication: Replication | None = None  # None: SimpleStrategy, replication_factor 1
    compaction: Compaction | None = None    # None: the server's default (STCS / UCS)
    compression: Compression | None = None  # None: no compression (as cassandra-stress creates it)
    interval_s: float = 1.0                 # reporting interval, seconds (whole milliseconds)
    local_dc: str | None = None             # the DC the client treats as local
    nodes: tuple[str, ...] = ()             # contact points; () = localhost
    hdr_file: str | None = None
    log_file: str | None = None
    graph_file: str | None = None
    graph_revision: str | None = None
    graph_title: str | None = None
    connections_per_host: int | None = None
    max_pending: int | None = None          # max in-flight requests per connection
    prepared: bool = False                  # cassandra-stress '-mode ... prepared'

    def __post_init__(self) -> None:
        s = object.__setattr__
        s(self, "op", _choice("op", "operation", self.op, OPS))
        s(self, "cl", _choice("cl", "consistency level", self.cl, CONSISTENCY_LEVELS))
        ratio = self.ratio
        if isinstance(ratio, Mapping):
            ratio = Ratio.of(ratio)
        if self.op == "mixed":
            s(self, "ratio", ratio if ratio is not None else Ratio(write=1, read=1))
        elif ratio is not None:
            raise _fail("ratio", f"ratio is only for op=mixed, not op={self.op}")
        if self.n is not None and self.duration is not None:
            raise _fail("n", "n and duration are both given: give n (an op count) or duration, not both")
        if self.n is None and self.duration is None:
            raise _fail("n", "give n (an op count) or duration (seconds, or like '30s', '10m')")
        if self.n is not None:
            _positive_int("n", self.n, "n (op count)")
        if self.duration is not None:
            s(self, "duration", parse_duration(self.duration))
        for flag in ("warmup", "prepared"):
            if not isinstance(getattr(self, flag), bool):
                raise _fail(flag, f"{flag} must be True or False, got {getattr(self, flag)!r}")
        _positive_int("concurrency", self.concurrency, "concurrency (threads)")
        if isinstance(self.rate, str):
            s(self, "rate", Rate.parse(self.rate))
        elif not isinstance(self.rate, Rate):
            raise _fail("rate", f"rate must be unlimited, throttle=X/s or fixed=X/s, got {self.rate!r}")
        if isinstance(self.population, str):
            s(self, "population", Population.parse(self.population))
        _positive_int("column_count", self.column_count, "column_count")
        _positive_int("column_size", self.column_size, "column_size (bytes)")
        if not isinstance(self.keyspace, str) or not _KEYSPACE_RE.fullmatch(self.keyspace):
            raise _fail("keyspace", f"keyspace {self.keyspace!r} must be lowercase letters, digits and _, "
                                    f"starting with a letter, at most 48 characters")
        rep = self.replication
        if isinstance(rep, int) and not isinstance(rep, bool):
            s(self, "replication", Replication.simple(rep))
        elif isinstance(rep, Mapping):
            s(self, "replication", Replication.network_topology(rep))
        if isinstance(self.compaction, str):
            s(self, "compaction", Compaction(self.compaction))
        if isinstance(self.compression, str):
            s(self, "compression", Compression(self.compression))
        for name, kind in (("ratio", Ratio), ("population", Population), ("replication", Replication),
                           ("compaction", Compaction), ("compression", Compression)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                raise _fail(name, f"{name} must be a {kind.__name__} (or None), got {value!r}")
        interval = self.interval_s
        if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not interval > 0 \
                or abs(interval * 1000 - round(interval * 1000)) > 1e-6 or interval == float("inf"):
            raise _fail("interval_s", f"interval_s must be > 0 seconds in whole milliseconds, got {interval!r}")
        s(self, "interval_s", round(interval * 1000) / 1000)
        s(self, "local_dc", _word("local_dc", self.local_dc))
        nodes = tuple(self.nodes)
        for node in nodes:
            if not isinstance(node, str) or not _NODE_RE.fullmatch(node):
                raise _fail("nodes", f"node {node!r} must be a host name or address (no ',', '=', spaces)")
        s(self, "nodes", nodes)
        for name in ("hdr_file", "log_file", "graph_file"):
            s(self, name, _path(name, getattr(self, name)))
        for name in ("graph_revision", "graph_title"):
            s(self, name, _word(name, getattr(self, name)))
            if getattr(self, name) is not None and self.graph_file is None:
                raise _fail(name, f"{name} needs graph_file (cassandra-stress -graph requires file=)")
        for name in ("connections_per_host", "max_pending"):
            if getattr(self, name) is not None:
                _positive_int(name, getattr(self, name), name)

    @property
    def row_bytes(self) -> int:
        """Bytes of column values per row (5 x 818 = 4,090 for the seeds' rows)."""
        return self.column_count * self.column_size


def _required_replicas(cl: str, rf: Mapping[str, int], dc: str | None) -> tuple[int, str | None]:
    """Replicas a request at ``cl`` must reach, and the DC they must be in (None: any DC).

    Cassandra computes this from the configured replication factors, not from the nodes that
    exist, so RF 3 on a 2-node DC can still serve QUORUM (2 of 3) but never ALL or THREE."""
    total = sum(rf.values())
    if cl in ("ONE",):
        return 1, None
    if cl == "TWO":
        return 2, None
    if cl == "THREE":
        return 3, None
    if cl in ("QUORUM", "SERIAL"):
        return total // 2 + 1, None
    if cl == "ALL":
        return total, None
    local_rf = rf.get(dc or "", 0)
    if cl == "LOCAL_ONE":
        return 1, dc
    return local_rf // 2 + 1, dc  # LOCAL_QUORUM, LOCAL_SERIAL (EACH_QUORUM is handled per DC)


def _failing_levels(rf: Mapping[str, int], placed: Mapping[str, int], local_dcs: Sequence[str]) -> list[str]:
    """Consistency levels (canonical order) that no request can meet with these placements."""
    failing = []
    for cl in CONSISTENCY_LEVELS:
        if cl == "EACH_QUORUM":
            ok = all(placed.get(dc, 0) >= r // 2 + 1 for dc, r in rf.items())
        elif cl.startswith("LOCAL_"):
            ok = all(placed.get(dc, 0) >= _required_replicas(cl, rf, dc)[0] for dc in local_dcs)
        else:
            ok = sum(placed.values()) >= _required_replicas(cl, rf, None)[0]
        if not ok:
            failing.append(cl)
    return failing


def _nodes_word(n: int) -> str:
    return f"{n} node" if n == 1 else f"{n} nodes"


def warn_replication(spec: WorkloadSpec, topology: Mapping[str, int | Sequence[str]]) -> list[str]:
    """Warnings for a spec's replication against a cluster topology ``{dc: node count or nodes}``.

    One warning per DC whose replication factor exceeds its node count, naming the consistency
    levels that will then fail ("RF 3 in dc1 with 1 node: TWO, THREE, QUORUM, ... requests will
    fail"), one for the spec's own consistency level if it cannot be met, one if the local DC is
    not in the topology, and one for SimpleStrategy on a multi-DC cluster. Empty when all is well.
    """
    nodes = {dc: (v if isinstance(v, int) else len(v)) for dc, v in topology.items()}
    rep = spec.replication or Replication.simple(1)
    warnings: list[str] = []
    if rep.strategy == "SimpleStrategy":
        rf = {"*": int(rep.factor or 0)}
        available = {"*": sum(nodes.values())}
        label = {"*": "the cluster (SimpleStrategy ignores DCs)"}
        local_dcs: list[str] = ["*"]
        if len(nodes) > 1:
            warnings.append(f"SimpleStrategy on a cluster with {len(nodes)} DCs ({', '.join(nodes)}): "
                            f"replicas are placed without regard to DCs; use NetworkTopologyStrategy")
    else:
        rf = dict(rep.dc_factors)
        available = {dc: nodes.get(dc, 0) for dc in rf}
        label = {dc: dc if dc in nodes else f"{dc} (not in the topology)" for dc in rf}
        if spec.local_dc is not None:
            local_dcs = [spec.local_dc]
        else:
            local_dcs = list(nodes) if nodes else list(rf)
    if spec.local_dc is not None and spec.local_dc not in nodes:
        warnings.append(f"local DC {spec.local_dc} is not in the topology ({', '.join(nodes) or 'empty'})")
    placed = {dc: min(r, available[dc]) for dc, r in rf.items()}
    failing_anyway = set(_failing_levels(rf, rf, local_dcs))  # e.g. THREE with RF 2 in all
    for dc, r in rf.items():
        if r > available[dc]:
            only_this = {d: (placed[d] if d == dc else rf[d]) for d in rf}
            failing = [cl for cl in _failing_levels(rf, only_this, local_dcs) if cl not in failing_anyway]
            warnings.append(f"RF {r} in {label[dc]} with {_nodes_word(available[dc])}: "
                            f"{', '.join(failing)} requests will fail")
    if spec.cl in _failing_levels(rf, placed, local_dcs):
        if spec.cl == "EACH_QUORUM":
            short = [dc for dc, r in rf.items() if placed[dc] < r // 2 + 1]
            need = f"a quorum in every DC, and {', '.join(short)} cannot hold one"
        elif spec.cl.startswith("LOCAL_"):
            worst = min(local_dcs, key=lambda d: placed.get(d, 0) - _required_replicas(spec.cl, rf, d)[0])
            count = _required_replicas(spec.cl, rf, worst)[0]
            need = f"{count} replica{'s' if count != 1 else ''} in {worst}, which holds {placed.get(worst, 0)}"
        else:
            count = _required_replicas(spec.cl, rf, None)[0]
            need = f"{count} replicas, and only {sum(placed.values())} can be placed"
        warnings.append(f"cl={spec.cl} cannot be met: it needs {need}")
    return warnings
