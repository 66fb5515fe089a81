"""`cassperf report` says, before the first notebook runs, what this machine will not make of the
selected studies and the command that adds it: a report notebook that runs 04's study with a
container deployment, on a PATH without podman, runc, debootstrap, iperf3 and ping (the virtual
environment's bin folder alone), logs the missing deployment first, then runs."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest

from cassperf.workbook.preflight import run_reports
from tests.notebooks.reportkit import write_notebook

pytestmark = pytest.mark.notebook


def test_the_pipeline_says_what_is_missing_before_the_first_notebook(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    nbs = tmp_path / "notebooks"
    path = write_notebook(nbs, "04-deployments.ipynb",
                          'deployments: str = "5.0.6:java17:disk,5.0.6:java17:container"  # VERSION:javaN:STORAGE\n'
                          'rows: int = 100  # keys per deployment', ['print(f"{deployments} with {rows} rows")'],
                          title="Deployments")
    nb = nbformat.read(path, as_version=4)
    nb.metadata["cassperf"] = {"study": "cassperf.experiments.deployment.DeploymentStudy"}
    nbformat.write(nb, path)
    monkeypatch.setenv("CASSPERF_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))       # none of the packages make report adds
    log: list[str] = []
    [result] = run_reports(None, "local", reports_dir=tmp_path / "reports", notebooks_dir=nbs, log=log.append)
    assert result.ok, result.error
    install = "make container" if os.geteuid() == 0 else "sudo make report"
    why = "podman, runc, debootstrap not installed" + (
        "" if os.geteuid() == 0 else "; container nodes run under rootful podman, which needs root")
    assert log[:3] == ["not made on this machine (each report says so too):",
                       f"  04-deployments: deployment 5.0.6-java17-container will not be made ({why}); add it: {install}",
                       "04-deployments.ipynb: running"]
