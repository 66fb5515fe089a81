"""HdrHistogram interval logs (cassandra-stress `-log hdrfile=...`): read, write, and merge several.

The format is HdrHistogram's standard interval log (Java HistogramLogWriter, format 1.2/1.3):

    #Logging op latencies for Cassandra Stress
    #[Histogram log format version 1.3]
    #[BaseTime: 1468590177.336 (seconds since epoch)]
    #[StartTime: 1468590177.336 (seconds since epoch), Fri Jul 15 15:42:57 SAST 2016]
    "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
    Tag=insert-st,0.095,9.989,18.645,HISTFAAABJp42j1W...

One line per (interval, tag): start (s, relative to BaseTime), length (s), max (the histogram's
max divided by 1,000,000 — ms for nanosecond values) and the compressed histogram.
cassandra-stress writes, per op type and interval, `<op>-st` (service time: from the actual
send to the response), `<op>-rt` (response time: from the intended start under a fixed rate,
coordinated omission corrected; only with `-rate fixed=`/`throttle=`) and `<op>-wt` (wait time:
intended start to actual start). Values are **nanoseconds** (StressMetrics records nanoTime()
differences), so the default `value_unit` is "ns"; a log that does not say it comes from
cassandra-stress is read as ns too, with a warning (pass value_unit= to override).

Timestamps follow HdrHistogram_py's HistogramLogReader: absolute start = timestamp + BaseTime
(when no BaseTime line, the base is the StartTime when timestamps are more than a year before it,
else 0); `start_s`/`end_s` are seconds since StartTime (or since the first interval).

Result: one Run. `histograms` holds the rows (tag, start_s, end_s, encoded, + start_epoch_s
when the log states its time); `intervals` one row per interval and tag with count, rate and
latency percentiles (ms) derived from the histogram, plus columns `tag` and `latency_type`
("service", "response", "wait", "unknown" from the tag suffix); `summary` one row per tag,
merged over all intervals (never averaged). Line rules: '#' comment lines and the legend are
known; an interval line whose payload does not decode is dropped with a warning (the input is
marked incomplete when it is the last line: a truncated file); any other line is skipped,
counted and warned about.

`merge_logs` sums the histograms of several logs (clients) per tag, exactly: it reads the files
and hands their rows to `cassperf.results.hdr.merge`, the pure histogram code, which reads none.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogWriter

from cassperf.errors import ParseError
from cassperf.parsers.base import Format, ParseResult, check_text
from cassperf.results import hdr
from cassperf.results.model import HISTOGRAM_COLUMNS, Run

EXPECTED = "an HdrHistogram interval log (e.g. cassandra-stress -log hdrfile=)"

# #[StartTime: 1468590177.336 (seconds since epoch), Fri Jul 15 15:42:57 SAST 2016]
_START_TIME = re.compile(r"^#\[StartTime:\s*(?P<sec>\d+(?:\.\d*)?)\s")
# #[BaseTime: 1468590177.336 (seconds since epoch)]
_BASE_TIME = re.compile(r"^#\[BaseTime:\s*(?P<sec>\d+(?:\.\d*)?)\s")
# #[Histogram log format version 1.3]
_VERSION = re.compile(r"^#\[Histogram log format version (?P<version>[\d.]+)\]")
# #Logging op latencies for Cassandra Stress
_CASSANDRA_STRESS = re.compile(r"^#Logging op latencies for Cassandra Stress")
# "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
_LEGEND = re.compile(r'^"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"')
# Tag=insert-st,0.095,9.989,18.645,HISTFAAABJp42j1Wy4pkRRDNOhk3btatKoumaMqibUSGRnoh4kIGF40LEZFhGIbBL3DtXyjo2o/...
# 0.000,0.617,26.083,HISTFAAAADR42pNpmSzMwMAgygABTFCaEUz8///f/gNE4LYcUyszkzaTJVMxkzUTNxMTO1MuEwD7aAiy
_INTERVAL = re.compile(
    r"^(?:Tag=(?P<tag>[^,]*),)?(?P<start>\d+(?:\.\d*)?),(?P<length>\d+(?:\.\d*)?),"
    r"(?P<max>\d+(?:\.\d*)?),(?P<payload>HIST[A-Za-z0-9+/=]*)\s*$")
# the same line with its payload cut or mangled: counted as a bad interval line, not garbage
_INTERVAL_PREFIX = re.compile(r"^(?:Tag=[^,]*,)?\d+(?:\.\d*)?,\d+(?:\.\d*)?,\d+(?:\.\d*)?,")

_SUFFIX_TYPES = {"-st": "service", "-rt": "response", "-wt": "wait"}
_YEAR_S = 365 * 24 * 3600.0


def split_tag(tag: str) -> tuple[str, str]:
    """'insert-st' -> ('insert', 'service'); an unknown suffix keeps the tag as op, 'unknown'."""
    for suffix, kind in _SUFFIX_TYPES.items():
        if tag.endswith(suffix) and len(tag) > len(suffix):
            return tag[: -len(suffix)], kind
    return (tag or "all"), "unknown"


def sniff(head: str) -> bool:
    lines = [ln for ln in head.splitlines()[:50] if ln.strip()]
    if not lines:
        return False
    if any(_VERSION.match(ln) or _LEGEND.match(ln) for ln in lines):
        return True
    return sum(1 for ln in lines[:10] if _INTERVAL.match(ln)) >= 1 and all(
        _INTERVAL.match(ln) or ln.startswith("#") for ln in lines[:10])


def _as_text(text_or_path: str | Path, source: str | None) -> tuple[str, str]:
    if isinstance(text_or_path, Path):
        from cassperf.parsers import read_text
        return read_text(text_or_path), source or str(text_or_path)
    if "\n" not in text_or_path and len(text_or_path) < 4096 and Path(text_or_path).is_file():
        from cassperf.parsers import read_text
        return read_text(text_or_path), source or text_or_path
    return text_or_path, source or "<text>"


def read_hdr_log(text_or_path: str | Path, source: str | None = None, value_unit: str | None = None,
                 derive_intervals: bool = True) -> ParseResult:
    """Parse an HDR interval log (text, or a path: a Path, or a str naming an existing file).

    value_unit: what one recorded integer means ("ns", "us", "ms"); None = ns (cassandra-stress).
    derive_intervals=False skips decoding (histogram rows only; merge() decodes them itself).
    """
    text, src = _as_text(text_or_path, source)
    return _read(text, src, value_unit, derive_intervals)


def _read(text: str, src: str, value_unit: str | None, derive_intervals: bool) -> ParseResult:
    check_text(text, src, EXPECTED)
    result = ParseResult(format="hdr-log", source=src)
    start_time: float | None = None
    base_time: float | None = None
    first_ts: float | None = None
    version: str | None = None
    from_stress = False
    saw_header = False
    raw: list[tuple[int, str, str, float, float, str]] = []   # line_no, line, tag, ts, length, payload
    lines = text.splitlines()
    truncated_tail = not text.endswith("\n")
    for line_no, line in enumerate(lines, start=1):
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            saw_header = True
            if m := _START_TIME.match(s):
                start_time = float(m.group("sec"))
            elif m := _BASE_TIME.match(s):
                base_time = float(m.group("sec"))
            elif m := _VERSION.match(s):
                version = m.group("version")
            elif _CASSANDRA_STRESS.match(s):
                from_stress = True
            continue
        if _LEGEND.match(s):
            saw_header = True
            continue
        m = _INTERVAL.match(s)
        if m is None:
            result.skipped_lines += 1
            if _INTERVAL_PREFIX.match(s):
                if line_no == len(lines) and truncated_tail:
                    result.complete = False
                    result.warn(line_no, line, "a complete interval line; the file ends mid-line (truncated)")
                else:
                    result.warn(line_no, line, "an interval line with a base64 histogram payload")
            else:
                result.warn(line_no, line, "a '#' comment, the legend or an interval line "
                                           "'[Tag=<tag>,]<start>,<length>,<max>,HIST...'")
            continue
        ts = float(m.group("start"))
        if first_ts is None:
            first_ts = ts
        raw.append((line_no, line, m.group("tag") or "", ts, float(m.group("length")), m.group("payload")))

    if not raw and not saw_header:
        raise ParseError(src, 1, lines[0] if lines else None, EXPECTED)

    unit = value_unit or "ns"
    if value_unit is None and not from_stress and raw:
        result.warn(None, None, "a stated value unit; the log does not say it comes from cassandra-stress, "
                                "values were read as nanoseconds (pass value_unit= to override)")
    hdr.units_per_ms(unit)  # rejects an unknown unit early
    known_epoch = start_time is not None or base_time is not None
    eff_start = start_time if start_time is not None else (first_ts or 0.0)
    if base_time is None:
        base_time = eff_start if (first_ts is not None and first_ts < eff_start - _YEAR_S) else 0.0

    hist_rows: list[dict[str, Any]] = []
    interval_rows: list[dict[str, Any]] = []
    for line_no, line, tag, ts, length, payload in raw:
        absolute = ts + base_time
        start_s = absolute - eff_start
        row = {"tag": tag, "start_s": start_s, "end_s": start_s + length, "encoded": payload,
               "start_epoch_s": absolute if known_epoch else math.nan}
        if derive_intervals:
            try:
                _, stats = hdr.payload_stats_ms(payload, unit)
            except hdr.HistogramError as exc:
                result.skipped_lines += 1
                if line_no == len(lines) and truncated_tail:
                    result.complete = False
                    result.warn(line_no, line, f"a complete interval line; the file ends mid-line ({exc})")
                else:
                    result.warn(line_no, line, f"a decodable histogram payload ({exc})")
                continue
            op, kind = split_tag(tag)
            interval_rows.append({"time_s": row["end_s"], "op": op, **stats,
                                  "rate_ops_s": stats["count"] / length if length > 0 else math.nan,
                                  "tag": tag, "latency_type": kind})
        hist_rows.append(row)

    if not hist_rows:
        result.complete = False
        result.warn(None, None, "at least one interval histogram line; the log has none")

    histograms = pd.DataFrame(hist_rows, columns=[*HISTOGRAM_COLUMNS, "start_epoch_s"])
    tags = list(dict.fromkeys(histograms["tag"].tolist()))
    kinds = {split_tag(t)[1] for t in tags}
    latency_type = "response" if "response" in kinds else "service" if "service" in kinds else "unknown"
    manifest: dict[str, Any] = {
        "tool": "cassandra-stress" if from_stress else "hdrhistogram-log",
        "tool_version": None,
        "command": None,
        "latency_type": latency_type,
        "source": src,
        "complete": result.complete,
        "histogram_unit": unit,
        "hdr_log_format_version": version,
        "started_utc": _utc_iso(eff_start, result) if known_epoch else None,
    }
    summary = _summary(histograms, unit) if derive_intervals and hist_rows else None
    run = Run(manifest=manifest, intervals=pd.DataFrame(interval_rows) if interval_rows else None,
              summary=summary, histograms=histograms)
    run.warnings.extend(str(w) for w in result.warnings)
    result.runs.append(run)
    return result


def _utc_iso(epoch_s: float, result: ParseResult) -> str | None:
    """The start as ISO UTC; a time no calendar holds (a mangled StartTime) is a warning and None."""
    try:
        return datetime.fromtimestamp(epoch_s, UTC).isoformat()
    except (ValueError, OverflowError, OSError):
        result.warn(None, None, f"a start time that is a date ({epoch_s:.0f} s since the epoch is outside the "
                                f"calendar): the run has no started_utc")
        return None


def _summary(histograms: pd.DataFrame, unit: str) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    merged = hdr.merge(histograms)
    for tag, h in merged.items():
        sel = histograms[histograms["tag"] == tag]
        duration = float(sel["end_s"].max() - sel["start_s"].min())
        stats = hdr.summary_ms(h, unit)
        op, kind = split_tag(tag)
        rows.append({"op": op, **stats, "duration_s": duration,
                     "rate_ops_s": stats["count"] / duration if duration > 0 else math.nan,
                     "tag": tag, "latency_type": kind})
    return pd.DataFrame(rows)


LogSource = str | Path | ParseResult | Run | pd.DataFrame


def _rows_of(source: LogSource) -> list[tuple[pd.DataFrame, str | None]]:
    """(histogram rows, their value unit or None when unstated) for one source."""
    if isinstance(source, (str, Path)):
        return _rows_of(read_hdr_log(Path(source), derive_intervals=False))
    if isinstance(source, ParseResult):
        return [(r.histograms, r.manifest.get("histogram_unit")) for r in source.runs]
    if isinstance(source, Run):
        return [(source.histograms, source.manifest.get("histogram_unit"))]
    if isinstance(source, pd.DataFrame):
        return [(source, None)]
    raise TypeError(f"cannot merge histograms from {type(source).__name__}: give an HDR log's path, a "
                    f"ParseResult, a Run or a histogram-rows DataFrame")


def merge_logs(sources: LogSource | Sequence[LogSource], tags: Iterable[str] | None = None,
               start_s: float | None = None, end_s: float | None = None,
               clock: str = "relative") -> dict[str, HdrHistogram]:
    """`hdr.merge` over HDR interval logs: one histogram per tag, summed across the sources
    (one per client) and time, never averaged.

    sources: a path to an HDR log (read here, without deriving intervals), a ParseResult, a Run,
    a histogram-rows DataFrame, or a list of these. tags, start_s, end_s (seconds) and clock are
    `hdr.merge`'s. Raises HistogramError when the sources state different value units (a Run's
    or log's `histogram_unit`) or have different precisions.
    """
    items = list(sources) if isinstance(sources, (list, tuple)) else [sources]
    units: set[str] = set()
    frames: list[pd.DataFrame] = []
    for item in items:
        for frame, unit in _rows_of(item):
            if unit:
                units.add(unit)
            frames.append(frame)
    if len(units) > 1:
        raise hdr.HistogramError(f"cannot merge histograms recorded in different units: {sorted(units)}")
    return hdr.merge(frames, tags=tags, start_s=start_s, end_s=end_s, clock=clock)


def write_hdr_log(rows: pd.DataFrame | Iterable[hdr.HistogramRow | tuple[str, float, float, Any]],
                  dest: str | Path | None = None, *, start_epoch_s: float = 0.0,
                  comment: str | None = "Logging op latencies for Cassandra Stress",
                  max_value_unit_ratio: float = 1_000_000.0) -> str:
    """Write interval histograms as cassandra-stress does (Java HistogramLogWriter layout).

    rows: a histogram-rows frame or (tag, start_s, end_s, HdrHistogram | encoded) items, times in
    seconds since `start_epoch_s`. Header lines come from HdrHistogram_py's HistogramLogWriter
    except StartTime (the package's output_start_time calls a datetime method that does not
    exist); interval lines are written here because the package's writer has no Tag= prefix and
    floors Interval_Max to an integer. Returns the text; writes it to `dest` when given, refusing
    to overwrite an existing file.
    """
    out = io.StringIO()
    writer = HistogramLogWriter(out)
    if comment:
        writer.output_comment(comment)
    writer.output_log_format_version()
    writer.output_base_time(start_epoch_s * 1000.0)
    stamp = datetime.fromtimestamp(start_epoch_s, UTC).strftime("%a %b %d %H:%M:%S UTC %Y")
    out.write(f"#[StartTime: {start_epoch_s:.3f} (seconds since epoch), {stamp}]\n")
    writer.output_legend()
    items: Iterable[Any]
    if isinstance(rows, pd.DataFrame):
        items = zip(rows["tag"], rows["start_s"], rows["end_s"], rows["encoded"], strict=True)
    else:
        items = rows
    for item in items:
        if isinstance(item, hdr.HistogramRow):
            tag, start, end, h = item.tag, item.start_s, item.end_s, item.encoded
        else:
            tag, start, end, h = item
        hist = h if isinstance(h, HdrHistogram) else hdr.decode(h)
        encoded = h if isinstance(h, str) else hdr.encode(hist)
        prefix = f"Tag={tag}," if tag else ""
        out.write(f"{prefix}{float(start):.3f},{float(end) - float(start):.3f},"
                  f"{hist.get_max_value() / max_value_unit_ratio:.3f},{encoded}\n")
    text = out.getvalue()
    if dest is not None:
        with open(dest, "x", encoding="utf-8") as fh:   # "x": never overwrite a raw file
            fh.write(text)
    return text


def parse(text: str, source: str = "<text>") -> ParseResult:
    return _read(text, source, None, True)


FORMAT = Format(name="hdr-log", description="HdrHistogram interval log (cassandra-stress -log hdrfile=)",
                sniff=sniff, parse=parse)
