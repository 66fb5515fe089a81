"""JDK 9+ unified GC logging (-Xlog:gc*,safepoint...) -> pauses, concurrent phases, safepoints.

Decorators are decoded by their shape, in any order or combination: time / utctime
(2024-08-23T12:45:13.657+0530), uptime (4.298s), timemillis / uptimemillis (…ms, told apart by
magnitude: >= 1e11 ms is epoch time), timenanos / uptimenanos (…ns, >= 1e17 ns is epoch time),
pid and tid (integers), level (info, debug, ...), tags (gc,start) and hostname. The layout found
on one line becomes a regex prefix (capturing only the time decorators) that is joined to each
event pattern, so a line that fits the layout is decoded by a single match; a line that does not
is classified afresh and, if its decorators all have known shapes, becomes the new layout.

Speed: the parser never walks lines in Python. It finds the few literals that only event lines
carry (") Pause ", ") Concurrent ", 'Safepoint "', "Total time for which") with str.find, whose
skip-ahead search runs at GB/s, and matches just those lines; the common G1 pause line has its
own pattern. Rows are appended as tuples and become one DataFrame per table at the end.

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

_ISO_KIND, _UP_S, _UP_MS, _UP_NS, _EPOCH_MS, _EPOCH_NS = range(6)
_KIND_PATTERNS = {
    _ISO_KIND: r"\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4})\]",
    _UP_S: r"\[(\d+[.,]\d+)s\]",
    _UP_MS: r"\[(\d+)ms\]", _EPOCH_MS: r"\[(\d+)ms\]",
    _UP_NS: r"\[(\d+)ns\]", _EPOCH_NS: r"\[(\d+)ns\]",
}
_ANY_DECORATOR = r"\[[^\]\n]*\]"


@dataclass(frozen=True)
class _Layout:
    """A decorator layout: the regex prefix that matches it (capturing the time decorators, in
    order, as `kinds`) and where those captures go."""

    prefix: str                 # regex source matching "[..][..] " up to the message
    kinds: tuple[int, ...]      # kind of each captured group, in order
    iso: int                    # index among the captures of the ISO time, -1 if none
    up: int                     # ... of the uptime
    up_kind: int
    epoch: int                  # ... of timemillis/timenanos
    epoch_kind: int

    @property
    def groups(self) -> int:
        return len(self.kinds)

    def times(self, g: tuple[str | None, ...]) -> tuple[str | None, float, float]:
        """(iso time, epoch ms, uptime s) from the first `groups` captures of a match."""
        iso = g[self.iso] if self.iso >= 0 else None
        up = epoch = math.nan
        if self.up >= 0:
            raw = g[self.up]
            assert raw is not None
            if self.up_kind == _UP_S:
                up = num(raw)
            else:
                up = int(raw) / (1e3 if self.up_kind == _UP_MS else 1e9)
                if up >= 1e8:                # ~3 years: an epoch time in the uptime's place
                    epoch, up = up * 1e3, math.nan
        if self.epoch >= 0:
            raw = g[self.epoch]
            assert raw is not None
            epoch = int(raw) / (1.0 if self.epoch_kind == _EPOCH_MS else 1e6)
            if epoch < 1e11:                 # before 1973: an uptime in the epoch time's place
                epoch, up = math.nan, epoch / 1e3
        return iso, epoch, up


_UNDECORATED = _Layout("", (), -1, -1, _UP_S, -1, _EPOCH_MS)


def _classify(items: list[str]) -> _Layout | None:
    """The layout of one line's decorator list, by shape; None if any decorator has no known
    shape. An empty list is the undecorated layout."""
    if not items:
        return _UNDECORATED
    parts: list[str] = []
    kinds: list[int] = []
    for item in items:
        kind = -1
        if _ISO.fullmatch(item):
            kind = _ISO_KIND if _ISO_KIND not in kinds else -1
        elif _SECONDS.fullmatch(item):
            kind = _UP_S
        elif m := _INT_UNIT.fullmatch(item):
            value = int(m.group(1))
            if m.group(2) == "ms":
                kind = _EPOCH_MS if value >= 10**11 else _UP_MS
            else:
                kind = _EPOCH_NS if value >= 10**17 else _UP_NS
        elif not (_INT.fullmatch(item) or _LEVEL.fullmatch(item) or _TAGS.fullmatch(item)
                  or _HOST.fullmatch(item)):
            return None
        if kind >= 0:
            parts.append(_KIND_PATTERNS[kind])
            kinds.append(kind)
        else:
            parts.append(_ANY_DECORATOR)
    ups = [i for i, k in enumerate(kinds) if k in (_UP_S, _UP_MS, _UP_NS)]
    epochs = [i for i, k in enumerate(kinds) if k in (_EPOCH_MS, _EPOCH_NS)]
    up = ups[-1] if ups else -1
    epoch = epochs[-1] if epochs else -1
    return _Layout("".join(parts) + " ", tuple(kinds), kinds.index(_ISO_KIND) if _ISO_KIND in kinds else -1,
                   up, kinds[up] if up >= 0 else _UP_S, epoch, kinds[epoch] if epoch >= 0 else _EPOCH_MS)


_COMPILED: dict[tuple[str, str], re.Pattern[str]] = {}
_EMPTY = re.compile("")


def _prefix(layout: _Layout) -> re.Pattern[str]:
    """The layout's decorator prefix alone, compiled once."""
    return _joined(layout, _EMPTY)


def _joined(layout: _Layout, body: re.Pattern[str]) -> re.Pattern[str]:
    """`body` preceded by the layout's decorator prefix, compiled once per pair."""
    key = (layout.prefix, body.pattern)
    pattern = _COMPILED.get(key)
    if pattern is None:
        if len(_COMPILED) > 512:              # many distinct layouts (fuzzing): start afresh
            _COMPILED.clear()
        pattern = _COMPILED[key] = re.compile(layout.prefix + body.pattern)
    return pattern


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
    """State of one parse: the text, builders, the current decorator layout, warnings keyed by
    character position."""

    def __init__(self, text: str, source: str, layout: _Layout) -> None:
        self.text = text
        self.result = ParseResult(format=NAME, source=source)
        self.pauses = EventColumns(GcPause, logged_at_end=True)
        self.concurrent = EventColumns(GcConcurrent, logged_at_end=True)
        self.safepoints = EventColumns(GcSafepoint, logged_at_end=True)
        self.layout = layout
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

    def relayout(self, start: int, body: int) -> bool:
        """Classify the decorators between line start and message `body`; True when they have
        known shapes and differ from the current layout (which they then replace)."""
        if body < start:
            return False
        fits = _prefix(self.layout).match(self.text, start, body)
        if fits is not None and fits.end() == body:
            return False                                # the current layout fits: nothing to learn
        decorators = self.text[start:body]
        if decorators:
            if not (decorators.startswith("[") and decorators.endswith("] ")):
                return False
            layout = _classify(decorators[1:-2].split("]["))
        else:
            layout = _UNDECORATED
        if layout is None or layout == self.layout:
            return False
        self.layout = layout
        return True

    # -- scans: each finds its literal, takes the line around it, matches layout + event --
    def scan_pauses(self) -> None:
        text = self.text
        find, rfind, n = text.find, text.rfind, len(text)
        add = self.pauses.rows.append
        starts = self.starts
        layout = self.layout
        fast, general = _joined(layout, _PAUSE_G1_YOUNG).match, _joined(layout, _PAUSE_END).match
        hit = find(_LIT_PAUSE)
        while hit >= 0:
            start = rfind("\n", 0, hit) + 1
            end = find("\n", hit)
            if end < 0:
                end = n
            stop = end - 1 if text[end - 1] == "\r" else end
            hit = find(_LIT_PAUSE, end)
            if not text.endswith("ms", start, stop):
                self.pause_start_or_bad(start, stop, end)      # a gc,start line (or a cut one)
                continue
            for _attempt in (0, 1):
                m = fast(text, start, stop)
                if m is not None:
                    g = m.groups()
                    k = layout.groups
                    gc_id, kind, cause, before, after, total, pause_ms = g[k:]
                    pause = num(pause_ms)
                    if pause > MAX_DURATION_MS:
                        self.bad_line(start, stop, end, f"a pause shorter than {MAX_DURATION_MS:.0f} ms")
                        break
                    gc = int(gc_id)
                    if starts:
                        starts.pop(gc, None)
                    iso, epoch, up = layout.times(g)
                    add((iso, epoch, up, gc, _G1_KIND[kind], None, cause, float(before), float(after),
                         float(total), pause, start))
                    self.g1_marker = True
                    break
                m = general(text, start, stop)
                if m is not None:
                    self.general_pause(m, layout, start, stop, end)
                    break
                if _attempt == 0 and self.relayout(start, rfind("GC(", start, stop)):
                    layout = self.layout
                    fast, general = _joined(layout, _PAUSE_G1_YOUNG).match, _joined(layout, _PAUSE_END).match
                    continue
                self.pause_start_or_bad(start, stop, end)
                break

    def general_pause(self, m: re.Match[str], layout: _Layout, start: int, stop: int, end: int) -> None:
        g = m.groups()
        k = layout.groups
        gc_id, label, b, bu, a, au, t, tu, pause_ms = g[k:]
        pause = num(pause_ms)
        if pause > MAX_DURATION_MS:
            self.bad_line(start, stop, end, f"a pause shorter than {MAX_DURATION_MS:.0f} ms")
            return
        gc = int(gc_id)
        words, groups = split_groups(label)
        if any(x in G1_YOUNG_TYPES or x.startswith("G1 ") for x in groups):
            self.g1_marker = True
        if b is not None:
            before, after, total = to_mb(b, bu), to_mb(a, au), to_mb(t, tu)
        else:
            before = after = total = math.nan
        self.starts.pop(gc, None)
        iso, epoch, up = layout.times(g)
        self.pauses.rows.append((iso, epoch, up, gc, kind_from_label(words, groups), None,
                                 cause_from_groups(groups), before, after, total, pause, start))

    def pause_start_or_bad(self, start: int, stop: int, end: int) -> None:
        """A line with ') Pause ' that is no pause end line: a gc,start line, or bad."""
        text = self.text
        body = text.rfind("GC(", start, stop)
        m = _PAUSE_START.match(text, body, stop) if body >= start else None
        if m is not None and end < len(text) and (body == start or text.startswith("] ", body - 2)):
            self.starts[int(m.group(1))] = (start, m.group(2))
            return
        self.bad_line(start, stop, end,
                      "a pause line '[<decorators>] GC(n) Pause <kind> (<cause>) <before>M-><after>M(<total>M) <ms>ms'")

    def scan_concurrent(self) -> None:
        text = self.text
        find, rfind, n = text.find, text.rfind, len(text)
        add = self.concurrent.rows.append
        layout = self.layout
        match = _joined(layout, _CONC_END).match
        hit = find(_LIT_CONC)
        while hit >= 0:
            start = rfind("\n", 0, hit) + 1
            end = find("\n", hit)
            if end < 0:
                end = n
            stop = end - 1 if text[end - 1] == "\r" else end
            hit = find(_LIT_CONC, end)
            if not text.endswith("ms", start, stop):
                if end == n:
                    self.bad_line(start, stop, end,
                                  "a concurrent phase line '[<decorators>] GC(n) Concurrent <phase> <ms>ms'")
                continue                               # a phase's start line: no duration yet
            m = match(text, start, stop)
            if m is None and self.relayout(start, rfind("GC(", start, stop)):
                layout = self.layout
                match = _joined(layout, _CONC_END).match
                m = match(text, start, stop)
            if m is None:
                self.bad_line(start, stop, end, "a concurrent phase line '[<decorators>] GC(n) Concurrent <phase> <ms>ms'")
                continue
            g = m.groups()
            k = layout.groups
            gc_id, phase, duration_ms = g[k:]
            duration = num(duration_ms)
            if duration > MAX_DURATION_MS:
                self.bad_line(start, stop, end, f"a phase shorter than {MAX_DURATION_MS:.0f} ms")
                continue
            iso, epoch, up = layout.times(g)
            add((iso, epoch, up, int(gc_id), None, phase, duration, start))

    def scan_safepoints(self) -> None:
        text = self.text
        find, rfind, n = text.find, text.rfind, len(text)
        add = self.safepoints.rows.append
        for literal, body_pattern, expected in (
                (_LIT_SAFEPOINT, _SAFEPOINT, 'a safepoint line \'[<decorators>] Safepoint "<op>", ... Total: <n> ns\''),
                (_LIT_STOPPED, _STOPPED, "'[<decorators>] Total time for which application threads were stopped: "
                                         "<s> seconds, Stopping threads took: <s> seconds'")):
            layout = self.layout
            match = _joined(layout, body_pattern).match
            jdk17 = body_pattern is _SAFEPOINT
            hit = find(literal)
            while hit >= 0:
                start = rfind("\n", 0, hit) + 1
                end = find("\n", hit)
                if end < 0:
                    end = n
                stop = end - 1 if text[end - 1] == "\r" else end
                body = hit
                hit = find(literal, end)
                m = match(text, start, stop)
                if m is None and self.relayout(start, body):
                    layout = self.layout
                    match = _joined(layout, body_pattern).match
                    m = match(text, start, stop)
                if m is None:
                    self.bad_line(start, stop, end, expected)
                    continue
                g = m.groups()
                k = layout.groups
                if jdk17:
                    operation: str | None = g[k]
                    stopped, ttsp = int(g[k + 5]) / 1e6, int(g[k + 2]) / 1e6
                else:
                    operation = None
                    stopped, ttsp = round(num(g[k]) * 1e3, 7), round(num(g[k + 1]) * 1e3, 7)
                if stopped > MAX_DURATION_MS:
                    self.bad_line(start, stop, end, f"a stop shorter than {MAX_DURATION_MS:.0f} ms")
                    continue
                iso, epoch, up = layout.times(g)
                add((iso, epoch, up, operation, stopped, ttsp, start))
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


def _first_layout(text: str) -> _Layout | None:
    """The decorator layout of the first line in the first 64 KiB whose decorators all have
    known shapes; the undecorated layout when the first line is an undecorated GC line
    (-Xlog:gc:file:none); None when the text is not unified logging."""
    head = text[:65536]
    for m in _BRACKET_LINE.finditer(head):
        dec = _DECORATORS.match(m.group(1))
        if dec is not None and dec.group(1) and len(dec.group(1)) < len(m.group(1)):
            layout = _classify(dec.group(1)[1:-1].split("]["))
            if layout is not None:
                return layout
    first = head.lstrip().split("\n", 1)[0]
    if _UNDECORATED_START.match(first):
        return _UNDECORATED
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
    layout = _first_layout(text)
    if layout is None:
        first_no, first = next(((i, line) for i, line in enumerate(text[:65536].splitlines(), 1) if line.strip()),
                               (None, None))
        raise ParseError(source, first_no, first, _EXPECTED)
    state = _Parse(text, source, layout)
    state.scan_pauses()
    state.scan_concurrent()
    state.scan_safepoints()
    if layout != _UNDECORATED:
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
