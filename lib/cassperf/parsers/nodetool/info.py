"""`nodetool info`: one node's identity, load, memory, caches.

Layout (Apache 2.1 to 5.0, DSE): "Key : value" lines, the key padded to 23 characters,

    ID                     : 6445a547-5d5e-4fd1-b3a7-2b83de6c0657
    Load                   : 107.43 KB
    Heap Memory (MB)       : 517.57 / 1976.00
    Key Cache              : entries 11, size 840 bytes, capacity 98 MB, 18354 hits, ...
    Token                  : 3074457345618258602

Frames:
  "info" (one row): host_id, gossip_active, thrift_active, native_transport_active (boolean),
    load_bytes, uncompressed_load_bytes (5.0) (float, the printed size at 1 KB = 1 KiB = 1024 B),
    generation_no (Int64),
    uptime_s (Int64), heap_used_mb, heap_total_mb, off_heap_mb (float, MiB as nodetool prints
    them), datacenter, rack (str), exceptions (Int64), percent_repaired_pct (float),
    token (str, when exactly one is printed), token_count (Int64: the printed tokens, or the
    N of "(invoke with -T/--tokens to see all N tokens)"), and every other key (e.g. 4.x's
    "Bootstrap state") as a string column named in snake_case.
  "info_raw": key, value as printed, one row per line, in order.
  "caches": one row per cache line: cache ("key", "row", "counter", "chunk", "network"),
    entries, hits, misses, requests (Int64), size_bytes, capacity_bytes, overflow_size_bytes
    (float), recent_hit_rate (float 0..1, NaN when nodetool prints NaN), save_period_s (Int64),
    miss_latency_us (float, converted from the printed unit).

Rules: a line without "key :" is skipped, counted and warned about; a cache field not known
is warned about. nodetool prints "Token" last (5.0: followed by four Bootstrap/Decommission
lines), so input without a Token line is taken as truncated (complete=False, warned). Input with none of ID / Gossip active / Load / Uptime is a
ParseError.
"""

from __future__ import annotations

import math
import re

from cassperf.parsers.base import Format, ParseResult
from cassperf.parsers.nodetool._common import (
    frame, head_lines, integer, lines_of, meaningful, missing, no_structure, number, size_bytes, snake, start,
    warn_unterminated,
)

NAME = "nodetool-info"

INFO_COLUMNS: dict[str, str] = {
    "host_id": "string",
    "gossip_active": "boolean",
    "thrift_active": "boolean",
    "native_transport_active": "boolean",
    "load_bytes": "float64",
    "uncompressed_load_bytes": "float64",
    "generation_no": "Int64",
    "uptime_s": "Int64",
    "heap_used_mb": "float64",
    "heap_total_mb": "float64",
    "off_heap_mb": "float64",
    "datacenter": "string",
    "rack": "string",
    "exceptions": "Int64",
    "percent_repaired_pct": "float64",
    "token": "string",
    "token_count": "Int64",
}

CACHE_COLUMNS: dict[str, str] = {
    "cache": "string",
    "entries": "Int64",
    "size_bytes": "float64",
    "capacity_bytes": "float64",
    "overflow_size_bytes": "float64",
    "hits": "Int64",
    "misses": "Int64",
    "requests": "Int64",
    "recent_hit_rate": "float64",
    "save_period_s": "Int64",
    "miss_latency_us": "float64",
}

# Native Transport active: true
# Heap Memory (MB)       : 517.57 / 1976.00
_KV_RE = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9 ()/%._-]*?)\s*:\s?(?P<value>.*?)\s*$")
# 517.57 / 1976.00
_HEAP_RE = re.compile(r"^(?P<used>\S+)\s*/\s*(?P<total>\S+)$")
# (invoke with -T/--tokens to see all 256 tokens)
_TOKENS_HIDDEN_RE = re.compile(r"see all (?P<n>\d+) tokens")
# Key Cache              : entries 11, size 840 bytes, capacity 98 MB, 18354 hits, ...
_CACHE_KEY_RE = re.compile(r"^(?P<name>\w+) Cache$")
# entries 11 | size 840 bytes | capacity 98 MB | overflow size: 0 bytes
_CACHE_NAMED_RE = re.compile(r"^(?P<field>entries|size|capacity|overflow size):?\s+(?P<value>.+)$")
# 18354 hits | 138 misses | 18375 requests | 0.999 recent hit rate | 14400 save period in seconds
_CACHE_SUFFIX_RE = re.compile(
    r"^(?P<value>\S+)\s+(?P<field>hits|misses|requests|recent hit rate|save period in seconds)$")
# NaN microseconds miss latency
_CACHE_MISS_LATENCY_RE = re.compile(r"^(?P<value>\S+)\s+(?P<unit>\w+)\s+miss latency$")

_LATENCY_UNITS_US: dict[str, float] = {
    "nanoseconds": 1e-3, "microseconds": 1.0, "milliseconds": 1e3, "seconds": 1e6,
}

_KNOWN_KEYS = ("ID", "Gossip active", "Load", "Uptime (seconds)", "Generation No", "Heap Memory (MB)",
               "Native Transport active", "Data Center")


def sniff(text: str) -> bool:
    keys = set()
    for h in head_lines(text, 10):
        m = _KV_RE.match(h)
        if m and m.group("key") in _KNOWN_KEYS:
            keys.add(m.group("key"))
    return len(keys) >= 3


def _bool(value: str) -> bool | None:
    v = value.strip().lower()
    return True if v == "true" else False if v == "false" else None


def _cache_row(name: str, value: str, result: ParseResult, line_no: int, line: str) -> dict[str, object]:
    row: dict[str, object] = {"cache": name.lower()}
    for part in (p.strip() for p in value.split(", ")):
        try:
            if m := _CACHE_NAMED_RE.match(part):
                field = m.group("field")
                if field == "entries":
                    row["entries"] = integer(m.group("value"))
                else:
                    row[field.replace(" ", "_") + "_bytes"] = size_bytes(m.group("value"))
            elif m := _CACHE_SUFFIX_RE.match(part):
                field = m.group("field")
                if field == "recent hit rate":
                    row["recent_hit_rate"] = number(m.group("value"))
                elif field == "save period in seconds":
                    row["save_period_s"] = integer(m.group("value"))
                else:
                    row[field] = integer(m.group("value"))
            elif m := _CACHE_MISS_LATENCY_RE.match(part):
                factor = _LATENCY_UNITS_US.get(m.group("unit").lower())
                if factor is None:
                    result.warn(line_no, line, f"a miss latency unit of {sorted(_LATENCY_UNITS_US)}")
                else:
                    row["miss_latency_us"] = number(m.group("value")) * factor
            else:
                result.warn(line_no, line, f"a known cache field (entries, size, capacity, hits, ...), not {part!r}")
        except ValueError:
            result.warn(line_no, line, f"a number in cache field {part!r}")
    return row


def parse(text: str, source: str = "<text>") -> ParseResult:
    """Parse `nodetool info` output into "info", "info_raw" and "caches" (see module docstring)."""
    result = start(text, source, NAME, "nodetool info output")
    info: dict[str, object] = {}
    raw: list[dict[str, object]] = []
    caches: list[dict[str, object]] = []
    tokens: list[str] = []
    hidden_tokens: int | None = None
    known_seen = 0
    for ln in meaningful(lines_of(text)):
        m = _KV_RE.match(ln.text.strip())
        if not m:
            result.skipped_lines += 1
            result.warn(ln.no, ln.text, "a 'Key : value' line")
            continue
        key, value = m.group("key"), m.group("value")
        raw.append({"key": key, "value": value})
        known_seen += key in _KNOWN_KEYS
        try:
            if key == "ID":
                info["host_id"] = value
            elif key in ("Gossip active", "Thrift active", "Native Transport active"):
                info[snake(key)] = _bool(value)
            elif key == "Load":
                info["load_bytes"] = size_bytes(value)
            elif key == "Uncompressed load":
                info["uncompressed_load_bytes"] = size_bytes(value)
            elif key == "Generation No":
                info["generation_no"] = integer(value)
            elif key == "Uptime (seconds)":
                info["uptime_s"] = integer(value)
            elif key == "Heap Memory (MB)":
                hm = _HEAP_RE.match(value)
                if hm:
                    info["heap_used_mb"], info["heap_total_mb"] = number(hm.group("used")), number(hm.group("total"))
                elif not missing(value):
                    raise ValueError(value)
            elif key == "Off Heap Memory (MB)":
                info["off_heap_mb"] = number(value)
            elif key == "Data Center":
                info["datacenter"] = value
            elif key == "Rack":
                info["rack"] = value
            elif key == "Exceptions":
                info["exceptions"] = integer(value)
            elif key == "Percent Repaired":
                info["percent_repaired_pct"] = number(value.rstrip("%"))
            elif key == "Token":
                if hm := _TOKENS_HIDDEN_RE.search(value):
                    hidden_tokens = int(hm.group("n"))
                elif not value.startswith("("):
                    tokens.append(value)
                else:
                    hidden_tokens = 0       # "(node is not joined to the cluster)"
            elif cm := _CACHE_KEY_RE.match(key):
                caches.append(_cache_row(cm.group("name"), value, result, ln.no, ln.text))
            else:
                # an unknown field whose name slugs to a typed column ("Thrift active%") must not put
                # its text there: it keeps its own name, as the raw table does
                slug = snake(key)
                info[f"field_{slug}" if slug in INFO_COLUMNS else slug] = value
        except ValueError:
            result.warn(ln.no, ln.text, f"a number (or size) as the value of {key!r}")
    if known_seen == 0:
        raise no_structure(source, text, "nodetool info output: 'ID : <host id>', 'Gossip active : true', "
                                         "'Load : 1.2 MiB', 'Uptime (seconds) : 123' lines")
    if tokens:
        info["token"] = tokens[0] if len(tokens) == 1 else None
        info["token_count"] = len(tokens)
    elif hidden_tokens is not None:
        info["token_count"] = hidden_tokens
    else:
        result.complete = False
        result.warn(None, None, "a 'Token :' line, which nodetool info prints at its end (the input is truncated)")
    for name in ("heap_used_mb", "heap_total_mb"):
        info.setdefault(name, math.nan)
    warn_unterminated(text, result)
    result.tables["info"] = frame([info], INFO_COLUMNS)
    result.tables["info_raw"] = frame(raw, {"key": "string", "value": "string"})
    result.tables["caches"] = frame(caches, CACHE_COLUMNS)
    return result


FORMAT = Format(NAME, "nodetool info: node identity, load, uptime, heap, caches", sniff, parse)

__all__ = ["CACHE_COLUMNS", "FORMAT", "INFO_COLUMNS", "NAME", "parse", "sniff"]
