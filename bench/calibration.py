"""The method's error rates and power on simulated studies, per number of repeats (README figures).

    .venv/bin/python bench/calibration.py [--repeats 2 3 5] [--studies 2000] [--seed 2026] [--old-p99]

For each number of repeats (blocks), cassperf.analysis.calibration.method_rates on `--studies`
simulated studies of the default noise (analysis.simulate.Noise: this machine's interval noise)
prints: the share of A/A studies found significant (throughput, mean latency, p99), the median
stated MDE, the power at the stated MDE, the 95% CI's coverage of a true change of about +100%
(log scale, and the linear interval for contrast), TOST's rate of declaring equivalence at the
margin and with no difference, the share of runs left out for drift; then on the same runs the
old within-run method (one run a side, batch means, 10% CV veto) with and without its veto, and a
plain percentile bootstrap over runs for p99. `--old-p99` adds the old method's block bootstrap
of p99 without the veto (slow: 400 bootstrap draws per comparison). `--pooled-arms K [K ...]`
then proves the pooled (RCBD) comparison the studies use when arms share a pool
(calibration.method_rates_pooled: K arms in `--pooled-repeats` blocks, 3 unless told): A/A rates, MDE against the pair alone's,
power at the stated MDE, TOST at the margin. About a minute per number of
repeats with 2,000 studies on the 2-core project machine; run it under the CPU lock.
"""

from __future__ import annotations

import argparse
import time

from cassperf.analysis.calibration import Calibration, method_rates, method_rates_pooled

ROWS: tuple[tuple[str, str, str], ...] = (
    ("A/A significant: throughput", "aa_rate", "pct"),
    ("A/A significant: mean latency", "aa_mean", "pct"),
    ("A/A significant: p99", "aa_p99", "pct"),
    ("median stated MDE: throughput", "mde_rate_pct", "mde"),
    ("median stated MDE: p99", "mde_p99_pct", "mde"),
    ("power at the stated MDE: throughput", "power_rate", "pct"),
    ("power at the stated MDE: p99", "power_p99", "pct"),
    ("Welch (blocks ignored), A/A: throughput", "aa_rate_welch", "pct"),
    ("Welch, power at the paired MDE", "power_rate_welch", "pct"),
    ("95% CI covers a true ~+100%: log scale", "coverage", "pct"),
    ("95% CI covers a true ~+100%: linear", "coverage_linear", "pct"),
    ("TOST holds at the margin", "tost_at_margin", "pct"),
    ("TOST holds with no difference", "tost_at_zero", "pct"),
    ("runs left out (drift)", "excluded", "pct"),
    ("old method, A/A significant", "old_aa", "pct"),
    ("old method without its CV veto, A/A", "old_aa_no_veto", "pct"),
    ("old method, power at the stated MDE", "old_power", "pct"),
    ("old method without its veto, power", "old_power_no_veto", "pct"),
    ("old method without its veto, A/A p99", "old_aa_p99", "pct"),
    ("plain percentile bootstrap, A/A p99", "plain_bootstrap_aa_p99", "pct"),
)

POOLED_ROWS: tuple[tuple[str, str, str], ...] = (
    ("A/A significant: throughput", "aa_rate", "pct"),
    ("A/A significant: mean latency", "aa_mean", "pct"),
    ("A/A significant: p99", "aa_p99", "pct"),
    ("median stated MDE: throughput", "mde_rate_pct", "mde"),
    ("the same studies paired alone", "mde_rate_paired_pct", "mde"),
    ("median stated MDE: p99", "mde_p99_pct", "mde"),
    ("power at the stated MDE: throughput", "power_rate", "pct"),
    ("power at the stated MDE: p99", "power_p99", "pct"),
    ("TOST holds at the margin", "tost_at_margin", "pct"),
)


def cell(value: float, kind: str) -> str:
    if value != value:
        return "-"
    return f"±{value:.0f}%" if kind == "mde" else f"{100 * value:.1f}%"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, nargs="+", default=[2, 3, 5])
    ap.add_argument("--studies", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--margin", type=float, default=30.0, help="TOST margin in %% (default 30)")
    ap.add_argument("--old-p99", action="store_true")
    ap.add_argument("--pooled-arms", type=int, nargs="*", default=[],
                    help="also prove the pooled comparison with these numbers of arms, e.g. 5 8")
    ap.add_argument("--pooled-repeats", type=int, default=3, help="blocks of the pooled studies (default 3)")
    args = ap.parse_args()
    results: list[Calibration] = []
    for n in args.repeats:
        t0 = time.perf_counter()
        results.append(method_rates(n, args.studies, seed=args.seed, margin_pct=args.margin, old_p99=args.old_p99))
        print(f"{n} repeats: {time.perf_counter() - t0:.0f} s")
    print(f"\n{args.studies} simulated studies per set, seed {args.seed}, TOST margin ±{args.margin:g}%")
    print(f"{'':42}" + "".join(f"{f'{n} repeats':>12}" for n in args.repeats))
    for title, field, kind in ROWS:
        print(f"{title:42}" + "".join(f"{cell(getattr(r, field), kind):>12}" for r in results))
    pooled = []
    for k in args.pooled_arms:
        t0 = time.perf_counter()
        pooled.append(method_rates_pooled(k, args.pooled_repeats, args.studies, seed=args.seed, margin_pct=args.margin))
        print(f"pooled, {k} arms: {time.perf_counter() - t0:.0f} s")
    if pooled:
        print(f"\npooled over the arms (RCBD), {args.pooled_repeats} blocks, {args.studies} studies per set")
        print(f"{'':42}" + "".join(f"{f'{p.arms} arms ({p.df:.0f} df)':>16}" for p in pooled))
        for title, field, kind in POOLED_ROWS:
            print(f"{title:42}" + "".join(f"{cell(getattr(p, field), kind):>16}" for p in pooled))


if __name__ == "__main__":
    main()
