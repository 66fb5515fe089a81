"""cassandra-stress parser on 5.0-era output: the user-mode profile dump, the insert statement,
and GC figures of runs that could not reach JMX.

Fixtures: tests/fixtures/cassandra-stress-5.0 (project-made: real runs of a cassandra-stress built
from Apache source, a reconstructed 5.0/4.1.1 mix, against Cassandra 5.0.6; see its README.md).
Expected figures are the Results blocks cassandra-stress printed, read from the sidecars
(`<file>.source.txt`) by a reader independent of the parser, plus the user mix's per-op figures
written out below. The `*.stdout.txt` files hold stdout only; `runner-*.txt` hold stdout and
stderr merged (as cassperf's runner records them), so only they carry the JMX failure message.
Cases the captures lack (two runs pasted together, the message inside the rows or after the last
run, a profile fence never closed) are built from the captures' own lines, marked as such.
"""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from cassperf.parsers import detect
from cassperf.parsers.base import ParseResult
from cassperf.parsers.cassandra_stress import JMX_FAILED_MESSAGE, parse_stress_log
from cassperf.results.model import INTERVAL_COLUMNS
from tests.fuzzing import FUZZ_EXAMPLES, fuzz_parser, mutated

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "cassandra-stress-5.0"
STDOUT = ["write.stdout.txt", "mixed.stdout.txt", "user-load.stdout.txt", "user-mix.stdout.txt"]
MERGED = ["runner-user-mix.txt", "runner-write.txt"]
ALL = STDOUT + MERGED

INTERVAL_GC = ["gc_count", "gc_max_ms", "gc_total_ms", "gc_sdv_ms", "gc_mb"]
SUMMARY_GC = ["gc_count", "gc_memory_bytes", "gc_time_s", "gc_avg_ms", "gc_sdv_ms"]


def text_of(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=None)
def parsed(name: str) -> ParseResult:
    return parse_stress_log(text_of(name), name)


# ---- the sidecars' Results blocks, read without the parser ------------------------------------

_SIDECAR_KEYS = {"Op rate": "rate_ops_s", "Partition rate": "partition_rate_s", "Row rate": "row_rate_s",
                 "Latency mean": "latency_mean_ms", "Latency median": "latency_p50_ms",
                 "Latency 95th percentile": "latency_p95_ms", "Latency 99th percentile": "latency_p99_ms",
                 "Latency 99.9th percentile": "latency_p999_ms", "Latency max": "latency_max_ms",
                 "Total partitions": "partitions", "Total errors": "errors"}


def _num(token: str) -> float:
    return float(re.match(r"[\d,.]+", token.strip()).group(0).replace(",", ""))


def sidecar_figures(name: str) -> tuple[dict[str, float], dict[str, dict[str, float]], float]:
    """(total figures, per-op figures, duration in s) of the Results block in the sidecar."""
    lines = (HERE / f"{name}.source.txt").read_text(encoding="utf-8").split("\n")
    block = lines[lines.index("  Results:") + 1:]
    total: dict[str, float] = {}
    per_op: dict[str, dict[str, float]] = {}
    duration = math.nan
    for line in block:
        key, _, value = (part.strip() for part in line.partition(":"))
        if key == "Total operation time":
            h, m, s = value.split(":")
            duration = int(h) * 3600 + int(m) * 60 + int(s)
        if key not in _SIDECAR_KEYS:
            continue
        col = _SIDECAR_KEYS[key]
        main, _, bracket = value.partition("[")
        total[col] = _num(main)
        for item in bracket.rstrip("]").split(", "):
            op, _, v = item.partition(":")
            per_op.setdefault(op.strip(), {})[col] = _num(v)
    return total, per_op, duration


@pytest.mark.parametrize("name", ALL)
def test_every_results_figure_equals_the_sidecar(name: str) -> None:
    total, per_op, duration = sidecar_figures(name)
    assert len(total) == 11 and per_op and duration > 0            # the reader found the block
    (run,) = parsed(name).runs
    summary = run.summary.set_index("op")
    assert sorted(summary.index) == sorted([*per_op, "total"])
    for col, value in total.items():
        assert summary.loc["total", col] == value, col
    for op, figures in per_op.items():
        for col, value in figures.items():
            assert summary.loc[op, col] == value, (op, col)
    assert summary.loc["total", "duration_s"] == duration


def test_user_mix_per_op_figures_and_counts() -> None:
    """Printed: Op rate 298 [delete: 26, insert: 120, read: 152]; Latency 99th 5.8 [delete: 5.5,
    insert: 5.0, read: 7.3]; max 87.8 [17.3, 30.0, 87.8]; Total partitions 2,862 [0, 2,429, 433];
    last interval rows (20.2 s): delete 521, insert 2429, read 3066, total 6016 total ops."""
    (run,) = parsed("user-mix.stdout.txt").runs
    s = run.summary.set_index("op")
    assert s["rate_ops_s"].to_dict() == {"delete": 26, "insert": 120, "read": 152, "total": 298}
    assert s["latency_p99_ms"].to_dict() == {"delete": 5.5, "insert": 5.0, "read": 7.3, "total": 5.8}
    assert s["latency_max_ms"].to_dict() == {"delete": 17.3, "insert": 30.0, "read": 87.8, "total": 87.8}
    assert s["partitions"].to_dict() == {"delete": 0, "insert": 2429, "read": 433, "total": 2862}
    assert s["count"].to_dict() == {"delete": 521, "insert": 2429, "read": 3066, "total": 6016}
    assert s.loc["total", "duration_s"] == 20
    assert run.manifest["latency_type"] == "unknown"          # fixed or throttle 300/s: the dump does not say
    assert run.manifest["ops"] == ["insert", "read", "delete"]
    iv = run.intervals
    assert len(iv) == 21 * 4 and set(iv["op"]) == {"delete", "insert", "read", "total"}
    assert iv["time_s"].iloc[-1] == 20.2


# ---- the profile dump and the insert statement ------------------------------------------------

@pytest.mark.parametrize("name", ["user-load.stdout.txt", "user-mix.stdout.txt"])
def test_user_mode_stdout_parses_without_a_warning_or_a_skipped_line(name: str) -> None:
    result = parsed(name)
    assert [str(w) for w in result.warnings] == []
    assert result.skipped_lines == 0 and result.complete


def test_the_merged_user_mix_has_exactly_the_jmx_warning_and_two_counted_launcher_lines() -> None:
    """The two 'Warning: ignoring deprecated parameter: native/cql3' lines come before the output
    starts (the launcher's): counted in skipped_lines, not warned about."""
    result = parsed("runner-user-mix.txt")
    assert len(result.warnings) == 1 and result.warnings[0].line_no == 139
    assert result.skipped_lines == 2 and result.complete


def test_profile_and_insert_statement_are_kept_in_the_settings() -> None:
    settings = parsed("user-mix.stdout.txt").runs[0].manifest["settings"]
    profile = settings["Profile"]
    assert profile["Keyspace Name"] == "ks_user" and profile["Table Name"] == "standard1"
    assert profile["Keyspace CQL"] == ("CREATE KEYSPACE IF NOT EXISTS \"ks_user\" WITH replication = {'class': "
                                       "'org.apache.cassandra.locator.SimpleStrategy', 'replication_factor' : '1'} "
                                       "AND durable_writes = true;")
    assert profile["Table CQL"] == ('CREATE TABLE IF NOT EXISTS ks_user.standard1 (key blob PRIMARY KEY\n, "C0" blob\n'
                                    ', "C1" blob\n, "C2" blob\n, "C3" blob\n, "C4" blob) WITH compression = {};')
    assert profile["Query Definitions.read"] == "CQL:SELECT * FROM standard1 WHERE key = ?;Fields:samerow;"
    assert profile["Query Definitions.delete"] == "CQL:DELETE FROM standard1 WHERE key = ?;Fields:samerow;"
    assert profile["Generator Configs.C0"] == "Size: Fixed:  key=818;"
    assert profile["Insert Settings.batchtype"] == "UNLOGGED"
    assert profile["Extra Schema Definitions"] == "null"
    assert settings["Insert Statement"] == {"CQL": 'UPDATE standard1 SET "C0" = ?,"C1" = ?,"C2" = ?,"C3" = ?,"C4" = ? '
                                                   "WHERE key = ?"}
    assert settings["Command"]["Profile File(s)"] == "user-profile.yaml"
    assert settings["Credentials file"]["CQL password"] == "*not set*"
    command = parsed("user-mix.stdout.txt").runs[0].manifest["command"]
    assert command == ("user profile=user-profile.yaml duration=20s ops(insert=4,read=5,delete=1) cl=LOCAL_ONE "
                       "-rate threads=16 -node 127.0.17.1")       # rebuilt from the dump ('Count: -1': no n=)


def _with(name: str, after: str, new_lines: list[str], occurrence: int = 1) -> str:
    """The capture with lines inserted after the `occurrence`-th line equal to `after` (constructed)."""
    lines = text_of(name).split("\n")
    idx = [i for i, ln in enumerate(lines) if ln == after][occurrence - 1]
    return "\n".join(lines[:idx + 1] + new_lines + lines[idx + 1:])


def test_unknown_lines_outside_the_blocks_are_still_warned_about() -> None:
    """Constructed: a stray line after 'Created schema...' and one after a blank line in the dump."""
    text = _with("user-mix.stdout.txt", "Created schema. Sleeping 1s for propagation.", ["stray output"])
    result = parse_stress_log(text, "x.log")
    assert [(w.line_no, w.line) for w in result.warnings] == [(125, "stray output")]
    assert result.skipped_lines == 1
    text = _with("user-mix.stdout.txt", "***", ["", "stray output"], occurrence=2)   # after the keyspace CQL
    result = parse_stress_log(text, "x.log")
    warned = [(w.line_no, w.line) for w in result.warnings]
    assert warned[:2] == [(96, "stray output"), (98, "  Table Name: standard1")]    # the dump ended there
    assert result.runs[0].summary.set_index("op").loc["total", "rate_ops_s"] == 298


def test_an_insert_statement_marker_without_its_statement_is_warned_about() -> None:
    lines = text_of("user-load.stdout.txt").split("\n")
    i = lines.index("Insert Statement:")
    result = parse_stress_log("\n".join(lines[:i + 1] + lines[i + 2:]), "x.log")
    assert [(w.line_no, w.line) for w in result.warnings] == [(i + 1, "Insert Statement:")]
    assert "Insert Statement" not in result.runs[0].manifest["settings"]


def test_a_profile_fence_never_closed_ends_at_the_next_stress_line_with_a_warning() -> None:
    """Constructed: the closing '***' of the table CQL removed."""
    lines = text_of("user-load.stdout.txt").split("\n")
    fences = [i for i, ln in enumerate(lines) if ln == "***"]
    del lines[fences[3]]
    result = parse_stress_log("\n".join(lines), "x.log")
    assert any("closing '***'" in w.expected for w in result.warnings)
    assert result.runs[0].summary.set_index("op").loc["total", "rate_ops_s"] == 3473


# ---- GC figures when cassandra-stress could not reach JMX -------------------------------------

@pytest.mark.parametrize(("name", "line_no", "messages"), [("runner-write.txt", 106, 2),
                                                            ("runner-user-mix.txt", 139, 4)])
def test_gc_columns_are_nan_when_jmx_failed_and_the_rest_is_as_printed(name: str, line_no: int,
                                                                       messages: int) -> None:
    text = text_of(name)
    result = parsed(name)
    (run,) = result.runs
    (warning,) = result.warnings
    assert (warning.path, warning.line_no, warning.line) == (name, line_no, JMX_FAILED_MESSAGE)
    assert f"({messages} time(s))" in warning.expected and "not measurements" in warning.expected
    assert run.warnings == [str(warning)]
    assert run.manifest["gc_collected"] is False
    iv, sm = run.intervals, run.summary
    assert str(iv["gc_count"].dtype) == "Int64" and iv["gc_count"].isna().all()
    assert all(iv[c].isna().all() for c in INTERVAL_GC)
    assert all(sm[c].isna().all() for c in SUMMARY_GC)
    # everything else is what the tool printed: the same text without the message parses to the same figures
    bare = parse_stress_log("\n".join(ln for ln in text.split("\n") if ln != JMX_FAILED_MESSAGE), name)
    (kept,) = bare.runs
    assert kept.manifest["gc_collected"] is None and bare.warnings == []
    assert (kept.intervals[INTERVAL_GC] == 0).all().all()           # the printed zeros
    assert kept.summary.set_index("op").loc["total", "gc_count"] == 0
    others = [c for c in iv.columns if c not in INTERVAL_GC]
    pd.testing.assert_frame_equal(iv[others], kept.intervals[others])
    s_others = [c for c in sm.columns if c not in SUMMARY_GC]
    pd.testing.assert_frame_equal(sm[s_others], kept.summary[s_others])


@pytest.mark.parametrize("name", STDOUT)
def test_stdout_alone_cannot_tell_so_gc_figures_stay_as_printed(name: str) -> None:
    (run,) = parsed(name).runs
    assert run.manifest["gc_collected"] is None
    assert (run.intervals["gc_count"] == 0).all()
    assert run.summary.set_index("op").loc["total", "gc_time_s"] == 0


def test_the_message_belongs_to_the_run_it_is_printed_in_or_before() -> None:
    """Constructed: two pasted runs of write.stdout.txt, the message only before the second's
    'Running' line (a warm-up's), and one inside the second's interval rows."""
    one = text_of("write.stdout.txt").rstrip("\n")
    lines = one.split("\n")
    running = next(i for i, ln in enumerate(lines) if ln.startswith("Running WRITE"))
    second = lines[:running] + [JMX_FAILED_MESSAGE] + lines[running:running + 3] + [JMX_FAILED_MESSAGE] \
        + lines[running + 3:]
    result = parse_stress_log(one + "\n" + "\n".join(second) + "\n", "paste.log")
    first, last = result.runs
    assert first.manifest["gc_collected"] is None and (first.intervals["gc_count"] == 0).all()
    assert last.manifest["gc_collected"] is False and last.intervals["gc_count"].isna().all()
    assert [w.line_no for w in result.warnings] == [len(lines) + running + 5]     # the last message of run 2
    assert last.summary.set_index("op").loc["total", "rate_ops_s"] == 2436


def test_a_message_after_the_last_run_changes_nothing_and_is_warned_about() -> None:
    text = text_of("write.stdout.txt") + JMX_FAILED_MESSAGE + "\n"
    result = parse_stress_log(text, "late.log")
    (run,) = result.runs
    assert run.manifest["gc_collected"] is None and (run.intervals["gc_count"] == 0).all()
    (warning,) = result.warnings
    assert warning.line == JMX_FAILED_MESSAGE and "none started" in warning.expected


def test_jmx_failure_in_an_auto_rate_ramp_clears_that_steps_rows_of_the_thread_table() -> None:
    """Constructed from the merged write capture: its run announced as an auto-rate step, with the
    summary table cassandra-stress prints after a ramp (values copied from the run's last row)."""
    text = text_of("runner-write.txt").replace("Running WRITE with 16 threads",
                                               "Running with 16 threadCount\nRunning WRITE with 16 threads")
    pad = " " * 47
    table = (f"             id, type{pad}total ops,    op/s,    pk/s,   row/s,    mean,     med,     .95,     .99,"
             "    .999,     max,   time,   stderr, errors,  gc: #,  max ms,  sum ms,  sdv ms,      mb\n")
    for op in ("WRITE", "total"):
        table += (f"  16 threadCount, {op},{pad}20000,    3059,    3059,    3059,     4.5,     2.7,    11.1,    34.8,"
                  "   117.0,   766.0,    6.5,  0.01000,      0,      0,       0,       0,       0,       0\n")
    result = parse_stress_log(text.replace("\nEND\n", "\n" + table + "\nEND\n"), "ramp.log")
    ts = result.tables["thread_summary"]
    assert len(ts) == 2 and all(ts[c].isna().all() for c in INTERVAL_GC)
    assert list(ts["count"]) == [20000, 20000] and list(ts["rate_ops_s"]) == [3059, 3059]
    assert result.runs[0].manifest["gc_collected"] is False


def test_the_new_captures_are_detected_as_cassandra_stress() -> None:
    for name in ALL:
        assert detect(text_of(name)).name == "cassandra-stress", name


# ---- fuzz ---------------------------------------------------------------------------------------

def test_fuzz_mutated_5_0_captures_give_a_result_or_a_parse_error() -> None:
    texts = [text_of(n) for n in ("user-load.stdout.txt", "runner-write.txt")]
    lines = text_of("runner-user-mix.txt").split("\n")
    texts.append("\n".join(lines[:200]) + "\n")          # the profile dump, the JMX messages, rows (cut)

    def check(result: ParseResult) -> None:
        for r in result.runs:
            assert list(r.intervals.columns[:len(INTERVAL_COLUMNS)]) == list(INTERVAL_COLUMNS)
            if r.manifest["gc_collected"] is False:
                assert r.intervals["gc_count"].isna().all()

    tried = fuzz_parser(parse_stress_log, mutated(texts), "fuzz.log", check)
    print(f"cassandra-stress 5.0 fuzz inputs tried: {tried}")
    assert tried >= min(10, FUZZ_EXAMPLES)
