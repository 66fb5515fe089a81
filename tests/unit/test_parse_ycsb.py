"""YCSB client output (best effort): 0.1 results with histogram buckets, a 0.9.0 run that died."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from tests.fuzzing import mutate_lines
from hypothesis import strategies as st

from tests.conftest import PUBLIC_FIXTURES
from cassperf.errors import ParseError
from cassperf.parsers import detect, parse
from cassperf.parsers.base import ParseResult
from cassperf.parsers.ycsb import parse as parse_ycsb
from cassperf.parsers.ycsb import sniff

OTHER = PUBLIC_FIXTURES / "other-tools"
TLP = PUBLIC_FIXTURES / "tlp-stress"
Y01 = OTHER / "ycsb_0.1_basicdb_workloada_pkb.dat"
Y09 = OTHER / "ycsb_0.9.0_redis_workloadb_histogram_pkb.dat"
FUZZ = int(os.environ.get("CASSPERF_FUZZ_EXAMPLES", "150"))

# Real status lines (YCSB -s), quoted in public docs and code comments (see ycsb.py).
STATUS_HDR = ("2020-01-10 16:21:40:213 10 sec: 15451 operations; 1545.1 current ops/sec; est completion in "
              "10 minutes [INSERT: Count=15452, Max=120319, Min=1249, Avg=2312.21, 90=2625, 99=7915, "
              "99.9=19551, 99.99=113855]")
STATUS_OLD = ("2019-05-31 13:17:06:245 1440 sec: 23863825 operations; 16202.6 current ops/sec; est completion "
              "in 9  minutes [READ AverageLatency(us)=782.17] [UPDATE AverageLatency(us)=444.25]")
STATUS_COMMA = ("2020-05-31 12:37:56:062 40 sec: 8898270 operations; 181027 current ops/sec; est completion in 5 "
                "second [READ: Count=452553, Max=2329, Min=1, Avg=19,59, 90=45, 99=69, 99.9=108, 99.99=602] "
                "[UPDATE: Count=452135, Max=404479, Min=5, Avg=87,65, 90=74, 99=1152, 99.9=1233, 99.99=2257]")


def test_ycsb_01_results_match_the_sidecar() -> None:
    result = parse(Y01)
    assert result.format == "ycsb" and result.complete
    run = result.runs[0]
    assert run.manifest["tool_version"] == "0.1"
    assert run.manifest["command"] == "-db com.yahoo.ycsb.BasicDB -P workloads/workloada -t"
    assert run.manifest["parameters"]["db"] == "com.yahoo.ycsb.BasicDB"
    assert run.manifest["parameters"]["phase"] == "run"
    s = run.summary.set_index("op")
    # sidecar: [OVERALL] RunTime(ms) 80.0, Throughput(ops/sec) 12500.0; [UPDATE] Operations 531,
    # AverageLatency(us) 65.977
    assert s.loc["total", "duration_s"] == 0.08 and s.loc["total", "rate_ops_s"] == 12500.0
    assert s.loc["update", "count"] == 531
    assert s.loc["update", "latency_mean_ms"] == 65.9774011299435 / 1000
    assert (s.loc["update", "latency_min_ms"], s.loc["update", "latency_max_ms"]) == (0.042, 0.345)
    assert s.loc["update", "errors"] == 0                      # Return=0, 531
    assert s.loc["read", "count"] == 469 and s.loc["read", "latency_max_ms"] == 0.102
    assert s.loc["update", "latency_p95_ms"] == 0.0            # printed as whole-ms bucket 0 ...
    assert any("1 ms histogram bucket" in w.expected for w in result.warnings)   # ... and said so
    assert s.loc["cleanup", "count"] == 1 and pd_isna(s.loc["cleanup", "errors"])
    assert list(s.index) == ["total", "update", "read", "cleanup"]


def test_ycsb_01_histogram_buckets() -> None:
    result = parse(Y01)
    h = result.tables["ycsb_histogram"]
    for op, total in (("update", 531), ("read", 469), ("cleanup", 1)):
        assert h[h["op"] == op]["count"].sum() == total
        assert len(h[h["op"] == op]) == 1001                    # buckets 0..999 and >1000
    upd = h[(h["op"] == "update") & (h["count"] > 0)]
    assert upd[["bucket_ms", "count"]].values.tolist() == [[0, 530], [19, 1]]
    assert h[h["overflow"]]["bucket_ms"].tolist() == [1000, 1000, 1000]
    assert result.skipped_lines == 0


def test_ycsb_09_run_without_results_is_partial() -> None:
    result = parse(Y09)
    assert result.format == "ycsb" and result.complete is False
    run = result.runs[0]
    assert run.summary.empty and run.intervals.empty
    m = run.manifest
    assert m["tool_version"] == "0.9.0" and m["complete"] is False
    assert m["parameters"]["threads"] == 16 and m["parameters"]["db"] == "com.yahoo.ycsb.db.RedisClient"
    assert m["parameters"]["properties"]["measurementtype"] == "histogram"
    assert m["parameters"]["max_execution_time_s"] == 600
    assert m["exceptions_in_output"] == 2 and m["latency_type"] == "service"
    assert [w.expected.split(";")[0] for w in result.warnings] == [
        "the final '[OVERALL], RunTime(ms), ...' results", "a clean run"]


@pytest.mark.parametrize("name", ["ycsb_0.1_basicdb_workloada_pkb.dat", "ycsb_0.9.0_redis_workloadb_histogram_pkb.dat"])
def test_detected_as_ycsb(name: str) -> None:
    assert detect((OTHER / name).read_text()).name == "ycsb"


def test_does_not_claim_other_tools() -> None:
    assert not sniff((OTHER / "latte_text_report_scylla_sct.log").read_text())
    for f in TLP.glob("*.txt"):
        assert not sniff(f.read_text())


def test_status_lines_become_intervals() -> None:
    result = parse_ycsb("YCSB Client 0.17.0\n" + STATUS_HDR + "\n" + STATUS_OLD + "\n")
    iv = result.runs[0].intervals
    total = iv[iv["op"] == "total"]
    assert total["time_s"].tolist() == [10.0, 1440.0]
    assert total["count"].tolist() == [15451, 23863825 - 15451]        # ops since the previous line
    assert total["rate_ops_s"].tolist() == [1545.1, 16202.6]
    ins = iv[iv["op"] == "insert"].iloc[0]
    assert ins["count"] == 15452 and ins["latency_mean_ms"] == 2312.21 / 1000
    assert (ins["latency_p99_ms"], ins["latency_p999_ms"], ins["latency_max_ms"]) == (7.915, 19.551, 120.319)
    assert ins["latency_p90_ms"] == 2.625 and ins["latency_p9999_ms"] == 113.855
    old = iv[iv["op"] == "update"].iloc[0]
    assert old["latency_mean_ms"] == 0.44425 and pd_isna(old["count"])
    assert result.runs[0].manifest["count_is_total"] is False
    assert result.complete is False              # status lines only: no [OVERALL] results


def test_status_line_with_decimal_commas() -> None:
    iv = parse_ycsb(STATUS_COMMA + "\n").runs[0].intervals.set_index("op")
    assert iv.loc["read", "latency_mean_ms"] == 19.59 / 1000 and iv.loc["read", "count"] == 452553
    assert iv.loc["update", "latency_mean_ms"] == 87.65 / 1000 and iv.loc["update", "latency_p99_ms"] == 1.152


def test_newer_return_codes_and_intended_ops() -> None:
    text = "\n".join([
        "YCSB Client 0.17.0",
        "Command line: -db site.ycsb.db.CassandraCQLClient -p measurement.interval=both -target 1000 -t",
        "[OVERALL], RunTime(ms), 10000", "[OVERALL], Throughput(ops/sec), 998.5",
        "[READ], Operations, 9000", "[READ], AverageLatency(us), 812.5", "[READ], 95thPercentileLatency(us), 1500",
        "[READ], 99thPercentileLatency(us), 2900", "[READ], Return=OK, 8990", "[READ], Return=ERROR, 10",
        "[Intended-READ], Operations, 9000", "[Intended-READ], 99thPercentileLatency(us), 45000",
        "[TOTAL_GCS_G1_Young_Generation], Count, 3", "[TOTAL_GC_TIME], Time(ms), 41",
    ]) + "\n"
    result = parse_ycsb(text)
    s = result.runs[0].summary
    read = s[(s["op"] == "read") & (s["latency_type"] == "service")].iloc[0]
    assert read["errors"] == 10 and read["latency_p95_ms"] == 1.5 and read["latency_p99_ms"] == 2.9
    intended = s[(s["op"] == "read") & (s["latency_type"] == "response")].iloc[0]
    assert intended["latency_p99_ms"] == 45.0
    assert result.runs[0].manifest["parameters"]["target_ops_s"] == 1000.0
    assert result.runs[0].manifest["latency_type"] == "service"      # measurement.interval=both
    gc = result.tables["ycsb_measurements"]
    assert gc[gc["section"] == "TOTAL_GC_TIME"]["value"].tolist() == [41.0]
    assert result.complete and not result.warnings


# ---- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "\n\n", "YCSB\x00Client"])
def test_empty_and_binary_input_is_a_parse_error(text: str) -> None:
    with pytest.raises(ParseError):
        parse_ycsb(text)


def test_wrong_format_is_a_parse_error() -> None:
    with pytest.raises(ParseError) as err:
        parse_ycsb((TLP / "easy-cass-stress_2025-05_keyvalue.txt").read_text(), "ecs.txt")
    assert err.value.path == "ecs.txt" and err.value.line_no == 1 and "YCSB" in err.value.expected


def test_truncated_output_is_partial() -> None:
    lines = Y01.read_text().splitlines()
    result = parse_ycsb("\n".join(lines[:2]) + "\n")          # cut before the results
    assert result.complete is False and result.runs[0].summary.empty


def test_garbage_lines_in_the_middle() -> None:
    lines = Y01.read_text().splitlines()
    clean = parse_ycsb(Y01.read_text())
    lines.insert(6, "java.lang.IllegalStateException: boom")
    lines.insert(8, "[UPDATE], MaxLatency(us), n/a")
    result = parse_ycsb("\n".join(lines))
    assert result.skipped_lines == clean.skipped_lines + 2
    assert [w.line_no for w in result.warnings if w.line_no] == [9]
    assert result.runs[0].manifest["exceptions_in_output"] == 1
    assert result.runs[0].summary.equals(clean.runs[0].summary)


# ---- fuzz ----------------------------------------------------------------------------------------



def _fuzz_bases() -> list[list[str]]:
    if not Y01.is_file():
        return [[]]
    head = Y01.read_text().splitlines()[:40]            # results + some buckets: fast to parse
    return [head, Y09.read_text().splitlines(), [STATUS_HDR, STATUS_OLD, STATUS_COMMA]]


BASES = _fuzz_bases()


@settings(max_examples=FUZZ, deadline=None)
@given(which=st.integers(0, 2),
       ops=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 10_000), st.text(min_size=1, max_size=40)),
                    min_size=1, max_size=8))
def test_fuzz_mutated_outputs_parse_or_raise_parse_error(which: int, ops: list[tuple[int, int, str]]) -> None:
    text = mutate_lines(BASES[which], ops)
    try:
        result = parse_ycsb(text)
    except ParseError:
        return
    assert isinstance(result, ParseResult)


def pd_isna(value: object) -> bool:
    import pandas as pd
    return bool(pd.isna(value))
