"""What the log explorer reads when given no logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassperf import config
from cassperf.experiments.log_explorer import default_logs


def test_the_public_fixtures_the_repository_carries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CASSPERF_FIXTURES", raising=False)
    assert default_logs() == config.project_root() / "tests" / "fixtures" / "public"
    assert sorted(p.name for p in default_logs().iterdir() if p.is_dir()) == [
        "cassandra-stress", "gc", "network", "nodetool", "other-tools", "stress-graph", "tlp-stress"]


def test_the_folder_cassperf_fixtures_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CASSPERF_FIXTURES", str(tmp_path))
    assert default_logs() == tmp_path
