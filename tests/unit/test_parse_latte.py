"""latte text reports, both layouts: the scylladb fork's (the public scylla-cluster-tests fixture) and
latte 0.29's (project-made captures of real runs, tests/fixtures/latte-0.29, made by its capture.py):
the figures their sidecars state, bad input, and fuzzing."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from tests.fuzzing import mutate_lines
from hypothesis import strategies as st

from tests.conftest import PUBLIC_FIXTURES
from cassperf.errors import ParseError
from cassperf.parsers import detect, parse
from cassperf.parsers.base import ParseResult
from cassperf.parsers.latte import parse as parse_latte
from cassperf.parsers.latte import sniff

OTHER = PUBLIC_FIXTURES / "other-tools"
TLP = PUBLIC_FIXTURES / "tlp-stress"
LATTE = OTHER / "latte_text_report_scylla_sct.log"
FUZZ = int(os.environ.get("CASSPERF_FUZZ_EXAMPLES", "150"))
LATTE029 = Path(__file__).resolve().parent.parent / "fixtures" / "latte-0.29"
_FUZZ_TRIED: dict[str, int] = {}


@pytest.fixture(scope="module")
def latte_text() -> str:
    return LATTE.read_text()


def summary_row(result: ParseResult, metric: str):  # noqa: ANN201 - a pandas row
    s = result.runs[0].summary
    return s[s["latency_metric"] == metric].iloc[0]


def test_summary_matches_the_sidecar() -> None:
    result = parse(LATTE)
    assert result.format == "latte" and result.complete and not result.warnings
    req = summary_row(result, "resp_time")
    # sidecar: Elapsed 720.011 s, Cycles 115272000, Errors 0, Throughput 160100 ± 14 op/s,
    # Mean resp. time 2.272 ± 1.707 ms, p99 6.206 ms, p99.9 9.616 ms, Max 20.933 ms
    assert req["op"] == "total" and req["latency_type"] == "service"
    assert req["duration_s"] == 720.011 and req["errors"] == 0
    assert req["count"] == 115272000 and req["rate_ops_s"] == 160100.0 and req["rate_err_ops_s"] == 14.0
    assert req["latency_mean_ms"] == 2.272 and req["latency_mean_err_ms"] == 1.707
    assert req["latency_p99_ms"] == 6.206 and req["latency_p999_ms"] == 9.616 and req["latency_max_ms"] == 20.933
    assert (req["latency_p50_ms"], req["latency_p95_ms"], req["latency_min_ms"]) == (2.026, 4.361, 0.464)
    assert req["rows"] == 115272000 and req["row_rate_s"] == 160100.0


def test_cycle_time_is_a_separate_response_time_row_when_rate_limited() -> None:
    result = parse(LATTE)
    cyc = summary_row(result, "cycle_time")
    assert result.runs[0].manifest["rate_limited"] is True       # CONFIG 'Max rate [op/s] 160100'
    assert cyc["latency_type"] == "response"
    assert cyc["count"] == 115272000 and cyc["rate_ops_s"] == 160100.0
    assert cyc["latency_mean_ms"] == 2.308 and cyc["latency_mean_err_ms"] == 1.713
    assert math.isnan(cyc["latency_p99_ms"])                      # latte prints no cycle percentiles here
    assert len(result.runs[0].summary) == 2


def test_log_rows_are_intervals() -> None:
    result = parse(LATTE)
    iv = result.runs[0].intervals
    assert len(iv) == 144                       # SUMMARY STATS: Samples 144
    first, last = iv.iloc[0], iv.iloc[-1]
    assert (first["time_s"], first["rate_ops_s"], first["req_rate_s"]) == (5.001, 160027.0, 160027.0)
    assert (first["latency_min_ms"], first["latency_p50_ms"], first["latency_p99_ms"],
            first["latency_p999_ms"], first["latency_max_ms"]) == (0.359, 1.491, 3.236, 4.534, 10.453)
    assert (last["time_s"], last["latency_p99_ms"], last["latency_max_ms"]) == (719.998, 2.468, 6.963)
    assert set(iv["op"]) == {"total"} and set(iv["latency_type"]) == {"service"}
    assert iv["latency_max_ms"].max() == 84.214


def test_config_cluster_and_start_time() -> None:
    result = parse(LATTE)
    m = result.runs[0].manifest
    assert m["tool"] == "latte" and m["tool_version"] is None
    assert m["started_utc"] == "2024-09-13T17:22:16+00:00"
    assert m["cluster"] == {"name": "ubunt-db-cluster-0e7f8fb1", "cassandra_version": "3.0.8"}
    p = m["parameters"]
    assert p["Threads"] == "30" and p["Concurrency [req]"] == "180" and p["Max rate [op/s]"] == "160100"
    assert p["Consistency"] == "LocalQuorum" and p["-P row_count"] == "115272000"
    assert p["Retries / min interval [ms]"] == "500" and p["Warmup / [op]"] == "3202000"
    # debug:/info: lines, the LOG's first header line and the distribution header are skipped
    assert result.skipped_lines == 11


def test_tables_keep_error_margins_and_distribution() -> None:
    result = parse(LATTE)
    rt = result.tables["latte_response_times"].set_index("percentile")
    assert rt.loc["99", "value_ms"] == 6.206 and rt.loc["99", "err_ms"] == 7.444
    assert rt.loc["99.99", "value_ms"] == 14.819
    dist = result.tables["latte_response_time_distribution"]
    assert len(dist) == 10 and dist["count"].sum() == 115272000       # every cycle in one bucket
    assert dist.iloc[4].tolist() == [1.0, 2.2, 72976045, 63.31]


def test_detected_as_latte(latte_text: str) -> None:
    assert detect(latte_text).name == "latte"


@pytest.mark.parametrize("other", ["ycsb_0.1_basicdb_workloada_pkb.dat", "ycsb_0.9.0_redis_workloadb_histogram_pkb.dat"])
def test_does_not_claim_other_tools(other: str) -> None:
    assert not sniff((OTHER / other).read_text())
    for f in TLP.glob("*.txt"):
        assert not sniff(f.read_text())


# ---- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "   \n", "LOG \x00\x00"])
def test_empty_and_binary_input_is_a_parse_error(text: str) -> None:
    with pytest.raises(ParseError):
        parse_latte(text)


def test_wrong_format_is_a_parse_error() -> None:
    with pytest.raises(ParseError) as err:
        parse_latte((TLP / "tlp-stress_4.0.0_2020-01_keyvalue.txt").read_text(), "tlp.txt")
    assert err.value.path == "tlp.txt" and "latte text report" in err.value.expected


def test_truncated_before_the_summary_gives_a_partial_result(latte_text: str) -> None:
    cut = latte_text[: latte_text.index(" 360.000")]
    result = parse_latte(cut)
    assert result.complete is False and result.runs[0].manifest["complete"] is False
    assert "SUMMARY STATS" in result.warnings[0].expected
    assert len(result.runs[0].intervals) == 71 and result.runs[0].summary.empty


def test_garbage_lines_in_the_middle(latte_text: str) -> None:
    lines = latte_text.splitlines()
    clean = parse_latte(latte_text)
    at = next(i for i, ln in enumerate(lines) if ln.startswith(" 100.000"))
    lines.insert(at, "  97.500      160000")                        # a row cut short
    lines.insert(at, "thread 'main' panicked at 'retry', src/exec.rs:12")
    result = parse_latte("\n".join(lines))
    assert result.complete is True
    assert result.skipped_lines == clean.skipped_lines + 2
    assert [w.line_no for w in result.warnings] == [at + 2]
    assert result.runs[0].intervals.equals(clean.runs[0].intervals)
    assert result.runs[0].summary.equals(clean.runs[0].summary)


def test_unreadable_summary_value_is_warned(latte_text: str) -> None:
    text = latte_text.replace("Elapsed time       [s]    720.011", "Elapsed time       [s]    n/a")
    result = parse_latte(text)
    assert result.warnings[0].expected.startswith("'<label> [unit] <number>")
    assert math.isnan(summary_row(result, "resp_time")["duration_s"])

def test_the_forks_layout_is_named_in_the_manifest() -> None:
    assert parse(LATTE).runs[0].manifest["report_layout"] == "scylladb-fork"


# ---- latte 0.29 (real runs against a local Cassandra 5.0.6 node, tests/fixtures/latte-0.29) ------

#: the figures each sidecar (<name>.txt.source.txt) lists under "summary figures latte printed"
#: and "LOG rows"; percentiles per function: Min, 25, 50, 75, 90, 95, 98, 99, 99.9, 99.99, Max [ms]
PCT_LABELS = ("Min", "25", "50", "75", "90", "95", "98", "99", "99.9", "99.99", "Max")
PCT_COLUMNS = ("latency_min_ms", "latency_p25_ms", "latency_p50_ms", "latency_p75_ms", "latency_p90_ms",
               "latency_p95_ms", "latency_p98_ms", "latency_p99_ms", "latency_p999_ms", "latency_p9999_ms",
               "latency_max_ms")
SIDECARS: dict[str, dict] = {
    "write-unthrottled": dict(
        elapsed=10.042, cycles=16219, errors=0, requests=16219, rows=0, thrpt=(1615, 904), req_rate=(1615, 904),
        row_rate=(0, 0), cycle_mean=(17.282, 5.350), request_mean=(17.088, 5.335), log_rows=11, max_rate=None,
        pct={"write": (1.400, 7.344, 11.723, 20.382, 34.734, 46.957, 67.764, 100.663, 181.928, 252.838, 258.605)}),
    "write-rate500": dict(
        elapsed=10.004, cycles=4700, errors=0, requests=4700, rows=0, thrpt=(470, 27), req_rate=(470, 27),
        row_rate=(0, 0), cycle_mean=(1.615, 1.057), request_mean=(1.484, 1.055), log_rows=10, max_rate=500,
        pct={"write": (0.210, 0.591, 0.749, 1.051, 2.335, 3.127, 4.899, 21.545, 78.578, 150.995, 150.995)}),
    "mixed-read-write": dict(
        elapsed=10.007, cycles=31598, errors=0, requests=31598, rows=15871, thrpt=(3158, 1123),
        req_rate=(3158, 1123), row_rate=(1586, 564), cycle_mean=(9.119, 0.972), request_mean=(9.035, 1.348),
        log_rows=11, max_rate=None,
        pct={"read": (1.046, 4.645, 6.824, 10.297, 16.777, 22.020, 41.255, 58.819, 95.289, 137.363, 137.626),
             "write": (0.669, 4.534, 6.566, 9.560, 15.221, 20.021, 36.110, 55.542, 96.666, 137.757, 137.888)}),
}
NAMES_029 = sorted(SIDECARS)


def _text029(name: str) -> str:
    return (LATTE029 / f"{name}.txt").read_text()


def _row(result: ParseResult, op: str, metric: str):  # noqa: ANN202 - a pandas row
    s = result.runs[0].summary
    rows = s[(s["op"] == op) & (s["latency_metric"] == metric)]
    assert len(rows) == 1, f"one summary row for ({op}, {metric}), got {len(rows)}"
    return rows.iloc[0]


@pytest.mark.parametrize("name", NAMES_029)
def test_029_sidecar_lists_the_figures_this_test_expects(name: str) -> None:
    """The literals above are the sidecar's: each figure line is in it as capture.py wrote it."""
    side = (LATTE029 / f"{name}.txt.source.txt").read_text()
    e = SIDECARS[name]
    assert "tool: latte 0.29.0 " in side and "complete: yes" in side
    assert f"LOG rows: {e['log_rows']}, their Cycles summing to {e['cycles']}\n" in side
    for line in (f"Elapsed time [s] {e['elapsed']:.3f}", f"Cycles [op] {e['cycles']}", f"Errors [op] {e['errors']}",
                 f"Requests [req] {e['requests']}", f"Rows [row] {e['rows']}",
                 "Throughput [op/s] {} ± {}".format(*e["thrpt"]), "├─ [req/s] {} ± {}".format(*e["req_rate"]),
                 "└─ [row/s] {} ± {}".format(*e["row_rate"]),
                 "Cycle latency [ms] {:.3f} ± {:.3f}".format(*e["cycle_mean"]),
                 "Request latency [ms] {:.3f} ± {:.3f}".format(*e["request_mean"])):
        assert f"\n  {line}\n" in side, line
    for fn, values in e["pct"].items():
        block = side[side.index(f"CYCLE LATENCY for {fn} [ms]\n"):]
        for label, value in zip(PCT_LABELS, values, strict=True):
            assert f"\n  {label} {value:.3f} ± " in block.split("CYCLE LATENCY", 2)[1], (fn, label)


@pytest.mark.parametrize("name", NAMES_029)
def test_029_run_is_complete_and_detected(name: str) -> None:
    result = parse(LATTE029 / f"{name}.txt")
    assert result.format == "latte" and detect(_text029(name)).name == "latte"
    assert result.complete is True and result.warnings == []       # was: "RESPONSE TIMES missing", cut short
    m = result.runs[0].manifest
    assert m["complete"] is True and m["report_layout"] == "latte-0.29" and m["latency_type"] == "service"
    assert m["cluster"] == {"name": "lattefix", "cassandra_version": "5.0.6"}
    assert m["rate_limited"] is (SIDECARS[name]["max_rate"] is not None)
    assert m["started_utc"].startswith("2026-11-21T23:5")             # CONFIG Date + Time (+0000)
    # skipped: 'info:' lines but 'Connected to' (6) and the LOG's first header line
    assert result.skipped_lines == 7


@pytest.mark.parametrize("name", NAMES_029)
def test_029_summary_matches_the_sidecar(name: str) -> None:
    e = SIDECARS[name]
    result = parse(LATTE029 / f"{name}.txt")
    fns = list(e["pct"])
    op = fns[0] if len(fns) == 1 else "total"
    cyc, req = _row(result, op, "cycle_time"), _row(result, op, "resp_time")
    for row in (cyc, req):
        assert row["latency_type"] == "service"
        assert row["duration_s"] == e["elapsed"] and row["errors"] == e["errors"] and row["rows"] == e["rows"]
        assert row["row_rate_s"] == e["row_rate"][0]
    assert (cyc["count"], cyc["rate_ops_s"], cyc["rate_err_ops_s"]) == (e["cycles"], *e["thrpt"])
    assert (cyc["latency_mean_ms"], cyc["latency_mean_err_ms"]) == e["cycle_mean"]
    assert (req["count"], req["rate_ops_s"], req["rate_err_ops_s"]) == (e["requests"], *e["req_rate"])
    assert (req["latency_mean_ms"], req["latency_mean_err_ms"]) == e["request_mean"]
    assert req["retries"] == 0
    assert all(math.isnan(req[c]) for c in PCT_COLUMNS)            # latte 0.29 prints no request percentiles
    for fn, values in e["pct"].items():
        row = _row(result, fn, "cycle_time")
        assert tuple(row[c] for c in PCT_COLUMNS) == values
    if len(fns) > 1:                                                # per-function rows carry percentiles only
        assert all(math.isnan(cyc[c]) for c in PCT_COLUMNS)
        assert all(_row(result, fn, "cycle_time")["count"] is pd.NA for fn in fns)
    assert len(result.runs[0].summary) == 2 + (len(fns) if len(fns) > 1 else 0)


@pytest.mark.parametrize("name", NAMES_029)
def test_029_cycle_latency_table_keeps_the_error_margins(name: str) -> None:
    table = parse(LATTE029 / f"{name}.txt").tables["latte_cycle_latency"]
    assert list(table.columns) == ["function", "percentile", "value_ms", "err_ms"]
    assert sorted(set(table["function"])) == sorted(SIDECARS[name]["pct"])
    for fn, values in SIDECARS[name]["pct"].items():
        part = table[table["function"] == fn]
        assert tuple(part["percentile"]) == PCT_LABELS and tuple(part["value_ms"]) == values


def test_029_error_margin_of_one_percentile() -> None:
    table = parse(LATTE029 / "write-rate500.txt").tables["latte_cycle_latency"].set_index("percentile")
    assert (table.loc["99", "value_ms"], table.loc["99", "err_ms"]) == (21.545, 70.197)   # '99  21.545 ± 70.197'


@pytest.mark.parametrize("name", NAMES_029)
def test_029_log_rows_are_cycle_latency_intervals(name: str) -> None:
    e = SIDECARS[name]
    iv = parse(LATTE029 / f"{name}.txt").runs[0].intervals
    assert len(iv) == e["log_rows"] and int(iv["count"].sum()) == e["cycles"]
    assert int(iv["errors"].sum()) == e["errors"]
    fns = list(e["pct"])
    assert set(iv["op"]) == {fns[0] if len(fns) == 1 else "total"}
    assert set(iv["latency_metric"]) == {"cycle_time"} and set(iv["latency_type"]) == {"service"}
    assert "latency_p95_ms" not in iv.columns or iv["latency_p95_ms"].isna().all()   # the LOG has no 95th


def test_029_log_row_values() -> None:
    iv = parse(LATTE029 / "write-unthrottled.txt").runs[0].intervals
    # '   1.002       846         0       845             8.5      21.4      28.0      39.1      63.8     119.7 ...'
    first = iv.iloc[0]
    assert (first["time_s"], first["count"], first["errors"], first["rate_ops_s"]) == (1.002, 846, 0, 845.0)
    assert (first["latency_min_ms"], first["latency_p25_ms"], first["latency_p50_ms"], first["latency_p75_ms"],
            first["latency_p90_ms"], first["latency_p99_ms"], first["latency_p999_ms"],
            first["latency_max_ms"]) == (8.5, 21.4, 28.0, 39.1, 63.8, 119.7, 175.0, 175.0)
    # '  10.041        28         0      2714            10.7      11.2      40.3 ...' (the drain after 10 s)
    assert (iv.iloc[-1]["time_s"], iv.iloc[-1]["count"], iv.iloc[-1]["rate_ops_s"]) == (10.041, 28, 2714.0)


def test_029_config_parameters_and_functions() -> None:
    m = parse(LATTE029 / "mixed-read-write.txt").runs[0].manifest
    assert m["functions"] == ["write", "read"]                       # CONFIG 'Function(s)  write:1, read:1'
    p = m["parameters"]
    assert p["Function(s)"] == "write:1, read:1" and p["Consistency"] == "One" and p["Concurrency [req]"] == "32"
    assert p["-P key_dist"] == '"uniform"' and p["-P key_high"] == "16219" and "Max rate [op/s]" not in p
    assert parse(LATTE029 / "write-rate500.txt").runs[0].manifest["parameters"]["Max rate [op/s]"] == "500"


def test_029_rate_shortfall_is_a_run_warning() -> None:
    run = parse(LATTE029 / "write-rate500.txt").runs[0]
    assert len(run.warnings) == 1
    assert run.warnings[0].startswith("latte -r 500: the run made 470 op/s, 94% of the rate asked.")
    assert "coordinated omission" in run.warnings[0]
    assert parse(LATTE029 / "write-unthrottled.txt").runs[0].warnings == []
    at_rate = _text029("write-rate500").replace("Throughput    [op/s]        470 ± 27 ",
                                                "Throughput    [op/s]        500 ± 1  ")
    assert parse_latte(at_rate).runs[0].warnings == []


# ---- latte 0.29: bad input -------------------------------------------------------------------------

def test_029_truncated_before_the_summary_gives_a_partial_result() -> None:
    text = _text029("write-unthrottled")
    result = parse_latte(text[: text.index("   6.019")])
    assert result.complete is False and result.runs[0].manifest["complete"] is False
    assert [w.expected for w in result.warnings] == [
        "a SUMMARY STATS section; the report ends before it (truncated run)"]
    assert len(result.runs[0].intervals) == 5 and result.runs[0].summary.empty
    assert result.runs[0].manifest["report_layout"] == "latte-0.29"


def test_029_truncated_inside_the_summary_stats() -> None:
    text = _text029("write-unthrottled")
    result = parse_latte(text[: text.index("        Requests")])
    assert result.complete is False
    assert [w.expected for w in result.warnings] == [
        "a CYCLE LATENCY for <function> [ms] section after SUMMARY STATS; it is missing"]
    cyc = _row(result, "write", "cycle_time")
    assert cyc["count"] == 16219 and math.isnan(cyc["latency_p99_ms"])
    assert _row(result, "write", "resp_time")["count"] is pd.NA


def test_029_truncated_inside_a_cycle_latency_section() -> None:
    text = _text029("write-rate500")
    result = parse_latte(text[: text.index("           99.9 ")])
    assert result.complete is False
    assert [w.expected for w in result.warnings] == [
        "a 'Max' row closing the last percentile section; the report ends before it"]
    cyc = _row(result, "write", "cycle_time")
    assert cyc["latency_p99_ms"] == 21.545 and math.isnan(cyc["latency_p999_ms"]) and math.isnan(cyc["latency_max_ms"])


def test_029_truncated_between_two_functions_sections() -> None:
    text = _text029("mixed-read-write")
    cut = text[: text.index("CYCLE LATENCY for write")]
    result = parse_latte(cut)
    assert result.complete is False
    assert [w.expected for w in result.warnings] == [
        "a CYCLE LATENCY section for each function of CONFIG 'Function(s)'; missing: write"]
    assert _row(result, "read", "cycle_time")["latency_max_ms"] == 137.626
    assert _row(result, "total", "cycle_time")["count"] == 31598      # the totals are still there


def test_029_garbage_lines_in_the_log_and_a_percentile_section() -> None:
    text = _text029("mixed-read-write")
    lines = text.splitlines()
    clean = parse_latte(text)
    at_log = next(i for i, ln in enumerate(lines) if ln.startswith("   5.0"))
    at_pct = next(i for i, ln in enumerate(lines) if ln.startswith("           99.99 ")) + 2
    lines.insert(at_pct, "           99.95       n/a")                   # a percentile it cannot read
    lines.insert(at_log, "   4.500      1801")                           # a LOG row cut short
    lines.insert(at_log, "thread 'main' panicked at src/exec/mod.rs:12")  # unknown text in the LOG
    result = parse_latte("\n".join(lines))
    assert result.complete is True
    assert result.skipped_lines == clean.skipped_lines + 3
    assert [w.line_no for w in result.warnings] == [at_log + 2, at_pct + 3]
    assert result.runs[0].intervals.equals(clean.runs[0].intervals)
    assert result.runs[0].summary.equals(clean.runs[0].summary)


def test_029_a_figure_latte_left_blank_is_absent_without_a_warning() -> None:
    # latte prints 18 spaces for a figure it has not got (Quantity of None), e.g. Request latency
    # when the workload made no request
    text = _text029("write-unthrottled").replace("17.088 ± 5.335   ", " " * 17)
    assert " Request latency      [ms]    " in text
    result = parse_latte(text)
    assert result.complete is True and result.warnings == []
    assert math.isnan(_row(result, "write", "resp_time")["latency_mean_ms"])


def test_029_unreadable_summary_value_is_warned() -> None:
    text = _text029("write-unthrottled").replace("Cycle latency      [ms]     17.282",
                                                 "Cycle latency      [ms]     17.2.8")
    result = parse_latte(text)
    assert [w.expected for w in result.warnings] == ["'<label> [unit] <number> [± <error>]'"]
    assert math.isnan(_row(result, "write", "cycle_time")["latency_mean_ms"])


def test_029_errors_section_becomes_a_table() -> None:
    # latte prints ERRORS after the percentiles when cycles failed (report/mod.rs), one error per line
    text = _text029("write-unthrottled").replace("Errors      [op]          0", "Errors      [op]          2")
    text += ("\nERRORS " + "═" * 116 + "\n"
             "Timeout while executing INSERT INTO keyspace1.standard1 ...\n"
             "Overloaded: node 127.0.14.1 is overloaded\n")
    result = parse_latte(text)
    assert result.complete is True
    assert list(result.tables["latte_errors"]["message"]) == [
        "Timeout while executing INSERT INTO keyspace1.standard1 ...", "Overloaded: node 127.0.14.1 is overloaded"]
    assert _row(result, "write", "cycle_time")["errors"] == 2


def test_029_is_not_read_as_the_forks_layout() -> None:
    result = parse_latte(_text029("write-unthrottled"))
    assert "latte_response_times" not in result.tables
    assert set(result.runs[0].summary["latency_metric"]) == {"cycle_time", "resp_time"}


# ---- fuzz ----------------------------------------------------------------------------------------



FUZZ_SOURCES = {"fork": [LATTE], "0.29": [LATTE029 / f"{n}.txt" for n in NAMES_029]}


@pytest.mark.parametrize("layout", sorted(FUZZ_SOURCES))
@settings(max_examples=FUZZ, deadline=None)
@given(pick=st.integers(0, 2),
       ops=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 10_000), st.text(min_size=1, max_size=40)),
                    min_size=1, max_size=8))
def test_fuzz_mutated_report_parses_or_raises_parse_error(layout: str, pick: int,
                                                          ops: list[tuple[int, int, str]]) -> None:
    """FUZZ mutated texts per layout (0.29: one of its three fixtures each time)."""
    paths = FUZZ_SOURCES[layout]
    path = paths[pick % len(paths)]
    _FUZZ_TRIED[path.name] = _FUZZ_TRIED.get(path.name, 0) + 1
    text = mutate_lines(path.read_text().splitlines(), ops)
    try:
        result = parse_latte(text)
    except ParseError:
        return
    assert isinstance(result, ParseResult)
    assert result.complete is result.runs[0].manifest["complete"]


def teardown_module() -> None:
    print(f"\ntest_parse_latte: fuzzed inputs per fixture {dict(sorted(_FUZZ_TRIED.items()))}")
