"""`nodetool compactionstats`: pending compactions and the active ones.

Layouts read:
  Apache 2.1 to 4.1, DSE:
      pending tasks: 5
      - ks.tbl: 3                        (3.x/4.x: pending tasks by table)

                                         id   compaction type   keyspace   table   completed   total   unit   progress
      6a3b...-...                            Compaction           ks        tbl      1234     56789   bytes     2.17%
      Active compaction remaining time :   0h00m05s
    (2.1 has no "id" column.)
  Apache 5.0: one aligned table of "name value" rows, then the active compactions:
      concurrent compactors              2
      pending tasks                      5
      ks                     tbl         3           (pending tasks by table)
      compactions completed              123
      data compacted                     456789
      compactions aborted                0
      compactions reduced                0
      sstables dropped from compaction   0
      15 minute rate                     1.23/minute
      mean rate                          4.56/hour
      compaction throughput (MiB/s)      64.0         ("throttling disabled (0)" when 0)
      id  compaction type  keyspace  table  completed  total  unit  progress
      ...
      active compaction remaining time   0h00m05s

Frames:
  "summary" (one row): pending_tasks, concurrent_compactors, compactions_completed,
    compactions_aborted, compactions_reduced, sstables_dropped_from_compaction (Int64),
    data_compacted_bytes, rate_15m_per_minute, mean_rate_per_hour,
    compaction_throughput_mib_s (float; 0 for "throttling disabled"), remaining_time_s (float,
    NaN for "n/a" or when there is no active compaction).
  "active": one row per active compaction: id, type, keyspace, table, unit (str); completed,
    total (float, in `unit`); completed_bytes, total_bytes (float: the same when unit is bytes,
    a human-readable "-H" size converted at 1024, NaN for other units); progress_pct (float,
    NaN for "n/a").
  "pending_by_table": keyspace, table, pending_tasks (Int64).

Rules: a line of none of these shapes is skipped, counted and warned about. No "pending tasks"
line is a ParseError. An active-compaction header with no "remaining time" line after it means
the input was cut (complete=False, warned).
"""

from __future__ import annotations

import math
import re

from cassperf.parsers.base import Format, ParseResult
from cassperf.parsers.nodetool._common import (
    frame, head_lines, integer, lines_of, meaningful, no_structure, number, size_bytes, start, warn_unterminated,
)

NAME = "nodetool-compactionstats"

SUMMARY_COLUMNS: dict[str, str] = {
    "pending_tasks": "Int64",
    "concurrent_compactors": "Int64",
    "compactions_completed": "Int64",
    "data_compacted_bytes": "float64",
    "compactions_aborted": "Int64",
    "compactions_reduced": "Int64",
    "sstables_dropped_from_compaction": "Int64",
    "rate_15m_per_minute": "float64",
    "mean_rate_per_hour": "float64",
    "compaction_throughput_mib_s": "float64",
    "remaining_time_s": "float64",
}

ACTIVE_COLUMNS: dict[str, str] = {
    "id": "string",
    "type": "string",
    "keyspace": "string",
    "table": "string",
    "completed": "float64",
    "total": "float64",
    "unit": "string",
    "completed_bytes": "float64",
    "total_bytes": "float64",
    "progress_pct": "float64",
}

PENDING_COLUMNS: dict[str, str] = {"keyspace": "string", "table": "string", "pending_tasks": "Int64"}

# pending tasks: 0            (2.1 - 4.1)      |   pending tasks                      5   (5.0)
_PENDING_RE = re.compile(r"^pending tasks:?\s+(?P<n>\S+)\s*$")
# - killr_video.user_by_email: 3
_PENDING_TABLE_OLD_RE = re.compile(r"^-\s+(?P<ks>[^.\s]+)\.(?P<table>\S+):\s*(?P<n>\d+)\s*$")
# killr_video            user_by_email         3      (5.0: keyspace, table, count)
_PENDING_TABLE_NEW_RE = re.compile(r"^(?P<ks>\w+)\s+(?P<table>\w+)\s+(?P<n>\d+)\s*$")
# concurrent compactors              2   |   compaction throughput (MiB/s)      throttling disabled (0)
_STAT_RE = re.compile(
    r"^(?P<name>concurrent compactors|compactions completed|data compacted|compactions aborted|compactions reduced|"
    r"sstables dropped from compaction|15 minute rate|mean rate|compaction throughput \((?:MiB/s|MBps|MB/s)\))"
    r"\s+(?P<value>.+?)\s*$")
# id   compaction type   keyspace   table   completed   total   unit   progress
_ACTIVE_HEADER_RE = re.compile(
    r"^(?P<id>id\s+)?compaction type\s+keyspace\s+table\s+completed\s+total\s+unit\s+progress\s*$")
# ... 1234  56789  bytes  2.17%     |   ... 1.21 KiB  55.46 KiB  bytes  2.17%   |  ... 0  0  bytes  n/a
_NUM = r"-?[0-9][0-9.,]*(?:\s?(?:[KMGTPE]i?B|bytes|B))?"
_ACTIVE_TAIL_RE = re.compile(
    rf"^(?P<head>.*\S)\s+(?P<completed>{_NUM})\s+(?P<total>{_NUM})\s+(?P<unit>[A-Za-z][A-Za-z ]*?)\s+"
    r"(?P<progress>-?[0-9][0-9.,]*%|n/a)\s*$")
# Active compaction remaining time :   0h00m05s   |   active compaction remaining time   n/a
_REMAINING_RE = re.compile(r"^active compaction remaining time\s*:?\s*(?P<value>\S+)\s*$", re.IGNORECASE)
# 0h00m05s
_HMS_RE = re.compile(r"^(?P<h>\d+)h(?P<m>\d+)m(?P<s>\d+)s$")
# 8d7f9a40-0a2b-11ef-9b1e-5b0c2b5a1d3e
_UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")

_STAT_COLUMNS = {
    "concurrent compactors": "concurrent_compactors",
    "compactions completed": "compactions_completed",
    "data compacted": "data_compacted_bytes",
    "compactions aborted": "compactions_aborted",
    "compactions reduced": "compactions_reduced",
    "sstables dropped from compaction": "sstables_dropped_from_compaction",
    "15 minute rate": "rate_15m_per_minute",
    "mean rate": "mean_rate_per_hour",
}


def sniff(text: str) -> bool:
    head = head_lines(text, 3)
    return any(_PENDING_RE.match(h.strip()) or h.strip().startswith("concurrent compactors") for h in head[:2]) and \
        any(_PENDING_RE.match(h.strip()) for h in head)


def _stat(name: str, value: str) -> tuple[str, object]:
    if name.startswith("compaction throughput"):
        return "compaction_throughput_mib_s", 0.0 if value.startswith("throttling disabled") else number(value)
    column = _STAT_COLUMNS[name]
    if column == "data_compacted_bytes":
        return column, size_bytes(value)
    if column.startswith("rate_") or column.startswith("mean_"):
        return column, number(value.split("/")[0])
    return column, integer(value)


def _active_row(line: str, has_id: bool) -> dict[str, object] | None:
    m = _ACTIVE_TAIL_RE.match(line)
    if not m:
        return None
    head = m.group("head").split()
    if has_id:
        if not head or not _UUID_RE.match(head[0]):
            return None
        cid, head = head[0], head[1:]
    else:
        cid = None
    if len(head) < 3:
        return None
    unit = m.group("unit").strip()
    completed, total = m.group("completed"), m.group("total")
    is_bytes = unit.lower() == "bytes"
    progress = m.group("progress")
    return {
        "id": cid,
        "type": " ".join(head[:-2]),
        "keyspace": head[-2],
        "table": head[-1],
        "completed": size_bytes(completed) if is_bytes else number(completed),
        "total": size_bytes(total) if is_bytes else number(total),
        "unit": unit,
        "completed_bytes": size_bytes(completed) if is_bytes else math.nan,
        "total_bytes": size_bytes(total) if is_bytes else math.nan,
        "progress_pct": math.nan if progress == "n/a" else number(progress.rstrip("%")),
    }


def parse(text: str, source: str = "<text>") -> ParseResult:
    """Parse `nodetool compactionstats` output (see the module docstring)."""
    result = start(text, source, NAME, "nodetool compactionstats output")
    summary: dict[str, object] = {"remaining_time_s": math.nan}
    active: list[dict[str, object]] = []
    pending: list[dict[str, object]] = []
    header_line: int | None = None       # the open active-compaction table's header line
    has_id = True
    for ln in meaningful(lines_of(text)):
        t = ln.text.strip()
        try:
            if m := _PENDING_RE.match(t):
                summary["pending_tasks"] = integer(m.group("n"))
                continue
            if m := _STAT_RE.match(t):
                column, value = _stat(m.group("name"), m.group("value"))
                summary[column] = value
                continue
            if m := _ACTIVE_HEADER_RE.match(t):
                header_line, has_id = ln.no, bool(m.group("id"))
                continue
            if m := _REMAINING_RE.match(t):
                hms = _HMS_RE.match(m.group("value"))
                summary["remaining_time_s"] = (int(hms.group("h")) * 3600 + int(hms.group("m")) * 60
                                               + int(hms.group("s"))) if hms else math.nan
                header_line = None
                continue
            if header_line is not None and (row := _active_row(t, has_id)) is not None:
                active.append(row)
                continue
            if header_line is None and (m := _PENDING_TABLE_OLD_RE.match(t) or _PENDING_TABLE_NEW_RE.match(t)):
                pending.append({"keyspace": m.group("ks"), "table": m.group("table"),
                                "pending_tasks": int(m.group("n"))})
                continue
        except ValueError:
            result.skipped_lines += 1
            result.warn(ln.no, ln.text, "a number in this compactionstats line")
            continue
        result.skipped_lines += 1
        result.warn(ln.no, ln.text, "a compactionstats line: 'pending tasks: N', '- ks.table: N', the active "
                                    "compactions header or one of its rows, or the remaining time")
    if "pending_tasks" not in summary:
        raise no_structure(source, text, "nodetool compactionstats output: a 'pending tasks: N' line")
    if header_line is not None:
        result.complete = False
        result.warn(header_line, None, "the 'active compaction remaining time' line after the active compactions "
                                       "(the input ends before it: truncated)")
    warn_unterminated(text, result)
    result.tables["summary"] = frame([summary], SUMMARY_COLUMNS)
    result.tables["active"] = frame(active, ACTIVE_COLUMNS)
    result.tables["pending_by_table"] = frame(pending, PENDING_COLUMNS)
    return result


FORMAT = Format(NAME, "nodetool compactionstats: pending tasks and active compactions", sniff, parse)

__all__ = ["ACTIVE_COLUMNS", "FORMAT", "NAME", "PENDING_COLUMNS", "SUMMARY_COLUMNS", "parse", "sniff"]
