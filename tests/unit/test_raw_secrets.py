"""Finding secrets in a file kept as it came (an imported log's raw/ copy): the manifest rule, less
the placeholders every cassandra-stress log prints, on windows so long lines stay fast."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cassperf.results.raw_secrets import line_secret_spans, redacted_bytes, scan_file, secret_warning

HERE_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def secrets_in(line: str) -> list[str]:
    return [line[start:end] for start, end in line_secret_spans(line)]


@pytest.mark.parametrize("line, secrets", [
    # what the manifest rule redacts
    ("cassandra-stress write n=10 -mode native cql3 user=bob password=hunter2 -rate threads=4", ["hunter2"]),
    ("  Password: s3cr3t", ["s3cr3t"]),
    ("cqlsh --username bob --password 'two words'", ["two words"]),
    ("jdbc https://bob:pa55w0rd@db.example/x", ["pa55w0rd"]),
    ("-Dapi_key=abc123 -Dtruststore.password=changeit", ["abc123", "changeit"]),
    # a quoted key before ':' (JSON, YAML), the value kept inside its quotes
    ('{"username": "bob", "password": "hunter2", "num_tokens": 16}', ["hunter2"]),
    ("  password: '1234'", ["1234"]),                    # a number is a password after 'password'
    # no secret: placeholders every cassandra-stress settings dump prints, remarks, ring tokens, code
    ("  Password: null", []),
    ("  CQL password: *not set*", []),
    ("  Truststore Password: <redacted>", []),
    ('"password": ""', []),
    ("Token                  : (invoke with -T/--tokens to see all 16 tokens)", []),
    ("Token                  : 3074457345618258602", []),
    ("num_tokens: 16", []),
    ("for(b in{radio:!0,checkbox:!0,file:!0,password:!0,image:!0})d.pseudos[b]=lb(b)", []),
    ("g=fb.tokenize=function(a,b){var c,e,f}", []),
    ("token aware routing is on", []),
    ("total, 1000, 2000, 3.5, secret sauce", []),
])
def test_which_values_are_secrets(line: str, secrets: list[str]) -> None:
    assert secrets_in(line) == secrets


def test_no_log_among_the_fixtures_is_taken_for_holding_a_secret() -> None:
    # every cassandra-stress, nodetool, GC, latte, graph HTML file here: a warning on each would be noise
    # tests/fixtures/public included; not the binary Flight Recorder files, which are never imported as logs
    # (their thread names read as keys: 'CredentialsCacheRefresh:1')
    files = [p for p in sorted(HERE_FIXTURES.rglob("*")) if p.is_file() and p.suffix != ".jfr"]
    assert len(files) >= 50
    assert {str(p): scan_file(p) for p in files if scan_file(p)} == {}


def test_a_long_line_is_scanned_in_windows(tmp_path: Path) -> None:
    # the manifest rule alone takes more than cubic time on a run of word characters (40 s for 10,000)
    path = tmp_path / "blob.log"
    path.write_bytes(b"first line\n" + b"a" * 2_000_000 + b" password=hunter2 " + b"b" * 2_000_000 + b"\nlast\n")
    t0 = time.monotonic()
    assert scan_file(path) == [2]
    content, count = redacted_bytes(path)
    assert time.monotonic() - t0 < 20
    assert count == 1 and content == path.read_bytes().replace(b"hunter2", b"<redacted>")


def test_redaction_keeps_bytes_that_are_not_utf8_and_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "mixed.log"
    path.write_bytes(b"\xff\xfe binary\r\npassword=hunter2\r\n  Password: null\r\nend")
    content, count = redacted_bytes(path)
    assert (content, count) == (b"\xff\xfe binary\r\npassword=<redacted>\r\n  Password: null\r\nend", 1)
    assert scan_file(path) == [2]


def test_the_warning_names_the_file_and_at_most_five_lines() -> None:
    assert secret_warning("logs/a.log", [3]) == (
        "logs/a.log: line 3 holds what looks like a password or other secret; the run's raw/ copy keeps the "
        "file as it came (import with --redact-raw, or redact_raw=True, to store a redacted copy instead)")
    assert secret_warning("b.log", [1, 2, 3, 4, 5, 6, 7]).startswith(
        "b.log: lines 1, 2, 3, 4, 5 and 2 more hold what looks like a password or other secret; ")
