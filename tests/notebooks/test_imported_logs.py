"""Imported logs in a study: real cassandra-stress logs imported with `cassperf import` as the
README says, then the study notebook with analyse_only builds its tables and claims from them,
with no executor record and no cluster.

The logs are real but were not made for these studies: a DSE 5.1 read ramp (12 autorate runs,
4 to 609 threads) and a Cassandra 3.11 user-profile ramp (3 runs, one cut short, with
NoHostAvailable errors) stand in for two arms, a Cassandra 4.1 write for a third. What the test
checks is the machine: arms and blocks from the labels, two or more runs per arm compared block
by block with the studies' statistics, one run per arm figures without a verdict, saying why.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import public_fixture
from tests.notebooks.studykit import check_report_shape, execute_study

pytestmark = pytest.mark.notebook


@pytest.fixture(autouse=True)
def data_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test imports into a data folder of its own (nothing runs: no node to stop)."""
    monkeypatch.setenv("CASSPERF_DATA", str(tmp_path / "data"))
    return tmp_path / "data"

READ_RAMP = ("cassandra-stress", "cs_dse51_user_singletrans_autorate_RTFAP2_read.log")
USER_RAMP = ("cassandra-stress", "cs_3.11_user_bigtable_autorate_NoHostAvailable-errors_ru-locale_kmwork.log")
WRITE = ("cassandra-stress", "cs_4.1.11_write_n25000_threads3_full_crystalloide.txt")


def cassperf_import(*args: str) -> str:
    """`cassperf import ...` as a user types it (the data folder is the test's, CASSPERF_DATA)."""
    done = subprocess.run([sys.executable, "-m", "cassperf.cli", "import", *args], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def by_claim(claims: list[dict], start: str) -> dict:
    return next(c for c in claims if c["claim"].startswith(start))


def test_imported_logs_make_the_replication_factor_study(tmp_path: Path) -> None:
    cassperf_import("--label", "study=replication-factor", "--label", "rf=1", "--label", "op=read",
                    str(public_fixture(*READ_RAMP)))
    cassperf_import("--label", "study=replication-factor", "--label", "rf=3", "--label", "op=read",
                    str(public_fixture(*USER_RAMP)))
    cassperf_import("--label", "study=replication-factor", "--label", "rf=1", "--label", "op=write",
                    str(public_fixture(*WRITE)))
    run = execute_study("01-replication-factor.ipynb", tmp_path, analyse_only=True, rfs=[1, 3], read_rfs=[1, 3],
                        cold_read_rfs=[], mixed_rfs=[], cl_sweep=[], thread_sweep_rfs=[])
    check_report_shape(run)
    assert "imported from logs" in run.text() and "no executor record" in run.text()
    claims = run.claims
    # the DSE ramp's 12 runs count; the 3.11 ramp's were all cut short (its log ends in errors): listed, not counted
    reads = by_claim(claims, "Reads slow down from RF 1 to RF 3")
    assert reads["verdict"] == "not shown" and "too few runs counted (12 of read rf=1 run=b, 0 of read rf=3 run=b" \
        in reads["reason"], reads
    rf3 = [f for f in run.published["figures"] if f["arm"] == "read rf=3 run=b"]
    assert len(rf3) == 3 and {f["reason"] for f in rf3} == {"incomplete: the run was killed or cut short"}
    # one write run: its figures, no verdict, and why
    writes = by_claim(claims, "Writes at RF 1 are much faster")
    assert writes["verdict"] == "not shown" and "no stored run of 'write rf=3'" in writes["reason"], writes
    figures = {f["arm"] for f in run.published["figures"]}
    assert figures == {"read rf=1 run=b", "read rf=3 run=b", "write rf=1"}
    assert by_claim(claims, "A/A control")["verdict"] == "not shown"


def test_imported_logs_make_the_storage_study(tmp_path: Path) -> None:
    # the ramps carry their thread counts: each run is the full-cache arm of its thread count
    for fixture in (READ_RAMP, USER_RAMP):
        cassperf_import("--label", "study=storage-and-cache", "--label", "chunk_kb=64", "--label", "cache=full",
                        "--label", "op=read", str(public_fixture(*fixture)))
    run = execute_study("05-storage-and-cache.ipynb", tmp_path, analyse_only=True, chunk_kbs=[64],
                        empty_chunk_kbs=[])
    check_report_shape(run)
    arms = {f["arm"] for f in run.published["figures"]}
    assert {"disk 64 KiB, full, 4 threads", "disk 64 KiB, full, 609 threads"} <= arms, arms
    taper = by_claim(run.claims, "With a full cache, ops/s taper off")
    assert taper["verdict"] == "not shown" and "too few runs counted" in taper["reason"], taper
    assert "imported from logs" in run.text()


def test_an_imported_run_whose_arm_is_unknown_gets_one_line() -> None:
    from cassperf.errors import ConfigError
    from cassperf.experiments.outcome import load_outcome
    from cassperf.experiments.replication_factor import RFStudy

    cassperf_import("--label", "study=replication-factor", "--label", "op=write", str(public_fixture(*WRITE)))
    with pytest.raises(ConfigError) as err:
        load_outcome(RFStudy(experiment="local"), empty_ok=True)
    line = str(err.value)
    assert "\n" not in line and line.startswith("imported replication-factor runs whose arm is not known: ")
    assert "--label rf=R --label op=write|read|mixed" in line and "'write rf=1'" in line
