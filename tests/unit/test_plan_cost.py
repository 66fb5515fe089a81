"""What a plan costs, said before it runs (cassperf.experiments.cost, `cassperf report --plan`):
the real 01 notebook's local and paper parameter sets give the exact lines below, the arithmetic
is checked on a study made for it, and the plan of the paper set on a named cluster is printed by
`cassperf report --plan` without a single connection (a Python audit hook ends the process at the
first connect, send or name lookup)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from cassperf import config
from cassperf.experiments.cost import (EMBEDDED_LOAD_ROWS_S, RUN_OVERHEAD_S, cost_lines, fmt_bytes, fmt_seconds,
                                       overhead_note, study_cost)
from cassperf.experiments.study import Arm, Preparation, Study
from cassperf.experiments.host_needs import TOOLS, Host
from cassperf.report.params import resolve, select_notebooks
from cassperf.workbook.preflight import check_studies, plan_reports
from cassperf.workload.spec import WorkloadSpec

RF = select_notebooks(["01-replication-factor"])[0]
PAPER_DATA = ("data: 6 keyspaces, 858.9 GB before compression (ks410rf1 10,000,000 rows x 4,090 B x RF 1 = 40.9 GB; "
              "ks410rf2 10,000,000 rows x 4,090 B x RF 2 = 81.8 GB; ks410rf3 10,000,000 rows x 4,090 B x RF 3 = "
              "122.7 GB; ks410rf4 10,000,000 rows x 4,090 B x RF 4 = 163.6 GB; ks410rf5 10,000,000 rows x 4,090 B "
              "x RF 5 = 204.5 GB; ks410rf6 10,000,000 rows x 4,090 B x RF 6 = 245.4 GB)")


def _rf_study(parameter_set: str, **explicit: Any) -> Any:
    [(_, study)] = check_studies([resolve(RF, parameter_set, explicit)])
    return study


def test_01_local_on_the_embedded_cluster() -> None:
    cost = study_cost(_rf_study("local"))
    assert (cost.arms, cost.runs, cost.calibrated, cost.preparation_rows) == (9, 60, True, 15_000)
    assert cost_lines(cost, embedded=True, per_run_s=2.0, embedded_rows_s=1_000.0) == [
        "arms: 9 + the A/A twin of write rf=1; 6 repeats: 60 runs of 3 s after 1 s unrecorded",
        "concurrency: calibrated at run time (the knee found on the cluster)",
        "load time: 7 min 30 s to 9 min 3 s",           # 360 + 27 + 30..100 + 18..40.5 + 15 s
        "  measured runs: 60 x (3 s + 1 s + 2 s overhead) = 6 min",
        "  warm pass:     9 arms x (1 s + 2 s) = 27 s",
        "  warm-up:       6 to 20 steps x (3 s + 2 s) = 30 s to 1 min 40 s",
        "  calibration:   4 to 9 steps x (2.5 s + 2 s) = 18 s to 40.5 s",
        "  preparations:  3 loads, 15,000 rows at 1,000 rows/s = 15 s",
        "data: 3 keyspaces, 122.7 MB before compression (ks410rf1 5,000 rows x 4,090 B x RF 1 = 20.4 MB; ks410rf2 "
        "5,000 rows x 4,090 B x RF 2 = 40.9 MB; ks410rf3 5,000 rows x 4,090 B x RF 3 = 61.4 MB)",
    ]


def test_01_paper_on_a_named_cluster() -> None:
    cost = study_cost(_rf_study("paper", contact_points="10.0.0.1"))
    # 6 RF writes, 6 warm reads and RF 3's cold one, CL ONE/TWO/THREE, 2 RFs x 5 more thread counts, 3 mixes
    assert (cost.arms, cost.runs, cost.calibrated) == (29, 90, False)
    assert cost_lines(cost, embedded=False, per_run_s=2.0, example_rows_s=20_000.0) == [
        "arms: 29 + the A/A twin of write rf=1; 3 repeats: 90 runs of 5 min after 1 s unrecorded",
        "concurrency: 16, 32, 64, 128, 256, 512 in flight",
        "load time: 7 h 36 min to 7 h 38 min and the preparations",    # 90 x 303 s + 29 x 3 s + 30..100 s
        "  measured runs: 90 x (5 min + 1 s + 2 s overhead) = 7 h 35 min",
        "  warm pass:     29 arms x (1 s + 2 s) = 1 min 27 s",
        "  warm-up:       6 to 20 steps x (3 s + 2 s) = 30 s to 1 min 40 s",
        "  preparations:  6 loads, 60,000,000 rows, at your cluster's write rate (at 20,000 rows/s: 50 min; not in "
        "the load time above)",
        PAPER_DATA,
    ]


@dataclass(frozen=True)
class TwoClusters(Study):
    """Arms on two contexts, one by op count, a mixed keyspace over two DCs, waits for idle nodes."""

    name: ClassVar[str] = "two-clusters"
    quiet_max_s: float = 3.0

    def _spec(self, **kw: Any) -> WorkloadSpec:
        return WorkloadSpec(**{"op": "write", "duration": 10, "keyspace": "two_a", "population": "uniform(1..900)",
                               "column_count": 2, "column_size": 50, **kw})

    def preparations(self) -> list[Preparation]:
        return [Preparation("a", self._spec(duration=None, n=1_000, population="seq=1..1000"), context="a")]

    def warm_spec(self) -> WorkloadSpec:
        return self._spec()

    def arms(self, calibrated: Any) -> list[Arm]:
        return [Arm("a write", {}, spec=self._spec(), context="a"),
                Arm("b mixed", {}, spec=self._spec(op="mixed", keyspace="two_b", warmup=False, concurrency=8,
                                                   replication={"dc1": 2, "dc2": 1}), context="b"),
                Arm("b count", {}, spec=self._spec(duration=None, n=500, keyspace="two_b", concurrency=8), context="b")]


def test_the_arithmetic_on_a_study_made_for_it() -> None:
    cost = study_cost(TwoClusters(repeats=2, warm_max_steps=4, warm_step_s=5, warm_arm_s=2))
    # a write and its A/A twin (10 s + 1 s) and b mixed (10 s, no warm-up) twice each; b count twice, untimed
    assert (cost.runs, cost.contexts, cost.measured_s, cost.count_runs) == (8, 2, 64.0, 2)
    assert cost_lines(cost, embedded=True, per_run_s=1.5, embedded_rows_s=100.0) == [
        "arms: 3 + the A/A twin of a write; 2 repeats: 8 runs of 10 s after 1 s unrecorded where the arm asks for "
        "it (2 by op count: their time is not known before)",
        "concurrency: 8, 200 in flight",
        "load time: 2 min 29 s to 2 min 53 s",          # 64 + 8 x 1.5 (+ 8 x 3 waiting) + 10.5 + 52 + 10
        "  measured runs: 8 x (10 s + its warm-up + 1.5 s overhead + up to 3 s for idle nodes) = 1 min 16 s to "
        "1 min 40 s",
        "  warm pass:     3 arms x (2 s + 1.5 s) = 10.5 s",
        "  warm-up:       4 steps x (5 s + 1.5 s) on each of 2 clusters = 52 s",
        "  preparations:  1 load, 1,000 rows at 100 rows/s = 10 s",
        # two_b is made by b mixed (RF 2 in dc1, 1 in dc2) before b count would make it with RF 1
        "data: 2 keyspaces, 370.0 kB before compression (two_a on a 1,000 rows x 100 B x RF 1 = 100.0 kB; two_b on b "
        "900 rows x 100 B x RF 2+1 = 270.0 kB)",
    ]


@pytest.mark.parametrize("seconds, text", [(9, "9 s"), (22.5, "22.5 s"), (60, "1 min"), (444, "7 min 24 s"),
                                           (526.5, "8 min 47 s"), (3600, "1 h"), (27_317, "7 h 35 min")])
def test_durations_in_words(seconds: float, text: str) -> None:
    assert fmt_seconds(seconds) == text


@pytest.mark.parametrize("n, text", [(999, "999 B"), (20_450_000, "20.4 MB"), (858_900_000_000, "858.9 GB"),
                                     (9_216_000_000_000, "9.2 TB")])
def test_sizes_in_words(n: float, text: str) -> None:
    assert fmt_bytes(n) == text


def test_the_plan_of_01_paper_on_your_cluster_as_the_report_prints_it() -> None:
    lines = plan_reports(["01-replication-factor"], "paper", {"contact_points": "10.0.0.1"},
                         host=Host(frozenset(TOOLS), root=True))
    assert lines[:4] == [
        "01-replication-factor, parameter set paper, on your cluster 10.0.0.1:",
        "  arms: 29 + the A/A twin of write rf=1; 3 repeats: 90 runs of 5 min after 1 s unrecorded",
        "  concurrency: 16, 32, 64, 128, 256, 512 in flight",
        f"  load time: {fmt_seconds(27_090 + (90 + 29 + 6) * RUN_OVERHEAD_S + 29 + 6 * 3)} to "
        f"{fmt_seconds(27_090 + (90 + 29 + 20) * RUN_OVERHEAD_S + 29 + 20 * 3)} and the preparations"]
    assert lines[-2:] == [f"  {PAPER_DATA}", overhead_note()]
    assert overhead_note() == (f"per-run overhead {fmt_seconds(RUN_OVERHEAD_S)} and the embedded cluster's "
                               f"preparation rate {EMBEDDED_LOAD_ROWS_S:,.0f} rows/s: measured by "
                               f"bench/plan_overhead.py on the executor's records of a make report of 01 "
                               f"(embedded cluster)")


NO_CONNECTION = textwrap.dedent("""
    import os, sys
    def refuse(event, args):
        if event in ("socket.connect", "socket.sendto", "socket.sendmsg", "socket.getaddrinfo"):
            sys.stderr.write(f"refused {event} {args[1:]!r}\\n"); sys.stderr.flush(); os._exit(99)
    sys.addaudithook(refuse)
    from cassperf.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def test_report_plan_of_paper_on_a_named_cluster_opens_no_connection() -> None:
    argv = ["report", "--plan", "--params", "paper", "--notebook", "01-replication-factor",
            "-p", "contact_points", "10.0.0.1"]
    out = subprocess.run([sys.executable, "-c", NO_CONNECTION, *argv], capture_output=True, text=True, timeout=120,
                         cwd=config.project_root())
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout.splitlines()[0] == "01-replication-factor, parameter set paper, on your cluster 10.0.0.1:"
    assert f"  {PAPER_DATA}" in out.stdout.splitlines()


def test_the_audit_hook_does_refuse_a_connection() -> None:
    probe = NO_CONNECTION.replace("from cassperf.cli import main\nsys.exit(main(sys.argv[1:]))",
                                  "import socket\nsocket.create_connection(('10.0.0.1', 9042), timeout=1)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 99 and out.stderr.startswith("refused socket.")
