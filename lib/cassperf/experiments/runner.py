"""Who runs an arm: the runner the executor hands every slot to, and what it needs.

``LocalRunner`` runs an arm's one spec in this process through the one entry point
(cassperf.workload.run.run_spec); a study with clients per DC brings its own runner
(experiments.dc_runner). ``spec_key`` names a workload exactly (a label of every run);
``PartialRun`` is how a runner says that some of an arm's clients did not finish.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cassperf.errors import ConfigError
from cassperf.workload.spec import WorkloadSpec

#: sampler interval of measured runs, s
SAMPLE_INTERVAL_S = 2.0
#: times a preparation load's failed write is sent again (cassandra-stress's own default, -errors
#: retries=9): its writes are idempotent, and every key it writes is one the study then reads
LOAD_RETRIES = 9


def spec_key(spec: WorkloadSpec, tool: str) -> str:
    """12 hex digits naming the workload exactly (the spec and the tool)."""
    return hashlib.sha256("|".join([tool, repr(spec)]).encode()).hexdigest()[:12]


class PartialRun(Exception):
    """Raised by a runner when some of an arm's clients did not finish: ``run_ids`` every run of
    the slot (stored; the lost ones marked failed), ``ran`` how many finished, ``note`` which
    client was lost and why. The slot is stored partial (failed when none finished)."""

    def __init__(self, run_ids: list[str], ran: int, note: str) -> None:
        super().__init__(note)
        self.run_ids, self.ran, self.note = run_ids, ran, note


class LocalRunner:
    """Runs an arm's one spec in this process through the one entry point, run_spec."""

    def run(self, arm: Any, cluster: Any, labels: Mapping[str, str], *, root: Path, warmup_s: float,
            sample: bool = True, sampler: Mapping[str, Any] | None = None, profile: Any = None,
            load: bool = False) -> list[str]:
        """Run ids of the stored run(s); RunFailedError (stored, marked failed) when it failed.
        ``profile``: the study's Profiler for a measured run (run_spec's ``profile``), else None.
        ``load``: a preparation load: each failed write is sent again up to LOAD_RETRIES times, and
        the run fails unless every write succeeded (max_error_share 0): a load that lost keys
        would leave the study reading rows that are not there."""
        from cassperf.workload.run import run_spec

        if arm.spec is None:
            raise ConfigError(f"arm {arm.name!r} has clients per DC: this study needs a runner that places them")
        options = {"tables": arm.tables, "interval_s": SAMPLE_INTERVAL_S, **dict(sampler or {})} if sample else None
        during = arm.during
        run = run_spec(arm.spec, cluster, tool=arm.tool, labels={**labels, "tool": arm.tool,
                                                                 "spec_key": spec_key(arm.spec, arm.tool)},
                       sampler=options, during=None if during is None else (lambda writer: during(writer, cluster)),
                       root=root, progress=False, warmup_s=warmup_s, profile=profile,
                       **({"retries": LOAD_RETRIES, "max_error_share": 0.0} if load else {}))
        return [run.run_id]
