"""Simulated studies with known effects: how the comparisons across runs are proven.

    Noise(...)                                  what makes runs vary (defaults below)
    SimArm(name, rate=1.0, latency=1.0)         an arm and its true effect on throughput / latency
    simulate(arms, repeats, noise, seed, studies=1, histograms=True) -> list of studies, each a
                                                list of SimRun (labels, manifest, whole-run OpSamples)
    sim_figures(study) -> DataFrame             repeats' run figures from the samples on: the steady
                                                window (steady.mser5_steady), window_samples,
                                                repeats.samples_row, repeats.figures_frame
    to_runs(study) -> list[Run]                 the same runs as stored Runs (interval rows and
                                                encoded HDR histograms) for repeats.run_figures

sim_figures and run_figures(to_runs(study)) give the same frame (the tests check it), so the
Monte Carlo runs the code real runs take from the samples on, skipping only the decoding of
thousands of HDR payloads it would first have to encode.

Model of one study: `repeats` blocks, each running every arm once in a seeded random order; per
run of arm a in block k at position j of the study's run sequence, interval t (log scale):

    log rate_t = log(rate_ops_s x a.rate) + block_k + run + trend x j / (runs - 1) + x_t
                 + log ramp_t + log pause_t
    block_k ~ N(0, block_sd), shared by every arm in the block (the machine's state then)
    run ~ N(0, run_sd)                 run-level random effect (JIT, placement, compaction state)
    x_t: AR(1), lag-1 coefficient phi, stationary sd interval_sd
    ramp_t: a warm-up from ramp_start to 1 over the first ramp_intervals intervals
    pause_t = pause_factor with probability pause_prob (a GC pause or flush), else 1
ops per interval ~ Poisson(rate_t x interval_s); the last interval is half long (the cool-down
row a run ends with). Latency (closed loop: it moves against the throughput noise): each op's
latency ~ lognormal(median latency_ms x a.latency x exp(-(block + run + x_t)) / (ramp_t x
pause_t), latency_sigma), recorded in microseconds into HDR histograms of `significant_figures`
(default 2, 1% buckets: cassandra-stress records 3; the layout is data to the code, and 2 keeps a
Monte Carlo of thousands of studies within seconds).

The defaults follow this machine's stored runs (0.25-0.5 s intervals of 100-400 ops, interval
throughput CV 40-80%, lag-1 -0.6 to 0.4): 30 + 1 intervals of 0.5 s at 500 ops/s, interval_sd
0.3, phi 0.3, 5% pauses at 30% throughput, a 6-interval ramp from 40%, run_sd 0.05, block_sd
0.05, a 5% trend across the study.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from cassperf import hdr
from cassperf.analysis.repeats import figures_frame, samples_row
from cassperf.analysis.samples import HistCounts, OpSamples, window_samples
from cassperf.analysis.steady import mser5_steady
from cassperf.results.model import Run

UNIT = "us"                 # histograms in microseconds, up to an hour
HIGHEST_US = 3_600_000_000
STARTED = "2026-01-01T00:00:00+00:00"
_NO_ROWS = pd.DataFrame()


@dataclass(frozen=True)
class Noise:
    """What makes simulated runs vary; sds on the log scale (0.05 is about 5%)."""

    intervals: int = 30
    interval_s: float = 0.5
    rate_ops_s: float = 500.0
    interval_sd: float = 0.3
    phi: float = 0.3
    pause_prob: float = 0.05
    pause_factor: float = 0.3
    ramp_intervals: int = 6
    ramp_start: float = 0.4
    run_sd: float = 0.05
    block_sd: float = 0.05
    trend: float = 0.05
    latency_ms: float = 4.0
    latency_sigma: float = 0.6
    significant_figures: int = 2


@dataclass(frozen=True)
class SimArm:
    """An arm: its name and true effects, factors on throughput and on latency (one factor, or
    one per simulated study)."""

    name: str
    rate: float | Sequence[float] = 1.0
    latency: float | Sequence[float] = 1.0


@dataclass(frozen=True)
class SimRun:
    labels: dict[str, str]
    manifest: dict[str, Any]
    samples: OpSamples = field(repr=False)


def simulate(arms: Sequence[SimArm], repeats: int, noise: Noise = Noise(), seed: int = 0, studies: int = 1,
             histograms: bool = True, op: str = "write") -> list[list[SimRun]]:
    """`studies` simulated studies of `repeats` blocks of every arm (the module docstring's model);
    without histograms the runs have throughput only. The same arguments give the same runs."""
    rng = np.random.default_rng(seed)
    na, t_all = len(arms), noise.intervals + 1
    shape = (studies, na, repeats)
    order = np.argsort(rng.random((studies, repeats, na)), axis=2)          # run order within each block
    position = np.empty(shape)
    for k in range(repeats):
        position[:, :, k] = k * na + np.argsort(order[:, k, :], axis=1)
    level = (rng.normal(0, noise.block_sd, (studies, 1, repeats)) + rng.normal(0, noise.run_sd, shape)
             + noise.trend * position / max(na * repeats - 1, 1))
    x = np.empty((*shape, t_all))
    x[..., 0] = rng.normal(0, noise.interval_sd, shape)
    innov = rng.normal(0, noise.interval_sd * np.sqrt(1 - noise.phi ** 2), (*shape, t_all))
    for t in range(1, t_all):
        x[..., t] = noise.phi * x[..., t - 1] + innov[..., t]
    ramp = noise.ramp_start + (1 - noise.ramp_start) * np.minimum(1.0, np.arange(t_all) / max(noise.ramp_intervals, 1))
    pause = np.where(rng.random((*shape, t_all)) < noise.pause_prob, noise.pause_factor, 1.0)
    factor = _per_study([a.rate for a in arms], studies)
    noise_level = level[..., None] + x
    rate = noise.rate_ops_s * factor * np.exp(noise_level) * ramp * pause
    length = np.full(t_all, noise.interval_s)
    length[-1] = noise.interval_s / 2
    counts = rng.poisson(rate * length)
    start = np.concatenate([[0.0], np.cumsum(length)[:-1]])
    end = start + length
    lat = _per_study([a.latency for a in arms], studies)
    median_us = noise.latency_ms * 1000 * lat * np.exp(-noise_level) / (ramp * pause)
    out = []
    for s in range(studies):
        study = []
        for a, arm in enumerate(arms):
            for k in range(repeats):
                c = counts[s, a, k]
                hist = _histograms(rng, median_us[s, a, k], c, noise) if histograms else None
                with np.errstate(divide="ignore", invalid="ignore"):
                    mean = (np.where(c > 0, hist.latency_sums_ms(UNIT) / c, np.nan) if hist is not None
                            else np.full(t_all, np.nan))
                run_id = f"sim{seed}-{s}-{arm.name}-{k + 1}"
                labels = {"arm": arm.name, "block": str(k + 1), "order": str(int(position[s, a, k]) + 1),
                          "study": str(s)}
                samples = OpSamples(run_id, op, f"{op.upper()}-st" if hist is not None else None, "service", UNIT,
                                    start, end, c.astype(np.float64), mean, _NO_ROWS, hist, None, "")
                manifest = {"run_id": run_id, "labels": labels, "complete": True}
                study.append(SimRun(labels, manifest, samples))
        out.append(study)
    return out


def _per_study(factors: list[float | Sequence[float]], studies: int) -> np.ndarray:
    """(studies, arms, 1, 1) factors from one factor or one per study for each arm."""
    return np.stack([np.broadcast_to(np.asarray(f, dtype="float64"), (studies,)) for f in factors],
                    axis=1)[:, :, None, None]


def _histograms(rng: np.random.Generator, median_us: np.ndarray, counts: np.ndarray, noise: Noise) -> HistCounts:
    """Per interval, counts[t] lognormal latencies around median_us[t], as HDR bucket counts."""
    layout = hdr.Layout(1, HIGHEST_US, noise.significant_figures)
    interval = np.repeat(np.arange(len(counts)), counts)
    values = np.exp(np.log(median_us)[interval] + noise.latency_sigma * rng.standard_normal(len(interval)))
    values = np.minimum(np.maximum(np.rint(values), 1), HIGHEST_US - 1)
    bucket = hdr.counts_index(layout, values.astype(np.int64))
    lo = int(bucket.min()) if len(bucket) else 0
    width = int(bucket.max()) - lo + 1 if len(bucket) else 0
    dense = np.bincount(interval * width + (bucket - lo), minlength=len(counts) * width).reshape(len(counts), width)
    used = np.flatnonzero(dense.any(axis=0))
    return HistCounts(layout, (used + lo).astype(np.int64), dense[:, used].astype(np.int64))


def sim_figures(runs: Sequence[SimRun]) -> pd.DataFrame:
    """repeats.run_figures of the simulated runs (of one study or many: the `study` label tells
    them apart), from their samples on."""
    records = []
    for run in runs:
        s = run.samples
        steady = mser5_steady(s.start_s, s.end_s, s.rate_ops_s)
        row = samples_row(window_samples(s, steady.window.start_s, steady.window.end_s), run.manifest, steady)
        records.append(({"run_id": s.run, **run.labels}, row))
    return figures_frame(records)


def to_runs(study: Sequence[SimRun]) -> list[Run]:
    """The simulated runs as stored Runs: one interval row (count, rate, mean latency) and one
    encoded HDR histogram (service time, microseconds) per interval."""
    runs = []
    for run in study:
        s = run.samples
        rows = pd.DataFrame({"time_s": s.end_s, "start_s": s.start_s, "op": s.op, "count": s.count.astype(np.int64),
                             "rate_ops_s": s.count / (s.end_s - s.start_s), "latency_mean_ms": s.mean_ms})
        hists = None
        if s.hist is not None:
            dense = np.zeros((s.n, hdr.counts_len(s.hist.layout)), dtype=np.int64)
            dense[:, s.hist.index] = s.hist.matrix
            hists = pd.DataFrame({"tag": s.tag, "start_s": s.start_s, "end_s": s.end_s,
                                  "encoded": [hdr.encode(hdr.histogram_from_counts(s.hist.layout, d)) for d in dense]})
        manifest = {**run.manifest, "labels": dict(run.labels), "started_utc": STARTED, "latency_type": "service",
                    "histogram_unit": UNIT, "tool": "cassperf-simulation"}
        runs.append(Run(manifest, intervals=rows, histograms=hists))
    return runs
