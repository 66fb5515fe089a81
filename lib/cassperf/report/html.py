"""Executed notebook -> one self-contained HTML file (nbconvert, lab template)."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbconvert import HTMLExporter


def notebook_title(nb: nbformat.NotebookNode, fallback: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return fallback


def export_html(executed: Path, html_path: Path) -> str:
    """Write `html_path`; return the notebook's title (its first '# ' heading)."""
    nb = nbformat.read(executed, as_version=4)
    exporter = HTMLExporter(template_name="lab")
    body, _ = exporter.from_notebook_node(nb)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    html_path.write_text(body, encoding="utf-8")
    return notebook_title(nb, executed.stem)
