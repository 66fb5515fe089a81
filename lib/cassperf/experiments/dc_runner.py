"""The runner of a study with clients per DC (the executor's ``runner`` hook): where an arm's
load runs.

- An arm with ``clients`` ((dc, spec) pairs) runs all of them together through a
  clients.ClientPlacement (Dask, one worker per client location, per-report mutual TLS): each
  DC's spec on that DC's client location(s) (with several clients per DC they split its
  threads), every run labelled with the executor's labels plus ``dc`` and ``client``; the
  interface counters of each DC's first location are read around it (the group record keeps
  them). Clients on this machine share its cores: each runs cores / clients engine processes
  (at least one), so that the clients of an arm together run one per core. The cluster's
  sampler runs with the first client only (one sampler per cluster). A client that dies fails
  only its own task: the others' runs are stored complete and the slot is partial
  (executor.PartialRun); the comparisons of its arm list the lost run.
- An arm with one ``spec`` (the warm-up, the calibration, the preparations) runs in this process
  from its spec's local DC (inside that DC's network namespace on a local cluster with distance),
  through executor.LocalRunner.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from cassperf.errors import ConfigError
from cassperf.experiments.runner import SAMPLE_INTERVAL_S, LocalRunner, PartialRun, spec_key
from cassperf.experiments.study import Arm
from cassperf.workload.spec import WorkloadSpec


def share(spec: WorkloadSpec, clients: int, k: int) -> WorkloadSpec:
    """Client k's share of a DC's spec when the DC has ``clients`` clients: threads (and ops)
    split, the first ones taking the remainder."""
    if clients == 1:
        return spec
    n = None if spec.n is None else spec.n // clients + (1 if k < spec.n % clients else 0)
    threads = max(1, spec.concurrency // clients + (1 if k < spec.concurrency % clients else 0))
    return dataclasses.replace(spec, n=n, concurrency=threads)


class PlacedRunner:
    """Runs arms for the executor (module doc) through ``place``, an open ClientPlacement."""

    def __init__(self, place: Any) -> None:
        self.place = place

    def jobs(self, arm: Arm, labels: Mapping[str, str], sample: bool,
             sampler: Mapping[str, Any] | None = None) -> list[Any]:
        """One ClientJob per client location of each (dc, spec) of the arm; the first samples the
        cluster (``sampler``: the study's sampler options) when ``sample``."""
        from cassperf.experiments.clients import ClientJob

        jobs = []
        for dc, spec in arm.clients:
            mine = [p for p in self.place.places if p.dc == dc]
            if not mine:
                raise ConfigError(f"arm {arm.name!r} has a client in {dc!r}, where no client location is; "
                                  f"locations: {', '.join(p.name for p in self.place.places)}")
            for k, p in enumerate(mine):
                part = share(spec, len(mine), k)
                watch = {"tables": arm.tables, "interval_s": SAMPLE_INTERVAL_S, **dict(sampler or {})}
                options = {"sampler": watch} if sample and not jobs else {}
                jobs.append(ClientJob(p.name, part, {**labels, "tool": arm.tool,
                                                     "spec_key": spec_key(part, arm.tool)}, arm.tool, options))
        return jobs

    def run(self, arm: Arm, cluster: Any, labels: Mapping[str, str], *, root: Path, warmup_s: float,
            sample: bool = True, sampler: Mapping[str, Any] | None = None, profile: Any = None,
            load: bool = False) -> list[str]:
        """Run ids of the arm's stored runs; RunFailedError (one spec) or PartialRun (clients)
        when not every run finished. ``profile`` (a Profiler) profiles an arm with one spec; the
        runs of an arm with clients per DC are not profiled (they are written on the clients'
        hosts). ``load``: a preparation load, one spec (LocalRunner.run)."""
        if arm.spec is not None:
            place = cluster.in_dc(arm.spec.local_dc) if getattr(cluster, "network", None) is not None \
                and arm.spec.local_dc else nullcontext()
            with place:
                return LocalRunner().run(arm, cluster, labels, root=root, warmup_s=warmup_s, sample=sample,
                                         sampler=sampler, profile=profile, load=load)
        if cluster is not self.place.cluster:
            raise ConfigError(f"arm {arm.name!r} runs on context {arm.context!r}, not the cluster its clients are "
                              f"placed on")
        jobs = self.jobs(arm, labels, sample, sampler)
        options: dict[str, Any] = {"warmup_s": warmup_s}
        if not self.place.remote and len(jobs) > 1:      # clients on this machine share its cores
            options["processes"] = max(1, (os.cpu_count() or 1) // len(jobs))
        group = self.place.run_together(jobs, labels, root=root, watch_network=True, **options)
        ids = [r.run_id for r in group.results]
        lost = [r for r in group.results if r.status != "ran"]
        if lost:
            note = "; ".join(f"client {r.location} {r.status}" + (f": {r.note}" if r.note else "") for r in lost)
            raise PartialRun(ids, len(ids) - len(lost), note)
        return ids
