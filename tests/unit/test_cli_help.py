"""The command line answers --help, and a mistyped command, without loading what its commands run
(pandas, scipy, the cluster, the report pipeline): `cassperf --help` took 3.4 s here when every
subcommand's module imported them to register its options, and every CLI call in the tests paid it."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pandas", "scipy", "numpy", "pyarrow", "cassperf.cluster.local", "cassperf.workbook", "cassperf.parsers",
         "cassperf.results")


def loaded_after(*argv: str) -> tuple[int, set[str]]:
    code = ("import sys\nfrom cassperf.cli import main\n"
            f"try:\n    main({list(argv)!r})\nexcept SystemExit as e:\n    code = e.code\n"
            "print(code)\nprint(' '.join(sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    code_line, modules = out.stdout.splitlines()[-2:]
    return int(code_line), {m for m in modules.split() if any(m == h or m.startswith(h + ".") for h in HEAVY)}


def test_help_of_the_cli_and_of_each_command_loads_none_of_what_the_commands_run() -> None:
    for argv in (["--help"], ["cluster", "start", "--help"], ["report", "--help"], ["import", "--help"],
                 ["run", "--help"]):
        assert loaded_after(*argv) == (0, set()), argv


def test_a_mistyped_command_is_refused_before_anything_loads() -> None:
    assert loaded_after("reprot") == (2, set())
