"""The multi-DC study (../shared/studies/001_*: two DCs ~27 ms apart, a client in each) as a
plan of groups of simultaneous client runs.

Parts (every run labelled study=multi-dc, experiment, part, op, threads, cl, rf, and by the
placement dc and client):

- ``part=independent``  each DC's client writes ``rows`` keys into its own keyspace
                        ``<prefix><dc>rf1`` (``{dc: 1}``), both at once
- ``part=replicated``   each DC's client writes into ``<prefix><dc><other>rf<rf>`` replicated
                        ``{dc1: rf, dc2: rf}`` (the study's ks410dc1dc2rf3 / ks410dc2dc1rf3),
                        both at once; the network counters at each client location are read
                        before and after
- ``part=mixed``        50/50 read/write on those replicated keyspaces, both DCs at once
- ``part=cl-write`` / ``cl-read``  from ``cl_dc``'s client alone, on its replicated keyspace:
                        writes and reads at each of ``cl_levels`` (LOCAL_QUORUM, EACH_QUORUM)
- ``part=quorum-read``  reads at QUORUM from ``cl_dc``'s client at each of ``quorum_threads``

``rf`` is capped at the nodes per DC (the study: 3 of 6; locally 2 DCs of 2 nodes: 2), and the
cap is stated (``rf_note``). Writes run ``rows`` operations (seq 1..rows); reads and the mix
run for a duration (``read_s``, ``mixed_s``) over uniform(1..rows), so that a slow consistency
level still gives a run of many intervals.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cassperf.errors import ConfigError
from cassperf.workload.spec import Ratio, Replication, WorkloadSpec

STUDY = "multi-dc"
SOURCE = "../shared/studies/001_ec95abec4e6348d3.txt"
#: the labels that name a point of the study (with dc and client, one run)
POINT_LABELS = ("part", "op", "threads", "cl", "rf", "dc", "client")


@dataclass(frozen=True)
class MultiDCStudy:
    """The study's parameters (the notebook's parameters cell, validated)."""

    dcs: Sequence[str] = ("dc1", "dc2")
    rows: int = 3_000                 # keys written per write run (the study: 10,000,000)
    read_s: int = 10                  # seconds per read run
    mixed_s: int = 10                 # seconds per mixed run
    write_threads: int = 16           # the study: 256 (on 6 servers per DC)
    read_threads: int = 16            # the study: 128
    rf: int = 3                       # replicas per DC of the replicated keyspaces (the study: 3)
    nodes_per_dc: int | None = None   # caps rf
    cl: str = "LOCAL_QUORUM"
    cl_levels: Sequence[str] = ("LOCAL_QUORUM", "EACH_QUORUM")
    cl_dc: str = "dc1"
    quorum_threads: Sequence[int] = (2, 4, 8)
    keyspace_prefix: str = "ks410"
    column_size: int = 818
    column_count: int = 5
    connections_per_host: int | None = None
    interval_s: float = 1.0
    tool: str = "engine"
    experiment: str = "local"
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.dcs) != 2 or len(set(self.dcs)) != 2:
            raise ConfigError(f"dcs={list(self.dcs)!r}: the study needs exactly two data centers, e.g. dc1,dc2")
        if self.cl_dc not in self.dcs:
            raise ConfigError(f"cl_dc={self.cl_dc!r}: expected one of the study's DCs ({', '.join(self.dcs)})")
        for name in ("rows", "read_s", "mixed_s", "write_threads", "read_threads", "rf"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ConfigError(f"{name}={v!r}: expected a whole number >= 1")
        if not self.quorum_threads or any(isinstance(t, bool) or not isinstance(t, int) or t < 1
                                          for t in self.quorum_threads):
            raise ConfigError(f"quorum_threads={list(self.quorum_threads)!r}: expected client thread counts >= 1")

    @property
    def rf_used(self) -> int:
        return min(self.rf, self.nodes_per_dc) if self.nodes_per_dc else self.rf

    @property
    def rf_note(self) -> str:
        if self.rf_used == self.rf:
            return f"replicated keyspaces: {', '.join(f'{dc}={self.rf}' for dc in self.dcs)}, as the study"
        return (f"replicated keyspaces: {', '.join(f'{dc}={self.rf_used}' for dc in self.dcs)}: RF capped at the "
                f"nodes per DC, {self.nodes_per_dc} (the study: {self.rf} of 6)")

    def other(self, dc: str) -> str:
        return next(d for d in self.dcs if d != dc)

    def independent_keyspace(self, dc: str) -> str:
        return f"{self.keyspace_prefix}{dc}rf1"

    def replicated_keyspace(self, dc: str) -> str:
        return f"{self.keyspace_prefix}{dc}{self.other(dc)}rf{self.rf_used}"


@dataclass(frozen=True)
class GroupStep:
    """Runs that start together, one per (client location's DC, spec); ``labels`` name the point."""

    labels: dict[str, str]
    specs: tuple[tuple[str, WorkloadSpec], ...]      # (dc, spec)
    tool: str = "engine"
    watch_network: bool = False                      # read the client locations' interface counters around it

    @property
    def title(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.labels.items() if k not in ("study", "experiment")) + \
            f" ({'+'.join(dc for dc, _ in self.specs)})"


def _spec(study: MultiDCStudy, op: str, keyspace: str, factors: dict[str, int], dc: str, threads: int, cl: str,
          n: int | None = None, duration: int | None = None) -> WorkloadSpec:
    population = f"seq=1..{study.rows}" if op == "write" else f"uniform(1..{study.rows})"
    return WorkloadSpec(op=op, ratio=Ratio(write=1, read=1) if op == "mixed" else None, n=n, duration=duration,
                        cl=cl, concurrency=threads, population=population, column_count=study.column_count,
                        column_size=study.column_size, keyspace=keyspace,
                        replication=Replication.network_topology(factors), local_dc=dc,
                        connections_per_host=study.connections_per_host, interval_s=study.interval_s)


def plan(study: MultiDCStudy) -> list[GroupStep]:
    """The groups, in the order they must run (the writes before the reads of their keyspaces)."""
    base = {"study": STUDY, "experiment": study.experiment}
    rf = study.rf_used
    both = {dc: rf for dc in study.dcs}
    steps: list[GroupStep] = []

    def group(part: str, op: str, threads: int, cl: str, rf_label: int,
              specs: list[tuple[str, WorkloadSpec]], watch: bool = False) -> None:
        labels = {**base, "part": part, "op": op, "threads": str(threads), "cl": cl, "rf": str(rf_label)}
        steps.append(GroupStep(labels, tuple(specs), study.tool, watch))

    wt, rt = study.write_threads, study.read_threads
    group("independent", "write", wt, study.cl, 1,
          [(dc, _spec(study, "write", study.independent_keyspace(dc), {dc: 1}, dc, wt, study.cl, n=study.rows))
           for dc in study.dcs])
    group("replicated", "write", wt, study.cl, rf,
          [(dc, _spec(study, "write", study.replicated_keyspace(dc), both, dc, wt, study.cl, n=study.rows))
           for dc in study.dcs], watch=True)
    group("mixed", "mixed", rt, study.cl, rf,
          [(dc, _spec(study, "mixed", study.replicated_keyspace(dc), both, dc, rt, study.cl, duration=study.mixed_s))
           for dc in study.dcs])
    ks = study.replicated_keyspace(study.cl_dc)
    for cl in study.cl_levels:
        group("cl-write", "write", wt, cl, rf,
              [(study.cl_dc, _spec(study, "write", ks, both, study.cl_dc, wt, cl, n=study.rows))])
    for cl in study.cl_levels:
        group("cl-read", "read", rt, cl, rf,
              [(study.cl_dc, _spec(study, "read", ks, both, study.cl_dc, rt, cl, duration=study.read_s))])
    for threads in study.quorum_threads:
        group("quorum-read", "read", threads, "QUORUM", rf,
              [(study.cl_dc, _spec(study, "read", ks, both, study.cl_dc, threads, "QUORUM", duration=study.read_s))])
    return steps


# -- running the plan ----------------------------------------------------------------------------
@dataclass
class GroupOutcome:
    step: GroupStep
    status: str                      # "ran", "partial", "skipped"
    run_ids: list[str]
    group: str = ""
    note: str = ""
    traffic: list[dict[str, Any]] = field(default_factory=list)


def execute(steps: Sequence[GroupStep], place: Any, *, root: str | Path | None = None, resume: bool = True,
            log: Callable[[str], None] = print) -> list[GroupOutcome]:
    """Run each group through the placement (clients.ClientPlacement), one location per DC
    (the first; with several clients per DC, each DC's clients split the spec's threads and
    ops). A group whose runs are all stored (same labels, dc, client and workload) and whose
    keyspaces exist is skipped."""
    import json

    from cassperf.analysis.sweep import SPEC_KEY_LABEL, done_mask
    from cassperf.experiments import network
    from cassperf.experiments.clients import ClientJob
    from cassperf.experiments.sweep import _keyspaces, spec_key, stored_runs

    root_path = Path(root) if root is not None else place.root
    runs = stored_runs(root_path) if resume else None
    present = _keyspaces(place.cluster) if resume else set()
    outcomes: list[GroupOutcome] = []
    for i, step in enumerate(steps, 1):
        jobs = []
        for dc, spec in step.specs:
            mine = [p for p in place.places if p.dc == dc]
            for k, p in enumerate(mine):
                share = _share(spec, len(mine), k)
                labels = {**step.labels, "tool": step.tool, SPEC_KEY_LABEL: spec_key(share, step.tool)}
                jobs.append(ClientJob(p.name, share, labels, step.tool))
        if resume and runs is not None and not runs.empty:
            found = []
            for job in jobs:
                loc = place.location(job.location)
                done = runs[done_mask({**job.labels, "dc": loc.dc, "client": loc.name}, runs)]
                found.append(None if done.empty or job.spec.keyspace not in present else str(done["run_id"].iloc[-1]))
            if all(found):
                outcomes.append(GroupOutcome(step, "skipped", [f for f in found if f], note="stored already"))
                log(f"[{i}/{len(steps)}] {step.title}: stored already, skipped")
                continue
        dcs = list(dict.fromkeys(place.location(j.location).dc for j in jobs))
        watched = {dc: next(p.name for p in place.places if p.dc == dc) for dc in dcs} if step.watch_network else {}
        before = {dc: place.submit(loc, network.counters_task, place.recipe, dc).result()
                  for dc, loc in watched.items()}
        group = place.run_together(jobs, step.labels)
        after = {dc: place.submit(loc, network.counters_task, place.recipe, dc).result()
                 for dc, loc in watched.items()}
        traffic = [{"part": step.labels["part"], "where": f"{dc} ({watched[dc]})",
                    "how": _counters_how(place, dc), **network.rates(before[dc], after[dc])} for dc in watched]
        if traffic:
            from cassperf.experiments.clients import GROUPS

            record = root_path / GROUPS / f"{group.group}.json"
            data = json.loads(record.read_text())
            data["traffic"] = traffic
            record.write_text(json.dumps(data, indent=2))
        status = "partial" if group.partial else "ran"
        note = "; ".join(f"{r.location}: {r.status} {r.note}".strip() for r in group.results if r.status != "ran")
        outcomes.append(GroupOutcome(step, status, [r.run_id for r in group.results], group.group, note, traffic))
        log(f"[{i}/{len(steps)}] {step.title}: {status}" + (f" ({note})" if note else "") +
            f", runs {', '.join(r.run_id for r in group.results)}")
        for dc, spec in step.specs:
            present.add(spec.keyspace)
    return outcomes


def _share(spec: WorkloadSpec, clients: int, k: int) -> WorkloadSpec:
    """Client k's share of a DC's spec when the DC has several clients: threads and ops split."""
    import dataclasses

    if clients == 1:
        return spec
    n = None if spec.n is None else spec.n // clients + (1 if k < spec.n % clients else 0)
    threads = max(1, spec.concurrency // clients + (1 if k < spec.concurrency % clients else 0))
    return dataclasses.replace(spec, n=n, concurrency=threads)


def _counters_how(place: Any, dc: str) -> str:
    if getattr(place.cluster, "network", None) is not None:
        return (f"{dc} namespace's link to the delay router (rt): the traffic crossing between the DCs; "
                f"traffic inside {dc} stays on its loopback")
    return "the client machine's interfaces but lo" if place.remote else \
        "this host's interfaces but lo (no inter-DC network: all nodes on loopback, so nearly nothing)"


def outcomes_frame(outcomes: Sequence[GroupOutcome]) -> Any:
    import pandas as pd

    return pd.DataFrame([{**{k: v for k, v in o.step.labels.items() if k not in ("study", "experiment")},
                          "clients": "+".join(dc for dc, _ in o.step.specs), "status": o.status,
                          "runs": len(o.run_ids), "note": o.note} for o in outcomes])


# -- analysis of stored runs (pure functions over Runs) -----------------------------------------
def results(runs: Sequence[Any]) -> Any:
    """One row per run and op: labels (dc, client ...) and HDR-merged figures over its steady
    window (cassperf.analysis.runs_frame); threads and rf as numbers."""
    import pandas as pd

    from cassperf.analysis import runs_frame

    frame = runs_frame(runs)
    if frame.empty:
        return frame
    if "label_op" in frame.columns:
        frame = frame.drop(columns=["label_op"])
    for col in ("rf", "threads"):
        if col in frame.columns:
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("Int64")
    return frame


def part(frame: Any, name: str, **where: Any) -> Any:
    """The rows of one part (and label values), sorted by cl, threads, dc."""
    if frame.empty or "part" not in frame.columns:
        return frame.iloc[0:0]
    keep = frame["part"] == name
    for key, value in where.items():
        keep &= frame[key].astype(str) == str(value)
    out = frame[keep.fillna(False)]
    order = [c for c in ("cl", "threads", "dc", "op") if c in out.columns]
    return out.sort_values(order).reset_index(drop=True)


def combined(runs: Sequence[Any], group_by: Sequence[str] = ("part", "cl", "threads")) -> Any:
    """The clients of each point together: rate_ops_s summed over the runs (each over its
    steady window), latency percentiles from all their HDR histograms merged (never averaged),
    per op. Columns: the group_by labels, op, clients, dcs, rate_ops_s, latency_{mean,p50,p95,p99}_ms."""
    import pandas as pd

    from cassperf.analysis import steady_state
    from cassperf.analysis.samples import op_samples
    from cassperf.analysis.select import ops_of
    from cassperf.analysis.windows import stats_of

    groups: dict[tuple[str, ...], list[Any]] = {}
    for run in runs:
        key = tuple(str(run.labels.get(k, "")) for k in group_by)
        groups.setdefault(key, []).append(run)
    rows = []
    for key, members in groups.items():
        for op in dict.fromkeys(o for r in members for o in ops_of(r)):
            parts = []
            for run in members:
                if op in ops_of(run):
                    win = steady_state(run).window
                    parts.append(op_samples(run, op, win.start_s, win.end_s))
            rate = float(sum(stats_of(s)["rate_ops_s"] for s in parts))
            merged = _merged_latency(parts)
            rows.append({**dict(zip(group_by, key, strict=True)), "op": op, "clients": len(parts),
                         "dcs": "+".join(sorted({str(r.labels.get("dc", "")) for r in members})),
                         "rate_ops_s": rate, **merged})
    out = pd.DataFrame(rows, columns=[*group_by, "op", "clients", "dcs", "rate_ops_s", "latency_mean_ms",
                                      "latency_p50_ms", "latency_p95_ms", "latency_p99_ms"])
    if "threads" in out.columns:
        out["threads"] = pd.to_numeric(out["threads"], errors="coerce").astype("Int64")
    return out


def _merged_latency(parts: Sequence[Any]) -> dict[str, float]:
    """Mean and percentiles (ms) of every interval histogram of `parts` summed bucket by bucket."""
    import numpy as np

    from cassperf.analysis.samples import HistCounts

    hists = [p.hist for p in parts if p.hist is not None and p.hist.matrix.size]
    nan = {k: math.nan for k in ("latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms")}
    if not hists or len(hists) != len(parts):
        return nan
    index = np.unique(np.concatenate([h.index for h in hists]))
    total = np.zeros(len(index), dtype=np.int64)
    for h in hists:
        total[np.searchsorted(index, h.index)] += h.matrix.sum(axis=0)
    layout = hists[0].layout
    merged = HistCounts(type(layout)(layout.lowest, max(h.layout.highest for h in hists), layout.significant_figures),
                        index.astype(np.int64), total[None, :])
    st = merged.stats_ms(total, parts[0].unit)
    return {k: float(st[k]) for k in nan}


def writes_table(frame: Any) -> Any:
    """Independent vs replicated writes, one row per DC's client plus the two DCs together:
    ops/s and p50/p95/p99 (each client's HDR-merged over its steady window)."""
    import pandas as pd

    keep = frame[frame["part"].isin(["independent", "replicated"])] if not frame.empty else frame
    if keep.empty:
        return pd.DataFrame(columns=["group", "dc", "keyspace rf", "rate_ops_s", "latency_p50_ms", "latency_p95_ms",
                                     "latency_p99_ms"])
    rows = keep.sort_values(["part", "dc"]).assign(group=lambda f: f["part"], **{"keyspace rf": lambda f: f["rf"]})
    return rows[["group", "dc", "keyspace rf", "rate_ops_s", "latency_p50_ms", "latency_p95_ms",
                 "latency_p99_ms"]].reset_index(drop=True)


def _run(runs: Sequence[Any], **labels: Any) -> Any:
    found = [r for r in runs if all(str(r.labels.get(k)) == str(v) for k, v in labels.items())]
    return found[-1] if found else None


def claims(runs: Sequence[Any], study: MultiDCStudy, rtt_ms: float | None, reps: int = 1000) -> Any:
    """The published findings checked on these runs (cassperf.analysis.claims). ``rtt_ms``: the
    round trip between the DCs (the measured ping RTT; else the configured one; None: unknown)."""
    from cassperf.analysis.claims import FAILS, HOLDS, NOT_SHOWN, Claim, claims_frame, describe, lower
    from cassperf.analysis.compare import compare_runs

    def cmp(a: Any, b: Any, op: str, metric: str = "rate_ops_s") -> Any:
        return compare_runs(a, b, op, metric, reps=reps) if a is not None and b is not None else None

    def every(verdicts: list[str]) -> str:
        return NOT_SHOWN if not verdicts or NOT_SHOWN in verdicts else HOLDS if all(v == HOLDS for v in verdicts) \
            else FAILS

    shared = ("every node and both clients share this machine's 2 cores: ops/s are bounded by CPU, which "
              "the delay does not use, more than by the round trips")
    rows: list[Claim] = []
    # EACH_QUORUM vs LOCAL_QUORUM
    comps = {}
    for part_name, op in (("cl-write", "write"), ("cl-read", "read")):
        lq = _run(runs, part=part_name, cl="LOCAL_QUORUM")
        eq = _run(runs, part=part_name, cl="EACH_QUORUM")
        comps[op] = cmp(lq, eq, op)
    rows.append(Claim("EACH_QUORUM is far slower than LOCAL_QUORUM across the inter-DC round trip, for writes "
                      "and for reads", SOURCE,
                      "; ".join(describe(c, f"{op}s EACH_QUORUM vs LOCAL_QUORUM ops/s") for op, c in comps.items()),
                      every([lower(c) for c in comps.values()]),
                      "EACH_QUORUM's ops/s significantly below LOCAL_QUORUM's, for writes and for reads",
                      f"one client in {study.cl_dc}, {study.write_threads} write / {study.read_threads} read "
                      f"threads; {shared}"))
    # QUORUM reads: latency near the RTT, ops/s rising with threads
    points = sorted(((int(r.labels["threads"]), r) for r in runs if r.labels.get("part") == "quorum-read"),
                    key=lambda x: x[0])
    if points and rtt_ms:
        from cassperf.analysis import steady_state
        from cassperf.analysis.windows import window_stats

        p50s = [(t, window_stats(r, steady_state(r).window, "read")["latency_p50_ms"]) for t, r in points]
        low_bound, high_bound = 0.8 * rtt_ms, 2.0 * rtt_ms
        near = all(low_bound <= p <= high_bound for _, p in p50s)
        rows.append(Claim("QUORUM reads (not LOCAL) take about one inter-DC round trip, at every client thread "
                          "count", SOURCE,
                          "p50 " + ", ".join(f"{p:.1f} ms at {t} threads" for t, p in p50s) + f" (RTT {rtt_ms:.1f} ms)",
                          HOLDS if near else FAILS,
                          f"every thread count's p50 between 0.8x and 2x the RTT ({low_bound:.1f}-{high_bound:.1f} ms)",
                          "QUORUM of 2 DCs x RF replicas needs a replica of the other DC"))
    else:
        rows.append(Claim("QUORUM reads (not LOCAL) take about one inter-DC round trip, at every client thread "
                          "count", SOURCE, "needs the quorum-read runs and a round-trip time", NOT_SHOWN, "", ""))
    if len(points) >= 2:
        c = cmp(points[0][1], points[-1][1], "read")
        from cassperf.analysis.claims import higher

        rows.append(Claim("More client threads give more QUORUM read ops/s (each read waits on the round trip, "
                          "so parallel reads add up)", SOURCE,
                          describe(c, f"{points[-1][0]} vs {points[0][0]} threads"), higher(c),
                          "ops/s at the highest thread count significantly above the lowest", shared))
    # replication lowers per-DC write ops/s
    comps = {dc: cmp(_run(runs, part="independent", dc=dc), _run(runs, part="replicated", dc=dc), "write")
             for dc in study.dcs}
    rows.append(Claim("Replicating to the other DC lowers each DC's write ops/s against independent RF 1 writes, "
                      "even at LOCAL_QUORUM", SOURCE,
                      "; ".join(describe(c, f"{dc}: replicated vs independent") for dc, c in comps.items()),
                      every([lower(c) for c in comps.values()]),
                      "each DC's replicated write ops/s significantly below its independent RF 1 ops/s",
                      f"{study.rf_note}; {shared}: a replica costs CPU here, on the same cores"))
    return claims_frame(rows)
