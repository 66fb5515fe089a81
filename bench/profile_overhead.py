"""What a run's CPU profile costs: one node, the same load with and without recording, in pairs.

    .venv/bin/python bench/profile_overhead.py                 # ~12 minutes: warm-up, 8 pairs of 20 s runs
    .venv/bin/python bench/profile_overhead.py --pairs 10 --run-s 30 --op write

One local node (127.0.33.1, started here and destroyed at the end), cassandra-stress's standard1
table (RF 1, LOCAL_ONE), ``--rows`` keys loaded first, flushed and compacted into one SSTable, then
unmeasured warm-up steps of the same
load until its throughput stops rising (as a study's warm-up: a fresh node here went from 1,300
to 19,000 writes/s over its first four minutes), then
``--pairs`` pairs of measured runs through run_spec (the engine, ``--concurrency`` requests in
flight, 1 s of unrecorded warm-up each): in each pair one run with the nodes' profile
(cassperf.cluster.profiler: Flight Recorder, stack samples every 20 ms, GC pauses) and one
without, the order alternating from pair to pair (AB BA AB ...) so that a drift over the
session falls on both. One Profiler serves every profiled run, its JMX session opened and the
node's Flight Recorder set up first, before the load and the warm-up, as a study's does (set up
after the warm-up, the node fell from 22,000 to 760 reads/s and took four minutes to recover:
cluster.profiler).

Printed: each run's throughput (ops/s; also from its 2nd second on) and p99 (ms) over its
measured load; per pair the
change with the profile (with / without - 1, %); their mean with a 95% CI over the pairs
(Student's t); what one run's profile takes on disk; what starting and stopping the recording
took per run (JMX round trips: the start happens at the run's t0, in a thread beside the load;
the stop after the load's end); and what reading the recordings back costs (one JVM for all of
them, then again from the cache), and a report's worth (``--many`` copies of one recording) in
one JVM against one JVM per recording.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADDRESS = "127.0.33.1"
KEYSPACE = "bench_profile"
#: the "steady" throughput leaves out each run's first seconds (a report keeps a steady window)
STEADY_FROM_S = 2.0
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
       11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 19: 2.093, 29: 2.045}


def t95(df: int) -> float:
    return T95.get(df) or T95[max(k for k in T95 if k <= df)] if df >= 1 else math.nan


def mean_ci(values: list[float]) -> tuple[float, float]:
    """Mean and the half width of its 95% CI (Student's t)."""
    m = statistics.fmean(values)
    if len(values) < 2:
        return m, math.nan
    return m, t95(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=8, help="pairs of runs, with and without a profile (default 8)")
    ap.add_argument("--run-s", type=int, default=20, help="seconds of measured load per run (default 20)")
    ap.add_argument("--op", default="read", choices=("read", "write"),
                    help="the load (default read: writes at full speed on 2 cores swung from 1,000 to 13,000 ops/s "
                         "between neighbouring runs with the node's flushes and compactions)")
    ap.add_argument("--concurrency", type=int, default=32, help="requests in flight (default 32)")
    ap.add_argument("--rows", type=int, default=100_000, help="keys loaded first, read and overwritten (default 100000)")
    ap.add_argument("--warm-step-s", type=int, default=20,
                    help="seconds per unmeasured warm-up step before the pairs, until throughput stops rising (default 20)")
    ap.add_argument("--warm-max-steps", type=int, default=20, help="warm-up steps at most (default 20)")
    ap.add_argument("--many", type=int, default=200, help="recordings converted in one JVM for its cost (default 200)")
    args = ap.parse_args()

    sys.path.insert(0, str(ROOT / "lib"))
    from cassperf.cluster import LocalCluster
    from cassperf.cluster.profiler import Profiler
    from cassperf.experiments.calibrate import warm_up
    from cassperf.parsers.jfr import convert_jfr, profile_samples
    from cassperf.workload.run import run_spec
    from cassperf.workload.spec import Population, WorkloadSpec

    work = Path(tempfile.mkdtemp(prefix="cassperf-bench-profile-"))
    runs = work / "runs"
    cluster = LocalCluster("bench-profile", "dc1:1", first_address=ADDRESS, root=work / "clusters", heap_mb=1024)
    keys = Population.parse(f"uniform(1..{args.rows})")

    def spec(op: str, duration: int) -> WorkloadSpec:
        return WorkloadSpec(op=op, duration=duration, concurrency=args.concurrency, population=keys,
                            keyspace=KEYSPACE)

    try:
        t = time.monotonic()
        cluster.start()
        print(f"node ready in {time.monotonic() - t:.0f} s; load: {args.op}, {args.concurrency} in flight, "
              f"{args.run_s} s per run, {args.pairs} pairs")
        rows: list[dict] = []
        with Profiler() as profiler:
            t = time.monotonic()
            notes = profiler.prepare(cluster)          # first, as a study does (cluster.profiler)
            print(f"profiler ready in {time.monotonic() - t:.2f} s (JMX session JVM + Flight Recorder set up)"
                  + (f": {notes}" if notes else ""))
            run_spec(WorkloadSpec(op="write", n=args.rows, concurrency=64, population=Population.parse(
                f"seq=1..{args.rows}"), keyspace=KEYSPACE), cluster, root=runs, progress=False, warmup_s=0)
            cluster.nodetool("node1", "flush", KEYSPACE)
            cluster.nodetool("node1", "compact", KEYSPACE, timeout=1800)   # one SSTable: reads that do not drift
            t = time.monotonic()
            rates, why = warm_up(lambda: float(run_spec(spec(args.op, args.warm_step_s), cluster, root=runs,
                                                        progress=False, warmup_s=0).summary["rate_ops_s"].sum()),
                                 args.warm_max_steps)
            print(f"warm-up: {', '.join(f'{r:,.0f}' for r in rates)} ops/s: {why} ({time.monotonic() - t:.0f} s)")
            for pair in range(args.pairs):
                order = (True, False) if pair % 2 == 0 else (False, True)
                for profiled in order:
                    run = run_spec(spec(args.op, args.run_s), cluster, root=runs, progress=False, warmup_s=1.0,
                                   profile=profiler if profiled else None,
                                   labels={"pair": pair, "profile": profiled})
                    s = run.summary.iloc[0]
                    prof = run.manifest.get("profile") or {}
                    size = sum(f.stat().st_size for f in (runs / run.run_id / "raw" / "profiles").glob("*.jfr"))
                    iv = run.intervals[run.intervals["start_s"] >= STEADY_FROM_S]
                    rows.append({"pair": pair, "profiled": profiled, "run_id": run.run_id,
                                 "ops_s": float(s["rate_ops_s"]), "p99_ms": float(s["latency_p99_ms"]),
                                 "ops_s_steady": float(iv["count"].sum() / iv["interval_s"].sum()),
                                 "bytes": size, "timing": prof.get("timing_s", {}), "notes": prof.get("notes", [])})
                    r = rows[-1]
                    print(f"  pair {pair + 1} {'with   ' if profiled else 'without'} {r['ops_s']:9,.0f} ops/s  "
                          f"p99 {r['p99_ms']:7.2f} ms" + (f"  profile {size / 1e6:.2f} MB, start "
                                                         f"{r['timing'].get('start_s', math.nan) * 1e3:.0f} ms, stop "
                                                         f"{r['timing'].get('stop_s', math.nan) * 1e3:.0f} ms"
                                                         if profiled else "") + (f"  {r['notes']}" if r['notes'] else ""))
        _report(rows, args)
        t = time.monotonic()
        got = profile_samples([r["run_id"] for r in rows if r["profiled"]], root=runs)
        first = time.monotonic() - t
        t = time.monotonic()
        profile_samples([r["run_id"] for r in rows if r["profiled"]], root=runs)
        again = time.monotonic() - t
        n = sum(r["profiled"] for r in rows)
        print(f"reading {n} recordings back: {first:.2f} s (one JVM, {len(got.samples):,} samples), "
              f"{again:.2f} s from the cache" + (f"; notes: {got.notes}" if got.notes else ""))
        one = next(iter(sorted(runs.glob("*/raw/profiles/node1.jfr"))))
        t = time.monotonic()
        convert_jfr([one] * args.many)
        many = time.monotonic() - t
        t = time.monotonic()
        for _ in range(5):
            convert_jfr([one])
        single = (time.monotonic() - t) / 5
        print(f"converting {args.many} recordings of {one.stat().st_size / 1e6:.2f} MB: {many:.1f} s in one JVM "
              f"({many / args.many * 1e3:.0f} ms each); one JVM per recording: {single:.2f} s each, "
              f"{single * args.many:.0f} s for {args.many}")
    finally:
        cluster.stop(timeout_s=60)
        cluster.destroy()
    return 0


def _report(rows: list[dict], args: argparse.Namespace) -> None:
    by_pair: dict[int, dict[bool, dict]] = {}
    for r in rows:
        by_pair.setdefault(r["pair"], {})[r["profiled"]] = r
    rate = [100.0 * (p[True]["ops_s"] / p[False]["ops_s"] - 1) for p in by_pair.values()]
    steady = [100.0 * (p[True]["ops_s_steady"] / p[False]["ops_s_steady"] - 1) for p in by_pair.values()]
    p99 = [100.0 * (p[True]["p99_ms"] / p[False]["p99_ms"] - 1) for p in by_pair.values()]
    with_, without = [r for r in rows if r["profiled"]], [r for r in rows if not r["profiled"]]
    print()
    for name, key in (("throughput", "ops_s"), ("p99", "p99_ms")):
        w, o = mean_ci([r[key] for r in with_]), mean_ci([r[key] for r in without])
        print(f"{name:10s}  with profile {w[0]:9,.2f} ± {w[1]:.2f}   without {o[0]:9,.2f} ± {o[1]:.2f}")
    for name, values in (("throughput", rate), (f"throughput from {STEADY_FROM_S:g} s on", steady), ("p99", p99)):
        m, h = mean_ci(values)
        print(f"change with the profile, {name}: {m:+.2f}% (95% CI {m - h:+.2f}% to {m + h:+.2f}%, "
              f"{len(values)} pairs; per pair: {', '.join(f'{v:+.1f}' for v in values)})")
    sizes = [r["bytes"] for r in with_]
    secs = args.run_s
    print(f"profile on disk per run ({secs} s, 1 node): {statistics.fmean(sizes) / 1e6:.2f} MB mean "
          f"({min(sizes) / 1e6:.2f}-{max(sizes) / 1e6:.2f}), {statistics.fmean(sizes) / secs / 1e3:.0f} kB per s of load")
    for key in ("prepare_s", "start_s", "stop_s"):
        v = [r["timing"][key] * 1e3 for r in with_ if key in r["timing"]]
        if v:
            print(f"{key[:-2]:8s} per run: {statistics.fmean(v):.0f} ms mean, {min(v):.0f}-{max(v):.0f} ms")


if __name__ == "__main__":
    sys.exit(main())
