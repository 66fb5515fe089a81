"""Helpers shared by the nodetool parsers: numbers, sizes, lines, frames.

Sizes: every size nodetool prints is binary, whatever its label says. Apache 2.1's
FileUtils.stringifyFileSize printed "KB"/"MB"/"GB" for powers of 1024, 3.x+ prints
"KiB"/"MiB"/"GiB", FBUtilities.prettyPrintMemory prints "0.000KiB" or "0B" (no space).
So 1 KB = 1 KiB = 1024 B here. A printed size is rounded (two or three decimals), so a
converted size is the printed figure in bytes, not the node's exact byte count.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import pandas as pd

from cassperf.errors import ParseError
from cassperf.parsers.base import ParseResult, check_text, to_float

#: Tokens nodetool prints where a number is not available.
MISSING_TOKENS = frozenset({"n/a", "na", "null", "?", "none", "-", ""})

_UNIT_POWERS: dict[str, int] = {
    "b": 0, "byte": 0, "bytes": 0,
    "k": 1, "kb": 1, "kib": 1,
    "m": 2, "mb": 2, "mib": 2,
    "g": 3, "gb": 3, "gib": 3,
    "t": 4, "tb": 4, "tib": 4,
    "p": 5, "pb": 5, "pib": 5,
    "e": 6, "eb": 6, "eib": 6,
}

# '111.09 KB', '306.77 KiB', '0.000KiB', '0B', '840 bytes', '1.79 GiB', '98 MB'
_SIZE_RE = re.compile(r"^\s*(?P<num>-?[0-9][0-9,]*(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)\s*(?P<unit>[A-Za-z]+)?\s*$")

#: a size unit on its own, as a separate token after a number ('111.09', 'KB')
SIZE_UNIT_RE = re.compile(r"^(?:[KMGTPE]i?B|[KMGTPE]|B|bytes?)$", re.IGNORECASE)

# a shell prompt echoed into a pasted capture: 'root@c1bf4c2d5378:/# nodetool gcstats',
# '$ nodetool status', 'cassandra@node1:~$ nodetool -h 127.0.0.1 info', and a diagnostic
# collector's trailer ' nodetool rc=0'. ("nodetool: Failed to connect" does not match.)
PROMPT_RE = re.compile(r"^\s*(?:\S*[#$%>]\s*)?(?:\S*/)?nodetool(?:\s+.*)?$")

_SNAKE_RE = re.compile(r"[^0-9a-z]+")


def missing(token: str) -> bool:
    return token.strip().lower() in MISSING_TOKENS


def number(token: str) -> float:
    """A number as nodetool prints it; 'N/A', 'null', '?' and 'NaN' become NaN.

    Raises ValueError for anything else that is not a number.
    """
    t = token.strip()
    if missing(t):
        return math.nan
    return to_float(t)


def integer(token: str) -> int | None:
    """An integer count; None for 'N/A'/'null'/'?'. Raises ValueError for a non-integer."""
    t = token.strip()
    if missing(t) or t.lower() in ("nan", "-nan"):
        return None
    value = to_float(t)
    if not math.isfinite(value) or value != int(value):
        raise ValueError(f"not an integer: {token!r}")
    return int(value)


def size_bytes(text: str) -> float:
    """A printed size in bytes: '111.09 KB' -> 113756.16, '0B' -> 0.0, '4680' -> 4680.0.

    A bare number is bytes. 'N/A', '?', 'null', 'NaN' -> NaN. Raises ValueError otherwise.
    The product is computed in decimal so '111.09 KB' gives the float nearest 111.09 * 1024.
    """
    t = text.strip()
    if missing(t) or t.lower() in ("nan", "-nan"):
        return math.nan
    m = _SIZE_RE.match(t)
    if not m:
        raise ValueError(f"not a size: {text!r}")
    unit = (m.group("unit") or "b").lower()
    if unit not in _UNIT_POWERS:
        raise ValueError(f"unknown size unit in {text!r}")
    num = m.group("num").replace(",", "")
    try:
        value = Decimal(num) * (Decimal(1024) ** _UNIT_POWERS[unit])
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only decimals
        raise ValueError(f"not a size: {text!r}") from exc
    return float(value)


def snake(label: str) -> str:
    """'Space used by snapshots (total)' -> 'space_used_by_snapshots_total'."""
    return _SNAKE_RE.sub("_", label.strip().lower()).strip("_") or "value"


def merge_size_tokens(tokens: list[str]) -> list[str]:
    """Join a number and a following unit token: ['111.09', 'KB', '1'] -> ['111.09 KB', '1']."""
    out: list[str] = []
    for tok in tokens:
        if out and SIZE_UNIT_RE.match(tok) and _SIZE_RE.match(out[-1]) and not _SIZE_RE.match(out[-1]).group("unit"):
            out[-1] = f"{out[-1]} {tok}"
        else:
            out.append(tok)
    return out


@dataclass(frozen=True)
class Line:
    """One input line with its 1-based number; text has the line ending removed."""

    no: int
    text: str


def lines_of(text: str) -> list[Line]:
    return [Line(i, t.rstrip("\r")) for i, t in enumerate(text.split("\n"), start=1)]


def meaningful(lines: Iterable[Line]) -> Iterator[Line]:
    """Lines that are neither blank nor an echoed shell prompt running nodetool."""
    for ln in lines:
        if ln.text.strip() and not PROMPT_RE.match(ln.text):
            yield ln


def head_lines(text: str, limit: int = 40) -> list[str]:
    """The first `limit` meaningful lines of a sniff sample (for sniff() functions)."""
    out: list[str] = []
    for ln in meaningful(lines_of(text[:65536])):
        out.append(ln.text)
        if len(out) >= limit:
            break
    return out


def start(text: str, source: str, fmt: str, what: str) -> ParseResult:
    """Reject empty/binary input, and return an empty ParseResult of format `fmt`."""
    check_text(text, source, what)
    return ParseResult(format=fmt, source=source)


def frame(rows: list[dict[str, object]], columns: dict[str, str]) -> pd.DataFrame:
    """A frame with exactly `columns` (name -> dtype) first, then any extra keys in order seen.

    Extra keys (fields a newer nodetool added) keep their inferred dtype; float for numbers.
    """
    extra: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns and key not in extra:
                extra.append(key)
    names = list(columns) + extra
    data = {name: [row.get(name) for row in rows] for name in names}
    df = pd.DataFrame(data, columns=names)
    for name, dtype in columns.items():
        if dtype == "float64":
            df[name] = pd.to_numeric(df[name], errors="raise").astype("float64")
        else:
            df[name] = df[name].astype(dtype)
    for name in extra:
        values = [v for v in data[name] if v is not None]
        if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            df[name] = pd.to_numeric(df[name]).astype("float64")
        else:
            df[name] = df[name].astype("string")
    return df


def warn_unterminated(text: str, result: ParseResult, exempt: re.Pattern[str] | None = None) -> None:
    """Mark input whose last line has no line ending as cut (complete=False, warned at that line).

    nodetool ends every line it prints with a line ending, so a last line without one was cut
    (or the capture was edited, e.g. stripped): its last value may be short. The line is still
    read; the warning names it so that no number from it passes unflagged. `exempt` matches a
    last line nodetool itself prints without a line ending.
    """
    tail = text.rsplit("\n", 1)[-1].rstrip("\r")
    if tail.strip() and not PROMPT_RE.match(tail) and not (exempt and exempt.match(tail.strip())):
        result.complete = False
        result.warn(text.count("\n") + 1, tail, "a line ending after the last line (nodetool ends every line "
                                                "with one): the input was cut, and this line may be cut short")


def no_structure(source: str, text: str, expected: str) -> ParseError:
    """The ParseError for input in which the command's layout was not found at all."""
    first = next(meaningful(lines_of(text)), None)
    if first is None:
        return ParseError(source, None, None, expected)
    return ParseError(source, first.no, first.text, expected)
