"""cassandra-stress parser on early 2.1 output (2.1.0 to about 2.1.6): interval rows with no op-type
column, the auto-rate table with 'N threads' ids, Results blocks without per-op brackets.

Fixtures: tests/fixtures/cassandra-stress-2.1-early (real Apache 2.1.3 cassandra-stress output; each
sidecar names its source and the figures). Cases the fixtures lack (a header line before the rows,
the 2.1 betas' 12-column header, a damaged or cut row) are built from the fixtures' own lines plus
the header as 2.1.x printed it (StressMetrics: 'total ops , adj row/s,    op/s, ...'), marked as such.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd
import pytest

from cassperf.parsers import detect, formats, parse
from cassperf.parsers.base import ParseResult
from cassperf.parsers.cassandra_stress import parse_stress_log
from cassperf.results.model import INTERVAL_COLUMNS
from tests.fuzzing import FUZZ_EXAMPLES, fuzz_parser, mutated

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "cassandra-stress-2.1-early"
ROWS_A = "write_rows_t9-16_FRAGMENT_scylla-issue187.txt"
ROWS_B = "write_rows_t45-52_FRAGMENT_scylla-issue187.txt"
WRITE = "write_n100000_2.1.3_edison-blog.txt"
READ = "read_n100000_autorate_2.1.3_edison-blog.txt"
ALL = [ROWS_A, ROWS_B, WRITE, READ]

#: the 2.1.x header (StressMetrics.HEADFORMAT/HEADMETRICS of 2.1.3), for the built cases
HEADER_21 = ("total ops , adj row/s,    op/s,    pk/s,   row/s,    mean,     med,     .95,     .99,    .999,     max,"
             "   time,   stderr,  gc: #,  max ms,  sum ms,  sdv ms,      mb")


def text_of(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=None)
def parsed(name: str) -> ParseResult:
    return parse_stress_log(text_of(name), name)


@pytest.mark.parametrize("name", ALL)
def test_each_fixture_is_detected_by_content_as_cassandra_stress_only(name: str) -> None:
    text = text_of(name)
    assert [f.name for f in formats() if f.sniff(text[:65536])] == ["cassandra-stress"]
    assert detect(text, name).name == "cassandra-stress"
    assert parse(HERE / name).format == "cassandra-stress"


# --- header-less early rows (scylladb issue #187) -------------------------------------------------

def test_early_rows_without_a_header_take_the_2_1_columns_by_field_count_and_op_total() -> None:
    result = parsed(ROWS_A)
    (run,) = result.runs
    assert run.manifest["format_generation"] == "2.1-early"
    iv = run.intervals
    assert list(iv.columns[:len(INTERVAL_COLUMNS)]) == list(INTERVAL_COLUMNS)
    assert len(iv) == 8 and set(iv["op"]) == {"total"}
    assert list(iv["time_s"]) == [9.2, 10.2, 11.2, 12.2, 13.3, 14.3, 15.3, 16.3]
    assert list(iv["count"]) == [514369, 570127, 627730, 685850, 742949, 799815, 857150, 914897]
    first = iv.iloc[0].to_dict()
    # 514369    ,     60109,   57871,   57871,   57871,     0.3,     0.2,     0.4,     0.5,     0.8,    38.0,    9.2,  0.01455, 0, 0, 0, 0, 0
    assert (first["adj_row_rate_s"], first["rate_ops_s"], first["partition_rate_s"], first["row_rate_s"]) == (
        60109, 57871, 57871, 57871)
    assert (first["latency_mean_ms"], first["latency_p50_ms"], first["latency_p95_ms"], first["latency_p99_ms"],
            first["latency_p999_ms"], first["latency_max_ms"]) == (0.3, 0.2, 0.4, 0.5, 0.8, 38.0)
    assert (first["rate_stderr_ratio"], first["gc_count"], first["gc_max_ms"], first["gc_mb"]) == (0.01455, 0, 0, 0)
    assert pd_isna(first["errors"])                      # early 2.1 had no errors column
    assert not result.complete and not run.complete
    assert [(w.line_no, w.expected.split(";")[0]) for w in result.warnings] == [
        (1, "an interval header before the first row"),
        (8, "a Results block after the interval rows")]
    assert "assumed the early 2.1.x columns by the row's field count" in result.warnings[0].expected


def pd_isna(value: object) -> bool:
    return bool(pd.isna(value))


def test_the_second_fragment_keeps_adj_row_rate_apart_from_op_rate() -> None:
    (run,) = parsed(ROWS_B).runs
    iv = run.intervals
    assert list(iv["adj_row_rate_s"][:3]) == [60524, 60630, 57138]
    assert list(iv["rate_ops_s"][:3]) == [57770, 60630, 57138]
    assert (iv["count"].iloc[-1], iv["rate_ops_s"].iloc[-1], iv["time_s"].iloc[-1]) == (2623028, 61288, 51.9)


def test_with_the_2_1_header_before_them_the_rows_read_the_same_without_a_header_warning() -> None:
    text = HEADER_21 + "\n" + text_of(ROWS_A)         # built: the fixture's rows under 2.1.3's header line
    result = parse_stress_log(text, "with-header.log")
    (run,) = result.runs
    assert [w.line_no for w in result.warnings] == [9]  # only: no Results after the rows
    assert run.intervals[["count", "rate_ops_s", "adj_row_rate_s", "latency_max_ms"]].equals(
        parsed(ROWS_A).runs[0].intervals[["count", "rate_ops_s", "adj_row_rate_s", "latency_max_ms"]])
    assert run.manifest["format_generation"] == "2.1-early"


def test_the_2_1_beta_twelve_column_header_is_read_by_name() -> None:
    # built: the betas' header (StressMetrics 2.1.0-beta) and rows rendered with its ROWFORMAT
    # '%-10d,%8.0f,%8.0f,%8.0f,%8.1f,%8.1f,%8.1f,%8.1f,%8.1f,%8.1f,%7.1f,%9.5f' from the fixture's figures
    text = ("ops       ,    op/s,adj op/s,   key/s,    mean,     med,     .95,     .99,    .999,     max,   time,   stderr\n"
            "514369    ,   57871,   60109,   57871,     0.3,     0.2,     0.4,     0.5,     0.8,    38.0,    9.2,  0.01455\n")
    (run,) = parse_stress_log(text, "beta.log").runs
    row = run.intervals.iloc[0].to_dict()
    assert (row["count"], row["rate_ops_s"], row["adj_rate_ops_s"], row["partition_rate_s"], row["time_s"]) == (
        514369, 57871, 60109, 57871, 9.2)


def test_a_damaged_early_row_is_skipped_with_a_warning_naming_its_line() -> None:
    lines = text_of(ROWS_A).split("\n")
    lines[3] = lines[3].replace("59999", "59x99")          # built: one damaged row (line 4)
    result = parse_stress_log("\n".join(lines), "bad.log")
    assert [r.line_no for r in result.warnings if "numeric fields" in r.expected] == [4]
    assert 685850 not in list(result.runs[0].intervals["count"])
    assert len(result.runs[0].intervals) == 7


def test_an_early_row_cut_at_the_end_is_skipped_and_the_run_is_incomplete() -> None:
    text = text_of(ROWS_B)[:-60]                           # built: the last row cut
    result = parse_stress_log(text, "cut.log")
    assert not result.complete
    assert any(w.line_no == 8 and "numeric fields" in w.expected for w in result.warnings)
    assert len(result.runs[0].intervals) == 7


# --- the Edison blog: early Results block, early auto-rate table ----------------------------------

def test_an_early_results_block_without_partitions_and_errors_is_complete() -> None:
    result = parsed(WRITE)
    assert result.complete
    assert [(w.line_no, w.line) for w in result.warnings] == [(10, "...")]   # the author's elision
    (run,) = result.runs
    assert (run.manifest["threads"], run.manifest["ops"]) == (200, ["WRITE"])
    assert run.intervals.empty
    t = run.summary.set_index("op").loc["total"]
    # op rate 1922 ... latency max 1855.3, total gc count 4, total gc mb 569, Total operation time 00:00:52
    assert (t["rate_ops_s"], t["partition_rate_s"], t["row_rate_s"]) == (1922, 1922, 1922)
    assert (t["latency_mean_ms"], t["latency_p50_ms"], t["latency_p95_ms"], t["latency_p99_ms"],
            t["latency_p999_ms"], t["latency_max_ms"]) == (104.0, 87.9, 176.9, 381.7, 696.5, 1855.3)
    assert (t["gc_count"], t["gc_memory_bytes"], t["gc_avg_ms"], t["duration_s"]) == (4, 569 * (1 << 20), 474, 52)
    assert pd_isna(t["partitions"]) and pd_isna(t["errors"])


def test_a_3x_results_block_cut_before_total_partitions_is_still_incomplete() -> None:
    # built: the early block with per-op brackets added, as 2.1.7+ printed them, and no partitions line
    text = text_of(WRITE).replace("op rate                   : 1922", "op rate                   : 1922 [WRITE:1922]")
    result = parse_stress_log(text, "cut-results.log")
    assert not result.complete
    assert any("missing: partitions, errors" in w.expected for w in result.warnings)


def test_the_early_auto_rate_table_alone_is_kept_as_a_table_and_marked_incomplete() -> None:
    result = parsed(READ)
    assert result.runs == [] and not result.complete
    assert [(w.line_no, w.line) for w in result.warnings] == [(9, "..."), (None, None)]
    assert result.warnings[1].expected.startswith("interval rows or a Results block for each thread count")
    table = result.tables["thread_summary"]
    assert list(table["threads"]) == [4, 8, 16, 24, 36, 54, 81, 121, 181, 271, 406, 609, 913]
    assert set(table["op"]) == {"total"}
    assert list(table["count"][:2]) == [100000, 100000] and table["count"].iloc[9] == 99688
    assert list(table["rate_ops_s"][[0, 1, 9, 12]]) == [238, 399, 1532, 1501]
    assert list(table["adj_row_rate_s"][[0, 1, 12]]) == [238, 0, 1509]      # '-0' printed for 8 threads


# --- fuzz --------------------------------------------------------------------------------------

def test_fuzz_mutated_early_fixtures_give_a_result_or_a_parse_error() -> None:
    def check(result: ParseResult) -> None:
        for run in result.runs:
            if not run.complete:
                assert not result.complete

    tried = fuzz_parser(parse_stress_log, mutated([text_of(n) for n in ALL]), "fuzz.log", check)
    assert tried == FUZZ_EXAMPLES
