"""`nodetool tpstats`: thread pools and dropped messages.

Layouts read:
  Apache 2.1 - 3.11:  "Pool Name  Active  Pending  Completed  Blocked  All time blocked" rows,
                      then "Message type  Dropped" rows.
  Apache 4.0 - 5.0:   the same pools table, then "Latencies waiting in queue (micros) per dropped
                      message types" and "Message type  Dropped  50%  95%  99%  Max" rows.
  DSE 6.7:            "Pending (w/Backpressure)" ("0 (N/A)") and "Delayed" columns, a dropped
                      table whose percentile names are on a second header line.
  DSE 6.8:            "Pools ... Backpressure  Delayed  Shared  Stolen ..." columns, a "Meters"
                      table, "Messages  Dropped ..." rows.
Columns are read by the header's names, so pools tables with more or fewer columns read alike.

Frames:
  "pools": pool (str), active, pending, completed, blocked, all_time_blocked, and where
    printed backpressure, delayed, shared, stolen (Int64, <NA> for "N/A").
  "dropped": message_type (str), dropped (Int64), wait_p50_us, wait_p95_us, wait_p99_us,
    wait_max_us (float, time waiting in queue in microseconds; NaN for "N/A" or not printed).
  "meters" (DSE 6.8): meter (str), rate_1m, rate_5m, rate_15m, rate_mean (float, per second),
    count, connections (Int64).

Rules: lines of a section whose fields do not fit its header are skipped, counted and warned
about (a truncated last line makes complete=False). No pools header is a ParseError.
"""

from __future__ import annotations

import re

from cassperf.parsers.base import Format, ParseResult
from cassperf.parsers.nodetool._common import (
    frame, head_lines, integer, lines_of, meaningful, no_structure, number, snake, start, warn_unterminated,
)

NAME = "nodetool-tpstats"

POOL_COLUMNS: dict[str, str] = {
    "pool": "string",
    "active": "Int64",
    "pending": "Int64",
    "completed": "Int64",
    "blocked": "Int64",
    "all_time_blocked": "Int64",
    "backpressure": "Int64",
    "delayed": "Int64",
    "shared": "Int64",
    "stolen": "Int64",
}

DROPPED_COLUMNS: dict[str, str] = {
    "message_type": "string",
    "dropped": "Int64",
    "wait_p50_us": "float64",
    "wait_p95_us": "float64",
    "wait_p99_us": "float64",
    "wait_max_us": "float64",
}

METER_COLUMNS: dict[str, str] = {
    "meter": "string",
    "rate_1m": "float64",
    "rate_5m": "float64",
    "rate_15m": "float64",
    "rate_mean": "float64",
    "count": "Int64",
    "connections": "Int64",
}

# Pool Name                    Active   Pending      Completed   Blocked  All time blocked
# Pools                                           Active        Pending   Backpressure   Delayed ...
_POOLS_HEADER_RE = re.compile(r"^(?:Pool Name|Pools)\s+Active\s+Pending\b")
_POOL_NAMES_RE = re.compile(r"Pending \(w/Backpressure\)|All time blocked|Active|Pending|Backpressure|Delayed|Shared|"
                            r"Stolen|Completed|Blocked")
# Message type           Dropped    |   Messages                Dropped                  Latency waiting ...
_DROPPED_HEADER_RE = re.compile(r"^(?:Message type|Messages)\s+Dropped\b")
# Latencies waiting in queue (micros) per dropped message types
_DROPPED_TITLE_RE = re.compile(r"^Latencies waiting in queue \(micros\) per dropped message types\s*$")
#                                               50%               95%               99%               Max
_PERCENTILES_ONLY_RE = re.compile(r"^50%\s+95%\s+99%\s+Max\s*$")
# Meters                                   One Minute Rate    Five Minute Rate     Fifteen Minute Rate ...
_METERS_HEADER_RE = re.compile(r"^Meters\s+One Minute Rate\b")
_METER_NAMES = ["rate_1m", "rate_5m", "rate_15m", "rate_mean", "count", "connections"]
# TPC/all/EVENTLOOP_PARK      0     N/A (N/A)       N/A        3779913       N/A               N/A
# a row token: a value with a parenthesised second value, or one run of non-blanks
_ROW_TOKEN_RE = re.compile(r"\S+\s+\([^)]*\)|\S+")
# 0 (N/A)
_PAIR_RE = re.compile(r"^(?P<a>\S+)\s+\((?P<b>[^)]*)\)$")


def sniff(text: str) -> bool:
    head = head_lines(text, 2)
    return bool(head) and _POOLS_HEADER_RE.match(head[0].strip()) is not None and "Completed" in head[0]


def _pool_columns(header: str) -> list[str]:
    names = [m.group(0) for m in _POOL_NAMES_RE.finditer(header)]
    return ["pending+backpressure" if n.startswith("Pending (") else snake(n) for n in names]


def _pool_row(tokens: list[str], columns: list[str]) -> dict[str, object] | None:
    if len(tokens) != len(columns) + 1:
        return None
    row: dict[str, object] = {"pool": tokens[0]}
    for col, tok in zip(columns, tokens[1:]):
        if col == "pending+backpressure":
            m = _PAIR_RE.match(tok)
            row["pending"] = integer(m.group("a") if m else tok)
            row["backpressure"] = integer(m.group("b")) if m else None
        else:
            row[col] = integer(tok)
    return row


def _dropped_row(tokens: list[str]) -> dict[str, object] | None:
    if len(tokens) not in (2, 6):
        return None
    row: dict[str, object] = {"message_type": tokens[0], "dropped": integer(tokens[1])}
    if len(tokens) == 6:
        for col, tok in zip(("wait_p50_us", "wait_p95_us", "wait_p99_us", "wait_max_us"), tokens[2:]):
            row[col] = number(tok)
    return row


def _meter_row(tokens: list[str]) -> dict[str, object] | None:
    if len(tokens) != len(_METER_NAMES) + 1:
        return None
    row: dict[str, object] = {"meter": tokens[0]}
    for col, tok in zip(_METER_NAMES, tokens[1:]):
        row[col] = integer(tok) if col in ("count", "connections") else number(tok)
    return row


def parse(text: str, source: str = "<text>") -> ParseResult:
    """Parse `nodetool tpstats` output into "pools", "dropped", "meters" (see module docstring)."""
    result = start(text, source, NAME, "nodetool tpstats output")
    pools: list[dict[str, object]] = []
    dropped: list[dict[str, object]] = []
    meters: list[dict[str, object]] = []
    section: str | None = None
    pool_columns: list[str] = []
    seen_pools_header = False
    lines = list(meaningful(lines_of(text)))
    for idx, ln in enumerate(lines):
        t = ln.text.strip()
        if _POOLS_HEADER_RE.match(t):
            section, pool_columns, seen_pools_header = "pools", _pool_columns(t), True
            continue
        if _DROPPED_HEADER_RE.match(t):
            section = "dropped"
            continue
        if _METERS_HEADER_RE.match(t):
            section = "meters"
            continue
        if _DROPPED_TITLE_RE.match(t) or (section == "dropped" and _PERCENTILES_ONLY_RE.match(t)):
            continue
        tokens = _ROW_TOKEN_RE.findall(t)
        row: dict[str, object] | None = None
        try:
            if section == "pools":
                row = _pool_row(tokens, pool_columns)
                if row is not None:
                    pools.append(row)
            elif section == "dropped":
                row = _dropped_row(tokens)
                if row is not None:
                    dropped.append(row)
            elif section == "meters":
                row = _meter_row(tokens)
                if row is not None:
                    meters.append(row)
        except ValueError:
            row = None
        if row is not None:
            continue
        result.skipped_lines += 1
        if section is not None and idx == len(lines) - 1:
            result.complete = False
            result.warn(ln.no, ln.text, f"a whole {section} row (the input ends inside it: truncated)")
        elif section is not None:
            result.warn(ln.no, ln.text, f"a {section} row with the fields of its header")
        else:
            result.warn(ln.no, ln.text, "the 'Pool Name  Active  Pending ...' header first")
    if not seen_pools_header:
        raise no_structure(source, text, "nodetool tpstats output: a 'Pool Name  Active  Pending  Completed ...' "
                                         "header and pool rows")
    warn_unterminated(text, result)
    result.tables["pools"] = frame(pools, POOL_COLUMNS)
    result.tables["dropped"] = frame(dropped, DROPPED_COLUMNS)
    result.tables["meters"] = frame(meters, METER_COLUMNS)
    return result


FORMAT = Format(NAME, "nodetool tpstats: thread pools, dropped messages", sniff, parse)

__all__ = ["DROPPED_COLUMNS", "FORMAT", "METER_COLUMNS", "NAME", "POOL_COLUMNS", "parse", "sniff"]
