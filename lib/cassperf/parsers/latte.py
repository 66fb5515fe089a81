"""latte's text report (`latte run ...` stdout, or `latte show report.json`) -> one Run.

Two layouts, told apart by their labels (manifest["report_layout"]):

  "latte-0.29"     pkolaczk/latte 0.29 (crates.io latte-cli): sections CONFIG, LOG, SUMMARY STATS
                   (means 'Cycle latency [ms]' and 'Request latency [ms]'), one
                   'CYCLE LATENCY for <function> [ms]' section per workload function, ERRORS;
  "scylladb-fork"  the scylladb fork used by scylla-cluster-tests: CONFIG, LOG, SUMMARY STATS
                   ('Mean cycle time', 'Mean resp. time'), RESPONSE TIMES [ms], RESPONSE TIME
                   DISTRIBUTION.

Each section opens with a '<NAME> ════' line. 'debug:'/'info:' log lines may be interleaved
anywhere; they are skipped and counted, except 'info: Connected to <cluster> running Cassandra
version <v>'.

Two latencies, kept apart (never mixed in one row), in column `latency_metric`:
  resp_time   per CQL request. latte 0.29 ('Request latency'): Context::execute_inner
              (src/scripting/context.rs) times each ctx.execute / execute_prepared call from just
              before the driver call to the end of its last attempt, retries and their back-off
              sleeps included. The fork ('Mean resp. time', RESPONSE TIMES, its LOG rows): the same
              per-request time. latency_type "service" in both.
  cycle_time  per invocation of the workload function (one cycle: all its requests plus the Rune
              script's own time). latte 0.29 ('Cycle latency', CYCLE LATENCY, its LOG rows):
              Workload::run (src/exec/workload.rs) takes Instant::now() when the cycle's future is
              first polled, i.e. when latte's per-thread buffer_unordered(-p) admits the cycle, and
              stops when the function returns. With -r the cycles come from a tokio interval of
              rate/threads ticks per second with MissedTickBehavior::Skip (src/exec/mod.rs
              interval_stream): while all -p slots are busy the interval is not polled, missed
              ticks are dropped, and a late cycle is timed from when it actually starts, not from
              its scheduled tick. So 0.29's cycle latency is not corrected for coordinated omission
              -> latency_type "service" with or without a rate; a rate-limited run whose throughput
              falls short of CONFIG 'Max rate' gets a run warning saying so. The fork's 'Mean cycle
              time' is measured from the cycle's *scheduled* start under a rate limit (its exec loop
              passes the scheduled time "for coordinated omission fixed latency calculations")
              -> "response" when CONFIG has 'Max rate', else "service".

Summary rows (columns op, latency_metric, latency_type, count, rate_ops_s, latency_*_ms, errors,
duration_s, rows, row_rate_s, plus rate_err_ops_s / latency_mean_err_ms, the '±' margins, and
`retries` where printed):
  fork   op 'total' (the report does not name the function): a resp_time row (requests, req/s,
         mean, RESPONSE TIMES percentiles) and a cycle_time row (cycles, op/s, cycle mean; the fork
         prints no cycle percentiles).
  0.29   one function: op = its name; a cycle_time row (cycles, op/s, Cycle latency mean and the
         function's CYCLE LATENCY percentiles) and a resp_time row (requests, req/s, Request latency
         mean; latte 0.29 prints no request percentiles). Several functions (-f write:1,read:1):
         the same two rows with op 'total' (no percentiles: latte prints them per function only),
         then one cycle_time row per function with its percentiles (counts are not printed per
         function, so they stay empty).
Percentiles are in ms (SUMMARY: 3 decimals; LOG rows: 1 decimal). Error margins of the
percentiles go to tables['latte_response_times'] (fork) / tables['latte_cycle_latency'] (0.29,
with a `function` column); the fork's distribution to tables['latte_response_time_distribution'];
0.29's ERRORS lines to tables['latte_errors'].

Intervals: the LOG rows, columns mapped from the second header line's labels ([s], [op/s],
[req/s], the first and second [op]: cycles and errors, percentile labels Min/25/50/.../Max), so a
report with other columns maps what it has. Fork rows are resp_time, op 'total'; 0.29 rows are
cycle_time (all functions together), op as in the summary.

Rules for lines: blank lines are ignored; log lines and anything before the first section are
skipped and counted; in SUMMARY STATS a label with no value (latte prints blanks for a figure it
has not got, e.g. Request latency when no request was made) is left out, and a value that is not a
number is counted and warned; a LOG line that starts with a number but does not fill the header's
columns, and a percentile line that is not '<label> <ms> [± <ms>]', are counted and warned; lines
of sections this parser does not read are counted.

Complete: the report got to SUMMARY STATS and, when cycles ran, to the percentile sections
(fork: RESPONSE TIMES; 0.29: one CYCLE LATENCY section per function of CONFIG 'Function(s)'), and
the last percentile section reached its Max row. Otherwise complete=False with a warning.
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
LAYOUT_029 = "latte-0.29"
LAYOUT_FORK = "scylladb-fork"
RATE_SHORTFALL = 0.99    # a rate-limited 0.29 run below this share of 'Max rate' is warned about

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# SUMMARY STATS ══════════════════════════════════════════════════════════════════════════════
# CYCLE LATENCY for write [ms]  ══════════════════════════════════════════════════════════════
_SECTION = re.compile(r"^(?P<name>[A-Z][A-Za-z0-9 .:\[\]_/-]*?) ═{5,}\s*$")
# CYCLE LATENCY for write [ms]     (a section name, stripped)
_CYCLE_SECTION = re.compile(r"^CYCLE LATENCY for (?P<fn>\S+) \[ms\]$")
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
#      [s]      [op]      [op]    [op/s]             Min        25        50        75        90        99      99.9       Max
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
    try:
        return to_float(m.group("v")), (to_float(m.group("err")) if m.group("err") else None)
    except ValueError:                       # '1.2.3': digits and dots that are not a number
        return None


class _Report:
    """What one pass over the text collects (kept apart from the Run built from it)."""

    def __init__(self, source: str) -> None:
        self.result = ParseResult(format="latte", source=source)
        self.sections: list[str] = []
        self.config: dict[str, str] = {}
        self.stats: dict[str, tuple[float, float | None]] = {}
        self.percentiles: list[dict[str, Any]] = []     # function (None: fork), percentile, value_ms, err_ms
        self.pct_sections: list[str | None] = []        # function per percentile section (None: fork)
        self.buckets: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.log_header: list[str] | None = None
        self.log_rows: list[dict[str, Any]] = []
        self.cluster: dict[str, Any] = {}


def parse(text: str, source: str = "<text>") -> ParseResult:
    check_text(text, source, EXPECTED)
    rep = _Report(source)
    _read(text, rep)
    result = rep.result
    if not rep.sections:
        lines = text.splitlines()
        raise ParseError(source, 1, lines[0] if lines else None, EXPECTED)
    layout = _layout(rep)
    _check_complete(rep, layout)

    rate = _number(rep.config.get("Max rate [op/s]"))
    functions = _config_functions(rep.config)
    op = _op_name(rep, functions) if layout == LAYOUT_029 else "total"
    manifest: dict[str, Any] = {
        "tool": "latte",
        "tool_version": None,                    # the text report does not print it
        "command": None,
        "latency_type": "service",               # LOG rows: fork resp. times, 0.29 cycle latency (see above)
        "source": source,
        "complete": result.complete,
        "started_utc": _started(rep.config),
        "parameters": {k: v for k, v in rep.config.items() if v},
        "cluster": {**rep.cluster, **({"name": rep.config["Cluster"]} if rep.config.get("Cluster") else {}),
                    **({"cassandra_version": v}
                       if (v := rep.config.get("Cass. version") or rep.config.get("DB version")) else {})},
        "rate_limited": rate is not None,
        "report_layout": layout,
    }
    if functions:
        manifest["functions"] = functions
    intervals = pd.DataFrame(rep.log_rows) if rep.log_rows else None
    if intervals is not None:
        intervals.insert(1, "op", op)
        intervals["latency_type"] = "service"
        intervals["latency_metric"] = "cycle_time" if layout == LAYOUT_029 else "resp_time"
    summary = None
    if rep.stats:
        summary = _summary_029(rep, op) if layout == LAYOUT_029 else _summary_fork(rep, rate is not None)
    run = Run(manifest=manifest, intervals=intervals, summary=summary)
    run.warnings.extend(str(w) for w in result.warnings)
    if layout == LAYOUT_029 and rate is not None:
        run.warnings.extend(_rate_note(rep.stats, rate))
    result.runs.append(run)
    if rep.percentiles:
        if layout == LAYOUT_029:
            result.tables["latte_cycle_latency"] = pd.DataFrame(rep.percentiles)
        else:
            result.tables["latte_response_times"] = pd.DataFrame(rep.percentiles).drop(columns="function")
    if rep.buckets:
        result.tables["latte_response_time_distribution"] = pd.DataFrame(rep.buckets)
    if rep.errors:
        result.tables["latte_errors"] = pd.DataFrame({"message": rep.errors})
    return result


def _read(text: str, rep: _Report) -> None:
    result = rep.result
    section: str | None = None
    parent = ""
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = _ANSI.sub("", raw).rstrip()
        if not line.strip():
            continue
        if m := _CONNECTED.match(line):
            rep.cluster.update(name=m.group("cluster"), cassandra_version=m.group("version"))
            continue
        if _LOG_LINE.match(line):
            result.skipped_lines += 1
            continue
        if m := _SECTION.match(line):
            section = m.group("name").strip()
            rep.sections.append(section)
            parent = ""
            if section.startswith("RESPONSE TIMES"):
                rep.pct_sections.append(None)
            elif cm := _CYCLE_SECTION.match(section):
                rep.pct_sections.append(cm.group("fn"))
            continue
        if section is None:
            result.skipped_lines += 1         # anything before the first section
        elif section in ("CONFIG", "SUMMARY STATS"):
            parent = _read_labelled(rep, section, line_no, raw, line, parent)
        elif section == "LOG":
            _read_log(rep, line_no, raw, line)
        elif section.startswith("RESPONSE TIMES") or _CYCLE_SECTION.match(section):
            _read_percentile(rep, line_no, raw, line)
        elif section.startswith("RESPONSE TIME DISTRIBUTION"):
            if bm := _BUCKET.match(line):
                rep.buckets.append({"lo_ms": float(bm.group("lo")), "hi_ms": float(bm.group("hi")),
                                    "count": int(bm.group("count")), "percent": float(bm.group("pct"))})
            else:
                result.skipped_lines += 1     # the column header line
        elif section == "ERRORS":
            rep.errors.append(line.strip())
        else:
            result.skipped_lines += 1         # sections this parser does not read (RUN METADATA, ...)


def _read_labelled(rep: _Report, section: str, line_no: int, raw: str, line: str, parent: str) -> str:
    """One CONFIG / SUMMARY STATS line; returns the parent label for the tree lines below it."""
    if set(line.strip()) <= {"─"}:
        return parent
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
        rep.config[key] = value
    elif value.strip():
        v = _value(value)
        if v is None:
            rep.result.skipped_lines += 1
            rep.result.warn(line_no, raw, "'<label> [unit] <number> [± <error>]'")
        else:
            rep.stats[key] = v
    return parent


def _read_log(rep: _Report, line_no: int, raw: str, line: str) -> None:
    result = rep.result
    if _LOG_UNITS.match(line):
        rep.log_header = _log_columns(line.split())
        return
    tokens = line.split()
    if rep.log_header is None or len(tokens) != len(rep.log_header):
        result.skipped_lines += 1
        if tokens and re.fullmatch(r"\d[\d.]*", tokens[0]):
            result.warn(line_no, raw, "a LOG row with one number per column of the LOG header")
        return
    try:
        values = [to_float(t) for t in tokens]
    except ValueError:
        result.skipped_lines += 1
        result.warn(line_no, raw, "a LOG row of numbers")
        return
    rep.log_rows.append(dict(zip(rep.log_header, values, strict=True)))


def _read_percentile(rep: _Report, line_no: int, raw: str, line: str) -> None:
    pm = _PLAIN_LINE.match(line)
    v = _value(pm.group("value") or "") if pm else None
    if pm is None or v is None or pm.group("label") not in _PCT_COLUMNS:
        rep.result.skipped_lines += 1
        rep.result.warn(line_no, raw, "'<percentile> <ms> ± <error>'")
        return
    rep.percentiles.append({"function": rep.pct_sections[-1], "percentile": pm.group("label"),
                            "value_ms": v[0], "err_ms": v[1]})


def _layout(rep: _Report) -> str | None:
    """LAYOUT_029, LAYOUT_FORK, or None when nothing printed tells them apart."""
    header = rep.log_header or []
    if ({"Cycle latency [ms]", "Request latency [ms]"} & rep.stats.keys()
            or any(f is not None for f in rep.pct_sections) or header[1:2] == ["count"]):
        return LAYOUT_029
    if ({"Mean cycle time [ms]", "Mean resp. time [ms]"} & rep.stats.keys() or None in rep.pct_sections
            or header[1:3] == ["rate_ops_s", "req_rate_s"]):
        return LAYOUT_FORK
    return None


def _check_complete(rep: _Report, layout: str | None) -> None:
    result = rep.result
    if "SUMMARY STATS" not in rep.sections:
        result.complete = False
        result.warn(None, None, "a SUMMARY STATS section; the report ends before it (truncated run)")
        return
    ran = (rep.stats.get("Cycles [op]") or (0.0, None))[0] > 0
    if layout == LAYOUT_029:
        seen = [f for f in rep.pct_sections if f is not None]
        missing = [f for f in _config_functions(rep.config) if f not in seen]
        if ran and not seen:
            result.complete = False
            result.warn(None, None, "a CYCLE LATENCY for <function> [ms] section after SUMMARY STATS; it is missing")
        elif ran and missing:
            result.complete = False
            result.warn(None, None, f"a CYCLE LATENCY section for each function of CONFIG 'Function(s)'; "
                                    f"missing: {', '.join(missing)}")
    elif not rep.pct_sections and "Requests [req]" in rep.stats and rep.stats["Requests [req]"][0] > 0:
        result.complete = False
        result.warn(None, None, "a RESPONSE TIMES [ms] section after SUMMARY STATS; it is missing")
    if rep.pct_sections and result.complete:
        last = rep.pct_sections[-1]
        if not any(p["function"] == last and p["percentile"] == "Max" for p in rep.percentiles):
            result.complete = False
            result.warn(None, None, "a 'Max' row closing the last percentile section; the report ends before it")


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


def _config_functions(config: dict[str, str]) -> list[str]:
    """Function names of CONFIG 'Function(s)' ('write:1, read:1' -> ['write', 'read'])."""
    text = config.get("Function(s)", "")
    return [name for part in text.split(",") if (name := part.strip().rsplit(":", 1)[0].strip())]


def _op_name(rep: _Report, functions: list[str]) -> str:
    """The op of a 0.29 run's totals: its only function's name, else 'total' (always, for the fork)."""
    seen = [f for f in rep.pct_sections if f is not None]
    names = list(dict.fromkeys(functions or seen))
    return names[0] if len(names) == 1 else "total"


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


def _getter(stats: dict[str, tuple[float, float | None]]) -> tuple[Any, Any]:
    def get(key: str) -> float | None:
        return stats[key][0] if key in stats else None

    def err(key: str) -> float | None:
        return stats[key][1] if key in stats else None

    return get, err


def _summary_fork(rep: _Report, rate_limited: bool) -> pd.DataFrame:
    get, err = _getter(rep.stats)
    common = {"op": "total", "duration_s": get("Elapsed time [s]"), "errors": get("Errors [op]"),
              "rows": get("Rows [row]"), "row_rate_s": get("Throughput / [row/s]")}
    request: dict[str, Any] = {**common, "latency_metric": "resp_time", "latency_type": "service",
                               "count": get("Requests [req]"), "rate_ops_s": get("Throughput / [req/s]"),
                               "rate_err_ops_s": err("Throughput / [req/s]"),
                               "latency_mean_ms": get("Mean resp. time [ms]"),
                               "latency_mean_err_ms": err("Mean resp. time [ms]")}
    for r in rep.percentiles:
        request[_PCT_COLUMNS[r["percentile"]]] = r["value_ms"]
    cycle: dict[str, Any] = {**common, "latency_metric": "cycle_time",
                             "latency_type": "response" if rate_limited else "service",
                             "count": get("Cycles [op]"), "rate_ops_s": get("Throughput [op/s]"),
                             "rate_err_ops_s": err("Throughput [op/s]"),
                             "latency_mean_ms": get("Mean cycle time [ms]"),
                             "latency_mean_err_ms": err("Mean cycle time [ms]")}
    return pd.DataFrame([request, cycle])


def _summary_029(rep: _Report, op: str) -> pd.DataFrame:
    get, err = _getter(rep.stats)
    common = {"op": op, "latency_type": "service", "duration_s": get("Elapsed time [s]"),
              "errors": get("Errors [op]"), "rows": get("Rows [row]"), "row_rate_s": get("Throughput / [row/s]")}
    cycle: dict[str, Any] = {**common, "latency_metric": "cycle_time", "count": get("Cycles [op]"),
                             "rate_ops_s": get("Throughput [op/s]"), "rate_err_ops_s": err("Throughput [op/s]"),
                             "latency_mean_ms": get("Cycle latency [ms]"),
                             "latency_mean_err_ms": err("Cycle latency [ms]")}
    request: dict[str, Any] = {**common, "latency_metric": "resp_time", "count": get("Requests [req]"),
                               "rate_ops_s": get("Throughput / [req/s]"),
                               "rate_err_ops_s": err("Throughput / [req/s]"),
                               "latency_mean_ms": get("Request latency [ms]"),
                               "latency_mean_err_ms": err("Request latency [ms]"), "retries": get("Retries [ret]")}
    per_fn: dict[str, dict[str, Any]] = {}
    for p in rep.percentiles:
        row = per_fn.setdefault(p["function"], {"op": p["function"], "latency_metric": "cycle_time",
                                                "latency_type": "service"})
        row[_PCT_COLUMNS[p["percentile"]]] = p["value_ms"]
    if op != "total" and op in per_fn:          # one function: its percentiles are the run's
        cycle.update({k: v for k, v in per_fn.pop(op).items() if k.startswith("latency_")})
    return pd.DataFrame([cycle, request, *per_fn.values()])


def _rate_note(stats: dict[str, tuple[float, float | None]], rate: float) -> list[str]:
    got = stats.get("Throughput [op/s]")
    if got is None or got[0] >= RATE_SHORTFALL * rate:
        return []
    return [f"latte -r {rate:g}: the run made {got[0]:g} op/s, {100 * got[0] / rate:.0f}% of the rate asked. "
            f"latte 0.29 drops schedule ticks it cannot start while all concurrency slots are busy and times "
            f"each cycle from its actual start, so its latencies leave out the waits a fixed schedule would "
            f"have had (coordinated omission; latency_type 'service')"]


FORMAT = Format(name="latte", description="latte text report (CONFIG / LOG / SUMMARY STATS), 0.29 and the "
                                          "scylladb fork", sniff=sniff, parse=parse)
