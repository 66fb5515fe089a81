"""Latency recording for the load engine: raw samples in the hot path, HDR histograms per interval.

Recording one op must cost next to nothing (the engine's budget is a few microseconds per op
in Python), so the hot path only appends an integer (nanoseconds) to an ``array('q')``. When an
interval closes, the samples of each tag are turned into HdrHistogram bucket counts with numpy
in one pass (``counts_index``: the same bucket arithmetic as HdrHistogram's
``_counts_index_for``, vectorised; tests/unit/test_recorder.py checks it against the package's
``record_value`` value by value), and the histogram is encoded in the standard compressed form.

Layout: lowest discernible value 1 ns, highest trackable 1 hour, 3 significant figures: the
precision cassandra-stress records with (``new Histogram(3)``, nanoTime() differences), so our
histograms merge with its logs. Values outside [0, 1 hour] are clamped to the range and counted
(``clamped``); they are never dropped silently.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import numpy as np
from hdrh.histogram import HdrHistogram


@dataclass(frozen=True)
class Layout:
    """Bucket layout (the same fields as ``cassperf.results.hdr.Layout``; this module stays free of
    pandas so worker processes start fast)."""

    lowest: int
    highest: int
    significant_figures: int


#: Histogram layout of every engine histogram (values in ns).
LAYOUT = Layout(lowest=1, highest=3_600_000_000_000, significant_figures=3)


@dataclass(frozen=True)
class _Shape:
    unit_magnitude: int
    half_count_magnitude: int
    half_count: int
    mask: int
    counts_len: int


def _shape(layout: Layout) -> _Shape:
    t = HdrHistogram(layout.lowest, layout.highest, layout.significant_figures)
    return _Shape(int(t.unit_magnitude), int(t.sub_bucket_half_count_magnitude), int(t.sub_bucket_half_count),
                  int(t.sub_bucket_mask), int(t.counts_len))


_SHAPE = _shape(LAYOUT)


def counts_index(values: np.ndarray, shape: _Shape = _SHAPE) -> np.ndarray:
    """HdrHistogram counts indices of non-negative int64 values (< 2**53), vectorised.

    bucket = bit_length(v | sub_bucket_mask) - unit_magnitude - (half_count_magnitude + 1);
    sub = v >> (bucket + unit_magnitude); index = ((bucket + 1) << half_count_magnitude) + sub - half_count.
    bit_length comes from frexp of the float64 value, exact for integers below 2**53.
    """
    v = values.astype(np.int64, copy=False)
    _, exponent = np.frexp((v | shape.mask).astype(np.float64))
    bucket = exponent.astype(np.int64) - shape.unit_magnitude - (shape.half_count_magnitude + 1)
    sub = v >> (bucket + shape.unit_magnitude)
    return ((bucket + 1) << shape.half_count_magnitude) + (sub - shape.half_count)


@dataclass(frozen=True)
class IntervalHistogram:
    """One closed interval of one tag: sample count, encoded histogram, max (ns), and how many
    samples were clamped into the trackable range."""

    count: int
    encoded: str
    max_ns: int
    clamped: int


def histogram_of(samples: np.ndarray) -> IntervalHistogram:
    """Encode raw nanosecond samples as one HdrHistogram (LAYOUT)."""
    v = np.asarray(samples, dtype=np.int64)
    clamped = 0
    if v.size:
        low, high = int(v.min()), int(v.max())
        if low < 0 or high > LAYOUT.highest:
            clamped = int(((v < 0) | (v > LAYOUT.highest)).sum())
            v = np.clip(v, 0, LAYOUT.highest)
    counts = np.bincount(counts_index(v), minlength=_SHAPE.counts_len) if v.size \
        else np.zeros(_SHAPE.counts_len, dtype=np.int64)
    hist = HdrHistogram(LAYOUT.lowest, LAYOUT.highest, LAYOUT.significant_figures)
    if v.size:
        np.ctypeslib.as_array(hist.counts).view(np.int64)[:] = counts
        nz = np.flatnonzero(counts)
        hist.set_internal_tacking_values(int(nz[0]), int(nz[-1]), int(v.size))
    return IntervalHistogram(int(v.size), hist.encode().decode("ascii"),
                             int(hist.get_max_value()) if v.size else 0, clamped)


class Samples:
    """Per-tag sample buffers of one process for the current interval.

    ``buffers[tag]`` is an ``array('q')`` that lives for the whole run; the hot path keeps a
    reference and calls ``.append(ns)``. ``drain()`` copies the samples out and empties the
    buffers in place (single-threaded event loop: no op can append between the two)."""

    def __init__(self, tags: list[str]) -> None:
        self.tags = list(tags)
        self.buffers: dict[str, array] = {t: array("q") for t in self.tags}

    def drain(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for tag, buf in self.buffers.items():
            out[tag] = np.frombuffer(buf.tobytes(), dtype=np.int64)
            del buf[:]
        return out
