"""latte text report (scylladb fork, as used by scylla-cluster-tests): the figures the sidecar states."""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cassperf.config import fixtures_dir
from cassperf.errors import ParseError
from cassperf.parsers import detect, parse
from cassperf.parsers.base import ParseResult
from cassperf.parsers.latte import parse as parse_latte
from cassperf.parsers.latte import sniff

OTHER = fixtures_dir() / "other-tools"
TLP = fixtures_dir() / "tlp-stress"
LATTE = OTHER / "latte_text_report_scylla_sct.log"
needs_fixtures = pytest.mark.skipif(not LATTE.is_file(), reason=f"shared fixture not found: {LATTE}")
FUZZ = int(os.environ.get("CASSPERF_FUZZ_EXAMPLES", "150"))


@pytest.fixture(scope="module")
def latte_text() -> str:
    if not LATTE.is_file():
        pytest.skip(f"shared fixture not found: {LATTE}")
    return LATTE.read_text()


def summary_row(result: ParseResult, metric: str):  # noqa: ANN201 - a pandas row
    s = result.runs[0].summary
    return s[s["latency_metric"] == metric].iloc[0]


@needs_fixtures
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


@needs_fixtures
def test_cycle_time_is_a_separate_response_time_row_when_rate_limited() -> None:
    result = parse(LATTE)
    cyc = summary_row(result, "cycle_time")
    assert result.runs[0].manifest["rate_limited"] is True       # CONFIG 'Max rate [op/s] 160100'
    assert cyc["latency_type"] == "response"
    assert cyc["count"] == 115272000 and cyc["rate_ops_s"] == 160100.0
    assert cyc["latency_mean_ms"] == 2.308 and cyc["latency_mean_err_ms"] == 1.713
    assert math.isnan(cyc["latency_p99_ms"])                      # latte prints no cycle percentiles here
    assert len(result.runs[0].summary) == 2


@needs_fixtures
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


@needs_fixtures
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


@needs_fixtures
def test_tables_keep_error_margins_and_distribution() -> None:
    result = parse(LATTE)
    rt = result.tables["latte_response_times"].set_index("percentile")
    assert rt.loc["99", "value_ms"] == 6.206 and rt.loc["99", "err_ms"] == 7.444
    assert rt.loc["99.99", "value_ms"] == 14.819
    dist = result.tables["latte_response_time_distribution"]
    assert len(dist) == 10 and dist["count"].sum() == 115272000       # every cycle in one bucket
    assert dist.iloc[4].tolist() == [1.0, 2.2, 72976045, 63.31]


@needs_fixtures
def test_detected_as_latte(latte_text: str) -> None:
    assert detect(latte_text).name == "latte"


@needs_fixtures
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


@needs_fixtures
def test_wrong_format_is_a_parse_error() -> None:
    with pytest.raises(ParseError) as err:
        parse_latte((TLP / "tlp-stress_4.0.0_2020-01_keyvalue.txt").read_text(), "tlp.txt")
    assert err.value.path == "tlp.txt" and "latte text report" in err.value.expected


@needs_fixtures
def test_truncated_before_the_summary_gives_a_partial_result(latte_text: str) -> None:
    cut = latte_text[: latte_text.index(" 360.000")]
    result = parse_latte(cut)
    assert result.complete is False and result.runs[0].manifest["complete"] is False
    assert "SUMMARY STATS" in result.warnings[0].expected
    assert len(result.runs[0].intervals) == 71 and result.runs[0].summary.empty


@needs_fixtures
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


@needs_fixtures
def test_unreadable_summary_value_is_warned(latte_text: str) -> None:
    text = latte_text.replace("Elapsed time       [s]    720.011", "Elapsed time       [s]    n/a")
    result = parse_latte(text)
    assert result.warnings[0].expected.startswith("'<label> [unit] <number>")
    assert math.isnan(summary_row(result, "resp_time")["duration_s"])


# ---- fuzz ----------------------------------------------------------------------------------------

def _mutate(lines: list[str], ops: list[tuple[int, int, str]]) -> str:
    out = list(lines)
    for kind, pos, junk in ops:
        if not out:
            break
        i = pos % len(out)
        if kind == 0:
            del out[i]
        elif kind == 1:
            out.insert(i, out[i])
        elif kind == 2:
            j = (pos * 7 + 3) % len(out)
            out[i], out[j] = out[j], out[i]
        elif kind == 3:
            out = out[: i + 1]
            out[-1] = out[-1][: max(0, len(out[-1]) - pos % 60)]
        elif kind == 4:
            k = pos % max(1, len(out[i]))
            out[i] = out[i][:k] + junk[:1] + out[i][k + 1:]
        else:
            out.insert(i, junk)
    return "\n".join(out)


@needs_fixtures
@settings(max_examples=FUZZ, deadline=None)
@given(ops=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 10_000), st.text(min_size=1, max_size=40)),
                    min_size=1, max_size=8))
def test_fuzz_mutated_report_parses_or_raises_parse_error(ops: list[tuple[int, int, str]]) -> None:
    text = _mutate(LATTE.read_text().splitlines(), ops)
    try:
        result = parse_latte(text)
    except ParseError:
        return
    assert isinstance(result, ParseResult)
