"""Every report notebook shows its header. A study notebook (metadata cassperf.study) is uniform
(issue 18): its parameters cell, one cell that makes the report (study_report, which validates,
runs or analyses, and shows what was run with the claims first), then one library call per
report section; no loop, no pandas, at most 40 code lines beside the parameters. Any other
report notebook shows report_header(...) as its cell's last expression or through display(): a
call anywhere else makes an HTML object nobody shows (the 02 report once went out without it)."""

from __future__ import annotations

import ast
import json
import re

import pytest

from cassperf import config

NOTEBOOKS = sorted(config.notebooks_dir().glob("[0-9][0-9]-*.ipynb"))
STUDIES = [p for p in NOTEBOOKS if json.loads(p.read_text())["metadata"].get("cassperf", {}).get("study")]
OTHERS = [p for p in NOTEBOOKS if p not in STUDIES]
SECTION_CALL = re.compile(r'report\.(findings|section|method|inventory)\(("[a-z-]+")?\)')


def _shown(tree: ast.Module) -> bool:
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "report_header"]
    if not calls:
        return False
    last = tree.body[-1]
    for call in calls:
        if isinstance(last, ast.Expr) and last.value is call:
            continue
        parents = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "display"
                   and any(a is call for a in n.args)]
        if not parents:
            return False
    return True


@pytest.mark.parametrize("path", STUDIES, ids=[p.stem for p in STUDIES])
def test_study_notebooks_are_uniform(path):
    cells = json.loads(path.read_text())["cells"]
    code = [(c, "".join(c["source"])) for c in cells if c["cell_type"] == "code"]
    assert "parameters" in code[0][0]["metadata"].get("tags", []), f"{path.name}: the first code cell is the parameters"
    body = [src for _, src in code[1:]]
    assert "study_report(" in body[0] and body[0].rstrip().endswith("report.findings()"), path.name
    for src in body[1:]:
        assert SECTION_CALL.fullmatch(src.strip()), f"{path.name}: a cell that is not one report call: {src!r}"
    lines = [ln for src in body for ln in src.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert len(lines) <= 40, f"{path.name}: {len(lines)} code lines beside the parameters"
    for src in body:
        tree = ast.parse(src)
        assert not any(isinstance(n, (ast.For, ast.While, ast.ListComp, ast.DictComp)) for n in ast.walk(tree)), src
        assert "pandas" not in src and "pd." not in src, src


@pytest.mark.parametrize("path", OTHERS, ids=[p.stem for p in OTHERS])
def test_the_report_header_is_displayed(path):
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    sources = ["".join(c["source"]) for c in cells]
    with_header = [s for s in sources if "report_header(" in s and "def report_header" not in s]
    assert with_header, f"{path.name}: no report_header(...) call"
    for src in with_header:
        tree = ast.parse("\n".join(l for l in src.splitlines() if not l.lstrip().startswith(("%", "!"))))
        if any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == "report_header" for n in ast.walk(tree)):
            assert _shown(tree), f"{path.name}: report_header(...) is neither the cell's last expression nor displayed"
