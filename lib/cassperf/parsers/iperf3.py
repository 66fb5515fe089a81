"""iperf3 --json output -> interval and summary frames (pure functions).

tables["intervals"]  one row per (interval, stream) plus one "sum" row per interval:
    run, interval, stream (socket id as text, "sum", or "sum_bidir_reverse"), start_s, end_s,
    seconds, bytes, bits_per_second, retransmits (TCP sender only), snd_cwnd_bytes,
    rtt_ms, rttvar_ms (iperf3 prints microseconds; divided by 1000 here), pmtu_bytes,
    packets, lost_packets, lost_percent, jitter_ms (UDP), omitted (the -O warm-up), sender
tables["summary"]    one row per run: the end block exactly as iperf3 printed it:
    sent_bytes/sent_bits_per_second/sent_seconds (end.sum_sent), received_* (end.sum_received),
    retransmits, streams, protocol, duration_s, omit_s, blksize_bytes, target_bytes (-n; missing
    when the test was time-limited), reverse, cpu_*_pct
    (end.cpu_utilization_percent), congestion control, version, timestamp (UTC), hosts, complete.
    When the end block has no sum_sent/sum_received (UDP runs of older iperf3), end.sum fills
    both; jitter_ms, lost_packets, lost_percent come from end.sum.
tables["streams"]    end.streams[]: run, stream, role (sender|receiver), bytes, bits_per_second,
    seconds, retransmits, max_snd_cwnd_bytes, max_rtt_ms, min_rtt_ms, mean_rtt_ms

Several JSON documents appended to one file (iperf3 --json >> file) become runs 0, 1, ...

Truncated input (the producer was cut off, e.g. the committed 10 KB CloudPilot file that stops
inside end.streams[0].sender): the policy is a flagged partial result, not an error. The
top-level members that decoded completely are kept ("start", every complete "intervals"
element); the member cut off is dropped whole, never half-read. complete=False and a warning
names the line and column where the JSON stopped. Input with nothing recoverable (no complete
"start" and no complete interval) raises ParseError with that position.

An iperf3 "error" member (e.g. "unable to connect to server") is a warning and complete=False.
Cross-checks (warnings): per interval, the streams' bytes add up to the sum row; for TCP, the
non-omitted interval sums add up to end.sum_sent.bytes (sender side) or sum_received (receiver).
Text before the first "{" line and after the last document is skipped and counted.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pandas as pd

from cassperf.errors import ParseError
from cassperf.parsers.base import Format, ParseResult, check_text

# "version":	"iperf 3.9",
_SNIFF_KEYS = re.compile(r'"(?:start|intervals)"\s*:')
# "version":	"iperf 3.9",    or    "cookie":	"rd4bkmxlekfwbfzejbeya73pyxlilt4v6r7v",
_SNIFF_IPERF = re.compile(r'"version"\s*:\s*"iperf 3|'
                          r'"(?:cookie|connecting_to|tcp_mss_default|sum_sent|bits_per_second)"\s*:')

INTERVAL_COLUMNS: dict[str, str] = {
    "run": "int64", "interval": "int64", "stream": "string", "start_s": "float64", "end_s": "float64",
    "seconds": "float64", "bytes": "Int64", "bits_per_second": "float64", "retransmits": "Int64",
    "snd_cwnd_bytes": "Int64", "rtt_ms": "float64", "rttvar_ms": "float64", "pmtu_bytes": "Int64",
    "packets": "Int64", "lost_packets": "Int64", "lost_percent": "float64", "jitter_ms": "float64",
    "omitted": "boolean", "sender": "boolean",
}
SUMMARY_COLUMNS: dict[str, str] = {
    "run": "int64", "protocol": "string", "streams": "Int64", "duration_s": "float64", "omit_s": "float64",
    "blksize_bytes": "Int64", "target_bytes": "Int64", "reverse": "boolean", "sent_bytes": "Int64",
    "sent_bits_per_second": "float64",
    "sent_seconds": "float64", "received_bytes": "Int64", "received_bits_per_second": "float64",
    "received_seconds": "float64", "retransmits": "Int64", "jitter_ms": "float64", "lost_packets": "Int64",
    "lost_percent": "float64", "cpu_host_total_pct": "float64", "cpu_host_user_pct": "float64",
    "cpu_host_system_pct": "float64", "cpu_remote_total_pct": "float64", "cpu_remote_user_pct": "float64",
    "cpu_remote_system_pct": "float64", "sender_tcp_congestion": "string",
    "receiver_tcp_congestion": "string", "version": "string", "system_info": "string",
    "timestamp": "datetime64[ns, UTC]", "local_host": "string", "remote_host": "string",
    "remote_port": "Int64", "error": "string", "complete": "bool",
}
STREAM_COLUMNS: dict[str, str] = {
    "run": "int64", "stream": "string", "role": "string", "bytes": "Int64", "bits_per_second": "float64",
    "seconds": "float64", "retransmits": "Int64", "max_snd_cwnd_bytes": "Int64", "max_rtt_ms": "float64",
    "min_rtt_ms": "float64", "mean_rtt_ms": "float64",
}

_DECODER = json.JSONDecoder()
_WS = re.compile(r"\s*")


def sniff(head: str) -> bool:
    """A JSON object with iperf3's start/intervals members and one of its characteristic keys."""
    stripped = head.lstrip("\ufeff \t\r\n")
    return stripped.startswith("{") and bool(_SNIFF_KEYS.search(head)) and bool(_SNIFF_IPERF.search(head))


def _line_col(text: str, pos: int) -> tuple[int, int, str]:
    line_no = text.count("\n", 0, pos) + 1
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    line = text[start:end if end >= 0 else len(text)].rstrip("\r")
    return line_no, pos - start + 1, line


def _salvage(text: str, pos: int) -> tuple[dict[str, Any], str | None, int]:
    """Decode the top-level members of a truncated iperf3 object one by one.

    Returns (complete members, name of the member cut off or None, position where decoding
    stopped). "intervals" is decoded element by element so every complete interval is kept.
    """
    doc: dict[str, Any] = {}
    i = _WS.match(text, pos + 1).end()   # type: ignore[union-attr]   # past '{'
    key: str | None = None
    while i < len(text) and text[i] != "}":
        try:
            key, i = _DECODER.raw_decode(text, i)
            i = _WS.match(text, i).end()  # type: ignore[union-attr]
            if text[i:i + 1] != ":":
                return doc, key, i
            i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
            if key == "intervals" and text[i:i + 1] == "[":
                items: list[Any] = []
                doc["intervals"] = items
                i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
                while text[i:i + 1] not in ("]", ""):
                    item, i = _DECODER.raw_decode(text, i)
                    items.append(item)
                    i = _WS.match(text, i).end()  # type: ignore[union-attr]
                    if text[i:i + 1] == ",":
                        i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
                if text[i:i + 1] != "]":
                    return doc, key, i
                i += 1
            else:
                value, i = _DECODER.raw_decode(text, i)
                doc[str(key)] = value
            key = None
            i = _WS.match(text, i).end()  # type: ignore[union-attr]
            if text[i:i + 1] == ",":
                i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
        except (json.JSONDecodeError, TypeError):
            return doc, key, i
    return doc, key, i


def parse_iperf3(text: str, source: str = "<text>") -> ParseResult:
    """Parse iperf3 --json output (one or several appended documents); see the module doc."""
    check_text(text, source, "iperf3 --json output")
    result = ParseResult(format="iperf3-json", source=source)
    text = text.lstrip("\ufeff")
    m = re.search(r"^[ \t]*\{", text, re.M)
    if m is None:
        line_no, _, line = _line_col(text, len(text) - len(text.lstrip()))
        raise ParseError(source, line_no, line, "iperf3 --json output (a JSON object starting with '{')")
    result.skipped_lines += text.count("\n", 0, m.start())
    pos = m.end() - 1
    docs: list[dict[str, Any]] = []
    while pos < len(text):
        try:
            doc, end = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            doc, cut_key, stop = _salvage(text, pos)
            line_no, col, line = _line_col(text, max(exc.pos, stop))
            if not isinstance(doc.get("start"), dict) and not doc.get("intervals"):
                if docs:                  # an earlier document was complete: keep it, flag the rest
                    result.complete = False
                    result.warn(line_no, line, f"another complete iperf3 JSON document after run {len(docs) - 1}; "
                                               f"decoding stopped at line {line_no} column {col} ({exc.msg})")
                    break
                raise ParseError(source, line_no, line,
                                 f"complete iperf3 JSON (decoding stopped at line {line_no} column {col}: "
                                 f"{exc.msg}; nothing complete before it)") from None
            result.complete = False
            where = f"inside '{cut_key}'" if cut_key else "before the end of the object"
            result.warn(line_no, line, f"complete iperf3 JSON; the document stops {where} at line {line_no} "
                                       f"column {col} ({exc.msg}); kept only the members decoded whole")
            docs.append(doc)
            break
        if not isinstance(doc, dict) or not any(k in doc for k in ("start", "intervals", "end", "error")):
            line_no, _, line = _line_col(text, pos)
            raise ParseError(source, line_no, line, "an iperf3 --json object with start/intervals/end members")
        docs.append(doc)
        pos = _WS.match(text, end).end()  # type: ignore[union-attr]
        if pos < len(text) and text[pos] != "{":
            line_no, _, line = _line_col(text, pos)
            rest = text[pos:]
            result.skipped_lines += len(rest.splitlines())
            result.warn(line_no, line, "end of input or another iperf3 JSON document after the object "
                                       f"(skipped {len(rest.splitlines())} trailing lines)")
            break
    interval_rows: list[dict[str, Any]] = []
    summary_rows: list[dict[str, Any]] = []
    stream_rows: list[dict[str, Any]] = []
    for run, doc in enumerate(docs):
        complete = result.complete or run < len(docs) - 1
        interval_rows.extend(_intervals(doc, run))
        stream_rows.extend(_end_streams(doc, run))
        summary_rows.append(_summary(doc, run, complete))
        if isinstance(doc.get("error"), str):
            result.complete = False
            result.warn(None, None, f"an iperf3 run without error (run {run}); iperf3 reported: {doc['error']}")
        _cross_check(doc, run, result)
    result.tables["intervals"] = _frame(interval_rows, INTERVAL_COLUMNS)
    result.tables["summary"] = _frame(summary_rows, SUMMARY_COLUMNS)
    result.tables["streams"] = _frame(stream_rows, STREAM_COLUMNS)
    return result


def _num(d: dict[str, Any], key: str, scale: float = 1.0) -> float:
    v = d.get(key)
    return float(v) / scale if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


def _int(d: dict[str, Any], key: str) -> int | None:
    """An integer member; None when absent, not a number, or beyond int64 (never wrapped)."""
    v = d.get(key)
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or abs(v) >= 2 ** 63:
        return None
    return int(v)


def _dict(v: object) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: object) -> list[Any]:
    return v if isinstance(v, list) else []


def _text(v: object) -> str | None:
    return v if isinstance(v, str) else None


def _utc_seconds(secs: int | None) -> pd.Timestamp:
    if secs is None or not 0 <= secs < 2 ** 33:      # beyond year 2242: not a real timestamp
        return pd.NaT
    return pd.Timestamp(secs, unit="s", tz="UTC")


def _bool(d: dict[str, Any], key: str) -> bool | None:
    v = d.get(key)
    return bool(v) if isinstance(v, (bool, int)) else None


def _interval_row(d: dict[str, Any], run: int, index: int, stream: str) -> dict[str, Any]:
    return {
        "run": run, "interval": index, "stream": stream, "start_s": _num(d, "start"), "end_s": _num(d, "end"),
        "seconds": _num(d, "seconds"), "bytes": _int(d, "bytes"), "bits_per_second": _num(d, "bits_per_second"),
        "retransmits": _int(d, "retransmits"), "snd_cwnd_bytes": _int(d, "snd_cwnd"),
        "rtt_ms": _num(d, "rtt", 1000.0), "rttvar_ms": _num(d, "rttvar", 1000.0), "pmtu_bytes": _int(d, "pmtu"),
        "packets": _int(d, "packets"), "lost_packets": _int(d, "lost_packets"),
        "lost_percent": _num(d, "lost_percent"), "jitter_ms": _num(d, "jitter_ms"),
        "omitted": _bool(d, "omitted"), "sender": _bool(d, "sender"),
    }


def _intervals(doc: dict[str, Any], run: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    intervals = doc.get("intervals")
    if not isinstance(intervals, list):
        return rows
    for index, interval in enumerate(intervals):
        if not isinstance(interval, dict):
            continue
        for s in _list(interval.get("streams")):
            if isinstance(s, dict):
                rows.append(_interval_row(s, run, index, str(s.get("socket", "?"))))
        for key in ("sum", "sum_bidir_reverse"):
            if isinstance(interval.get(key), dict):
                rows.append(_interval_row(interval[key], run, index, key))
    return rows


def _end_streams(doc: dict[str, Any], run: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    end = doc.get("end")
    if not isinstance(end, dict):
        return rows
    for s in _list(end.get("streams")):
        if not isinstance(s, dict):
            continue
        for role in ("sender", "receiver", "udp"):
            d = s.get(role)
            if isinstance(d, dict):
                rows.append({
                    "run": run, "stream": str(d.get("socket", "?")), "role": role, "bytes": _int(d, "bytes"),
                    "bits_per_second": _num(d, "bits_per_second"), "seconds": _num(d, "seconds"),
                    "retransmits": _int(d, "retransmits"), "max_snd_cwnd_bytes": _int(d, "max_snd_cwnd"),
                    "max_rtt_ms": _num(d, "max_rtt", 1000.0), "min_rtt_ms": _num(d, "min_rtt", 1000.0),
                    "mean_rtt_ms": _num(d, "mean_rtt", 1000.0),
                })
    return rows


def _summary(doc: dict[str, Any], run: int, complete: bool) -> dict[str, Any]:
    start = _dict(doc.get("start"))
    end = _dict(doc.get("end"))
    test = _dict(start.get("test_start"))
    udp = _dict(end.get("sum"))
    sent = _dict(end.get("sum_sent")) or udp
    received = _dict(end.get("sum_received")) or udp
    cpu = _dict(end.get("cpu_utilization_percent"))
    connected = _list(start.get("connected"))
    first = _dict(connected[0]) if connected else {}
    secs = _int(_dict(start.get("timestamp")), "timesecs")
    return {
        "run": run, "protocol": _text(test.get("protocol")), "streams": _int(test, "num_streams"),
        "duration_s": _num(test, "duration"), "omit_s": _num(test, "omit"), "blksize_bytes": _int(test, "blksize"),
        "target_bytes": _int(test, "bytes") or None, "reverse": _bool(test, "reverse"),
        "sent_bytes": _int(sent, "bytes"), "sent_bits_per_second": _num(sent, "bits_per_second"),
        "sent_seconds": _num(sent, "seconds"), "received_bytes": _int(received, "bytes"),
        "received_bits_per_second": _num(received, "bits_per_second"),
        "received_seconds": _num(received, "seconds"), "retransmits": _int(sent, "retransmits"),
        "jitter_ms": _num(udp, "jitter_ms"), "lost_packets": _int(udp, "lost_packets"),
        "lost_percent": _num(udp, "lost_percent"),
        "cpu_host_total_pct": _num(cpu, "host_total"), "cpu_host_user_pct": _num(cpu, "host_user"),
        "cpu_host_system_pct": _num(cpu, "host_system"), "cpu_remote_total_pct": _num(cpu, "remote_total"),
        "cpu_remote_user_pct": _num(cpu, "remote_user"), "cpu_remote_system_pct": _num(cpu, "remote_system"),
        "sender_tcp_congestion": _text(end.get("sender_tcp_congestion")),
        "receiver_tcp_congestion": _text(end.get("receiver_tcp_congestion")),
        "version": _text(start.get("version")), "system_info": _text(start.get("system_info")),
        "timestamp": _utc_seconds(secs),
        "local_host": _text(first.get("local_host")), "remote_host": _text(first.get("remote_host")),
        "remote_port": _int(first, "remote_port"),
        "error": doc.get("error") if isinstance(doc.get("error"), str) else None,
        "complete": complete and bool(end) and "error" not in doc,
    }


def _cross_check(doc: dict[str, Any], run: int, result: ParseResult) -> None:
    intervals = _list(doc.get("intervals"))
    total = 0
    sender: bool | None = None
    for index, interval in enumerate(intervals):
        if not isinstance(interval, dict) or not isinstance(interval.get("sum"), dict):
            continue
        s = interval["sum"]
        streams = [x for x in _list(interval.get("streams")) if isinstance(x, dict)]
        stream_bytes = [_int(x, "bytes") for x in streams]
        if streams and None not in stream_bytes and _int(s, "bytes") is not None \
                and sum(b for b in stream_bytes if b is not None) != _int(s, "bytes"):
            result.warn(None, None, f"interval {index} of run {run}: stream bytes adding up to the sum row "
                                    f"({_int(s, 'bytes')}); they add up to {sum(b for b in stream_bytes if b)}")
        if not s.get("omitted") and _int(s, "bytes") is not None:
            total += _int(s, "bytes") or 0
            sender = bool(s.get("sender")) if sender is None else sender
    end = _dict(doc.get("end"))
    test = _dict(_dict(doc.get("start")).get("test_start"))
    if test.get("protocol") != "TCP" or not intervals or sender is None:
        return
    block = end.get("sum_sent" if sender else "sum_received")
    if isinstance(block, dict) and _int(block, "bytes") is not None and _int(block, "bytes") != total:
        name = "sum_sent" if sender else "sum_received"
        result.warn(None, None, f"end.{name}.bytes of run {run} ({_int(block, 'bytes')}) equal to the sum of the "
                                f"non-omitted intervals ({total})")


def _frame(rows: list[dict[str, Any]], columns: dict[str, str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(columns))
    dtypes = {c: t for c, t in columns.items() if not t.startswith("datetime")}
    frame = frame.astype(dtypes)
    for c, t in columns.items():
        if t.startswith("datetime"):
            frame[c] = pd.to_datetime(frame[c], utc=True)
    return frame


FORMAT = Format(
    name="iperf3-json",
    description="iperf3 --json output: per-interval and per-stream throughput, end summary, CPU",
    sniff=sniff,
    parse=parse_iperf3,
)
