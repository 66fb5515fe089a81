"""Parsers: text from any tool -> the same Run/records (pure functions).

`parse(path)` detects the format from the content, not the file name, and says which formats
it tried when none fits. `parse_text(text, format=...)` parses text of a named format.

Each format module defines `FORMAT = Format(...)` (see base.py) and is listed in
`_FORMAT_MODULES`, in detection order: more specific formats first.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from cassperf.errors import ParseError
from cassperf.parsers.base import Format, ParseResult

_FORMAT_MODULES: list[str] = [
    # filled as parsers land; each module defines FORMAT or FORMATS (a list)
    "nodetool",
    "hdr_log",
    "tlp_stress",
    "latte",
    "ycsb",
    "mdadm",
    "iperf3",
    "ping",
    "dstat",
    "gc_unified",
    "gc_jdk8",
    "stress_graph",
    "cassandra_stress",
    "cassandra_stress_legacy",
]


def formats() -> list[Format]:
    """All registered formats, in detection order."""
    out: list[Format] = []
    for mod_name in _FORMAT_MODULES:
        mod = importlib.import_module(f"cassperf.parsers.{mod_name}")
        if hasattr(mod, "FORMATS"):
            out.extend(mod.FORMATS)
        else:
            out.append(mod.FORMAT)
    return out


def format_by_name(name: str) -> Format:
    known = formats()
    for fmt in known:
        if fmt.name == name:
            return fmt
    raise ValueError(f"unknown format {name!r}; known formats: {', '.join(f.name for f in known)}")


def read_text(path: str | Path) -> str:
    """Read a file as text; binary files and undecodable bytes get a ParseError naming the file."""
    p = Path(path)
    data = p.read_bytes()
    if b"\x00" in data[:65536]:
        raise ParseError(str(p), None, None, "a text log, but the file is binary (NUL bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def detect(text: str, source: str = "<text>") -> Format:
    head = text[:65536]
    known = formats()
    for fmt in known:
        if fmt.sniff(head):
            return fmt
    raise ParseError(source, None, None,
                     "one of the known formats (tried: " + ", ".join(f.name for f in known) + ")")


def parse_text(text: str, format: str | None = None, source: str = "<text>") -> ParseResult:
    fmt = format_by_name(format) if format else detect(text, source)
    return fmt.parse(text, source)


def parse(path: str | Path, format: str | None = None) -> ParseResult:
    """Parse one file, detecting its format from the content unless `format` names it."""
    with open(path, "rb") as f:
        head = f.read(65536)
    if format is None and b"\x00" in head:
        raise ParseError(str(path), None, None, "a text log, but the file is binary (NUL bytes); tried: "
                         + ", ".join(f.name for f in formats()))
    text = read_text(path)
    return parse_text(text, format=format, source=str(path))


__all__ = ["Format", "ParseResult", "ParseError", "detect", "format_by_name", "formats", "parse", "parse_text",
           "read_text"]
