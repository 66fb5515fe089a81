"""The per-run overhead and the preparations' rate that `cassperf report --plan` states
(cassperf.experiments.cost: RUN_OVERHEAD_S, EMBEDDED_LOAD_ROWS_S), measured from the executor's
records of a real run (a make report) and the runs they name.

    .venv/bin/python bench/plan_overhead.py [--runs DIR] [--study NAME]

Per study record (<runs>/.studies/*.json):

- per-run overhead, every run: the executor's seconds (its last log line) less its preparations'
  seconds, less the load of every other run it made (warm-up and calibration steps, the warm pass,
  the measured runs: each run's duration plus its unrecorded warm-up, from its manifest), over the
  number of those runs: what RUN_OVERHEAD_S states;
- per-run overhead of the measured slots alone: each slot's seconds on the executor's clock (the
  record's ``slots[...].seconds``: the idle wait, the arm's before action, starting the engine's
  workers and the sampler, the load, storing the run) minus its load; median, mean, 10th and 90th
  percentile, and the same for the slots of arms without a before action (the cold runs of 01
  flush and empty the caches first);
- preparations: each load line of the record's log (``load NAME: S s (run ID)``), its rows (the
  run's op count) over its seconds, and all of them together;
- the plan (cost.study_cost of the record's study) at the warm-up and calibration steps the record
  kept, against the executor's seconds.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

from cassperf import config

_LOAD = re.compile(r"load (?P<name>.+?): (?P<s>\d+) s \(run (?P<ids>[^)]+)\)")
_TOTAL = re.compile(r"runs ran, .*; (?P<s>\d+) s$")


def _manifest(runs: Path, run_id: str) -> dict:
    return json.loads((runs / run_id / "manifest.json").read_text(encoding="utf-8"))


def _load_s(manifest: dict) -> float:
    params = manifest.get("parameters") or {}
    warm = float((params.get("engine") or {}).get("warmup_s") or 0.0)
    return float(params.get("duration") or 0.0) + warm


def _quantiles(values: list[float]) -> str:
    if not values:
        return "none"
    deciles = statistics.quantiles(values, n=10) if len(values) > 1 else [values[0]] * 9
    return (f"median {statistics.median(values):.2f} s, mean {statistics.fmean(values):.2f} s, "
            f"p10 {deciles[0]:.2f} s, p90 {deciles[-1]:.2f} s (n={len(values)})")


def report(record_path: Path, runs: Path) -> None:
    record = json.loads(record_path.read_text(encoding="utf-8"))
    print(f"{record_path.name}: study {record.get('study')}, experiment {record.get('experiment')}")
    before = {a["name"] for a in record.get("arms", []) if "run=a" in a["name"]}
    overhead, plain = [], []
    for key, slot in sorted((record.get("slots") or {}).items()):
        if slot.get("status") != "ran" or "seconds" not in slot:
            continue
        loads = [_load_s(_manifest(runs, rid)) for rid in slot.get("runs", [])]
        extra = float(slot["seconds"]) - max(loads, default=0.0)
        overhead.append(extra)
        if key.split("/", 1)[1] not in before:
            plain.append(extra)
    print(f"  per-run overhead, every measured slot: {_quantiles(overhead)}")
    print(f"  per-run overhead, slots without a cold-cache step: {_quantiles(plain)}")
    rows_total, seconds_total = 0, 0.0
    for line in record.get("log", []):
        m = _LOAD.search(line)
        if not m:
            continue
        rows = sum(int((_manifest(runs, rid.strip()).get("parameters") or {}).get("n") or 0)
                   for rid in m["ids"].split(","))
        seconds = float(m["s"])
        rows_total, seconds_total = rows_total + rows, seconds_total + seconds
        print(f"  preparation {m['name']}: {rows:,} rows in {seconds:.0f} s"
              + (f" = {rows / seconds:,.0f} rows/s" if seconds else ""))
    if seconds_total:
        print(f"  preparations together: {rows_total:,} rows in {seconds_total:.0f} s = "
              f"{rows_total / seconds_total:,.0f} rows/s")
    steps = [len(w.get("runs", [])) for w in record.get("warmup", [])]
    calibration = record.get("calibration") or {}
    print(f"  warm-up steps per context: {steps}; calibration steps: {len(calibration.get('points', []))}")
    totals = [float(m["s"]) for line in record.get("log", []) if (m := _TOTAL.search(line))]
    if len(totals) != 1:
        print(f"  {len(totals)} executions in this record: the overhead of every run needs one")
        return
    ids = [*(rid for w in record.get("warmup", []) for rid in w.get("runs", [])), *calibration.get("runs", []),
           *(record.get("warm_pass") or {}).get("runs", []),
           *(rid for slot in (record.get("slots") or {}).values() for rid in slot.get("runs", []))]
    load = sum(_load_s(_manifest(runs, rid)) for rid in ids)
    over = (totals[0] - seconds_total - load) / len(ids)
    print(f"  per-run overhead, every run: ({totals[0]:.0f} s - {seconds_total:.0f} s of preparations - "
          f"{load:.1f} s of load) / {len(ids)} runs = {over:.2f} s")
    planned(record, steps, len(calibration.get("points", [])), over, rows_total / seconds_total, totals[0])


def planned(record: dict, steps: list[int], calibration_steps: int, per_run_s: float, rows_s: float,
            seconds: float) -> None:
    """What the plan says at the steps this execution took, against its seconds."""
    import dataclasses

    from cassperf.experiments.cost import fmt_seconds, study_cost
    from cassperf.experiments.made import rebuild_study

    study = rebuild_study(record)
    if study is None:
        return
    cost = study_cost(study)
    if steps:
        cost = dataclasses.replace(cost, warmup_steps=(steps[0], steps[0]))
    if cost.calibration_steps != (0, 0):
        cost = dataclasses.replace(cost, calibration_steps=(calibration_steps, calibration_steps))
    span = cost.load(rows_s, per_run_s)
    print(f"  the plan at these steps, {per_run_s:.2f} s per run and {rows_s:,.0f} rows/s: "
          f"{fmt_seconds(span.low)} (to {fmt_seconds(span.high)} waiting for idle nodes); the executor: "
          f"{fmt_seconds(seconds)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path, default=None, help="the runs folder (default: data/runs)")
    ap.add_argument("--study", default=None, help="only records of this study (e.g. replication-factor)")
    args = ap.parse_args()
    runs = args.runs or config.runs_dir()
    records = sorted((runs / ".studies").glob("*.json")) if (runs / ".studies").is_dir() else []
    records = [r for r in records if args.study is None or r.name.startswith(f"{args.study}--")]
    if not records:
        print(f"no study record in {runs / '.studies'}: run a study first (make report)", file=sys.stderr)
        return 2
    for path in records:
        report(path, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
