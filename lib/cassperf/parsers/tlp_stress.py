"""tlp-stress and easy-cass-stress (its successor) console output -> one Run.

Layouts seen (fixtures/tlp-stress): 2018 'Writes | Reads | Errors' with '5min (req/s)' columns,
table printed once after 'Stress complete'; 2019 the same with '1min (req/s)'; 4.0.0 (2020) and
easy-cass-stress (2025) 'Writes | Reads | Deletes | Errors', printed during the run every 3 s,
the header re-printed every 10 rows, the final row repeated at shutdown.

What the numbers mean (SingleLineConsoleReporter over Dropwizard metrics, both tools):
  Count          ops completed since the start (cumulative): `count` with manifest
                 count_is_total=True;
  Latency (p99)  p99 of the Timer's exponentially-decaying reservoir, in ms: a recency-biased
                 p99 over roughly the last five minutes, *not* the p99 of the interval or of
                 the whole run -> latency_p99_ms (NaN for an op type with Count 0, which
                 prints 0);
  1min/5min (req/s)  the Meter's 1- or 5-minute exponentially weighted moving average rate
                 (ticks every 5 s, so it repeats between rows and starts at 0) -> extra column
                 rate_ewma_ops_s, window in manifest rate_ewma_window_s. rate_ops_s stays NA:
                 the console prints no per-interval rate and no run duration;
  Errors         the error Meter's count (all op types) and its EWMA rate -> the 'total' row.

Time: the console prints no timestamps. Rows printed during the run are stamped time_s =
3 s x row number (the reporter's period in both tools' Metrics.startReporting); a warning and
manifest time_s_estimated=True say so. The 2018/2019 table printed after 'Stress complete' is
the final state only: time_s NaN. A final row identical to the row before it (the shutdown
report) is dropped: kept, it would claim a 3 s interval with zero ops.

Latency type: tlp-stress times from issuing the request to its callback (service time);
easy-cass-stress's RequestQueue timer starts when the rate-limited generator queues the op
(its source: "addresses the issue of coordinated omission"), so it is recorded as response.

Rows: intervals and summary get one row per op type (write, read, delete) and a 'total' row
(count = sum of op counts, errors, EWMA rates summed; no latency: percentiles are not summed).
Line rules: the command line, 'Executing N operations ...', 'Stepping rate limiter ...',
'Stress complete' and the table's header lines are read; every other line is skipped and
counted; a line that looks like a table row but does not fit the header is warned about.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from cassperf.errors import ParseError
from cassperf.parsers.base import Format, ParseResult, check_text, to_float
from cassperf.results.model import Run

EXPECTED = ("tlp-stress / easy-cass-stress console output with its Writes/Reads/[Deletes/]Errors "
            "table ('Count  Latency (p99)  1min (req/s)')")
REPORT_PERIOD_S = 3.0

# ANSI colour codes the reporter may print around the group names (mordant TermColors)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# $ bin/cassandra-easy-stress run KeyValue -n 10000
_COMMAND = re.compile(r"^\$\s+(?P<cmd>\S*(?:tlp-stress|easy-stress|easy-cass-stress)\S*\s.*)$")
# Executing 10000 operations with consistency level LOCAL_ONE and serial consistency level LOCAL_SERIAL
_EXECUTING = re.compile(r"^Executing (?P<ops>\d+) operations(?: with consistency level (?P<cl>\w+))?"
                        r"(?: and serial consistency level (?P<serial>\w+))?")
# Stepping rate limiter by 500.0 to 5000.0
_RATE_STEP = re.compile(r"^Stepping rate limiter by (?P<step>[\d.]+) to (?P<target>[\d.]+)")
# Stress complete, 1.
_COMPLETE = re.compile(r"^Stress complete, (?P<n>\d+)\.")
#                  Writes                                  Reads                                  Deletes                       Errors
_GROUPS = re.compile(r"^\s*Writes\s+Reads\s+(?:Deletes\s+)?Errors\s*$")
#   Count  Latency (p99)  1min (req/s) |   Count  Latency (p99)  1min (req/s) |   Count  1min (errors/s)
_COLUMNS = re.compile(r"^\s*Count\s+Latency \(p99\)\s+(?P<win>\d+)min \(req/s\)\s*\|")
_COLUMN_NAME = re.compile(r"Count|Latency \(p99\)|(\d+)min \((?:req|errors)/s\)")
#    624          35.88             0 |     597          34.79             0 |       0              0             0 |       0                0
# (a line starting with a number and holding a '|' is a row; it must then fit the header)
_ROW = re.compile(r"^\s*\d[\d.,]*\s[^|]*\|")
_MARKERS = re.compile(r"tlp[-_]stress|easy[-_]cass[-_]stress|cassandra-easy-stress")

_OPS = {"Writes": "write", "Reads": "read", "Deletes": "delete", "Errors": "errors"}


def sniff(head: str) -> bool:
    return any(_COLUMNS.match(_ANSI.sub("", ln)) for ln in head.splitlines()[:400])


def parse(text: str, source: str = "<text>") -> ParseResult:
    check_text(text, source, EXPECTED)
    result = ParseResult(format="tlp-stress", source=source)
    params: dict[str, Any] = {}
    command: str | None = None
    groups: list[str] | None = None
    columns: list[list[str]] | None = None
    window_s: float | None = None
    rows: list[tuple[int, list[str], list[list[str]], list[list[float]]]] = []  # line_no, groups, columns, values
    complete_at: int | None = None
    last_bad: int | None = None
    lines = text.splitlines()
    for line_no, raw in enumerate(lines, start=1):
        line = _ANSI.sub("", raw).rstrip()
        s = line.strip()
        if not s:
            continue
        if command is None and (m := _COMMAND.match(s)):
            command = m.group("cmd").strip()
            continue
        if m := _EXECUTING.match(s):
            params["operations"] = int(m.group("ops"))
            if m.group("cl"):
                params["cl"] = m.group("cl")
            if m.group("serial"):
                params["serial_cl"] = m.group("serial")
            continue
        if m := _RATE_STEP.match(s):
            params["rate_limiter_step_ops_s"] = float(m.group("step"))
            params["rate_limiter_target_ops_s"] = float(m.group("target"))
            continue
        if m := _COMPLETE.match(s):
            complete_at = line_no
            continue
        if _GROUPS.match(line):
            groups = [_OPS[g] for g in s.split()]
            columns = None                 # a new header block: its column line follows
            continue
        if m := _COLUMNS.match(line):
            names = [[_column_key(n) for n in _COLUMN_NAME.finditer(p)] for p in line.split("|")]
            if groups is None or len(names) != len(groups) or any(not p for p in names):
                result.skipped_lines += 1
                result.warn(line_no, raw, "a column header matching the Writes/Reads/[Deletes/]Errors line above it")
                columns = None
                continue
            columns = names
            window_s = float(m.group("win")) * 60.0
            continue
        if _ROW.match(line):
            values = _row_values(line, columns)
            if values is None:
                result.skipped_lines += 1
                last_bad = line_no
                result.warn(line_no, raw, "a table row with one number per column of the header above it"
                            if columns else "a column header line ('Count  Latency (p99) ...') above this row")
                continue
            rows.append((line_no, list(groups or []), columns or [], values))
            continue
        result.skipped_lines += 1          # preamble, schema, driver and JVM messages

    tool = "easy-cass-stress" if re.search(r"easy[-_]cass[-_]stress|cassandra-easy-stress", text) else "tlp-stress"
    if not rows and columns is None and not (_MARKERS.search(text) and (command or params)):
        raise ParseError(source, 1, lines[0] if lines else None, EXPECTED)
    if complete_at is None:
        result.complete = False
        result.warn(None, None, "'Stress complete' at the end of the output; it is missing (truncated run)")
    elif last_bad is not None and last_bad == _last_content_line(lines):
        result.complete = False
    if not rows:
        result.complete = False
        result.warn(None, None, "at least one row of the progress table; there is none")

    after_complete = complete_at is not None and rows and rows[0][0] > complete_at
    dropped_dup = False
    if len(rows) >= 2 and rows[-1][1:] == rows[-2][1:]:
        rows = rows[:-1]
        dropped_dup = True
    interval_rows: list[dict[str, Any]] = []
    for i, (_, row_groups, row_columns, values) in enumerate(rows):
        t = math.nan if after_complete else REPORT_PERIOD_S * (i + 1)
        interval_rows.extend(_records(t, row_groups, row_columns, values))
    if rows and not after_complete:
        result.warn(None, None, f"timestamps; the console prints none, time_s = row number x "
                                f"{REPORT_PERIOD_S:g} s (the reporter's period) is an estimate")
    summary = [{k: v for k, v in r.items() if k != "time_s"}
               for r in (_records(math.nan, *rows[-1][1:]) if rows else [])]
    manifest: dict[str, Any] = {
        "tool": tool,
        "tool_version": None,             # neither tool prints its version
        "command": command,
        "latency_type": "response" if tool == "easy-cass-stress" else "service",
        "source": source,
        "complete": result.complete,
        "parameters": params,
        "count_is_total": True,
        "rate_ewma_window_s": window_s,
        "report_period_s": REPORT_PERIOD_S,
        "time_s_estimated": bool(rows) and not after_complete,
        "dropped_final_duplicate_row": dropped_dup,
    }
    run = Run(manifest=manifest, intervals=pd.DataFrame(interval_rows) if interval_rows else None,
              summary=pd.DataFrame(summary) if summary else None)
    run.warnings.extend(str(w) for w in result.warnings)
    result.runs.append(run)
    return result


def _column_key(m: re.Match[str]) -> str:
    name = m.group(0)
    if name == "Count":
        return "count"
    if name.startswith("Latency"):
        return "p99"
    return "rate"


def _row_values(line: str, columns: list[list[str]] | None) -> list[list[float]] | None:
    if columns is None:
        return None
    parts = line.split("|")
    if len(parts) != len(columns):
        return None
    out: list[list[float]] = []
    for part, cols in zip(parts, columns, strict=True):
        tokens = part.split()
        if len(tokens) != len(cols):
            return None
        try:
            out.append([to_float(t) for t in tokens])
        except ValueError:
            return None
    return out


def _records(t: float, groups: list[str], columns: list[list[str]], values: list[list[float]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    total_count = 0
    total_rate = 0.0
    errors: int | None = None
    error_rate: float | None = None
    for op, cols, vals in zip(groups, columns, values, strict=True):
        rec = dict(zip(cols, vals, strict=True))
        if op == "errors":
            errors = int(rec["count"])
            error_rate = rec.get("rate")
            continue
        count = int(rec["count"])
        total_count += count
        total_rate += rec.get("rate", 0.0)
        # an op type that never ran prints p99 0: that is no latency, so NaN
        out.append({"time_s": t, "op": op, "count": count, "latency_p99_ms": rec.get("p99") if count else None,
                    "rate_ewma_ops_s": rec.get("rate")})
    out.append({"time_s": t, "op": "total", "count": total_count, "errors": errors,
                "rate_ewma_ops_s": total_rate, "error_rate_ewma_s": error_rate})
    return out


def _last_content_line(lines: list[str]) -> int:
    for i in range(len(lines), 0, -1):
        if lines[i - 1].strip():
            return i
    return 0


FORMAT = Format(name="tlp-stress", description="tlp-stress / easy-cass-stress console output", sniff=sniff,
                parse=parse)
