"""cassandra-stress -graph HTML parser ("cassandra-stress-graph").

Expected figures come from the fixture sidecar (tests/fixtures/public/stress-graph/*.source.txt): 10 runs,
revisions 'unknown' x5 and '2' x5, interval counts 232,224,208,192,156,232,224,204,188,160, op rates
4,564 / 5,675 / 6,269 / 6,051 / 4,869 / 4,418 / 5,652 / 5,950 / 5,892 / 5,141 and the first run's
summary. Per-op interval rows have a null type; their op names are inferred (see stress_graph's
module docstring) and the inference is tested here on the fixture and on constructed row patterns.
"""

from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st

from tests.conftest import PUBLIC_FIXTURES
from cassperf.errors import ParseError
from cassperf.parsers import detect, read_text
from cassperf.parsers.base import ParseResult
from cassperf.parsers.stress_graph import infer_ops, parse_stress_graph, sniff
from cassperf.results.model import INTERVAL_COLUMNS, SUMMARY_COLUMNS
from tests.conftest import public_fixture
from tests.fuzzing import FUZZ_EXAMPLES, fuzz_parser

GRAPH = "cs_graph_3x_user_multiop_Summit-2016_tlp.html"
OPS = ["events", "insert", "latest_event"]
RATES = [4564, 5675, 6269, 6051, 4869, 4418, 5652, 5950, 5892, 5141]
N_INTERVALS = [232, 224, 208, 192, 156, 232, 224, 204, 188, 160]


def graph_text() -> str:
    return read_text(public_fixture("stress-graph", GRAPH))


@functools.lru_cache(maxsize=None)
def parsed() -> ParseResult:
    return parse_stress_graph(graph_text(), GRAPH)


def stats_of(text: str) -> dict:
    body = text[text.index("stats = ") + len("stats = "):text.index("/* stats end */")]
    return json.loads(body.strip().rstrip(";"))


def as_html(stats: dict) -> str:
    """A minimal -graph file around a stats object (the markers StressGraph.java writes)."""
    return ("<!DOCTYPE html>\n<head>\n<script>\n/* stats start */\nstats = " + json.dumps(stats)
            + ";\n/* stats end */\n</script>\n</head>\n")


def small(entries: int = 1, rows: int = 40) -> dict:
    """The fixture's first entries with their first `rows` interval rows (whole groups of 4)."""
    stats = stats_of(graph_text())
    out = {"stats": [dict(e, intervals=e["intervals"][:rows]) for e in stats["stats"][:entries]],
           "title": stats["title"]}
    return out


def total(run) -> dict:  # noqa: ANN001 - a Run
    return run.summary[run.summary["op"] == "total"].iloc[0].to_dict()


def test_the_fixture_is_detected_as_the_graph_format_only() -> None:
    text = graph_text()
    assert sniff(text[:65536])
    assert detect(text, GRAPH).name == "cassandra-stress-graph"


def test_every_run_and_revision_becomes_a_run_with_its_labels() -> None:
    result = parsed()
    assert result.complete and result.warnings == [] and result.skipped_lines == 0
    assert len(result.runs) == 10
    assert [r.labels for r in result.runs] == (
        [{"revision": "unknown", "title": "Summit-2016"}] * 5 + [{"revision": "2", "title": "Summit-2016"}] * 5)
    assert [len(r.intervals) for r in result.runs] == N_INTERVALS
    assert [total(r)["rate_ops_s"] for r in result.runs] == RATES
    for r in result.runs:
        m = r.manifest
        assert m["tool"] == "cassandra-stress" and m["command_source"] == "graph" and m["test"] == "USER"
        assert m["latency_type"] == "service"          # the recorded command has no -rate: no rate limit
        assert m["command"].startswith("user profile=./tlp-users.yaml duration=1m ops(insert=1,latest_event=1,"
                                       "events=1) truncate=once -graph file=tlp.html title=Summit-2016")
        assert m["ops"] == OPS and r.complete
        assert list(r.intervals.columns[:len(INTERVAL_COLUMNS)]) == list(INTERVAL_COLUMNS)
        assert list(r.summary.columns[:len(SUMMARY_COLUMNS)]) == list(SUMMARY_COLUMNS)
    assert result.runs[5].manifest["command"].endswith("revision=2")


def test_the_first_runs_summary_matches_the_sidecar() -> None:
    run = parsed().runs[0]
    t = total(run)
    # op rate '4,564 op/s [events: 1,519, insert: 1,526, latest_event: 1,520]', row rate 718,317 row/s,
    # latency mean 0.8 ms, median 0.4, p95 2.0, p99 5.1, p99.9 8.5, max 17.8, total partitions 273,849,
    # total errors 0, total operation time 00:01:00
    assert (t["rate_ops_s"], t["row_rate_s"]) == (4564, 718_317)
    assert (t["latency_mean_ms"], t["latency_p50_ms"], t["latency_p95_ms"], t["latency_p99_ms"],
            t["latency_p999_ms"], t["latency_max_ms"]) == (0.8, 0.4, 2.0, 5.1, 8.5, 17.8)
    assert (t["partitions"], t["errors"], t["duration_s"]) == (273_849, 0, 60)
    assert math.isnan(t["gc_avg_ms"]) and t["gc_memory_bytes"] == 0     # 'NaN ms', '0.000 KiB'
    s = run.summary.set_index("op")
    assert list(s.index) == [*OPS, "total"]
    assert list(s.loc[OPS, "rate_ops_s"]) == [1519, 1526, 1520]
    assert list(s.loc[OPS, "row_rate_s"]) == [715_060, 1737, 1520]
    assert list(s.loc[OPS, "partitions"]) == [91_129, 91_546, 91_174]
    # counts: each op's last cumulative 'total ops' in the intervals
    assert list(s["count"]) == [91_136, 91_546, 91_179, 273_861]


def test_null_op_names_are_inferred_from_the_row_pattern() -> None:
    run = parsed().runs[0]
    iv = run.intervals
    assert list(iv["op"].iloc[:8]) == [*OPS, "total"] * 2
    assert iv["op"].value_counts().to_dict() == {"events": 58, "insert": 58, "latest_event": 58, "total": 58}
    assert list(iv["count"].iloc[:4]) == [2243, 2503, 2482, 7228]     # 2243 + 2503 + 2482 = 7228
    assert list(iv["row_rate_s"].iloc[:4]) == [264_472, 2851, 2477, 269_750]
    # rows of one interval share the total row's time: the interval at rows 132-135 printed 35.5, 35.5,
    # 35.4 (latest_event's own running time), 35.5
    assert list(iv["time_s"].iloc[132:136]) == [35.5, 35.5, 35.5, 35.5]
    for r in parsed().runs:
        ops = r.intervals["op"]
        assert (ops.iloc[3::4] == "total").all() and (ops.iloc[0::4] == "events").all()


def test_infer_ops_rules() -> None:
    counts = np.array([3, 4, 5, 12, 6, 8, 9, 23], dtype=float)
    assert infer_ops(counts, ["a", "b", "c"]) == (["a", "b", "c", "total"] * 2, [])
    assert infer_ops(np.array([5, 9, 14.0]), ["write"]) == (["total"] * 3, [])
    # the first interval has only 2 of 3 ops (an op not yet started prints no row): named unknown
    ops, problems = infer_ops(np.array([3, 4, 7, 6, 8, 1, 15], dtype=float), ["a", "b", "c"])
    assert ops == ["unknown-1", "unknown-2", "total", "a", "b", "c", "total"]
    assert len(problems) == 1 and "rows 1-2" in problems[0] and "unknown" in problems[0]
    # trailing per-op rows without their total row
    ops, problems = infer_ops(np.array([3, 4, 5, 12, 6, 8, 9], dtype=float), ["a", "b", "c"])
    assert ops == ["a", "b", "c", "total", "a", "b", "c"]
    assert len(problems) == 1 and "rows 5-7" in problems[0] and "summary order" in problems[0]


def test_an_op_order_that_contradicts_the_figures_is_warned_about() -> None:
    stats = small(rows=10_000)
    entry = stats["stats"][0]
    bracket = re.compile(r"\[events: ([^,]+(?:,\d{3})*[^,]*), insert: ([^,]+(?:,\d{3})*[^,]*), ")
    for key, value in entry.items():          # list insert before events: each figure keeps its name
        if isinstance(value, str) and "[events:" in value:
            entry[key] = bracket.sub(r"[insert: \2, events: \1, ", value)
    assert entry["row rate"] == "718,317 row/s [insert: 1,737 row/s, events: 715,060 row/s, latest_event: 1,520 row/s]"
    result = parse_stress_graph(as_html(stats), "swapped.html")
    msgs = [w.expected for w in result.warnings]
    assert msgs and all("op inference unverified" in m for m in msgs)
    assert any("insert: mean interval row rate" in m and "summary says 1737 row/s" in m for m in msgs)
    assert any("events: mean interval row rate" in m for m in msgs)
    assert not any("latest_event" in m for m in msgs)
    clean = parse_stress_graph(as_html(small(rows=10_000)), "clean.html")
    assert clean.warnings == []


def test_revisions_naming_a_thread_count_give_threads() -> None:
    stats = small()
    stats["stats"][0]["revision"] = "unknown - 8 threads"
    run = parse_stress_graph(as_html(stats), "t.html").runs[0]
    assert run.labels == {"revision": "unknown", "threads": "8", "title": "Summit-2016"}
    assert run.manifest["threads"] == 8


def test_null_numbers_are_nan_and_a_fixed_rate_command_reports_response_time() -> None:
    stats = small()
    entry = stats["stats"][0]
    entry["intervals"][0][5] = None                    # BigDecimal("NaN") failed in StressGraph: null
    entry["command"] = "write n=100000 -rate threads=4 fixed=2000/s -graph file=x.html"
    run = parse_stress_graph(as_html(stats), "n.html").runs[0]
    assert math.isnan(run.intervals["latency_mean_ms"].iloc[0])
    assert run.manifest["latency_type"] == "response" and run.manifest["rate"] == {"mode": "fixed", "ops_s": 2000}


def test_counts_that_are_not_whole_numbers_become_na_with_a_warning() -> None:
    stats = small(rows=10_000)
    stats["stats"][0]["intervals"][0][14] = 1.5        # 'gc: #'
    stats["stats"][0]["intervals"][1][13] = 1e200      # 'errors'
    result = parse_stress_graph(as_html(stats), "w.html")
    iv = result.runs[0].intervals
    assert iv["gc_count"].isna().tolist()[:2] == [True, False] and iv["errors"].isna().tolist()[:3] == [
        False, True, False]
    assert sorted(w.expected for w in result.warnings) == [
        "run 1: whole numbers in interval column errors; other values set to NA",
        "run 1: whole numbers in interval column gc_count; other values set to NA"]


def test_a_truncated_file_keeps_the_whole_entries_and_is_incomplete() -> None:
    text = graph_text()
    third = [m.start() for m in re.finditer(r'\{"total operation time"', text)][2]
    result = parse_stress_graph(text[:third + 5000], "cut.html")
    assert len(result.runs) == 2 and not result.complete
    assert [total(r)["rate_ops_s"] for r in result.runs] == RATES[:2]
    assert len(result.warnings) == 1 and "2 whole entries kept" in result.warnings[0].expected
    assert result.warnings[0].line_no == 12


def test_bad_input_raises_parse_errors() -> None:
    with pytest.raises(ParseError, match="empty"):
        parse_stress_graph("", "e.html")
    with pytest.raises(ParseError, match="binary"):
        parse_stress_graph("<html>\x00\x00", "b.html")
    with pytest.raises(ParseError, match="stats start"):
        parse_stress_graph("<!DOCTYPE html>\n<p>not a graph</p>\n", "p.html")
    cs = PUBLIC_FIXTURES / "cassandra-stress" / "cs_4.1.11_write_n25000_threads3_full_crystalloide.txt"
    if cs.is_file():
        with pytest.raises(ParseError, match="stats start"):
            parse_stress_graph(read_text(cs), str(cs))
    with pytest.raises(ParseError) as err:
        parse_stress_graph("<script>\n/* stats start */\nstats = [1, 2];\n/* stats end */\n", "l.html")
    assert err.value.line_no == 3 and "stats" in err.value.expected


def test_empty_entries_and_damaged_rows_are_skipped_with_warnings() -> None:
    stats = small()
    stats["stats"].append({})                                   # StressGraph appends {} after END
    stats["stats"][0]["intervals"].insert(4, ["total", "x"])     # not a row of 19 fields
    result = parse_stress_graph(as_html(stats), "d.html")
    assert len(result.runs) == 1 and result.skipped_lines == 1
    msgs = [w.expected for w in result.warnings]
    assert any("1 row(s) skipped" in m for m in msgs) and any("entry 2" in m and "empty" in m for m in msgs)
    assert len(result.runs[0].intervals) == 40


def test_fuzz_mutated_graph_files_give_a_result_or_a_parse_error() -> None:
    base = as_html(small(entries=2, rows=12))

    @st.composite
    def mutated(draw: st.DrawFn) -> str:
        text = base
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, len(text)))
            op = draw(st.sampled_from(["delete", "insert", "replace", "truncate", "duplicate"]))
            if op == "delete":
                text = text[:i] + text[i + draw(st.integers(1, 50)):]
            elif op == "insert":
                text = text[:i] + draw(st.sampled_from(["null", "NaN", ",", "]", "{", '"', "1e999", "\n", "[[]]",
                                                        '"intervals":[]', "\x00"])) + text[i:]
            elif op == "replace" and i < len(text):
                text = text[:i] + draw(st.characters()) + text[i + 1:]
            elif op == "truncate":
                text = text[:i]
            else:
                j = draw(st.integers(i, min(len(text), i + 200)))
                text = text[:j] + text[i:j] + text[j:]
        return text

    def check(result: ParseResult) -> None:
        for r in result.runs:
            assert list(r.intervals.columns[:len(INTERVAL_COLUMNS)]) == list(INTERVAL_COLUMNS)

    tried = fuzz_parser(parse_stress_graph, mutated(), "fuzz.html", check)
    print(f"stress-graph fuzz inputs tried: {tried}")
    assert tried >= min(10, FUZZ_EXAMPLES)


def test_the_fixture_is_not_taken_for_stress_stdout(tmp_path: Path) -> None:
    from cassperf.parsers.cassandra_stress import sniff as stdout_sniff
    assert not stdout_sniff(graph_text()[:65536])
