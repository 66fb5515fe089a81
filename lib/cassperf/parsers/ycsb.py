"""YCSB client output (0.1 .. 0.17 era) -> one Run. Best effort: YCSB is not Cassandra-specific,
and its output changed across versions.

Read:
  'YCSB Client 0.9.0'                      -> tool_version
  'Command line: -db ... -P ... -p k=v -t' -> command, parameters (db, threads, target, workload
                                              files, properties, phase load/run); a 'java -cp ...
                                              com.yahoo.ycsb.Client ...' line serves when that is missing
  '[OVERALL], RunTime(ms), 80.0'           -> the 'total' summary row (duration_s, rate_ops_s)
  '[UPDATE], Operations, 531' and its AverageLatency/Min/Max/NthPercentileLatency lines
                                           -> one summary row per op type (op lowercased);
                                              (us) values are divided by 1000, (ms) kept. Old
                                              clients print percentiles as whole-ms histogram
                                              buckets: '95thPercentileLatency(ms), 0' means < 1 ms.
  '[UPDATE], Return=0, 531'                -> errors = ops with a return code other than 0/OK
  '[UPDATE], 0, 530' / '>1000'             -> tables['ycsb_histogram'] (op, bucket_ms, count, overflow)
  every '[SECTION], metric, value' line    -> tables['ycsb_measurements'] (raw, incl. GC totals)
  status lines ('-s', normally on stderr):
  '2016-05-31 22:33:15:329 5180 sec: 396265670 operations; 66103 current ops/sec; ... [INSERT:
  Count=661025, Max=218111, Min=345, Avg=3021.97, 90=8279, 99=21791, 99.9=31247, 99.99=43039]'
                                           -> intervals: a 'total' row per line (count = ops since
                                              the previous status line, rate = current ops/sec) and
                                              one row per bracketed op (per-interval Count and
                                              latencies in us -> ms)
Ops named 'Intended-<OP>' (measurement.interval=intended|both) are response time (measured from
the intended start under -target); the others service time: column `latency_type`. The manifest
latency_type is "response" only when measurement.interval=intended.

Everything else (driver messages, stack traces) is skipped and counted; exception lines are
counted in manifest `exceptions_in_output`. Output without [OVERALL] results (the run died, or the
file was cut) is a partial result: complete=False with a warning.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

import pandas as pd

from cassperf.errors import ParseError
from cassperf.parsers.base import Format, ParseResult, check_text, to_float
from cassperf.results.model import Run

EXPECTED = "YCSB client output ('YCSB Client <version>', '[OVERALL], RunTime(ms), ...' lines)"

# YCSB Client 0.9.0
_CLIENT = re.compile(r"^YCSB Client (?P<version>\S+)")
# Command line: -db com.yahoo.ycsb.BasicDB -P workloads/workloada -t
_COMMAND = re.compile(r"^Command line: (?P<cmd>.*)$")
# java -cp /opt/pkb/ycsb/...:/opt/pkb/ycsb/lib/core-0.9.0.jar com.yahoo.ycsb.Client -db com.yahoo.ycsb.db.RedisClient ...
_JAVA = re.compile(r"^java\s.*\b(?:com\.yahoo\.ycsb|site\.ycsb)\.Client\s(?P<args>.*)$")
# [UPDATE], AverageLatency(us), 65.9774011299435
_MEASUREMENT = re.compile(r"^\[(?P<section>[^\]]+)\],\s*(?P<metric>[^,]+?),\s*(?P<value>\S+)\s*$")
# 2020-01-10 16:21:40:213 10 sec: 15451 operations; 1545.1 current ops/sec; est completion in 10 minutes [INSERT: Count=15452, Max=120319, Min=1249, Avg=2312.21, 90=2625, 99=7915, 99.9=19551, 99.99=113855]
_STATUS = re.compile(r"^(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3} )?(?P<sec>\d+) sec: (?P<ops>\d+) operations;"
                     r"(?:\s*(?P<rate>[\d.,]+) current ops/sec;)?(?P<rest>.*)$")
# [READ: Count=63, Max=742399, Min=481, Avg=71213.14, 90=252543, 99=542719, 99.9=742399, 99.99=742399]
# [READ AverageLatency(us)=782.17]
_BRACKET = re.compile(r"\[(?P<op>[A-Za-z][A-Za-z_-]*):?\s+(?P<body>[^\]]*)\]")
# Avg=2312.21, 90=2625   (a locale may print Avg=19,59: the comma is then the decimal mark)
_KV = re.compile(r"(?P<k>[A-Za-z0-9.()]+)=(?P<v>-?\d+(?:[.,]\d+)?)")
# Maximum execution time specified as: 600 secs
_MAX_TIME = re.compile(r"^Maximum execution time specified as: (?P<s>\d+) secs")
# redis.clients.jedis.exceptions.JedisConnectionException: java.net.SocketTimeoutException: Read timed out
_EXCEPTION = re.compile(r"^(?:Exception in thread \S+ )?[\w.$]+(?:Exception|Error)(?::|$)")
# [UPDATE], 95thPercentileLatency(ms), 0   /  [READ], 99.9PercentileLatency(us), 1023
_PERCENTILE = re.compile(r"^(?P<p>\d+(?:\.\d+)?)(?:th)?PercentileLatency\((?P<unit>us|ms)\)$")
# [UPDATE], AverageLatency(us), 65.97
_LATENCY = re.compile(r"^(?P<kind>Average|Min|Max)Latency\((?P<unit>us|ms)\)$")

_PCT_COLUMN = {"50": "latency_p50_ms", "90": "latency_p90_ms", "95": "latency_p95_ms",
               "99": "latency_p99_ms", "99.9": "latency_p999_ms", "99.99": "latency_p9999_ms"}
_STATUS_KEYS = {"Avg": "latency_mean_ms", "Min": "latency_min_ms", "Max": "latency_max_ms",
                **{k: v for k, v in _PCT_COLUMN.items()}}
_OK_RETURNS = {"0", "OK"}


def sniff(head: str) -> bool:
    for ln in head.splitlines()[:500]:
        if _CLIENT.match(ln) or _JAVA.match(ln) or ln.startswith(("[OVERALL], RunTime(ms)",
                                                                  "[OVERALL], Throughput(ops/sec)")):
            return True
    return False


def _op_name(section: str) -> tuple[str, str]:
    if section.startswith("Intended-"):
        return section[len("Intended-"):].lower(), "response"
    return section.lower(), "service"


def _ms(value: float, unit: str) -> float:
    return value / 1000.0 if unit == "us" else value


def _parameters(cmd: str) -> dict[str, Any]:
    try:
        tokens = shlex.split(cmd)
    except ValueError:
        tokens = cmd.split()
    params: dict[str, Any] = {"workload_files": [], "properties": {}}
    i = 0
    while i < len(tokens):
        t = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if t == "-db" and nxt:
            params["db"] = nxt
            i += 1
        elif t == "-threads" and nxt:
            params["threads"] = int(nxt) if nxt.isdigit() else nxt
            i += 1
        elif t == "-target" and nxt:
            params["target_ops_s"] = float(nxt) if re.fullmatch(r"[\d.]+", nxt) else nxt
            i += 1
        elif t == "-P" and nxt:
            params["workload_files"].append(nxt)
            i += 1
        elif t == "-p" and nxt and "=" in nxt:
            k, _, v = nxt.partition("=")
            params["properties"][k] = v
            i += 1
        elif t == "-t":
            params["phase"] = "run"
        elif t == "-load":
            params["phase"] = "load"
        elif t == "-s":
            params["status"] = True
        i += 1
    return params


def parse(text: str, source: str = "<text>") -> ParseResult:
    check_text(text, source, EXPECTED)
    result = ParseResult(format="ycsb", source=source)
    version: str | None = None
    command: str | None = None
    java_args: str | None = None
    max_time: int | None = None
    exceptions = 0
    measurements: list[dict[str, Any]] = []
    histogram: list[dict[str, Any]] = []
    status_rows: list[dict[str, Any]] = []
    prev_ops = 0
    lines = text.splitlines()
    for line_no, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        if m := _CLIENT.match(line):
            version = m.group("version")
            continue
        if m := _COMMAND.match(line):
            command = m.group("cmd").strip()
            continue
        if m := _JAVA.match(line):
            java_args = m.group("args").strip()
            continue
        if m := _MAX_TIME.match(line):
            max_time = int(m.group("s"))
            continue
        if m := _MEASUREMENT.match(line):
            section, metric, value = m.group("section"), m.group("metric").strip(), m.group("value")
            if re.fullmatch(r">?\d+", metric):              # histogram bucket
                try:
                    count = int(value)
                except ValueError:
                    result.skipped_lines += 1
                    result.warn(line_no, raw, "'[OP], <bucket ms>, <count>'")
                    continue
                histogram.append({"op": _op_name(section)[0], "bucket_ms": int(metric.lstrip(">")),
                                  "count": count, "overflow": metric.startswith(">")})
                continue
            try:
                number = to_float(value)
            except ValueError:
                result.skipped_lines += 1
                result.warn(line_no, raw, "'[SECTION], <metric>, <number>'")
                continue
            measurements.append({"section": section, "metric": metric, "value": number})
            continue
        if m := _STATUS.match(line):
            sec, ops = float(m.group("sec")), int(m.group("ops"))
            rate = to_float(m.group("rate")) if m.group("rate") else None
            status_rows.append({"time_s": sec, "op": "total", "count": ops - prev_ops, "rate_ops_s": rate,
                                "latency_type": "service"})
            prev_ops = ops
            for b in _BRACKET.finditer(m.group("rest")):
                op, kind = _op_name(b.group("op"))
                row: dict[str, Any] = {"time_s": sec, "op": op, "latency_type": kind}
                for kv in _KV.finditer(b.group("body")):
                    k, v = kv.group("k"), to_float(kv.group("v"))
                    if k == "Count":
                        row["count"] = int(v)
                    elif k == "AverageLatency(us)":
                        row["latency_mean_ms"] = v / 1000.0
                    elif k in _STATUS_KEYS:
                        row[_STATUS_KEYS[k]] = v / 1000.0
                status_rows.append(row)
            continue
        if _EXCEPTION.match(line):
            exceptions += 1
        result.skipped_lines += 1

    if version is None and command is None and java_args is None and not measurements and not status_rows:
        raise ParseError(source, 1, lines[0] if lines else None, EXPECTED)
    overall = {r["metric"]: r["value"] for r in measurements if r["section"] == "OVERALL"}
    if not overall:
        result.complete = False
        result.warn(None, None, "the final '[OVERALL], RunTime(ms), ...' results; there are none "
                                "(the run did not finish, or the output was cut)")
    if exceptions:
        result.warn(None, None, f"a clean run; {exceptions} exception(s) were printed (failed operations "
                                f"may be missing from the counts)")

    coarse = [r for r in measurements if (pm := _PERCENTILE.match(r["metric"])) and pm.group("unit") == "ms"]
    if coarse:
        result.warn(None, None, "percentiles finer than whole milliseconds; this client prints "
                                f"'{coarse[0]['metric']}' as a 1 ms histogram bucket (0 means under 1 ms)")
    cmd = command or java_args
    params = _parameters(cmd) if cmd else {}
    if max_time is not None:
        params["max_execution_time_s"] = max_time
    interval_kind = params.get("properties", {}).get("measurement.interval", "op")
    manifest: dict[str, Any] = {
        "tool": "ycsb",
        "tool_version": version,
        "command": cmd,
        "latency_type": "response" if interval_kind == "intended" else "service",
        "source": source,
        "complete": result.complete,
        "parameters": params,
        "exceptions_in_output": exceptions,
        "count_is_total": False,
    }
    summary = _summary(measurements)
    run = Run(manifest=manifest, intervals=pd.DataFrame(status_rows) if status_rows else None,
              summary=pd.DataFrame(summary) if summary else None)
    run.warnings.extend(str(w) for w in result.warnings)
    result.runs.append(run)
    if measurements:
        result.tables["ycsb_measurements"] = pd.DataFrame(measurements)
    if histogram:
        result.tables["ycsb_histogram"] = pd.DataFrame(histogram)
    return result


def _summary(measurements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for r in measurements:
        section, metric, value = r["section"], r["metric"], r["value"]
        if section == "OVERALL":
            row = rows.setdefault("OVERALL", {"op": "total", "latency_type": "service"})
            if metric == "RunTime(ms)":
                row["duration_s"] = value / 1000.0
            elif metric == "Throughput(ops/sec)":
                row["rate_ops_s"] = value
            continue
        if section.startswith(("TOTAL_GC", "TOTAL_GCS")) or section in ("CLEANUP-FAILED",):
            continue
        op, kind = _op_name(section)
        row = rows.setdefault(section, {"op": op, "latency_type": kind})
        if metric == "Operations":
            row["count"] = int(value)
        elif m := _LATENCY.match(metric):
            col = {"Average": "latency_mean_ms", "Min": "latency_min_ms", "Max": "latency_max_ms"}[m.group("kind")]
            row[col] = _ms(value, m.group("unit"))
        elif m := _PERCENTILE.match(metric):
            p = m.group("p")
            row[_PCT_COLUMN.get(p, f"latency_p{p.replace('.', '')}_ms")] = _ms(value, m.group("unit"))
        elif metric.startswith("Return="):
            code = metric[len("Return="):]
            row.setdefault("errors", 0)
            if code not in _OK_RETURNS:
                row["errors"] += int(value)
    out = [rows.pop("OVERALL")] if "OVERALL" in rows else []
    out.extend(r for r in rows.values() if "count" in r)
    return out


FORMAT = Format(name="ycsb", description="YCSB client output", sniff=sniff, parse=parse)
