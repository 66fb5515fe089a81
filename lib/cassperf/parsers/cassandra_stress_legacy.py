"""cassandra-stress 2.0 (the pre-2.1 `stress` tool) stdout -> Runs (format "cassandra-stress-2.0").

What 2.0 printed (org.apache.cassandra.stress.StressAction and StressStatistics of the 2.0 tree;
the 2.1 rewrite replaced both):

    Created keyspaces. Sleeping 1s for propagation.
    total,interval_op_rate,interval_key_rate,latency,95th,99.9th,elapsed_time
    22479,2247,2247,20.2,50.6,329.4,10
    ...


    Averages from the middle 80% of values:
    interval_op_rate          : 990
    interval_key_rate         : 990
    latency median            : 40.7
    latency 95th percentile   : 122.5
    latency 99.9th percentile : 541.7
    Total operation time      : 00:01:49
    END

Every `--progress-interval` seconds (default 10) one row, `String.format("%d,%d,%d,%.1f,%.1f,%.1f,%d")`:

total               cumulative operations since the start (-> count; manifest count_is_total=True)
interval_op_rate    (ops in the interval) / interval seconds, integer division (-> rate_ops_s)
interval_key_rate   keys (partition keys, rows in the Thrift sense) / interval s (-> partition_rate_s)
latency             the MEDIAN, not the mean: `latency.getMedian()` (-> latency_p50_ms). The 2.0
                    documentation calls it "average latency"; the code prints the median.
95th, 99.9th        `get95thPercentile()`, `get999thPercentile()` (-> latency_p95_ms, latency_p999_ms)
elapsed_time        whole seconds since the start, truncated (TimeUnit.NANOSECONDS.toSeconds) (-> time_s)

Units and window of the latencies: milliseconds. Each operation is timed by a yammer Metrics 2.x
Timer, `Metrics.newTimer(Session.class, "latency")`, whose default duration unit is milliseconds;
its snapshot holds an exponentially decaying sample (SampleType.BIASED: 1028 values, weighted to
the last ~5 minutes) of the whole run so far, so a row's percentiles are NOT the interval's alone
(manifest latency_window). The timer spans the operation's retries: service time with retries
(latency_type "service").

The op type is not printed. It is the `-o/--operation` of the command line echoed before the run's
header (`cassandra-stress
-d node1 -n 200000`: no -o, so Session's default INSERT), lower case: insert, read, range_slice,
indexed_range_slice, multi_get, counter_add, counter_get. Without a command line it is "unknown",
with one warning.

Summary: the "Averages from the middle 80% of values" block (StressStatistics.printStats),
printed when statistics are on. It averages the rows whose cumulative total lies strictly between
10% and 90% of the run's key count (-n): rate_ops_s, partition_rate_s as integer means, and the
latency figures as means of the rows' percentiles (a mean of percentiles, not a percentile;
manifest summary_basis says so). Apache's StressStatistics passes the key rate for both rates
(`tallyAverages(total, intervalKeyRate, intervalKeyRate, ...)`), so the printed interval_op_rate
average is the key-rate average; for insert and read (one key per op) they are equal. count is
the last row's total; duration_s the `Total operation time`.

Cross-checks (a warning each when they fail, never a fix): the last row's elapsed_time equals
`Total operation time`; the printed rate averages equal the integer mean of the middle rows' key
rates (when the key count is known: -n, else the last total of a run that reached END); the
latency averages are within 0.1 ms of the mean of the middle rows' printed (one-decimal) values.

Sources read for the above (public code, read not copied): apache/cassandra
tools/stress/src/org/apache/cassandra/stress/StressStatistics.java @ a8a2ffb976f124e55576bac37cfb73e3bea92b4d
(the averages block, its 10%-90% rule, `latency.getMedian()`, the key-rate-for-both call);
datastax/cassandra tools/stress/src/org/apache/cassandra/stress/Session.java @ 67dea1bfdf967a7608266cbb69c1101b85425b85
(`Metrics.newTimer(Session.class, "latency")`, the defaults above); the 2.0-era StressAction.java
as kept in forks of apache/cassandra (the row format string and `latency.getMedian()`; apache's own
2.0 StressAction was not reachable here: its repository snapshot is over the fetch limit);
yammer metrics-core 2.x Timer (`new Histogram(SampleType.BIASED)`, milliseconds by default); the
DataStax 2.0 page "Interpreting the output of cassandra-stress" (docs.datastax.com/en/cassandra/2.0/
cassandra/tools/toolsCStressOutput_c.html), whose "average latency" the code contradicts.

Line rules: the header starts a run; rows of 7 numbers (a decimal-comma locale's 10 fields too);
`Created keyspaces...`, `Keyspace ... already exists`-style chatter and blank lines are skipped;
`Operation [N] retried ...` lines (consumer errors, printed among the rows) are counted per run
(manifest client_errors) with one warning; `END` ends a run, `FAILURE` ends it incomplete. Any
other line inside a run is skipped, counted and warned about with its line number; outside a run
only counted. A run without END is incomplete (truncated); its rows are kept.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from cassperf.errors import ParseError
from cassperf.parsers.base import Format, ParseResult, check_text

FORMAT_NAME = "cassandra-stress-2.0"
_MAX_LINE_WARNINGS = 100

HEADER = "total,interval_op_rate,interval_key_rate,latency,95th,99.9th,elapsed_time"
#: printed column -> (interval column, unit/meaning); the order is the header's
COLUMNS: dict[str, str] = {
    "total": "count",
    "interval_op_rate": "rate_ops_s",
    "interval_key_rate": "partition_rate_s",
    "latency": "latency_p50_ms",
    "95th": "latency_p95_ms",
    "99.9th": "latency_p999_ms",
    "elapsed_time": "time_s",
}

# total,interval_op_rate,interval_key_rate,latency,95th,99.9th,elapsed_time
HEADER_RE = re.compile(r"^\s*total,interval_op_rate,interval_key_rate,\S*\s*$")
# 22479,2247,2247,20.2,50.6,329.4,10   |   22479,2247,2247,20,2,50,6,329,4,10   (decimal-comma locale)
_DEC = r"(-?\d+[.,]\d|NaN|-?Infinity)"
ROW_RE = re.compile(rf"^\s*(\d+),(-?\d+),(-?\d+),{_DEC},{_DEC},{_DEC},(\d+)\s*$")
# 2800,280,28   (starts like a row: a number, a comma, a number)
ROW_LIKE_RE = re.compile(r"^\s*-?\d+\s*,\s*-?\d")
# Averages from the middle 80% of values:
AVERAGES_MARKER = "Averages from the middle 80% of values:"
# interval_op_rate          : 990   |   latency median            : 40.7   |   Total operation time      : 00:01:49
AVERAGE_LINE_RE = re.compile(r"^\s*(interval_op_rate|interval_key_rate|latency median|latency 95th percentile"
                             r"|latency 99\.9th percentile|Total operation time)\s*:\s*(.*?)\s*$")
AVERAGE_KEYS = {"interval_op_rate": "rate_ops_s", "interval_key_rate": "partition_rate_s",
                "latency median": "latency_p50_ms", "latency 95th percentile": "latency_p95_ms",
                "latency 99.9th percentile": "latency_p999_ms", "Total operation time": "duration_s"}
# 00:01:49   (DurationFormatUtils 'HH:mm:ss')
DURATION_RE = re.compile(r"^(\d+):([0-5]\d):([0-5]\d)$")
# Created keyspaces. Sleeping 1s for propagation.   |   Keyspace 'Keyspace1' already exists.   |   Unable to create stress keyspace: ...
CHATTER_RE = re.compile(r"^(?:Created keyspaces\. Sleeping \d+s for propagation\.|Keyspace .* already exists\.?"
                        r"|Unable to create stress keyspace: .*)\s*$")
# Operation [12] retried 10 times - error inserting key 0012 ((TimedOutException))
OPERATION_ERROR_RE = re.compile(r"^Operation \[\d+\] retried \d+ times")
# vagrant ssh agent1 -c 'cassandra-stress -d agent2,agent3,agent1 -n 100000'   |   $ cassandra-stress -d node1 -n 200000
COMMAND_RE = re.compile(r"(?:^|[\s/'\"$>])cassandra-stress(?:\.bat|\.sh)?((?:\s+-{1,2}[A-Za-z][\w-]*(?:[ =][^\s'\"]+)?)*)"
                        r"\s*['\"]?\s*$")

#: 2.0 Session defaults (tools/stress/.../Session.java): INSERT, 50 threads, 1,000,000 keys, 10 s
DEFAULT_OPERATION = "insert"
DEFAULT_THREADS = 50
DEFAULT_NUM_KEYS = 1_000_000
DEFAULT_INTERVAL_S = 10
_OPTIONS = {"-o": "operation", "--operation": "operation", "-t": "threads", "--threads": "threads",
            "-n": "num_keys", "--num-keys": "num_keys", "-i": "interval", "--progress-interval": "interval",
            "-d": "nodes", "--nodes": "nodes"}
_OPERATIONS = ("insert", "read", "range_slice", "indexed_range_slice", "multi_get", "counter_add", "counter_get")

SUMMARY_BASIS = ("the tool's 'Averages from the middle 80% of values': means over the interval rows whose "
                 "cumulative total lay strictly between 10% and 90% of the key count (-n); latency figures are "
                 "means of those rows' percentiles, not percentiles of the run; the op-rate average is the "
                 "key-rate average (StressStatistics passes the key rate for both)")
LATENCY_WINDOW = ("run so far: each row's percentiles come from one yammer Metrics Timer over the whole run "
                  "(exponentially decaying sample, biased to the last ~5 minutes), not from the interval alone")


@dataclass
class _Run:
    """What the scan collected for one run (one header)."""

    index: int
    header_line: int
    rows: list[tuple[int, tuple[float, ...]]] = field(default_factory=list)   # (line_no, 7 values)
    averages: dict[str, float] = field(default_factory=dict)
    averages_line: int | None = None
    duration_line: int | None = None
    ended: bool = False
    failed: bool = False
    skipped: int = 0
    client_errors: int = 0
    first_error: tuple[int, str] | None = None
    last_line: int = 0
    command: str | None = None                 # the command line echoed before this run's header
    command_line: int | None = None
    options: dict[str, str] = field(default_factory=dict)


def _number(token: str) -> float:
    return float(token.replace(",", "."))


def _command(line: str) -> tuple[str, dict[str, str]] | None:
    """(arguments, {option: value}) of an echoed 2.0 command line, or None."""
    m = COMMAND_RE.search(line.rstrip())
    if not m:
        return None
    args = m.group(1).strip()
    try:
        tokens = shlex.split(args)
    except ValueError:
        tokens = args.split()
    options: dict[str, str] = {}
    for i, token in enumerate(tokens):
        name, eq, value = token.partition("=")
        if name in _OPTIONS and (eq or i + 1 < len(tokens)):
            options[_OPTIONS[name]] = value if eq else tokens[i + 1]
    return args, options


def _duration_s(value: str) -> float | None:
    m = DURATION_RE.match(value)
    return None if m is None else float(int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3)))


def _int_option(options: dict[str, str], key: str, default: int, result: ParseResult, line_no: int,
                line: str) -> int:
    raw = options.get(key)
    if raw is None:
        return default
    if raw.isdigit():
        return int(raw)
    result.warn(line_no, line, f"a whole number after the {key} option; used the default {default}")
    return default


@dataclass
class _Scan:
    text: str
    result: ParseResult
    runs: list[_Run] = field(default_factory=list)
    command: str | None = None
    command_line: int | None = None
    options: dict[str, str] = field(default_factory=dict)
    in_averages: bool = False
    line_warnings: int = 0

    def unknown(self, line_no: int, line: str, expected: str) -> None:
        self.result.skipped_lines += 1
        run = self.runs[-1] if self.runs else None
        if run is None or run.ended:
            return
        run.skipped += 1
        self.line_warnings += 1
        if self.line_warnings <= _MAX_LINE_WARNINGS:
            self.result.warn(line_no, line, expected)


def _scan(text: str, result: ParseResult) -> _Scan:
    scan = _Scan(text=text, result=result)
    for line_no, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        run = scan.runs[-1] if scan.runs else None
        if not stripped:
            continue
        if HEADER_RE.match(line):
            if stripped != HEADER:
                raise ParseError(result.source, line_no, line,
                                 f"the cassandra-stress 2.0 header {HEADER!r} (this parser reads 2.0's columns; "
                                 "other pre-2.1 layouts are not supported: convert the file or drop the run)")
            scan.runs.append(_Run(index=len(scan.runs) + 1, header_line=line_no, last_line=line_no,
                                  command=scan.command, command_line=scan.command_line, options=scan.options))
            scan.command, scan.command_line, scan.options = None, None, {}      # one command per run
            scan.in_averages = False
            continue
        if run is not None and not run.ended:
            run.last_line = line_no
        m = ROW_RE.match(line)
        if m and run is not None and not run.ended and not scan.in_averages:
            run.rows.append((line_no, tuple(_number(g) for g in m.groups())))
            continue
        if stripped == AVERAGES_MARKER and run is not None and not run.ended:
            scan.in_averages, run.averages_line = True, line_no
            continue
        m = AVERAGE_LINE_RE.match(line)
        if m and run is not None and not run.ended:
            key, value = m.group(1), m.group(2)
            if key == "Total operation time":
                seconds = _duration_s(value)
                run.duration_line = line_no
                if seconds is None:
                    result.warn(line_no, line, "Total operation time as HH:mm:ss; the duration is left empty")
                else:
                    run.averages["duration_s"] = seconds
                scan.in_averages = False
            elif not scan.in_averages:
                scan.unknown(line_no, line, f"{key} only inside the '{AVERAGES_MARKER}' block")
            else:
                try:
                    run.averages[AVERAGE_KEYS[key]] = _number(value)
                except ValueError:
                    result.warn(line_no, line, f"{key} as a number; the figure is left empty")
            continue
        if stripped in ("END", "FAILURE") and run is not None and not run.ended:
            run.ended, run.failed = True, stripped == "FAILURE"
            scan.in_averages = False
            if run.failed:
                result.warn(line_no, line, "END: the tool reported FAILURE for this run (a consumer thread failed)")
            continue
        if OPERATION_ERROR_RE.match(stripped):
            result.skipped_lines += 1
            if run is not None and not run.ended:
                run.skipped += 1
                run.client_errors += 1
                run.first_error = run.first_error or (line_no, line)
            continue
        if CHATTER_RE.match(stripped):
            continue
        cmd = _command(stripped) if "cassandra-stress" in stripped else None
        if cmd is not None:
            scan.command, scan.options = cmd
            scan.command_line = line_no
            continue
        if ROW_LIKE_RE.match(line) and run is not None and not run.ended:
            run.skipped += 1
            result.skipped_lines += 1
            result.warn(line_no, line, "an interval row of 7 numbers (total,interval_op_rate,interval_key_rate,"
                                       "latency,95th,99.9th,elapsed_time); the row was skipped")
            continue
        scan.unknown(line_no, line, "a cassandra-stress 2.0 line (interval row, averages, END) or known chatter")
    return scan


def _middle(run: _Run, num_keys: int | None) -> list[tuple[float, ...]]:
    if not num_keys:
        return []
    return [v for _, v in run.rows if 0.10 * num_keys < v[0] < 0.90 * num_keys]


def _check(run: _Run, result: ParseResult, warn: Any, num_keys: int | None) -> None:
    avg = run.averages
    if "duration_s" in avg and run.rows:
        last_time = run.rows[-1][1][6]
        if last_time != avg["duration_s"]:
            warn(run.duration_line, None, f"Total operation time ({avg['duration_s']:g} s) to equal the last row's "
                                          f"elapsed_time ({last_time:g} s)")
    middle = _middle(run, num_keys)
    if not middle or run.averages_line is None:
        return
    key_mean = sum(int(v[2]) for v in middle) // len(middle)     # Java int division of int rates
    for col, name in (("rate_ops_s", "interval_op_rate"), ("partition_rate_s", "interval_key_rate")):
        if col in avg and avg[col] != key_mean:
            warn(run.averages_line, None, f"the {name} average ({avg[col]:g}) to equal the integer mean of the "
                                          f"interval_key_rate of the {len(middle)} rows in the middle 80% ({key_mean})")
    for col, idx, name in (("latency_p50_ms", 3, "latency median"), ("latency_p95_ms", 4, "latency 95th percentile"),
                           ("latency_p999_ms", 5, "latency 99.9th percentile")):
        mean = sum(v[idx] for v in middle) / len(middle)
        if col in avg and not math.isnan(avg[col]) and abs(avg[col] - mean) > 0.1 + 1e-9:
            warn(run.averages_line, None, f"the {name} average ({avg[col]:g}) within 0.1 ms of the mean of the "
                                          f"{len(middle)} middle rows' printed values ({mean:.2f})")


def _build(run: _Run, scan: _Scan) -> Any:
    from cassperf.results.model import Run

    result = scan.result
    texts: list[str] = []

    def warn(line_no: int | None, line: str | None, expected: str) -> None:
        result.warn(line_no, line, expected)
        texts.append(str(result.warnings[-1]))

    options = run.options
    if run.command is not None:
        raw_op = options.get("operation", DEFAULT_OPERATION).lower()
        op = raw_op
        if raw_op not in _OPERATIONS:
            warn(run.command_line, None, f"an -o/--operation of {', '.join(o.upper() for o in _OPERATIONS)}; "
                                          f"kept {raw_op!r} as the op name")
        threads = _int_option(options, "threads", DEFAULT_THREADS, result, run.command_line or 0, run.command)
        num_keys: int | None = _int_option(options, "num_keys", DEFAULT_NUM_KEYS, result, run.command_line or 0,
                                           run.command)
    else:
        op, threads, num_keys = "unknown", None, None
        warn(run.header_line, None, "an echoed cassandra-stress command line (its -o/--operation names the op "
                                    "type; 2.0 does not print it); the op is 'unknown'")
        if run.ended and not run.failed and run.rows:
            num_keys = int(run.rows[-1][1][0])        # a run that reached END did all -n keys
    frame: dict[str, list[Any]] = {"time_s": [], "op": [], **{c: [] for c in COLUMNS.values() if c != "time_s"}}
    for _, values in run.rows:
        frame["time_s"].append(values[6])
        frame["op"].append(op)
        for col, value in zip(("count", "rate_ops_s", "partition_rate_s", "latency_p50_ms", "latency_p95_ms",
                               "latency_p999_ms"), values[:6]):
            frame[col].append(value)
    intervals = pd.DataFrame(frame)
    intervals["count"] = intervals["count"].astype("Int64")
    complete = run.ended and not run.failed
    if not run.ended:
        warn(run.last_line, None, "END after the interval rows; the run's output ends here (truncated), "
                                  "its intervals are kept")
    if not run.rows:
        complete = False
        warn(run.header_line, None, "interval rows after the header; the run has none")
    summary = None
    if run.averages:
        row: dict[str, Any] = {"op": op, **run.averages}
        row["count"] = int(run.rows[-1][1][0]) if run.rows else None
        summary = pd.DataFrame([row])
        if run.averages_line is not None and not all(
                c in run.averages for c in ("rate_ops_s", "partition_rate_s", "latency_p50_ms", "latency_p95_ms",
                                            "latency_p999_ms")):
            complete = False
            warn(run.averages_line, None, "all five averages (interval_op_rate, interval_key_rate, latency median, "
                                          "95th, 99.9th percentile) in the averages block")
    _check(run, result, warn, num_keys)
    if run.client_errors and run.first_error is not None:
        line_no, line = run.first_error
        warn(line_no, line, f"interval rows only; {run.client_errors} operation error line(s) were printed during "
                            f"run {run.index} (skipped; counted in manifest client_errors)")
    manifest: dict[str, Any] = {
        "tool": "cassandra-stress",
        "tool_version": "2.0",
        "format_generation": "2.0",
        "command": run.command,
        "command_source": "echo" if run.command is not None else None,
        "threads": threads,
        "num_keys": num_keys,
        "latency_type": "service",
        "latency_window": LATENCY_WINDOW,
        "summary_basis": SUMMARY_BASIS if run.averages_line is not None else None,
        "labels": {"threads": str(threads)} if threads is not None else {},
        "source": result.source,
        "complete": complete,
        "count_is_total": True,
        "run_index": run.index,
        "ops": [op],
        "client_errors": run.client_errors,
        "skipped_lines": run.skipped,
    }
    return Run(manifest=manifest, intervals=intervals, summary=summary, warnings=texts)


def parse_stress20_log(text: str, source: str = "<text>") -> ParseResult:
    """Parse cassandra-stress 2.0 stdout into Runs; see the module docstring."""
    check_text(text, source, "cassandra-stress 2.0 output")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    result = ParseResult(format=FORMAT_NAME, source=source)
    scan = _scan(text, result)
    if not scan.runs:
        first_no, first = next(((i + 1, ln) for i, ln in enumerate(text.split("\n", 200)[:200]) if ln.strip()),
                               (None, None))
        raise ParseError(source, first_no, first, f"cassandra-stress 2.0 output: the header line {HEADER!r}")
    for run in scan.runs:
        result.runs.append(_build(run, scan))
    if scan.line_warnings > _MAX_LINE_WARNINGS:
        result.warn(None, None, f"{scan.line_warnings - _MAX_LINE_WARNINGS} more unknown lines (not listed)")
    result.complete = all(r.complete for r in result.runs)
    return result


# The 2.0 header or the averages marker at the start of a line.
_SNIFF_RE = re.compile(r"^\s*total,interval_op_rate,interval_key_rate,|^Averages from the middle 80% of values:",
                       re.MULTILINE)


def sniff(head: str) -> bool:
    return _SNIFF_RE.search(head) is not None


FORMAT = Format(name=FORMAT_NAME, description="cassandra-stress 2.0 stdout: CSV interval rows "
                                              "(total,interval_op_rate,...) and the middle-80% averages",
                sniff=sniff, parse=parse_stress20_log)

__all__ = ["FORMAT", "HEADER", "parse_stress20_log", "sniff"]
