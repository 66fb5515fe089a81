"""cassandra-stress 2.0 output ("cassandra-stress-2.0"): CSV interval rows and the middle-80% averages.

Fixtures: tests/fixtures/cassandra-stress-2.0 (real published outputs; each sidecar names its source
and the figures). Expected values below are those figures, copied from the fixture text itself.
Cases the fixtures lack (a bad row, a cut row, FAILURE, an operation error line, a decimal-comma
locale, an unknown header) are built from the fixtures' own lines, marked as such.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import strategies as st

from cassperf.errors import ParseError
from cassperf.parsers import detect, formats, parse
from cassperf.parsers.base import ParseResult
from cassperf.parsers.cassandra_stress_legacy import HEADER, parse_stress20_log, sniff
from cassperf.results.model import INTERVAL_COLUMNS, SUMMARY_COLUMNS
from tests.fuzzing import FUZZ_EXAMPLES, fuzz_parser, mutated

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "cassandra-stress-2.0"
CAPPETTA = "write_n100000_cappetta-datastax-readme.txt"
BCANTONI = "write_n200000_dsc2.0.8_bcantoni-vagrant-readme.txt"
MANTL = "write_n1000000_mantl-issue467.txt"
ALL = [CAPPETTA, BCANTONI, MANTL]


def text_of(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=None)
def parsed(name: str) -> ParseResult:
    return parse_stress20_log(text_of(name), name)


# --- detection and schema ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL)
def test_each_fixture_is_detected_by_content_as_2_0_and_only_as_2_0(name: str) -> None:
    text = text_of(name)
    assert [f.name for f in formats() if f.sniff(text[:65536])] == ["cassandra-stress-2.0"]
    assert detect(text, name).name == "cassandra-stress-2.0"
    result = parse(HERE / name)                       # no format named: found from the content
    assert result.format == "cassandra-stress-2.0" and len(result.runs) == 1
    run = result.runs[0]
    assert list(run.intervals.columns[:len(INTERVAL_COLUMNS)]) == list(INTERVAL_COLUMNS)
    assert list(run.summary.columns[:len(SUMMARY_COLUMNS)]) == list(SUMMARY_COLUMNS)
    assert run.manifest["tool"] == "cassandra-stress" and run.manifest["format_generation"] == "2.0"
    assert run.manifest["latency_type"] == "service" and run.manifest["count_is_total"] is True


def test_a_2_1_or_later_log_is_not_claimed_by_the_2_0_format() -> None:
    assert not sniff("type,      total ops,    op/s,    pk/s,   row/s,    mean\ntotal,  10000,   16386\n")
    assert not sniff("Results:\nop rate                   : 16386 [WRITE:16386]\n")


# --- cappetta/datastax: command line, averages, END ---------------------------------------------

def test_cappetta_rows_columns_and_units_are_as_printed() -> None:
    result = parsed(CAPPETTA)
    assert result.complete and result.warnings == [] and result.skipped_lines == 0
    (run,) = result.runs
    iv = run.intervals
    assert len(iv) == 11 and set(iv["op"]) == {"insert"}         # no -o: Session's default INSERT
    assert list(iv["time_s"]) == [10, 20, 31, 41, 51, 61, 72, 82, 92, 102, 109]
    assert list(iv["count"]) == [2800, 6861, 13073, 20980, 29596, 39118, 50207, 60802, 76199, 91577, 100000]
    first = iv.iloc[0]                                   # 2800,280,280,104.4,226.5,620.8,10
    assert (first["rate_ops_s"], first["partition_rate_s"]) == (280, 280)
    assert (first["latency_p50_ms"], first["latency_p95_ms"], first["latency_p999_ms"]) == (104.4, 226.5, 620.8)
    # 2.0 printed the median in the 'latency' column: no mean, p99 or max exist
    assert iv[["latency_mean_ms", "latency_p99_ms", "latency_max_ms", "row_rate_s"]].isna().all().all()
    assert run.manifest["command"] == "-d agent2,agent3,agent1 -n 100000"
    assert (run.manifest["threads"], run.manifest["num_keys"], run.manifest["ops"]) == (50, 100000, ["insert"])
    assert "not from the interval alone" in run.manifest["latency_window"]


def test_cappetta_averages_become_the_summary_with_the_middle_80_percent_note() -> None:
    (run,) = parsed(CAPPETTA).runs
    assert len(run.summary) == 1
    s = run.summary.iloc[0].to_dict()
    # interval_op_rate 990, interval_key_rate 990, latency median 40.7, 95th 122.5, 99.9th 541.7, 00:01:49
    assert s["op"] == "insert"
    assert (s["rate_ops_s"], s["partition_rate_s"]) == (990, 990)
    assert (s["latency_p50_ms"], s["latency_p95_ms"], s["latency_p999_ms"]) == (40.7, 122.5, 541.7)
    assert (s["duration_s"], s["count"]) == (109, 100000)
    assert "middle" in run.manifest["summary_basis"] and "10% and 90%" in run.manifest["summary_basis"]


# --- mantl issue: no command line -> op unknown with a warning ----------------------------------

def test_mantl_without_a_command_line_has_op_unknown_and_one_warning_naming_the_header_line() -> None:
    result = parsed(MANTL)
    assert result.complete
    assert [(w.line_no, w.expected.split(";")[0]) for w in result.warnings] == [
        (2, "an echoed cassandra-stress command line (its -o/--operation names the op type")]
    (run,) = result.runs
    assert set(run.intervals["op"]) == {"unknown"} and run.manifest["threads"] is None
    assert run.manifest["num_keys"] == 1000000              # the last total of a run that reached END
    assert run.warnings == [str(result.warnings[0])]
    s = run.summary.iloc[0].to_dict()
    assert (s["op"], s["rate_ops_s"], s["partition_rate_s"]) == ("unknown", 10127, 10127)
    assert (s["latency_p50_ms"], s["latency_p95_ms"], s["latency_p999_ms"], s["duration_s"]) == (3.2, 10.3, 110.8, 104)
    last = run.intervals.iloc[-1]                      # 1000000,2018,2018,2.0,6.6,136.0,104
    assert (last["count"], last["rate_ops_s"], last["latency_p999_ms"], last["time_s"]) == (1000000, 2018, 136.0, 104)


# --- bcantoni: DSC 2.0.8, cut before END -> complete=False ----------------------------------------

def test_bcantoni_cut_before_end_is_incomplete_and_keeps_its_rows() -> None:
    result = parsed(BCANTONI)
    assert not result.complete
    assert [(w.line_no, w.expected) for w in result.warnings] == [
        (8, "END after the interval rows; the run's output ends here (truncated), its intervals are kept")]
    (run,) = result.runs
    assert not run.complete and run.summary.empty
    assert list(run.intervals["time_s"]) == [10, 20, 30, 40, 45]
    assert list(run.intervals["rate_ops_s"]) == [2247, 4201, 5229, 5736, 2584]
    assert run.intervals.iloc[0][["latency_p50_ms", "latency_p95_ms", "latency_p999_ms"]].tolist() == [
        20.2, 50.6, 329.4]


def test_a_run_cut_inside_a_row_is_incomplete_and_the_cut_row_is_skipped_with_its_line() -> None:
    lines = text_of(CAPPETTA).split("\n")
    cut = "\n".join(lines[:9]) + "\n" + lines[9][:9]      # built: the fixture cut inside its 7th row
    result = parse_stress20_log(cut, "cut.log")
    assert not result.complete
    assert [(w.line_no, w.line) for w in result.warnings][:1] == [(10, "50207,110")]
    assert result.warnings[0].expected.startswith("an interval row of 7 numbers")
    assert list(result.runs[0].intervals["count"]) == [2800, 6861, 13073, 20980, 29596, 39118]


# --- bad input ---------------------------------------------------------------------------------

def test_a_damaged_row_is_skipped_with_a_warning_naming_its_line_and_numbers_stay_true() -> None:
    text = text_of(CAPPETTA).replace("29596,861,861,46.5", "29596,861,8x1,46.5")   # built: one damaged row
    result = parse_stress20_log(text, "bad.log")
    assert result.skipped_lines == 1
    assert [(w.line_no, w.line) for w in result.warnings][0] == (8, "29596,861,8x1,46.5,125.2,561.1,51")
    assert "an interval row of 7 numbers" in result.warnings[0].expected
    (run,) = result.runs
    assert len(run.intervals) == 10 and 29596 not in list(run.intervals["count"])
    # the averages no longer match the rows that are left: said, not fixed
    assert any("integer mean" in w.expected for w in result.warnings)
    assert run.summary.iloc[0]["partition_rate_s"] == 990


def test_garbage_between_rows_is_counted_and_warned_about_with_its_line() -> None:
    lines = text_of(MANTL).split("\n")
    lines.insert(4, "some pasted junk")                   # built
    result = parse_stress20_log("\n".join(lines), "junk.log")
    assert result.skipped_lines == 1
    assert [(w.line_no, w.line) for w in result.warnings] == [(5, "some pasted junk"), (2, None)]
    assert len(result.runs[0].intervals) == 11


def test_failure_and_operation_errors_make_the_run_incomplete_and_are_counted() -> None:
    lines = text_of(CAPPETTA).split("\n")
    lines.insert(6, "Operation [2841] retried 10 times - error inserting key 02841 ((TimedOutException))")  # built
    text = "\n".join(lines).replace("\nEND", "\nFAILURE")
    result = parse_stress20_log(text, "fail.log")
    (run,) = result.runs
    assert not result.complete and not run.complete
    assert run.manifest["client_errors"] == 1
    expected = [w.expected for w in result.warnings]
    assert any(e.startswith("END: the tool reported FAILURE") for e in expected)
    assert any("1 operation error line(s)" in e for e in expected)


def test_a_decimal_comma_locale_row_reads_the_same_numbers() -> None:
    text = f"{HEADER}\n22479,2247,2247,20,2,50,6,329,4,10\nEND\n"   # built: %.1f in a decimal-comma locale
    (run,) = parse_stress20_log(text, "ru.log").runs
    row = run.intervals.iloc[0]
    assert (row["count"], row["latency_p50_ms"], row["latency_p95_ms"], row["latency_p999_ms"], row["time_s"]) == (
        22479, 20.2, 50.6, 329.4, 10)


def test_another_pre_2_1_header_is_refused_with_the_line_and_what_is_read() -> None:
    with pytest.raises(ParseError) as info:
        parse_stress20_log("total,interval_op_rate,interval_key_rate,avg_latency,elapsed_time\n1,1,1,0.1,10\n", "old.log")
    err = info.value
    assert (err.path, err.line_no) == ("old.log", 1)
    assert err.expected.startswith(f"the cassandra-stress 2.0 header {HEADER!r}")


def test_empty_binary_and_headerless_input_raise_parse_errors_naming_the_source() -> None:
    for text in ("", "\x00\x01"):
        with pytest.raises(ParseError) as info:
            parse_stress20_log(text, "x.log")
        assert info.value.path == "x.log"
    with pytest.raises(ParseError) as info:
        parse_stress20_log("2800,280,280,104.4,226.5,620.8,10\n", "rows.log")
    assert (info.value.line_no, info.value.expected) == (1, f"cassandra-stress 2.0 output: the header line {HEADER!r}")


def test_two_runs_pasted_together_become_two_runs() -> None:
    text = text_of(MANTL) + "\n" + text_of(CAPPETTA)        # built: two real outputs in one file
    result = parse_stress20_log(text, "two.log")
    assert [len(r.intervals) for r in result.runs] == [11, 11]
    assert [r.manifest["run_index"] for r in result.runs] == [1, 2]
    # the command line echoed before the second header belongs to the second run only
    assert [r.manifest["ops"] for r in result.runs] == [["unknown"], ["insert"]]
    assert [r.manifest["command"] for r in result.runs] == [None, "-d agent2,agent3,agent1 -n 100000"]
    assert [w.line_no for w in result.warnings] == [2]
    assert result.runs[1].summary.iloc[0]["rate_ops_s"] == 990


# --- fuzz --------------------------------------------------------------------------------------

def test_fuzz_mutated_fixtures_give_a_result_or_a_parse_error() -> None:
    def check(result: ParseResult) -> None:
        for run in result.runs:
            assert isinstance(run.intervals, pd.DataFrame)
            assert run.intervals["time_s"].dropna().ge(0).all()
            if not run.complete:
                assert not result.complete

    tried = fuzz_parser(parse_stress20_log, mutated([text_of(n) for n in ALL]), "fuzz.log", check)
    assert tried == FUZZ_EXAMPLES


def test_fuzz_random_text_after_a_header_never_raises_anything_but_parse_error() -> None:
    texts = st.text(max_size=400).map(lambda t: f"{HEADER}\n{t}")
    assert fuzz_parser(parse_stress20_log, texts, "fuzz2.log") == FUZZ_EXAMPLES


# --- import into the results store -------------------------------------------------------------

def test_a_2_0_log_imports_as_a_stored_run_with_its_summary_and_labels(tmp_path: Path) -> None:
    from cassperf.results.catalog import import_parsed
    from cassperf.results.store import load_run

    (run_id,) = import_parsed(parse(HERE / CAPPETTA), labels={"deployment": "dsc2.0"}, root=tmp_path)
    stored = load_run(run_id, root=tmp_path)
    assert stored.manifest["format"] == "cassandra-stress-2.0" and stored.manifest["complete"] is True
    assert stored.labels == {"threads": "50", "deployment": "dsc2.0"}
    assert stored.summary.iloc[0][["op", "rate_ops_s", "latency_p50_ms", "duration_s"]].tolist() == [
        "insert", 990, 40.7, 109]
    assert len(stored.intervals) == 11 and stored.manifest["summary_basis"].startswith("the tool's 'Averages")
