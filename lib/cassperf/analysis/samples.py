"""One op's per-interval samples in a window: counts, lengths, and the decoded HDR histograms.

Window statistics, batch means and the block bootstrap all start here. When the run has HDR
histograms for the op, each histogram row is one interval: it is decoded once
(`cassperf.hdr.decode_counts`) into a row of a matrix over the union of the buckets any interval
used, so a merge of any selection of intervals (a window, a bootstrap replicate) is a sum of
rows: the exact histogram of the union of their samples. Percentiles of a merged row follow the
rule of `cassperf.hdr.percentile_values` (checked against it in the tests). Without histograms,
the interval rows' columns are used and `merged` is False: their percentiles cannot be merged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import pandas as pd
from hdrh.histogram import HdrHistogram

from cassperf import hdr
from cassperf.analysis.select import (
    AnalysisError,
    choose_tag,
    histogram_bounds,
    in_window,
    interval_counts,
    op_rows,
    ops_of,
    run_name,
)
from cassperf.results.model import Run

PERCENTILE_COLUMNS: dict[float, str] = {50.0: "latency_p50_ms", 95.0: "latency_p95_ms", 99.0: "latency_p99_ms",
                                        99.9: "latency_p999_ms", 100.0: "latency_max_ms"}


@dataclass(frozen=True, eq=False)
class HistCounts:
    """Interval histograms of one tag as a matrix: matrix[i, j] = count of interval i in bucket
    index[j] (index sorted; the buckets no interval used are left out)."""

    layout: hdr.Layout
    index: np.ndarray        # (K,) int64 bucket indices
    matrix: np.ndarray       # (n, K) int64

    @cached_property
    def _values(self) -> tuple[np.ndarray, np.ndarray]:
        """Per bucket: the value a percentile landing there reports (highest equivalent value)
        and the value the mean counts it at (median equivalent), in recorded units. The bucket
        arithmetic of HdrHistogram (as cassperf.hdr.mean_value does it), vectorised; the tests
        check it against the package's get_highest_equivalent_value."""
        tmpl = HdrHistogram(self.layout.lowest, self.layout.highest, self.layout.significant_figures)
        half = int(tmpl.sub_bucket_half_count)
        bucket = (self.index >> int(tmpl.sub_bucket_half_count_magnitude)) - 1
        sub = (self.index & (half - 1)) + half
        low_half = bucket < 0
        sub = np.where(low_half, sub - half, sub)
        bucket = np.where(low_half, 0, bucket)
        shift = bucket + int(tmpl.unit_magnitude)
        lowest = sub << shift
        size = np.left_shift(np.int64(1), shift)
        return lowest + size - 1, (lowest + (size >> 1)).astype(np.float64)

    def stats_ms(self, merged: np.ndarray, unit: str) -> dict[str, float | int]:
        """cassperf.hdr.stats_ms of one merged row (exact: same code on the dense counts)."""
        if not len(self.index) or not merged.any():
            return {"count": 0, **{c: float("nan") for c in ("latency_mean_ms", *PERCENTILE_COLUMNS.values())}}
        lo = int(self.index[0])
        dense = np.zeros(int(self.index[-1]) - lo + 1, dtype=np.int64)
        dense[self.index - lo] = merged
        return hdr.stats_ms(self.layout, dense, unit, offset=lo)

    def percentile_ms(self, merged: np.ndarray, percentile: float, unit: str) -> np.ndarray:
        """The percentile (0 < p <= 100) of each row of `merged` (B, K), in ms; NaN for empty rows."""
        cum = np.cumsum(merged, axis=1)
        total = cum[:, -1].astype(np.float64)
        target = np.maximum(np.floor(percentile * total / 100 + 0.5), 1.0)
        j = np.minimum((cum < target[:, None]).sum(axis=1), len(self.index) - 1)
        out = self._values[0][j] / (1_000_000.0 / hdr.UNIT_NS[unit])
        return np.where(total > 0, out, np.nan)

    def latency_sums_ms(self, unit: str) -> np.ndarray:
        """Per interval: the sum of its latencies (ms) as the HDR mean counts them."""
        return (self.matrix @ self._values[1]) / (1_000_000.0 / hdr.UNIT_NS[unit])


def decode_rows(encoded: list[str], where: str) -> HistCounts:
    """Decode payloads of one tag into a HistCounts (lowest value and precision must agree)."""
    decoded = []
    for payload in encoded:
        try:
            decoded.append(hdr.decode_counts(payload))
        except hdr.HistogramError as exc:
            raise AnalysisError(f"{where}: {exc}") from exc
    if not decoded:
        return HistCounts(hdr.Layout(1, 2, 3), np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.int64))
    bases = {(d.layout.lowest, d.layout.significant_figures) for d in decoded}
    if len(bases) > 1:
        raise AnalysisError(f"{where}: histograms of different precision (lowest, significant figures) "
                            f"{sorted(bases)} cannot be merged")
    lowest, sig = bases.pop()
    layout = hdr.Layout(lowest, max(d.layout.highest for d in decoded), sig)
    nonzero = [d.min_index + np.flatnonzero(d.counts[d.min_index:d.max_index + 1]) if d.total
               else np.zeros(0, dtype=np.int64) for d in decoded]
    index = np.unique(np.concatenate(nonzero)) if nonzero else np.zeros(0, dtype=np.int64)
    matrix = np.zeros((len(decoded), len(index)), dtype=np.int64)
    for i, (d, nz) in enumerate(zip(decoded, nonzero, strict=True)):
        matrix[i, np.searchsorted(index, nz)] = d.counts[nz]
    return HistCounts(layout, index.astype(np.int64), matrix)


@dataclass(frozen=True, eq=False)
class OpSamples:
    """Per-interval samples of one op in one window (arrays aligned, sorted by end time).

    count: ops with a latency in each interval (histogram total, or the interval's count);
    mean_ms: each interval's mean latency; rows: the interval rows (errors, row rates) of the op
    in the window; hist: the decoded histograms, None when the run has none for the op;
    pct: per-interval percentile columns (ms) when there are no histograms.
    """

    run: str
    op: str
    tag: str | None
    latency_type: str
    unit: str
    start_s: np.ndarray
    end_s: np.ndarray
    count: np.ndarray
    mean_ms: np.ndarray
    rows: pd.DataFrame
    hist: HistCounts | None
    pct: pd.DataFrame | None
    note: str

    @property
    def merged(self) -> bool:
        return self.hist is not None

    @property
    def n(self) -> int:
        return len(self.end_s)

    @property
    def rate_ops_s(self) -> np.ndarray:
        length = self.end_s - self.start_s
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(length > 0, self.count / length, np.nan)


def window_samples(samples: OpSamples, start_s: float, end_s: float) -> OpSamples:
    """The part of `samples` whose intervals' midpoints lie in [start_s, end_s) (the rule of
    op_samples), histogram buckets no kept interval used left out."""
    keep = in_window(samples.start_s, samples.end_s, start_s, end_s)
    rows = samples.rows
    if not rows.empty and "start_s" in rows.columns:
        rows = rows[in_window(rows["start_s"].to_numpy(dtype="float64"), rows["end_s"].to_numpy(dtype="float64"),
                              start_s, end_s)].reset_index(drop=True)
    hist = samples.hist
    if hist is not None:
        matrix = hist.matrix[keep]
        used = matrix.any(axis=0)
        hist = HistCounts(hist.layout, hist.index[used], matrix[:, used])
    pct = samples.pct[keep].reset_index(drop=True) if samples.pct is not None else None
    return replace(samples, start_s=samples.start_s[keep], end_s=samples.end_s[keep], count=samples.count[keep],
                   mean_ms=samples.mean_ms[keep], rows=rows, hist=hist, pct=pct)


def stack(hists: Sequence[HistCounts], where: str) -> HistCounts:
    """Histograms of several runs as the rows of one matrix over the union of their buckets
    (each input summed over its rows first): a merge of any selection of runs is then a
    weighted sum of rows. Raises AnalysisError when their precisions differ."""
    bases = {(h.layout.lowest, h.layout.significant_figures) for h in hists}
    if len(bases) != 1:
        raise AnalysisError(f"{where}: histograms of different precision (lowest, significant figures) "
                            f"{sorted(bases)} cannot be merged" if bases else f"{where}: no histograms to merge")
    index = np.unique(np.concatenate([h.index for h in hists]))
    matrix = np.zeros((len(hists), len(index)), dtype=np.int64)
    for i, h in enumerate(hists):
        matrix[i, np.searchsorted(index, h.index)] = h.matrix.sum(axis=0)
    first = hists[0].layout
    layout = hdr.Layout(first.lowest, max(h.layout.highest for h in hists), first.significant_figures)
    return HistCounts(layout, index.astype(np.int64), matrix)


def op_samples(run: Run, op: str, start_s: float = -np.inf, end_s: float = np.inf,
               latency_type: str | None = None) -> OpSamples:
    """The samples of `op` whose intervals' midpoints lie in [start_s, end_s).
    Raises AnalysisError naming the run and its ops when it has neither rows nor histograms for op."""
    tag, kind, note = choose_tag(run, op, latency_type)
    rows = op_rows(run, op, tag)
    if tag is None and rows.empty:
        from cassperf.analysis.select import ops_of
        raise AnalysisError(f"run {run_name(run)}: no intervals or histograms for op {op!r}; "
                            f"it has {ops_of(run) or 'none'}")
    rows = rows[in_window(rows["start_s"].to_numpy(), rows["end_s"].to_numpy(), start_s, end_s)] \
        .reset_index(drop=True) if not rows.empty else rows
    unit = str(run.manifest.get("histogram_unit") or "ns")
    if tag is not None:
        h = run.histograms
        h = h[(h["tag"] == tag).fillna(False).to_numpy()]
        start, end = histogram_bounds(run, h)
        sel = in_window(start, end, start_s, end_s)
        order = np.argsort(end[sel], kind="stable")
        encoded = h["encoded"].to_numpy()[sel][order].tolist()
        hist = decode_rows(encoded, f"run {run_name(run)}, histograms {tag!r}")
        count = hist.matrix.sum(axis=1).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.where(count > 0, hist.latency_sums_ms(unit) / count, np.nan)
        return OpSamples(run_name(run), op, tag, kind, unit, start[sel][order], end[sel][order], count, mean,
                         rows, hist, None, note)
    if "latency_type" in rows.columns and rows["latency_type"].notna().any():
        kind = str(rows["latency_type"].dropna().iloc[0])
    count = interval_counts(rows, run.manifest)
    mean = rows["latency_mean_ms"].to_numpy(dtype="float64", na_value=np.nan)
    pct = rows[[c for c in PERCENTILE_COLUMNS.values() if c in rows.columns]].astype("float64")
    note = "no HDR histograms: percentiles are count-weighted means of per-interval percentiles, not merged"
    return OpSamples(run_name(run), op, None, kind, unit, rows["start_s"].to_numpy(dtype="float64"),
                     rows["end_s"].to_numpy(dtype="float64"), count, mean, rows, None, pct, note)


def combine(parts: Sequence[OpSamples], op: str) -> OpSamples:
    """Several ops of one run as one (e.g. "write" = write + delete: the mutations), interval
    by interval: counts added, histograms summed bucket by bucket (never percentiles averaged).
    The parts must cover the same intervals (same end times), as one tool's ops do."""
    if not parts:
        raise AnalysisError(f"combine {op!r}: no ops to combine")
    first = parts[0]
    if len(parts) == 1:
        return replace(first, op=op)
    for p in parts[1:]:
        if p.n != first.n or not np.allclose(p.end_s, first.end_s):
            raise AnalysisError(f"run {first.run}: ops {first.op!r} and {p.op!r} have different intervals; "
                                f"they cannot be combined as {op!r}")
        if (p.hist is None) != (first.hist is None):
            raise AnalysisError(f"run {first.run}: ops {first.op!r} and {p.op!r}: one has histograms, one not")
    count = sum(p.count for p in parts)
    rows = pd.concat([p.rows for p in parts], ignore_index=True)
    hist = None
    if first.hist is not None:
        layouts = {(p.hist.layout.lowest, p.hist.layout.significant_figures) for p in parts if p.hist is not None}
        if len(layouts) > 1:
            raise AnalysisError(f"run {first.run}: histograms of different precision cannot be combined")
        index = np.unique(np.concatenate([p.hist.index for p in parts if p.hist is not None]))
        matrix = np.zeros((first.n, len(index)), dtype=np.int64)
        for p in parts:
            assert p.hist is not None
            matrix[:, np.searchsorted(index, p.hist.index)] += p.hist.matrix
        layout = hdr.Layout(first.hist.layout.lowest, max(p.hist.layout.highest for p in parts if p.hist),
                            first.hist.layout.significant_figures)
        hist = HistCounts(layout, index.astype(np.int64), matrix)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.where(count > 0, hist.latency_sums_ms(first.unit) / count, np.nan)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.where(count > 0, sum(np.nan_to_num(p.mean_ms) * p.count for p in parts) / count, np.nan)
    note = "; ".join(dict.fromkeys(p.note for p in parts if p.note))
    return replace(first, op=op, tag="+".join(str(p.tag) for p in parts), count=count, mean_ms=mean, rows=rows,
                   hist=hist, pct=None, note=note)


def group_samples(run: Run, op: str | tuple[str, Sequence[str]], start_s: float = -np.inf,
                  end_s: float = np.inf) -> tuple[str, OpSamples]:
    """An op's samples between start_s and end_s, named; ``(name, [ops])`` combines those of
    the ops the run has under one name (e.g. ``("write", ["write", "delete"])``: every mutation)."""
    if isinstance(op, str):
        return op, op_samples(run, op, start_s, end_s)
    name, parts = op
    present = [p for p in parts if p in ops_of(run)] or list(parts)[:1]
    return name, combine([op_samples(run, p, start_s, end_s) for p in present], name)
