"""`nodetool compactionhistory`: one row per finished compaction.

Layout (Apache 2.1 to 5.0):

    Compaction History:
    id                                   keyspace_name columnfamily_name compacted_at            bytes_in bytes_out rows_merged
    e01933a0-dc04-11eb-bef5-537733e6a124 system        size_estimates    2021-07-03T13:45:06.266 169066   41854     {4:4}

Columns are read by the header's names; 4.1+ adds "compaction_properties" ({k:v, ...}).
`compacted_at` is printed by nodetool 3.0+ as a local date-time in the *node's* time zone
(LocalDateTime.ofInstant(.., ZoneId.systemDefault())), by 2.x as epoch milliseconds.

Frame "history": id, keyspace, table (str), compacted_at (datetime64[ns, UTC]: epoch ms as
is; a local date-time read in `node_tz`, UTC unless told), bytes_in, bytes_out (float bytes; a
human-readable size converted at 1024), rows_merged (str as printed, e.g. "{1:12, 4:4}": number
of sstables a partition was merged from -> partitions), partitions_merged (Int64, the sum of
the map's values), compaction_properties (str, when printed).

Rules: "There is no compaction history" (4.1+ prints it without a line ending) gives an empty
frame. A row whose fields do not fit
the header is skipped, counted and warned about; when it is the last line the input is taken
as truncated (complete=False). A local date-time read as UTC is warned about once, since the
node's zone is not in the output. No header is a ParseError.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pandas as pd

from cassperf.parsers.base import Format, ParseResult
from cassperf.parsers.nodetool._common import (
    frame, head_lines, lines_of, meaningful, merge_size_tokens, no_structure, size_bytes, start, warn_unterminated,
)

NAME = "nodetool-compactionhistory"

HISTORY_COLUMNS: dict[str, str] = {
    "id": "string",
    "keyspace": "string",
    "table": "string",
    "compacted_at": "datetime64[ns, UTC]",
    "bytes_in": "float64",
    "bytes_out": "float64",
    "rows_merged": "string",
    "partitions_merged": "Int64",
    "compaction_properties": "string",
}

# Compaction History:
_TITLE_RE = re.compile(r"^Compaction History:\s*$")
# There is no compaction history
_EMPTY_RE = re.compile(r"^There is no compaction history\s*$")
# id keyspace_name columnfamily_name compacted_at bytes_in bytes_out rows_merged
_HEADER_RE = re.compile(r"^id\s+keyspace_name\s+columnfamily_name\s+compacted_at\s+bytes_in\s+bytes_out\s+"
                        r"rows_merged\b")
# a token of a row: a {..} map (may hold spaces) or a run of non-blanks
_TOKEN_RE = re.compile(r"\{[^}]*\}|\S+")
# {1:12, 4:4}
_MAP_ITEM_RE = re.compile(r"(-?\d+)\s*:\s*(-?\d+)")
# 2021-07-03T13:45:06.266
_LOCAL_TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$")

_HEADER_TO_COLUMN = {"keyspace_name": "keyspace", "columnfamily_name": "table"}


def sniff(text: str) -> bool:
    head = head_lines(text, 3)
    return bool(head) and any(r.match(head[0].strip()) is not None for r in (_TITLE_RE, _HEADER_RE))


def _partitions(rows_merged: str) -> int | None:
    if not (rows_merged.startswith("{") and rows_merged.endswith("}")):
        raise ValueError(rows_merged)
    items = _MAP_ITEM_RE.findall(rows_merged)
    inner = rows_merged[1:-1].strip()
    if inner and len(items) != inner.count(",") + 1:
        raise ValueError(rows_merged)
    return sum(int(v) for _, v in items)


def _timestamp(token: str, tz: ZoneInfo | timezone) -> tuple[pd.Timestamp, bool]:
    """(UTC timestamp, whether it was a local date-time) of a compacted_at token. ValueError
    (OutOfBoundsDatetime is one) for a token that is not a date-time the frame can hold."""
    if token.isdigit():
        return pd.Timestamp(int(token), unit="ms", tz="UTC").as_unit("ns"), False
    if not _LOCAL_TS_RE.match(token):
        raise ValueError(token)
    local = datetime.fromisoformat(token).replace(tzinfo=tz)
    return pd.Timestamp(local).tz_convert("UTC").as_unit("ns"), True


def parse(text: str, source: str = "<text>", node_tz: str = "UTC") -> ParseResult:
    """Parse `nodetool compactionhistory` output into "history" (see the module docstring).

    node_tz: the IANA zone of the node that printed it (its local date-times are read in it).
    """
    result = start(text, source, NAME, "nodetool compactionhistory output")
    try:
        tz: ZoneInfo | timezone = timezone.utc if node_tz == "UTC" else ZoneInfo(node_tz)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {node_tz!r}") from exc
    rows: list[dict[str, object]] = []
    columns: list[str] | None = None
    seen_title = False
    local_times = False
    lines = list(meaningful(lines_of(text)))
    for idx, ln in enumerate(lines):
        t = ln.text.strip()
        if _TITLE_RE.match(t):
            seen_title = True
            continue
        if _EMPTY_RE.match(t):
            columns = columns or []
            continue
        if _HEADER_RE.match(t):
            columns = [_HEADER_TO_COLUMN.get(c, c) for c in t.split()]
            continue
        if columns:
            tokens = merge_size_tokens(_TOKEN_RE.findall(t))
            row: dict[str, object] | None = None
            if len(tokens) == len(columns):
                try:
                    row = {}
                    for col, tok in zip(columns, tokens):
                        if col == "compacted_at":
                            row[col], local = _timestamp(tok, tz)
                            local_times |= local
                        elif col in ("bytes_in", "bytes_out"):
                            row[col] = size_bytes(tok)
                        elif col == "rows_merged":
                            row[col] = tok
                            row["partitions_merged"] = _partitions(tok)
                        else:
                            row[col] = tok
                except ValueError:
                    row = None
            if row is not None:
                rows.append(row)
                continue
            if idx == len(lines) - 1:
                result.complete = False
                result.warn(ln.no, ln.text, "a whole compaction row (the input ends inside it: truncated)")
            else:
                result.warn(ln.no, ln.text, "a compaction row with the header's fields: " + " ".join(columns))
            result.skipped_lines += 1
            continue
        result.skipped_lines += 1
        result.warn(ln.no, ln.text, "the 'id keyspace_name columnfamily_name compacted_at ...' header first")
    if columns is None:
        expected = "nodetool compactionhistory output: 'Compaction History:' and the 'id keyspace_name ...' header"
        if seen_title and len(lines) == 1:
            result.complete = False
            result.warn(lines[0].no, lines[0].text, expected + " (the input ends after the title: truncated)")
        else:
            raise no_structure(source, text, expected)
    if local_times and node_tz == "UTC":
        result.warn(None, None, "compacted_at in UTC; nodetool prints it in the node's local zone without saying "
                                "which, so it was read as UTC (pass node_tz if the node runs in another zone)")
    warn_unterminated(text, result, exempt=_EMPTY_RE)   # printed with printf, no line ending
    result.tables["history"] = frame(rows, HISTORY_COLUMNS)
    return result


FORMAT = Format(NAME, "nodetool compactionhistory: one row per finished compaction", sniff, parse)

__all__ = ["FORMAT", "HISTORY_COLUMNS", "NAME", "parse", "sniff"]
