"""cassandra-stress `Results:` blocks (and the same figures in a -graph file) -> summary rows.

A Results block is a list of `key : value` lines. Generations differ in case, units and
number formatting, never in meaning:

    op rate                   : 16386 [WRITE:16386]                          (2.1 era, no units)
    Op rate                   :    9,645 op/s  [insert: 9,645 op/s]         (3.x, 4.x)
    Latency max               : 1086.3 ms [READ: 1,086.3 ms, WRITE: 983.0 ms]
    Latency mean              : 11608,7 ms [insert: 11 608,7 ms]             (Russian locale)
    Total GC memory           : 1,205 GiB                                    (1.205 GiB there)
    op rate                   : 1922                                         (early 2.1: no brackets, no
                                                                              Total partitions/errors lines)

Numbers follow the JVM's locale, so the decimal separator of a block is read from its latency
lines (always printed with exactly one decimal) before any number is converted; grouping
characters (',' '.' space, no-break space, apostrophe) are then dropped. Units: latencies in
ms, rates per second, GC memory converted to bytes (the tool prints it with 3 decimals of KiB,
MiB or GiB, so bytes are as exact as that), durations in seconds.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

#: key (lower case, single spaces) -> (output column, unit expected after the number or None)
RESULT_KEYS: dict[str, tuple[str, str | None]] = {
    "op rate": ("rate_ops_s", "op/s"),
    "partition rate": ("partition_rate_s", "pk/s"),
    "row rate": ("row_rate_s", "row/s"),
    "latency mean": ("latency_mean_ms", "ms"),
    "latency median": ("latency_p50_ms", "ms"),
    "latency 95th percentile": ("latency_p95_ms", "ms"),
    "latency 99th percentile": ("latency_p99_ms", "ms"),
    "latency 99.9th percentile": ("latency_p999_ms", "ms"),
    "latency max": ("latency_max_ms", "ms"),
    "total partitions": ("partitions", None),
    "total errors": ("errors", None),
    "total gc count": ("gc_count", None),
    "total gc memory": ("gc_memory_bytes", "memory"),
    "total gc mb": ("gc_memory_bytes", "mb"),          # 2.1: 'total gc mb : 308'
    "total gc time": ("gc_time_s", "seconds"),
    "total gc time (s)": ("gc_time_s", None),
    "avg gc time": ("gc_avg_ms", "ms"),
    "avg gc time(ms)": ("gc_avg_ms", None),
    "stddev gc time": ("gc_sdv_ms", "ms"),
    "stdev gc time(ms)": ("gc_sdv_ms", None),
    "total operation time": ("duration_s", "hh:mm:ss"),
}

#: the figures a complete Results block always has (GC lines vary by generation)
REQUIRED_COLUMNS = ("rate_ops_s", "partition_rate_s", "row_rate_s", "latency_mean_ms", "latency_p50_ms",
                    "latency_p95_ms", "latency_p99_ms", "latency_p999_ms", "latency_max_ms", "partitions",
                    "errors", "duration_s")

#: what early 2.1 (2.1.0 to about 2.1.6: no per-op figures in brackets) did not print yet
#: ('Total partitions', 'Total errors' came with the per-op figures)
EARLY_21_ABSENT = ("partitions", "errors")

#: columns that only the run as a whole has (kept on the op="total" summary row)
TOTAL_ONLY_COLUMNS = ("duration_s", "gc_count", "gc_memory_bytes", "gc_time_s", "gc_avg_ms", "gc_sdv_ms")

_MEMORY_UNITS = {"b": 1, "bytes": 1, "kib": 1 << 10, "kb": 1 << 10, "mib": 1 << 20, "mb": 1 << 20,
                 "gib": 1 << 30, "gb": 1 << 30, "tib": 1 << 40, "tb": 1 << 40}

# Op rate                   :    9,645 op/s  [insert: 9,645 op/s]
RESULT_LINE_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 .()]*?)\s*:\s*(.*?)\s*$")

# Latency mean              :  121,0 ms [insert: 121,0 ms]   -> the separator between 1 and 0
_DECIMAL_RE = re.compile(r"\d([.,])\d(?!\d)")

# 1,036 op/s   |   11 608,7 ms   |   NaN ms   |   16386
_VALUE_RE = re.compile(r"^(?P<num>-?\d[\d.,'\u2019 \u00a0\u202f]*|-?NaN|-?Infinity)\s*(?P<unit>[^\d\s].*?)?\s*$")

# [READ: 813 op/s, WRITE: 271 op/s]   |   [WRITE:16386]   |   [insert: 11 608,7 ms]
_BRACKET_ITEM_RE = re.compile(r"([A-Za-z_][\w.\-]*)\s*:\s*(.*?)\s*(?=,\s*[A-Za-z_][\w.\-]*\s*:|$)")

# 00:16:05   (DurationFormatUtils 'HH:mm:ss': hours are not wrapped at 24)
_DURATION_RE = re.compile(r"^(\d+):([0-5]\d):([0-5]\d)(.*)$")

_GROUPING = {".": re.compile(r"[,'\u2019 \u00a0\u202f]"), ",": re.compile(r"[.'\u2019 \u00a0\u202f]")}


def number(token: str, decimal: str) -> float:
    """A number as the JVM printed it in a locale whose decimal separator is `decimal`.

    Raises ValueError for anything that is not a number."""
    t = token.strip()
    if t in ("NaN", "-NaN"):
        return math.nan
    if t.endswith("Infinity"):
        return -math.inf if t.startswith("-") else math.inf
    t = _GROUPING[decimal].sub("", t)
    if decimal == ",":
        t = t.replace(",", ".")
    if not t or t.count(".") > 1:
        raise ValueError(f"not a number: {token!r}")
    return float(t)


def duration_seconds(value: str) -> tuple[float, str]:
    """'00:00:59' -> (59.0, ''); trailing text is returned so the caller can warn about it."""
    m = _DURATION_RE.match(value.strip())
    if not m:
        raise ValueError(f"not a HH:mm:ss duration: {value!r}")
    return float(int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3))), m.group(4).strip()


def detect_decimal(values: list[str]) -> str:
    """The decimal separator used by a block, read from its latency figures ('.' if none)."""
    for v in values:
        main = v.split("[", 1)[0]
        m = _DECIMAL_RE.search(main)
        if m:
            return m.group(1)
    return "."


@dataclass
class ResultsBlock:
    """One Results block: the run's figures, per-op figures, and what did not fit."""

    first_line: int | None
    last_line: int | None
    total: dict[str, float] = field(default_factory=dict)
    per_op: dict[str, dict[str, float]] = field(default_factory=dict)   # op -> column -> value
    problems: list[tuple[int | None, str, str]] = field(default_factory=list)  # (line_no, line, expected)
    decimal: str = "."

    @property
    def ops(self) -> list[str]:
        return list(self.per_op)

    @property
    def early_21(self) -> bool:
        """An early-2.1 block: no per-op figures and neither of the totals that came with them."""
        return not self.per_op and not any(c in self.total for c in EARLY_21_ABSENT)

    @property
    def missing(self) -> list[str]:
        required = [c for c in REQUIRED_COLUMNS if not (self.early_21 and c in EARLY_21_ABSENT)]
        return [c for c in required if c not in self.total]

    @property
    def complete(self) -> bool:
        return not self.missing


_WHOLE_COLUMNS = frozenset({"partitions", "errors"})


def _convert(column: str, expected_unit: str | None, value: str, decimal: str) -> float:
    """One figure with its unit -> a float in the column's unit. Raises ValueError (also for a
    count that is not a whole finite number)."""
    x = _convert_unit(column, expected_unit, value, decimal)
    if column in _WHOLE_COLUMNS and not math.isnan(x) and not (math.isfinite(x) and x == int(x) and abs(x) < 2**62):
        raise ValueError(f"not a whole number: {value!r}")
    return x


def _convert_unit(column: str, expected_unit: str | None, value: str, decimal: str) -> float:
    if expected_unit == "hh:mm:ss":
        seconds, _ = duration_seconds(value)
        return seconds
    m = _VALUE_RE.match(value)
    if not m:
        raise ValueError(f"not a number with a unit: {value!r}")
    x = number(m.group("num"), decimal)
    unit = (m.group("unit") or "").strip()
    if expected_unit == "memory":
        factor = _MEMORY_UNITS.get(unit.lower())
        if factor is None:
            raise ValueError(f"unknown memory unit {unit!r}")
        return x * factor
    if expected_unit == "mb":
        if unit:
            raise ValueError(f"unexpected unit {unit!r}")
        return x * (1 << 20)
    if unit and unit != expected_unit:
        raise ValueError(f"unit {unit!r} where {expected_unit or 'no unit'} was expected")
    return x


def parse_results(items: list[tuple[int | None, str, str]]) -> ResultsBlock:
    """Parse `(line_no, key, value)` items of one Results block (stdout lines or graph JSON)."""
    block = ResultsBlock(first_line=items[0][0] if items else None, last_line=items[-1][0] if items else None)
    block.decimal = detect_decimal([v for _, k, v in items if k.lower().startswith("latency")])
    for line_no, raw_key, value in items:
        key = " ".join(raw_key.lower().split())
        spec = RESULT_KEYS.get(key)
        shown = f"{raw_key} : {value}"
        if spec is None:
            block.problems.append((line_no, shown, "a known Results key (op rate, latency mean, ...)"))
            continue
        column, unit = spec
        main, _, bracket = value.partition("[")
        try:
            if column == "duration_s":
                seconds, trailing = duration_seconds(value)
                block.total[column] = seconds
                if trailing:
                    block.problems.append((line_no, shown, f"nothing after the duration; ignored {trailing!r}"))
                continue
            block.total[column] = _convert(column, unit, main, block.decimal)
        except ValueError as exc:
            block.problems.append((line_no, shown, f"{key} as a number ({exc})"))
            continue
        if not bracket:
            continue
        inner = bracket.rsplit("]", 1)[0] if "]" in bracket else bracket
        if "]" not in bracket:
            block.problems.append((line_no, shown, "a closing ']' after the per-op figures"))
        for m in _BRACKET_ITEM_RE.finditer(inner.strip()):
            op, op_value = m.group(1), m.group(2)
            try:
                block.per_op.setdefault(op, {})[column] = _convert(column, unit, op_value, block.decimal)
            except ValueError as exc:
                block.problems.append((line_no, shown, f"per-op {key} of {op} as a number ({exc})"))
    return block


def summary_rows(block: ResultsBlock, counts: dict[str, int | None]) -> list[dict[str, object]]:
    """Summary rows (SUMMARY_COLUMNS plus gc_* extras): one per op the block names, then 'total'.

    `counts` maps op (and 'total') to the tool's cumulative op count where it printed one."""
    rows: list[dict[str, object]] = []
    for op, values in block.per_op.items():
        row: dict[str, object] = {"op": op, **{k: v for k, v in values.items() if k not in TOTAL_ONLY_COLUMNS}}
        row["count"] = counts.get(op)
        rows.append(row)
    total: dict[str, object] = {"op": "total", **block.total, "count": counts.get("total")}
    rows.append(total)
    return rows
