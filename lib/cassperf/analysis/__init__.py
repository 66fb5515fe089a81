"""Analysis: pure functions over `cassperf.results.Run` objects (no cluster, no load, no parsing).

windows   time windows of a run (phase events, the window before), slicing, window statistics
          with percentiles merged from HDR histograms
steady    the steady-state window: warm-up by MSER-5, a fixed cool-down trim (or a fixed trim)
compare   the old within-run method: Welch on batch means, block bootstrap for percentiles,
          unstable runs flagged (studies move to repeats/arms/verdicts)
repeats   run figures over repeats: one row per run and op over its steady window, diagnostics
          (CV, lag-1, drift) as columns, a stated reason for every run that leaves
arms      comparisons across runs between two arms: paired per block or Welch on log figures,
          percentiles from merged HDR histograms with a bootstrap over runs, CI, p, MDE
power     the minimum detectable effect, calibrated so the power at the stated MDE is 80%
verdicts  claims by kind (directional, TOST, plateau), the A/A control, the claims table
simulate  simulated studies with known effects (AR(1) intervals, pauses, ramps, run and block
          effects, HDR histograms); calibration: the method's error rates and power on them
tables    one row per run with its steady-window figures (the log explorer's frame)
format    the published number style: 1.5k/s, 10.28k micros, 60 263
machines  which machine a run was measured on (label, hardware record) and which runs share a table
node_cpu  node CPU over a window from the sampler's process CPU, CPU per 1,000 rows
resources what each resource did in a run's window (host, nodes, client, disks, memory, GC,
          dropped messages, replica reads and writes), per arm, the limit rule, the client flag
deployments  the deployment study's row-rate table per machine

This package imports nothing from cassperf.workload, cassperf.cluster, cassperf.sampler or
cassperf.parsers (tests/unit/test_analysis_imports.py checks it).
"""

from cassperf.analysis.arms import ArmComparison, compare_arms
from cassperf.analysis.compare import Comparison, compare_groups, compare_runs, compare_windows, stability
from cassperf.analysis.format import fmt_micros, fmt_ms, fmt_pct, fmt_rate
from cassperf.analysis.repeats import left_out, run_figures
from cassperf.analysis.select import AnalysisError
from cassperf.analysis.steady import SteadyState, steady_state
from cassperf.analysis.tables import runs_frame
from cassperf.analysis.windows import (
    Window,
    phase_window,
    run_window,
    slice_histograms,
    slice_intervals,
    slice_metrics,
    window_before,
    window_stats,
)

__all__ = [
    "AnalysisError", "ArmComparison", "compare_arms", "compare_groups", "compare_runs", "compare_windows",
    "Comparison", "fmt_micros", "fmt_ms", "fmt_pct", "fmt_rate", "left_out",
    "phase_window", "run_figures", "run_window", "runs_frame", "slice_histograms", "slice_intervals",
    "slice_metrics", "stability", "steady_state", "SteadyState", "Window", "window_before",
    "window_stats",
]
