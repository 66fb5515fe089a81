"""GC log parsers (gc-unified, gc-jdk8) and gc_per_interval.

Expected figures: the fixture sidecars state only one count (kowchik: "13 lines containing
'Pause'" = 9 pause lines + 4 'Safepoint "G1Pause..."' lines). Every other count, sum and max below
was computed independently of the parser with grep -P and awk over the fixture, e.g.

  grep -oP "GC\\(\\d+\\) Pause .* \\d+\\.\\d+ms$" F | awk '{ms=$NF; sub(/ms/,"",ms); n++; s+=ms} ...'
  grep -oP "^: \\d+K->\\d+K\\(\\d+K\\), [\\d.]+ secs\\] \\d+K->\\d+K\\(\\d+K\\), \\K[\\d.]+(?= secs\\])" F   (ParNew)
  grep -oP "^, \\K[\\d.]+(?= secs\\]$)" F                                                     (JDK 8 G1 pauses)
  grep -oP "Total time for which application threads were stopped: \\K[\\d.]+" F
  grep -oP 'Safepoint "[^"]*".*Total: [0-9]+ ns' F | awk '{s+=$(NF-1)}'

Constructed samples (marked as such) cover layouts the fixtures lack; their lines follow
HotSpot's format strings and are checked against hand-computed values.
"""

from __future__ import annotations

import itertools
import math
import os
from datetime import datetime, timedelta, timezone
from functools import partial

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from tests.conftest import public_fixture, public_fixture_files, public_fixture_text
from tests.fuzzing import edit_lines
from hypothesis import strategies as st

from cassperf.errors import ParseError
from cassperf.parsers import detect, format_by_name, parse, parse_text, read_text
from cassperf.parsers.base import ParseResult
from cassperf.parsers.gc_common import (
    CONCURRENT_COLUMNS, PAUSE_COLUMNS, SAFEPOINT_COLUMNS, GcPause, gc_per_interval, records,
)
from cassperf.parsers.gc_jdk8 import parse_jdk8_gc
from cassperf.parsers.gc_jdk8 import sniff as sniff_jdk8
from cassperf.parsers.gc_unified import parse_unified_gc
from cassperf.parsers.gc_unified import sniff as sniff_unified

TAGS216 = "gc_NOT-CASSANDRA_jdk-unified_G1_time-uptime-level-tags_garbagecat-dataset216.log"
SAFEPOINT182 = "gc_NOT-CASSANDRA_jdk-unified_uptime-level-tags_safepoint_garbagecat-dataset182.log"
KOWCHIK = "gc_cassandra5.0-beta1_jdk17.0.12_G1_unified_kowchik.log"
HEAPTRACE = "gc_cassandra5.0-beta1_jdk17_G1_unified_time-uptime-pid-tid-level_heaptrace.log"
WINDOWS_CMS = "gc_cassandra3.11.4_jdk8_CMS-ParNew_PrintGCDetails_windows_pkalynan.log"
ROTATED_CMS = "gc_cassandra3.11.4_jdk8u252_CMS-ParNew_linux_rotated_vramius.log"
DSE_G1 = "gc_dse6.8.1_jdk8u252_G1_PrintGCDetails_HeapAtGC_StoppedTime.log"


gc_path = partial(public_fixture, "gc")
gc_text = partial(public_fixture_text, "gc")


_CACHE: dict[str, ParseResult] = {}


def parsed(name: str) -> ParseResult:
    if name not in _CACHE:
        _CACHE[name] = parse(gc_path(name))
    return _CACHE[name]


def utc(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz="UTC")


# ---------------------------------------------------------------- fixture figures

# (file, format, pauses, sum pause ms, max pause ms, concurrent phases, sum phase ms,
#  safepoints, sum stopped ms, max stopped ms, complete)
FIGURES = [
    (TAGS216, "gc-unified", 1, 10.037, 10.037, 1, 0.020, 1, 10.4763, 10.4763, True),
    (SAFEPOINT182, "gc-unified", 7, 24.180, 10.135, 14, 13.357, 12, 25.3310, 10.2775, True),
    (KOWCHIK, "gc-unified", 9, 124.904, 41.440, 2, 44.547, 422, 149.216748, 41.567288, True),
    (HEAPTRACE, "gc-unified", 10, 45.432, 9.869, 3, 81.151, 193, 92.338148, 18.098473, True),
    # the Windows file is the live gc.log.0.current: its last line stops mid-way
    (WINDOWS_CMS, "gc-jdk8", 7, 443.7739, 124.8566, 5, 1894.0, 380, 591.0925, 125.5820, False),
    (ROTATED_CMS, "gc-jdk8", 2116, 39032.8537, 698.9431, 0, 0.0, 2115, 41000.9228, 699.6386, True),
    (DSE_G1, "gc-jdk8", 1130, 57957.5011, 160.7524, 16, 6669.6092, 1279, 63972.4405, 1066.1920, True),
]


@pytest.mark.parametrize("name, fmt, n, total, peak, n_conc, conc_total, n_sp, sp_total, sp_peak, complete",
                         FIGURES, ids=[f[0][:40] for f in FIGURES])
def test_fixture_figures(name: str, fmt: str, n: int, total: float, peak: float, n_conc: int,
                         conc_total: float, n_sp: int, sp_total: float, sp_peak: float, complete: bool) -> None:
    result = parsed(name)
    assert result.format == fmt
    pauses, conc, sp = (result.tables[k] for k in ("pauses", "concurrent", "safepoints"))
    assert (len(pauses), len(conc), len(sp)) == (n, n_conc, n_sp)
    assert pauses.pause_ms.sum() == pytest.approx(total, abs=1e-6)
    assert pauses.pause_ms.max() == pytest.approx(peak, abs=1e-9)
    assert conc.duration_ms.sum() == pytest.approx(conc_total, abs=1e-6)
    assert sp.stopped_ms.sum() == pytest.approx(sp_total, abs=1e-6)
    assert sp.stopped_ms.max() == pytest.approx(sp_peak, abs=1e-9)
    assert result.complete is complete
    assert result.skipped_lines == 0
    assert list(pauses.columns) == list(PAUSE_COLUMNS)
    assert list(conc.columns) == list(CONCURRENT_COLUMNS)
    assert list(sp.columns) == list(SAFEPOINT_COLUMNS)
    assert {str(t) for t in pauses.dtypes} <= {"datetime64[ns, UTC]", "float64", "Int64", "string", "int64"}
    assert pauses.line_no.is_monotonic_increasing


def test_kowchik_sidecar_count_of_pause_lines() -> None:
    # sidecar: "13 lines containing 'Pause'": 9 pauses + 4 G1PauseRemark/G1PauseCleanup safepoints
    result = parsed(KOWCHIK)
    sp = result.tables["safepoints"]
    assert len(result.tables["pauses"]) + int(sp.operation.str.contains("Pause").sum()) == 13


@pytest.mark.parametrize("name, kinds", [
    (TAGS216, {"initial-mark": 1}),
    (SAFEPOINT182, {"young": 2, "initial-mark": 2, "remark": 2, "cleanup": 1}),
    (KOWCHIK, {"young": 3, "initial-mark": 2, "remark": 2, "cleanup": 2}),
    (HEAPTRACE, {"young": 1, "initial-mark": 3, "remark": 3, "cleanup": 3}),
    (WINDOWS_CMS, {"young": 5, "initial-mark": 1, "remark": 1}),
    (ROTATED_CMS, {"young": 2116}),
    # grep counts: 1107 "(young)", 4+2+1 "(initial-mark)", 2 "(mixed)", 7 "GC remark", 7 "GC cleanup"
    (DSE_G1, {"young": 1107, "initial-mark": 7, "mixed": 2, "remark": 7, "cleanup": 7}),
])
def test_pause_kinds(name: str, kinds: dict[str, int]) -> None:
    assert parsed(name).tables["pauses"].kind.value_counts().to_dict() == kinds


def test_collectors_and_causes() -> None:
    cms = parsed(WINDOWS_CMS).tables["pauses"]
    assert cms.groupby(["collector", "cause"]).size().to_dict() == {
        ("CMS", "CMS Final Remark"): 1, ("CMS", "CMS Initial Mark"): 1, ("ParNew", "Allocation Failure"): 5}
    g1 = parsed(DSE_G1).tables["pauses"]
    assert set(g1.collector) == {"G1"}
    assert g1.cause.value_counts(dropna=False).to_dict() == {
        "G1 Evacuation Pause": 1111, pd.NA: 14, "Metadata GC Threshold": 4, "G1 Humongous Allocation": 1}
    assert set(parsed(KOWCHIK).tables["pauses"].collector) == {"G1"}          # from "Using G1"
    assert set(parsed(SAFEPOINT182).tables["pauses"].collector) == {"G1"}     # inferred: no "Using" line


# ---------------------------------------------------------------- exact rows

def test_unified_first_pause_row_is_moved_to_its_start() -> None:
    # [2024-08-23T12:45:13.657+0530][4.298s][98688][20483][info ] GC(0) Pause Young (Concurrent Start)
    #   (Metadata GC Threshold) 143M->28M(4096M) 13.867ms   (line 3791; logged when the pause ended)
    row = records(parsed(KOWCHIK).tables["pauses"], GcPause)[0]
    assert row == GcPause(time=utc("2024-08-23 07:15:13.643133"), uptime_s=pytest.approx(4.284133, abs=1e-9),
                          gc_id=0, kind="initial-mark", collector="G1", cause="Metadata GC Threshold",
                          heap_before_mb=143.0, heap_after_mb=28.0, heap_total_mb=4096.0, pause_ms=13.867,
                          line_no=3791)


def test_jdk8_parnew_row() -> None:
    # 2020-07-05T18:42:41.452-0400: 3.771: [GC (Allocation Failure) ... [ParNew   (line 38)
    # : 327680K->29229K(368640K), 0.0354182 secs] 327680K->29229K(2056192K), 0.0355137 secs]
    row = records(parsed(WINDOWS_CMS).tables["pauses"], GcPause)[0]
    assert row == GcPause(time=utc("2020-07-05 22:42:41.452"), uptime_s=3.771, gc_id=None, kind="young",
                          collector="ParNew", cause="Allocation Failure", heap_before_mb=327680 / 1024,
                          heap_after_mb=29229 / 1024, heap_total_mb=2056192 / 1024, pause_ms=35.5137, line_no=38)


def test_jdk8_cms_initial_mark_and_remark_have_no_heap_after() -> None:
    pauses = parsed(WINDOWS_CMS).tables["pauses"]
    mark, remark = pauses[pauses.kind == "initial-mark"].iloc[0], pauses[pauses.kind == "remark"].iloc[0]
    # [GC (CMS Initial Mark) [1 CMS-initial-mark: 0K(1687552K)] 35192K(2056192K), 0.0090406 secs]
    assert (mark.heap_before_mb, mark.heap_total_mb, mark.pause_ms, mark.line_no) == (35192 / 1024, 2008.0, 9.0406, 52)
    assert math.isnan(mark.heap_after_mb)
    # [GC (CMS Final Remark) [YG occupancy: ...] ... [1 CMS-remark: 0K(1687552K)] 208520K(2056192K), 0.0782442 secs]
    assert (remark.heap_before_mb, remark.pause_ms, remark.line_no) == (208520 / 1024, 78.2442, 80)


def test_jdk8_g1_multiline_record_takes_heap_from_the_eden_line() -> None:
    pauses = parsed(DSE_G1).tables["pauses"]
    first = pauses.iloc[0]
    # header line 11, ", 0.0257072 secs]" on line 13, then
    # [Eden: 95232.0K(95232.0K)->0.0B(105.0M) Survivors: 0.0B->8192.0K Heap: 95232.0K(1868.0M)->7926.8K(1868.0M)]
    assert (first.line_no, first.pause_ms, first.kind, first.cause) == (11, 25.7072, "young", "G1 Evacuation Pause")
    assert (first.heap_before_mb, first.heap_after_mb, first.heap_total_mb) == (93.0, 7926.8 / 1024, 1868.0)
    assert first.time == utc("2020-07-20 09:09:27.312") and first.uptime_s == 3.248
    cleanup = pauses[pauses.kind == "cleanup"].iloc[0]
    # [GC cleanup 13313K->13313K(1868M), 0.0029545 secs]  (line 151)
    assert (cleanup.line_no, cleanup.heap_before_mb, cleanup.heap_total_mb, cleanup.pause_ms) == (
        151, 13313 / 1024, 1868.0, 2.9545)
    remarks = pauses[pauses.kind == "remark"]
    assert remarks.heap_before_mb.isna().all() and remarks.iloc[0].pause_ms == 12.8959


def test_unified_safepoint_and_concurrent_rows() -> None:
    sp = parsed(KOWCHIK).tables["safepoints"]
    remark = sp[sp.operation == "G1PauseRemark"].iloc[0]
    # Safepoint "G1PauseRemark", Time since last: 7445917 ns, Reaching safepoint: 3506 ns, Cleanup: 6974 ns,
    #   At safepoint: 1158251 ns, Total: 1168731 ns    (line 3795, [4.306s])
    assert (remark.stopped_ms, remark.ttsp_ms, remark.line_no) == (1.168731, 0.003506, 3795)
    assert remark.uptime_s == pytest.approx(4.306 - 0.001168731, abs=1e-12)
    conc = parsed(SAFEPOINT182).tables["concurrent"]
    mark = conc[conc.line_no == 65].iloc[0]
    # [0.116s][info][gc,marking   ] GC(2) Concurrent Mark (0.114s, 0.116s) 1.204ms
    assert (mark.gc_id, mark.phase, mark.duration_ms, mark.collector) == (2, "Mark", 1.204, "G1")
    cycle = conc[conc.phase == "Cycle"].iloc[0]
    assert (cycle.gc_id, cycle.duration_ms) == (2, 2.822)                   # GC(2) Concurrent Cycle 2.822ms


def test_jdk8_stopped_time_and_concurrent_rows() -> None:
    sp = parsed(WINDOWS_CMS).tables["safepoints"].iloc[0]
    # 2020-07-05T18:42:38.505-0400: 0.833: Total time for which application threads were stopped:
    #   0.0000913 seconds, Stopping threads took: 0.0000285 seconds     (line 4)
    assert (sp.stopped_ms, sp.ttsp_ms, sp.line_no) == (0.0913, 0.0285, 4)
    assert sp.time == utc("2020-07-05 22:42:38.505") - pd.Timedelta(microseconds=91.3)
    conc = parsed(WINDOWS_CMS).tables["concurrent"]
    # [CMS-concurrent-abortable-preclean: 1.417/1.880 secs]: the wall-clock figure (second) is kept
    assert conc.set_index("phase").duration_ms.to_dict() == {
        "mark": 9.0, "preclean": 3.0, "abortable-preclean": 1880.0, "sweep": 0.0, "reset": 2.0}
    g1 = parsed(DSE_G1).tables["concurrent"]
    assert g1.phase.value_counts().to_dict() == {"root-region-scan": 7, "mark": 7, "cleanup": 2}


def test_windows_cut_short_last_line_keeps_its_stopped_time_and_says_so() -> None:
    result = parsed(WINDOWS_CMS)
    assert result.complete is False
    [warning] = result.warnings
    assert warning.line_no == 500 and "cut short" in warning.expected and "truncated" in warning.expected
    assert warning.line.endswith("0.0004400 seconds, Stopping threa")
    last = result.tables["safepoints"].iloc[-1]
    assert last.stopped_ms == 0.44 and math.isnan(last.ttsp_ms)


def test_bytes_and_str_give_the_same_tables() -> None:
    for name, fn in ((KOWCHIK, parse_unified_gc), (WINDOWS_CMS, parse_jdk8_gc)):
        path = gc_path(name)
        a, b = fn(path.read_bytes(), "x"), fn(read_text(path), "x")
        for key in ("pauses", "concurrent", "safepoints"):
            pd.testing.assert_frame_equal(a.tables[key], b.tables[key])


# ---------------------------------------------------------------- unified decorators, any order

# the real values of kowchik line 3791, in every decorator form
WALL = datetime(2024, 8, 23, 12, 45, 13, 657000, tzinfo=timezone(timedelta(hours=5, minutes=30)))
EPOCH_MS = int(WALL.timestamp() * 1000)                                      # 1724397313657
DECORATORS = {
    "time": "2024-08-23T12:45:13.657+0530", "utctime": "2024-08-23T07:15:13.657+0000",
    "uptime": "4.298s", "timemillis": f"{EPOCH_MS}ms", "uptimemillis": "4298ms",
    "timenanos": f"{EPOCH_MS * 1_000_000}ns", "uptimenanos": "4298000000ns", "pid": "98688",
    "tid": "20483", "level": "info ", "tags": "gc           ", "hostname": "cass-node-1",
}
MESSAGE = "GC(0) Pause Young (Concurrent Start) (Metadata GC Threshold) 143M->28M(4096M) 13.867ms"
START_UTC = utc("2024-08-23 07:15:13.643133")


def decorated(names: list[str], message: str = MESSAGE) -> str:
    return "".join(f"[{DECORATORS[n]}]" for n in names) + " " + message + "\n"


@settings(max_examples=min(60, int(os.environ.get("CASSPERF_FUZZ_EXAMPLES", "150"))), deadline=None)
@given(st.permutations(list(DECORATORS)).flatmap(lambda order: st.integers(1, len(order)).map(lambda k: order[:k])))
def test_any_decorator_set_in_any_order(names: list[str]) -> None:
    text = decorated(names) * 2
    row = parse_unified_gc(text, "deco").tables["pauses"].iloc[0]
    assert (row.pause_ms, row.heap_before_mb, row.line_no) == (13.867, 143.0, 1)
    if {"time", "utctime", "timemillis", "timenanos"} & set(names):
        assert row.time == START_UTC
    else:
        assert row.time is pd.NaT
    if {"uptime", "uptimemillis", "uptimenanos"} & set(names):
        assert row.uptime_s == pytest.approx(4.298 - 0.013867, abs=1e-9)
    else:
        assert math.isnan(row.uptime_s)


def test_decorator_sets_of_the_fixtures_and_undecorated_lines() -> None:
    for names in (["time", "uptime", "pid", "tid", "level"], ["time", "uptime", "level", "tags"],
                  ["uptime", "level", "tags"], ["uptimemillis", "timemillis", "tid", "tags", "level"]):
        assert parse_unified_gc(decorated(names), "x").tables["pauses"].pause_ms.tolist() == [13.867]
    # -Xlog:gc:file:none: no decorators at all
    result = parse_unified_gc("Using G1\n" + MESSAGE + "\n", "bare")
    row = result.tables["pauses"].iloc[0]
    assert (row.kind, row.collector, row.pause_ms) == ("initial-mark", "G1", 13.867) and math.isnan(row.uptime_s)


def test_unified_decimal_commas_of_some_locales() -> None:
    # constructed: HotSpot prints numbers with the C library's locale, so de_DE gives commas
    result = parse_unified_gc(
        "[0,010s][info][gc] Using G1\n"
        "[4,298s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 143M->28M(4096M) 13,867ms\n"
        "[4,400s][info][gc] GC(1) Concurrent Mark Cycle 10,500ms\n"
        "[4,500s][info][safepoint] Total time for which application threads were stopped: 0,0104763 seconds, "
        "Stopping threads took: 0,0000101 seconds\n", "de")
    assert result.tables["pauses"][["uptime_s", "pause_ms"]].values.tolist() == [[pytest.approx(4.284133), 13.867]]
    assert result.tables["concurrent"].duration_ms.tolist() == [10.5]
    assert result.tables["safepoints"][["stopped_ms", "ttsp_ms"]].values.tolist() == [[10.4763, 0.0101]]
    assert (result.skipped_lines, result.warnings) == (0, [])


def test_two_decorator_sets_in_one_file_are_each_decoded() -> None:
    # a JVM restarted with another -Xlog decorator set, appending to the same file: the real
    # lines of dataset182 ([uptime][level][tags]) then of kowchik ([time][uptime][pid][tid][level])
    first = gc_text(SAFEPOINT182)
    second = "".join(gc_text(KOWCHIK).splitlines(keepends=True)[3780:3800])
    result = parse_unified_gc(first + second + first, "two.log")
    pauses = result.tables["pauses"]
    assert len(pauses) == 7 + 3 + 7 and (result.skipped_lines, result.warnings) == (0, [])
    assert pauses.time.notna().tolist() == [False] * 7 + [True] * 3 + [False] * 7
    assert pauses.iloc[7].time == START_UTC and pauses.iloc[7].uptime_s == pytest.approx(4.284133)
    assert pauses.iloc[0].uptime_s == pauses.iloc[10].uptime_s == pytest.approx(0.058 - 0.00578)
    assert len(result.tables["safepoints"]) == 12 + 3 + 12          # kowchik lines 3793, 3795, 3797


def test_millis_decorators_that_change_meaning_mid_file() -> None:
    # [uptimemillis] lines, then (after a restart) [timemillis] lines: both fit "[<n>ms]", the
    # magnitude tells them apart on every line, not only on the first
    result = parse_unified_gc(decorated(["uptimemillis", "level"]) + decorated(["timemillis", "level"]), "ms.log")
    pauses = result.tables["pauses"]
    assert pauses.uptime_s.iloc[0] == pytest.approx(4.284133) and pauses.time.iloc[0] is pd.NaT
    assert pauses.time.iloc[1] == START_UTC and math.isnan(pauses.uptime_s.iloc[1])


# ---------------------------------------------------------------- other collectors (constructed)

def test_unified_parallel_cms_shenandoah_and_g1_jdk11_lines() -> None:
    # constructed from HotSpot's unified-logging format strings (no such fixture)
    parallel = parse_unified_gc(
        "[0.010s][info][gc] Using Parallel\n"
        "[1.500s][info][gc] GC(0) Pause Young (Allocation Failure) 64M->10M(245M) 8.123ms\n"
        "[9.000s][info][gc] GC(1) Pause Full (Ergonomics) 1G->512M(2G) 250.500ms\n", "p").tables["pauses"]
    assert parallel[["kind", "collector", "cause", "heap_before_mb", "heap_after_mb", "heap_total_mb"]].values.tolist() == [
        ["young", "Parallel", "Allocation Failure", 64.0, 10.0, 245.0],
        ["full", "Parallel", "Ergonomics", 1024.0, 512.0, 2048.0]]
    cms = parse_unified_gc(
        "[0.010s][info][gc] Using Concurrent Mark Sweep\n"
        "[1.500s][info][gc] GC(0) Pause Young (Allocation Failure) 64M->10M(245M) 8.123ms\n"
        "[2.000s][info][gc] GC(1) Pause Initial Mark 100M->100M(245M) 1.200ms\n"
        "[2.100s][info][gc] GC(1) Concurrent Mark 45.000ms\n"
        "[2.200s][info][gc] GC(1) Pause Remark 120M->120M(245M) 3.400ms\n", "c")
    assert cms.tables["pauses"][["kind", "collector"]].values.tolist() == [
        ["young", "ParNew"], ["initial-mark", "CMS"], ["remark", "CMS"]]
    assert cms.tables["concurrent"][["phase", "duration_ms", "collector"]].values.tolist() == [["Mark", 45.0, "CMS"]]
    shen = parse_unified_gc(
        "[0.010s][info][gc] Using Shenandoah\n"
        "[3.000s][info][gc] GC(3) Pause Init Mark (unload classes) 0.345ms\n"
        "[3.100s][info][gc] GC(3) Pause Final Mark (unload classes) 0.512ms\n"
        "[3.200s][info][gc] GC(3) Pause Init Update Refs 0.010ms\n", "s").tables["pauses"]
    assert shen[["kind", "cause", "pause_ms"]].values.tolist() == [
        ["initial-mark", "unload classes", 0.345], ["remark", "unload classes", 0.512], ["other", pd.NA, 0.01]]
    assert shen.heap_before_mb.isna().all()
    jdk11 = parse_unified_gc(
        "[5.000s][info][gc] GC(7) Pause Initial Mark (G1 Humongous Allocation) 300M->280M(1024M) 12.000ms\n"
        "[6.000s][info][gc] GC(8) Pause Mixed (G1 Evacuation Pause) 500M->200M(1024M) 20.000ms\n"
        "[7.000s][info][gc] GC(9) Pause Full (System.gc()) 400M->100M(1024M) 300.000ms\n", "j").tables["pauses"]
    assert jdk11[["kind", "collector", "cause"]].values.tolist() == [
        ["initial-mark", "G1", "G1 Humongous Allocation"], ["mixed", "G1", "G1 Evacuation Pause"],
        ["full", "G1", "System.gc()"]]


def test_jdk8_variants_without_stamps_single_line_parallel_full_and_commas() -> None:
    # constructed: each line in the shape HotSpot 8 prints it
    text = (
        "CommandLine flags: -XX:+PrintGCDetails -XX:+UseParallelGC\n"
        "[GC (Allocation Failure) [PSYoungGen: 65536K->10720K(76288K)] 65536K->10728K(251392K), 0.0123456 secs] "
        "[Times: user=0.03 sys=0.01, real=0.01 secs] \n"
        "12.345: [Full GC (Ergonomics) [PSYoungGen: 10720K->0K(76288K)] [ParOldGen: 8K->10500K(175104K)] "
        "10728K->10500K(251392K), [Metaspace: 3000K->3000K(1056768K)], 0.0456789 secs] [Times: user=0.1 sys=0.0, real=0.05 secs] \n"
    )
    pauses = parse_jdk8_gc(text, "par").tables["pauses"]
    assert pauses[["kind", "collector", "cause", "pause_ms"]].values.tolist() == [
        ["young", "Parallel", "Allocation Failure", 12.3456], ["full", "Parallel", "Ergonomics", 45.6789]]
    assert pauses.heap_before_mb.tolist() == [65536 / 1024, 10728 / 1024]      # not the Metaspace figures
    assert pauses.uptime_s.isna().tolist() == [True, False] and pauses.time.isna().all()
    cms = (
        "2016-01-01T00:00:00.000+0000: 10,500: [GC (Allocation Failure) 2016-01-01T00:00:00.000+0000: 10,500: "
        "[ParNew: 100K->10K(200K), 0,0100000 secs] 1000K->910K(2000K), 0,0110000 secs] [Times: user=0,01 sys=0,00, real=0,01 secs] \n"
        "2016-01-01T00:00:01.000+0000: 11.000: [GC (Allocation Failure) 2016-01-01T00:00:01.000+0000: 11.000: [ParNew"
        "2016-01-01T00:00:01.005+0000: 11.005: [CMS-concurrent-abortable-preclean: 0.100/0.250 secs] [Times: user=0.1 sys=0.0, real=0.25 secs] \n"
        ": 100K->10K(200K), 0.0200000 secs] 1000K->920K(2000K), 0.0210000 secs] [Times: user=0.02 sys=0.00, real=0.02 secs] \n"
        "2016-01-01T00:00:02.000+0000: 12.000: [Full GC (System.gc()) 2016-01-01T00:00:02.000+0000: 12.000: "
        "[CMS: 900K->500K(1800K), 0.3000000 secs] 950K->500K(2000K), [Metaspace: 3000K->3000K(1056768K)], 0.3010000 secs] "
        "[Times: user=0.3 sys=0.0, real=0.30 secs] \n"
    )
    result = parse_jdk8_gc(cms, "cms")
    pauses = result.tables["pauses"]
    assert pauses[["kind", "collector", "pause_ms", "heap_before_mb", "uptime_s"]].values.tolist() == [
        ["young", "ParNew", 11.0, 1000 / 1024, 10.5], ["young", "ParNew", 21.0, 1000 / 1024, 11.0],
        ["full", "CMS", 301.0, 950 / 1024, 12.0]]
    assert result.tables["concurrent"][["phase", "duration_ms", "line_no"]].values.tolist() == [
        ["abortable-preclean", 250.0, 2]]
    assert (result.complete, result.skipped_lines, result.warnings) == (True, 0, [])
    g1 = parse_jdk8_gc(
        "2.000: [GC pause (G1 Evacuation Pause) (young) 95M->7926K(1868M), 0.0257072 secs]\n"
        "3.000: [Full GC (Allocation Failure)  1868M->1200M(1868M), 5.1234567 secs]\n"
        "   [Eden: 0.0B(93.0M)->0.0B(93.0M) Survivors: 0.0B->0.0B Heap: 1868.0M(1868.0M)->1200.0M(1868.0M)], "
        "[Metaspace: 3000K->3000K(1056768K)]\n"
        "CommandLine flags: -XX:+UseG1GC\n", "g1").tables["pauses"]
    assert g1[["kind", "collector", "heap_before_mb", "heap_after_mb", "pause_ms"]].values.tolist() == [
        ["young", "G1", 95.0, 7926 / 1024, 25.7072], ["full", "G1", 1868.0, 1200.0, 5123.4567]]


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("fn", [parse_unified_gc, parse_jdk8_gc])
def test_empty_and_binary_input(fn) -> None:  # noqa: ANN001
    for data in ("", "  \n\n", b"\x00\x01\x02binary\x00"):
        with pytest.raises(ParseError) as err:
            fn(data, "bad.log")
        assert err.value.path == "bad.log"
        assert ("empty" in err.value.expected) or ("binary" in err.value.expected)


def test_wrong_format_is_a_parse_error_naming_the_first_line() -> None:
    with pytest.raises(ParseError) as err:
        parse_unified_gc(gc_text(WINDOWS_CMS), "jdk8.log")
    assert err.value.line_no == 1 and err.value.line.startswith("Java HotSpot(TM)")
    assert "unified" in err.value.expected
    with pytest.raises(ParseError) as err:
        parse_jdk8_gc(gc_text(KOWCHIK), "jdk17.log")
    assert err.value.line_no == 1 and err.value.line.startswith("[2024-08-23T12:45:09.379+0530]")
    assert "JDK 8" in err.value.expected
    with pytest.raises(ParseError):
        parse_text("Datacenter: dc1\n=======\nUN  127.0.0.1  1.2 MiB\n", format="gc-unified")


def test_unified_truncated_inside_a_pause_line() -> None:
    text = gc_text(KOWCHIK)
    cut = text.index("672M->69M(4096M) 31.881ms") + len("672M->6")   # the last pause, line 6480
    result = parse_unified_gc(text[:cut], "cut.log")
    assert result.complete is False and result.skipped_lines == 1
    [warning] = result.warnings
    assert warning.line_no == 6480 and "cut short" in warning.expected
    assert len(result.tables["pauses"]) == 8                      # the 8 whole pauses before it


def test_unified_pause_started_but_never_ended() -> None:
    lines = gc_text(TAGS216).splitlines(keepends=True)
    result = parse_unified_gc("".join(lines[:5]), "start-only.log")   # gc,start line 2, no end line
    assert result.complete is False and len(result.tables["pauses"]) == 0
    assert [w.line_no for w in result.warnings] == [2]
    assert "end line of GC(0) Pause Young" in result.warnings[0].expected


def test_jdk8_truncated_inside_a_record() -> None:
    text = gc_text(DSE_G1)
    lines = text.splitlines(keepends=True)
    result = parse_jdk8_gc("".join(lines[:12]), "cut.log")   # header (line 11) and one tenuring line
    assert result.complete is False
    assert [w.line_no for w in result.warnings] == [11] and "truncated" in result.warnings[0].expected
    assert len(result.tables["pauses"]) == 0 and len(result.tables["safepoints"]) == 2


@pytest.mark.parametrize("name, fn", [(KOWCHIK, parse_unified_gc), (ROTATED_CMS, parse_jdk8_gc)])
def test_garbage_lines_in_the_middle_are_counted_and_change_no_number(name: str, fn) -> None:  # noqa: ANN001
    lines = gc_text(name).splitlines(keepends=True)
    garbage = ["%%% not a gc line %%%\n", "Exception in thread main\n", "\x1b[31mcolour\n"]
    mixed = lines[:100] + garbage[:1] + lines[100:3000] + garbage[1:] + lines[3000:]
    clean, dirty = parsed(name), fn("".join(mixed), "dirty.log")
    assert dirty.skipped_lines == 3
    assert [w.line_no for w in dirty.warnings] == [101, 3002, 3003]
    assert dirty.warnings[0].line == "%%% not a gc line %%%"
    pd.testing.assert_frame_equal(clean.tables["pauses"].drop(columns="line_no"),
                                  dirty.tables["pauses"].drop(columns="line_no"))


def test_a_mangled_pause_line_is_skipped_with_a_warning() -> None:
    text = gc_text(KOWCHIK).replace("204M->49M(4096M) 25.568ms", "204M->49M(4096M) 25.5x8ms")
    result = parse_unified_gc(text, "mangled.log")
    assert len(result.tables["pauses"]) == 8 and result.skipped_lines == 1 and result.complete
    assert result.warnings[0].line_no == 4491 and "GC(n) Pause" in result.warnings[0].expected


def test_many_bad_lines_list_twenty_then_summarise() -> None:
    text = "".join(decorated(["uptime"]) if i % 2 else f"junk {i}\n" for i in range(60))
    result = parse_unified_gc(text, "junk.log")
    assert result.skipped_lines == 30 and len(result.tables["pauses"]) == 30
    assert len(result.warnings) == 21 and "10 more lines" in result.warnings[-1].expected


def test_implausible_durations_are_dropped_with_a_warning() -> None:
    text = decorated(["uptime"]) + decorated(["uptime"], MESSAGE.replace("13.867ms", "99999999999999.0ms"))
    result = parse_unified_gc(text, "huge.log")
    assert len(result.tables["pauses"]) == 1 and result.skipped_lines == 1
    assert "shorter than" in result.warnings[0].expected


# ---------------------------------------------------------------- detection

def test_every_gc_fixture_is_detected_as_its_own_format_and_nothing_else_is_claimed() -> None:
    for path in public_fixture_files():
        head = read_text(path)[:65536]
        is_gc = path.parent.name == "gc"
        unified = is_gc and ("unified" in path.name)
        assert sniff_unified(head) == unified, path
        assert sniff_jdk8(head) == (is_gc and not unified), path
        if is_gc:
            assert detect(head, str(path)).name == ("gc-unified" if unified else "gc-jdk8")
    assert format_by_name("gc-unified").parse is not None and format_by_name("gc-jdk8").parse is not None


# ---------------------------------------------------------------- gc_per_interval

def pauses_frame(starts_s: list[float], ms: list[float]) -> pd.DataFrame:
    base = utc("2024-01-01 00:00:00")
    return pd.DataFrame({"time": [base + pd.Timedelta(seconds=s) for s in starts_s],
                         "uptime_s": [100.0 + s for s in starts_s], "pause_ms": ms})


def test_per_interval_counts_maxima_and_splits_across_boundaries() -> None:
    frame = pauses_frame([0.1, 0.5, 0.9, 3.2], [10.0, 30.0, 250.0, 5.0])
    out = gc_per_interval(frame, 1.0)
    assert out.interval_start.tolist() == [utc("2024-01-01 00:00:0%d" % i) for i in range(4)]
    assert out.gc_count.tolist() == [3, 0, 0, 1]
    # the 250 ms pause at 0.9 s: 100 ms in [0,1), 150 ms in [1,2)
    assert out.gc_time_ms.tolist() == pytest.approx([140.0, 150.0, 0.0, 5.0], abs=1e-9)
    assert out.gc_max_ms.tolist() == [250.0, 0.0, 0.0, 5.0]
    wide = gc_per_interval(frame, 2.0, start=utc("2023-12-31 23:59:58"), end=utc("2024-01-01 00:00:06"))
    assert wide.gc_count.tolist() == [0, 3, 1, 0, 0] and wide.gc_time_ms.sum() == pytest.approx(295.0)
    by_uptime = gc_per_interval(frame.assign(time=pd.NaT), 1.0)
    assert by_uptime.interval_start.tolist() == [100.0, 101.0, 102.0, 103.0]
    assert by_uptime.gc_count.tolist() == [3, 0, 0, 1]
    assert gc_per_interval(frame.iloc[:0], 1.0).empty
    with pytest.raises(ValueError):
        gc_per_interval(frame, 0.0)


@pytest.mark.parametrize("name", [KOWCHIK, DSE_G1])
def test_per_interval_on_a_fixture_keeps_every_pause_and_millisecond(name: str) -> None:
    pauses = parsed(name).tables["pauses"]
    out = gc_per_interval(pauses, 10.0)
    assert out.gc_count.sum() == len(pauses)
    assert out.gc_time_ms.sum() == pytest.approx(pauses.pause_ms.sum(), abs=1e-6)
    assert out.gc_max_ms.max() == pauses.pause_ms.max()
    assert (out.gc_time_ms <= 10_000.0 + 1e-9).all()
    assert np.all(np.diff(out.interval_start.astype("int64")) == 10_000_000_000)


# ---------------------------------------------------------------- fuzz

def fuzz_texts() -> list[tuple[str, str]]:
    """Small real texts for each parser: whole small fixtures, windows of the big ones."""
    def window(name: str, first: int, count: int) -> str:
        return "".join(gc_text(name).splitlines(keepends=True)[first:first + count])
    return [("u", gc_text(TAGS216)), ("u", gc_text(SAFEPOINT182)), ("u", window(KOWCHIK, 3780, 30)),
            ("u", window(KOWCHIK, 0, 3) + window(KOWCHIK, 5028, 40)),
            ("j", window(WINDOWS_CMS, 0, 120)), ("j", window(ROTATED_CMS, 0, 80)), ("j", window(DSE_G1, 0, 160))]


@st.composite
def mutated(draw: st.DrawFn, texts: list[tuple[str, str]]) -> tuple[str, str]:
    """A fixture text with 1-4 line edits: delete, duplicate, swap, truncate, replace a
    character, insert a garbage line."""
    kind, text = draw(st.sampled_from(texts))
    lines = text.splitlines(keepends=True)
    lines = edit_lines(draw, lines)
    return kind, "".join(lines)


FUZZ_TRIED: list[int] = []


def test_fuzz_mutated_fixtures_give_a_result_or_a_parse_error() -> None:
    texts = fuzz_texts()

    @settings(max_examples=int(os.environ.get("CASSPERF_FUZZ_EXAMPLES", "150")), deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(mutated(texts), st.booleans())
    def run(case: tuple[str, str], own_parser: bool) -> None:
        kind, text = case
        FUZZ_TRIED.append(1)
        fn = (parse_unified_gc if kind == "u" else parse_jdk8_gc) if own_parser else \
            (parse_jdk8_gc if kind == "u" else parse_unified_gc)
        try:
            result = fn(text, "fuzz.log")
        except ParseError as err:
            assert err.path == "fuzz.log"
            return
        assert isinstance(result, ParseResult)
        assert list(result.tables["pauses"].columns) == list(PAUSE_COLUMNS)
        assert (result.tables["pauses"].pause_ms >= 0).all()
        assert result.complete or result.warnings                # incomplete is never silent
        assert result.skipped_lines == 0 or result.warnings      # skipped is never silent
        gc_per_interval(result.tables["pauses"], 1.0)

    run()
    print(f"gc fuzz: {len(FUZZ_TRIED)} inputs tried")
    assert len(FUZZ_TRIED) >= min(10, int(os.environ.get("CASSPERF_FUZZ_EXAMPLES", "150")))


def test_decorator_permutations_cover_every_pair_order() -> None:
    # the property test above samples orders; this pins every ordered pair of the shapes that
    # could be confused (ms vs ms, ns vs ns, int vs int) so none is left to chance
    confusable = ["timemillis", "uptimemillis", "timenanos", "uptimenanos", "pid", "tid", "tags", "hostname"]
    for a, b in itertools.permutations(confusable, 2):
        row = parse_unified_gc(decorated([a, b]), "pair").tables["pauses"].iloc[0]
        has_time = {a, b} & {"timemillis", "timenanos"}
        has_up = {a, b} & {"uptimemillis", "uptimenanos"}
        assert (row.time == START_UTC) if has_time else (row.time is pd.NaT), (a, b)
        assert (row.uptime_s == pytest.approx(4.284133)) if has_up else math.isnan(row.uptime_s), (a, b)


def test_a_year_outside_1970_2200_is_an_unreadable_time_not_an_overflow() -> None:
    # found by the fuzz test: '[0024-08-23T12:45:13.657+0530]' on a pause line raised
    # OutOfBoundsDatetime from inside pandas
    line = "[2024-08-23T12:45:13.657+0530][4.298s][98688][20483][info ] GC(0) Pause Young (Concurrent Start)"
    text = gc_text(KOWCHIK)
    assert text.count(line) == 1
    result = parse_unified_gc(text.replace(line, "[0024" + line[5:]), "kowchik.log")
    assert [str(w) for w in result.warnings if "unreadable time" in str(w)] == [
        "kowchik.log: expected valid wall-clock times; 1 event(s) have an unreadable time decorator and get NaT"]
    pauses = result.tables["pauses"]
    assert pauses["time"].isna().sum() == 1 and len(pauses) == len(parsed(KOWCHIK).tables["pauses"])
