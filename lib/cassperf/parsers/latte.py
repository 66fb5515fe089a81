"""latte's text report (`latte run ...` stdout, or `latte show report.json`) -> one Run.

Sections, each opened by a '<NAME> ════' line: CONFIG (date, cluster, parameters), LOG (one row
per sampling period), SUMMARY STATS, RESPONSE TIMES [ms] (percentiles with error margins),
RESPONSE TIME DISTRIBUTION. 'debug:'/'info:' log lines may be interleaved anywhere; they are
skipped and counted, except 'info: Connected to <cluster> running Cassandra version <v>'.

Two latencies, kept apart (never mixed in one row):
  resp. time   per request, from sending it to its response (latte's "Response times"; the LOG
               rows and the RESPONSE TIMES percentiles) -> latency_type "service";
  cycle time   per invocation of the workload function ("Mean cycle time"); with a rate limit
               (CONFIG 'Max rate') the scylladb fork measures it from the cycle's *scheduled*
               start (its exec loop passes the scheduled time "for coordinated omission fixed
               latency calculations") -> latency_type "response"; without one, "service".
The summary therefore has one row per (op, latency_metric): op 'total' (latte reports the run as
a whole), extra columns `latency_metric` ("resp_time" | "cycle_time") and `latency_type`. The
resp_time row carries the request count and req/s, the percentiles, and the mean; the cycle_time
row the cycle count, op/s and the cycle mean (latte prints no cycle percentiles in this layout).
Error margins latte prints after '±' go to extra columns (*_err_*) on the summary and to
tables['latte_response_times']; the distribution goes to tables['latte_response_time_distribution'].

LOG columns are mapped from the second header line's labels ([s], [op/s], [req/s], [op] and the
percentile labels Min/25/50/.../Max), so a report with other columns maps what it has.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from cassperf.errors import ParseError
from cassperf.parsers.base import Format, ParseResult, check_text, to_float
from cassperf.results.model import Run

EXPECTED = "a latte text report (sections 'CONFIG ═══', 'LOG ═══', 'SUMMARY STATS ═══')"

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# SUMMARY STATS ══════════════════════════════════════════════════════════════════════════════
_SECTION = re.compile(r"^(?P<name>[A-Z][A-Za-z0-9 .\[\]_/-]*?) ═{5,}\s*$")
# info: Connected to ubunt-db-cluster-0e7f8fb1 running Cassandra version 3.0.8
_CONNECTED = re.compile(r"^info: Connected to (?P<cluster>\S+) running Cassandra version (?P<version>\S+)")
# debug: [1726248145] (cycle_count=115272000, i=0) running function 'count'
_LOG_LINE = re.compile(r"^(?:debug|info|warn|warning|error|trace):\s")
#      Max rate    [op/s]     160100
#  Mean resp. time      [ms]      2.272 ± 1.707
_UNIT_LINE = re.compile(r"^\s*(?P<label>\S.*?)?\s+\[(?P<unit>[^\]]+)\]\s*(?P<value>.*?)\s*$")
#            Date            Fri, 13 Sep 2024
_PLAIN_LINE = re.compile(r"^\s*(?P<label>\S.*?)(?:\s{2,}(?P<value>\S.*?))?\s*$")
# 160100 ± 14        2.272 ± 1.707       115272000
_VALUE = re.compile(r"^(?P<v>-?\d[\d.,]*)(?:\s*±\s*(?P<err>\d[\d.,]*))?$")
#               └─   [req/s]     160100 ± 14
_TREE = re.compile(r"^[└├┌│─┴┬┼\s]+")
#      0.2 ...      0.5      65258   0.06%  ▪▪▪▪
_BUCKET = re.compile(r"^\s*(?P<lo>[\d.]+)\s*\.\.\.\s*(?P<hi>[\d.]+)\s+(?P<count>\d+)\s+(?P<pct>[\d.]+)%")
#      [s]      [op/s]     [req/s]         Min        25        50        75        90        95        99      99.9       Max
_LOG_UNITS = re.compile(r"^\s*\[s\]\s")

_PCT_COLUMNS = {"Min": "latency_min_ms", "25": "latency_p25_ms", "50": "latency_p50_ms",
                "75": "latency_p75_ms", "90": "latency_p90_ms", "95": "latency_p95_ms",
                "98": "latency_p98_ms", "99": "latency_p99_ms", "99.9": "latency_p999_ms",
                "99.99": "latency_p9999_ms", "Max": "latency_max_ms"}


def sniff(head: str) -> bool:
    names = {m.group("name") for ln in head.splitlines() if (m := _SECTION.match(_ANSI.sub("", ln)))}
    return bool(names & {"LOG", "SUMMARY STATS"}) or {"CONFIG"} <= names and "═" in head


def _value(text: str) -> tuple[float, float | None] | None:
    m = _VALUE.match(text.strip())
    if not m:
        return None
    return to_float(m.group("v")), (to_float(m.group("err")) if m.group("err") else None)


def parse(text: str, source: str = "<text>") -> ParseResult:
    check_text(text, source, EXPECTED)
    result = ParseResult(format="latte", source=source)
    section: str | None = None
    seen: list[str] = []
    config: dict[str, str] = {}
    stats: dict[str, tuple[float, float | None]] = {}
    resp_times: list[dict[str, Any]] = []
    buckets: list[dict[str, Any]] = []
    log_columns: list[str] | None = None
    log_rows: list[dict[str, Any]] = []
    cluster: dict[str, Any] = {}
    parent = ""
    lines = text.splitlines()
    for line_no, raw in enumerate(lines, start=1):
        line = _ANSI.sub("", raw).rstrip()
        if not line.strip():
            continue
        if m := _CONNECTED.match(line):
            cluster.update(name=m.group("cluster"), cassandra_version=m.group("version"))
            continue
        if _LOG_LINE.match(line):
            result.skipped_lines += 1
            continue
        if m := _SECTION.match(line):
            section = m.group("name").strip()
            seen.append(section)
            parent = ""
            continue
        if section is None:
            result.skipped_lines += 1         # anything before the first section
            continue
        if section == "CONFIG" or section == "SUMMARY STATS":
            if set(line.strip()) <= {"─"}:
                continue
            m = _UNIT_LINE.match(line)
            if m:
                label, unit, value = (m.group("label") or "").strip(), m.group("unit"), m.group("value")
            else:
                pm = _PLAIN_LINE.match(line)
                assert pm is not None      # matches any line with a non-blank character
                label, unit, value = pm.group("label").strip(), None, pm.group("value") or ""
            tree = _TREE.match(label)
            if tree:                       # '└─ [req/s]', '├─min interval': belongs to the line above
                rest = label[tree.end():].strip()
                label = f"{parent} / {rest}" if rest else f"{parent} /"
            else:
                parent = label
            key = f"{label} [{unit}]" if unit else label
            if section == "CONFIG":
                config[key] = value
            else:
                v = _value(value)
                if v is None:
                    result.skipped_lines += 1
                    result.warn(line_no, raw, "'<label> [unit] <number> [± <error>]'")
                    continue
                stats[key] = v
            continue
        if section == "LOG":
            if _LOG_UNITS.match(line):
                log_columns = _log_columns(line.split())
                continue
            tokens = line.split()
            if log_columns is None or len(tokens) != len(log_columns):
                result.skipped_lines += 1
                if tokens and re.fullmatch(r"\d[\d.]*", tokens[0]):
                    result.warn(line_no, raw, "a LOG row with one number per column of the LOG header")
                continue
            try:
                values = [to_float(t) for t in tokens]
            except ValueError:
                result.skipped_lines += 1
                result.warn(line_no, raw, "a LOG row of numbers")
                continue
            log_rows.append(dict(zip(log_columns, values, strict=True)))
            continue
        if section.startswith("RESPONSE TIMES"):
            pm = _PLAIN_LINE.match(line)
            v = _value(pm.group("value") or "") if pm else None
            if pm is None or v is None or pm.group("label") not in _PCT_COLUMNS:
                result.skipped_lines += 1
                result.warn(line_no, raw, "'<percentile> <ms> ± <error>'")
                continue
            resp_times.append({"percentile": pm.group("label"), "value_ms": v[0], "err_ms": v[1]})
            continue
        if section.startswith("RESPONSE TIME DISTRIBUTION"):
            if bm := _BUCKET.match(line):
                buckets.append({"lo_ms": float(bm.group("lo")), "hi_ms": float(bm.group("hi")),
                                "count": int(bm.group("count")), "percent": float(bm.group("pct"))})
            else:
                result.skipped_lines += 1     # the column header line
            continue
        result.skipped_lines += 1             # sections this parser does not read (RUN METADATA, ERRORS, ...)

    if not seen:
        raise ParseError(source, 1, lines[0] if lines else None, EXPECTED)
    if "SUMMARY STATS" not in seen:
        result.complete = False
        result.warn(None, None, "a SUMMARY STATS section; the report ends before it (truncated run)")
    elif not resp_times and "Requests [req]" in stats and stats["Requests [req]"][0] > 0:
        result.complete = False
        result.warn(None, None, "a RESPONSE TIMES [ms] section after SUMMARY STATS; it is missing")

    rate_limited = _number(config.get("Max rate [op/s]")) is not None
    manifest: dict[str, Any] = {
        "tool": "latte",
        "tool_version": None,                    # the text report does not print it
        "command": None,
        "latency_type": "service",               # the LOG rows: request response times
        "source": source,
        "complete": result.complete,
        "started_utc": _started(config),
        "parameters": {k: v for k, v in config.items() if v},
        "cluster": {**cluster, **({"name": config["Cluster"]} if config.get("Cluster") else {}),
                    **({"cassandra_version": v} if (v := config.get("Cass. version") or config.get("DB version"))
                       else {})},
        "rate_limited": rate_limited,
    }
    intervals = pd.DataFrame(log_rows) if log_rows else None
    if intervals is not None:
        intervals.insert(1, "op", "total")
        intervals["latency_type"] = "service"
        intervals["latency_metric"] = "resp_time"
    summary = _summary(stats, resp_times, rate_limited) if stats else None
    run = Run(manifest=manifest, intervals=intervals, summary=summary)
    run.warnings.extend(str(w) for w in result.warnings)
    result.runs.append(run)
    if resp_times:
        result.tables["latte_response_times"] = pd.DataFrame(resp_times)
    if buckets:
        result.tables["latte_response_time_distribution"] = pd.DataFrame(buckets)
    return result


def _log_columns(tokens: list[str]) -> list[str]:
    names: list[str] = []
    op_seen = 0
    for t in tokens:
        if t == "[s]":
            names.append("time_s")
        elif t == "[op/s]":
            names.append("rate_ops_s")
        elif t == "[req/s]":
            names.append("req_rate_s")
        elif t == "[op]":
            names.append("count" if op_seen == 0 else "errors")
            op_seen += 1
        else:
            names.append(_PCT_COLUMNS.get(t, f"col_{t}"))
    return names


def _number(text: str | None) -> float | None:
    if not text:
        return None
    v = _value(text)
    return v[0] if v else None


def _started(config: dict[str, str]) -> str | None:
    date, time = config.get("Date"), config.get("Time")
    if not date or not time:
        return None
    for fmt in ("%a, %d %b %Y %H:%M:%S %z", "%a, %d %b %Y %H:%M:%S"):
        try:
            dt = datetime.strptime(f"{date} {time}", fmt)
        except ValueError:
            continue
        return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).astimezone(UTC).isoformat()
    return None


def _summary(stats: dict[str, tuple[float, float | None]], resp_times: list[dict[str, Any]],
             rate_limited: bool) -> pd.DataFrame:
    def get(key: str) -> float | None:
        return stats[key][0] if key in stats else None

    def err(key: str) -> float | None:
        return stats[key][1] if key in stats else None

    common = {"op": "total", "duration_s": get("Elapsed time [s]"), "errors": get("Errors [op]"),
              "rows": get("Rows [row]"), "row_rate_s": get("Throughput / [row/s]")}
    request: dict[str, Any] = {**common, "latency_metric": "resp_time", "latency_type": "service",
                               "count": get("Requests [req]"), "rate_ops_s": get("Throughput / [req/s]"),
                               "rate_err_ops_s": err("Throughput / [req/s]"),
                               "latency_mean_ms": get("Mean resp. time [ms]"),
                               "latency_mean_err_ms": err("Mean resp. time [ms]")}
    for r in resp_times:
        request[_PCT_COLUMNS[r["percentile"]]] = r["value_ms"]
    cycle: dict[str, Any] = {**common, "latency_metric": "cycle_time",
                             "latency_type": "response" if rate_limited else "service",
                             "count": get("Cycles [op]"), "rate_ops_s": get("Throughput [op/s]"),
                             "rate_err_ops_s": err("Throughput [op/s]"),
                             "latency_mean_ms": get("Mean cycle time [ms]"),
                             "latency_mean_err_ms": err("Mean cycle time [ms]")}
    return pd.DataFrame([request, cycle])


FORMAT = Format(name="latte", description="latte text report (CONFIG / LOG / SUMMARY STATS)", sniff=sniff,
                parse=parse)
