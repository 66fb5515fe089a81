"""A cache claim tests a cache only where its manipulation took, on a real node (127.0.44.1, then 127.0.45.1).

The storage study's claim "reads with a full cache are faster than with an empty one (run A)", run
twice through the one executor on a node with a bounded page cache:

- on a data set inside the bound's room (8 MB for 64 MiB): after a first pass every read comes from
  memory, so the claim is "not tested here", and the row says why with the figure;
- on a data set 8x the bound (256 MiB of rows for 32 MiB), reads of a working set within the bound,
  the disk's reads throttled: run a reads its working set from disk, the full-cache arm from memory,
  so the claim gets a verdict (whichever the runs give), the check's figure beside it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cassperf.analysis.claims import NOT_TESTED
from cassperf.cluster import cgroups
from cassperf.experiments.executor import execute
from cassperf.experiments.outcome import load_outcome
from cassperf.experiments.storage_cache import StorageStudy

# alone: asserts what its nodes read from disk: another test's page-cache drop would move it; make test runs it with no
# other test beside it
pytestmark = [pytest.mark.cluster, pytest.mark.alone]

CLAIM = "Reads with a full cache are faster than with an empty one (run A)"
SMALL = {"repeats": 2, "run_s": 2, "interval_s": 0.1, "warm_step_s": 1, "warm_max_steps": 1, "warm_arm_s": 0,
         "threads": (8,), "empty_threads": 8, "chunk_kbs": (64,), "empty_chunk_kbs": (64,), "sweep_chunk_kbs": (64,),
         "write_threads": 32}


def cache_claim(make_cluster, tmp_path: Path, name: str, address: str, bound_mb: int, rows: int, read_rows: int,
                read_iops: int | None = None) -> dict:
    cluster = make_cluster(name, "dc1:1", address, page_cache_mb=bound_mb, read_iops=read_iops)
    cluster.start()
    study = StorageStudy(experiment=name, rows=rows, read_rows=read_rows, **SMALL)
    try:
        execute(study, cluster, root=tmp_path / "runs")
    finally:
        cluster.stop(kill=True)
    outcome = load_outcome(study, tmp_path / "runs")
    claims = outcome.study.analysis().conclude(outcome).claims.set_index("claim")
    return claims.loc[CLAIM].to_dict()


def test_a_cache_claim_on_data_inside_the_bound_is_not_tested_here_and_on_data_8x_the_bound_gets_a_verdict(
        make_cluster, tmp_path: Path) -> None:
    why = cgroups.problem(cgroups.current(), memory=True, io=True)
    if why is not None:
        pytest.skip(f"no memory cgroups here: {why}")
    inside = cache_claim(make_cluster, tmp_path / "inside", "cacheinside", "127.0.44.1", 64, rows=2_000, read_rows=0)
    assert inside["verdict"] == NOT_TESTED, inside
    assert inside["check_took"] is False
    assert "under 2x the 64 MiB page cache it may hold" in inside["check"], inside["check"]
    assert inside["reason"].startswith("the emptied cache did not take: run a read ")

    over = cache_claim(make_cluster, tmp_path / "over", "cacheover", "127.0.45.1", 32, rows=65_536, read_rows=256,
                       read_iops=200)
    assert over["verdict"] in ("holds", "does not hold", "not shown"), over
    assert over["check_took"] is True, over["check"]
    assert "32 MiB of page cache per node" in over["check"]
