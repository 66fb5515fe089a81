"""cassandra-stress stdout -> Runs (format "cassandra-stress").

One Run per stress iteration: per thread count of an auto-rate ramp (`Running with 4 threadCount`),
per Results block of a paste of several runs. Each Run gets:

intervals  every interval row as printed (per-op rows of mixed/user runs and the `total` row),
           latency in ms as the tool prints it. `count` is the tool's cumulative `total ops`
           (manifest count_is_total=True). Per-op rows take the time of their interval's
           `total` row, so rows of one interval share time_s. Extra columns: rate_stderr_ratio,
           gc_sdv_ms, gc_mb.
summary    the Results block: one row per op type named in its brackets
           (`[insert: 9,645 op/s]`) plus op="total". count is the cumulative op count the tool
           printed for the run (the auto-rate summary table, else the last interval row);
           duration_s is `Total operation time`; GC figures are extra columns of the total row.

The closing auto-rate table (`4 threadCount, insert, ...`) becomes tables["thread_summary"].

Early 2.1 (2.1.0 to about 2.1.6; see cassandra_stress_rows): interval rows without an op-type
column become op "total" rows (manifest format_generation "2.1-early", extra column
adj_row_rate_s); such rows arriving without their header get the header their field count implies
(18: the 2.1.x releases', 12: the betas'), with a warning; the auto-rate table's `4 threads` ids
are read like `4 threadCount`; Results blocks without per-op brackets need no `Total partitions` /
`Total errors` lines to be complete (early 2.1 did not print them). An output that holds only the
auto-rate table (its runs cut or elided) gives that table, no runs, complete=False.
cassandra-stress 2.0's CSV output is another format: cassandra_stress_legacy ("cassandra-stress-2.0").

Line rules (documented, counted): the settings dump, the user-mode profile dump (its structural
rule is in cassandra_stress_settings; kept in manifest settings 'Profile'), `Insert Statement:`
with the statement after it (settings 'Insert Statement'), the tool's own chatter (`Sleeping
2s...`, `Connected to cluster: ...`) and blank lines are recognised. `Failed to connect over JMX;
not collecting these stats` marks the GC figures of the run it belongs to as not collected (NaN,
one warning; see cassandra_stress_runs): the run in progress (announced by `Running ...`, no
Results yet), else the next run to start (warm-up messages come before `Running`); one after the
last run changes nothing and is warned about. Driver log lines
(`WARN  15:43:31,966 ...`), JDK `WARNING:` lines and exception lines (`com.datastax...
NoHostAvailableException: ...`) are skipped and counted in skipped_lines; exception lines are
also counted per run by class (manifest client_exceptions) with one warning per class and run.
Any other line is skipped, counted and, between the start of the stress output and END, warned
about (shell lines before the output and after END are only counted).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from cassperf.errors import ParseError
from cassperf.parsers.base import Format, ParseResult, check_text
from cassperf.parsers.cassandra_stress_rows import (DEFAULT_COLUMNS, EARLY_21_COLUMNS, ROW_LIKE_RE, Header, Rows,
                                                    early_header_for, make_header, parse_header, parse_rows,
                                                    parse_thread_header, parse_thread_rows)
from cassperf.parsers.cassandra_stress_runs import RunText, build_run, gc_not_collected
from cassperf.parsers.cassandra_stress_settings import (INSERT_STATEMENT_MARKER, PROFILE_MARKERS, SECTION_RE, SECTIONS,
                                                        SETTINGS_MARKER, command_from_echo, parse_profile,
                                                        parse_settings, profile_line_kind)
from cassperf.parsers.cassandra_stress_summary import RESULT_KEYS, RESULT_LINE_RE, parse_results

FORMAT_NAME = "cassandra-stress"
_MAX_LINE_WARNINGS = 100

# Running with 4 threadCount
RUNNING_STEP_RE = re.compile(r"^Running with (\d+) threadCount\s*$")
# Running [insert, simple1] with 4 threads for 100000 iteration   |   Running WRITE with 10 threads for 10000 iteration
RUNNING_RE = re.compile(r"^Running (\[[^\]]*\]|\S+) with (\d+) threads?\b\s*(.*)$")
# Improvement over 36 threadCount: -35%
IMPROVEMENT_RE = re.compile(r"^Improvement over (\d+) threadCount: (-?\d+)%\s*$")
# Connected to cluster: Test Cluster, max pending requests per connection 128, max connections per host 8
CONNECTED_RE = re.compile(r"^Connected to cluster: (.*?)(?:, max pending requests per connection.*)?\s*$")
# Datatacenter: datacenter1; Host: localhost/127.0.0.1; Rack: rack1     (sic, 2.1-3.x)
HOST_RE = re.compile(r"^Data(?:ta)?center: (.*?); Host: (.*?); Rack: (.*?)\s*$")
# openjdk version "13.0.2" 2020-01-14
JAVA_VERSION_RE = re.compile(r'^(?:openjdk|java) version "([^"]+)"')
# Sleeping 2s...   |   Created keyspaces. Sleeping 1s for propagation.   |   Warming up WRITE with 50000 iterations...
CHATTER_RE = re.compile(
    r"^(?:Created (?:keyspaces|schema|extra schema)\. Sleeping \d+s for propagation\."
    r"|Sleeping (?:for )?\d+s(?:\.\.\.)?|Warming up .* with \d+ iterations\.\.\.|Thread count was not specified"
    r"|Generating batches with .*|WARNING: uncertainty mode .*|N=0: SCHEMA CREATED, NOTHING ELSE DONE\."
    r"|Failed to connect over JMX; not collecting these stats"
    r"|(?:OpenJDK|Java\(TM\)|Java HotSpot\(TM\)) .*(?:Runtime Environment|VM) .*)\s*$")
# Failed to connect over JMX; not collecting these stats     (StressMetrics, on stderr; gc figures then print 0)
JMX_FAILED_MESSAGE = "Failed to connect over JMX; not collecting these stats"
# Generating batches with [1..1] partitions and [1..1] rows (of [1..1] total rows in the partitions)
GENERATING_RE = re.compile(r"^Generating batches with .*$")
# WARN  15:43:31,966 Query ...   |   INFO  21:41:38 New Cassandra host ...   |   ERROR 09:38:00,839 [Control connection] ...
DRIVER_LOG_RE = re.compile(r"^(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\s+\[?\d{1,2}:\d{2}:\d{2}")
# WARNING: An illegal reflective access operation has occurred
JDK_WARNING_RE = re.compile(r"^WARNING: ")
# com.datastax.driver.core.exceptions.NoHostAvailableException: All host(s) tried for query failed (...)
EXCEPTION_RE = re.compile(r"^\s*(?:Caused by:\s*|Exception in thread \"[^\"]*\"\s*)?"
                          r"((?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error))\b")
#         at com.datastax.driver.core.RequestHandler.reportNoMoreHosts(RequestHandler.java:211)
STACK_FRAME_RE = re.compile(r"^\s+(?:at |\.\.\. \d+ more)")

# The newline before a blank line: where a block of interval rows ends (one regex search is one
# pass over the rows), e.g. the '\n\n' between
# total,        100000,   11688,   11688,   11688,     0.3, ...      and      Results:
BLOCK_END_RE = re.compile(r"\n[ \t]*\n")
# Lines that end a block even without a blank line before them (a log cut and restarted):
# Results:   |   Running with 8 threadCount   |   END   |   ******************** Stress Settings ...
# or a different header. Found among the lines the bulk read set aside, so looking for them
# costs nothing while there are none.
TERMINATOR_RE = re.compile(r"^(?:Results:|Running |END\b|FAILURE\b|\*{5}|[ \t]*(?:id,[ \t]*)?type,?[ \t]+total ops"
                           r"|[ \t]*(?:id,[ \t]*)?(?:total ops|ops)[ \t]*,[ \t]*(?:adj row/s|op/s)[ \t]*,)")

# 514369    ,     60109,   57871,   57871,   57871,     0.3, ...   (early 2.1: a row with no op name, the
# count left-justified in 10 characters; 12 or 18 fields, more in a decimal-comma locale)
EARLY_ROW_RE = re.compile(r"^[ \t]*\d+[ \t]*,(?:[ \t]*(?:-?\d+(?:\.\d+)?|NaN|-?Infinity)[ \t]*,){10}")


@dataclass
class _Scan:
    """State of one pass over the text."""

    text: str
    result: ParseResult
    runs: list[RunText] = field(default_factory=list)
    settings_lines: list[str] = field(default_factory=list)
    settings_cut: bool = False
    profile_lines: list[str] = field(default_factory=list)
    in_cql: bool = False               # inside a profile's *** fence
    profile_continues: bool = False    # the last profile line was an entry, an item or a continuation
    insert_statements: list[str] = field(default_factory=list)
    jmx_pending: list[tuple[int, str]] = field(default_factory=list)   # JMX messages before their run
    command: str | None = None
    cluster_name: str | None = None
    hosts: list[dict[str, str]] = field(default_factory=list)
    java_version: str | None = None
    thread_rows: Rows | None = None
    thread_header: Header | None = None
    started: bool = False
    ended: bool = False
    line_warnings: int = 0
    data: bytes | None = None          # text.encode() when text is ASCII (same offsets), for bulk reads
    next_blank: int = -2               # position of the next blank line's newline (cache)

    def current(self, line_no: int) -> RunText:
        if not self.runs:
            self.runs.append(RunText(index=1, first_line=line_no))
        return self.runs[-1]

    def new_run(self, line_no: int) -> RunText:
        run = RunText(index=len(self.runs) + 1, first_line=line_no)
        self.runs.append(run)
        return run

    def claim_jmx(self, run: RunText) -> RunText:
        """A run that starts takes the JMX failure messages printed since the last run (warm-up)."""
        if self.jmx_pending:
            run.jmx_failed.extend(self.jmx_pending)
            self.jmx_pending.clear()
        return run

    def jmx_failed(self, line_no: int, line: str) -> None:
        """The message belongs to the run in progress (announced, no Results yet), else to the next."""
        run = self.runs[-1] if self.runs else None
        if run is not None and run.results is None and (run.running_line is not None or run.auto_step
                                                         or run.has_data):
            run.jmx_failed.append((line_no, line))
        else:
            self.jmx_pending.append((line_no, line))

    def unknown(self, line_no: int, line: str, expected: str) -> None:
        self.result.skipped_lines += 1
        if self.runs:
            self.runs[-1].skipped += 1
        if not self.started or self.ended:
            return
        self.line_warnings += 1
        if self.line_warnings <= _MAX_LINE_WARNINGS:
            self.result.warn(line_no, line, expected)

    def rows(self, run: RunText, header: Header, start: int, start_no: int) -> tuple[int, int]:
        """Parse the rows starting at `start` into `run`; (next position, next line number)."""
        if self.next_blank < start - 1:          # cached: many blocks may end before one blank line
            m = BLOCK_END_RE.search(self.text, max(0, start - 1))
            self.next_blank = len(self.text) if m is None else m.start()
        end = max(start - 1, self.next_blank)
        if end == len(self.text) and self.text.endswith("\n"):
            end -= 1
        rows = parse_rows(self.text, start, end, start_no, header, self.data, run.header_text)
        cut = min((no for no, line in rows.other + rows.malformed if no > start_no and TERMINATOR_RE.match(line)),
                  default=None)
        if cut is not None:
            end = start - 1
            for _ in range(cut - start_no):
                end = self.text.index("\n", end + 1)
            rows = parse_rows(self.text, start, end, start_no, header, self.data, run.header_text)
        _take_rows(self, run, rows)
        return end + 1, start_no + rows.n_lines


def _noise(scan: _Scan, line_no: int, line: str) -> bool:
    """Driver log, JDK warning, exception and stack lines: skipped and counted. True if it was one."""
    m = EXCEPTION_RE.match(line)
    if m:
        scan.result.skipped_lines += 1
        if scan.runs:
            run = scan.runs[-1]
            run.skipped += 1
            run.exceptions[m.group(1)] += 1
            run.first_exception.setdefault(m.group(1), (line_no, line))
        return True
    if DRIVER_LOG_RE.match(line) or JDK_WARNING_RE.match(line) or STACK_FRAME_RE.match(line):
        scan.result.skipped_lines += 1
        if scan.runs:
            scan.runs[-1].skipped += 1
        return True
    return False


def _take_rows(scan: _Scan, run: RunText, rows: Rows) -> None:
    run.blocks.append(rows)
    for line_no, line in rows.other:
        if line.strip() == JMX_FAILED_MESSAGE:       # stderr merged into the rows
            run.jmx_failed.append((line_no, line))
        elif not _noise(scan, line_no, line):
            scan.unknown(line_no, line, "an interval row or a known driver/JDK log line")
    for line_no, line in rows.malformed:
        scan.result.skipped_lines += 1
        run.skipped += 1
        scan.result.warn(line_no, line, f"an interval row with {len(run.header.columns) if run.header else 18} "
                                        "numeric fields; the row was skipped")


def _scan(text: str, result: ParseResult) -> _Scan:
    scan = _Scan(text=text, result=result, data=text.encode("ascii") if text.isascii() else None)
    pos, line_no, n = 0, 1, len(text)
    state = "top"
    while pos < n:
        eol = text.find("\n", pos)
        if eol < 0:
            eol = n
        line = text[pos:eol]
        stripped = line.strip()
        nxt, nxt_no = eol + 1, line_no + 1
        if state == "settings":
            if stripped in PROFILE_MARKERS:
                state = "profile"
            elif not stripped:
                state = "top"
            else:
                scan.settings_lines.append(line)
            pos, line_no = nxt, nxt_no
            continue
        if state == "profile":
            if _in_profile(scan, line_no, line, stripped):
                pos, line_no = nxt, nxt_no
                continue
            state = "top"
        if state == "insert_statement":
            state = "top"
            if stripped and line[:1].isspace():
                scan.insert_statements.append(stripped)
                pos, line_no = nxt, nxt_no
                continue
            result.warn(line_no - 1, INSERT_STATEMENT_MARKER, "the statement, indented, on the line after it")
        if not stripped:
            pos, line_no = nxt, nxt_no
            continue
        if stripped == SETTINGS_MARKER or stripped in PROFILE_MARKERS:
            state = "settings" if stripped == SETTINGS_MARKER else "profile"
            scan.started, scan.ended = True, False
            scan.in_cql = scan.profile_continues = False
            pos, line_no = nxt, nxt_no
            continue
        header = parse_header(line) if "ops" in line else None
        if header is not None:
            scan.started, scan.ended = True, False
            run = scan.current(line_no)
            if run.results is not None or (run.header is not None and run.header != header):
                run = scan.new_run(line_no)    # the same header again within a run: header-frequency
            scan.claim_jmx(run)
            run.header, run.header_line, run.header_text = header, line_no, line
            pos, line_no = scan.rows(run, header, nxt, nxt_no) if nxt < n else (n, nxt_no)
            continue
        thread_header = parse_thread_header(line) if "total ops" in line else None
        if thread_header is not None:
            pos, line_no = _scan_thread_table(scan, thread_header, nxt, nxt_no)
            continue
        if stripped == "Results:":
            scan.started, scan.ended = True, False
            pos, line_no = _scan_results(scan, nxt, nxt_no)
            continue
        m = RUNNING_STEP_RE.match(stripped)
        if m:
            scan.started, scan.ended = True, False
            run = scan.current(line_no)
            if run.has_data or run.auto_step:
                run = scan.new_run(line_no)
            scan.claim_jmx(run)
            run.threads, run.auto_step = int(m.group(1)), True
        elif (m := RUNNING_RE.match(stripped)) is not None:
            scan.started, scan.ended = True, False
            run = scan.current(line_no)
            if run.has_data:
                run = scan.new_run(line_no)
            scan.claim_jmx(run)
            run.threads, run.running_line = int(m.group(2)), stripped
            run.ops = [o.strip() for o in m.group(1).strip("[]").split(",") if o.strip()]
        elif (m := IMPROVEMENT_RE.match(stripped)) is not None:
            if scan.runs:
                scan.runs[-1].improvement_pct = int(m.group(2))
        elif stripped in ("END", "FAILURE"):
            if stripped == "FAILURE" and scan.runs:
                scan.runs[-1].failed = True
                result.warn(line_no, line, "END: the tool reported FAILURE for this run")
            scan.ended = True
        elif ROW_LIKE_RE.match(line) and not line.lstrip()[0].isdigit():
            pos, line_no = max((nxt, nxt_no), _scan_headless_rows(scan, pos, line_no))
            continue
        elif EARLY_ROW_RE.match(line) and (early := early_header_for(line)) is not None:
            pos, line_no = max((nxt, nxt_no), _scan_headless_rows(scan, pos, line_no, early))
            continue
        elif (m := CONNECTED_RE.match(stripped)) is not None:
            scan.started = True
            scan.cluster_name = m.group(1)
        elif (m := HOST_RE.match(stripped)) is not None:
            scan.hosts.append({"datacenter": m.group(1), "host": m.group(2), "rack": m.group(3)})
        elif (m := JAVA_VERSION_RE.match(stripped)) is not None:
            scan.java_version = m.group(1)
        elif stripped == JMX_FAILED_MESSAGE:
            scan.started = True
            scan.jmx_failed(line_no, line)
        elif stripped == INSERT_STATEMENT_MARKER and not line[:1].isspace():
            scan.started, state = True, "insert_statement"
        elif CHATTER_RE.match(stripped):
            scan.started = True
        elif (cmd := command_from_echo(stripped)) is not None:
            scan.command = scan.command or cmd
        elif _noise(scan, line_no, line):
            pass
        elif (not scan.started and not scan.settings_lines and SECTION_RE.match(line)
              and SECTION_RE.match(line).group(1) in SECTIONS):
            scan.started, scan.settings_cut, state = True, True, "settings"
            scan.settings_lines.append(line)
            result.warn(line_no, line, f"the settings dump to start with {SETTINGS_MARKER!r}; "
                                       "it is cut at the top, settings before this line are missing")
        else:
            scan.unknown(line_no, line, "a cassandra-stress line (settings, interval header or row, Results, "
                                        "Running ...) or a known driver/JDK log line")
        pos, line_no = nxt, nxt_no
    return scan


def _in_profile(scan: _Scan, line_no: int, line: str, stripped: str) -> bool:
    """Whether a line belongs to the profile dump (the rule: cassandra_stress_settings'
    docstring); a line that does keeps the dump open and goes to scan.profile_lines."""
    if GENERATING_RE.match(stripped):               # printed after each profile: chatter, the dump goes on
        scan.profile_continues = False
        return True
    kind = profile_line_kind(line, scan.in_cql)
    ends = _ends_profile(line, stripped)
    if kind == "cql" and ends:
        scan.result.warn(line_no, line, "a closing '***' after the profile's CQL; the dump is cut here")
        kind = None
    elif kind == "fence":
        scan.in_cql = not scan.in_cql
    elif kind in ("entry", "item") and ends:
        kind = None
    elif kind is None and scan.profile_continues and not ends:
        kind = "more"
    if kind is None:
        scan.in_cql = scan.profile_continues = False
        return False
    scan.profile_lines.append(line)
    scan.profile_continues = kind in ("entry", "item", "more")
    return True


def _ends_profile(line: str, stripped: str) -> bool:
    return (_is_stress_line(line, stripped) or stripped in (INSERT_STATEMENT_MARKER, SETTINGS_MARKER, "END", "FAILURE")
            or stripped in PROFILE_MARKERS or ROW_LIKE_RE.match(line) is not None)


def _is_stress_line(line: str, stripped: str) -> bool:
    """Lines that end a profile dump (known lines cassandra-stress and the driver print)."""
    return bool(CONNECTED_RE.match(stripped) or HOST_RE.match(stripped) or CHATTER_RE.match(stripped)
                or DRIVER_LOG_RE.match(line) or JDK_WARNING_RE.match(line) or EXCEPTION_RE.match(line)
                or RUNNING_RE.match(stripped) or RUNNING_STEP_RE.match(stripped) or stripped == "Results:"
                or ("ops" in line and parse_header(line) is not None))


def _scan_headless_rows(scan: _Scan, pos: int, line_no: int, early: Header | None = None) -> tuple[int, int]:
    """Interval rows with no header before them in this run (a log cut at the top, or rows after a
    blank line in the middle of a run): parsed with the run's header, else the standard one, or,
    for early-2.1 rows (no op name; `early` is the header their field count implies), that one."""
    scan.started = True
    run = scan.current(line_no)
    if run.results is not None:
        run = scan.new_run(line_no)
    scan.claim_jmx(run)
    if run.header is None or (early is not None and run.header.has_type):
        eol = scan.text.find("\n", pos)
        shown = scan.text[pos:eol if eol >= 0 else None]
        if early is None:
            run.header = make_header(DEFAULT_COLUMNS)
            scan.result.warn(line_no, shown, "an interval header before the first row; assumed the standard 3.x/4.x "
                                             "columns (total ops, op/s, pk/s, row/s, mean, med, .95, .99, .999, max, "
                                             "time, stderr, errors, gc...)")
        else:
            if run.header is not None:
                run = scan.new_run(line_no)
            run.header = early
            which = "2.1.x" if early.names == EARLY_21_COLUMNS else "2.1 beta"
            scan.result.warn(line_no, shown, f"an interval header before the first row; assumed the early {which} "
                                             f"columns by the row's field count ({', '.join(early.names)}); op "
                                             "'total'")
    return scan.rows(run, run.header, pos, line_no)


def _scan_results(scan: _Scan, pos: int, line_no: int) -> tuple[int, int]:
    """The `key : value` lines after `Results:`, up to a blank line or a line that is not one."""
    text, n = scan.text, len(scan.text)
    items: list[tuple[int | None, str, str]] = []
    while pos < n:
        eol = text.find("\n", pos)
        eol = n if eol < 0 else eol
        line = text[pos:eol]
        m = RESULT_LINE_RE.match(line)
        if not line.strip() or not m:
            break
        key = " ".join(m.group(1).lower().split())
        if key not in RESULT_KEYS and re.search(r"\d", key):
            break
        items.append((line_no, m.group(1), m.group(2)))
        pos, line_no = eol + 1, line_no + 1
    run = scan.current(line_no)
    if run.results is not None:
        run = scan.new_run(line_no)
    scan.claim_jmx(run)
    run.results = parse_results(items)
    for p_line, p_text, expected in run.results.problems:
        scan.result.warn(p_line, p_text, expected)
    return pos, line_no


def _scan_thread_table(scan: _Scan, header: Header, pos: int, line_no: int) -> tuple[int, int]:
    """The auto-rate summary table that follows the last run."""
    text, n = scan.text, len(scan.text)
    lines: list[str] = []
    first = line_no
    while pos < n:
        eol = text.find("\n", pos)
        eol = n if eol < 0 else eol
        line = text[pos:eol]
        if not line.strip() or not header.row_like.match(line):
            break
        lines.append(line)
        pos, line_no = eol + 1, line_no + 1
    for offset, row in enumerate(lines):     # a thread count past a 64-bit integer is kept as missing
        m = _THREADS_RE.search(row)
        if m and int(m.group(1)) > _INT64_MAX:
            scan.result.warn(first + offset, row, f"a thread count up to {_INT64_MAX} before 'threadCount'")
    rows = parse_thread_rows(lines, first, header)
    for bad_no, bad in rows.malformed + rows.other:
        scan.result.skipped_lines += 1
        scan.result.warn(bad_no, bad, "a row of the auto-rate summary table ('N threadCount, op, total ops, ...')")
    scan.thread_rows, scan.thread_header = rows, header
    return pos, line_no


# 4 threadCount   |   4 threads (early 2.1)
_THREADS_RE = re.compile(r"(\d+)\s*thread(?:Count|s)\b")
_INT64_MAX = 2**63 - 1


def _thread_table(rows: Rows | None) -> pd.DataFrame | None:
    if rows is None or len(rows) == 0:
        return None
    threads = [int(m.group(1)) if (m := _THREADS_RE.search(i)) and int(m.group(1)) <= _INT64_MAX else None
               for i in rows.ids]
    frame: dict[str, Any] = {"threads": pd.array(threads, dtype="Int64"), "op": pd.array(rows.ops.to_pylist(), dtype="string")}
    for col, arr in rows.values.items():
        frame["duration_s" if col == "time_s" else col] = arr
    frame["id"] = pd.array(rows.ids, dtype="string")
    return pd.DataFrame(frame)


def _settings(scan: _Scan) -> dict[str, dict[str, str]] | None:
    """The settings dump, the profile dump(s) and the insert statement(s) as one settings mapping."""
    settings = parse_settings(scan.settings_lines) if scan.settings_lines else {}
    if scan.profile_lines:
        settings.update(parse_profile(scan.profile_lines))
    if scan.insert_statements:
        settings["Insert Statement"] = {("CQL" if i == 1 else f"CQL {i}"): cql
                                        for i, cql in enumerate(scan.insert_statements, 1)}
    return settings or None


def parse_stress_log(text: str, source: str = "<text>") -> ParseResult:
    """Parse cassandra-stress stdout (any generation, 2.1 to 5.0) into Runs; see the module docstring."""
    if not text or text.isspace() or "\x00" in text[:65536]:
        check_text(text, source, "cassandra-stress output")    # raises the shared empty/binary errors
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    result = ParseResult(format=FORMAT_NAME, source=source)
    scan = _scan(text, result)
    runs = [r for r in scan.runs if r.has_data]
    for r in scan.runs:
        if not r.has_data:
            result.complete = False
            result.warn(r.first_line, r.running_line, f"interval rows or a Results block after 'Running ...' "
                                                      f"({r.threads} threads); the output has none")
    if not runs:
        first_no, first = next(((i + 1, ln) for i, ln in enumerate(text.split("\n", 200)[:200]) if ln.strip()),
                               (None, None))
        if scan.settings_lines:
            result.complete = False
            result.warn(None, None, "interval rows or a Results block after the settings dump; the output ends before any")
            return result
        table = _thread_table(scan.thread_rows)
        if table is not None:               # an auto-rate summary table alone (the runs cut or elided)
            result.tables["thread_summary"] = table
            result.complete = False
            result.warn(None, None, "interval rows or a Results block for each thread count of the auto-rate "
                                    "summary table; the output has only the table")
            return result
        raise ParseError(source, first_no, first, "cassandra-stress output: a 'type, total ops, op/s, ...' interval "
                                                  "header, interval rows or a 'Results:' block")
    table = _thread_table(scan.thread_rows)
    if table is not None:
        result.tables["thread_summary"] = table
    settings = _settings(scan)
    for index, run in enumerate(runs, 1):
        run.index = index
        result.runs.append(build_run(run, scan, settings, table))
        if run.jmx_failed and table is not None and run.auto_step:
            gc_not_collected(table, table["threads"] == run.threads)
    if scan.jmx_pending:
        line_no, line = scan.jmx_pending[0]
        result.warn(line_no, line, "a run after this message (it names the run whose GC figures were not collected); "
                                   "none started, so no figures were changed")
    if scan.line_warnings > _MAX_LINE_WARNINGS:
        result.warn(None, None, f"{scan.line_warnings - _MAX_LINE_WARNINGS} more unknown lines (not listed)")
    result.complete = result.complete and all(r.complete for r in result.runs)
    return result


# Header, a 'Results:' block with its first key, or the settings marker, at the start of a line;
# early 2.1: a header with no type column (also of the auto-rate table), or a row with no op name
# ('514369    ,     60109,   57871, ...': the count left-justified, a space before its comma).
_SNIFF_RE = re.compile(r"^\s*type,?\s+total ops,\s*op/s,|^Results:\s*\n\s*op rate\s*:|"
                       r"^[ \t]*(?:id,[ \t]*)?(?:total ops|ops)[ \t]*,[ \t]*(?:adj row/s|op/s)[ \t]*,|"
                       r"^[ \t]*\d+ +,(?:[ \t]*-?\d+(?:\.\d+)?[ \t]*,){10}|"
                       + re.escape(SETTINGS_MARKER), re.MULTILINE | re.IGNORECASE)


def sniff(head: str) -> bool:
    return _SNIFF_RE.search(head) is not None


FORMAT = Format(name=FORMAT_NAME, description="cassandra-stress stdout (2.1 to 5.0): interval rows, Results "
                                              "blocks, auto-rate thread ramps",
                sniff=sniff, parse=parse_stress_log)

__all__ = ["FORMAT", "parse_stress_log", "sniff"]
