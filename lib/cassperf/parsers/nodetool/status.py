"""`nodetool status`: one row per node.

Layouts read (Apache 2.1 to 5.0, DSE 6.7/6.8): one block per datacenter,

    Datacenter: datacenter1
    =======================
    Status=Up/Down
    |/ State=Normal/Leaving/Joining/Moving
    --  Address        Load       Tokens  Owns (effective)  Host ID   Rack
    UN  10.101.35.67   111.09 KB  1       66.7%             d7d8...   rack1

with "Tokens" (a count, vnodes) or "Token" (the token itself, one token per node), "Owns" or
"Owns (effective)", loads in "KB" (2.1) or "KiB"/"MiB"/"GiB" (3.0+), "?" for an unknown load
or ownership. Columns are read by the header's names, not by position, so a re-spaced
capture reads the same.

Frame "nodes" (one row per node, in printed order):
  datacenter, rack, address, host_id (str); state: "U" up / "D" down / "?" (nodetool's
  "Status"); mode: "N" normal, "L" leaving, "J" joining, "M" moving, "S" stopped (DSE)
  (nodetool's "State"); load_bytes (float, the printed load converted at 1 KB = 1 KiB = 1024 B,
  NaN for "?"); tokens (Int64, 1 in the one-token layout); token (str, the one-token layout
  only); owns_pct (float, NaN for "?"); owns_effective (bool: the header said "(effective)").

Rules: the datacenter banner, its "====" rule, the legend and "Note:" lines are known and
not counted. Any other line, a node line before any header, or one whose fields do not fit the
header, is skipped, counted and warned about; when it is the last line the input is taken as truncated
(complete=False). No node line at all is a ParseError.
"""

from __future__ import annotations

import re

from cassperf.parsers.base import Format, ParseResult
from cassperf.parsers.nodetool._common import (
    SIZE_UNIT_RE, frame, head_lines, lines_of, meaningful, missing, no_structure, number, size_bytes, start,
    warn_unterminated,
)

NAME = "nodetool-status"

NODE_COLUMNS: dict[str, str] = {
    "datacenter": "string",
    "rack": "string",
    "state": "string",
    "mode": "string",
    "address": "string",
    "load_bytes": "float64",
    "tokens": "Int64",
    "token": "string",
    "owns_pct": "float64",
    "owns_effective": "boolean",
    "host_id": "string",
}

# Datacenter: datacenter1
_DC_RE = re.compile(r"^Datacenter:\s*(?P<dc>.*?)\s*$")
# =======================
_RULE_RE = re.compile(r"^=+\s*$")
# Status=Up/Down
# |/ State=Normal/Leaving/Joining/Moving/Stopped
_LEGEND_RE = re.compile(r"^(?:Status=|\|/\s*State=)")
# --  Address        Load       Tokens  Owns (effective)  Host ID                               Rack
_HEADER_RE = re.compile(r"^--\s+Address\b")
_HEADER_NAME_RE = re.compile(r"Owns \(effective\)|Host ID|Address|Load|Tokens|Token|Owns|Rack")
# UN  10.101.35.67   111.09 KB  1       66.7%             d7d8a2d8-f9f1-4c42-b534-88dc06942086  rack1
_NODE_RE = re.compile(r"^(?P<state>[UD?])(?P<mode>[NLJMS?])\s+(?P<rest>\S.*)$")
# Note: Non-system keyspaces don't have the same replication settings, effective ownership ...
_NOTE_RE = re.compile(r"^(?:Note|Warning|WARN):", re.IGNORECASE)


def sniff(text: str) -> bool:
    head = head_lines(text, 12)
    return any(_HEADER_RE.match(h) and "Load" in h and ("Host ID" in h or "Owns" in h) for h in head) and \
        any(_DC_RE.match(h) or _LEGEND_RE.match(h) for h in head)


def _header_columns(line: str) -> list[str]:
    return [m.group(0) for m in _HEADER_NAME_RE.finditer(line)]


def _node_row(tokens: list[str], columns: list[str]) -> dict[str, object] | None:
    """Fields of one node line by the header's column names; None when they do not fit."""
    row: dict[str, object] = {}
    i = 0
    for pos, col in enumerate(columns):
        if i >= len(tokens):
            return None
        if col == "Rack" and pos == len(columns) - 1:
            row["rack"] = " ".join(tokens[i:])
            i = len(tokens)
            continue
        tok = tokens[i]
        i += 1
        if col == "Load":
            if i < len(tokens) and SIZE_UNIT_RE.match(tokens[i]) and not missing(tok):
                tok = f"{tok} {tokens[i]}"
                i += 1
            row["load_bytes"] = size_bytes(tok)
        elif col == "Address":
            row["address"] = tok
        elif col == "Tokens":
            row["tokens"] = int(tok)
        elif col == "Token":
            row["token"] = tok
            row["tokens"] = 1
        elif col.startswith("Owns"):
            row["owns_pct"] = number(tok.rstrip("%"))
            row["owns_effective"] = col != "Owns"
        elif col == "Host ID":
            row["host_id"] = None if tok == "null" else tok
        elif col == "Rack":
            row["rack"] = tok
    if i != len(tokens):
        return None
    return row


def parse(text: str, source: str = "<text>") -> ParseResult:
    """Parse `nodetool status` output into the frame "nodes" (see the module docstring)."""
    result = start(text, source, NAME, "nodetool status output")
    rows: list[dict[str, object]] = []
    dc: str | None = None
    columns: list[str] | None = None
    lines = list(meaningful(lines_of(text)))
    for idx, ln in enumerate(lines):
        t = ln.text.strip()
        if m := _DC_RE.match(t):
            dc = m.group("dc")
            columns = None
            continue
        if _RULE_RE.match(t) or _LEGEND_RE.match(t) or _NOTE_RE.match(t):
            continue
        if _HEADER_RE.match(t):
            columns = _header_columns(t)
            continue
        m = _NODE_RE.match(t)
        if m and columns is not None:
            try:
                row = _node_row(m.group("rest").split(), columns)
            except ValueError:
                row = None
            if row is not None:
                row.update(datacenter=dc, state=m.group("state"), mode=m.group("mode"))
                rows.append(row)
                continue
            if idx == len(lines) - 1:
                result.complete = False
                result.warn(ln.no, ln.text, "a whole node line (the input ends inside it: truncated)")
            else:
                result.warn(ln.no, ln.text, "a node line whose fields fit the header " + " | ".join(columns))
            result.skipped_lines += 1
            continue
        if m:
            result.warn(ln.no, ln.text, "the '--  Address  Load ...' header before node lines")
        else:
            result.warn(ln.no, ln.text, "a status line: 'Datacenter: <name>', the legend, the '--  Address  Load ...' "
                                        "header or a node line such as 'UN  10.0.0.1  1.2 MiB  16  33.3%  ...'")
        result.skipped_lines += 1
    if not rows:
        raise no_structure(source, text, "nodetool status output: a '--  Address  Load ...' header and node lines "
                                         "such as 'UN  10.0.0.1  1.2 MiB  16  33.3%  <host id>  rack1'")
    warn_unterminated(text, result)
    result.tables["nodes"] = frame(rows, NODE_COLUMNS)
    return result


FORMAT = Format(NAME, "nodetool status: one row per node (state, load, tokens, ownership, host id)", sniff, parse)

__all__ = ["FORMAT", "NAME", "NODE_COLUMNS", "parse", "sniff"]
