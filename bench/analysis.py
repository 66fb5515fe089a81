"""How long the analysis of a whole study takes: run figures, every comparison and the claims.

    .venv/bin/python bench/analysis.py [--arms 20] [--repeats 3] [--intervals 30] [--ops-s 500]

A simulated study (cassperf.analysis.simulate, seeded) of `--arms` arms in `--repeats`
randomized blocks, each run `--intervals` intervals of 0.5 s at about `--ops-s` ops/s with one
HDR histogram per interval in the engine's precision (3 significant figures), saved as stored
runs in a temporary folder (not timed), then timed step by step:

1. load: every run read back from disk (results.store.load_run);
2. figures: repeats.run_figures (steady windows by MSER-5, HDR histograms decoded and merged
   per run, diagnostics, exclusions);
3. comparisons: every arm against the first for rate_ops_s, latency_mean_ms, latency_p50_ms,
   latency_p95_ms and latency_p99_ms (arms.compare_arms; percentiles bootstrapped over blocks),
   the last arm being the first's A/A twin;
4. claims: a directional claim per throughput comparison, an equivalence claim per mean-latency
   comparison, a plateau over the first five arms as a sweep, the A/A row, the claims table.

Goal: the whole analysis (1-4) under 30 s on the 2-core project machine. Wall and CPU time
(time.process_time) and the 1-minute load average are printed per step (the machine is shared).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

from cassperf.analysis.arms import compare_arms
from cassperf.analysis.repeats import left_out, run_figures
from cassperf.analysis.simulate import Noise, SimArm, simulate, to_runs
from cassperf.analysis.verdicts import aa_control, claim, claims_table, directional, equivalent, plateau
from cassperf.results.store import load_run, save_run

METRICS = ("rate_ops_s", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms")


def timed(name: str, work: Callable[[], Any]) -> tuple[Any, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = work()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{name:<13} {wall:7.2f} s wall {cpu:7.2f} s CPU   load {os.getloadavg()[0]:.1f}")
    return out, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arms", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--intervals", type=int, default=30)
    ap.add_argument("--ops-s", type=float, default=500.0)
    args = ap.parse_args()
    rates = [1.0 + 0.05 * i for i in range(args.arms - 1)]
    arms = [SimArm(f"arm{i:02d}", rate=r, latency=1 / r) for i, r in enumerate(rates)] + [SimArm("arm00-twin")]
    noise = Noise(intervals=args.intervals, rate_ops_s=args.ops_s, significant_figures=3)
    study = simulate(arms, args.repeats, noise, seed=1)[0]
    with tempfile.TemporaryDirectory(prefix="cassperf-bench-analysis-") as root:
        setup = time.perf_counter()
        ids = [save_run(run, root) for run in to_runs(study)]
        print(f"study: {len(arms)} arms x {args.repeats} repeats = {len(ids)} runs of {args.intervals + 1} intervals "
              f"(~{args.ops_s * 0.5:.0f} ops each, HDR 3 significant figures); saved in "
              f"{time.perf_counter() - setup:.1f} s (not timed)")
        runs, t_load = timed("load", lambda: [load_run(i, root) for i in ids])
    frame, t_fig = timed("figures", lambda: run_figures(runs))
    first = arms[0].name

    def compare_all() -> dict[tuple[str, str], Any]:
        return {(a.name, m): compare_arms(frame, first, a.name, "write", m) for a in arms[1:] for m in METRICS}

    comps, t_cmp = timed("comparisons", compare_all)

    def claims() -> Any:
        rows = [claim(f"{a.name} writes faster than {first}", "bench", directional(comps[(a.name, "rate_ops_s")], +1))
                for a in arms[1:-1]]
        rows += [claim(f"{a.name} has the mean latency of {first}", "bench",
                       equivalent(comps[(a.name, "latency_mean_ms")], 10.0)) for a in arms[1:-1]]
        points = {float(i + 1): a.name for i, a in enumerate(arms[:5])}
        rows.append(claim("throughput stops growing above 3", "bench", plateau(frame, points, 3.0, "write")))
        aa = claim("A/A", "bench", aa_control(comps[(arms[-1].name, "rate_ops_s")]))
        return claims_table(aa, rows)

    table, t_claims = timed("claims", claims)
    total = t_load + t_fig + t_cmp + t_claims
    print(f"{'total':<13} {total:7.2f} s   (goal < 30 s)   {len(comps)} comparisons, "
          f"{1000 * t_cmp / len(comps):.1f} ms each; {len(table)} claim rows "
          f"({(table['verdict'] == 'holds').sum()} hold, {(table['verdict'] == 'does not hold').sum()} do not, "
          f"{(table['verdict'] == 'not shown').sum()} not shown); {len(left_out(frame))} runs left out")


if __name__ == "__main__":
    main()
