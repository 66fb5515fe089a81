"""Docs that stay true: the generated reference is what the code makes now, the environment
variables the code reads are the ones documented, and every command the README and the docs give
is one the command line and the Makefile accept."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from cassperf import config
from cassperf.cli import build_parser
from cassperf.cli.reference import PAGES, stale

ROOT = config.project_root()
LIB = ROOT / "lib" / "cassperf"


def test_the_generated_reference_is_current() -> None:
    assert stale(ROOT / "docs" / "reference") == [], "run `make docs` (cassperf reference) and commit the pages"
    assert set(PAGES) == {"cli.md", "notebook-parameters.md", "environment.md"}


def test_every_environment_variable_the_code_reads_is_documented_and_no_other() -> None:
    read = set()
    for path in LIB.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        read |= set(re.findall(r"CASSPERF_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_*{<])", text))
        if "CASSPERF_JAVA{" in text:                            # f"CASSPERF_JAVA{major}_HOME"
            read.add("CASSPERF_JAVA<N>_HOME")
    read = {re.sub(r"^CASSPERF_JAVA\d+_HOME$", "CASSPERF_JAVA<N>_HOME", n) for n in read}
    documented = set(config.ENVIRONMENT) - {"CASSPERF_FUZZ_EXAMPLES"}       # read by the tests, not the package
    assert sorted(read - set(config.ENVIRONMENT)) == []
    assert sorted(documented - read) == []


def _commands(text: str) -> list[tuple[int, str]]:
    """(line, command) of every `cassperf ...` or `make ...` command inside the fenced code blocks
    (a line ending in a backslash goes on in the next)."""
    out, inside, held = [], False, ""
    for no, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            inside, held = not inside, ""
            continue
        line = held + line
        if inside and line.rstrip().endswith("\\"):
            held = line.rstrip()[:-1] + " "
            continue
        held = ""
        cmd = re.split(r" #| \| | >>? | 2>", line, maxsplit=1)[0].strip()       # no comment, pipe or redirection
        if inside and re.match(r"^(\$ )?(cassperf|make)(\s|$)", cmd):
            out.append((no, cmd.removeprefix("$ ")))
    return out


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_in_the_docs_is_one_the_cli_and_the_makefile_accept(doc: Path) -> None:
    targets = set(re.findall(r"^([a-zA-Z0-9_-]+):", (ROOT / "Makefile").read_text(), re.M))
    parser = build_parser()
    bad = []
    for no, cmd in _commands(doc.read_text(encoding="utf-8")):
        words = shlex.split(cmd)
        if words[0] == "make":
            unknown = [w for w in words[1:] if "=" not in w and not w.startswith("-") and w not in targets]
            if unknown:
                bad.append(f"{doc.name}:{no}: make target {unknown[0]!r} is not in the Makefile")
            continue
        try:
            parser.parse_args(words[1:])
        except SystemExit:
            bad.append(f"{doc.name}:{no}: `{cmd}` is not a command cassperf accepts")
    assert bad == []
