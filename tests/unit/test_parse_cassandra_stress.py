"""cassandra-stress stdout parser ("cassandra-stress").

Expected figures come from the fixture sidecars (tests/fixtures/public/cassandra-stress/*.source.txt)
and, where a sidecar names a figure only in passing, from the tool's own Results block or
auto-rate table in the fixture (quoted beside the assertion). Two layouts the fixtures lack are
covered by constructed samples, marked as such: per-op interval rows of a mixed run and a
fixed-rate run; their rows are rendered with the tool's own format string (StressMetrics.ROWFORMAT).
"""

from __future__ import annotations

import functools
import math
from functools import partial
from pathlib import Path

import pytest
from hypothesis import strategies as st

from cassperf.errors import ParseError
from cassperf.parsers import detect, format_by_name, read_text
from cassperf.parsers.base import ParseResult
from cassperf.parsers.cassandra_stress import parse_stress_log, sniff
from cassperf.parsers.cassandra_stress_settings import command_from_echo, rate_and_latency_type
from cassperf.parsers.cassandra_stress_summary import number
from cassperf.results.model import INTERVAL_COLUMNS, SUMMARY_COLUMNS
from tests.conftest import public_fixture, public_fixture_text
from tests.fuzzing import FUZZ_EXAMPLES, fuzz_parser

BLOG21 = "cs_2.1-era_write_n10000_blog_FRAGMENT_thelastpickle2015.txt"
K8S = "cs_3.11.5_write+mixed_results_x6_FRAGMENT_akirillov-cassandra-on-k8s.txt"
BIGTABLE = "cs_3.11_user_bigtable_autorate_NoHostAvailable-errors_ru-locale_kmwork.log"
RU = "cs_3.11_user_insert+simple1_autorate_ru-locale-decimal-comma_kmwork.log"
V41 = "cs_4.1.11_write_n25000_threads3_full_crystalloide.txt"
PKB = "cs_4x_results_block_FRAGMENT_pkb_test.txt"
DSE_W = "cs_dse51_user_insert_autorate_RTFAP2_write.log"
DSE_R = "cs_dse51_user_singletrans_autorate_RTFAP2_read.log"
ALL = [BLOG21, K8S, BIGTABLE, RU, V41, PKB, DSE_W, DSE_R]

GIB, MIB = 1 << 30, 1 << 20


cs_path = partial(public_fixture, "cassandra-stress")
cs_text = partial(public_fixture_text, "cassandra-stress")


@functools.lru_cache(maxsize=None)
def parsed(name: str) -> ParseResult:
    """Parsed once per session (tests only read the result)."""
    return parse_stress_log(cs_text(name), name)


def total(run) -> dict:  # noqa: ANN001 - a Run
    rows = run.summary[run.summary["op"] == "total"]
    assert len(rows) == 1
    return rows.iloc[0].to_dict()


def op_row(run, op: str) -> dict:  # noqa: ANN001
    rows = run.summary[run.summary["op"] == op]
    assert len(rows) == 1, list(run.summary["op"])
    return rows.iloc[0].to_dict()


# --- schema and detection ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL)
def test_every_fixture_is_detected_as_cassandra_stress_and_keeps_the_schemas(name: str) -> None:
    text = cs_text(name)
    assert sniff(text[:65536])
    assert detect(text, name).name == "cassandra-stress"
    result = format_by_name("cassandra-stress").parse(text, name)
    assert result.format == "cassandra-stress" and result.runs
    for run in result.runs:
        assert list(run.intervals.columns[:len(INTERVAL_COLUMNS)]) == list(INTERVAL_COLUMNS)
        assert list(run.summary.columns[:len(SUMMARY_COLUMNS)]) == list(SUMMARY_COLUMNS)
        assert run.manifest["tool"] == "cassandra-stress" and run.manifest["tool_version"] is None
        assert run.manifest["count_is_total"] is True


#: (fixture, run index, Op rate, Total operation time s, Latency mean ms or None, Total partitions or None),
#: each figure as the sidecar states it
SIDECAR_FIGURES = [
    (BLOG21, 0, 16386, 0, 0.6, 10_000),
    (K8S, 0, 1036, 965, 48.2, None),
    (K8S, 1, 1084, 922, 46.1, 1_000_000),
    (K8S, 5, 793, 1261, None, None),
    (BIGTABLE, 0, 0, 196, None, None),
    (RU, 0, 24, 2, None, None),
    (V41, 0, 483, 51, 6.1, 25_000),
    (PKB, 0, 255886, 781, 0.6, 200_000_000),
    (DSE_W, 0, 9645, 10, 0.4, 100_000),
    (DSE_W, 1, 14555, 6, None, None),
    (DSE_R, 9, 29260, 81, None, None),
]


@pytest.mark.parametrize(("name", "index", "rate", "duration", "mean", "partitions"), SIDECAR_FIGURES,
                         ids=[f"{n.split('_')[1]}-{i}" for n, i, *_ in SIDECAR_FIGURES])
def test_summary_figures_agree_with_the_sidecars(name: str, index: int, rate: int, duration: int,
                                                 mean: float | None, partitions: int | None) -> None:
    t = total(parsed(name).runs[index])
    assert t["rate_ops_s"] == rate and t["duration_s"] == duration
    if mean is not None:
        assert t["latency_mean_ms"] == mean
    if partitions is not None:
        assert t["partitions"] == partitions


# --- 2.1 era -------------------------------------------------------------------------------------

def test_2_1_era_lowercase_results_and_header_with_comma_after_type() -> None:
    result = parsed(BLOG21)
    assert len(result.runs) == 1 and result.complete and result.warnings == []
    assert result.skipped_lines == 1                     # 'INFO  21:41:38 New Cassandra host ... added'
    run = result.runs[0]
    assert run.manifest["format_generation"] == "2.1"
    assert run.manifest["threads"] == 10                 # 'Running WRITE with 10 threads for 10000 iteration'
    assert run.manifest["latency_type"] == "unknown"     # no settings dump, no command line in the output
    assert run.manifest["cluster"]["hosts"] == [{"datacenter": "datacenter1", "host": "localhost/127.0.0.1",
                                                 "rack": "rack1"}]
    t = total(run)
    # sidecar: op rate 16386, latency mean 0.6, median 0.4, p95 1.3, p99 3.4, p99.9 23.4, max 25.7,
    # Total partitions 10000, errors 0, total gc count 1, total gc mb 308, avg gc 17 ms, time 00:00:00
    assert (t["rate_ops_s"], t["partition_rate_s"], t["row_rate_s"]) == (16386, 16386, 16386)
    assert (t["latency_mean_ms"], t["latency_p50_ms"], t["latency_p95_ms"], t["latency_p99_ms"],
            t["latency_p999_ms"], t["latency_max_ms"]) == (0.6, 0.4, 1.3, 3.4, 23.4, 25.7)
    assert (t["partitions"], t["errors"], t["duration_s"]) == (10000, 0, 0.0)
    assert (t["gc_count"], t["gc_memory_bytes"], t["gc_avg_ms"], t["gc_time_s"], t["gc_sdv_ms"]) == (
        1, 308 * MIB, 17, 0, 0)
    assert t["count"] == 10000                           # the interval row's cumulative total ops
    w = op_row(run, "WRITE")
    assert (w["rate_ops_s"], w["latency_p999_ms"], w["partitions"], w["count"]) == (16386, 23.4, 10000, 10000)
    row = run.intervals.iloc[0].to_dict()
    assert len(run.intervals) == 1
    assert row["op"] == "total" and row["count"] == 10000 and row["time_s"] == 0.6
    assert (row["rate_ops_s"], row["latency_p999_ms"], row["gc_count"], row["gc_max_ms"], row["gc_mb"]) == (
        16386, 23.4, 1, 17, 308)


# --- 3.11.5 Results-only fragments ------------------------------------------------------------------

K8S_EXPECTED = [  # (op rate, duration s, per-op op rates) from the sidecar, in block order
    (1036, 16 * 60 + 5, {"WRITE": 1036}),
    (1084, 15 * 60 + 22, {"READ": 813, "WRITE": 271}),
    (582, 28 * 60 + 37, {"WRITE": 582}),
    (620, 26 * 60 + 52, {"READ": 465, "WRITE": 156}),
    (734, 22 * 60 + 42, {"WRITE": 734}),
    (793, 21 * 60 + 1, {"READ": 595, "WRITE": 198}),
]


def test_results_only_fragments_become_one_run_per_block_with_per_op_rows() -> None:
    result = parsed(K8S)
    assert result.complete and result.warnings == [] and result.skipped_lines == 0
    assert len(result.runs) == 6
    for run, (rate, duration, per_op) in zip(result.runs, K8S_EXPECTED):
        assert run.intervals.empty and run.complete
        assert run.manifest["latency_type"] == "unknown"
        assert list(run.summary["op"]) == [*per_op, "total"]
        t = total(run)
        assert t["rate_ops_s"] == rate and t["duration_s"] == duration and t["partitions"] == 1_000_000
        assert t["gc_memory_bytes"] == 0 and math.isnan(t["gc_avg_ms"])   # 'Avg GC time : NaN ms'
        assert run.summary["count"].isna().all()                            # no op count is printed
        for op, op_rate in per_op.items():
            assert op_row(run, op)["rate_ops_s"] == op_rate
    mixed = result.runs[1]
    assert op_row(mixed, "READ")["partitions"] == 749_941 and op_row(mixed, "WRITE")["partitions"] == 250_059
    assert total(mixed)["latency_mean_ms"] == 46.1 and op_row(mixed, "READ")["latency_mean_ms"] == 48.7
    last = result.runs[5]      # 'Latency max : 1086.3 ms [READ: 1,086.3 ms, WRITE: 983.0 ms]'
    assert total(last)["latency_max_ms"] == 1086.3
    assert op_row(last, "READ")["latency_max_ms"] == 1086.3 and op_row(last, "WRITE")["latency_max_ms"] == 983.0


# --- 3.x, Russian locale -------------------------------------------------------------------------------

def test_a_thread_count_past_64_bits_is_a_warning_naming_the_line_not_an_overflow() -> None:
    # found by the fuzz test: " 99999999999999999999999994 threadCount, insert, ..." raised
    # OverflowError from inside pandas
    text = cs_text(RU).replace(" 4 threadCount, insert,", " 99999999999999999999999994 threadCount, insert,")
    result = parse_stress_log(text, "ru.log")
    line_no = text.splitlines().index(next(l for l in text.splitlines() if "99999999999999999999999994" in l)) + 1
    warned = [str(w) for w in result.warnings if "thread count" in str(w)]
    assert len(warned) == 1 and warned[0].startswith(
        f"ru.log:{line_no}: expected a thread count up to 9223372036854775807 before 'threadCount'; "
        f"got ' 99999999999999999999999994 threadCount, insert,  "), warned
    table = result.tables["thread_summary"]
    assert table["threads"].isna().tolist() == [True] + [False] * 11 and table["threads"].iloc[1] == 4


def test_decimal_comma_locale_auto_rate_ramp_with_thread_summary_table() -> None:
    result = parsed(RU)
    assert result.complete and result.warnings == []
    # 5 shell lines before the output, 5 JDK 'WARNING:' lines, 3 shell lines after END
    assert result.skipped_lines == 13
    runs = result.runs
    assert [r.manifest["threads"] for r in runs] == [4, 8, 16, 24, 36, 54]
    assert [r.labels for r in runs][0] == {"threads": "4"}
    # Results blocks: Op rate 24 [insert: 24], 26 [insert: 43], 30, 33, 36, 23 [insert: 35]
    assert [total(r)["rate_ops_s"] for r in runs] == [24, 26, 30, 33, 36, 23]
    assert [op_row(r, "insert")["rate_ops_s"] for r in runs] == [24, 43, 30, 33, 36, 35]
    assert [r.manifest["improvement_pct"] for r in runs] == [None, 11, 15, 8, 9, -35]
    first = runs[0]
    t = total(first)
    assert t["partition_rate_s"] == 35298 and t["row_rate_s"] == 35298     # '35 298 pk/s' (no-break space)
    assert (t["latency_mean_ms"], t["latency_p50_ms"], t["latency_p95_ms"], t["latency_p99_ms"],
            t["latency_p999_ms"], t["latency_max_ms"]) == (121.0, 111.1, 233.6, 298.8, 310.1, 310.1)
    assert t["partitions"] == 100_000 and t["duration_s"] == 2
    assert t["gc_memory_bytes"] == pytest.approx(1.205 * GIB)            # 'Total GC memory : 1,205 GiB'
    assert (t["gc_count"], t["gc_time_s"], t["gc_avg_ms"], t["gc_sdv_ms"]) == (4, 0.2, 51.3, 5.0)
    assert t["count"] == 67 and op_row(first, "insert")["count"] == 67   # '4 threadCount, total, 67, ...'
    assert total(runs[4])["latency_p95_ms"] == 1286.6                      # '1286,6 ms [insert: 1 286,6 ms]'
    assert op_row(runs[4], "insert")["latency_p95_ms"] == 1286.6
    iv = first.intervals
    assert list(iv["count"]) == [2, 33, 67]
    assert list(iv["latency_mean_ms"]) == [251.4, 132.3, 103.0]            # '251,4', '132,3', '103,0'
    assert list(iv["time_s"]) == [1.0, 2.0, 2.8]
    assert list(iv["rate_stderr_ratio"]) == [0.0, 0.6248, 0.37634]
    assert runs[4].intervals["rate_stderr_ratio"].iloc[-1] == -1.41537     # negative stderr
    assert list(iv["gc_total_ms"]) == [58, 147, 0] and list(iv["gc_mb"]) == [309, 925, 0]
    for r in runs:
        assert r.manifest["latency_type"] == "service" and r.manifest["rate"]["mode"] == "auto"
        assert r.manifest["command_source"] == "echo"
        assert r.manifest["command"] == ('user profile="file:///home/lin/work-lanit/my_datana_cassandra/etc/'
                                         'kostya-one-column-table-cassandra-stress.yaml" n=100000 '
                                         '"ops(insert=500,simple1=1)" no-warmup')
        assert r.manifest["java_version"] == "13.0.2"
        assert r.manifest["settings"]["Command"]["Command Ratios"] == "{insert=500.0, simple1=1.0}"
    table = result.tables["thread_summary"]
    assert list(table["threads"]) == [4, 4, 8, 8, 16, 16, 24, 24, 36, 36, 54, 54]
    assert list(table["op"]) == ["insert", "total"] * 6
    # sidecar: 4 threadCount insert op/s 24, 8 threadCount total 26, 16: 30, 24: 33, 36: 36, 54 total 23
    assert list(table.loc[table["op"] == "total", "rate_ops_s"]) == [24, 26, 30, 33, 36, 23]
    assert table["rate_ops_s"].iloc[0] == 24 and table["rate_stderr_ratio"].iloc[8] == -1.41537
    assert {"latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "latency_p999_ms",
            "latency_max_ms", "partition_rate_s", "row_rate_s", "duration_s", "count"} <= set(table.columns)
    assert table["latency_max_ms"].iloc[-1] == 1684.0 and table["duration_s"].iloc[-1] == 2.9


def test_no_host_available_errors_are_counted_per_run_and_the_cut_run_is_incomplete() -> None:
    result = parsed(BIGTABLE)
    runs = result.runs
    assert len(runs) == 3 and not result.complete
    assert [r.complete for r in runs] == [True, True, False]
    nohost = "com.datastax.driver.core.exceptions.NoHostAvailableException"
    assert [r.manifest["client_exceptions"] for r in runs] == [{nohost: 3}, {nohost: 64}, {nohost: 67}]
    # 134 NoHostAvailable + 10 ERROR + 1 WARN driver lines + 5 JDK WARNING + 6 shell lines before the
    # output ('./tools/bin/cassandra-stress: 2: ...: expert: not found' among them) + 3 after it (^Z ...)
    assert result.skipped_lines == 159
    exc_warnings = [w for w in result.warnings if nohost in w.expected]
    assert [w.line_no for w in exc_warnings] == [1150, 1192, 1323]
    cut = [w for w in result.warnings if "Results block" in w.expected]
    assert len(cut) == 1 and cut[0].line_no == 1402        # last interval row of the 16-thread step
    assert [w.line for w in result.warnings if w.line_no in (1412, 1413, 1414)] == [
        "^Z", "[1]+  Остановлен    ./my-test-column-big_100K_records.sh", "lin@lin-pc:~/apps/cassandra$"]
    t = total(runs[0])
    # sidecar: first step (4 threads) Op rate 0 op/s, Total operation time 00:03:16
    assert t["rate_ops_s"] == 0 and t["duration_s"] == 196
    assert t["partition_rate_s"] == 508 and op_row(runs[0], "insert")["partition_rate_s"] == 535
    assert t["latency_mean_ms"] == 11608.7 and op_row(runs[0], "insert")["latency_mean_ms"] == 11608.7
    assert t["gc_memory_bytes"] == pytest.approx(26.584 * GIB) and t["gc_time_s"] == 66.1
    assert total(runs[1])["gc_avg_ms"] == 1188.1 and total(runs[1])["gc_sdv_ms"] == 3220.9   # '1 188,1 ms'
    assert total(runs[1])["duration_s"] == 197
    iv = runs[0].intervals
    assert len(iv) == 35 and iv["count"].iloc[-1] == 67 and iv["time_s"].iloc[-1] == 196.9
    assert iv["latency_mean_ms"].iloc[0] == 10305.4 and iv["rate_stderr_ratio"].iloc[0] == -0.95346
    assert len(runs[1].intervals) == 39
    assert len(runs[2].intervals) == 12 and runs[2].intervals["count"].iloc[-1] == 49 and runs[2].summary.empty
    assert "thread_summary" not in result.tables


# --- 4.1 ---------------------------------------------------------------------------------------------

def test_4_1_wide_type_column_crlf_and_interleaved_driver_warning() -> None:
    result = parsed(V41)
    assert result.complete and result.warnings == []
    assert result.skipped_lines == 1                  # "WARN  15:43:31,966 Query '...' generated server side warning(s)"
    run = result.runs[0]
    m = run.manifest
    assert m["format_generation"] == "4.x" and m["threads"] == 3
    assert m["latency_type"] == "service" and m["rate"]["mode"] == "threads"      # 'OpsPer Sec: 0'
    assert m["command_source"] == "settings"
    assert m["command"] == "write n=25000 no-warmup cl=ONE -rate threads=3 -node 10.17.64.5"
    assert m["settings"]["Mode"]["Protocol Version"] == "V5" and m["settings_complete"] is True
    assert m["cluster"]["name"] == "archivage-db" and len(m["cluster"]["hosts"]) == 2
    t = total(run)
    # sidecar: Op rate 483, mean 6.1, median 0.6, p95 83.8, p99 92.8, p99.9 100.0, max 193.5, partitions
    # 25,000, errors 0, GC count 25, GC memory 970.863 MiB, GC time 0.4 s, Avg 17.8, StdDev 31.7, 00:00:51
    assert (t["rate_ops_s"], t["latency_mean_ms"], t["latency_p50_ms"], t["latency_p95_ms"], t["latency_p99_ms"],
            t["latency_p999_ms"], t["latency_max_ms"]) == (483, 6.1, 0.6, 83.8, 92.8, 100.0, 193.5)
    assert (t["partitions"], t["errors"], t["gc_count"], t["gc_time_s"], t["gc_avg_ms"], t["gc_sdv_ms"],
            t["duration_s"]) == (25000, 0, 25, 0.4, 17.8, 31.7, 51)
    assert t["gc_memory_bytes"] == pytest.approx(970.863 * MIB)
    assert t["count"] == 25000 and op_row(run, "WRITE")["count"] == 25000
    iv = run.intervals
    assert len(iv) == 52 and (iv["op"] == "total").all()
    assert list(iv["count"].iloc[:3]) == [4, 164, 401] and iv["count"].iloc[-1] == 25000
    assert iv["time_s"].iloc[-1] == 51.8 and iv["latency_max_ms"].iloc[1] == 193.5
    gc_row = iv.iloc[3].to_dict()                     # time 4.0: 'gc: # 1, max ms 3, sum ms 3, sdv 0, mb 37'
    assert (gc_row["time_s"], gc_row["gc_count"], gc_row["gc_max_ms"], gc_row["gc_total_ms"], gc_row["gc_mb"]) == (
        4.0, 1, 3, 3, 37)
    assert str(iv["count"].dtype) == "Int64" and str(iv["op"].dtype) == "string"


def test_4x_results_fragment_with_trailing_junk_after_the_duration() -> None:
    result = parsed(PKB)
    assert result.complete and len(result.runs) == 1
    t = total(result.runs[0])
    # PKB's expected values: 255886 op/pk/row rate, mean 0.6, median 0.4, p95 0.6, p99 0.9, p99.9 68.4,
    # max 258.7, partitions 200000000, errors 0, total operation time 781 s (00:13:01)
    assert (t["rate_ops_s"], t["partition_rate_s"], t["row_rate_s"]) == (255886, 255886, 255886)
    assert (t["latency_mean_ms"], t["latency_p50_ms"], t["latency_p95_ms"], t["latency_p99_ms"],
            t["latency_p999_ms"], t["latency_max_ms"]) == (0.6, 0.4, 0.6, 0.9, 68.4, 258.7)
    assert (t["partitions"], t["errors"], t["duration_s"], t["gc_memory_bytes"]) == (200_000_000, 0, 781, 0)
    assert len(result.warnings) == 1
    w = result.warnings[0]
    assert w.line_no == 18 and w.line == 'Total operation time : 00:13:01"""' and "'\"\"\"'" in w.expected


# --- DSE 5.1 auto-rate ramps ------------------------------------------------------------------------------

DSE_W_RATES = [9645, 14555, 16016, 20935, 20867, 22326, 24068, 28206, 26135, 24644, 28150, 21659]
DSE_R_RATES = [10068, 14222, 17214, 19564, 21635, 23615, 25455, 27233, 28808, 29260, 29115, 28080]
THREADS = [4, 8, 16, 24, 36, 54, 81, 121, 181, 271, 406, 609]


def test_dse51_write_ramp_one_run_per_thread_count_agreeing_with_its_table() -> None:
    result = parsed(DSE_W)
    assert result.complete and result.warnings == [] and result.skipped_lines == 0
    runs = result.runs
    assert [r.manifest["threads"] for r in runs] == THREADS
    assert [total(r)["rate_ops_s"] for r in runs] == DSE_W_RATES
    assert [op_row(r, "insert")["rate_ops_s"] for r in runs] == DSE_W_RATES
    assert [r.manifest["improvement_pct"] for r in runs] == [None, 51, 10, 31, 0, 7, 8, 17, -7, -6, 14, -23]
    t4, t8 = total(runs[0]), total(runs[1])
    # sidecar: 4 threads -> mean 0.4 ms, max 286.8 ms, partitions 100,000, GC count 1, GC memory 1.989 GiB,
    # 00:00:10; 8 threads -> 99.9th 5.6 ms, GC memory 1.915 GiB, 00:00:06, 'Improvement over 4 threadCount: 51%'
    assert (t4["latency_mean_ms"], t4["latency_max_ms"], t4["partitions"], t4["gc_count"], t4["duration_s"]) == (
        0.4, 286.8, 100_000, 1, 10)
    assert t4["gc_memory_bytes"] == pytest.approx(1.989 * GIB)
    assert (t8["latency_p999_ms"], t8["duration_s"]) == (5.6, 6)
    assert t8["gc_memory_bytes"] == pytest.approx(1.915 * GIB)
    for r in runs:   # the last interval's cumulative total ops equals the table's (checked: no warning)
        assert r.intervals["count"].iloc[-1] == 100_000 and total(r)["count"] == 100_000
        assert r.manifest["latency_type"] == "service" and r.manifest["rate"]["mode"] == "auto"
        assert r.manifest["settings"]["Mode"]["Protocol Version"] == "DSE_V1"
    assert [len(r.intervals) for r in runs] == [11, 7, 7, 5, 5, 5, 5, 4, 4, 5, 4, 5]
    assert runs[0].manifest["command"] == ("user profile=./txn_by_cc_stress.yaml n=100000 ops(insert=1) "
                                           "cl=LOCAL_ONE -rate auto threads>=4 threads<=1000 -node 127.0.0.1")
    table = result.tables["thread_summary"]
    assert len(table) == 24 and list(table["threads"].iloc[::2]) == THREADS
    assert list(table.loc[table["op"] == "total", "rate_ops_s"]) == DSE_W_RATES
    assert table["latency_max_ms"].iloc[-1] == 1141.9 and table["gc_mb"].iloc[0] == 2037


def test_dse51_read_ramp_with_the_settings_dump_cut_at_the_top() -> None:
    result = parsed(DSE_R)
    assert result.complete and result.skipped_lines == 1   # '... illegal reflective ...'-free: the WARNING line
    runs = result.runs
    assert [r.manifest["threads"] for r in runs] == THREADS
    assert [total(r)["rate_ops_s"] for r in runs] == DSE_R_RATES
    assert total(runs[9])["duration_s"] == 81                      # sidecar: 271 thr 29,260 (00:01:21)
    assert len(result.warnings) == 1 and result.warnings[0].line_no == 1 and result.warnings[0].line == "Schema:"
    for r in runs:
        assert r.manifest["settings_complete"] is False and r.manifest["command"] is None
        assert r.manifest["latency_type"] == "service"            # 'Running with N threadCount': auto-rate
        assert r.manifest["settings"]["Schema"]["Keyspace"] == "rtfap"
    assert total(runs[0])["count"] == 342_340 == runs[0].intervals["count"].iloc[-1]   # table: 342340
    assert op_row(runs[0], "singletrans")["count"] == 342_340


# --- consistency checks ------------------------------------------------------------------------------------

def test_a_table_op_count_that_disagrees_with_the_last_interval_row_is_warned_about() -> None:
    text = cs_text(DSE_W)
    row = "  4 threadCount, total,        100000,"
    assert text.count(row) == 1
    result = parse_stress_log(text.replace(row, "  4 threadCount, total,         99999,"), "x.log")
    msgs = [w.expected for w in result.warnings]
    assert len(msgs) == 1 and "(100000)" in msgs[0] and "(99999)" in msgs[0] and "4 threads" in msgs[0]
    assert total(result.runs[0])["count"] == 99_999            # the tool's table figure, not a fix
    assert result.runs[0].warnings and "99999" in result.runs[0].warnings[0]


def test_an_op_rate_that_disagrees_with_the_table_and_a_duration_that_disagrees_with_the_rows() -> None:
    text = cs_text(DSE_W)
    text = text.replace("Op rate                   :    9,645 op/s", "Op rate                   :    9,646 op/s", 1)
    text = text.replace("Total operation time      : 00:00:10", "Total operation time      : 00:00:12", 1)
    result = parse_stress_log(text, "x.log")
    msgs = [w.expected for w in result.warnings]
    assert len(msgs) == 2
    assert "Op rate (9646)" in msgs[0] and "(9645)" in msgs[0]
    assert "Total operation time (12 s)" in msgs[1] and "(10.4 s)" in msgs[1]


# --- constructed samples: per-op interval rows, fixed rate --------------------------------------------------

ROWFORMAT_3X = ("%-10s%10d,%8.0f,%8.0f,%8.0f,%8.1f,%8.1f,%8.1f,%8.1f,%8.1f,%8.1f,%7.1f,%9.5f,%7d,%7.0f,%8.0f,"
                "%8.0f,%8.0f,%8.0f")
HEADER_3X = ("type       total ops,    op/s,    pk/s,   row/s,    mean,     med,     .95,     .99,    .999,     max,"
             "   time,   stderr, errors,  gc: #,  max ms,  sum ms,  sdv ms,      mb")


def _row(op: str, count: int, rate: float, mean: float, time_s: float) -> str:
    return ROWFORMAT_3X % (op + ",", count, rate, rate, rate, mean, mean, mean, mean, mean, mean, time_s, 0.0,
                           0, 0, 0, 0, 0, 0)


MIXED = "\n".join([
    "Running [READ, WRITE] with 4 threads for 1000 iteration",   # CONSTRUCTED sample (3.x layout)
    HEADER_3X,
    _row("READ", 300, 300, 1.5, 1.1), _row("WRITE", 100, 100, 0.5, 1.0), _row("total", 400, 400, 1.2, 1.0),
    "WARN  10:00:00,000 Some driver warning, with, commas",
    _row("READ", 750, 450, 1.4, 2.0), _row("WRITE", 250, 150, 0.6, 2.0), _row("total", 1000, 600, 1.2, 2.0),
    "", "",
    "Results:",
    "Op rate                   :      500 op/s  [READ: 375 op/s, WRITE: 125 op/s]",
    "Partition rate            :      500 pk/s  [READ: 375 pk/s, WRITE: 125 pk/s]",
    "Row rate                  :      500 row/s [READ: 375 row/s, WRITE: 125 row/s]",
    "Latency mean              :    1.2 ms [READ: 1.4 ms, WRITE: 0.6 ms]",
    "Latency median            :    1.0 ms [READ: 1.2 ms, WRITE: 0.5 ms]",
    "Latency 95th percentile   :    2.0 ms [READ: 2.2 ms, WRITE: 1.0 ms]",
    "Latency 99th percentile   :    3.0 ms [READ: 3.3 ms, WRITE: 1.5 ms]",
    "Latency 99.9th percentile :    4.0 ms [READ: 4.4 ms, WRITE: 2.0 ms]",
    "Latency max               :    5.0 ms [READ: 5.0 ms, WRITE: 2.5 ms]",
    "Total partitions          :      1,000 [READ: 750, WRITE: 250]",
    "Total errors              :          0 [READ: 0, WRITE: 0]",
    "Total GC count            : 0",
    "Total GC memory           : 0.000 KiB",
    "Total GC time             :    0.0 seconds",
    "Avg GC time               :    NaN ms",
    "StdDev GC time            :    0.0 ms",
    "Total operation time      : 00:00:02",
    "", "END", ""])


def test_per_op_interval_rows_of_a_mixed_run_share_their_interval_time() -> None:
    result = parse_stress_log(MIXED, "mixed.log")
    assert result.complete and result.warnings == [] and result.skipped_lines == 1
    run = result.runs[0]
    iv = run.intervals
    assert list(iv["op"]) == ["READ", "WRITE", "total"] * 2
    assert list(iv["time_s"]) == [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]    # READ printed 1.1: its own running time
    assert list(iv["count"]) == [300, 100, 400, 750, 250, 1000]
    assert list(iv["rate_ops_s"]) == [300, 100, 400, 450, 150, 600]
    assert list(run.summary["op"]) == ["READ", "WRITE", "total"]
    assert list(run.summary["count"]) == [750, 250, 1000]
    assert list(run.summary["partitions"]) == [750, 250, 1000]
    assert list(run.summary["rate_ops_s"]) == [375, 125, 500]
    assert run.manifest["ops"] == ["READ", "WRITE"] and run.manifest["threads"] == 4


def test_a_damaged_or_truncated_row_is_skipped_with_a_warning_naming_its_line() -> None:
    lines = MIXED.split("\n")
    assert lines[6].startswith("READ,")
    lines[6] = lines[6].replace("450,", "4x0,")                   # a digit replaced by a letter
    result = parse_stress_log("\n".join(lines), "mixed.log")
    bad = [w for w in result.warnings if w.line_no == 7]
    assert len(bad) == 1 and bad[0].line == lines[6] and "numeric fields" in bad[0].expected
    assert list(result.runs[0].intervals["op"]) == ["READ", "WRITE", "total", "WRITE", "total"]
    cut = "\n".join(MIXED.split("\n")[:6]) + "\n" + _row("total", 1000, 600, 1.2, 2.0)[:40]
    result = parse_stress_log(cut, "cut.log")
    assert not result.complete and not result.runs[0].complete
    assert [w.line_no for w in result.warnings] == [7, 5]        # the cut row; 'no Results block' after line 5
    assert list(result.runs[0].intervals["op"]) == ["READ", "WRITE", "total"]


def test_a_header_printed_again_within_a_run_is_dropped_and_line_numbers_stay_true() -> None:
    lines = MIXED.split("\n")                   # 4.x '-reporting header-frequency=': the header again
    lines.insert(5, HEADER_3X)                  # after the first interval's total row
    assert lines[7].startswith("READ,")
    lines[7] = lines[7].replace("750,", "7x0,")  # a damaged READ row after it: line 8
    result = parse_stress_log("\n".join(lines), "hf.log")
    assert len(result.runs) == 1
    assert list(result.runs[0].intervals["op"]) == ["READ", "WRITE", "total", "WRITE", "total"]
    assert [(w.line_no, w.line) for w in result.warnings] == [(8, lines[7])]


def test_rows_around_a_refused_row_are_kept_in_bulk_with_their_values() -> None:
    body = [_row("total", 100 * i, 100, 1.0, float(i)) for i in range(1, 2001)]
    body[1000] = body[1000].replace("1.0,", "NaN,", 1).replace("100100", "10x100")   # line 1003: refused
    text = "\n".join(["Running WRITE with 4 threads for 200000 iteration", HEADER_3X, *body]) + "\n"
    result = parse_stress_log(text, "big.log")
    iv = result.runs[0].intervals
    assert len(iv) == 1999 and [w.line_no for w in result.warnings][:1] == [1003]
    assert list(iv["count"].iloc[998:1002]) == [99_900, 100_000, 100_200, 100_300]
    assert iv["time_s"].iloc[-1] == 2000.0 and not iv["latency_mean_ms"].isna().any()


def test_results_right_after_the_rows_without_a_blank_line() -> None:
    text = MIXED.replace("\n\n\nResults:", "\nResults:")
    result = parse_stress_log(text, "nb.log")
    assert result.complete and result.warnings == [] and len(result.runs) == 1
    assert len(result.runs[0].intervals) == 6 and total(result.runs[0])["rate_ops_s"] == 500


def test_rate_options_decide_the_latency_type() -> None:
    assert rate_and_latency_type("write n=1000 -rate threads=4 fixed=500/s -node x", True, None, False) == (
        {"mode": "fixed", "ops_s": 500}, "response")
    assert rate_and_latency_type("write n=1000 -rate threads=4 throttle=500/s", True, None, False) == (
        {"mode": "throttle", "ops_s": 500}, "service")
    assert rate_and_latency_type("write n=1000 -rate threads=4 limit=500/s", True, None, False)[1] == "service"
    assert rate_and_latency_type("write n=1000 -rate threads=4", True, None, False)[1] == "service"
    assert rate_and_latency_type("write n=1000", True, None, False)[1] == "service"      # defaults: no limit
    rate = {"Rate": {"Auto": "false", "Thread Count": "4", "OpsPer Sec": "500"}}
    assert rate_and_latency_type(None, False, rate, False) == ({"mode": "fixed or throttle", "ops_s": 500}, "unknown")
    assert rate_and_latency_type(None, False, None, False)[1] == "unknown"
    assert rate_and_latency_type(None, False, None, True)[1] == "service"


def test_a_fixed_rate_run_echoed_on_the_command_line_reports_response_time() -> None:
    text = ("$ tools/bin/cassandra-stress write n=1000 -rate threads=4 fixed=500/s\n"   # CONSTRUCTED
            "******************** Stress Settings ********************\nCommand:\n  Type: write\n  Count: 1,000\n"
            "Rate:\n  Auto: false\n  Thread Count: 4\n  OpsPer Sec: 500\n\n" + MIXED)
    run = parse_stress_log(text, "fixed.log").runs[0]
    assert run.manifest["latency_type"] == "response" and run.manifest["rate"] == {"mode": "fixed", "ops_s": 500}
    assert run.manifest["command"] == "write n=1000 -rate threads=4 fixed=500/s"
    settings_only = parse_stress_log(text.split("\n", 1)[1], "fixed.log").runs[0]
    assert settings_only.manifest["latency_type"] == "unknown"
    assert settings_only.manifest["rate"] == {"mode": "fixed or throttle", "ops_s": 500}


def test_numbers_follow_the_block_locale() -> None:
    assert number("1,205", ",") == 1.205 and number("1,205", ".") == 1205
    assert number("11\u00a0608,7", ",") == 11608.7 and number("1,086.3", ".") == 1086.3
    assert math.isnan(number("NaN", ".")) and number("-0,43458", ",") == -0.43458
    with pytest.raises(ValueError):
        number("1.2.3", ".")
    assert command_from_echo("no-such-line") is None


# --- bad input -------------------------------------------------------------------------------------------

def test_empty_and_binary_input_raise_parse_errors_naming_the_source() -> None:
    with pytest.raises(ParseError, match="empty") as err:
        parse_stress_log("  \n\n", "empty.log")
    assert err.value.path == "empty.log"
    with pytest.raises(ParseError, match="binary"):
        parse_stress_log("type\x00\x01\x02", "bin.log")


def test_other_formats_are_refused_with_the_first_line_and_what_was_expected(tmp_path: Path) -> None:
    graph = public_fixture("stress-graph", "cs_graph_3x_user_multiop_Summit-2016_tlp.html")
    with pytest.raises(ParseError, match="interval header") as err:
        parse_stress_log(read_text(graph), str(graph))
    assert err.value.line_no == 1 and err.value.line == "<!DOCTYPE html>"
    with pytest.raises(ParseError) as err:
        parse_stress_log("Datacenter: dc1\n===============\nUN  127.0.0.1  1.2 MiB  256  ?  abc  rack1\n", "st.txt")
    assert err.value.line_no == 1


def test_garbage_lines_in_the_middle_are_counted_and_warned_about_without_changing_numbers() -> None:
    text = cs_text(V41)
    lines = text.split("\n")
    idx = next(i for i, ln in enumerate(lines) if ln.startswith("total,") and " 1000," in ln)
    lines.insert(idx, "@@@ garbage line @@@")
    result = parse_stress_log("\n".join(lines), "g.log")
    clean = parse_stress_log(text, "c.log")
    assert result.skipped_lines == clean.skipped_lines + 1
    assert [(w.line_no, w.line) for w in result.warnings] == [(idx + 1, "@@@ garbage line @@@")]
    assert result.runs[0].intervals.equals(clean.runs[0].intervals)
    assert result.runs[0].summary.equals(clean.runs[0].summary)


def test_a_results_block_cut_short_makes_the_run_incomplete() -> None:
    text = cs_text(V41).replace("\r\n", "\n")
    cut = text[:text.index("Total partitions")]
    result = parse_stress_log(cut, "cut.log")
    assert not result.complete and not result.runs[0].complete
    assert "partitions, errors, duration_s" in result.warnings[-1].expected
    assert total(result.runs[0])["latency_max_ms"] == 193.5 and len(result.runs[0].intervals) == 52


def test_a_ramp_cut_right_after_announcing_a_step_is_incomplete() -> None:
    text = cs_text(DSE_W)
    cut = text[:text.index("Running with 16 threadCount") + len("Running with 16 threadCount\n")]
    result = parse_stress_log(cut, "ramp.log")
    assert [r.manifest["threads"] for r in result.runs] == [4, 8] and all(r.complete for r in result.runs)
    assert not result.complete
    assert [(w.line_no, w.expected) for w in result.warnings] == [
        (189, "interval rows or a Results block after 'Running ...' (16 threads); the output has none")]


def test_a_settings_dump_alone_is_an_incomplete_result_without_runs() -> None:
    text = cs_text(V41).replace("\r\n", "\n")
    result = parse_stress_log(text[:text.index("Connected to cluster")], "s.log")
    assert result.runs == [] and not result.complete
    assert "ends before any" in result.warnings[0].expected


# --- fuzz --------------------------------------------------------------------------------------------------

GARBAGE = st.sampled_from(["", "Results:", "END", "Running with 8 threadCount", HEADER_3X, "total, 1, 2, 3",
                           "WARN  10:00:00,000 x", "Op rate : 12 op/s [WRITE: 12 op/s]", "\x00", "type,  total ops,",
                           "Total operation time : 99:99:99", " 4 threadCount, total, 1", "\u00a0", "@@@"])


@st.composite
def mutated(draw: st.DrawFn, texts: list[str]) -> str:
    lines = draw(st.sampled_from(texts)).split("\n")
    for _ in range(draw(st.integers(1, 6))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "truncate", "replace_char", "insert", "digits"]))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "truncate":
            lines = lines[:i] + [lines[i][:draw(st.integers(0, max(0, len(lines[i]))))]]
        elif op == "replace_char" and lines[i]:
            k = draw(st.integers(0, len(lines[i]) - 1))
            lines[i] = lines[i][:k] + draw(st.characters()) + lines[i][k + 1:]
        elif op == "digits":              # a number grown past every column width and integer range
            k = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:k] + draw(st.sampled_from(["9" * 25, "1" * 400, ".5", "-", "e308"])) + lines[i][k:]
        else:
            lines.insert(i, draw(GARBAGE))
    return "\n".join(lines)


def test_fuzz_mutated_fixtures_give_a_result_or_a_parse_error() -> None:
    ru = cs_text(RU).split("\n")
    # small texts, one run each (building a Run costs more than parsing these): the 4 threads step and
    # the auto-rate table of the Russian-locale run, the start of the 4.1 run, two fragments, MIXED
    texts = [cs_text(BLOG21), cs_text(PKB), cs_text(V41)[:6000], "\n".join(ru[:155] + ru[301:316]), MIXED]

    def check(result: ParseResult) -> None:
        assert result.runs or not result.complete
        for r in result.runs:
            assert list(r.intervals.columns[:len(INTERVAL_COLUMNS)]) == list(INTERVAL_COLUMNS)
            assert r.manifest["latency_type"] in ("service", "response", "unknown")
            assert not r.intervals["count"].isna().any()

    tried = fuzz_parser(parse_stress_log, mutated(texts), "fuzz.log", check)
    print(f"cassandra-stress fuzz inputs tried: {tried}")
    assert tried >= min(10, FUZZ_EXAMPLES)


def test_a_row_with_a_lone_surrogate_is_a_line_the_parser_does_not_know_not_a_crash() -> None:
    """What the fuzz test found: a mutated row holding a lone surrogate (text decoded with
    surrogateescape) once raised UnicodeEncodeError from the bulk reader."""
    from cassperf.parsers import parse_text

    text = ("type,      total ops,    op/s,    pk/s,   row/s,    mean,     med,     .95,     .99,    .999,     max,   "
            "time,   stderr, errors,  gc: #,  max ms,  sum ms,  sdv ms,      mb\n"
            "\ud800otal,         10000,   16386,   16386,   16386,     0.6,     0.4,     1.3,     3.4,    23.4,    25.7,"
            "    0.6,  0.00000,      0,      1,      17,      17,       0,     308\n"
            "total,         20000,   16386,   16386,   16386,     0.6,     0.4,     1.3,     3.4,    23.4,    25.7,"
            "    1.2,  0.00000,      0,      1,      17,      17,       0,     308\n")
    result = parse_text(text, format="cassandra-stress")
    assert len(result.runs) == 1 and len(result.runs[0].intervals) == 1
