"""What the log explorer reads when given no logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassperf import config
from cassperf.experiments.log_explorer import default_logs


def test_the_shared_fixtures_when_they_are_here(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CASSPERF_FIXTURES", str(tmp_path))
    assert default_logs() == tmp_path


def test_the_repositorys_own_fixtures_on_a_machine_without_the_shared_folder(monkeypatch: pytest.MonkeyPatch,
                                                                              tmp_path: Path) -> None:
    monkeypatch.setenv("CASSPERF_FIXTURES", str(tmp_path / "absent"))
    assert default_logs() == config.project_root() / "tests" / "fixtures"
    assert (default_logs() / "nodetool-5.0").is_dir()
