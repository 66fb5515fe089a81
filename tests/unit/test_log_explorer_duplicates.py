"""The log explorer re-run on the same store lists files already imported instead of failing or
counting them twice (issue 11, item 5)."""

from __future__ import annotations

import shutil
from pathlib import Path

from cassperf.experiments.log_explorer import explore

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "cassandra-stress-5.0" / "mixed.stdout.txt"


def test_exploring_the_same_logs_twice_into_one_store_imports_them_once(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(FIXTURE, logs / "mixed.txt")
    first = explore(logs, tmp_path / "store")
    assert len(first.runs) == 1 and first.problems.empty
    again = explore(logs, tmp_path / "store")
    assert again.runs["run_id"].tolist() == first.runs["run_id"].tolist()
    assert again.problems["file"].tolist() == ["mixed.txt"]
    assert again.problems["error"].iloc[0].startswith(
        f"{logs / 'mixed.txt'} was imported before as run {first.runs['run_id'].iloc[0]} (same content, sha256 ")
    assert again.intervals.empty
