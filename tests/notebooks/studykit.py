"""The one harness of the study notebook tests: a study notebook run by papermill in a real
kernel, with its test parameter set, against the real embedded cluster it starts, in a data
folder of its own whose every node is stopped at the end.

    env = study_env(...)              # module fixture: CASSPERF_DATA of its own, nodes stopped after
    run = execute_study("01-replication-factor.ipynb", tmp_path, cluster_name=..., first_address=...)
    run.claims, run.figures, run.record_plan   # what the report published (its JSON output)
    check_report_shape(run)           # findings first, the A/A row first, sections, method, inventory
    check_in_chromium(run, tmp_path)  # the exported report opens offline: every figure drew, code hidden
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import papermill
import pytest
import yaml

from cassperf import config
from tests.conftest import cassperf_processes

VERDICTS = {"holds", "does not hold", "not tested here", "not shown", "withheld"}


@dataclass
class ExecutedStudy:
    path: Path
    nb: nbformat.NotebookNode

    @property
    def outputs(self) -> list[dict[str, Any]]:
        return [o for c in self.nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]

    @property
    def published(self) -> dict[str, Any]:
        """The report's JSON output (claims, figures, the plan), read back."""
        found: dict[str, Any] = {}
        for o in self.outputs:
            data = o.get("data", {}).get("application/json")
            if data:
                found.update(data if isinstance(data, dict) else json.loads(data))
        return found

    @property
    def claims(self) -> list[dict[str, Any]]:
        return self.published["claims"]

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [o for o in self.outputs if o.get("output_type") == "error"]

    def text(self) -> str:
        parts = []
        for o in self.outputs:
            parts.append(str(o.get("text", "")))
            parts.append(str(o.get("data", {}).get("text/html", "")))
        return "\n".join(parts)


def stop_study_clusters(data: Path) -> None:
    """Every node started under ``data`` (by any cluster the notebook made) killed."""
    for proc in cassperf_processes(data):
        proc.kill()


@pytest.fixture(scope="module")
def study_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A data folder of its own for the module's notebooks; every node they start is stopped at
    the end, also when a test fails."""
    data = tmp_path_factory.mktemp("study-data")
    mp = pytest.MonkeyPatch()
    mp.setenv("CASSPERF_DATA", str(data))
    try:
        yield data
    finally:
        try:
            stop_study_clusters(data)
        finally:
            mp.undo()


def study_with_test_params(cls: Any, name: str) -> Any:
    """The study the notebook `name` runs with the test parameter set (its yaml, as make test runs it)."""
    import yaml

    from cassperf import config

    params = yaml.safe_load((config.notebooks_dir() / "params" / "test" / name.replace(".ipynb", ".yaml")).read_text())
    return cls.from_parameters(params)


def execute_study(name: str, out_dir: Path, parameter_set: str = "test", **parameters: Any) -> ExecutedStudy:
    """Run notebooks/<name> with notebooks/params/<set>/<stem>.yaml plus ``parameters``."""
    stem = Path(name).stem
    params = yaml.safe_load((config.notebooks_dir() / "params" / parameter_set / f"{stem}.yaml").read_text()) or {}
    params.update(parameters)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / name
    batch = os.environ.get(config.BATCH_ENV)
    os.environ[config.BATCH_ENV] = "1"        # as `cassperf report` runs it (report.execute)
    try:
        papermill.execute_notebook(str(config.notebooks_dir() / name), str(out), parameters=params,
                                   cwd=str(config.notebooks_dir()), progress_bar=False, kernel_name="python3")
    finally:
        if batch is None:
            os.environ.pop(config.BATCH_ENV)
        else:
            os.environ[config.BATCH_ENV] = batch
    return ExecutedStudy(out, nbformat.read(out, as_version=4))


def check_report_shape(run: ExecutedStudy) -> None:
    """What every study report is: no error; after the parameters the first output is the
    paragraph on what was run and where, then the claims table with the A/A control first;
    every verdict is one of the four; every 'not shown' gives its reason; then the sections,
    the method and the collapsed inventory, in that order."""
    assert not run.errors, run.errors
    first = next(i for i, o in enumerate(run.outputs) if "text/html" in o.get("data", {}))
    assert [o for o in run.outputs[:first] if o.get("output_type") == "stream"] == [], \
        "the page leads with the findings: no progress bar or warning above them"
    html = [str(o.get("data", {}).get("text/html", "")) for o in run.outputs if "text/html" in o.get("data", {})]
    assert html and "class='what'" in html[0] and "Claims checked here" in html[0], html[:1]
    claims = run.claims
    assert claims and claims[0]["claim"].startswith("A/A control"), claims[:1]
    assert {c["verdict"] for c in claims} <= VERDICTS, {c["verdict"] for c in claims}
    for c in claims:
        if c["verdict"] == "not shown":      # its reason, and the change it could have detected where a test ran
            assert c["reason"], c
            if c.get("mde_pct") is not None and "withheld" not in c["reason"]:
                assert "could detect" in c["reason"], c
    text = "\n".join(html)
    assert text.index("Claims checked here") < text.index("<h3>Method</h3>") < text.index("<h3>Inventory</h3>")
    assert "<details>" in text[text.index("<h3>Inventory</h3>"):]


def check_in_chromium(run: ExecutedStudy, tmp_path: Path) -> None:
    """The executed study exported as a report opens offline in headless Chromium: no console
    message, every figure drew, the claims table is there, the code is hidden."""
    from cassperf.plots.basic import COLLAPSED_KEY
    from cassperf.report.html import export_html
    from tests.notebooks.reportkit import chromium_or_skip, open_in_chromium

    chromium_or_skip()
    html = tmp_path / (run.path.stem + ".html")
    export_html(run.path, html)
    page = open_in_chromium(html, tmp_path / "profile")
    assert page.console == [], page.console
    plotted = [o for o in run.outputs if "application/vnd.plotly.v1+json" in o.get("data", {})]
    collapsed = sum(1 for o in plotted if COLLAPSED_KEY in (o.get("metadata") or {}))
    # a collapsed figure (a claim's flame graph) is drawn when its <details> is first opened
    assert len(plotted) > 0 and page.figures_drawn == len(plotted) - collapsed
    assert page.dom.count('<details class="cassperf-collapsed">') == collapsed
    assert "Claims checked here" in page.dom
    assert "study_report(" not in page.dom, "code cells are hidden in a published report"
