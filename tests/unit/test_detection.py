"""Format detection: `cassperf.parsers.parse(path)` with no format named finds each file's own format.

Every data file of the public fixtures (tests/fixtures/public/**, sidecars and README.md excluded) and
of the project-made fixtures (tests/fixtures/{nodetool-5.0,gc-5.0,mdadm,latte-0.29,cassandra-stress-5.0,
cassandra-stress-keys,cassandra-stress-2.0,cassandra-stress-2.1-early}) is listed here with the
format it belongs to, by an explicit (folder, file-name pattern) rule. For each file:

- parse(path) returns a ParseResult of that format, with something in it (a Run or a non-empty
  table);
- exactly one registered format's sniff() claims the file's first 64 KiB (the list of claimers
  is that one format), so detection does not depend on the registry's order.

A file no parser knows (nodetool describecluster, random text, random bytes, an empty file, a
PNG) gets a ParseError naming the file; for text, the message lists every format tried.
"""

from __future__ import annotations

import fnmatch
import os
import random
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cassperf.errors import ParseError
from cassperf.parsers import ParseResult, detect, formats, parse, read_text
from tests.conftest import PUBLIC_FIXTURES

LOCAL = Path(__file__).resolve().parent.parent / "fixtures"
SNIFF_BYTES = 65536
NO_FORMAT = None   # the file belongs to no registered format: parse() must raise ParseError


@dataclass(frozen=True)
class Rule:
    """Files of `folder` whose name matches `pattern` belong to `format` (None: to no format)."""

    root: str          # "public" (tests/fixtures/public) or "local" (tests/fixtures, project-made)
    folder: str
    pattern: str
    format: str | None


RULES: tuple[Rule, ...] = (
    # public: real tool output from public repositories
    Rule("public", "cassandra-stress", "cs_*", "cassandra-stress"),
    Rule("public", "stress-graph", "cs_graph_*.html", "cassandra-stress-graph"),
    Rule("public", "tlp-stress", "tlp-stress_*", "tlp-stress"),
    Rule("public", "tlp-stress", "easy-cass-stress_*", "tlp-stress"),
    Rule("public", "nodetool", "nodetool_status_*", "nodetool-status"),
    Rule("public", "nodetool", "nodetool_info_*", "nodetool-info"),
    Rule("public", "nodetool", "nodetool_cfstats_*", "nodetool-tablestats"),
    Rule("public", "nodetool", "nodetool_tablestats_*", "nodetool-tablestats"),
    Rule("public", "nodetool", "nodetool_compactionstats_*", "nodetool-compactionstats"),
    Rule("public", "nodetool", "nodetool_compactionhistory_*", "nodetool-compactionhistory"),
    Rule("public", "nodetool", "nodetool_tpstats_*", "nodetool-tpstats"),
    Rule("public", "nodetool", "nodetool_gcstats_*", "nodetool-gcstats"),
    Rule("public", "nodetool", "nodetool_proxyhistograms_*", "nodetool-proxyhistograms"),
    Rule("public", "nodetool", "nodetool_cfhistograms_*", "nodetool-tablehistograms"),
    Rule("public", "nodetool", "nodetool_tablehistograms_*", "nodetool-tablehistograms"),
    Rule("public", "gc", "gc_*_jdk8*", "gc-jdk8"),
    Rule("public", "gc", "gc_*unified*", "gc-unified"),
    Rule("public", "network", "ping_*", "ping"),
    Rule("public", "network", "iperf3*.json", "iperf3-json"),
    Rule("public", "network", "dstat*.csv", "dstat-csv"),
    Rule("public", "network", "dstat_*_console_*.txt", "dstat-console"),
    Rule("public", "other-tools", "latte_*", "latte"),
    Rule("public", "other-tools", "ycsb_*", "ycsb"),
    # local: project-made captures (Apache 5.0.6, JDK 17) and mdadm samples
    Rule("local", "nodetool-5.0", "nodetool_status_*", "nodetool-status"),
    Rule("local", "nodetool-5.0", "nodetool_info_*", "nodetool-info"),
    Rule("local", "nodetool-5.0", "nodetool_tablestats_*", "nodetool-tablestats"),
    Rule("local", "nodetool-5.0", "nodetool_compactionstats_*", "nodetool-compactionstats"),
    Rule("local", "nodetool-5.0", "nodetool_compactionhistory_*", "nodetool-compactionhistory"),
    Rule("local", "nodetool-5.0", "nodetool_tpstats_*", "nodetool-tpstats"),
    Rule("local", "nodetool-5.0", "nodetool_gcstats_*", "nodetool-gcstats"),
    Rule("local", "nodetool-5.0", "nodetool_proxyhistograms_*", "nodetool-proxyhistograms"),
    Rule("local", "nodetool-5.0", "nodetool_tablehistograms_*", "nodetool-tablehistograms"),
    Rule("local", "nodetool-5.0", "nodetool_describecluster_*", NO_FORMAT),   # no parser (yet)
    Rule("local", "gc-5.0", "gc_*_unified_*", "gc-unified"),
    Rule("local", "mdadm", "mdadm-detail_*", "mdadm-detail"),
    Rule("local", "latte-0.29", "*.txt", "latte"),                  # real latte 0.29.0 runs (capture.py)
    Rule("local", "cassandra-stress-5.0", "*.txt", "cassandra-stress"),  # a source build (5.0/4.1.1 mix), real runs
    Rule("local", "cassandra-stress-keys", "write-seq-*", NO_FORMAT),
    Rule("local", "jfr-5.0", "*.jfr", NO_FORMAT),          # a node's Flight Recorder file (cassperf.parsers.jfr reads it)
    Rule("local", "jfr-5.0", "*.jfr.run.json", NO_FORMAT), # the run it was recorded in (times, settings)  # keys a real cassandra-stress write made (test_keys)
    Rule("local", "cassandra-stress-2.0", "*.txt", "cassandra-stress-2.0"),     # published 2.0 outputs (sidecars)
    Rule("local", "cassandra-stress-2.1-early", "*.txt", "cassandra-stress"),   # published 2.1.3 outputs (sidecars)
)

#: what every public/local fixture folder must hold at least (a folder emptied by mistake fails)
MIN_FILES = {("public", "cassandra-stress"): 8, ("public", "gc"): 7, ("public", "network"): 15,
             ("public", "nodetool"): 24, ("public", "other-tools"): 3, ("public", "stress-graph"): 1,
             ("public", "tlp-stress"): 6, ("local", "nodetool-5.0"): 10, ("local", "gc-5.0"): 1,
             ("local", "mdadm"): 3, ("local", "latte-0.29"): 5, ("local", "cassandra-stress-5.0"): 6,
             ("local", "cassandra-stress-keys"): 1, ("local", "cassandra-stress-2.0"): 3,
             ("local", "cassandra-stress-2.1-early"): 4}

#: sniff claimers per file that are known defects: file name -> (claimers, reason). Empty: none.
KNOWN_SNIFF_DEFECTS: dict[str, tuple[list[str], str]] = {}

_ROOTS = {"public": PUBLIC_FIXTURES, "local": LOCAL}


def _is_data_file(path: Path) -> bool:
    return path.is_file() and not path.name.endswith(".source.txt") and path.name not in ("README.md", "capture.py")


def _data_files(root: str) -> list[tuple[str, str, Path]]:
    """(root, folder, path) of every data file under one root, sorted (a folder's own files: the
    public folder under tests/fixtures is a root of its own)."""
    base = _ROOTS[root]
    return sorted((root, p.relative_to(base).parts[0], p) for p in base.rglob("*")
                  if _is_data_file(p) and len(p.relative_to(base).parts) == 2)


def _rules_for(root: str, folder: str, name: str) -> list[Rule]:
    return [r for r in RULES if (r.root, r.folder) == (root, folder) and fnmatch.fnmatchcase(name, r.pattern)]


ALL_FILES = _data_files("public") + _data_files("local")
CASES = [(root, folder, path, rules[0].format) for root, folder, path in ALL_FILES
         if len(rules := _rules_for(root, folder, path.name)) == 1]
KNOWN = [c for c in CASES if c[3] is not NO_FORMAT]


def _case_id(case: tuple[str, str, Path, str | None]) -> str:
    return f"{case[1]}/{case[2].name}"


def _xfail_known_sniff_defect(request: pytest.FixtureRequest, name: str) -> None:
    if name in KNOWN_SNIFF_DEFECTS:
        claimers, reason = KNOWN_SNIFF_DEFECTS[name]
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"claimed by {claimers}: {reason}"))


@pytest.fixture(scope="module")
def format_names() -> list[str]:
    return [f.name for f in formats()]


# --- the table of rules is complete and exact ---------------------------------------------------

def test_every_fixture_file_is_named_by_exactly_one_rule() -> None:
    unmatched = [f"{root}:{folder}/{p.name}" for root, folder, p in ALL_FILES if not _rules_for(root, folder, p.name)]
    ambiguous = [f"{root}:{folder}/{p.name} -> {[r.format for r in rules]}" for root, folder, p in ALL_FILES
                 if len(rules := _rules_for(root, folder, p.name)) > 1]
    assert unmatched == [], "fixture files without an expected format: add a rule"
    assert ambiguous == [], "fixture files matched by two rules"
    unused = [r for r in RULES if not any(_rules_for(root, folder, p.name) == [r] for root, folder, p in ALL_FILES)]
    assert unused == [], "rules that match no file (a fixture renamed or removed?)"
    counts: dict[tuple[str, str], int] = {}
    for root, folder, _p in ALL_FILES:
        counts[(root, folder)] = counts.get((root, folder), 0) + 1
    short = {k: (counts.get(k, 0), n) for k, n in MIN_FILES.items() if counts.get(k, 0) < n}
    assert short == {}, "fixture folders with fewer files than expected: (found, expected)"


def test_every_registered_format_is_expected_of_some_fixture_or_the_generated_hdr_log(
        format_names: list[str]) -> None:
    expected = {r.format for r in RULES if r.format is not NO_FORMAT} | {"hdr-log"}   # hdr-log: generated below
    assert sorted(set(format_names) - expected) == [], "formats with no file to detect: add a fixture and a rule"
    assert sorted(expected - set(format_names)) == [], "rules naming formats that are not registered"


# --- each file is detected as its own format ----------------------------------------------------

_PARSED: dict[Path, ParseResult] = {}


def _parsed(path: Path) -> ParseResult:
    if path not in _PARSED:
        _PARSED[path] = parse(path)
    return _PARSED[path]


@pytest.mark.parametrize("case", KNOWN, ids=_case_id)
def test_parse_without_a_format_detects_the_files_own_format(case: tuple[str, str, Path, str]) -> None:
    _root, _folder, path, expected = case
    result = _parsed(path)
    assert isinstance(result, ParseResult)
    assert result.format == expected
    assert result.source == str(path)
    assert result.runs or any(len(t) for t in result.tables.values()), "detected, but nothing was parsed"


@pytest.mark.parametrize("case", KNOWN, ids=_case_id)
def test_exactly_one_format_sniffs_each_file(case: tuple[str, str, Path, str],
                                             request: pytest.FixtureRequest) -> None:
    _root, _folder, path, expected = case
    _xfail_known_sniff_defect(request, path.name)
    head = read_text(path)[:SNIFF_BYTES]
    claimers = [f.name for f in formats() if f.sniff(head)]
    assert claimers == [expected]


# --- files no parser knows ---------------------------------------------------------------------

def _assert_names_every_format_tried(err: ParseError, path: str, format_names: list[str]) -> None:
    assert err.path == path
    assert err.line_no is None and err.line is None
    assert err.expected.startswith("one of the known formats (tried: ")
    tried = err.expected.removeprefix("one of the known formats (tried: ").removesuffix(")").split(", ")
    assert tried == format_names
    assert str(err).startswith(f"{path}: expected one of the known formats (tried: nodetool-status, ")


def test_nodetool_describecluster_has_no_parser_and_says_what_was_tried(format_names: list[str]) -> None:
    cases = [c for c in CASES if c[3] is NO_FORMAT and c[1] == "nodetool-5.0"]
    assert [c[2].name for c in cases] == ["nodetool_describecluster_cassandra5.0.6_cassperf.txt"]
    path = cases[0][2]
    assert read_text(path).startswith("Cluster Information:\n")
    assert [f.name for f in formats() if f.sniff(read_text(path)[:SNIFF_BYTES])] == []
    with pytest.raises(ParseError) as info:
        parse(path)
    _assert_names_every_format_tried(info.value, str(path), format_names)


def _random_words(seed: int, lines: int) -> str:
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz      ,.:;-=[]()0123456789"
    return "\n".join("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 90))) for _ in range(lines)) + "\n"


@pytest.mark.parametrize("name,content", [
    ("random.txt", _random_words(1, 400).encode()),
    ("random-nonul.bin", bytes(random.Random(2).randint(1, 255) for _ in range(20_000))),   # latin-1 fallback
    ("empty.log", b""),
    ("blank.log", b"\n\n   \n\t\n"),
    ("png-signature.png", b"\x89PNG\r\n\x1a\n"),                                       # the 8 signature bytes
    ("readme.md", b"# cassperf\n\nA Jupyter-notebook workbook for Apache Cassandra performance experiments.\n"),
    ("csv-unknown.csv", b"a,b,c\n1,2,3\n4,5,6\n"),
    ("json-unknown.json", b'{"start": {"version": "x"}, "intervals": []}\n'),
])
def test_a_text_file_no_parser_knows_gets_a_parse_error_listing_the_formats_tried(
        tmp_path: Path, name: str, content: bytes, format_names: list[str]) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ParseError) as info:
        parse(path)
    _assert_names_every_format_tried(info.value, str(path), format_names)


PNG_HEADER = (b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00"
              + b"\x1f\xf3\xffa")   # signature + IHDR chunk of a 16x16 RGBA image


def test_a_binary_file_gets_a_parse_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "image.png"
    path.write_bytes(PNG_HEADER)
    with pytest.raises(ParseError) as info:
        parse(path)
    assert info.value.path == str(path)
    assert "binary" in info.value.expected and "NUL" in info.value.expected


def test_a_binary_file_gets_a_parse_error_listing_the_formats_tried(tmp_path: Path,
                                                                    format_names: list[str]) -> None:
    path = tmp_path / "image.png"
    path.write_bytes(PNG_HEADER)
    with pytest.raises(ParseError) as info:
        parse(path)
    assert "tried: " + ", ".join(format_names) in str(info.value)


# --- a generated HDR log (no such fixture exists) is detected too --------------------------------

def test_a_generated_hdr_interval_log_is_detected_as_hdr_log(tmp_path: Path) -> None:
    from cassperf.results import hdr
    from cassperf.parsers.hdr_log import write_hdr_log

    rows = [(tag, float(s), float(s + 1), hdr.histogram_from_samples([1_000_000 + 1000 * s + i for i in range(50)]))
            for s in range(5) for tag in ("read-st", "write-st")]
    path = tmp_path / "client1.hdr"
    write_hdr_log(rows, path, start_epoch_s=1_700_000_000.0)
    head = read_text(path)[:SNIFF_BYTES]
    assert [f.name for f in formats() if f.sniff(head)] == ["hdr-log"]
    result = parse(path)
    assert result.format == "hdr-log"
    assert len(result.runs) == 1 and len(result.runs[0].histograms) == 10
    assert list(result.runs[0].summary["count"]) == [250, 250]


# --- sniff() never raises, whatever the text ----------------------------------------------------

FUZZ = settings(max_examples=int(os.environ.get("CASSPERF_FUZZ_EXAMPLES", "150")), deadline=None)
_TRIED = {"sniff": 0}


@FUZZ
@given(st.text(max_size=2000))
def test_every_sniff_returns_a_bool_and_detection_a_format_or_a_parse_error(text: str) -> None:
    _TRIED["sniff"] += 1
    for fmt in formats():
        assert isinstance(fmt.sniff(text), bool)
    try:
        detect(text, "<fuzz>")
    except ParseError as err:
        assert "tried: " in err.expected


def teardown_module() -> None:
    print(f"\ntest_detection: {_TRIED['sniff']} fuzzed texts sniffed by every format")
