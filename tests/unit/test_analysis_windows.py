"""Windows of a run: phase events, the window before, slicing, and window statistics whose
percentiles are merged from the HDR histograms (equal to the pooled samples' percentiles)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.unit.analysis_runs import LAYOUT, STARTED, counts_histogram, lognormal, make_run, pooled_stats

from cassperf.analysis import (
    AnalysisError,
    Window,
    phase_window,
    run_window,
    slice_intervals,
    slice_metrics,
    window_before,
    window_stats,
)
from cassperf.parsers.hdr_log import read_hdr_log, write_hdr_log
from cassperf.results import hdr
from cassperf.results.model import Run

GC = [(20.3, "garbagecollect:start", "nodetool garbagecollect"), (40.6, "garbagecollect:end", "")]


def test_window_percentiles_equal_the_pooled_samples_not_the_mean_of_interval_percentiles() -> None:
    # two busy fast intervals and one small slow one: the slow samples are 4.8% of the pool
    fast = [1_000_000 + 1000 * (i % 100) for i in range(1000)]            # 1.0-1.1 ms
    slow = [50_000_000 + 10_000 * i for i in range(100)]                   # 50-51 ms
    per_interval = [fast, fast, slow]

    def sampler(op: str, i: int, rng: np.random.Generator) -> list[int]:
        return per_interval[i]
    run, drawn = make_run({"write": sampler}, 3)
    stats = window_stats(run, Window(0.0, 3.0, "all"), "write")
    pooled = pooled_stats(drawn["write"])
    for key in ("latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "latency_p999_ms",
                "latency_max_ms"):
        assert stats[key] == pooled[key], key
    assert stats["count"] == 2100 and stats["intervals"] == 3 and stats["percentiles_merged"] is True
    mean_of_p99 = run.intervals["latency_p99_ms"].mean()
    assert stats["latency_p99_ms"] == pytest.approx(50.0, rel=0.03)
    assert mean_of_p99 == pytest.approx(17.4, rel=0.02)              # what averaging would have said


def test_window_stats_of_a_phase_match_the_pooled_samples_of_its_intervals() -> None:
    run, drawn = make_run({"write": lognormal(1.0), "read": lognormal(5.0)}, 60, events=GC)
    gc = phase_window(run, "garbagecollect")
    stats = window_stats(run, gc, "read")
    # midpoints 20.5 .. 40.5 lie in [20.3, 40.6): intervals 20..40
    pooled = pooled_stats(drawn["read"][20:41])
    assert stats["intervals"] == 21 and stats["duration_s"] == 21.0
    assert stats["count"] == pooled["count"] == 21 * 200
    assert stats["rate_ops_s"] == 200.0
    assert stats["latency_p99_ms"] == pooled["latency_p99_ms"]
    assert stats["latency_mean_ms"] == pooled["latency_mean_ms"]
    assert (stats["latency_type"], stats["tag"], stats["errors"], stats["error_share"]) == \
        ("response", "READ-rt", 0, 0.0)


def test_latency_type_picks_the_tag_response_by_default_service_on_request() -> None:
    run, drawn = make_run({"write": lognormal(2.0)}, 10, service_scale=0.5)
    rt = window_stats(run, run_window(run), "write")
    st = window_stats(run, run_window(run), "WRITE", latency_type="service")
    assert (rt["tag"], st["tag"]) == ("WRITE-rt", "WRITE-st")
    service = hdr.summary_ms(hdr.histogram_from_samples(
        [max(1, int(v * 0.5)) for s in drawn["write"] for v in s], LAYOUT))
    assert st["latency_p99_ms"] == service["latency_p99_ms"]
    assert rt["latency_p99_ms"] > 1.8 * st["latency_p99_ms"]


def test_a_service_time_run_asked_for_response_time_says_it_used_service_time() -> None:
    run, _ = make_run({"write": lognormal(2.0)}, 5, latency_type="service")
    stats = window_stats(run, run_window(run), "write", latency_type="response")
    assert stats["tag"] == "WRITE-st" and stats["latency_type"] == "service"
    assert "no response-time histograms for 'write'; service time (WRITE-st) used" in stats["note"]


def test_errors_are_summed_and_shared_over_the_window() -> None:
    run, _ = make_run({"write": lognormal(1.0, per_interval=95)}, 10, errors=5)
    stats = window_stats(run, Window(2.0, 6.0), "write")
    assert (stats["intervals"], stats["count"], stats["errors"]) == (4, 380, 20)
    assert stats["error_share"] == 20 / 400


def test_without_histograms_the_interval_columns_are_used_and_flagged() -> None:
    run, drawn = make_run({"read": lognormal(3.0, per_interval=lambda i: 100 * (i + 1))}, 4, histograms=False)
    stats = window_stats(run, run_window(run), "read")
    assert stats["percentiles_merged"] is False
    assert "not merged" in stats["note"]
    rows = run.intervals
    counts = rows["count"].astype(float)
    assert stats["count"] == 1000
    assert stats["latency_mean_ms"] == pytest.approx((rows["latency_mean_ms"] * counts).sum() / counts.sum())
    assert stats["latency_p99_ms"] == pytest.approx((rows["latency_p99_ms"] * counts).sum() / counts.sum())
    assert stats["latency_max_ms"] == rows["latency_max_ms"].max()


def test_an_op_the_run_lacks_is_one_error_naming_the_run_and_its_ops() -> None:
    run, _ = make_run({"write": lognormal(1.0)}, 3)
    with pytest.raises(AnalysisError, match=r"run test-run: no intervals or histograms for op 'delete'; "
                                            r"it has \['write'\]"):
        window_stats(run, run_window(run), "delete")


def test_a_cassandra_stress_hdr_log_run_uses_its_rt_tag_and_its_per_tag_interval_rows() -> None:
    samples = {"WRITE": [[1_000_000 + 777 * k for k in range(300)] for _ in range(6)],
               "READ": [[4_000_000 + 999 * k for k in range(200)] for _ in range(6)]}
    rows = [(f"{op}-{kind}", float(i), float(i + 1), hdr.histogram_from_samples(
        [v // (2 if kind == "st" else 1) for v in s[i]], LAYOUT))
        for i in range(6) for op, s in samples.items() for kind in ("st", "rt")]
    text = write_hdr_log(rows, start_epoch_s=1_763_900_000.0)
    run = read_hdr_log(text).runs[0]
    assert run.manifest["latency_type"] == "response"
    stats = window_stats(run, Window(1.0, 5.0), "read")
    assert (stats["tag"], stats["intervals"], stats["count"]) == ("READ-rt", 4, 800)
    assert stats["latency_p99_ms"] == pooled_stats(samples["READ"][1:5])["latency_p99_ms"]
    assert len(slice_intervals(run, Window(1.0, 5.0))) == 4 * 4     # one row per tag and interval


def test_phase_window_from_its_events() -> None:
    run, _ = make_run({"write": lognormal(1.0)}, 60, events=GC)
    w = phase_window(run, "garbagecollect")
    assert (w.start_s, w.end_s, w.name, w.unfinished, w.note) == (20.3, 40.6, "garbagecollect", False, "")
    assert w.length_s == pytest.approx(20.3)


def test_a_phase_without_a_start_event_names_the_run_and_its_events() -> None:
    run, _ = make_run({"write": lognormal(1.0)}, 5, events=[(1.0, "load:start", "")])
    with pytest.raises(AnalysisError, match=r"run test-run: no event 'garbagecollect:start'; its events are "
                                            r"\['load:start'\]"):
        phase_window(run, "garbagecollect")


def test_an_unfinished_phase_ends_at_the_last_interval_and_is_flagged() -> None:
    run, _ = make_run({"write": lognormal(1.0)}, 30, events=[(20.3, "garbagecollect:start", "")])
    w = phase_window(run, "garbagecollect")
    assert (w.start_s, w.end_s, w.unfinished) == (20.3, 30.0, True)
    assert "no 'garbagecollect:end' event" in w.note
    assert "no 'garbagecollect:end' event" in window_stats(run, w, "write")["note"]


def test_a_failed_phase_says_so_and_events_with_only_utc_time_are_placed() -> None:
    run, _ = make_run({"write": lognormal(1.0)}, 30,
                      events=[(5.0, "gc:start", ""), (9.5, "gc:end", "[failed: ToolError: exit 1]")])
    run.events["time_s"] = np.nan                                    # placed from time - started_utc
    w = phase_window(run, "gc")
    assert (w.start_s, w.end_s) == (5.0, 9.5)
    assert w.note == "the phase failed: [failed: ToolError: exit 1]"


def test_window_before_has_the_same_length_just_before() -> None:
    gc = Window(20.3, 40.6, "garbagecollect")
    assert window_before(gc) == Window(20.3 - 20.3, 20.3, "before")
    w = window_before(gc, length_s=10.0, gap_s=2.0)
    assert (w.start_s, w.end_s) == (8.3, 18.3)
    short = window_before(Window(15.0, 40.0))
    assert (short.start_s, short.end_s) == (0.0, 15.0)
    assert short.note == "shortened to 15.0 s of the 25.0 s asked: the run starts at 0 s"


def test_adjacent_windows_count_each_interval_once() -> None:
    run, _ = make_run({"write": lognormal(1.0), "read": lognormal(2.0)}, 10)
    a, b = slice_intervals(run, Window(0.0, 4.5)), slice_intervals(run, Window(4.5, 10.0))
    assert len(a) + len(b) == len(run.intervals) == 20
    # interval [4, 5) has its midpoint 4.5 in the second window
    assert a["end_s"].max() == 4.0 and b["start_s"].min() == 4.0


def test_interval_starts_come_from_previous_ends_when_not_stored() -> None:
    rows = pd.DataFrame({"time_s": [1.0, 2.0, 3.0, 4.0], "op": ["WRITE"] * 4, "count": [10, 10, 10, 10]})
    run = Run({"run_id": "cs"}, intervals=rows)
    got = slice_intervals(run, Window(1.0, 3.0))
    assert got["start_s"].tolist() == [1.0, 2.0] and got["end_s"].tolist() == [2.0, 3.0]


def test_slice_metrics_places_utc_samples_on_the_run_clock() -> None:
    t0 = pd.Timestamp(STARTED)
    metrics = pd.DataFrame({"time": [t0 + pd.Timedelta(seconds=s) for s in (4, 5, 9.99, 10, 12)],
                            "node": "node1", "metric": "gc_count", "value": [1.0, 2.0, 3.0, 4.0, 5.0]})
    run = Run({"run_id": "m", "started_utc": STARTED}, metrics=metrics)
    got = slice_metrics(run, Window(5.0, 10.0))
    assert got["value"].tolist() == [2.0, 3.0]
    assert got["time_s"].tolist() == pytest.approx([5.0, 9.99])
    no_start = Run({"run_id": "m2"}, metrics=metrics)
    with pytest.raises(AnalysisError, match="run m2: manifest has no started_utc"):
        slice_metrics(no_start, Window(5.0, 10.0))


def test_a_large_histogram_window_merges_exactly() -> None:
    # 3 intervals of big counts recorded directly: the merged p99 is the pooled one
    values = [500_000, 2_000_000, 90_000_000]
    rows = [{"tag": "READ-rt", "start_s": float(i), "end_s": float(i + 1),
             "encoded": counts_histogram(values, [98_000, 1_000 * (i + 1), 300 * i])} for i in range(3)]
    run = Run({"run_id": "big", "latency_type": "response", "histogram_unit": "ns"}, histograms=pd.DataFrame(rows))
    stats = window_stats(run, Window(0.0, 3.0), "read")
    total = 3 * 98_000 + 6_000 + 900
    assert stats["count"] == total and stats["rate_ops_s"] == total / 3
    assert stats["latency_p99_ms"] == pytest.approx(2.0, rel=1e-3)   # 6,900 slow of 300,900: 2.3% > 1%
    assert stats["latency_p999_ms"] == pytest.approx(90.0, rel=1e-3)


def test_histograms_that_state_their_absolute_start_are_placed_on_the_run_clock() -> None:
    # cassandra-stress's HDR log counts from its own start; the run (and its events) from started_utc,
    # here 7 s earlier: the log's interval [1, 2) is the run's [8, 9)
    samples = [[1_000_000 * (i + 1)] * 10 for i in range(6)]
    rows = [("WRITE-rt", float(i), float(i + 1), hdr.histogram_from_samples(samples[i], LAYOUT)) for i in range(6)]
    run = read_hdr_log(write_hdr_log(rows, start_epoch_s=1_763_900_000.0)).runs[0]
    run.manifest["started_utc"] = pd.Timestamp(1_763_900_000.0 - 7.0, unit="s", tz="UTC").isoformat()
    stats = window_stats(run, Window(8.0, 9.0), "write")
    assert (stats["count"], stats["latency_p50_ms"]) == (10, pytest.approx(2.0, rel=1e-3))
    assert run_window(run).end_s == pytest.approx(13.0)


def test_slice_histograms_by_window_and_tag() -> None:
    run, _ = make_run({"write": lognormal(1.0, per_interval=5)}, 10)
    from cassperf.analysis import slice_histograms
    rows = slice_histograms(run, Window(2.0, 5.0), "WRITE-rt")
    assert rows["start_s"].tolist() == [2.0, 3.0, 4.0] and set(rows["tag"]) == {"WRITE-rt"}
    assert len(slice_histograms(run, Window(2.0, 5.0))) == 6
