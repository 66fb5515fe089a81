"""`nodetool tablestats` (and its old name `cfstats`): one row per table, one per keyspace.

Layouts read: Apache 2.1 ("Keyspace: ks", "Number of keys (estimate)", "Read Latency: NaN ms."),
3.x/4.x/DSE ("Keyspace : ks", "Percent repaired", "Bytes repaired: 0.000KiB", "Table (index):"),
5.0 (more lines: "Old SSTable count", "Max SSTable size", "SSTable bytes in each level",
"Speculative retries", "Local read/write ratio", "Droppable tombstone ratio", "Top partitions by
size/tombstone count" lists) and the sorted layout (`-s`: "Table: ks.table", no Keyspace lines).

    Keyspace : killr_video
            Read Count: 3952653
            Read Latency: 2.332187202873614 ms
                    Table: user_by_email
                    SSTable count: 3
                    Space used (live): 321599
                    Local read latency: 0.030 ms
    ----------------

Frames:
  "tables": one row per (keyspace, table): keyspace, table (str), is_index (bool), then every
    field, named in snake_case with its unit: counts (sstable_count, local_read_count, ...),
    sizes in bytes (space_used_live_bytes, memtable_data_size_bytes, repaired_bytes,
    compacted_partition_max_bytes, ...; a human-readable "1.2 MiB" is converted at 1024),
    latencies in ms (local_read_latency_ms, local_write_latency_ms), ratios as fractions
    (sstable_compression_ratio, bloom_filter_false_ratio), percent_repaired_pct, and the level
    lists as printed (sstables_per_level "[1, 0, 0, ...]", sstable_bytes_per_level). All
    numbers are float64 (NaN for NaN/null/absent); lists and words are strings. A field this
    parser does not know becomes a column named after its label (with _ms / _bytes when the
    value carries that unit), so a newer nodetool's additions are kept, not dropped.
  "keyspaces": keyspace, read_count, read_latency_ms, write_count, write_latency_ms,
    pending_flushes.
  "top_partitions": keyspace, table, kind ("size" or "tombstones"), last_update (str), key
    (str), value (str as printed), size_bytes / tombstones (float).
  "summary": total_tables (the "Total number of tables" header; NaN when absent), showing
    (str, the sorted layout's "(showing top N by ...)").

Rules: "Label: value" lines set the field of the open table, or of the open keyspace before its
first table. A value that does not read as its field's kind is warned about and left NaN. A
line of another shape is skipped, counted and warned about. Every keyspace (and the sorted
layout) is closed by a "----------------" line: input that ends inside an open table is taken
as truncated (complete=False, warned). No table and no keyspace at all is a ParseError.
"""

from __future__ import annotations

import math
import re

from cassperf.parsers.base import Format, ParseResult
from cassperf.parsers.nodetool._common import (
    PROMPT_RE, Line, frame, head_lines, lines_of, no_structure, number, size_bytes, snake, start, warn_unterminated,
)

NAME = "nodetool-tablestats"

#: printed label (lower case) -> (column, kind). kinds: num, ms, bytes, pct, str
TABLE_FIELDS: dict[str, tuple[str, str]] = {
    "sstable count": ("sstable_count", "num"),
    "old sstable count": ("old_sstable_count", "num"),
    "max sstable size": ("max_sstable_size_bytes", "bytes"),
    "sstables time window": ("sstables_time_window", "str"),
    "sstables in each level": ("sstables_per_level", "str"),
    "sstable bytes in each level": ("sstable_bytes_per_level", "str"),
    "space used (live)": ("space_used_live_bytes", "bytes"),
    "space used (total)": ("space_used_total_bytes", "bytes"),
    "space used by snapshots (total)": ("space_used_by_snapshots_bytes", "bytes"),
    "off heap memory used (total)": ("off_heap_memory_used_bytes", "bytes"),
    "sstable compression ratio": ("sstable_compression_ratio", "num"),
    "number of keys (estimate)": ("partitions_estimate", "num"),
    "number of partitions (estimate)": ("partitions_estimate", "num"),
    "memtable cell count": ("memtable_cell_count", "num"),
    "memtable data size": ("memtable_data_size_bytes", "bytes"),
    "memtable off heap memory used": ("memtable_off_heap_memory_used_bytes", "bytes"),
    "memtable switch count": ("memtable_switch_count", "num"),
    "speculative retries": ("speculative_retries", "num"),
    "local read count": ("local_read_count", "num"),
    "local read latency": ("local_read_latency_ms", "ms"),
    "local write count": ("local_write_count", "num"),
    "local write latency": ("local_write_latency_ms", "ms"),
    "local read/write ratio": ("local_read_write_ratio", "num"),
    "pending flushes": ("pending_flushes", "num"),
    "percent repaired": ("percent_repaired_pct", "pct"),
    "bytes repaired": ("repaired_bytes", "bytes"),
    "bytes unrepaired": ("unrepaired_bytes", "bytes"),
    "bytes pending repair": ("pending_repair_bytes", "bytes"),
    "bloom filter false positives": ("bloom_filter_false_positives", "num"),
    "bloom filter false ratio": ("bloom_filter_false_ratio", "num"),
    "bloom filter space used": ("bloom_filter_space_used_bytes", "bytes"),
    "bloom filter off heap memory used": ("bloom_filter_off_heap_memory_used_bytes", "bytes"),
    "index summary off heap memory used": ("index_summary_off_heap_memory_used_bytes", "bytes"),
    "compression metadata off heap memory used": ("compression_metadata_off_heap_memory_used_bytes", "bytes"),
    "compacted partition minimum bytes": ("compacted_partition_min_bytes", "num"),
    "compacted partition maximum bytes": ("compacted_partition_max_bytes", "num"),
    "compacted partition mean bytes": ("compacted_partition_mean_bytes", "num"),
    "average live cells per slice (last five minutes)": ("avg_live_cells_per_slice_5m", "num"),
    "maximum live cells per slice (last five minutes)": ("max_live_cells_per_slice_5m", "num"),
    "average tombstones per slice (last five minutes)": ("avg_tombstones_per_slice_5m", "num"),
    "maximum tombstones per slice (last five minutes)": ("max_tombstones_per_slice_5m", "num"),
    "dropped mutations": ("dropped_mutations", "num"),
    "failed replication count": ("failed_replication_count", "num"),
    "droppable tombstone ratio": ("droppable_tombstone_ratio", "num"),
    "sstables in correct location": ("sstables_in_correct_location", "str"),
}

KEYSPACE_FIELDS: dict[str, tuple[str, str]] = {
    "read count": ("read_count", "num"),
    "read latency": ("read_latency_ms", "ms"),
    "write count": ("write_count", "num"),
    "write latency": ("write_latency_ms", "ms"),
    "pending flushes": ("pending_flushes", "num"),
}

_KINDS = {"num": "float64", "ms": "float64", "bytes": "float64", "pct": "float64", "str": "string"}

TABLE_COLUMNS: dict[str, str] = {"keyspace": "string", "table": "string", "is_index": "boolean"}
for _col, _kind in TABLE_FIELDS.values():
    TABLE_COLUMNS.setdefault(_col, _KINDS[_kind])

KEYSPACE_COLUMNS: dict[str, str] = {"keyspace": "string"}
for _col, _kind in KEYSPACE_FIELDS.values():
    KEYSPACE_COLUMNS[_col] = _KINDS[_kind]

TOP_COLUMNS: dict[str, str] = {
    "keyspace": "string", "table": "string", "kind": "string", "last_update": "string",
    "key": "string", "value": "string", "size_bytes": "float64", "tombstones": "float64",
}

# Total number of tables: 61
# Total number of tables: 6 (showing top 4 by reads)
_TOTAL_RE = re.compile(r"^Total number of tables:\s*(?P<n>\d+)(?:\s*\((?P<showing>[^)]*)\))?\s*$")
# ----------------
_SEP_RE = re.compile(r"^-{8,}\s*$")
# Keyspace : killr_video   |   Keyspace: system_traces
_KEYSPACE_RE = re.compile(r"^Keyspace\s?:\s*(?P<name>\S+)\s*$")
# Table: user_by_email   |   Table (index): backup_reports.backup_reports_by_id
_TABLE_RE = re.compile(r"^Table(?P<index>\s*\(index\))?:\s*(?P<name>\S+)\s*$")
# Top partitions by size (last update: 2024-05-01T10:00:00Z):
_TOP_RE = re.compile(r"^Top partitions by (?P<kind>size|tombstone count)\s*\(last update:\s*(?P<when>.*)\):\s*$")
# Key                        Size
_TOP_HEADER_RE = re.compile(r"^Key\s+(?:Size|Count)\s*$")
# <partition key>   1.23 MiB    |   <partition key>   42
_TOP_ROW_RE = re.compile(r"^(?P<key>.*\S)\s+(?P<value>-?[0-9][0-9.,]*\s?[A-Za-z]*)$")
# Read Latency: 2.332187202873614 ms  |  Local read latency: NaN ms  |  Read Latency: NaN ms.
_FIELD_RE = re.compile(r"^(?P<label>[A-Za-z][^:]*?)\s*:\s*(?P<value>.*?)\s*$")
# 2.332187202873614 ms  |  NaN ms.
_MS_RE = re.compile(r"^(?P<num>\S+)\s*ms\.?$")
_SIZE_VALUE_RE = re.compile(r"^-?[0-9][0-9.,]*\s?(?:[KMGTPE]i?B|B|bytes)$")


def sniff(text: str) -> bool:
    head = head_lines(text, 12)
    if any(_TOTAL_RE.match(h.strip()) for h in head[:2]):
        return True
    has_keyspace = any(_KEYSPACE_RE.match(h.strip()) for h in head)
    has_fields = any(re.match(r"^\s*(?:Read Count|SSTable count|Table):", h) for h in head)
    return has_keyspace and has_fields


def _value(kind: str, raw: str) -> object:
    """A field's value of `kind` (raises ValueError when it does not read as one)."""
    if kind == "str":
        return raw
    if kind == "ms":
        m = _MS_RE.match(raw)
        return number(m.group("num") if m else raw)
    if kind == "bytes":
        return size_bytes(raw)
    if kind == "pct":
        return number(raw.rstrip("%"))
    return number(raw)


def _unknown_field(label: str, raw: str) -> tuple[str, object]:
    """A field this parser does not know: column name and value by the value's shape."""
    name = snake(label)
    if m := _MS_RE.match(raw):
        try:
            return f"{name}_ms", number(m.group("num"))
        except ValueError:
            pass
    if _SIZE_VALUE_RE.match(raw):
        return f"{name}_bytes", size_bytes(raw)
    try:
        return name, number(raw)
    except ValueError:
        return name, raw


def parse(text: str, source: str = "<text>") -> ParseResult:
    """Parse `nodetool tablestats`/`cfstats` output (see the module docstring)."""
    result = start(text, source, NAME, "nodetool tablestats output")
    tables: list[dict[str, object]] = []
    keyspaces: list[dict[str, object]] = []
    tops: list[dict[str, object]] = []
    summary: dict[str, object] = {"total_tables": math.nan, "showing": None}
    keyspace: dict[str, object] | None = None
    table: dict[str, object] | None = None
    top: dict[str, object] | None = None       # the open "Top partitions" list
    open_table: Line | None = None              # the "Table:" line of the open table block
    for ln in lines_of(text):
        t = ln.text.strip()
        if not t:
            top = None
            continue
        if PROMPT_RE.match(ln.text):
            continue
        if top is not None:
            # inside a "Top partitions" list (it ends at the blank line closing the table block)
            if m := _TOP_RE.match(t):
                top = dict(top, kind="size" if m.group("kind") == "size" else "tombstones", last_update=m.group("when"))
                continue
            if _TOP_HEADER_RE.match(t):
                continue
            if m := _TOP_ROW_RE.match(t):
                row = dict(top, key=m.group("key"), value=m.group("value"))
                try:
                    if top["kind"] == "size":
                        row["size_bytes"] = size_bytes(m.group("value"))
                    else:
                        row["tombstones"] = number(m.group("value"))
                except ValueError:
                    result.warn(ln.no, ln.text, "a partition's size or tombstone count")
                tops.append(row)
                continue
            top = None
        if m := _TOTAL_RE.match(t):
            summary = {"total_tables": float(m.group("n")), "showing": m.group("showing")}
            continue
        if _SEP_RE.match(t):
            keyspace, table = None, None
            continue
        if m := _KEYSPACE_RE.match(t):
            keyspace = {"keyspace": m.group("name")}
            keyspaces.append(keyspace)
            table = None
            continue
        if m := _TABLE_RE.match(t):
            name = m.group("name")
            ks_name = keyspace["keyspace"] if keyspace is not None else None
            if ks_name is None and "." in name and not m.group("index"):
                ks_name, name = name.split(".", 1)
            table = {"keyspace": ks_name, "table": name, "is_index": bool(m.group("index"))}
            tables.append(table)
            open_table = ln
            continue
        if m := _TOP_RE.match(t):
            if table is None:
                result.skipped_lines += 1
                result.warn(ln.no, ln.text, "a 'Top partitions' list inside a table block")
                continue
            kind = "size" if m.group("kind") == "size" else "tombstones"
            top = {"keyspace": table["keyspace"], "table": table["table"], "kind": kind,
                   "last_update": m.group("when")}
            continue
        m = _FIELD_RE.match(t)
        if not m or (table is None and keyspace is None):
            result.skipped_lines += 1
            result.warn(ln.no, ln.text, "a 'Label: value' line inside a keyspace or table block")
            continue
        label, raw = m.group("label"), m.group("value")
        target, fields = (table, TABLE_FIELDS) if table is not None else (keyspace, KEYSPACE_FIELDS)
        assert target is not None
        spec = fields.get(label.lower())
        if spec is None:
            column, value = _unknown_field(label, raw)
            known = TABLE_COLUMNS if table is not None else KEYSPACE_COLUMNS
            if column in ("keyspace", "table", "is_index") or column in known:
                # never overwrite the row's identity, nor a known column with a value of unknown form
                # ('Memtable switch-count: :0' is not the 'Memtable switch count' field)
                column = f"field_{column}"
            target[column] = value
            continue
        column, kind = spec
        try:
            target[column] = _value(kind, raw)
        except ValueError:
            target[column] = math.nan if kind != "str" else raw
            result.warn(ln.no, ln.text, f"a {kind} value for {label!r}")
    if not tables and not keyspaces:
        raise no_structure(source, text, "nodetool tablestats output: 'Keyspace : <name>' blocks with "
                                         "'Table: <name>' and 'SSTable count: N' lines")
    if table is not None:
        result.complete = False
        assert open_table is not None
        result.warn(open_table.no, open_table.text, "this table block to end with a '----------------' line "
                                                    "(the input ends inside it: truncated)")
    warn_unterminated(text, result)
    result.tables["tables"] = frame(tables, TABLE_COLUMNS)
    result.tables["keyspaces"] = frame(keyspaces, KEYSPACE_COLUMNS)
    result.tables["top_partitions"] = frame(tops, TOP_COLUMNS)
    result.tables["summary"] = frame([summary], {"total_tables": "float64", "showing": "string"})
    return result


FORMAT = Format(NAME, "nodetool tablestats / cfstats: one row per table and per keyspace", sniff, parse)

__all__ = ["FORMAT", "KEYSPACE_COLUMNS", "NAME", "TABLE_COLUMNS", "TABLE_FIELDS", "parse", "sniff"]
