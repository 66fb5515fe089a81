"""What every parser returns, and how formats register themselves for detection.

A parser is a pure function: text in, a `ParseResult` out. Load-generator outputs become
`Run`s (cassperf.results); everything else (nodetool, GC logs, network baselines) becomes named
tidy frames in `tables`. Lines a parser does not understand are skipped by a documented rule
and counted in `skipped_lines`; anything that may change a number is a `warning`
(a ParseProblem naming path, line and what was expected). Input that cannot be read at all
raises `cassperf.errors.ParseError`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from cassperf.errors import ParseError, ParseProblem
from cassperf.results.model import Run


@dataclass
class ParseResult:
    format: str                                   # registered format name, e.g. "cassandra-stress"
    source: str                                   # path, or "<text>"
    runs: list[Run] = field(default_factory=list)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    warnings: list[ParseProblem] = field(default_factory=list)
    skipped_lines: int = 0
    complete: bool = True                          # False: truncated input, what was there is returned

    def warn(self, line_no: int | None, line: str | None, expected: str) -> None:
        self.warnings.append(ParseProblem(self.source, line_no, line, expected))


@dataclass(frozen=True)
class Format:
    """A registered input format.

    sniff(text) -> bool looks at the content (never the file name) and must be cheap: it gets at
    most the first 64 KiB. parse(text, source) -> ParseResult.
    """

    name: str
    description: str
    sniff: Callable[[str], bool]
    parse: Callable[[str, str], ParseResult]


def check_text(text: str, source: str, expected: str) -> None:
    """Reject empty and binary input with a ParseError that says what was expected."""
    if not text.strip():
        raise ParseError(source, None, None, f"{expected}, but the input is empty")
    if "\x00" in text[:65536]:
        raise ParseError(source, None, None, f"{expected}, but the input is binary (NUL bytes)")


def to_float(token: str) -> float:
    """A number as tools print it: '9,645' (thousands) or '0,5' (decimal comma, when the token
    has exactly one comma followed by other than three digits), 'NaN', '-0.0'."""
    t = token.strip()
    if t.lower() in ("nan", "-nan"):
        return float("nan")
    if "," in t:
        head, _, tail = t.rpartition(",")
        if t.count(",") == 1 and "." not in t and len(tail) != 3:
            t = head + "." + tail
        else:
            t = t.replace(",", "")
    return float(t)
