"""Published reports, from real kernels to a real browser: a pipeline run over report notebooks
(a figures-and-tables one that stores a run, one that fails half-way, and the project's log
explorer) writes one HTML per notebook that headless Chromium opens offline with no console
message, every figure drawn, the tables there, the code hidden, plotly.js inside exactly once;
a failed notebook is published, marked at its failing cell and listed as failed."""

from __future__ import annotations

import base64
import gzip
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from cassperf import config
from cassperf.workbook.preflight import run_reports
from cassperf.report.html import PLOTLY_BUNDLE_ID, export_html, plotly_js
from tests.notebooks.reportkit import open_in_chromium, write_notebook

pytestmark = pytest.mark.notebook

#: How nbconvert's lab template shows a cell's code (the class name alone is also in the CSS).
CODE_INPUT = 'class="jp-CodeMirrorEditor jp-Editor jp-InputArea-editor"'
REPO_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "cassandra-stress-5.0" / "mixed.stdout.txt"

FIGURES = [
    '''from cassperf.plots import use_report_renderer
from cassperf.plots.studies import bars, latency_bars
from cassperf.report.header import report_header, report_parameters, run_ids_note
use_report_renderer()
report_header(report_parameters(globals()), None)''',
    "## Stored run",
    f'''from cassperf import config, parsers
from cassperf.results.catalog import catalog, import_parsed
import_parsed(parsers.parse({str(REPO_FIXTURE)!r}), {{"rf": "3", "run": "a"}}, root=config.runs_dir())
runs = catalog(config.runs_dir())
runs[["run_id", "tool", "rf", "run"]]''',
    'run_ids_note(runs["run_id"])',
    "## Charts",
    '''import pandas as pd
frame = pd.DataFrame({"op": ["write", "read"], "rate_ops_s": [5000.0, 4000.0], "latency_p50_ms": [1.1, 0.9],
                      "latency_p95_ms": [2.5, 2.0], "latency_p99_ms": [7.25, 5.5]})
bars(frame, "op", "rate_ops_s", "Throughput by op", "ops/s")''',
    'latency_bars(frame, "op", "Latency by op", "service")',
    'frame',
    '''from cassperf.plots.basic import show_collapsed
show_collapsed(bars(frame, "op", "latency_p99_ms", "p99 by op", "ms"), "Open: p99 by op")''',
]

FAILS = [
    '''from cassperf.report.header import report_header, report_parameters
report_header(report_parameters(globals()), None)''',
    'import pandas as pd\npd.DataFrame({"node": ["node1", "node2"], "load_mb": [12.5, 13.0]})',
    'raise RuntimeError(f"disk full on {node}")',
    'print("never runs")',
]


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> dict:
    """One pipeline run over three notebooks; returns its paths and results."""
    root = tmp_path_factory.mktemp("publish")
    mp = pytest.MonkeyPatch()
    mp.setenv("CASSPERF_DATA", str(root / "data"))
    nbs = root / "notebooks"
    write_notebook(nbs, "01-figures.ipynb", 'rows: int = 10  # rows\nshow_code: bool = False  # keep the code',
                   FIGURES, title="Figures and tables")
    write_notebook(nbs, "02-fails.ipynb", 'node: str = "node3"  # the node whose disk fills', FAILS,
                   title="A study that fails")
    shutil.copy(config.notebooks_dir() / "00-log-explorer.ipynb", nbs / "00-log-explorer.ipynb")
    log: list[str] = []
    try:
        results = run_reports(None, "local", reports_dir=root / "reports", notebooks_dir=nbs, log=log.append)
    finally:
        mp.undo()
    return {"root": root, "reports": root / "reports", "results": {r.notebook: r for r in results}, "log": log}


def test_every_notebook_is_published_and_the_failed_one_is_listed_failed(published):
    results = published["results"]
    assert sorted(results) == ["00-log-explorer.ipynb", "01-figures.ipynb", "02-fails.ipynb"]
    assert results["01-figures.ipynb"].ok and results["00-log-explorer.ipynb"].ok
    failed = results["02-fails.ipynb"]
    assert not failed.ok and failed.error == "cell 4: RuntimeError: disk full on node3"
    assert results["01-figures.ipynb"].runs_stored == 1, "the run the notebook imported into data/runs"
    assert results["02-fails.ipynb"].runs_stored == 0
    for r in results.values():
        assert r.html is not None and r.html.exists() and r.html.stat().st_size == r.size_bytes


def test_the_index_shows_status_duration_parameter_set_and_run_count(published):
    page = (published["reports"] / "index.html").read_text()
    rows = re.findall(r'<tr class="(ok-row|failed-row)">(.*?)</tr>', page, re.S)
    text = [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", r[1])).strip() for r in rows]
    assert [r[0] for r in rows] == ["ok-row", "ok-row", "failed-row"], "name order; the failed one is marked"
    assert text[0].startswith("Log explorer 00-log-explorer.ipynb ok ")
    assert text[1].startswith("Figures and tables 01-figures.ipynb ok ")
    assert text[2].startswith("A study that fails 02-fails.ipynb failed cell 4: RuntimeError: disk full on node3 ")
    for line, r in zip(text, sorted(published["results"].values(), key=lambda r: r.notebook)):
        assert f" {r.duration_s:.0f} s local {r.runs_stored} none " in line, line
    for name in ("00-log-explorer.html", "01-figures.html", "02-fails.html"):
        assert f'<a href="{name}">' in page


def _html(published, name: str) -> str:
    return (published["reports"] / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name, figures", [("00-log-explorer.html", 3), ("01-figures.html", 3), ("02-fails.html", 0)])
def test_plotly_js_is_inside_exactly_once_and_nothing_is_fetched(published, name, figures):
    page = _html(published, name)
    bundles = re.findall(rf'<script id="{PLOTLY_BUNDLE_ID}" type="application/gzip\+base64">([^<]*)</script>', page)
    assert len(bundles) == (1 if figures else 0)
    if figures:
        assert gzip.decompress(base64.b64decode(bundles[0])).decode() == plotly_js(), "the installed plotly.js"
    assert "plotly.js v" not in page, "and no other copy (nor a renderer's inline one)"
    assert page.count('<div class="cassperf-figure">') == figures
    assert not re.search(r"<script[^>]+src=", page), "no script from anywhere else (works offline)"
    assert not re.search(r"<link[^>]+href=[\"']https?:", page)
    assert len(page) < 3_000_000 if figures else len(page) < 600_000, "plotly.js gzip'd: about 1.9 MB"


@pytest.mark.parametrize("name", ["00-log-explorer.html", "01-figures.html", "02-fails.html"])
def test_every_report_renders_in_a_browser_without_errors(published, name, tmp_path):
    page = open_in_chromium(published["reports"] / name, tmp_path / "profile")
    assert page.console == [], "no console message, no uncaught error"
    figures = page.dom.split("class=\"cassperf-figure\"")[1:]
    assert len(figures) == _html(published, name).count('<div class="cassperf-figure">')
    collapsed = page.dom.count('<details class="cassperf-collapsed">')
    assert collapsed == (1 if name == "01-figures.html" else 0)
    for i, fig in enumerate(figures[:len(figures) - collapsed]):
        assert 'class="main-svg"' in fig.split("class=\"cassperf-figure\"")[0], f"figure {i + 1} drew no SVG"
    for fig in figures[len(figures) - collapsed:]:   # drawn when first opened (the next test)
        assert 'class="main-svg"' not in fig
    assert 'class="cassperf-header"' in page.dom, "the report header"
    assert '<table border="1" class="dataframe' in page.dom, "the tables are there"


def test_a_collapsed_figure_is_drawn_at_its_width_when_opened(published):
    from playwright.sync_api import sync_playwright

    from tests.notebooks.reportkit import chromium_or_skip

    chromium = chromium_or_skip()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu",
                                                                     "--proxy-server=http://127.0.0.1:9"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto((published["reports"] / "01-figures.html").as_uri())
            page.wait_for_function("document.querySelectorAll('.cassperf-plot .main-svg').length >= 2")
            folded = page.locator("details.cassperf-collapsed")
            assert folded.count() == 1 and folded.locator(".main-svg").count() == 0
            assert folded.locator("summary").inner_text() == "Open: p99 by op"
            folded.locator("summary").click()
            folded.locator(".main-svg").first.wait_for()
            width = folded.locator(".main-svg").first.bounding_box()["width"]
            assert width > 800 and errors == [], (width, errors)
        finally:
            browser.close()


def test_code_is_hidden_tables_and_header_stay(published):
    page = _html(published, "01-figures.html")
    assert "use_report_renderer()" not in page and "import_parsed(" not in page
    assert CODE_INPUT not in page and "In&nbsp;[" not in page
    assert "<h4>Parameters</h4>" in page and '<th>rows</th><td class="v">10</td>' in page
    assert "parameter set <b>local</b>" in page
    run_id = re.search(r"<td>(\d{8}T\d{6}\.\d+Z-cassandra-stress-[0-9a-f]+)</td>", page).group(1)
    assert f"Run behind this table: <code>{run_id}</code>" in page
    assert '<td class="num">7.25</td>' in page and "<td>write</td>" in page, "numbers right, text left"
    assert '<th class="num">latency_p99_ms</th>' in page and "<th>op</th>" in page


def test_show_code_keeps_the_code(published, tmp_path):
    exported = export_html(published["reports"] / "executed" / "01-figures.ipynb", tmp_path / "with-code.html",
                           show_code=True)
    page = (tmp_path / "with-code.html").read_text()
    assert exported.figures == 3 and exported.failure is None
    assert "use_report_renderer" in page and CODE_INPUT in page


def test_a_failed_notebook_is_marked_at_the_failing_cell_with_its_code(published):
    page = _html(published, "02-fails.html")
    assert "This report FAILED: cell [4] raised RuntimeError." in page
    assert "<pre>disk full on node3</pre>" in page
    banner_at = page.index("cassperf-banner")
    assert banner_at < page.index("cassperf-header"), "the banner comes first"
    cells = re.split(r'(?=<div[^>]*class="jp-Cell )', page)
    failing = [c for c in cells if "celltag_cassperf-failed" in c[:600]]
    assert len(failing) == 1
    assert "disk full on" in failing[0] and CODE_INPUT in failing[0], "its code is shown"
    anchor = page.index('id="papermill-error-cell"')
    assert anchor < page.index("celltag_cassperf-failed", page.index("<main>")), "the link target sits before it"
    assert "never runs" not in page, "cells after the failure did not run and show nothing"
    assert page.count(CODE_INPUT) == 1, "every other cell's code stays hidden"
    assert "<title>A study that fails (FAILED)</title>" in page


def test_papermill_reads_a_parameter_file_as_it_is(published, tmp_path):
    """`papermill NB out -f FILE.yaml` (no cassperf involved) takes the same files."""
    params = tmp_path / "p.yaml"
    params.write_text("# a comment\nnode: node7\n")
    out = tmp_path / "out.ipynb"
    src = published["root"] / "notebooks" / "02-fails.ipynb"
    proc = subprocess.run([str(Path(sys.executable).parent / "papermill"), str(src), str(out), "-f", str(params)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, "the notebook still fails, now on node7"
    nb = nbformat.read(out, as_version=4)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert [(e.ename, e.evalue) for e in errors] == [("RuntimeError", "disk full on node7")]


def test_a_notebook_drawn_with_plotlys_notebook_renderer_still_ships_plotly_js_once(tmp_path):
    """plotly's 'notebook' renderer puts plotly.js into the notebook's first figure output and
    has every figure draw itself at load: the exporter drops that copy and ships its own, plain."""
    from cassperf.report.execute import execute

    src = write_notebook(tmp_path, "01-legacy.ipynb", "rows: int = 1  # unused", [
        'import plotly.graph_objects as go\nimport plotly.io as pio\npio.renderers.default = "notebook"\n'
        'go.Figure(go.Bar(x=["write", "read"], y=[5000, 4000]))',
        'go.Figure(go.Scatter(x=[1, 2, 3], y=[3, 1, 2]))'])
    out = tmp_path / "executed.ipynb"
    assert execute(src, out).ok
    executed = nbformat.read(out, as_version=4)
    assert sum("window.PlotlyConfig" in str(o.get("data", {})) for c in executed.cells if c.cell_type == "code"
               for o in c.outputs) == 1, "the renderer embedded plotly.js once, in an output of its own"
    exported = export_html(out, tmp_path / "legacy.html")
    page = (tmp_path / "legacy.html").read_text()
    assert exported.figures == 2
    assert len(re.findall(r"plotly\.js v\d", page)) == 1 and "window.PlotlyConfig" not in page
    rendered = open_in_chromium(tmp_path / "legacy.html", tmp_path / "profile")
    assert rendered.console == []
    assert rendered.dom.count('class="main-svg"') >= 2 * 2, "both figures drew"
