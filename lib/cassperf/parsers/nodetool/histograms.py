"""`nodetool proxyhistograms` and `nodetool tablehistograms` (old name `cfhistograms`).

Layouts read (Apache 2.1 to 5.0, DSE 6.7/6.8): an optional title, a header of names in
fixed-width fields (names may run together: "CAS Write Latency View Write Latency"), a line
of units, and seven rows 50%, 75%, 95%, 98%, 99%, Min, Max:

    proxy histograms
    Percentile      Read Latency     Write Latency     Range Latency
                        (micros)          (micros)          (micros)
    50%                   642.00              0.00           1916.00
    ...
    killr_video/user_by_email histograms
    Percentile  SSTables     Write Latency      Read Latency    Partition Size        Cell Count
                                  (micros)          (micros)           (bytes)
    50%             0.00              0.00              0.00                86                 2

tablehistograms without arguments (and DSE's cfhistograms) prints one such block per table,
some preceded by "No SSTables exists, unable to calculate 'Partition Size' and 'Cell Count'
percentiles" (or "Row sizes are larger than N, unable to calculate percentiles"). Columns are
read by the header's names, not by position.

Frame "percentiles", one row per printed row: stat ("50%", ..., "Min", "Max" as printed),
percentile (float: 50, 75, 95, 98, 99; Min = 0, Max = 100), then by column: read_latency_us,
write_latency_us, range_latency_us, cas_read_latency_us, cas_write_latency_us,
view_write_latency_us (microseconds), and for tables keyspace, table (str), sstables (float,
sstables per read), partition_size_bytes, cell_count (float; NaN as printed for a table with
no sstables), no_sstables (bool: the "No SSTables exists" note preceded the block). These are
the node's own estimated percentiles; they are reported as printed, never combined.

Rules: a block's rows must match its header's columns; a row that does not is skipped,
counted and warned about. A block that ends before its Max row was cut (complete=False,
warned). No header at all is a ParseError.
"""

from __future__ import annotations

import re

from cassperf.parsers.base import Format, ParseResult
from cassperf.parsers.nodetool._common import (
    frame, head_lines, lines_of, meaningful, no_structure, number, snake, start, warn_unterminated,
)

PROXY_NAME = "nodetool-proxyhistograms"
TABLE_NAME = "nodetool-tablehistograms"

_UNITS = {"(micros)": "_us", "(bytes)": "_bytes", "(millis)": "_ms"}

PROXY_COLUMNS: dict[str, str] = {
    "stat": "string",
    "percentile": "float64",
    "read_latency_us": "float64",
    "write_latency_us": "float64",
    "range_latency_us": "float64",
}

TABLE_COLUMNS: dict[str, str] = {
    "keyspace": "string",
    "table": "string",
    "stat": "string",
    "percentile": "float64",
    "sstables": "float64",
    "read_latency_us": "float64",
    "write_latency_us": "float64",
    "partition_size_bytes": "float64",
    "cell_count": "float64",
    "no_sstables": "boolean",
}

STATS = ("50%", "75%", "95%", "98%", "99%", "Min", "Max")

# proxy histograms
_PROXY_TITLE_RE = re.compile(r"^proxy histograms\s*$")
# killr_video/user_by_email histograms
_TABLE_TITLE_RE = re.compile(r"^(?P<ks>[^/\s]+)/(?P<table>\S+) histograms\s*$")
# No SSTables exists, unable to calculate 'Partition Size' and 'Cell Count' percentiles
_NO_SSTABLES_RE = re.compile(r"^No SSTables exists")
# Row sizes are larger than 1155383, unable to calculate percentiles  (Column counts are larger ...)
_OVERFLOW_RE = re.compile(r"^(?:Row sizes|Column counts) are larger than \S+, unable to calculate percentiles")
# Percentile  SSTables     Write Latency      Read Latency    Partition Size        Cell Count
_HEADER_RE = re.compile(r"^Percentile\s+\S")
_NAME_RE = re.compile(r"CAS Read Latency|CAS Write Latency|View Write Latency|Read Latency|Write Latency|"
                      r"Range Latency|Partition Size|Cell Count|SSTables|[A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*)*")
#                     (micros)          (micros)          (micros)
_UNITS_RE = re.compile(r"^(?:\([a-z]+\)\s*)+$")
# 50%                   642.00              0.00           1916.00
_ROW_RE = re.compile(r"^(?P<stat>\d+(?:\.\d+)?%|Min|Max)\s+(?P<values>\S.*)$")


def _head(text: str) -> list[str]:
    return [h.strip() for h in head_lines(text, 6)]


def sniff_proxy(text: str) -> bool:
    head = _head(text)
    return bool(head) and (_PROXY_TITLE_RE.match(head[0]) is not None or (
        _HEADER_RE.match(head[0]) is not None and "Latency" in head[0] and not _is_table_header(head[0])))


def sniff_table(text: str) -> bool:
    head = _head(text)
    for h in head[:3]:
        if _TABLE_TITLE_RE.match(h):
            return True
        if _HEADER_RE.match(h):
            return _is_table_header(h)
    return False


def _is_table_header(header: str) -> bool:
    """Whether a "Percentile ..." header is tablehistograms' (it has per-table columns)."""
    return any(name in header for name in ("SSTables", "Partition Size", "Cell Count"))


def _columns(header: str) -> list[str]:
    body = header[len("Percentile"):]
    return [m.group(0) for m in _NAME_RE.finditer(body)]


def _column_names(names: list[str], units: list[str] | None) -> list[str]:
    """Frame column names from header names, with the unit of the units line by position."""
    out = []
    with_unit = [n for n in names if "Latency" in n or "Size" in n]
    unit_iter = iter(units) if units and len(units) == len(with_unit) else None
    for name in names:
        col = snake(name)
        if "Latency" in name or "Size" in name:
            unit = next(unit_iter) if unit_iter is not None else ("(micros)" if "Latency" in name else "(bytes)")
            col += _UNITS.get(unit, "_" + snake(unit))
        out.append(col)
    return out


def _parse(text: str, source: str, fmt: str) -> ParseResult:
    is_table = fmt == TABLE_NAME
    result = start(text, source, fmt, f"nodetool {'tablehistograms' if is_table else 'proxyhistograms'} output")
    rows: list[dict[str, object]] = []
    ks: str | None = None
    tbl: str | None = None
    no_sstables = False             # the open block was preceded by "No SSTables exists"
    note = False                    # a "No SSTables exists" line not yet followed by its title
    names: list[str] | None = None
    columns: list[str] | None = None
    block_stats: list[str] = []
    block_line = 0
    seen_header = False

    def close_block() -> None:
        if names is not None and block_stats and "Max" not in block_stats:
            result.complete = False
            result.warn(block_line, None, "a block ending with its 'Max' row (the block ends before it: truncated)")

    for ln in meaningful(lines_of(text)):
        t = ln.text.strip()
        if _OVERFLOW_RE.match(t):
            continue                # nodetool's note before a block whose sizes/counts print as NaN
        if _NO_SSTABLES_RE.match(t):
            close_block()
            names, block_stats, note = None, [], True
            continue
        if (_PROXY_TITLE_RE.match(t) and not is_table) or (is_table and (title := _TABLE_TITLE_RE.match(t))):
            close_block()
            if is_table:
                ks, tbl = title.group("ks"), title.group("table")
            names, block_stats, no_sstables, note = None, [], note, False
            continue
        if _HEADER_RE.match(t) and _is_table_header(t) == is_table:
            if names is not None:
                close_block()
            names, columns, block_stats, block_line, seen_header = _columns(t), None, [], ln.no, True
            continue
        if names is not None and _UNITS_RE.match(t):
            columns = _column_names(names, t.split())
            continue
        m = _ROW_RE.match(t)
        if m and names is not None:
            if columns is None:
                columns = _column_names(names, None)
            values = m.group("values").split()
            if len(values) == len(columns):
                stat = m.group("stat")
                try:
                    row: dict[str, object] = {
                        "stat": stat,
                        "percentile": 0.0 if stat == "Min" else 100.0 if stat == "Max" else float(stat[:-1]),
                    }
                    row.update({col: number(v) for col, v in zip(columns, values)})
                except ValueError:
                    row = {}
                if row:
                    if is_table:
                        row.update(keyspace=ks, table=tbl, no_sstables=no_sstables)
                    rows.append(row)
                    block_stats.append(stat)
                    continue
        result.skipped_lines += 1
        if names is not None:
            result.warn(ln.no, ln.text, f"a percentile row (50%, ..., Min, Max) of {len(names)} numbers")
        else:
            result.warn(ln.no, ln.text, "a 'Percentile ...' header before percentile rows")
    close_block()
    if not seen_header:
        raise no_structure(source, text, f"nodetool {'tablehistograms' if is_table else 'proxyhistograms'} output: "
                                         "a 'Percentile  Read Latency  Write Latency ...' header and rows")
    warn_unterminated(text, result)
    result.tables["percentiles"] = frame(rows, TABLE_COLUMNS if is_table else PROXY_COLUMNS)
    return result


def parse_proxy(text: str, source: str = "<text>") -> ParseResult:
    """Parse `nodetool proxyhistograms` output into "percentiles" (see the module docstring)."""
    return _parse(text, source, PROXY_NAME)


def parse_table(text: str, source: str = "<text>") -> ParseResult:
    """Parse `nodetool tablehistograms`/`cfhistograms` output into "percentiles" (module docstring)."""
    return _parse(text, source, TABLE_NAME)


PROXY_FORMAT = Format(PROXY_NAME, "nodetool proxyhistograms: coordinator latency percentiles", sniff_proxy, parse_proxy)
TABLE_FORMAT = Format(TABLE_NAME, "nodetool tablehistograms / cfhistograms: per-table percentiles",
                      sniff_table, parse_table)

__all__ = ["PROXY_COLUMNS", "PROXY_FORMAT", "PROXY_NAME", "STATS", "TABLE_COLUMNS", "TABLE_FORMAT", "TABLE_NAME",
           "parse_proxy", "parse_table", "sniff_proxy", "sniff_table"]
