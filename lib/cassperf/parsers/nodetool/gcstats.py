"""`nodetool gcstats`: GC activity since the previous call (it resets the counters).

Layout (Apache 2.1 to 5.0): a header of right-aligned names in 20-character fields (so names
run together when they are 20 characters long) and one row of values:

           Interval (ms) Max GC Elapsed (ms)Total GC Elapsed (ms)Stdev GC Elapsed (ms)   GC Reclaimed (MB)         Collections      Direct Memory Bytes
                     334                   0                   0                 NaN                   0                   0                       -1

A capture may hold several calls (with the shell prompts between them): each is one snapshot.

Frame "gcstats": snapshot (int, 0-based, in file order), interval_ms, max_gc_elapsed_ms,
total_gc_elapsed_ms, stdev_gc_elapsed_ms, gc_reclaimed_bytes, gc_reclaimed_mb, collections,
direct_memory_bytes (float; NaN for NaN; direct_memory_bytes -1 means the JVM did not report
it, kept as printed). Column names not known here are kept, in snake_case.

"GC Reclaimed (MB)" is mislabelled by nodetool in every version: it prints GCInspector's
totalBytesReclaimed, a count of bytes, unconverted (Apache 5.0.6 printed 1316216048 "MB" for
five young collections of a 512 MiB heap). So gc_reclaimed_bytes is the printed figure and
gc_reclaimed_mb is that figure / 2**20.

Rules: a value row before any header, or whose count of values differs from its header's, is
skipped, counted and warned about (a cut last row makes complete=False); a header with no
row after it means the input was cut (complete=False). No header is a ParseError.
"""

from __future__ import annotations

import re

from cassperf.parsers.base import Format, ParseResult
from cassperf.parsers.nodetool._common import (
    frame, head_lines, lines_of, meaningful, no_structure, number, snake, start, warn_unterminated,
)

NAME = "nodetool-gcstats"

GC_COLUMNS: dict[str, str] = {
    "snapshot": "int64",
    "interval_ms": "float64",
    "max_gc_elapsed_ms": "float64",
    "total_gc_elapsed_ms": "float64",
    "stdev_gc_elapsed_ms": "float64",
    "gc_reclaimed_bytes": "float64",
    "gc_reclaimed_mb": "float64",
    "collections": "float64",
    "direct_memory_bytes": "float64",
}

_KNOWN = {
    "Interval (ms)": "interval_ms",
    "Max GC Elapsed (ms)": "max_gc_elapsed_ms",
    "Total GC Elapsed (ms)": "total_gc_elapsed_ms",
    "Stdev GC Elapsed (ms)": "stdev_gc_elapsed_ms",
    "GC Reclaimed (MB)": "gc_reclaimed_bytes",      # sic: nodetool prints bytes here
    "Collections": "collections",
    "Direct Memory Bytes": "direct_memory_bytes",
}
# Interval (ms) Max GC Elapsed (ms)Total GC Elapsed (ms)Stdev GC Elapsed (ms)   GC Reclaimed (MB) ...
_HEADER_RE = re.compile(r"^Interval \(ms\)\s*Max GC Elapsed \(ms\)")
# an unknown name: words ending in a parenthesised unit, or a run of capitalised words
_NAME_RE = re.compile("|".join(re.escape(k) for k in sorted(_KNOWN, key=len, reverse=True))
                      + r"|[A-Z][A-Za-z]*(?: [A-Za-z]+)*(?: \([^)]*\))?")
# 334                   0                   0                 NaN                   0                   0       -1
_VALUE = r"(?:-?[0-9][0-9.,]*|-?NaN|-?Infinity)"
_ROW_RE = re.compile(rf"^{_VALUE}(?:\s+{_VALUE})*$")


def sniff(text: str) -> bool:
    return any(_HEADER_RE.match(h.strip()) for h in head_lines(text, 4))


def _columns(header: str) -> list[str]:
    return [_KNOWN.get(m.group(0), snake(m.group(0))) for m in _NAME_RE.finditer(header)]


def parse(text: str, source: str = "<text>") -> ParseResult:
    """Parse `nodetool gcstats` output, one or more calls, into "gcstats" (see module docstring)."""
    result = start(text, source, NAME, "nodetool gcstats output")
    rows: list[dict[str, object]] = []
    columns: list[str] | None = None
    header_no: int | None = None
    pending_header = False          # a header seen, its row not yet
    lines = list(meaningful(lines_of(text)))
    for idx, ln in enumerate(lines):
        t = ln.text.strip()
        if _HEADER_RE.match(t):
            if pending_header:
                result.complete = False
                result.warn(header_no, None, "a row of values after this gcstats header")
            columns, header_no, pending_header = _columns(t), ln.no, True
            continue
        values = t.split()
        if columns is not None and _ROW_RE.match(t) and len(values) == len(columns):
            row: dict[str, object] = {"snapshot": len(rows)}
            row.update({col: number(v) for col, v in zip(columns, values)})
            if "gc_reclaimed_bytes" in row:
                row["gc_reclaimed_mb"] = float(row["gc_reclaimed_bytes"]) / 2**20   # type: ignore[arg-type]
            rows.append(row)
            pending_header = False
            continue
        result.skipped_lines += 1
        if columns is not None and idx == len(lines) - 1 and pending_header:
            result.complete = False
            result.warn(ln.no, ln.text, f"{len(columns)} values (the input ends inside the row: truncated)")
            pending_header = False
        elif columns is not None:
            result.warn(ln.no, ln.text, f"a row of {len(columns)} numbers under the gcstats header")
        else:
            result.warn(ln.no, ln.text, "the 'Interval (ms) Max GC Elapsed (ms) ...' header first")
    if columns is None:
        raise no_structure(source, text, "nodetool gcstats output: the 'Interval (ms)  Max GC Elapsed (ms) ...' "
                                         "header and a row of numbers")
    if pending_header:
        result.complete = False
        result.warn(header_no, None, "a row of values after the last gcstats header (the input ends: truncated)")
    warn_unterminated(text, result)
    result.tables["gcstats"] = frame(rows, GC_COLUMNS)
    return result


FORMAT = Format(NAME, "nodetool gcstats: GC pauses and reclaimed memory per call", sniff, parse)

__all__ = ["FORMAT", "GC_COLUMNS", "NAME", "parse", "sniff"]
