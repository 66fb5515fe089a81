"""HdrHistogram helpers: decode, merge across clients and time windows, percentiles in ms.

Percentiles across clients or intervals are never averaged: the interval histograms are added
bucket by bucket and the percentile is read from the sum. Because HdrHistogram buckets depend
only on (lowest discernible value, significant figures), the sum of the interval histograms is
*the same histogram* one would have recorded from the union of all raw samples, so a merged
percentile is exactly the union's percentile (tests/unit/test_hdr.py checks this).

Units. Histograms store integers; what one unit means is the producer's choice:
cassandra-stress (`-log hdrfile=`) records **nanoseconds** (StressMetrics.record() records
`nanoTime()` differences into `new Histogram(3)`: lowest 1, 3 significant figures, auto-resized),
and its log's Interval_Max column is the max divided by 1,000,000, i.e. in ms. Every function
here that returns a time takes `unit` ("ns", "us" or "ms": what one recorded integer means) and
returns **milliseconds**.

Speed. HdrHistogram_py 0.10.8 decodes in C (pyhdrh) but its `decode()` builds a full histogram
object (~160 us) and its `add()` loops in Python when the two histograms' highest trackable
values differ (Java's auto-resizing histograms do differ: ~4.5 ms per add). `merge_encoded`
instead decodes each payload with the package's own codec (`HdrHistogramEncoder.decode` and
the C `pyhdrh.decode`) into one reusable numpy buffer and sums with numpy (~45 us per interval
histogram on the project machine), then hands back a regular `HdrHistogram` whose counts are the
exact sum. Percentiles use the package's own rule (`get_value_at_percentile`): target count
`max(int(p * total / 100 + 0.5), 1)`, first index whose cumulative count reaches it, reported
as the highest value equivalent to that bucket; `percentile_ms` applies the same rule with a
numpy cumulative sum and is checked against the package in the tests.
"""

from __future__ import annotations

import binascii
import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from hdrh.codec import payload_header_size
from hdrh.histogram import HdrHistogram
from pyhdrh import decode as _c_decode  # the package's C varint decoder

from cassperf.errors import CassperfError

#: What one recorded integer means, in nanoseconds.
UNIT_NS: dict[str, int] = {"ns": 1, "us": 1_000, "ms": 1_000_000}

#: The percentiles every derived table reports (100 is the max).
STANDARD_PERCENTILES: tuple[float, ...] = (50.0, 95.0, 99.0, 99.9, 100.0)


class HistogramError(CassperfError):
    """A histogram payload that cannot be decoded, or histograms that cannot be merged exactly
    (different lowest discernible value or significant figures), or mixed value units."""


@dataclass(frozen=True)
class HistogramRow:
    """One interval histogram of one tag, as a log line holds it.

    start_s/end_s: seconds since the run's start (the log's StartTime); encoded: HdrHistogram's
    compressed base64 form ("HISTFAAA..."), values in the producer's unit.
    """

    tag: str
    start_s: float
    end_s: float
    encoded: str


@dataclass(frozen=True)
class Layout:
    """The bucket layout of a histogram: indices mean the same values in every histogram with
    the same (lowest, significant_figures); highest only sets how many buckets exist."""

    lowest: int
    highest: int
    significant_figures: int


@lru_cache(maxsize=256)
def _template(layout: Layout) -> HdrHistogram:
    """An empty package histogram of this layout, used for index -> value conversions."""
    return HdrHistogram(layout.lowest, layout.highest, layout.significant_figures)


@dataclass(frozen=True)
class DecodedCounts:
    """A decoded interval histogram: its layout and counts (index -> count), int64."""

    layout: Layout
    counts: np.ndarray
    total: int
    min_index: int     # -1 when empty
    max_index: int     # -1 when empty


_EXT_HEADER = struct.Struct(">II")             # cookie, compressed length (HdrHistogram V2 wire format)
_PAYLOAD_HEADER = struct.Struct(">IIIIqqd")    # cookie, payload length, normalizing offset, sig figs,
#                                                lowest, highest, int-to-double ratio
_COMPRESSION_COOKIE = 0x1C849304               # V2 compressed (the package's V2_COMPRESSION_COOKIE_BASE)
_ENCODING_COOKIE = 0x1C849303                  # V2 encoding (V2_ENCODING_COOKIE_BASE)


def _decode_payload(encoded: str | bytes) -> tuple[Layout, bytes]:
    """Validate and inflate one payload as HdrHistogram_py's codec does (same cookies, length
    check and header), returning the layout and the inflated bytes for the C varint decoder."""
    try:
        raw = binascii.a2b_base64(encoded)     # what base64.b64decode does, minus its wrapper
        if len(raw) < _EXT_HEADER.size:
            raise HistogramError("histogram payload too short")
        cookie, length = _EXT_HEADER.unpack_from(raw)
        if cookie & ~0xF0 != _COMPRESSION_COOKIE:
            raise HistogramError(f"not a compressed V2 histogram (cookie {cookie:#x})")
        if length != len(raw) - _EXT_HEADER.size:
            raise HistogramError(f"histogram payload length {len(raw) - _EXT_HEADER.size}, header says {length}")
        data = zlib.decompress(raw[_EXT_HEADER.size:])
        if len(data) < _PAYLOAD_HEADER.size:
            raise HistogramError("inflated histogram payload too short")
        inner, _plen, norm, sig, lowest, highest, _ratio = _PAYLOAD_HEADER.unpack_from(data)
    except HistogramError:
        raise
    except (binascii.Error, zlib.error, ValueError, TypeError, struct.error) as exc:
        raise HistogramError(f"cannot decode histogram payload: {type(exc).__name__}: {exc}") from exc
    if inner & ~0xF0 != _ENCODING_COOKIE or (inner & 0xF0) >> 4 != 1:
        raise HistogramError(f"not a V2 histogram encoding (cookie {inner:#x})")
    if norm != 0:
        raise HistogramError("histogram payload with a normalizing index offset (shifted histogram) "
                             "is not supported")
    layout = Layout(int(lowest), int(highest), int(sig))
    if layout.lowest < 1 or not 1 <= layout.significant_figures <= 5 or layout.highest < 2 * layout.lowest:
        raise HistogramError(f"histogram payload with unsupported settings {layout}")
    return layout, data


def counts_len(layout: Layout) -> int:
    return int(_template(layout).counts_len)


def decode_counts(encoded: str | bytes) -> DecodedCounts:
    """Decode one payload into a fresh int64 counts array (the package's C decoder)."""
    layout, payload = _decode_payload(encoded)
    n = counts_len(layout)
    counts = np.zeros(n, dtype=np.int64)
    try:
        res = _c_decode(payload, payload_header_size, counts.ctypes.data, n, 8)
    except (IndexError, ValueError, TypeError) as exc:
        raise HistogramError(f"cannot decode histogram counts: {exc}") from exc
    if res["total"] and (counts[res["min_nonzero_index"]:res["max_nonzero_index"] + 1] < 0).any():
        raise HistogramError("histogram payload with negative counts")
    return DecodedCounts(layout, counts, int(res["total"]), int(res["min_nonzero_index"]),
                         int(res["max_nonzero_index"]))


def counts_index(layout: Layout, values: np.ndarray) -> np.ndarray:
    """The counts-array index of each recorded integer (0 <= value < 2**53), as the package's
    `_counts_index_for` computes it, vectorised (the tests check it value by value)."""
    t = _template(layout)
    v = np.asarray(values, dtype=np.int64)
    bits = np.frexp((v | int(t.sub_bucket_mask)).astype(np.float64))[1].astype(np.int64)
    bucket = bits - int(t.unit_magnitude) - (int(t.sub_bucket_half_count_magnitude) + 1)
    sub = v >> (bucket + int(t.unit_magnitude))
    return ((bucket + 1) << int(t.sub_bucket_half_count_magnitude)) + (sub - int(t.sub_bucket_half_count))


def decode(encoded: str | bytes) -> HdrHistogram:
    """One payload as a package `HdrHistogram` (HistogramError instead of the package's errors)."""
    d = decode_counts(encoded)
    return histogram_from_counts(d.layout, d.counts)


def encode(histogram: HdrHistogram) -> str:
    """The compressed base64 form ("HISTFAAA..."), as log lines carry it."""
    return histogram.encode().decode("ascii")


def histogram_from_counts(layout: Layout, counts: np.ndarray) -> HdrHistogram:
    """A package `HdrHistogram` holding exactly these counts (index-aligned with `layout`)."""
    hist = HdrHistogram(layout.lowest, layout.highest, layout.significant_figures)
    n = min(len(counts), hist.counts_len)
    if len(counts) > n and counts[n:].any():
        raise HistogramError("counts beyond the layout's highest trackable value")
    target = np.ctypeslib.as_array(hist.counts).view(np.int64)
    target[:n] = counts[:n]
    nz = np.flatnonzero(counts[:n])
    if nz.size:
        hist.set_internal_tacking_values(int(nz[0]), int(nz[-1]), int(counts[:n].sum()))
    return hist


def histogram_from_samples(values: Iterable[int], layout: Layout | None = None) -> HdrHistogram:
    """Record raw integer samples into a package histogram (default: cassandra-stress's
    precision, lowest 1, 3 significant figures, highest 1 hour in ns)."""
    layout = layout or Layout(1, 3_600_000_000_000, 3)
    hist = HdrHistogram(layout.lowest, layout.highest, layout.significant_figures)
    for v in values:
        if not hist.record_value(int(v)):
            raise HistogramError(f"value {v} outside the histogram's range {layout}")
    return hist


def merge_encoded(payloads: Iterable[str | bytes]) -> HdrHistogram | None:
    """Sum interval histograms (base64 payloads) into one package histogram, exactly.

    All payloads must share lowest discernible value and significant figures (their highest
    trackable values may differ); the result's highest is the largest seen. None when empty.
    """
    acc: np.ndarray | None = None
    buf: np.ndarray | None = None
    base: tuple[int, int] | None = None
    highest = 0
    addr = 0
    sizes: dict[Layout, int] = {}
    for encoded in payloads:
        layout, payload = _decode_payload(encoded)
        key = (layout.lowest, layout.significant_figures)
        if base is None:
            base = key
        elif key != base:
            raise HistogramError(f"cannot merge histograms of different precision: lowest/significant "
                                 f"figures {base} vs {key}")
        n = sizes.get(layout)
        if n is None:
            n = sizes[layout] = counts_len(layout)
        if acc is None or buf is None:
            acc = np.zeros(n, dtype=np.int64)
            buf = np.zeros(n, dtype=np.int64)
            addr = buf.ctypes.data
        elif n > len(acc):
            acc = np.concatenate([acc, np.zeros(n - len(acc), dtype=np.int64)])
            buf = np.zeros(n, dtype=np.int64)
            addr = buf.ctypes.data
        highest = max(highest, layout.highest)
        try:
            res = _c_decode(payload, payload_header_size, addr, n, 8)
        except (IndexError, ValueError, TypeError) as exc:
            buf[:] = 0
            raise HistogramError(f"cannot decode histogram counts: {exc}") from exc
        if res["total"]:
            lo, hi = res["min_nonzero_index"], res["max_nonzero_index"] + 1
            acc[lo:hi] += buf[lo:hi]
            buf[lo:hi] = 0
    if acc is None or base is None:
        return None
    return histogram_from_counts(Layout(base[0], highest, base[1]), acc)


# ---- percentiles ---------------------------------------------------------------------------

def _layout_of(hist: HdrHistogram) -> Layout:
    return Layout(int(hist.lowest_trackable_value), int(hist.highest_trackable_value),
                  int(hist.significant_figures))


def _counts_of(hist: HdrHistogram) -> np.ndarray:
    return np.ctypeslib.as_array(hist.counts).view(np.int64)


def percentile_values(layout: Layout, counts: np.ndarray, percentiles: Sequence[float],
                      offset: int = 0) -> list[int]:
    """Values (recorded units) at the given percentiles (0..100), by the package's rule.
    `counts` may be a slice of the full array starting at index `offset`. Empty counts give 0
    for every percentile, as the package does."""
    cum = np.cumsum(counts)
    total = int(cum[-1]) if cum.size else 0
    if total == 0:
        return [0 for _ in percentiles]
    tmpl = _template(layout)
    out: list[int] = []
    for p in percentiles:
        requested = min(float(p), 100.0)
        target = max(int((requested * total / 100) + 0.5), 1)
        idx = offset + int(np.searchsorted(cum, target, side="left"))
        value = tmpl.get_value_from_index(idx)
        out.append(int(tmpl.get_highest_equivalent_value(value) if p else tmpl.get_lowest_equivalent_value(value)))
    return out


def mean_value(layout: Layout, counts: np.ndarray, offset: int = 0) -> float:
    """Mean (recorded units) by the package's rule: each bucket counts at its median equivalent
    value. Exact integer arithmetic, as the package does. `offset` as in percentile_values."""
    nz_local = np.flatnonzero(counts)
    if nz_local.size == 0:
        return 0.0
    nz = nz_local + offset
    tmpl = _template(layout)
    half = tmpl.sub_bucket_half_count
    shbm = tmpl.sub_bucket_half_count_magnitude
    unit = tmpl.unit_magnitude
    bucket = (nz >> shbm) - 1
    sub = (nz & (half - 1)) + half
    low_half = bucket < 0
    sub = np.where(low_half, sub - half, sub)
    bucket = np.where(low_half, 0, bucket)
    lowest = sub << (bucket + unit)
    median = lowest + ((np.int64(1) << (bucket + unit)) >> 1)
    c = counts[nz_local]
    total_count = int(c.sum())
    if int(median.max()) * total_count < 2**62:
        weighted = int(np.dot(c, median))
    else:
        weighted = sum(int(a) * int(b) for a, b in zip(c.tolist(), median.tolist(), strict=True))
    return float(weighted) / total_count


def _per_ms(unit: str) -> float:
    """How many recorded units make one millisecond (values are divided by it: the closest
    float to the exact quotient)."""
    if unit not in UNIT_NS:
        raise HistogramError(f"unknown histogram unit {unit!r}; expected one of {sorted(UNIT_NS)}")
    return 1_000_000.0 / UNIT_NS[unit]


def percentile_ms(hist: HdrHistogram, percentile: float, unit: str = "ns") -> float:
    """The value at `percentile` (0..100; 100 = max) in milliseconds."""
    return percentiles_ms(hist, (percentile,), unit)[percentile]


def percentiles_ms(hist: HdrHistogram, percentiles: Sequence[float] = STANDARD_PERCENTILES,
                   unit: str = "ns") -> dict[float, float]:
    """{percentile: value in ms}; identical to the package's get_value_at_percentile, scaled."""
    per_ms = _per_ms(unit)
    values = percentile_values(_layout_of(hist), _counts_of(hist), percentiles)
    return {float(p): v / per_ms for p, v in zip(percentiles, values, strict=True)}


def max_ms(hist: HdrHistogram, unit: str = "ns") -> float:
    """The max (highest equivalent value of the top bucket, like the package's get_max_value)."""
    return hist.get_max_value() / _per_ms(unit)


def mean_ms(hist: HdrHistogram, unit: str = "ns") -> float:
    return mean_value(_layout_of(hist), _counts_of(hist)) / _per_ms(unit)


def stats_ms(layout: Layout, counts: np.ndarray, unit: str = "ns", offset: int = 0) -> dict[str, float | int]:
    """count, mean, p50, p95, p99, p99.9 and max (ms) as the frames name them."""
    per_ms = _per_ms(unit)
    p50, p95, p99, p999, pmax = percentile_values(layout, counts, STANDARD_PERCENTILES, offset)
    return {
        "count": int(counts.sum()),
        "latency_mean_ms": mean_value(layout, counts, offset) / per_ms,
        "latency_p50_ms": p50 / per_ms,
        "latency_p95_ms": p95 / per_ms,
        "latency_p99_ms": p99 / per_ms,
        "latency_p999_ms": p999 / per_ms,
        "latency_max_ms": pmax / per_ms,
    }


_SCRATCH: dict[int, np.ndarray] = {}


def payload_stats_ms(encoded: str | bytes, unit: str = "ns") -> tuple[Layout, dict[str, float | int]]:
    """Decode one payload into a reused buffer and return its layout and stats_ms.
    Raises HistogramError for a payload that does not decode."""
    layout, payload = _decode_payload(encoded)
    n = counts_len(layout)
    buf = _SCRATCH.get(n)
    if buf is None:
        buf = _SCRATCH.setdefault(n, np.zeros(n, dtype=np.int64))
    try:
        res = _c_decode(payload, payload_header_size, buf.ctypes.data, n, 8)
    except (IndexError, ValueError, TypeError) as exc:
        buf[:] = 0
        raise HistogramError(f"cannot decode histogram counts: {exc}") from exc
    if not res["total"]:
        return layout, stats_ms(layout, buf[:0], unit)
    lo, hi = res["min_nonzero_index"], res["max_nonzero_index"] + 1
    window = buf[lo:hi].copy()
    buf[lo:hi] = 0
    if (window < 0).any():
        raise HistogramError("histogram payload with negative counts")
    return layout, stats_ms(layout, window, unit, offset=lo)


def summary_ms(hist: HdrHistogram, unit: str = "ns") -> dict[str, float | int]:
    """stats_ms of a package histogram."""
    return stats_ms(_layout_of(hist), _counts_of(hist), unit)


# ---- merging rows, runs and files ------------------------------------------------------------

Source = Any  # DataFrame of histogram rows | Run | ParseResult | str | Path | list of HistogramRow


def _frames_of(source: Source) -> list[tuple[pd.DataFrame, str | None]]:
    """(histogram rows, unit or None) for one source."""
    from cassperf.parsers.base import ParseResult
    from cassperf.results.model import Run

    if isinstance(source, pd.DataFrame):
        return [(source, None)]
    if isinstance(source, Run):
        return [(source.histograms, source.manifest.get("histogram_unit"))]
    if isinstance(source, ParseResult):
        return [(r.histograms, r.manifest.get("histogram_unit")) for r in source.runs]
    if isinstance(source, (str, Path)):
        from cassperf.parsers.hdr_log import read_hdr_log
        return _frames_of(read_hdr_log(Path(source), derive_intervals=False))
    if isinstance(source, HistogramRow):
        return [(pd.DataFrame([source.__dict__]), None)]
    raise TypeError(f"cannot merge histograms from {type(source).__name__}")


def _select(frame: pd.DataFrame, tags: set[str] | None, start_s: float | None, end_s: float | None,
            clock: str) -> pd.DataFrame:
    if frame.empty:
        return frame
    if clock == "epoch":
        if "start_epoch_s" not in frame.columns:
            raise HistogramError("clock='epoch' needs histogram rows with a start_epoch_s column "
                                 "(logs with a StartTime)")
        start = frame["start_epoch_s"].astype("float64")
        end = start + (frame["end_s"].astype("float64") - frame["start_s"].astype("float64"))
    elif clock == "relative":
        start = frame["start_s"].astype("float64")
        end = frame["end_s"].astype("float64")
    else:
        raise ValueError(f"clock must be 'relative' or 'epoch', got {clock!r}")
    mid = (start + end) / 2.0
    keep = pd.Series(True, index=frame.index)
    if tags is not None:
        keep &= frame["tag"].astype("string").isin(tags).fillna(False)
    if start_s is not None:
        keep &= mid >= start_s
    if end_s is not None:
        keep &= mid < end_s
    return frame[keep.astype(bool)]


def merge(sources: Source | Sequence[Source], tags: Iterable[str] | None = None,
          start_s: float | None = None, end_s: float | None = None,
          clock: str = "relative") -> dict[str, HdrHistogram]:
    """One histogram per tag, summed across sources (clients, files) and time.

    sources: a histogram-rows DataFrame (tag, start_s, end_s, encoded), a Run, a ParseResult,
    a path to an HDR log, a HistogramRow, or a list of these (one per client).
    tags: keep only these tags (None: all).
    Window: an interval belongs to [start_s, end_s) when its midpoint does, so windows that tile
    the time axis count every interval exactly once. clock="relative" uses each source's own
    seconds-since-start; clock="epoch" uses absolute time (column start_epoch_s), which aligns
    clients that started at different moments.
    Raises HistogramError when sources declare different units or precisions.
    """
    items: list[Source]
    if isinstance(sources, (list, tuple)):
        items = list(sources)
        if items and all(isinstance(i, HistogramRow) for i in items):
            items = [pd.DataFrame([i.__dict__ for i in items])]
    else:
        items = [sources]
    tagset = set(tags) if tags is not None else None
    units: set[str] = set()
    per_tag: dict[str, list[str]] = {}
    for item in items:
        for frame, unit in _frames_of(item):
            if unit:
                units.add(unit)
            sel = _select(frame, tagset, start_s, end_s, clock)
            for tag, encoded in zip(sel["tag"].astype("string").fillna("").tolist(),
                                    sel["encoded"].tolist(), strict=True):
                per_tag.setdefault(str(tag), []).append(encoded)
    if len(units) > 1:
        raise HistogramError(f"cannot merge histograms recorded in different units: {sorted(units)}")
    out: dict[str, HdrHistogram] = {}
    for tag in sorted(per_tag):
        merged = merge_encoded(per_tag[tag])
        if merged is not None:
            out[tag] = merged
    return out


def merged_summary(sources: Source | Sequence[Source], unit: str = "ns", **kwargs: Any) -> pd.DataFrame:
    """merge(...) as a table: one row per tag with count, mean, p50, p95, p99, p99.9, max (ms)."""
    rows = [{"tag": tag, **summary_ms(h, unit)} for tag, h in merge(sources, **kwargs).items()]
    return pd.DataFrame(rows, columns=["tag", "count", "latency_mean_ms", "latency_p50_ms",
                                       "latency_p95_ms", "latency_p99_ms", "latency_p999_ms",
                                       "latency_max_ms"])
