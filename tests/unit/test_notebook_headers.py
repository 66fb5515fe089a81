"""Every report notebook shows its header (parameters, cluster, run ids): the report_header(...)
call is either its cell's last expression or passed to display(). A call anywhere else makes an
HTML object nobody shows: the 02 report went out without its header that way."""

from __future__ import annotations

import ast
import json

import pytest

from cassperf import config

NOTEBOOKS = sorted(config.notebooks_dir().glob("[0-9][0-9]-*.ipynb"))


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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_report_header_is_displayed(path):
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    sources = ["".join(c["source"]) for c in cells]
    with_header = [s for s in sources if "report_header(" in s and "def report_header" not in s]
    assert with_header, f"{path.name}: no report_header(...) call"
    for src in with_header:
        tree = ast.parse("\n".join(l for l in src.splitlines() if not l.lstrip().startswith(("%", "!"))))
        if any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == "report_header" for n in ast.walk(tree)):
            assert _shown(tree), f"{path.name}: report_header(...) is neither the cell's last expression nor displayed"
