"""The code says what and why; dated evidence lives in docs/measurements.md. No commit hash and no
dated finding in lib/ (sample lines a parser or a log reader matches carry dates of their own)."""

from __future__ import annotations

import re
from pathlib import Path

import cassperf

LIB = Path(cassperf.__file__).parent
#: a 7-hex word with a letter and a digit: a short commit hash
HASH = re.compile(r"\b(?=[0-9a-f]{7}\b)(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7}\b")
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
#: lines that quote a tool's own output, whose dates are the sample's, not a finding's
SAMPLE = re.compile(r"^\s*#(:)?\s*(INFO|openjdk|\[?20\d\d-|.*version \")")


def test_no_commit_hash_or_dated_finding_in_the_library() -> None:
    found = []
    for path in sorted(LIB.rglob("*.py")):
        rel = path.relative_to(LIB).as_posix()
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if HASH.search(line):
                found.append(f"{rel}:{no}: {line.strip()[:80]}")
            if DATE.search(line) and not rel.startswith("parsers/") and not SAMPLE.match(line) \
                    and "STARTED" not in line and "strptime" not in line:
                found.append(f"{rel}:{no}: {line.strip()[:80]}")
    assert found == []


def test_the_check_sees_a_hash_and_a_date() -> None:
    assert HASH.search("(make report at 9ba707f)") and not HASH.search("3779913 and deadbee")
    assert DATE.search("the runs of 2026-11-26 showed")
