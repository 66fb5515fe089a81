"""Helpers for the report tests: small report notebooks written to a folder, and a published
report opened in headless Chromium (no network) with its DOM and console messages."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest


def write_notebook(folder: Path, name: str, parameters: str, cells: list[str], title: str | None = None) -> Path:
    """notebooks/<name>: a '# title' markdown cell, a cell tagged `parameters`, then code cells
    (a cell starting with '## ' is markdown)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell(parameters)
    params.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title or Path(name).stem}"), params]
    nb.cells += [nbformat.v4.new_markdown_cell(c) if c.startswith("## ") else nbformat.v4.new_code_cell(c) for c in cells]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    nbformat.write(nb, path)
    return path


def chromium_or_skip() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("chromium is not installed: `make browser` installs it (Debian package, as root)")
    return path


@dataclass(frozen=True)
class Rendered:
    dom: str                 # the DOM after scripts ran (--dump-dom)
    console: list[str]       # every console message and uncaught error the page produced

    @property
    def figures_drawn(self) -> int:
        """plotly figures that drew their SVG (each draws one div.plot-container with main-svg layers)."""
        return len(re.findall(r'class="plot-container plotly"', self.dom))


def open_in_chromium(html: Path, profile: Path, budget_ms: int = 20000) -> Rendered:
    """Load `html` from disk in headless Chromium with every network request sent to a dead
    proxy, run its scripts for `budget_ms` of virtual time, return the DOM and the console."""
    chromium = chromium_or_skip()
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--proxy-server=http://127.0.0.1:9", f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}",
           "--enable-logging=stderr", "--v=0", "--dump-dom", html.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [ln for ln in proc.stderr.splitlines() if ":CONSOLE" in ln]
    return Rendered(proc.stdout, console)
