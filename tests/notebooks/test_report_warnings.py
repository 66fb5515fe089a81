"""A clean report run prints no warning. Every study report publishes its claims for tools as an
``application/json``-only output (``cassperf.report.header.json_output``), which nbconvert's HTML
exporter cannot show: it warned "Your element with mimetype(s) dict_keys(['application/json']) is
not able to be represented" on each. A real notebook with such an output, executed by a real
kernel, now exports with no warning at all; the page leaves the output out and the executed
notebook keeps it, so the pipeline's claim counts still read it."""

from __future__ import annotations

import warnings
from pathlib import Path

import nbformat
import pytest

from cassperf.report.execute import execute
from cassperf.report.html import export_html, prepare
from cassperf.report.pipeline import claim_counts
from tests.notebooks.reportkit import write_notebook

pytestmark = pytest.mark.notebook

CELLS = [
    '''from IPython.display import display
from cassperf.report.header import json_output
display(json_output({"claims": [{"claim": "writes scale with RF", "verdict": "held", "reason": ""},
                                {"claim": "A/A control", "verdict": "not shown", "reason": ""}],
                     "mde_pct": float("nan")}), raw=True)''',
    'print(f"{rows} rows")',
    "## What a reader sees",
    'import pandas as pd\npd.DataFrame({"rf": [1, 3], "rate_ops_s": [5000.0, 4000.0]})',
]


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("json-output")
    notebook = write_notebook(root / "notebooks", "01-json.ipynb", "rows: int = 3  # rows", CELLS,
                              title="Claims for tools")
    ran = execute(notebook, root / "executed" / "01-json.ipynb")
    assert ran.ok, ran.error
    return ran.output_path


def test_the_export_of_a_notebook_with_a_json_output_warns_nothing(executed: Path, tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exported = export_html(executed, tmp_path / "01-json.html")
    assert [f"{w.category.__name__}: {w.message}" for w in caught] == []
    page = (tmp_path / "01-json.html").read_text(encoding="utf-8")
    assert exported.title == "Claims for tools" and exported.failure is None
    assert "3 rows" in page and "5000.0" in page
    assert "writes scale with RF" not in page            # the JSON is for tools, not on the page


def test_the_executed_notebook_keeps_the_json_output_the_pipeline_reads(executed: Path, tmp_path: Path) -> None:
    export_html(executed, tmp_path / "01-json.html")      # reads the file, never writes it back
    nb = nbformat.read(executed, as_version=4)
    data = [o["data"]["application/json"] for c in nb.cells for o in c.get("outputs", [])
            if "application/json" in o.get("data", {})]
    assert data == [{"claims": [{"claim": "writes scale with RF", "verdict": "held", "reason": ""},
                                {"claim": "A/A control", "verdict": "not shown", "reason": ""}], "mde_pct": None}]
    assert claim_counts(executed) == {"held": 1}


def test_prepare_keeps_every_output_when_told_no_mimetypes(executed: Path) -> None:
    nb = nbformat.read(executed, as_version=4)
    prepare(nb, show_code=False)
    assert any("application/json" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))
