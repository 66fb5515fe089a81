"""JDK 9+ unified GC logging (-Xlog:gc*,safepoint...) -> pauses, concurrent phases, safepoints.

Decorators are decoded by their shape, in any order or combination: time / utctime
(2024-08-23T12:45:13.657+0530), uptime (4.298s), timemillis / uptimemillis (…ms, told apart by
magnitude: >= 1e11 ms is epoch time), timenanos / uptimenanos (…ns, >= 1e17 ns is epoch time),
pid and tid (integers), level (info, debug, ...), tags (gc,start) and hostname. The shape
found for a line is cached and reused while the next lines fit it, so decoding costs a split.

Speed: the parser never walks lines in Python. It scans the whole text for a few literals that
only event lines carry (") Pause ", ") Concurrent ", 'Safepoint "', "Total time for which"),
which `re` finds at memchr-like speed, and parses just those lines, with a fast path for the
common G1 pause line. Columns are built as lists and turned into one DataFrame at the end.

Line rules (what is counted, what is ignored):
- A line that starts with '[' is a unified-logging line. Its message is examined only when it
  holds one of the literals above; all other messages (heap dumps, phase details, region
  tables, metaspace, ...) are ignored by design and not counted.
- In a decorated log, a non-blank line that does not start with '[' is not unified logging: it
  is skipped and counted in `skipped_lines`, with a warning for each of the first
  MAX_LINE_WARNINGS and one summary warning for the rest. Blank lines are ignored.
- An event line (one with a literal above) that does not parse is skipped, counted, warned.
- A "Pause" start line (gc,start tag) without its end line, or an event line cut short at the
  end of the file, makes the result partial (complete=False) with a warning.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

from cassperf.errors import ParseError
from cassperf.parsers.base import Format, ParseResult, check_text
from cassperf.parsers.gc_common import (
    MAX_DURATION_MS, G1_YOUNG_TYPES, EventColumns, GcConcurrent, GcPause, GcSafepoint,
    cause_from_groups, kind_from_label, num, split_groups, to_mb,
)

NAME = "gc-unified"
MAX_LINE_WARNINGS = 20
_EXPECTED = "a JDK 9+ unified-logging GC log ('[<decorators>] message' lines, -Xlog:gc*)"

# --- decorators -------------------------------------------------------------------------------
# [2024-08-23T12:45:13.657+0530][4.298s][98688][20483][info ] GC(0) Pause Young ...
_DECORATORS = re.compile(r"((?:\[[^\]\n]*\])*) ?")
# 2024-08-23T12:45:13.657+0530 (time, utctime)
_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4}")
# 4.298s (uptime; some locales print 4,298s)
_SECONDS = re.compile(r"\d+[.,]\d+s")
# 4298ms, 1629876543210ms, 4298123456ns (uptimemillis, timemillis, uptimenanos, timenanos)
_INT_UNIT = re.compile(r"(\d+)(ms|ns)")
# 98688, '9731 ' (pid, tid; tid is padded)
_INT = re.compile(r"\d+ *")
# 'info ', 'debug', 'warning' (level, padded)
_LEVEL = re.compile(r"(?:trace|debug|info|warning|error|develop|off) *")
# 'gc,start     ', 'safepoint    ' (tags, padded)
_TAGS = re.compile(r"[a-z0-9_]+(?:,[a-z0-9_]+)* *")
# 'node-1.example.com' (hostname)
_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

_ISO_KIND, _UP_S, _UP_MS, _UP_NS, _EPOCH_MS, _EPOCH_NS, _OTHER = range(7)


@dataclass(frozen=True)
class _Layout:
    """Where the time and uptime decorators sit in a line's decorator list, and their units."""

    count: int
    iso: int            # index of the ISO time decorator, -1 if none
    up: int             # index of the uptime decorator, -1 if none
    up_kind: int        # _UP_S, _UP_MS or _UP_NS
    epoch: int          # index of timemillis/timenanos, -1 if none
    epoch_kind: int     # _EPOCH_MS or _EPOCH_NS


def _classify(items: list[str]) -> _Layout | None:
    """Decode one line's decorator list by shape; None if any decorator has no known shape."""
    iso = up = epoch = -1
    up_kind = epoch_kind = _OTHER
    for i, item in enumerate(items):
        if _ISO.fullmatch(item):
            if iso < 0:
                iso = i
        elif _SECONDS.fullmatch(item):
            up, up_kind = i, _UP_S
        elif m := _INT_UNIT.fullmatch(item):
            value = int(m.group(1))
            if m.group(2) == "ms":
                if value >= 10**11:
                    epoch, epoch_kind = i, _EPOCH_MS
                else:
                    up, up_kind = i, _UP_MS
            elif value >= 10**17:
                epoch, epoch_kind = i, _EPOCH_NS
            else:
                up, up_kind = i, _UP_NS
        elif _INT.fullmatch(item) or _LEVEL.fullmatch(item) or _TAGS.fullmatch(item) or _HOST.fullmatch(item):
            continue
        else:
            return None
    return _Layout(len(items), iso, up, up_kind, epoch, epoch_kind)


class _DecoratorReader:
    """Reads (iso time, epoch ms, uptime s) from a decorator string, caching the layout."""

    def __init__(self) -> None:
        self.layout: _Layout | None = None

    def read(self, decorators: str) -> tuple[str | None, float, float] | None:
        if not decorators:
            return None, math.nan, math.nan
        items = decorators[1:-1].split("][")
        layout = self.layout
        if layout is not None and layout.count == len(items):
            try:
                return self._values(items, layout)
            except (ValueError, IndexError):
                pass
        layout = _classify(items)
        if layout is None:
            return None
        self.layout = layout
        return self._values(items, layout)

    @staticmethod
    def _values(items: list[str], layout: _Layout) -> tuple[str | None, float, float]:
        iso = None
        if layout.iso >= 0:
            iso = items[layout.iso]
            if len(iso) != 28 or iso[10] != "T":
                raise ValueError(iso)
        uptime = math.nan
        if layout.up >= 0:
            raw = items[layout.up]
            if layout.up_kind == _UP_S:
                if raw[-1] != "s":
                    raise ValueError(raw)
                uptime = num(raw[:-1])
            else:
                if raw[-2:] != ("ms" if layout.up_kind == _UP_MS else "ns"):
                    raise ValueError(raw)
                uptime = int(raw[:-2]) / (1e3 if layout.up_kind == _UP_MS else 1e9)
        epoch_ms = math.nan
        if layout.epoch >= 0:
            raw = items[layout.epoch]
            if raw[-2:] != ("ms" if layout.epoch_kind == _EPOCH_MS else "ns"):
                raise ValueError(raw)
            epoch_ms = int(raw[:-2]) / (1.0 if layout.epoch_kind == _EPOCH_MS else 1e6)
        return iso, epoch_ms, uptime


# --- event lines (matched from the start of the message, up to the end of the line) ------------
# Fast path, the common G1 line:
# GC(0) Pause Young (Concurrent Start) (Metadata GC Threshold) 143M->28M(4096M) 13.867ms
_PAUSE_G1_YOUNG = re.compile(
    r"GC\((\d+)\) Pause Young \((Normal|Concurrent Start|Prepare Mixed|Mixed)\) \(([^()]*)\) "
    r"(\d+)M->(\d+)M\((\d+)M\) (\d+[.,]\d+)ms$")
# Any pause end line; sizes are optional (Shenandoah/ZGC print none):
# GC(2) Pause Remark 1M->1M(5M) 0.364ms
# GC(3) Pause Init Mark (unload classes) 0.345ms
_PAUSE_END = re.compile(
    r"GC\((\d+)\) Pause (.+?)(?: (\d+(?:\.\d+)?)([BKMGT])->(\d+(?:\.\d+)?)([BKMGT])"
    r"\((\d+(?:\.\d+)?)([BKMGT])\))? (\d+(?:[.,]\d+)?)ms$")
# The start line the gc,start tag prints before the pause:
# GC(0) Pause Young (Normal) (G1 Evacuation Pause)
_PAUSE_START = re.compile(r"GC\((\d+)\) Pause ([A-Z][A-Za-z ]*(?: \((?:[^()\n]|\([^()\n]*\))*\))*)$")
# GC(1) Concurrent Mark Cycle 13.914ms
# GC(2) Concurrent Mark (0.114s, 0.116s) 1.204ms
_CONC_END = re.compile(
    r"GC\((\d+)\) Concurrent (.+?)(?: \(\d+(?:[.,]\d+)?s(?:, \d+(?:[.,]\d+)?s)?\))? (\d+(?:[.,]\d+)?)ms$")
# JDK 17+:
# Safepoint "G1PauseRemark", Time since last: 7445917 ns, Reaching safepoint: 3506 ns, Cleanup: 6974 ns, At safepoint: 1158251 ns, Total: 1168731 ns
_SAFEPOINT = re.compile(
    r'Safepoint "([^"\n]*)", Time since last: (\d+) ns, Reaching safepoint: (\d+) ns, '
    r"Cleanup: (\d+) ns, At safepoint: (\d+) ns, Total: (\d+) ns$")
# JDK 9..16 (and JDK 8, see gc_jdk8):
# Total time for which application threads were stopped: 0.0001635 seconds, Stopping threads took: 0.0001057 seconds
_STOPPED = re.compile(
    r"Total time for which application threads were stopped: (\d+[.,]\d+) seconds, "
    r"Stopping threads took: (\d+[.,]\d+) seconds$")
# [0.020s][info][gc] Using G1
_USING = re.compile(
    r"Using (G1|Parallel|Serial|Concurrent Mark Sweep|Shenandoah|The Z Garbage Collector|ZGC|Epsilon)\r?$",
    re.MULTILINE)
_COLLECTOR_NAMES = {"Concurrent Mark Sweep": "CMS", "The Z Garbage Collector": "ZGC"}
_G1_KIND = {"Normal": "young", "Concurrent Start": "initial-mark", "Prepare Mixed": "young", "Mixed": "mixed"}

# literals that only event lines carry; found with str.find, whose fast search skips ahead far
# better than `re` does (re scans for the literal's first character, and ')', 'S', 'T' are common
# in heap-region dumps)
_LIT_PAUSE = ") Pause "
_LIT_CONC = ") Concurrent "
_LIT_SAFEPOINT = 'Safepoint "'
_LIT_STOPPED = "Total time for which "
# a line that does not start with '[' (blank lines excluded)
_NOT_DECORATED = re.compile(r"\n(?=[^\[\r\n])")
# sniff: a decorated line with a GC message
_SNIFF = re.compile(
    r"^((?:\[[^\]\n]*\])+) (?:GC\(\d+\) |Using (?:G1|Parallel|Serial|Concurrent Mark Sweep|Shenandoah|"
    r"The Z Garbage Collector|ZGC|Epsilon)\r?$|Safepoint \"|Total time for which|Entering safepoint)",
    re.MULTILINE)
# the first line of an undecorated log (-Xlog:gc:file:none): "Using G1" or "GC(0) Pause ..."
_UNDECORATED_START = re.compile(r"(?:GC\(\d+\) |Using \w)")
# any line starting with '[': [0.029s][info][safepoint    ] Entering safepoint region: EnableBiasedLocking
_BRACKET_LINE = re.compile(r"^(\[[^\n]*)$", re.MULTILINE)
# undecorated sniff: "Using G1" / "GC(0) Pause Young ..." as the first line
_SNIFF_UNDECORATED = re.compile(r"\s*(?:Using (?:G1|Parallel|Serial|Shenandoah|ZGC)\r?\n|GC\(\d+\) Pause )")


class _Parse:
    """State of one parse: the text, builders, warnings keyed by character position."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.result = ParseResult(format=NAME, source=source)
        self.pauses = EventColumns(GcPause, logged_at_end=True)
        self.concurrent = EventColumns(GcConcurrent, logged_at_end=True)
        self.safepoints = EventColumns(GcSafepoint, logged_at_end=True)
        self.reader = _DecoratorReader()
        self.problems: list[tuple[int, str, str]] = []   # (char pos of line start, line, expected)
        self.line_warnings = 0
        self.unterminated_bad = False
        self.starts: dict[int, tuple[int, str]] = {}       # gc id -> (line pos, label) of open pauses
        self.g1_marker = False

    # -- helpers --
    def bad_line(self, start: int, stop: int, end: int, expected: str) -> None:
        self.result.skipped_lines += 1
        if end == len(self.text):
            self.unterminated_bad = True
            expected += " (the last line is cut short: file truncated?)"
        self.note(start, self.text[start:stop], expected)

    def note(self, start: int, line: str, expected: str) -> None:
        self.line_warnings += 1
        if self.line_warnings <= MAX_LINE_WARNINGS:
            self.problems.append((start, line, expected))

    def events(self, literal: str, back: str | None) -> Iterator[tuple[int, int, int, int]]:
        """(line start, message start, regex end (before CR), line end) of each line holding
        `literal`, once per line. The message starts at `back` searched backwards from the hit
        (e.g. "GC(" before ") Pause "), or at the hit itself when `back` is None."""
        text = self.text
        find, rfind, n = text.find, text.rfind, len(text)
        pos = find(literal)
        while pos >= 0:
            start = rfind("\n", 0, pos) + 1
            end = find("\n", pos)
            if end < 0:
                end = n
            stop = end - 1 if text[end - 1] == "\r" else end
            body = pos if back is None else rfind(back, start, pos)
            yield start, body, stop, end
            pos = find(literal, end)

    def decorators(self, start: int, body: int) -> tuple[str | None, float, float] | None:
        """Time values from the decorators between line start and message; None if malformed."""
        if body == start:
            return None, math.nan, math.nan
        if body < start + 3 or self.text[body - 2:body] != "] " or self.text[start] != "[":
            return None
        return self.reader.read(self.text[start:body - 1])

    # -- scans --
    def scan_pauses(self) -> None:
        text = self.text
        add = self.pauses.rows.append
        read = self.decorators
        starts = self.starts
        fast, general = _PAUSE_G1_YOUNG.match, _PAUSE_END.match
        for start, body, stop, end in self.events(_LIT_PAUSE, "GC("):
            values = read(start, body) if body >= start else None
            if values is None:
                self.bad_line(start, stop, end, "'[<decorators>] GC(n) Pause ...'")
                continue
            m = fast(text, body, stop)
            if m is not None:
                gc_id, kind, cause, before, after, total, pause_ms = m.groups()
                pause = num(pause_ms)
                if pause > MAX_DURATION_MS:
                    self.bad_line(start, stop, end, f"a pause shorter than {MAX_DURATION_MS:.0f} ms")
                    continue
                gc = int(gc_id)
                if starts:
                    starts.pop(gc, None)
                add((values[0], values[1], values[2], gc, _G1_KIND[kind], None, cause, float(before),
                     float(after), float(total), pause, start))
                self.g1_marker = True
                continue
            m = general(text, body, stop)
            if m is not None:
                pause = num(m.group(9))
                if pause > MAX_DURATION_MS:
                    self.bad_line(start, stop, end, f"a pause shorter than {MAX_DURATION_MS:.0f} ms")
                    continue
                gc = int(m.group(1))
                words, groups = split_groups(m.group(2))
                if any(g in G1_YOUNG_TYPES or g.startswith("G1 ") for g in groups):
                    self.g1_marker = True
                if m.group(3) is not None:
                    before_mb, after_mb, total_mb = (to_mb(m.group(3), m.group(4)), to_mb(m.group(5), m.group(6)),
                                                     to_mb(m.group(7), m.group(8)))
                else:
                    before_mb = after_mb = total_mb = math.nan
                starts.pop(gc, None)
                add((values[0], values[1], values[2], gc, kind_from_label(words, groups), None,
                     cause_from_groups(groups), before_mb, after_mb, total_mb, pause, start))
                continue
            m = _PAUSE_START.match(text, body, stop)
            if m is not None and end < len(text):
                starts[int(m.group(1))] = (start, m.group(2))
                continue
            self.bad_line(start, stop, end,
                          "a pause line 'GC(n) Pause <kind> (<cause>) <before>M-><after>M(<total>M) <ms>ms'")

    def scan_concurrent(self) -> None:
        text = self.text
        add = self.concurrent.rows.append
        match = _CONC_END.match
        for start, body, stop, end in self.events(_LIT_CONC, "GC("):
            m = match(text, body, stop) if body >= start else None
            if m is None:
                if text.endswith("ms", start, stop) or end == len(text) or body < start:
                    self.bad_line(start, stop, end, "a concurrent phase line 'GC(n) Concurrent <phase> <ms>ms'")
                continue                               # a phase's start line: no duration yet
            values = self.decorators(start, body)
            if values is None:
                self.bad_line(start, stop, end, "'[<decorators>] GC(n) Concurrent ...'")
                continue
            duration = num(m.group(3))
            if duration > MAX_DURATION_MS:
                self.bad_line(start, stop, end, f"a phase shorter than {MAX_DURATION_MS:.0f} ms")
                continue
            add((values[0], values[1], values[2], int(m.group(1)), None, m.group(2), duration, start))

    def scan_safepoints(self) -> None:
        text = self.text
        add = self.safepoints.rows.append
        for literal, pattern, expected in (
                (_LIT_SAFEPOINT, _SAFEPOINT, 'a safepoint line \'Safepoint "<op>", ... Total: <n> ns\''),
                (_LIT_STOPPED, _STOPPED, "'Total time for which application threads were stopped: "
                                         "<s> seconds, Stopping threads took: <s> seconds'")):
            match = pattern.match
            jdk17 = pattern is _SAFEPOINT
            for start, body, stop, end in self.events(literal, None):
                m = match(text, body, stop)
                values = self.decorators(start, body) if m is not None else None
                if values is None:
                    self.bad_line(start, stop, end, expected)
                    continue
                if jdk17:
                    operation: str | None = m.group(1)
                    stopped, ttsp = int(m.group(6)) / 1e6, int(m.group(3)) / 1e6
                else:
                    operation = None
                    stopped, ttsp = round(num(m.group(1)) * 1e3, 7), round(num(m.group(2)) * 1e3, 7)
                if stopped > MAX_DURATION_MS:
                    self.bad_line(start, stop, end, f"a stop shorter than {MAX_DURATION_MS:.0f} ms")
                    continue
                add((values[0], values[1], values[2], operation, stopped, ttsp, start))
            if jdk17 and any(row[3].startswith("G1") for row in self.safepoints.rows[:50]):
                self.g1_marker = True

    def scan_undecorated(self) -> None:
        text = self.text
        if text[:1] not in ("[", "\n", "\r", ""):
            self.count_foreign(0)
        for hit in _NOT_DECORATED.finditer(text):
            self.count_foreign(hit.end())

    def count_foreign(self, start: int) -> None:
        stop = self.text.find("\n", start)
        stop = len(self.text) if stop < 0 else stop
        self.result.skipped_lines += 1
        self.note(start, self.text[start:stop].rstrip("\r"), "a unified-logging line starting with '[<decorator>]'")

    # -- finishing --
    def collector(self) -> str:
        m = _USING.search(self.text)
        if m is not None:
            return _COLLECTOR_NAMES.get(m.group(1), m.group(1))
        return "G1" if self.g1_marker else "unknown"

    def line_numbers(self, positions: list[int]) -> dict[int, int]:
        """1-based line number of each character position (computed in one forward pass)."""
        out: dict[int, int] = {}
        line, prev = 1, 0
        for pos in sorted(set(positions)):
            line += self.text.count("\n", prev, pos)
            prev = pos
            out[pos] = line
        return out

    def finish(self) -> ParseResult:
        result = self.result
        for gc_id, (start, label) in sorted(self.starts.items(), key=lambda kv: kv[1][0]):
            line_end = self.text.find("\n", start)
            self.problems.append((start, self.text[start:line_end if line_end >= 0 else None].rstrip("\r"),
                                  f"the end line of GC({gc_id}) Pause {label} (file truncated?)"))
            result.complete = False
        if self.unterminated_bad:
            result.complete = False
        positions = [p for p, _, _ in self.problems]
        builders = (self.pauses, self.concurrent, self.safepoints)
        for builder in builders:
            positions.extend(builder.column("line_no"))
        numbers = self.line_numbers(positions)
        for builder in builders:
            col = builder.column("line_no")
            col[:] = [numbers[p] for p in col]
        for start, line, expected in sorted(self.problems):
            result.warn(numbers[start], line, expected)
        if self.line_warnings > MAX_LINE_WARNINGS:
            result.warn(None, None, f"{self.line_warnings - MAX_LINE_WARNINGS} more lines that did not "
                                    f"parse (only the first {MAX_LINE_WARNINGS} are listed)")
        name = self.collector()
        young_name = "ParNew" if name == "CMS" else name
        kinds = self.pauses.column("kind")
        self.pauses.column("collector")[:] = [young_name if k == "young" else name for k in kinds]
        self.concurrent.column("collector")[:] = [name] * len(self.concurrent)
        result.tables["pauses"] = self.pauses.frame()
        result.tables["concurrent"] = self.concurrent.frame()
        result.tables["safepoints"] = self.safepoints.frame()
        bad = self.pauses.bad_times + self.concurrent.bad_times + self.safepoints.bad_times
        if bad:
            result.warn(None, None, f"valid wall-clock times; {bad} event(s) have an unreadable time "
                                    "decorator and get NaT")
        return result


def _first_decorated(text: str) -> bool | None:
    """True: decorated log; False: undecorated (-Xlog:...:none); None: not unified logging.
    Decided by the first 64 KiB: a line whose decorators all have known shapes, else an
    undecorated first line."""
    head = text[:65536]
    for m in _BRACKET_LINE.finditer(head):
        dec = _DECORATORS.match(m.group(1))
        if dec is not None and dec.group(1) and _classify(dec.group(1)[1:-1].split("][")) is not None \
                and len(dec.group(1)) < len(m.group(1)):
            return True
    first = head.lstrip().split("\n", 1)[0]
    if _UNDECORATED_START.match(first):
        return False
    return None


def parse_unified_gc(data: bytes | str, source: str = "<text>") -> ParseResult:
    """Parse a JDK 9+ unified GC log (bytes or str). See the module docstring for the rules and
    gc_common for the tables ("pauses", "concurrent", "safepoints") and their units."""
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
    check_text(head if head.strip() else text, source, _EXPECTED)   # strip() of 1 GB would copy it
    mode = _first_decorated(text)
    if mode is None:
        first_no, first = next(((i, line) for i, line in enumerate(text[:65536].splitlines(), 1) if line.strip()),
                               (None, None))
        raise ParseError(source, first_no, first, _EXPECTED)
    state = _Parse(text, source)
    state.scan_pauses()
    state.scan_concurrent()
    state.scan_safepoints()
    if mode:
        state.scan_undecorated()
    return state.finish()


def sniff(head: str) -> bool:
    """A decorated line of known decorator shapes carrying a GC/safepoint message."""
    for m in _SNIFF.finditer(head):
        if _classify(m.group(1)[1:-1].split("][")) is not None:
            return True
    return bool(_SNIFF_UNDECORATED.match(head))


def _parse(text: str, source: str) -> ParseResult:
    return parse_unified_gc(text, source)


FORMAT = Format(
    name=NAME,
    description="JVM GC log, JDK 9+ unified logging (-Xlog:gc*), any decorators: pauses, "
                "concurrent phases, safepoints",
    sniff=sniff,
    parse=_parse,
)

__all__ = ["FORMAT", "NAME", "parse_unified_gc", "sniff"]
