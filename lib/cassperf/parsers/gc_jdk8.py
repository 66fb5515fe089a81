"""JDK 8 (and 7) GC logs written with -XX:+PrintGCDetails -> pauses, concurrent phases, safepoints.

Handles the stamps -XX:+PrintGCDateStamps / -XX:+PrintGCTimeStamps (either, both or none), CMS
and ParNew, Parallel and Serial, and G1 multi-line records (the pause total on the header line,
or on a ", 0.0257072 secs]" line after -XX:+PrintTenuringDistribution output, then the phase
details and the "[Eden: ... Heap: before(cap)->after(cap)]" line), -XX:+PrintHeapAtGC blocks
and -XX:+PrintGCApplicationStoppedTime lines. Decimal commas (some locales) are accepted.

A record is assembled from its header line ("[GC (...", "[Full GC ...", "[GC pause ...") and the
continuation lines that start with ':' or ',' until its brackets balance. Nested brackets are
then set aside, which leaves the top level: "GC (cause)  before->after(total), secs". Concurrent
phase lines that the JVM interleaves into a record are taken out first and kept as phases.

Line rules (what is counted, what is ignored):
- Ignored by design, not counted: blank lines; lines that start with whitespace (heap-at-GC
  block contents, G1 phase timings, " [Times: ...]"); '{Heap before GC', 'Heap after GC', '}'
  and 'Heap' lines; tenuring distribution ('Desired survivor size', '- age'); the JVM header
  ('Java HotSpot', 'OpenJDK', 'Memory:', 'CommandLine flags:', 'GC log file created');
  'Application time:' lines; '[G1Ergonomics ...' lines; concurrent '-start' marker lines.
- Any other line, and any record whose top level does not parse, is skipped and counted in
  `skipped_lines`, with a warning for each of the first MAX_LINE_WARNINGS and a summary warning.
- A record still open at the end of the file, or a stopped-time line cut short there, makes
  the result partial (complete=False) with a warning. A rotated file that starts inside a
  record gets a warning for the orphaned continuation line.
"""

from __future__ import annotations

import math
import re

from cassperf.errors import ParseError
from cassperf.parsers.base import Format, ParseResult, check_text
from cassperf.parsers.gc_common import (
    MAX_DURATION_MS, EventColumns, GcConcurrent, GcPause, GcSafepoint,
)

NAME = "gc-jdk8"
MAX_LINE_WARNINGS = 20
_EXPECTED = "a JDK 8 GC log (-XX:+PrintGCDetails: '[GC (...' / '[Full GC ...' records)"

_NUM = r"\d+(?:[.,]\d+)?"
_ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4}"

# Stamps at the start of a line (date stamp, uptime stamp, either or none):
# 2020-07-05T18:42:41.452-0400: 3.771: [GC (Allocation Failure) ...
_STAMPS = re.compile(rf"(?:({_ISO}): )?(?:(\d+[.,]\d+): )?")
# The same stamps inside a record (before nested parts), removed before the top level is read:
# [GC (Allocation Failure) 2020-07-05T18:42:41.452-0400: 3.771: [ParNew
_EMBEDDED_STAMPS = re.compile(rf"(?:{_ISO}: (?:\d+[.,]\d+: )?|\d+[.,]\d+: )")
#  [Times: user=0.13 sys=0.00, real=0.04 secs]
_TIMES = re.compile(r"\s*\[Times: [^\[\]]*\]")
# an innermost bracket group: [ParNew: 327680K->29229K(368640K), 0.0354182 secs]
_NESTED = re.compile(r"\[[^\[\]]*\]")
# generation names inside a record: [ParNew: ...], [CMS: ...], [PSYoungGen: ...]
_GENERATIONS = re.compile(r"\[(ParNew|DefNew|PSYoungGen|CMS|Tenured|ParOldGen|PSOldGen)(?=[:( ]|\d|$)")
# The top level of a record once nested groups are set aside:
# GC (Allocation Failure)   327680K->29229K(2056192K), 0.0355137 secs
# GC pause (G1 Evacuation Pause) (young), 0.0257072 secs
# GC (CMS Initial Mark)   35192K(2056192K), 0.0090406 secs
# GC cleanup 13313K->13313K(1868M), 0.0029545 secs
_TOP = re.compile(
    rf"(Full GC|GC pause|GC remark|GC cleanup|GC)(?![\w-])\s*((?:\((?:[^()]|\([^()]*\))*\)\s*)*)"
    rf"(.*?)[, ]*({_NUM}) secs\s*", re.DOTALL)
_GROUP = re.compile(r"\(((?:[^()]|\([^()]*\))*)\)")
# 327680K->29229K(2056192K)   and   95M->7926K(1868M)
_TRANSITION = re.compile(rf"({_NUM})([BKMG])->({_NUM})([BKMG])\(({_NUM})([BKMG])\)")
# 35192K(2056192K)  (CMS initial mark / remark: occupancy and capacity only)
_OCCUPANCY = re.compile(rf"({_NUM})([BKMG])\(({_NUM})([BKMG])\)")
#    [Eden: 95232.0K(95232.0K)->0.0B(105.0M) Survivors: 0.0B->8192.0K Heap: 95232.0K(1868.0M)->7926.8K(1868.0M)]
_G1_HEAP = re.compile(rf"Heap: ({_NUM})([BKMG])\(({_NUM})([BKMG])\)->({_NUM})([BKMG])\(({_NUM})([BKMG])\)")
# Concurrent phases, CMS and G1, alone on a line or interleaved into a record:
# 2020-07-05T18:42:41.505-0400: 3.825: [CMS-concurrent-mark: 0.009/0.009 secs] [Times: user=0.06 sys=0.00, real=0.01 secs]
# 2020-07-20T09:09:28.901+0000: 4.837: [GC concurrent-mark-end, 0.0036547 secs]
_CONCURRENT = re.compile(
    rf"(?:({_ISO}): )?(?:(\d+[.,]\d+): )?\[(?:CMS-concurrent-([a-z-]+?)(?:-start)?(?:: ({_NUM})/({_NUM}) secs)?"
    rf"|GC concurrent-([a-z-]+?)(?:-start|-end|-abort)?(?:, ({_NUM}) secs)?)\](?: ?\[Times: [^\[\]]*\])?")
# 2020-07-05T18:42:38.505-0400: 0.833: Total time for which application threads were stopped: 0.0000913 seconds, Stopping threads took: 0.0000285 seconds
_STOPPED = re.compile(
    rf"Total time for which application threads were stopped: ({_NUM}) seconds"
    rf"(?:, Stopping threads took: ({_NUM}) seconds)?")
_STOPPED_FULL = re.compile(
    rf"Total time for which application threads were stopped: {_NUM} seconds, Stopping threads took: {_NUM} seconds\s*")
# JVM header lines:
# Java HotSpot(TM) 64-Bit Server VM (25.221-b11) for windows-amd64 JRE (1.8.0_221-b11), ...
# 2020-07-01 08:28:43 GC log file created /mnt/c/cassandra/.../logs/gc.log.2
_HEADER = re.compile(
    r"(?:Java HotSpot|OpenJDK|Memory: |CommandLine flags: |"
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d GC log file (?:created|has reached))")
# CommandLine flags: ... -XX:+UseConcMarkSweepGC ... -XX:+UseParNewGC ...
_FLAG_COLLECTORS = (("-XX:+UseG1GC", "G1"), ("-XX:+UseConcMarkSweepGC", "CMS"),
                    ("-XX:+UseParallelOldGC", "Parallel"), ("-XX:+UseParallelGC", "Parallel"),
                    ("-XX:+UseSerialGC", "Serial"))
_SNIFF = re.compile(
    rf"^(?:{_ISO}: )?(?:\d+[.,]\d+: )?(?:\[(?:GC \(|GC pause|GC remark|GC cleanup|GC concurrent-|Full GC|"
    rf"CMS-concurrent-)|Total time for which application threads were stopped: )"
    r"|^CommandLine flags: .*-XX:\+Use\w+GC", re.MULTILINE)

_LATER = "<file collector>"        # placeholder filled in by _Parse.finish()
_YOUNG_NAMES = {"ParNew": "ParNew", "DefNew": "Serial", "PSYoungGen": "Parallel"}
_OLD_NAMES = {"CMS": "CMS", "Tenured": "Serial", "ParOldGen": "Parallel", "PSOldGen": "Parallel"}


def _f(value: str) -> float:
    """A number as HotSpot printed it, decimal point or (some locales) decimal comma."""
    return float(value.replace(",", "."))


def _mb(value: str, unit: str) -> float:
    return _f(value) * {"B": 1.0 / (1024 * 1024), "K": 1.0 / 1024, "M": 1.0, "G": 1024.0}[unit]


class _Parse:
    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.result = ParseResult(format=NAME, source=source)
        self.pauses = EventColumns(GcPause, logged_at_end=False)
        self.concurrent = EventColumns(GcConcurrent, logged_at_end=True)
        self.safepoints = EventColumns(GcSafepoint, logged_at_end=True)
        self.collector = "unknown"
        self.young_collector = "unknown"
        self.pending: list[str] | None = None      # parts of an open record
        self.pending_depth = 0
        self.pending_at: tuple[int, str, str | None, float] = (0, "", None, math.nan)
        self.g1_awaiting_heap: list[object] | None = None
        self.line_warnings = 0
        self.saw_g1 = False

    # -- warnings --
    def skip(self, line_no: int, line: str, expected: str) -> None:
        self.result.skipped_lines += 1
        self.line_warnings += 1
        if self.line_warnings <= MAX_LINE_WARNINGS:
            self.result.warn(line_no, line, expected)

    # -- lines --
    def run(self) -> ParseResult:
        lines = self.text.splitlines()
        last_no = len(lines)
        cut_short = not self.text.endswith(("\n", "\r"))
        for line_no, line in enumerate(lines, 1):
            if not line:
                continue
            first = line[0]
            if first in " \t":
                if self.g1_awaiting_heap is not None and "[Eden:" in line:
                    self.g1_heap(line)
                continue
            if "concurrent-" in line:
                line = self.take_concurrent(line, line_no)
                if not line.strip():
                    continue
                first = line[0]
            if first in "{}" or line.startswith(("Heap", "Desired survivor size", "- age")):
                continue
            if first in ":,":
                self.continue_record(line, line_no)
                continue
            m = _STAMPS.match(line)
            rest = line[m.end():]
            if rest.startswith("["):
                if rest.startswith("[G1Ergonomics"):
                    continue
                self.start_record(rest, line_no, line, m.group(1), m.group(2))
            elif rest.startswith("Total time for which"):
                self.safepoint(rest, line_no, line, m.group(1), m.group(2),
                               at_end=cut_short and line_no == last_no)
            elif rest.startswith("Application time:"):
                continue
            elif _HEADER.match(line):
                if line.startswith("CommandLine flags: "):
                    self.flags(line)
            else:
                self.skip(line_no, line, "a GC record, a stopped-time line or a heap-at-GC line")
        if self.pending is not None:
            line_no, line, _, _ = self.pending_at
            self.result.warn(line_no, line, "the rest of this GC record (the file ends inside it: truncated?)")
            self.result.skipped_lines += 1
            self.result.complete = False
        return self.finish()

    def flags(self, line: str) -> None:
        for flag, name in _FLAG_COLLECTORS:
            if flag in line:
                self.collector = name
                break
        if self.collector == "CMS":
            self.young_collector = "ParNew"
        elif "-XX:+UseParNewGC" in line:
            self.young_collector = "ParNew"
        else:
            self.young_collector = self.collector

    def take_concurrent(self, line: str, line_no: int) -> str:
        """Record the concurrent phases in `line`; return the line without them."""
        for m in _CONCURRENT.finditer(line):
            iso, up = m.group(1), m.group(2)
            if m.group(3) is not None:
                phase, wall = m.group(3), m.group(5)
                collector = "CMS"
            else:
                phase, wall = m.group(6), m.group(7)
                collector = "G1"
            if wall is None:
                continue                                  # a '-start' (or '-abort') marker
            duration = round(_f(wall) * 1000.0, 7)
            if duration > MAX_DURATION_MS:
                self.skip(line_no, line, f"a concurrent phase shorter than {MAX_DURATION_MS:.0f} ms")
                continue
            self.concurrent.add(iso, math.nan, _f(up) if up else math.nan, None, collector, phase,
                                duration, line_no)
        return _CONCURRENT.sub("", line)

    def start_record(self, rest: str, line_no: int, line: str, iso: str | None, up: str | None) -> None:
        if self.pending is not None:
            p_no, p_line, _, _ = self.pending_at
            self.skip(p_no, p_line, "the end of this GC record before the next one starts")
        self.g1_awaiting_heap = None
        self.pending = [rest]
        self.pending_depth = rest.count("[") - rest.count("]")
        self.pending_at = (line_no, line, iso, _f(up) if up else math.nan)
        if self.pending_depth <= 0:
            self.finish_record()

    def continue_record(self, line: str, line_no: int) -> None:
        if self.pending is None:
            self.skip(line_no, line, "a GC record header before this continuation line "
                                     "(a rotated file that starts inside a record?)")
            return
        self.pending.append(line)
        self.pending_depth += line.count("[") - line.count("]")
        if self.pending_depth <= 0:
            self.finish_record()

    def finish_record(self) -> None:
        assert self.pending is not None
        record = "".join(self.pending)
        line_no, line, iso, uptime = self.pending_at
        self.pending = None
        body = _EMBEDDED_STAMPS.sub("", _TIMES.sub("", record)).strip()
        if not (body.startswith("[") and body.endswith("]")):
            self.skip(line_no, line, "a GC record '[GC ... secs]'")
            return
        inner = body[1:-1]
        generations = _GENERATIONS.findall(inner)
        for _ in range(10):
            inner, n = _NESTED.subn(" ", inner)
            if not n:
                break
        m = _TOP.fullmatch(inner)
        if m is None:
            self.skip(line_no, line, "a GC record '[GC (<cause>) <before>K-><after>K(<total>K), <secs> secs]'")
            return
        what, groups_text, middle, secs = m.groups()
        groups = _GROUP.findall(groups_text)
        pause_ms = round(_f(secs) * 1000.0, 7)
        if pause_ms > MAX_DURATION_MS:
            self.skip(line_no, line, f"a pause shorter than {MAX_DURATION_MS:.0f} ms")
            return
        kind, collector, cause = self.classify(what, groups, generations)
        before = after = total = math.nan
        t = _TRANSITION.search(middle)
        if t is not None:
            before, after, total = _mb(t.group(1), t.group(2)), _mb(t.group(3), t.group(4)), _mb(t.group(5), t.group(6))
        else:
            o = _OCCUPANCY.search(middle)
            if o is not None:
                before, total = _mb(o.group(1), o.group(2)), _mb(o.group(3), o.group(4))
        row: list[object] = [iso, math.nan, uptime, None, kind, collector, cause, before, after, total,
                             pause_ms, line_no]
        self.pauses.rows.append(row)              # a list: the G1 heap line may fill it in
        if collector in ("G1", _LATER) and math.isnan(before) and kind in ("young", "mixed", "initial-mark", "full"):
            self.g1_awaiting_heap = row

    def classify(self, what: str, groups: list[str], generations: list[str]) -> tuple[str, str, str | None]:
        """(kind, collector, cause) of a record. A record that does not name its collector gets
        _LATER: finish() fills in the file's collector (from 'CommandLine flags:', wherever it
        is, else G1 when G1 records were seen, else "unknown")."""
        cause = groups[0] if groups else None
        if what in ("GC pause", "GC remark", "GC cleanup"):
            self.saw_g1 = True
        if what == "GC pause":
            flags = set(groups[1:])
            kind = "initial-mark" if "initial-mark" in flags else "mixed" if "mixed" in flags else "young"
            return kind, "G1", cause
        if what == "GC remark":
            return "remark", "G1", None
        if what == "GC cleanup":
            return "cleanup", "G1", None
        old = [g for g in generations if g in _OLD_NAMES]
        young = [g for g in generations if g in _YOUNG_NAMES]
        if what == "Full GC":
            if old:
                return "full", _OLD_NAMES[old[0]], cause
            return "full", _LATER, cause
        if cause == "CMS Initial Mark":
            return "initial-mark", "CMS", cause
        if cause == "CMS Final Remark":
            return "remark", "CMS", cause
        if old:                                # e.g. ParNew (promotion failed) then a CMS collection
            return "full", _OLD_NAMES[old[0]], cause
        if young:
            return "young", _YOUNG_NAMES[young[0]], cause
        return "young", _LATER, cause

    def g1_heap(self, line: str) -> None:
        m = _G1_HEAP.search(line)
        row = self.g1_awaiting_heap
        self.g1_awaiting_heap = None
        if m is None or row is None:
            return
        row[7] = _mb(m.group(1), m.group(2))
        row[8] = _mb(m.group(5), m.group(6))
        row[9] = _mb(m.group(7), m.group(8))

    def safepoint(self, rest: str, line_no: int, line: str, iso: str | None, up: str | None,
                  at_end: bool) -> None:
        m = _STOPPED.match(rest)
        if m is None:
            self.skip(line_no, line, "'Total time for which application threads were stopped: <s> seconds, "
                                     "Stopping threads took: <s> seconds'")
            if at_end:
                self.result.complete = False
            return
        stopped = round(_f(m.group(1)) * 1000.0, 7)
        if stopped > MAX_DURATION_MS:
            self.skip(line_no, line, f"a stop shorter than {MAX_DURATION_MS:.0f} ms")
            return
        ttsp = round(_f(m.group(2)) * 1000.0, 7) if m.group(2) else math.nan
        if not _STOPPED_FULL.fullmatch(rest):
            self.result.warn(line_no, line, "a complete stopped-time line (kept the stopped time; the rest "
                                            "is cut short)" + (": file truncated?" if at_end else ""))
            if at_end:
                self.result.complete = False
        self.safepoints.add(iso, math.nan, _f(up) if up else math.nan, None, stopped, ttsp, line_no)

    def finish(self) -> ParseResult:
        result = self.result
        if self.line_warnings > MAX_LINE_WARNINGS:
            result.warn(None, None, f"{self.line_warnings - MAX_LINE_WARNINGS} more lines that did not "
                                    f"parse (only the first {MAX_LINE_WARNINGS} are listed)")
        if self.collector == "unknown" and self.saw_g1:
            self.collector = self.young_collector = "G1"
        collectors = self.pauses.column("collector")
        kinds = self.pauses.column("kind")
        for i, name in enumerate(collectors):
            if name == _LATER:
                collectors[i] = self.young_collector if kinds[i] == "young" else self.collector
        result.tables["pauses"] = self.pauses.frame()
        result.tables["concurrent"] = self.concurrent.frame()
        result.tables["safepoints"] = self.safepoints.frame()
        bad = self.pauses.bad_times + self.concurrent.bad_times + self.safepoints.bad_times
        if bad:
            result.warn(None, None, f"valid date stamps; {bad} event(s) have an unreadable one and get NaT")
        return result


def parse_jdk8_gc(data: bytes | str, source: str = "<text>") -> ParseResult:
    """Parse a JDK 8 -XX:+PrintGCDetails GC log (bytes or str). See the module docstring for the
    rules and gc_common for the tables ("pauses", "concurrent", "safepoints") and their units."""
    if isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
        if b"\x00" in raw[:65536]:
            raise ParseError(source, None, None, f"{_EXPECTED}, but the input is binary (NUL bytes)")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")
    else:
        text = data
    head = text[:65536]
    check_text(head if head.strip() else text, source, _EXPECTED)
    if not _SNIFF.search(head):
        first_no, first = next(((i, line) for i, line in enumerate(head.splitlines(), 1) if line.strip()),
                               (None, None))
        raise ParseError(source, first_no, first, _EXPECTED)
    return _Parse(text, source).run()


def sniff(head: str) -> bool:
    """A JDK 8 GC record or stopped-time line at a line start (after optional stamps), or a
    'CommandLine flags:' header naming a collector."""
    return _SNIFF.search(head) is not None


def _parse(text: str, source: str) -> ParseResult:
    return parse_jdk8_gc(text, source)


FORMAT = Format(
    name=NAME,
    description="JVM GC log, JDK 8 -XX:+PrintGCDetails (CMS/ParNew, G1, Parallel, Serial): pauses, "
                "concurrent phases, stopped time",
    sniff=sniff,
    parse=_parse,
)

__all__ = ["FORMAT", "NAME", "parse_jdk8_gc", "sniff"]
