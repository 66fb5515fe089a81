"""Runs built from known latency samples, shaped as the engine stores them.

Each interval of each op gets raw samples (integer nanoseconds) recorded into an HdrHistogram
with the engine's precision (lowest 1, 3 significant figures); the interval row carries what the
engine derives from it (count, rate, percentiles by cassperf.results.hdr.stats_ms), so every expected
value in a test can be computed from the same samples.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from cassperf.results import hdr
from cassperf.results.model import Run

LAYOUT = hdr.Layout(1, 3_600_000_000_000, 3)
STARTED = "2026-11-23T10:00:00+00:00"

#: (op, interval index, rng) -> samples in ns
Sampler = Callable[[str, int, np.random.Generator], Sequence[int]]


def encode_samples(samples: Sequence[int]) -> str:
    return hdr.encode(hdr.histogram_from_samples(samples, LAYOUT))


def counts_histogram(values_ns: Sequence[int], counts: Sequence[int]) -> str:
    """A histogram holding counts[i] samples of values_ns[i] (fast for large counts)."""
    h = hdr.histogram_from_samples([], LAYOUT)
    for v, c in zip(values_ns, counts, strict=True):
        if c:
            h.record_value(int(v), int(c))
    return hdr.encode(h)


def lognormal(median_ms: float, sigma: float = 0.5, per_interval: int | Callable[[int], int] = 200) -> Sampler:
    def draw(op: str, i: int, rng: np.random.Generator) -> Sequence[int]:
        n = per_interval(i) if callable(per_interval) else per_interval
        return (rng.lognormal(np.log(median_ms * 1e6), sigma, size=n)).astype(np.int64).tolist()
    return draw


def make_run(samplers: dict[str, Sampler], n_intervals: int, *, interval_s: float = 1.0, seed: int = 1,
             latency_type: str = "response", service_scale: float = 0.5, errors: int = 0,
             events: list[tuple[float, str, str]] | None = None, labels: dict[str, str] | None = None,
             run_id: str = "test-run", histograms: bool = True) -> tuple[Run, dict[str, list[list[int]]]]:
    """A run with one interval row and one histogram per tag per interval; returns the run and
    the samples per op and interval. Response-time tags (-rt) hold the samples, service-time
    tags (-st) the samples x service_scale (only -st under latency_type='service')."""
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    hists: list[dict[str, Any]] = []
    drawn: dict[str, list[list[int]]] = {op: [] for op in samplers}
    for i in range(n_intervals):
        start, end = i * interval_s, (i + 1) * interval_s
        for op, sampler in samplers.items():
            samples = [int(v) for v in sampler(op, i, rng)]
            drawn[op].append(samples)
            main = encode_samples(samples)
            st = encode_samples([max(1, int(v * service_scale)) for v in samples])
            stats = hdr.payload_stats_ms(main, "ns")[1] if samples else {"count": 0}
            rows.append({"time_s": end, "start_s": start, "interval_s": interval_s, "op": op,
                         "count": len(samples), "rate_ops_s": len(samples) / interval_s,
                         "row_rate_s": len(samples) / interval_s,
                         **{k: v for k, v in stats.items() if k != "count"}, "errors": errors})
            if latency_type == "response":
                hists.append({"tag": f"{op.upper()}-rt", "start_s": start, "end_s": end, "encoded": main})
                hists.append({"tag": f"{op.upper()}-st", "start_s": start, "end_s": end, "encoded": st})
            else:
                hists.append({"tag": f"{op.upper()}-st", "start_s": start, "end_s": end, "encoded": main})
    ev = pd.DataFrame([{"time": pd.Timestamp(STARTED) + pd.Timedelta(seconds=t), "time_s": t, "name": name,
                        "detail": detail} for t, name, detail in (events or [])]) if events else None
    manifest = {"run_id": run_id, "started_utc": STARTED, "latency_type": latency_type,
                "histogram_unit": "ns", "labels": dict(labels or {}), "tool": "cassperf-engine"}
    run = Run(manifest=manifest, intervals=pd.DataFrame(rows), events=ev,
              histograms=pd.DataFrame(hists) if histograms else None)
    return run, drawn


def pooled_stats(samples: Sequence[Sequence[int]]) -> dict[str, float | int]:
    """hdr stats (ms) of the union of the given intervals' samples."""
    return hdr.summary_ms(hdr.histogram_from_samples([v for s in samples for v in s], LAYOUT))


#: A discrete latency shape (ns at scale 1) and its weights: five values from 0.5 to 8 ms.
SHAPE_NS = (500_000, 900_000, 1_000_000, 2_000_000, 8_000_000)
SHAPE_WEIGHTS = (0.2, 0.3, 0.4, 0.09, 0.01)


def shaped_run(counts: Sequence[int], scales: Sequence[float] | float = 1.0, *, op: str = "write",
               run_id: str = "shaped", labels: dict[str, str] | None = None) -> Run:
    """A response-time run with one histogram per 1 s interval: counts[i] samples spread over
    SHAPE_NS x scales[i] by SHAPE_WEIGHTS (quick to build for large counts)."""
    scales = [scales] * len(counts) if isinstance(scales, (int, float)) else list(scales)
    rows, hists = [], []
    for i, (n, k) in enumerate(zip(counts, scales, strict=True)):
        split = [int(round(n * w)) for w in SHAPE_WEIGHTS[:-1]]
        split.append(n - sum(split))
        encoded = counts_histogram([int(v * k) for v in SHAPE_NS], split)
        stats = hdr.payload_stats_ms(encoded, "ns")[1]
        rows.append({"time_s": i + 1.0, "start_s": float(i), "op": op, "count": n, "rate_ops_s": float(n),
                     **{c: v for c, v in stats.items() if c != "count"}, "errors": 0})
        hists.append({"tag": f"{op.upper()}-rt", "start_s": float(i), "end_s": i + 1.0, "encoded": encoded})
    return Run({"run_id": run_id, "latency_type": "response", "histogram_unit": "ns", "started_utc": STARTED,
                "labels": dict(labels or {})}, intervals=pd.DataFrame(rows), histograms=pd.DataFrame(hists))
