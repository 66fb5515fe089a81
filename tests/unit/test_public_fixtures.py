"""The public fixtures the repository carries (tests/fixtures/public): every data file has its
source note, the folder's README names each file and the repository it came from, and a test
that asks for a file that is not there fails instead of skipping."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cassperf import config
from tests.conftest import PUBLIC_FIXTURES, public_fixture, public_fixture_files

README = PUBLIC_FIXTURES / "README.md"
ROW = re.compile(r"^\| `(?P<file>[^`]+)` \| \[(?P<repo>[^\]]+)\]\(https://github\.com/(?P=repo)\) \| `[^`]+` \|$")


def _sidecar_repository(path: Path) -> str:
    first = path.with_name(path.name + ".source.txt").read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("repository: https://github.com/"), f"{path.name}: sidecar's first line is {first!r}"
    return first.removeprefix("repository: https://github.com/").split()[0]


def test_the_folder_holds_64_data_files_in_seven_folders_each_with_its_source_note() -> None:
    files = public_fixture_files()
    assert len(files) == 64
    assert sorted({p.parent.name for p in files}) == [
        "cassandra-stress", "gc", "network", "nodetool", "other-tools", "stress-graph", "tlp-stress"]
    assert [p.name for p in files if not p.with_name(p.name + ".source.txt").is_file()] == []
    notes = sorted(PUBLIC_FIXTURES.rglob("*.source.txt"))
    assert [n.name for n in notes if not n.with_name(n.name.removesuffix(".source.txt")).is_file()] == []


def test_the_readme_names_every_file_and_the_repository_its_note_gives() -> None:
    rows = {m["file"]: m["repo"] for line in README.read_text(encoding="utf-8").splitlines()
            if (m := ROW.match(line))}
    expected = {str(p.relative_to(PUBLIC_FIXTURES)): _sidecar_repository(p) for p in public_fixture_files()}
    assert rows == expected


def test_a_missing_fixture_fails_the_test_that_asks_for_it() -> None:
    with pytest.raises(pytest.fail.Exception, match=r"fixture .*/tests/fixtures/public/gc/absent\.log is missing"):
        public_fixture("gc", "absent.log")


def test_the_library_default_is_this_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CASSPERF_FIXTURES", raising=False)
    assert config.fixtures_dir() == PUBLIC_FIXTURES
