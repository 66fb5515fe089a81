"""Executed notebook -> one self-contained HTML report that works offline.

What the exporter does beyond nbconvert's lab template:
- Code is hidden unless `show_code`: each code cell's source is removed (nbconvert's per-cell
  `transient.remove_source`) and the In/Out prompts with it; cells that printed nothing vanish.
  The cell that failed keeps its code, so a failed report shows what broke.
- plotly.js is shipped once, in the page head, from the plotly package on this machine (no CDN),
  gzip-compressed and base64-encoded (1.9 MB instead of 4.8) and unpacked by the browser.
  Each figure is its plotly JSON (the `application/vnd.plotly.v1+json` output that
  `cassperf.plots.use_report_renderer()` produces) drawn by one script; an output that embedded
  plotly.js itself (plotly's "notebook" renderer) is dropped, so the library never ships twice.
- No script from a network: require.js, MathJax and mermaid (the lab template loads them from a
  CDN) are left out.
- A failed notebook gets a red banner at the top naming the cell and the error, linked to the
  failing cell, which is outlined in red.
- An output with no representation the page can show (none of the exporter's display priority,
  e.g. the `application/json` figures a study report publishes for tools to read back,
  `cassperf.report.header.json_output`) is left out of the page; the executed notebook keeps it.
"""

from __future__ import annotations

import base64
import functools
import gzip
import html
import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
from jinja2 import DictLoader
from nbconvert import HTMLExporter
from nbconvert.utils.base import NbConvertBase

from cassperf.plots.basic import COLLAPSED_KEY, PLOTLY_MIME
FAILED_TAG = "cassperf-failed"
#: Marks the single inline copy of plotly.js; a test counts it.
PLOTLY_BUNDLE_ID = "cassperf-plotlyjs"

_TEMPLATE = r"""{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}
{%- if resources.cassperf.plotly_js -%}
<script id="__PLOTLY_ID__" type="{{ resources.cassperf.plotly_type }}">{{ resources.cassperf.plotly_js }}</script>
{%- endif -%}
{%- endblock html_head_js -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block html_head_css -%}<style type="text/css">{{ resources.cassperf.css }}</style>{%- endblock html_head_css -%}
{%- block body_header -%}
{{ super() }}
{%- if resources.cassperf.banner %}{{ resources.cassperf.banner }}{% endif -%}
{%- endblock body_header -%}
{% block footer_js %}
{%- if resources.cassperf.plotly_js -%}
<script type="text/javascript">{{ resources.cassperf.draw_js }}</script>
{%- endif -%}
{% endblock footer_js %}
""".replace("__PLOTLY_ID__", PLOTLY_BUNDLE_ID)

_CSS = """
body.jp-Notebook{max-width:68rem;margin:0 auto;padding:18px 28px 40px;
  --jp-content-font-family:system-ui,-apple-system,"Segoe UI",sans-serif;--jp-ui-font-family:system-ui,sans-serif}
.jp-Notebook .jp-Cell{padding:2px 0}
.jp-OutputArea-prompt,.jp-InputPrompt{display:none}
.jp-mod-hiddenInput .jp-Cell-inputWrapper{display:none}
.jp-RenderedHTMLCommon{font-size:14px;line-height:1.5}
.jp-RenderedHTMLCommon h1{font-size:1.9em;margin-top:.4em}
.jp-RenderedHTMLCommon h2{font-size:1.35em;margin-top:1.3em;border-bottom:1px solid #e4e7eb;padding-bottom:3px}
/* .jp-Notebook: as specific as JupyterLab's :not(.jp-RenderedMarkdown) rules, and later */
.jp-Notebook .jp-RenderedHTMLCommon table{border-collapse:collapse;font-size:12.5px;margin:4px 0 6px;border:none}
.jp-Notebook .jp-RenderedHTMLCommon thead{border-bottom:2px solid #9aa5b1}
.jp-Notebook .jp-RenderedHTMLCommon th,.jp-Notebook .jp-RenderedHTMLCommon td{padding:3px 10px;border:none;border-bottom:1px solid #e4e7eb;
  text-align:left;font-variant-numeric:tabular-nums;max-width:28rem}
.jp-Notebook .jp-RenderedHTMLCommon th.num,.jp-Notebook .jp-RenderedHTMLCommon td.num{text-align:right}
.jp-Notebook .jp-RenderedHTMLCommon tbody tr:nth-child(odd){background:#f8fafc}
.jp-Notebook .jp-RenderedHTMLCommon tbody tr:hover{background:#eef2f7}
.jp-Notebook .jp-RenderedHTMLCommon tbody th{font-weight:500;color:#52606d}
.jp-OutputArea-output pre{font-size:12px}
.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]{background:#fff8e1;border-left:3px solid #f0b400;
  padding:2px 6px}
.cassperf-figure{width:100%;min-height:360px}
details.cassperf-collapsed{margin:4px 0 10px;font:13px system-ui,sans-serif}
details.cassperf-collapsed>summary{cursor:pointer;color:#3e4c59;font-weight:600}
.cassperf-banner{border:2px solid #c62828;background:#fdecea;color:#7f1d1d;border-radius:6px;padding:10px 14px;
  margin:0 0 14px;font:600 15px system-ui,sans-serif}
.cassperf-banner a{color:#b71c1c}
.cassperf-banner pre{font-weight:400;white-space:pre-wrap;margin:6px 0 0;font-size:12.5px}
.celltag_cassperf-failed{outline:2px solid #c62828;outline-offset:3px;border-radius:2px;margin:8px 0}
.cassperf-stopped{color:#c62828;font:600 15px system-ui,sans-serif;margin-top:10px}
"""

# One script draws every figure from its JSON once plotly.js is there: inline (it ran in the
# head) or gzip+base64 (unpacked here with the browser's DecompressionStream, then run).
_DRAW_JS = """(function(){
  var bundle = document.getElementById('__PLOTLY_ID__');
  function plot(div) {
    var spec = JSON.parse(div.querySelector('script[type="application/json"]').textContent);
    var cfg = Object.assign({responsive: true, displaylogo: false}, spec.config || {});
    Plotly.newPlot(div.querySelector('.cassperf-plot'), spec.data || [], spec.layout || {}, cfg);
  }
  function later(div, details) {     // a figure in a closed <details> is drawn when first opened, at its width
    details.addEventListener('toggle', function once() {
      if (details.open) { details.removeEventListener('toggle', once); plot(div); }
    });
  }
  function draw() {
    var figs = document.querySelectorAll('div.cassperf-figure');
    for (var i = 0; i < figs.length; i++) {
      var details = figs[i].closest('details');
      if (details && !details.open) later(figs[i], details); else plot(figs[i]);
    }
  }
  if (window.Plotly) { draw(); return; }
  if (!window.DecompressionStream) {
    document.querySelectorAll('.cassperf-plot').forEach(function (el) {
      el.textContent = 'This chart needs a browser with DecompressionStream (Chrome 80, Firefox 113, Safari 16.4 or later).';
    });
    return;
  }
  var raw = atob(bundle.textContent.trim()), bytes = new Uint8Array(raw.length);
  for (var j = 0; j < raw.length; j++) bytes[j] = raw.charCodeAt(j);
  new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text().then(function (code) {
    var s = document.createElement('script');
    s.textContent = code;
    document.head.appendChild(s);
    draw();
  });
})();""".replace("__PLOTLY_ID__", PLOTLY_BUNDLE_ID)


@dataclass(frozen=True)
class Failure:
    """Where an executed notebook stopped: the cell's execution count and the error."""

    cell: int | None
    ename: str
    evalue: str


def notebook_title(nb: nbformat.NotebookNode, fallback: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return fallback


def find_failure(nb: nbformat.NotebookNode) -> Failure | None:
    """The first cell with an error output (or that papermill marked as raising), else None."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error" and not (out.get("ename") == "SystemExit" and
                                                         str(out.get("evalue")) in ("", "0")):
                return Failure(cell.get("execution_count"), str(out.get("ename")), str(out.get("evalue")))
        if cell.get("metadata", {}).get("papermill", {}).get("exception") is True:
            return Failure(cell.get("execution_count"), "CellExecutionError", "")
    return None


def plotly_js() -> str:
    """The plotly.js bundle of the installed plotly package (offline, same version as the figures)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


@functools.lru_cache(maxsize=1)
def plotly_js_gzip_base64() -> str:
    """plotly.js gzip-compressed and base64-encoded: 4.8 MB of script become about 1.9 MB of text."""
    return base64.b64encode(gzip.compress(plotly_js().encode("utf-8"), compresslevel=9, mtime=0)).decode("ascii")


def _json_for_script(obj: Any) -> str:
    # inside <script> a literal "</" would end the element; JSON allows "\/" and "\u003c"
    return json.dumps(obj, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e")


def _is_plotly_bundle(out: nbformat.NotebookNode) -> bool:
    """An output that carries plotly.js itself (plotly's 'notebook' renderer's first output)."""
    text = out.get("data", {}).get("text/html", "")
    text = "".join(text) if isinstance(text, list) else text
    return PLOTLY_MIME not in out.get("data", {}) and ("window.PlotlyConfig" in text or "define('plotly'" in text)


_NUMBER = re.compile(r"^\s*(?:[-+]?(?:\d[\d,_]*\.?\d*(?:[eE][-+]?\d+)?|\.\d+)%?|NaN|nan|<NA>|&lt;NA&gt;|NaT|None|inf|-inf)\s*$")
_TABLE = re.compile(r'(<table[^>]*class="dataframe[^"]*"[^>]*>)(.*?)(</table>)', re.S)
_ROW = re.compile(r"<tr[^>]*>.*?</tr>", re.S)
_CELL = re.compile(r"<(td|th)([^>]*)>(.*?)</\1>", re.S)


def align_numbers(fragment: str) -> str:
    """pandas tables with text left and numbers right: a body column whose every cell is a
    number (or missing) gets class "num" on its cells and on its header cell."""
    def table(m: re.Match) -> str:
        head, body = (m.group(2).split("</thead>", 1) + [""])[:2] if "</thead>" in m.group(2) else ("", m.group(2))
        rows = [[c for c in _CELL.finditer(r)] for r in _ROW.findall(body)]
        if not rows:
            return m.group(0)
        width = max(len(r) for r in rows)
        numeric = [all(j < len(r) and r[j].group(1) == "td" and _NUMBER.match(r[j].group(3)) for r in rows)
                   for j in range(width)]

        def mark(row: str) -> str:
            cells = list(_CELL.finditer(row))
            if len(cells) != width:
                return row
            out, last = [], 0
            for j, c in enumerate(cells):
                out.append(row[last:c.start()])
                out.append(f'<{c.group(1)}{c.group(2)} class="num">{c.group(3)}</{c.group(1)}>' if numeric[j]
                           and "class=" not in c.group(2) else c.group(0))
                last = c.end()
            return "".join(out) + row[last:]

        head = _ROW.sub(lambda r: mark(r.group(0)), head)
        body = _ROW.sub(lambda r: mark(r.group(0)), body)
        return m.group(1) + (head + "</thead>" if head else "") + body + m.group(3)

    return _TABLE.sub(table, fragment)


def _calls_plotly(out: nbformat.NotebookNode) -> bool:
    """An HTML output that draws a figure itself and expects a global Plotly (plotly's
    'notebook' renderer without the mimetype)."""
    text = out.get("data", {}).get("text/html", "")
    return "Plotly.newPlot" in ("".join(text) if isinstance(text, list) else text)


def _shown(out: nbformat.NotebookNode, mimetypes: Collection[str] | None) -> bool:
    """Whether the page can show `out`: a stream or error, or data of one of `mimetypes` (None: any)."""
    if mimetypes is None or out.get("output_type") not in ("display_data", "execute_result"):
        return True
    return any(mime in mimetypes for mime in out.get("data", {}))


def prepare(nb: nbformat.NotebookNode, show_code: bool,
            mimetypes: Collection[str] | None = None) -> tuple[int, Failure | None, int]:
    """Rewrite `nb` in place for publishing; return (figures, failure, inline figures).
    Figures count the outputs that need plotly.js; inline ones draw themselves at load.
    `mimetypes`: what the page can show (the exporter's display priority); an output with none
    of them is left out (None: every output kept)."""
    failure = find_failure(nb)
    figures = inline = 0
    failed_index = None
    if failure is not None:
        for i, cell in enumerate(nb.cells):
            if cell.cell_type == "code" and (any(o.get("output_type") == "error" for o in cell.get("outputs", []))
                                             or cell.get("metadata", {}).get("papermill", {}).get("exception")):
                failed_index = i
                break
    kept = []
    for i, cell in enumerate(nb.cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if "papermill-error-cell-tag" in tags and "An Exception was encountered" in cell.source:
            continue  # replaced by the banner, which says more
        if "papermill-error-cell-tag" in tags and 'id="papermill-error-cell"' in cell.source and failure:
            cell["source"] = (f'<div id="papermill-error-cell" class="cassperf-stopped">The notebook stopped here: '
                              f'the cell below raised {html.escape(failure.ename)}.</div>')
        if cell.cell_type == "code":
            outputs = []
            for out in cell.get("outputs", []):
                if _is_plotly_bundle(out):
                    continue
                data = out.get("data", {})
                if PLOTLY_MIME not in data and not _shown(out, mimetypes):
                    continue
                if PLOTLY_MIME in data:
                    figures += 1
                    drawn = ("<div class='cassperf-figure'><div class='cassperf-plot'></div><script "
                             f"type='application/json'>{_json_for_script(data[PLOTLY_MIME])}</script></div>")
                    collapsed = (out.get("metadata") or {}).get(COLLAPSED_KEY)
                    if collapsed:
                        drawn = (f"<details class='cassperf-collapsed'><summary>{html.escape(str(collapsed))}"
                                 f"</summary>{drawn}</details>")
                    out["data"] = {"text/html": drawn}
                elif _calls_plotly(out):
                    figures += 1
                    inline += 1
                elif "text/html" in data and 'class="dataframe' in "".join(data["text/html"]):
                    data["text/html"] = align_numbers("".join(data["text/html"]))
                outputs.append(out)
            cell["outputs"] = outputs
            if i == failed_index:
                cell.setdefault("metadata", {})["tags"] = [*tags, FAILED_TAG]
            elif not show_code:
                if not outputs:
                    continue
                cell.setdefault("metadata", {}).setdefault("transient", {})["remove_source"] = True
                cell["metadata"]["tags"] = [*tags, "cassperf-hidden-input"]
        kept.append(cell)
    nb.cells = kept
    return figures, failure, inline


def _banner(failure: Failure) -> str:
    where = f"cell [{failure.cell}]" if failure.cell is not None else "a cell"
    return (f"<div class='cassperf-banner' role='alert'>This report FAILED: {where} raised "
            f"{html.escape(failure.ename)}. The results below stop there. "
            f"<a href='#papermill-error-cell'>Go to the failing cell</a>"
            f"<pre>{html.escape(failure.evalue[:2000])}</pre></div>")


@dataclass(frozen=True)
class Exported:
    title: str
    figures: int
    failure: Failure | None
    size_bytes: int


def export_html(executed: Path, html_path: Path, show_code: bool = False, compress_plotly: bool = True) -> Exported:
    """Write the report `html_path` from the executed notebook; see the module docstring.
    `compress_plotly` ships plotly.js gzip+base64 (about 1.9 MB instead of 4.8), unpacked by the
    browser; a notebook with figures that draw themselves at load (plotly's 'notebook'
    renderer) gets it plain, since those need Plotly while the page loads."""
    nb = nbformat.read(executed, as_version=4)
    title = notebook_title(nb, executed.stem)
    exporter = HTMLExporter(template_name="lab", extra_loaders=[DictLoader({"cassperf.html.j2": _TEMPLATE})],
                            template_file="cassperf.html.j2", exclude_input_prompt=not show_code,
                            exclude_output_prompt=True)
    figures, failure, inline_figures = prepare(nb, show_code, NbConvertBase(parent=exporter).display_data_priority)
    packed = compress_plotly and not inline_figures
    nb.metadata["title"] = f"{title} (FAILED)" if failure else title
    bundle = (plotly_js_gzip_base64() if packed else plotly_js()) if figures else ""
    resources = {"cassperf": {"plotly_js": bundle, "plotly_type": "application/gzip+base64" if packed else "text/javascript",
                              "draw_js": _DRAW_JS, "css": _CSS,
                              "banner": _banner(failure) if failure else ""}}
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    html_path.write_text(body, encoding="utf-8")
    return Exported(title, figures, failure, html_path.stat().st_size)
