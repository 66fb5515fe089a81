"""The dependency direction: analysis imports nothing from workload, cluster, sampler or parsers."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import cassperf.analysis

FORBIDDEN = ("cassperf.workload", "cassperf.cluster", "cassperf.sampler", "cassperf.parsers")
PACKAGE = Path(cassperf.analysis.__file__).parent


def imported_names(path: Path) -> list[str]:
    """Every module an import statement of the file names (anywhere in it, lazy ones included)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
            names += [f"{node.module}.{a.name}" for a in node.names]
    return names


def test_no_analysis_module_imports_the_layers_below_it() -> None:
    files = sorted(PACKAGE.glob("*.py"))
    assert {f.name for f in files} >= {"windows.py", "steady.py", "compare.py", "tables.py", "arms.py", "verdicts.py", "format.py"}
    bad = [(f.name, n) for f in files for n in imported_names(f)
           if any(n == m or n.startswith(m + ".") for m in FORBIDDEN)]
    assert bad == []


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    f = tmp_path / "x.py"
    f.write_text("def g():\n    from cassperf import parsers\n    import cassperf.cluster.local\n")
    assert imported_names(f) == ["cassperf", "cassperf.parsers", "cassperf.cluster.local"]


def test_using_analysis_loads_none_of_them() -> None:
    code = (
        "import sys\n"
        "from tests.unit.analysis_runs import make_run, lognormal\n"
        "from cassperf.analysis import *\n"
        "run, _ = make_run({'read': lognormal(1.0, per_interval=20), 'write': lognormal(1.0, per_interval=20)}, 12,"
        " events=[(6.0, 'gc:start', ''), (9.0, 'gc:end', '')])\n"
        "gc = phase_window(run, 'gc')\n"
        "compare_windows(run, window_before(gc), run, gc, 'read', 'latency_p99_ms')\n"
        "runs_frame([run])\n"
        "print(sorted(m for m in sys.modules if m.startswith(%r)))\n" % (FORBIDDEN,)
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).parents[2], check=True)
    assert out.stdout.strip() == "[]"
