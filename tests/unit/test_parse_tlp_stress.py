"""tlp-stress / easy-cass-stress console output: the figures the sidecars state, all four layouts."""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import given, settings
from tests.fuzzing import mutate_lines
from hypothesis import strategies as st

from tests.conftest import PUBLIC_FIXTURES
from cassperf.errors import ParseError
from cassperf.parsers import detect, parse
from cassperf.parsers.base import ParseResult
from cassperf.parsers.tlp_stress import parse as parse_tlp
from cassperf.parsers.tlp_stress import sniff

TLP = PUBLIC_FIXTURES / "tlp-stress"
OTHER = PUBLIC_FIXTURES / "other-tools"
FUZZ = int(os.environ.get("CASSPERF_FUZZ_EXAMPLES", "150"))

# file: tool, EWMA window (s), final (count, p99 ms, rate) for write and read from the sidecars,
# whether a Deletes group exists, progress rows kept (the final duplicate dropped), and whether
# the rows were printed during the run (time estimated) or once after 'Stress complete'.
CASES = {
    "tlp-stress_1.0-SNAPSHOT_2018-10_keyvalue_5min-rate.txt":
        ("tlp-stress", 300.0, (5090, 35.39, 0.0), (4910, 33.67, 0.0), False, 1, False),
    "tlp-stress_1.0-SNAPSHOT_2019-02_keyvalue_1min-rate.txt":
        ("tlp-stress", 60.0, (5014, 31.61, 0.0), (4986, 30.79, 0.0), False, 1, False),
    "tlp-stress_4.0.0_2020-01_keyvalue.txt":
        ("tlp-stress", 60.0, (5101, 56.02, 0.0), (4899, 28.78, 0.0), True, 1, True),
    "tlp-stress_4.0.0_keyvalue_field-book_1M-ops.txt":
        ("tlp-stress", 60.0, (500169, 10.81, 7751.02), (499831, 14.81, 7734.67), True, 17, True),
    "easy-cass-stress_2025-05_keyvalue.txt":
        ("easy-cass-stress", 60.0, (4998, 0.63, 243.13), (5002, 0.62, 247.99), True, 6, True),
    "easy-cass-stress_2025-05_keyvalue_field-book.txt":
        ("easy-cass-stress", 60.0, (499318, 0.83, 2404.41), (500682, 1.11, 2416.23), True, 76, True),
}


def table_rows(text: str) -> int:
    """Independent count of the progress rows: numeric lines with '|' separators."""
    return sum(1 for ln in text.splitlines() if "|" in ln and ln.strip()[:1].isdigit())


@pytest.mark.parametrize("name", sorted(CASES))
def test_final_figures_match_the_sidecar(name: str) -> None:
    tool, window, write, read, has_deletes, n_rows, during_run = CASES[name]
    result = parse(TLP / name)
    assert result.format == "tlp-stress" and result.complete
    run = result.runs[0]
    m = run.manifest
    assert m["tool"] == tool and m["rate_ewma_window_s"] == window and m["count_is_total"] is True
    assert m["latency_type"] == ("response" if tool == "easy-cass-stress" else "service")
    assert m["command"].startswith("bin/") and "KeyValue" in m["command"]
    s = run.summary.set_index("op")
    for op, (count, p99, rate) in (("write", write), ("read", read)):
        assert s.loc[op, "count"] == count
        assert s.loc[op, "latency_p99_ms"] == p99
        assert s.loc[op, "rate_ewma_ops_s"] == rate
        assert pd_isna(s.loc[op, "rate_ops_s"])            # the console prints no interval rate
    assert s.loc["total", "count"] == write[0] + read[0]
    assert s.loc["total", "errors"] == 0
    assert ("delete" in s.index) == has_deletes
    if has_deletes:
        assert s.loc["delete", "count"] == 0 and math.isnan(s.loc["delete", "latency_p99_ms"])
    ops_per_row = 4 if has_deletes else 3
    assert len(run.intervals) == n_rows * ops_per_row
    text = (TLP / name).read_text()
    assert n_rows == table_rows(text) - int(m["dropped_final_duplicate_row"])
    assert m["time_s_estimated"] is during_run
    if during_run:
        assert run.intervals["time_s"].iloc[0] == 3.0
        assert run.intervals["time_s"].max() == 3.0 * n_rows
        assert any("timestamps" in w.expected for w in result.warnings)
    else:
        assert run.intervals["time_s"].isna().all()
        assert not result.warnings


def test_easy_cass_stress_progress_rows_and_parameters() -> None:
    result = parse(TLP / "easy-cass-stress_2025-05_keyvalue.txt")
    run = result.runs[0]
    writes = run.intervals[run.intervals["op"] == "write"]
    assert writes["count"].tolist() == [624, 1345, 2143, 3378, 4862, 4998]
    assert writes["latency_p99_ms"].tolist() == [35.88, 11.63, 0.75, 0.62, 0.64, 0.63]
    assert writes["rate_ewma_ops_s"].tolist() == [0.0, 218.0, 218.0, 221.29, 243.13, 243.13]
    assert writes["time_s"].tolist() == [3.0, 6.0, 9.0, 12.0, 15.0, 18.0]
    assert run.manifest["parameters"] == {
        "operations": 10000, "cl": "LOCAL_ONE", "serial_cl": "LOCAL_SERIAL",
        "rate_limiter_step_ops_s": 500.0, "rate_limiter_target_ops_s": 5000.0}
    assert run.manifest["dropped_final_duplicate_row"] is False
    # the preamble (schema, driver, JVM lines) is skipped and counted: 34 lines, 1 command,
    # 1 'Executing', 1 'Stepping', 2 header lines, 6 rows, 1 'Stress complete', 1 blank
    assert result.skipped_lines == 34 - 1 - 1 - 1 - 2 - 6 - 1 - 1


def test_header_reprinted_every_ten_rows_is_not_data() -> None:
    run = parse(TLP / "tlp-stress_4.0.0_keyvalue_field-book_1M-ops.txt").runs[0]
    reads = run.intervals[run.intervals["op"] == "read"]["count"].tolist()
    assert reads[9:12] == [285170, 314631, 348329]          # across the re-printed header
    assert reads == sorted(reads)


@pytest.mark.parametrize("name", sorted(CASES))
def test_detected_as_tlp_stress(name: str) -> None:
    assert detect((TLP / name).read_text()).name == "tlp-stress"


@pytest.mark.parametrize("other", ["latte_text_report_scylla_sct.log", "ycsb_0.1_basicdb_workloada_pkb.dat",
                                   "ycsb_0.9.0_redis_workloadb_histogram_pkb.dat"])
def test_does_not_claim_other_tools(other: str) -> None:
    assert not sniff((OTHER / other).read_text()[:65536])


# ---- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "\n  \n", "Writes\x00Reads\x00"])
def test_empty_and_binary_input_is_a_parse_error(text: str) -> None:
    with pytest.raises(ParseError):
        parse_tlp(text)


def test_wrong_format_is_a_parse_error() -> None:
    with pytest.raises(ParseError) as err:
        parse_tlp((OTHER / "latte_text_report_scylla_sct.log").read_text(), "latte.log")
    assert err.value.path == "latte.log" and err.value.line_no == 1
    assert "Latency (p99)" in err.value.expected


def test_truncated_mid_row_gives_a_partial_result() -> None:
    text = (TLP / "easy-cass-stress_2025-05_keyvalue_field-book.txt").read_text()
    cut = text[: text.index(" 262644") + 40]      # ends inside a row, no 'Stress complete'
    result = parse_tlp(cut)
    assert result.complete is False and result.runs[0].manifest["complete"] is False
    assert any("Stress complete" in w.expected for w in result.warnings)
    bad = [w for w in result.warnings if w.line_no is not None]
    assert len(bad) == 1 and bad[0].line is not None and bad[0].line.startswith(" 262644")
    s = result.runs[0].summary.set_index("op")
    assert s.loc["write", "count"] == 255229 and s.loc["read", "latency_p99_ms"] == 0.38


def test_garbage_lines_in_the_middle_are_skipped_and_a_broken_row_is_warned() -> None:
    lines = (TLP / "tlp-stress_4.0.0_keyvalue_field-book_1M-ops.txt").read_text().splitlines()
    clean = parse_tlp("\n".join(lines) + "\n")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("  56435"))
    lines.insert(at, "com.datastax.driver.core.exceptions.OperationTimedOutException: [/127.0.0.1] timed out")
    lines.insert(at, "  56000          9.43 |  56441")          # a row cut in half by interleaving
    result = parse_tlp("\n".join(lines) + "\n")
    assert result.complete is True
    assert result.skipped_lines == clean.skipped_lines + 2
    assert [w.line_no for w in result.warnings if w.line_no] == [at + 1]
    assert result.runs[0].summary.equals(clean.runs[0].summary)
    assert len(result.runs[0].intervals) == len(clean.runs[0].intervals)


def test_preamble_only_run_is_partial() -> None:
    text = ("$ bin/tlp-stress run KeyValue -n 10000\nCreating tlp_stress: \n"
            "Executing 10000 operations with consistency level LOCAL_ONE\nConnected\n")
    result = parse_tlp(text)
    assert result.complete is False and result.runs[0].intervals.empty
    assert result.runs[0].manifest["parameters"]["operations"] == 10000


def test_row_before_any_header_is_warned() -> None:
    text = ("   624          35.88             0 |     597          34.79             0\n"
            "$ bin/tlp-stress run KeyValue\nStress complete, 1.\n")
    result = parse_tlp(text)
    assert result.warnings[0].line_no == 1 and "column header line" in result.warnings[0].expected


def test_a_new_group_line_without_its_column_line_does_not_reuse_old_columns() -> None:
    lines = (TLP / "tlp-stress_4.0.0_keyvalue_field-book_1M-ops.txt").read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith(" 474395"))
    lines.insert(at, "                  Writes                                    Reads                  Errors")
    result = parse_tlp("\n".join(lines) + "\n")
    assert [w.line_no for w in result.warnings if w.line_no] == [at + 2, at + 3, at + 4]
    assert result.runs[0].summary.set_index("op").loc["write", "count"] == 443057


def test_ansi_colours_and_decimal_commas_are_read() -> None:
    text = ("$ bin/tlp-stress run KeyValue\n"
            "                  \x1b[34mWrites\x1b[0m                                    \x1b[34mReads\x1b[0m"
            "                  Errors\n"
            "  \x1b[4mCount\x1b[0m  \x1b[4mLatency (p99)\x1b[0m  \x1b[4m1min (req/s)\x1b[0m |   Count  Latency (p99)"
            "  1min (req/s) |   Count  1min (errors/s)\n"
            "   5090          35,39        12,5 |    4910          33,67             0 |       2                0,1\n"
            "Stress complete, 1.\n")
    s = parse_tlp(text).runs[0].summary.set_index("op")
    assert s.loc["write", "latency_p99_ms"] == 35.39 and s.loc["write", "rate_ewma_ops_s"] == 12.5
    assert s.loc["total", "errors"] == 2 and s.loc["total", "error_rate_ewma_s"] == 0.1


# ---- fuzz ----------------------------------------------------------------------------------------



FUZZ_NAMES = sorted(CASES)


@settings(max_examples=FUZZ, deadline=None)
@given(which=st.integers(0, len(FUZZ_NAMES) - 1),
       ops=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 10_000), st.text(min_size=1, max_size=40)),
                    min_size=1, max_size=8))
def test_fuzz_mutated_fixtures_parse_or_raise_parse_error(which: int, ops: list[tuple[int, int, str]]) -> None:
    text = mutate_lines((TLP / FUZZ_NAMES[which]).read_text().splitlines(), ops)
    try:
        result = parse_tlp(text)
    except ParseError:
        return
    assert isinstance(result, ParseResult)


def pd_isna(value: object) -> bool:
    import pandas as pd
    return bool(pd.isna(value))


