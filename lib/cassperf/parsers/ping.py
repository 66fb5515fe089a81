"""ping output -> replies and the statistics ping printed (pure functions).

Handles Linux iputils ping (with or without -D epoch timestamps, -O "no answer yet" lines,
duplicates, ICMP errors) and BSD/macOS/busybox ping ("round-trip min/avg/max[/stddev]").
Several runs in one file (each starting with a "PING host" line) become run 0, 1, ...

tables["replies"]  one row per echo reply line:
    run, seq, ttl, bytes, from_host, rtt_ms (milliseconds, as printed), time (UTC, from -D;
    NaT without -D), duplicate (iputils/BSD "(DUP!)")
tables["summary"]  one row per run that printed its statistics, exactly as printed:
    run, destination, destination_ip, transmitted, received, duplicates, corrupted, errors,
    loss_pct, total_time_ms, rtt_min_ms, rtt_avg_ms, rtt_max_ms, rtt_mdev_ms, rtt_spread,
    pipe, ipg_ms, ewma_ms
    rtt_mdev_ms holds iputils' "mdev" or BSD's "stddev" (both the population standard
    deviation of the RTTs); rtt_spread says which word the tool printed.
tables["errors"]   one row per ICMP error or unanswered probe line:
    run, seq, from_host, kind ("icmp_error" | "no_answer"), message, time (UTC or NaT)

Integers longer than int64 can hold do not match (so such a line is skipped, or a counts part
is a warning). Line rule: blank lines and "^C" are ignored; lines that match none of the shapes above (the
continuation lines of BSD error dumps, shell prompts, garbage) are skipped and counted in
skipped_lines.

Cross-checks (each mismatch is a warning, never a silent fix), made only when the run shows
reply lines at all (ping -q and summary-only fragments show none):
  - unique replies == received, "(DUP!)" lines == duplicates, ICMP error lines == errors;
  - when every reply is present (replies == received + duplicates): min/max/avg of the printed
    RTTs agree with the printed min/avg/max within the printing precision (iputils prints
    "time=148 ms" for 148.006 ms, so one unit of the last printed digit, plus 0.001 ms);
  - loss_pct agrees with (transmitted - received) / transmitted within 1 point (old iputils
    truncates the percentage: 1688 sent, 1553 received prints "7%").
A run with a "PING" line but no statistics block is truncated: complete=False plus a warning.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import pandas as pd

from cassperf.errors import ParseError
from cassperf.parsers.base import Format, ParseResult, check_text

# PING google.com (74.125.24.100) 56(84) bytes of data.
# PING 192.168.2.106 (192.168.2.106): 56 data bytes
_HEADER = re.compile(r"^PING (?P<dest>\S+?) ?\((?P<ip>[^)]*)\)")

# [1524930937.003555] 64 bytes from 74.125.24.100: icmp_seq=1 ttl=39 time=148 ms
# 64 bytes from 192.168.2.106: seq=0 ttl=64 time=1.003 ms (DUP!)
_REPLY = re.compile(
    r"^(?:\[(?P<ts>\d{1,10}(?:\.\d+)?)\] )?(?P<bytes>\d{1,9}) bytes from (?P<from>[^:]+?(?: \([^)]*\))?):"
    r" (?:icmp_seq|icmp_req|seq)=(?P<seq>\d{1,18})(?: ident=\d+)? ttl=(?P<ttl>\d{1,9})(?!\d)"
    r"(?: time[=<](?P<rtt>\d+(?:\.\d+)?) ?ms)?(?P<rest>.*)$")

# From 192.168.207.128 icmp_seq=1 Destination Host Unreachable
_ICMP_ERROR = re.compile(
    r"^(?:\[(?P<ts>\d{1,10}(?:\.\d+)?)\] )?From (?P<from>\S+)(?: \([^)]*\))?:? icmp_seq=(?P<seq>\d{1,18}) (?P<msg>.+)$")

# [1596881133.081556] no answer yet for icmp_seq=1
# Request timeout for icmp_seq 5
_NO_ANSWER = re.compile(
    r"^(?:\[(?P<ts>\d{1,10}(?:\.\d+)?)\] )?(?:no answer yet for icmp_seq=|Request timeout for icmp_seq )"
    r"(?P<seq>\d{1,18})$")

# --- google.com ping statistics ---
_STATS_HEADER = re.compile(r"^--- (?P<dest>\S+) ping statistics ---$")

# 1688 packets transmitted, 1553 received, +1 duplicates, 7% packet loss, time 2987ms
# 10 packets transmitted, 9 packets received, 2 duplicates, 10% packet loss
_COUNTS_LINE = re.compile(r"^\d+ packets transmitted(?:, |$)")
_PART_PATTERNS: dict[str, re.Pattern[str]] = {
    "transmitted": re.compile(r"^(\d{1,18}) packets transmitted$"),
    "received": re.compile(r"^(\d{1,18}) (?:packets )?received$"),
    "duplicates": re.compile(r"^\+?(\d{1,18}) duplicates$"),
    "corrupted": re.compile(r"^\+?(\d{1,18}) corrupted$"),
    "errors": re.compile(r"^\+?(\d{1,18}) errors$"),
    "loss_pct": re.compile(r"^(\d+(?:\.\d+)?)% packet loss$"),
    "total_time_ms": re.compile(r"^time (\d+(?:\.\d+)?) ?ms$"),
}

# rtt min/avg/max/mdev = 0.282/0.642/11.699/0.699 ms, pipe 2, ipg/ewma 1.770/0.782 ms
# round-trip min/avg/max/stddev = 20.482/31.927/46.093/8.292 ms
# round-trip min/avg/max = 0.613/0.930/1.219 ms
_RTT_LINE = re.compile(
    r"^(?:rtt|round-trip) min/avg/max(?:/(?P<spread>mdev|stddev))? = "
    r"(?P<min>[\d.]+)/(?P<avg>[\d.]+)/(?P<max>[\d.]+)(?:/(?P<dev>[\d.]+))? ms"
    r"(?:, pipe (?P<pipe>\d{1,18}))?(?:, ipg/ewma (?P<ipg>[\d.]+)/(?P<ewma>[\d.]+) ms)?$")

_SNIFF_HEADER = re.compile(r"^PING \S+ ?\([^)]*\).*(?:bytes of data|data bytes)", re.M)
_SNIFF_STATS = re.compile(r"^--- \S+ ping statistics ---\s*$", re.M)

REPLY_COLUMNS: dict[str, str] = {
    "run": "int64", "seq": "Int64", "ttl": "Int64", "bytes": "Int64", "from_host": "string",
    "rtt_ms": "float64", "time": "datetime64[ns, UTC]", "duplicate": "bool",
}
SUMMARY_COLUMNS: dict[str, str] = {
    "run": "int64", "destination": "string", "destination_ip": "string", "transmitted": "Int64",
    "received": "Int64", "duplicates": "Int64", "corrupted": "Int64", "errors": "Int64",
    "loss_pct": "float64", "total_time_ms": "float64", "rtt_min_ms": "float64",
    "rtt_avg_ms": "float64", "rtt_max_ms": "float64", "rtt_mdev_ms": "float64", "rtt_spread": "string",
    "pipe": "Int64", "ipg_ms": "float64", "ewma_ms": "float64",
}
ERROR_COLUMNS: dict[str, str] = {
    "run": "int64", "seq": "Int64", "from_host": "string", "kind": "string", "message": "string",
    "time": "datetime64[ns, UTC]",
}


@dataclass(frozen=True)
class Reply:
    """One echo reply line. rtt_ms in milliseconds as printed; rtt_decimals = printed decimals."""

    seq: int
    ttl: int
    bytes: int
    from_host: str
    rtt_ms: float | None
    rtt_decimals: int
    epoch_ns: int | None            # -D timestamp, nanoseconds since the epoch (UTC)
    duplicate: bool


@dataclass
class _Run:
    destination: str | None = None
    destination_ip: str | None = None
    header_line: int | None = None
    replies: list[Reply] = field(default_factory=list)
    errors: list[dict[str, object]] = field(default_factory=list)
    stats: dict[str, object] | None = None
    stats_line: int | None = None


def sniff(head: str) -> bool:
    """A 'PING host (ip) ... bytes' header or a '--- host ping statistics ---' line."""
    return bool(_SNIFF_HEADER.search(head) or _SNIFF_STATS.search(head))


def _epoch_ns(ts: str | None) -> int | None:
    """'1524930937.003555' -> 1524930937003555000 exactly (no float rounding)."""
    if not ts:
        return None
    whole, _, frac = ts.partition(".")
    return int(whole) * 1_000_000_000 + int((frac + "000000000")[:9])


def _parse_counts(line: str, line_no: int, result: ParseResult) -> dict[str, object]:
    out: dict[str, object] = {}
    for part in line.split(", "):
        part = part.strip()
        for key, pattern in _PART_PATTERNS.items():
            m = pattern.match(part)
            if m:
                value = m.group(1)
                out[key] = float(value) if key in ("loss_pct", "total_time_ms") else int(value)
                break
        else:
            result.warn(line_no, line, f"a known part of ping's counts line, not {part!r} (ignored)")
    return out


def parse_ping(text: str, source: str = "<text>") -> ParseResult:
    """Parse ping output into replies, errors and the statistics ping printed (see module doc)."""
    check_text(text, source, "ping output")
    result = ParseResult(format="ping", source=source)
    runs: list[_Run] = []
    current: _Run | None = None
    lines = text.splitlines()

    def run_for_body() -> _Run:
        nonlocal current
        if current is None or current.stats is not None:
            current = _Run()
            runs.append(current)
        return current

    for idx, raw in enumerate(lines):
        line_no = idx + 1
        line = raw.strip()
        if not line or line == "^C":
            continue
        m = _HEADER.match(line)
        if m:
            current = _Run(destination=m.group("dest"), destination_ip=m.group("ip"), header_line=line_no)
            runs.append(current)
            continue
        m = _REPLY.match(line)
        if m:
            rtt = m.group("rtt")
            run_for_body().replies.append(Reply(
                seq=int(m.group("seq")), ttl=int(m.group("ttl")), bytes=int(m.group("bytes")),
                from_host=m.group("from"), rtt_ms=float(rtt) if rtt else None,
                rtt_decimals=len(rtt.partition(".")[2]) if rtt else 0,
                epoch_ns=_epoch_ns(m.group("ts")), duplicate="(DUP!)" in m.group("rest")))
            continue
        m = _ICMP_ERROR.match(line)
        if m:
            run_for_body().errors.append({"seq": int(m.group("seq")), "from_host": m.group("from"),
                                          "kind": "icmp_error", "message": m.group("msg").strip(),
                                          "epoch_ns": _epoch_ns(m.group("ts"))})
            continue
        m = _NO_ANSWER.match(line)
        if m:
            run_for_body().errors.append({"seq": int(m.group("seq")), "from_host": None, "kind": "no_answer",
                                          "message": line, "epoch_ns": _epoch_ns(m.group("ts"))})
            continue
        m = _STATS_HEADER.match(line)
        if m:
            run = current if current is not None and current.stats is None else run_for_body()
            run.stats = {"destination": m.group("dest")}
            run.stats_line = line_no
            if run.destination is None:
                run.destination = m.group("dest")
            continue
        if _COUNTS_LINE.match(line) and current is not None and current.stats is not None:
            current.stats.update(_parse_counts(line, line_no, result))
            continue
        m = _RTT_LINE.match(line)
        if m and current is not None and current.stats is not None:
            current.stats.update({
                "rtt_min_ms": float(m.group("min")), "rtt_avg_ms": float(m.group("avg")),
                "rtt_max_ms": float(m.group("max")),
                "rtt_mdev_ms": float(m.group("dev")) if m.group("dev") else math.nan,
                "rtt_spread": m.group("spread"),
                "pipe": int(m.group("pipe")) if m.group("pipe") else None,
                "ipg_ms": float(m.group("ipg")) if m.group("ipg") else math.nan,
                "ewma_ms": float(m.group("ewma")) if m.group("ewma") else math.nan,
            })
            continue
        result.skipped_lines += 1

    if not runs:                               # no header, reply, error or statistics line at all
        first = next((i for i, ln in enumerate(lines) if ln.strip()), 0)
        raise ParseError(source, first + 1, lines[first] if lines else None,
                         "ping output: a 'PING host (ip)' line, reply lines or a '--- host ping statistics ---' block")

    for i, run in enumerate(runs):
        if run.stats is None:
            result.complete = False
            line_no = run.header_line
            result.warn(line_no, lines[line_no - 1] if line_no else None,
                        f"ping statistics for run {i} (the output stops before '--- ping statistics ---')")
        elif "transmitted" not in run.stats:
            result.complete = False
            result.warn(run.stats_line, lines[run.stats_line - 1] if run.stats_line else None,
                        f"a 'N packets transmitted, M received' line after the statistics header of run {i}")
        else:
            _cross_check(run, i, result, lines)

    result.tables["replies"] = _replies_frame(runs)
    result.tables["summary"] = _summary_frame(runs)
    result.tables["errors"] = _errors_frame(runs)
    return result


def _cross_check(run: _Run, index: int, result: ParseResult, lines: list[str]) -> None:
    """Compare printed statistics with the lines present; warn on any disagreement."""
    stats = run.stats or {}
    line_no = run.stats_line
    line = lines[line_no - 1] if line_no else None
    transmitted = int(stats.get("transmitted", 0))  # type: ignore[call-overload]
    received = int(stats.get("received", 0))  # type: ignore[call-overload]
    duplicates = int(stats.get("duplicates", 0))  # type: ignore[call-overload]
    errors = int(stats.get("errors", 0))  # type: ignore[call-overload]
    loss = stats.get("loss_pct")
    if transmitted and isinstance(loss, float):
        computed = 100.0 * (transmitted - received) / transmitted
        if abs(computed - loss) >= 1.0:
            result.warn(line_no, line, f"packet loss near {computed:.3f}% for {transmitted} sent, "
                                       f"{received} received (run {index}); ping printed {loss}%")
    if not run.replies and not run.errors:
        return                                 # ping -q or a summary-only fragment: nothing to check
    unique = sum(1 for r in run.replies if not r.duplicate)
    dups = sum(1 for r in run.replies if r.duplicate)
    icmp_errors = sum(1 for e in run.errors if e["kind"] == "icmp_error")
    for what, seen, printed in (("replies", unique, received), ("duplicate replies", dups, duplicates),
                                ("ICMP error lines", icmp_errors, errors)):
        if seen != printed:
            result.warn(line_no, line, f"{printed} {what} as the statistics say (run {index}); "
                                       f"the output shows {seen}")
    timed = [r for r in run.replies if r.rtt_ms is not None]
    if not timed or len(run.replies) != received + duplicates or "rtt_min_ms" not in stats:
        return
    tolerance = max(10.0 ** -r.rtt_decimals for r in timed) + 0.001
    checks = (("min", min(r.rtt_ms for r in timed), stats["rtt_min_ms"]),  # type: ignore[type-var]
              ("max", max(r.rtt_ms for r in timed), stats["rtt_max_ms"]),  # type: ignore[type-var]
              ("avg", sum(r.rtt_ms for r in timed) / len(timed), stats["rtt_avg_ms"]))  # type: ignore[misc]
    for name, seen_value, printed_value in checks:
        if abs(float(seen_value) - float(printed_value)) > tolerance:  # type: ignore[arg-type]
            result.warn(line_no, line, f"rtt {name} {printed_value} ms as printed (run {index}); the reply "
                                       f"lines give {seen_value:.3f} ms (tolerance {tolerance:.3f} ms)")


def _typed(rows: list[dict[str, object]], columns: dict[str, str]) -> pd.DataFrame:
    """Rows -> a frame with exactly `columns` and their dtypes; "time" comes in as epoch_ns."""
    frame = pd.DataFrame(rows, columns=[c if c != "time" else "epoch_ns" for c in columns])
    if "time" in columns:
        ns = pd.array(frame.pop("epoch_ns").tolist(), dtype="Int64")
        frame["time"] = pd.to_datetime(ns, unit="ns", utc=True)
    return frame[list(columns)].astype(columns)


def _replies_frame(runs: list[_Run]) -> pd.DataFrame:
    rows = [{"run": i, "seq": r.seq, "ttl": r.ttl, "bytes": r.bytes, "from_host": r.from_host,
             "rtt_ms": r.rtt_ms if r.rtt_ms is not None else math.nan, "epoch_ns": r.epoch_ns,
             "duplicate": r.duplicate}
            for i, run in enumerate(runs) for r in run.replies]
    return _typed(rows, REPLY_COLUMNS)


def _errors_frame(runs: list[_Run]) -> pd.DataFrame:
    rows = [{"run": i, "seq": e["seq"], "from_host": e["from_host"], "kind": e["kind"],
             "message": e["message"], "epoch_ns": e["epoch_ns"]}
            for i, run in enumerate(runs) for e in run.errors]
    return _typed(rows, ERROR_COLUMNS)


def _summary_frame(runs: list[_Run]) -> pd.DataFrame:
    rows = []
    for i, run in enumerate(runs):
        s = run.stats
        if s is None or "transmitted" not in s:
            continue
        rows.append({
            "run": i, "destination": run.destination, "destination_ip": run.destination_ip,
            "transmitted": s.get("transmitted"), "received": s.get("received"),
            "duplicates": s.get("duplicates", 0), "corrupted": s.get("corrupted", 0),
            "errors": s.get("errors", 0), "loss_pct": s.get("loss_pct", math.nan),
            "total_time_ms": s.get("total_time_ms", math.nan),
            "rtt_min_ms": s.get("rtt_min_ms", math.nan), "rtt_avg_ms": s.get("rtt_avg_ms", math.nan),
            "rtt_max_ms": s.get("rtt_max_ms", math.nan), "rtt_mdev_ms": s.get("rtt_mdev_ms", math.nan),
            "rtt_spread": s.get("rtt_spread"), "pipe": s.get("pipe"),
            "ipg_ms": s.get("ipg_ms", math.nan), "ewma_ms": s.get("ewma_ms", math.nan),
        })
    return _typed(rows, SUMMARY_COLUMNS)


FORMAT = Format(
    name="ping",
    description="ping output (iputils Linux incl. -D, BSD/macOS/busybox): replies and printed statistics",
    sniff=sniff,
    parse=parse_ping,
)
