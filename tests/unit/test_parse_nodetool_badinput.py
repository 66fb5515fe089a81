"""nodetool parsers on bad input: empty, binary, wrong command, truncated, garbage in the middle,
and a hypothesis fuzz over mutated real fixture text.

Every case must end in a ParseError naming the file, line and what was expected, or a result
whose warnings say what happened (complete=False when the input was cut); never another
exception, never a silently changed number.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cassperf.config import project_root
from tests.conftest import PUBLIC_FIXTURES
from cassperf.errors import ParseError
from cassperf.parsers import ParseResult, format_by_name, read_text
from cassperf.parsers.nodetool import FORMATS

NODETOOL = PUBLIC_FIXTURES / "nodetool"

#: one representative fixture per format (small ones: the cases below edit them)
REPRESENTATIVE: dict[str, str] = {
    "nodetool-status": "nodetool_status_cassandra2.1.17_sperf.txt",
    "nodetool-info": "nodetool_info_cassandra2.1.17_sperf.txt",
    "nodetool-tablestats": "nodetool_cfstats_cassandra2.1.17_sperf.txt",
    "nodetool-compactionstats": "nodetool_compactionstats_cassandra2.1.17_sperf.txt",
    "nodetool-compactionhistory": "nodetool_compactionhistory_cassandra3.11_FRAGMENT_mohanmca.txt",
    "nodetool-tpstats": "nodetool_tpstats_dse6.7.7_sperf.txt",
    "nodetool-gcstats": "nodetool_gcstats_x3_cassandra3.11_FRAGMENT_mohanmca.txt",
    "nodetool-proxyhistograms": "nodetool_proxyhistograms_dse6.7.7_sperf.txt",
    "nodetool-tablehistograms": "nodetool_cfhistograms_dse6.8.1_sperf.txt",
}
NAMES = list(REPRESENTATIVE)


def text_of(fmt: str) -> str:
    return (NODETOOL / REPRESENTATIVE[fmt]).read_text()


def frames_equal(a: ParseResult, b: ParseResult) -> bool:
    return a.tables.keys() == b.tables.keys() and all(a.tables[k].equals(b.tables[k]) for k in a.tables)


# ---------------------------------------------------------------- empty, binary, wrong command


@pytest.mark.parametrize("fmt", NAMES)
@pytest.mark.parametrize("text", ["", "\n\n   \n"], ids=["empty", "blank"])
def test_empty_input_is_a_parse_error(fmt: str, text: str) -> None:
    with pytest.raises(ParseError) as err:
        format_by_name(fmt).parse(text, "empty.txt")
    assert err.value.path == "empty.txt" and "empty" in err.value.expected


@pytest.mark.parametrize("fmt", NAMES)
def test_binary_input_is_a_parse_error(fmt: str) -> None:
    with pytest.raises(ParseError) as err:
        format_by_name(fmt).parse("Pool Name\x00\x01\x02 Active\x00", "blob.bin")
    assert "binary" in err.value.expected


def test_binary_file_is_refused_before_any_parser(tmp_path: Path) -> None:
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ParseError, match="binary"):
        read_text(blob)


@pytest.mark.parametrize("fmt", NAMES)
def test_wrong_command_output_is_a_parse_error_naming_the_first_line(fmt: str) -> None:
    other = "nodetool-gcstats" if fmt != "nodetool-gcstats" else "nodetool-status"
    text = text_of(other)
    with pytest.raises(ParseError) as err:
        format_by_name(fmt).parse(text, "other.txt")
    first = next(i for i, line in enumerate(text.split("\n"), start=1) if line.strip() and "nodetool" not in line)
    assert err.value.path == "other.txt"
    assert err.value.line_no == first and err.value.line == text.split("\n")[first - 1]
    assert err.value.expected.startswith("nodetool ")


@pytest.mark.parametrize("fmt", NAMES)
def test_prose_is_a_parse_error(fmt: str) -> None:
    with pytest.raises(ParseError):
        format_by_name(fmt).parse("error: Failed to connect to '127.0.0.1:7199' - ConnectException\n"
                                  "-- StackTrace --\njava.net.ConnectException: Connection refused\n", "err.txt")


# ---------------------------------------------------------------- truncation

#: format -> where the fixture is cut (the input ends just after this text, inside a line)
@pytest.mark.parametrize("fmt,cut_after", [
    ("nodetool-status", "UN  10.101.34.191  107.43"),
    ("nodetool-info", "Counter Cache          : entries 0, size 0"),
    ("nodetool-tablestats", "\t\tLocal write latency: 0.280"),
    ("nodetool-compactionhistory", "bac8ee60-dbeb-11eb-bef5-537733e6a124 system        sstable_activity  "
                                   "2021-07-03T10:45:06.246 968      224       {1:8, 3"),
    ("nodetool-tpstats", "TRUNCATE                      0               N/A"),
    ("nodetool-gcstats", "                1307                   0"),
    ("nodetool-proxyhistograms", "99%                   6291.46           12582.91"),
    ("nodetool-tablehistograms", "system_traces/sessions histograms\nPercentile  SSTables     Write Latency      "
                                 "Read Latency    Partition Size        Cell Count\n                              "
                                 "(micros)          (micros)           (bytes)                  \n50%             0.00"),
])
def test_truncated_input_is_marked_incomplete_and_keeps_what_was_whole(fmt: str, cut_after: str) -> None:
    full = text_of(fmt)
    at = full.rindex(cut_after) + len(cut_after)
    whole = format_by_name(fmt).parse(full, "full.txt")
    cut = format_by_name(fmt).parse(full[:at], "cut.txt")
    assert cut.complete is False
    assert cut.warnings and all(w.path == "cut.txt" for w in cut.warnings)
    # the line the input ends inside is named, since a value read from it may be short
    last = full[:at].split("\n")
    assert any(w.line_no == len(last) and w.line == last[-1] and "cut" in w.expected for w in cut.warnings)
    # rows before the cut line are identical to the whole input's
    for name, frame in cut.tables.items():
        before = frame.iloc[:-1].reset_index(drop=True)
        if len(before) and name not in ("summary", "info"):
            assert before.equals(whole.tables[name].iloc[: len(before)].reset_index(drop=True)), name


def test_compactionstats_cut_before_remaining_time_is_incomplete() -> None:
    text = ("pending tasks: 1\n"
            "id                                   compaction type keyspace table completed total     unit  progress\n"
            "5ac3c2d0-a7a2-11f0-9d6c-2bd5a0c1d9c1 Compaction      cassperf rf3   41943040  167772160 bytes 25.00%\n")
    result = format_by_name("nodetool-compactionstats").parse(text, "cut.txt")
    assert result.complete is False and len(result.tables["active"]) == 1
    assert "truncated" in result.warnings[-1].expected


def test_compactionhistory_title_alone_is_incomplete_not_an_error() -> None:
    result = format_by_name("nodetool-compactionhistory").parse("Compaction History:\n", "cut.txt")
    assert result.complete is False and result.tables["history"].empty


def test_compactionhistory_without_history_is_empty_and_complete() -> None:
    result = format_by_name("nodetool-compactionhistory").parse(
        "Compaction History: \nThere is no compaction history", "none.txt")
    assert result.complete and not result.warnings and result.tables["history"].empty


# ---------------------------------------------------------------- garbage in the middle

GARBAGE = "#### kernel: [12345.678] oom-killer ### 42 17 %%"


@pytest.mark.parametrize("fmt", NAMES)
def test_garbage_line_in_the_middle_is_skipped_counted_and_warned(fmt: str) -> None:
    full = text_of(fmt)
    lines = full.split("\n")
    middle = len([ln for ln in lines if ln.strip()]) // 2
    # insert after the middle-th non-blank line
    seen, at = 0, 0
    for i, ln in enumerate(lines):
        seen += bool(ln.strip())
        if seen == middle:
            at = i + 1
            break
    dirty = "\n".join(lines[:at] + [GARBAGE] + lines[at:])
    clean = format_by_name(fmt).parse(full, "f.txt")
    result = format_by_name(fmt).parse(dirty, "f.txt")
    assert result.skipped_lines == clean.skipped_lines + 1
    garbage_warnings = [w for w in result.warnings if w.line == GARBAGE]
    assert len(garbage_warnings) == 1 and garbage_warnings[0].line_no == at + 1
    assert frames_equal(result, clean)          # no number changed


def test_a_value_that_is_not_a_number_is_warned_and_left_missing() -> None:
    text = text_of("nodetool-tablestats").replace("\t\tSpace used (live): 22496\n", "\t\tSpace used (live): lots\n")
    result = format_by_name("nodetool-tablestats").parse(text, "f.txt")
    table = result.tables["tables"]
    value = table[(table["keyspace"] == "system") & (table["table"] == "compaction_history")]["space_used_live_bytes"]
    assert value.isna().all()
    assert any(w.line == "\t\tSpace used (live): lots" for w in result.warnings)


def test_status_row_that_does_not_fit_the_header_is_warned() -> None:
    text = text_of("nodetool-status").replace("UN  10.101.34.223  92.05 KB   1",
                                              "UN  10.101.34.223  92.05 KB   one")
    result = format_by_name("nodetool-status").parse(text, "f.txt")
    assert list(result.tables["nodes"]["address"]) == ["10.101.35.67", "10.101.34.191"]
    assert result.skipped_lines == 1 and result.complete
    assert "fit the header" in result.warnings[0].expected


# ---------------------------------------------------------------- fuzz

FUZZ_EXAMPLES = int(os.environ.get("CASSPERF_FUZZ_EXAMPLES", "150"))
#: inputs tried per format (printed at the end of each fuzz test; run with -s to see)
TRIED: dict[str, int] = {}
FUZZ_LINES = 150        # fuzz the head of long fixtures: same shapes, seconds not minutes

_FUZZ_FILES: dict[str, list[str]] = {}
#: the public fixtures, and the project's own Apache 5.0 captures
_CAPTURED_50 = project_root() / "tests" / "fixtures" / "nodetool-5.0"
for _dir in (NODETOOL, _CAPTURED_50):
    for _path in sorted(_dir.iterdir()) if _dir.is_dir() else []:
        if _path.name.endswith(".source.txt") or not _path.is_file():
            continue
        _text = _path.read_text()
        _owner = [f.name for f in FORMATS if f.sniff(_text[:65536])]
        if len(_owner) == 1:
            _FUZZ_FILES.setdefault(_owner[0], []).append("\n".join(_text.split("\n")[:FUZZ_LINES]))

_mutation = st.one_of(
    st.tuples(st.just("delete"), st.integers(0, 10**6)),
    st.tuples(st.just("duplicate"), st.integers(0, 10**6)),
    st.tuples(st.just("swap"), st.integers(0, 10**6), st.integers(0, 10**6)),
    st.tuples(st.just("truncate"), st.integers(0, 10**7)),
    st.tuples(st.just("replace"), st.integers(0, 10**7), st.characters(codec="utf-8")),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.text(max_size=60)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.sampled_from(
        ["", "N/A", "NaN", "?", "null", "--", "----------------", "Max", "50%", "{", "(", "-1", "1e308", "\t\t",
         "Table:", "Keyspace :", "pending tasks: x", "Datacenter:", "Percentile  SSTables"])),
)


def mutate(text: str, mutations: list[tuple]) -> str:  # type: ignore[type-arg]
    lines = text.split("\n")
    for m in mutations:
        kind = m[0]
        if kind == "delete" and lines:
            del lines[m[1] % len(lines)]
        elif kind == "duplicate" and lines:
            i = m[1] % len(lines)
            lines.insert(i, lines[i])
        elif kind == "swap" and lines:
            i, j = m[1] % len(lines), m[2] % len(lines)
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "insert":
            lines.insert(m[1] % (len(lines) + 1), m[2])
        elif kind in ("truncate", "replace"):
            joined = "\n".join(lines)
            if joined:
                at = m[1] % len(joined)
                joined = joined[:at] if kind == "truncate" else joined[:at] + m[2] + joined[at + 1:]
            lines = joined.split("\n")
    return "\n".join(lines)


@pytest.mark.parametrize("fmt", NAMES)
def test_fuzzed_fixture_text_gives_a_result_or_a_parse_error(fmt: str) -> None:
    parser = format_by_name(fmt)
    sources = _FUZZ_FILES[fmt]
    TRIED[fmt] = 0

    @settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=False,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(which=st.integers(0, len(sources) - 1), mutations=st.lists(_mutation, max_size=6))
    def run(which: int, mutations: list[tuple]) -> None:  # type: ignore[type-arg]
        TRIED[fmt] += 1
        text = mutate(sources[which], mutations)
        for other in FORMATS:
            assert isinstance(other.sniff(text), bool)
        try:
            result = parser.parse(text, "fuzz.txt")
        except ParseError as err:
            assert err.path == "fuzz.txt"
            return
        assert isinstance(result, ParseResult) and result.format == fmt
        for frame in result.tables.values():
            assert not frame.columns.duplicated().any()
        if not result.complete:
            assert result.warnings

    run()
    print(f"\n{fmt}: {TRIED[fmt]} fuzzed inputs")
    assert TRIED[fmt] >= min(FUZZ_EXAMPLES, 10)


def test_a_label_that_only_looks_like_a_known_field_never_fills_its_numeric_column() -> None:
    """Found by the fuzz test: "Memtable switch-count: :0" is an unknown field whose column
    name is a known numeric column's; it goes to field_<name>, the known column stays NaN."""
    from cassperf.parsers import parse_text

    text = ("Total number of tables: 1\n----------------\nKeyspace : ks\n\tRead Count: 0\n\tTable: t\n"
            "\t\tSSTable count: 1\n\t\tMemtable switch-count: :0\n\n----------------\n")
    tables = parse_text(text, format="nodetool-tablestats").tables["tables"]
    row = tables.iloc[0]
    assert math.isnan(row["memtable_switch_count"])
    assert row["field_memtable_switch_count"] == ":0"


def test_an_unknown_info_field_whose_name_slugs_to_a_typed_column_keeps_its_own_name() -> None:
    """The fuzz test's draw: 'Thrift active%' slugs to thrift_active (boolean); its text went there."""
    text = text_of("nodetool-info").replace("Thrift active ", "Thrift active%", 1)
    assert "Thrift active%" in text
    info = format_by_name("nodetool-info").parse(text, "x.txt").tables["info"].iloc[0]
    assert info["field_thrift_active"] == "true" and str(info["thrift_active"]) == "<NA>"
