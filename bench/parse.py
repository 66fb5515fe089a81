"""Parser speed on this machine, printed as a table, each figure beside a plain regex loop's.

    .venv/bin/python bench/parse.py [--gc-mb 1024] [--cs-hours 24] [--hdr-clients 8] [--hdr-seconds 3600]

Measures (targets on the 2-core project machine):

1. gc-unified: the largest unified-logging GC log of tests/fixtures/public (found by size among the
   files gc-unified sniffs) parsed once, MB/s; then a `--gc-mb` MB log (default 1024) made by
   repeating that file whole (a temp file, deleted afterwards), read as bytes and parsed with
   parse_unified_gc: MB/s, target >= 100 MB/s. Sanity: the big log's pauses, concurrent
   phases and safepoints are exactly `copies` times the single file's.
2. cassandra-stress: a synthetic `--cs-hours` h log at 1 s intervals of a mixed run with three op
   types (READ, WRITE, DELETE at 5:4:1), in the 4.x layout of
   cs_4.1.11_write_n25000_threads3_full_crystalloide.txt (50-wide type column, the same header,
   a driver WARN line once an hour, a Results block, END). cassandra-stress prints a `total`
   row after the per-op rows of every interval, so 24 h is 86,400 x 4 = 345,600 interval rows.
   Parsed with parse_stress_log: rows/s, target >= 1,000,000 rows/s; timed twice, as the first
   call in the process (pyarrow's CSV reader warms up) and again. Sanity: the row count, each
   op's last cumulative count, the summary rows and no warnings.
3. HDR: `--hdr-clients` client logs (default 8) of `--hdr-seconds` 1 s intervals (default 3600)
   with 3 tags (READ-st, WRITE-st, DELETE-st), written with write_hdr_log into a temp folder
   (not timed); then read (read_hdr_log(derive_intervals=False)) and merged per tag
   (cassperf.parsers.hdr_log.merge_logs) across all files, timed separately; target read + merge < 10 s.
   Sanity: each merged tag's counts array equals the sum, computed independently with numpy, of
   the interval histograms that were written.

Beside each: a plain loop over the same input (each line: one compiled regex .match, float() of
the captured groups), and the ratio parser/plain (> 1: the parser is faster). For the HDR merge
the plain way is HdrHistogram_py's own: HdrHistogram.decode + add per interval histogram.
Wall time, CPU time (time.process_time) and the 1-minute load average are printed for each
measurement (the machine is shared), and the peak RSS of the process after it
(resource.getrusage; the 1 GB GC log is held as bytes and as str while it is parsed).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cassperf.parsers import read_text
from cassperf.parsers.base import ParseResult
from cassperf.parsers.cassandra_stress import parse_stress_log
from cassperf.parsers.gc_unified import parse_unified_gc
from cassperf.parsers.gc_unified import sniff as gc_unified_sniff
from cassperf.parsers.hdr_log import merge_logs, read_hdr_log, write_hdr_log
from cassperf.results import hdr

MB = 1 << 20
#: real tool output from public repositories, carried by the repository
PUBLIC_FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "public"
CS_FIXTURE = "cassandra-stress/cs_4.1.11_write_n25000_threads3_full_crystalloide.txt"


# --- measuring -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Timing:
    wall_s: float
    cpu_s: float
    load1: float           # 1-minute load average just before
    peak_rss_mb: float     # process peak RSS after


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0   # Linux: KiB


def timed(fn: Callable[[], Any]) -> tuple[Any, Timing]:
    load = os.getloadavg()[0]
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return out, Timing(wall, cpu, load, peak_rss_mb())


@dataclass(frozen=True)
class Row:
    label: str
    size: str              # what was processed
    amount: float          # MB, rows or histograms processed (for unit "s": unused)
    unit: str              # "MB/s", "rows/s", "hist/s", or "s" (the figure is the time itself)
    target: float | None   # at least this throughput, or (unit "s") less than this many seconds
    parser: Timing
    plain: Timing | None


ROWS: list[Row] = []


def add_row(label: str, size: str, parser: Timing, amount: float, unit: str, target: float | None = None,
            plain: Timing | None = None) -> None:
    ROWS.append(Row(label, size, amount, unit, target, parser, plain))


def _figure(r: Row, seconds: float) -> float:
    return seconds if r.unit == "s" else r.amount / seconds


def _fmt(r: Row, value: float) -> str:
    return f"{value:,.1f} {r.unit}" if r.unit in ("s", "MB/s") else f"{value:,.0f} {r.unit}"


def _met(r: Row, value: float) -> str:
    if r.target is None:
        return ""
    ok = value < r.target if r.unit == "s" else value >= r.target
    return "yes" if ok else "NO"


def print_table() -> None:
    """Columns: the parser's wall and CPU time, its figure by each, the target and whether each
    figure meets it; the plain loop's wall and CPU time and figure (by wall); ratio = plain time
    / parser time (> 1: the parser is faster), by wall and by CPU; peak RSS after the step."""
    head = (f"{'measurement':36} {'input':>15} {'wall s':>7} {'cpu s':>7} {'load1':>5} {'figure (wall)':>15} "
            f"{'figure (cpu)':>15} {'target':>15} {'met w/c':>7} {'plain wall':>10} {'plain cpu':>9} "
            f"{'plain (wall)':>15} {'x wall':>6} {'x cpu':>6} {'peak RSS':>9}")
    print(head)
    print("-" * len(head))
    for r in ROWS:
        p = r.parser
        fw, fc = _figure(r, p.wall_s), _figure(r, p.cpu_s)
        target = "" if r.target is None else (f"< {r.target:g} s" if r.unit == "s" else ">= " + _fmt(r, r.target))
        met = f"{_met(r, fw)}/{_met(r, fc)}" if r.target is not None else ""
        if r.plain is None:
            pw = pc = pf = xw = xc = ""
        else:
            q = r.plain
            pw, pc, pf = f"{q.wall_s:.2f}", f"{q.cpu_s:.2f}", _fmt(r, _figure(r, q.wall_s))
            xw, xc = f"{q.wall_s / p.wall_s:.2f}", f"{q.cpu_s / p.cpu_s:.2f}"
        print(f"{r.label:36} {r.size:>15} {p.wall_s:7.2f} {p.cpu_s:7.2f} {p.load1:5.2f} {_fmt(r, fw):>15} "
              f"{_fmt(r, fc):>15} {target:>15} {met:>7} {pw:>10} {pc:>9} {pf:>15} {xw:>6} {xc:>6} "
              f"{p.peak_rss_mb:6.0f} MB")


def check(cond: bool, what: str) -> None:
    """A sanity check: a fast wrong parser must not look good."""
    if not cond:
        raise SystemExit(f"SANITY CHECK FAILED: {what}")


# --- 1. GC logs ------------------------------------------------------------------------------------

# Plain loop for the heaptrace/kowchik decorators ([time][uptime]...[level] message):
# [2024-03-27T04:12:22.105+0000][4.341s][1][141][info ] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 408M->23M(7872M) 13.829ms
# [2024-03-27T04:12:22.306+0000][4.542s][1][131][info ] Safepoint "G1CollectForAllocation", Time since last: ..., Total: 13947215 ns
PLAIN_GC = re.compile(
    rb"^\[[^\]]*\]\[(\d+\.\d+)s\](?:\[[^\]]*\])* (?:GC\((\d+)\) (?:Pause|Concurrent) [^\n]*? (\d+\.\d+)ms"
    rb"|Safepoint \"[^\"]*\", Time since last: (\d+) ns, Reaching safepoint: (\d+) ns, Cleanup: (\d+) ns, "
    rb"At safepoint: (\d+) ns, Total: (\d+) ns)\r?$")


def plain_gc_lines(lines: Any) -> int:
    match = PLAIN_GC.match
    hits = 0
    for line in lines:
        m = match(line)
        if m is not None:
            hits += 1
            for g in m.groups():
                if g is not None:
                    float(g)
    return hits


def plain_gc_file(path: Path) -> int:
    with open(path, "rb") as fh:
        return plain_gc_lines(fh)


def gc_counts(result: ParseResult) -> tuple[int, int, int]:
    return tuple(len(result.tables[t]) for t in ("pauses", "concurrent", "safepoints"))  # type: ignore[return-value]


def largest_unified_gc_fixture() -> Path:
    candidates = []
    for path in PUBLIC_FIXTURES.rglob("*"):
        if path.is_file() and not path.name.endswith(".source.txt") and path.name != "README.md":
            if gc_unified_sniff(read_text(path)[:65536]):
                candidates.append(path)
    if not candidates:
        raise SystemExit(f"no unified-logging GC log among the fixtures in {PUBLIC_FIXTURES}")
    return max(candidates, key=lambda p: p.stat().st_size)


def bench_gc(gc_mb: int, tmp: Path) -> None:
    src = largest_unified_gc_fixture()
    data = src.read_bytes()
    if not data.endswith(b"\n"):
        data += b"\n"
    size_mb = len(data) / MB
    print(f"gc: largest unified-logging fixture: {src.name} ({len(data):,} bytes)")
    one, t = timed(lambda: parse_unified_gc(data, str(src)))
    base = gc_counts(one)
    check(one.complete and one.skipped_lines == 0 and sum(base) > 0, f"the fixture parses cleanly: {base}")
    plain_hits, tp = timed(lambda: plain_gc_lines(data.splitlines(keepends=True)))
    print(f"gc: fixture pauses/concurrent/safepoints = {base}; plain loop matched {plain_hits} event lines "
          f"({'agrees' if plain_hits == sum(base) else 'differs'} with the parser's {sum(base)})")
    add_row("gc-unified: fixture, once", f"{size_mb:.2f} MB", t, size_mb, "MB/s", None, tp)

    copies = max(1, math.ceil(gc_mb * MB / len(data)))
    big = tmp / "gc-big.log"
    with open(big, "wb") as fh:
        for _ in range(copies):
            fh.write(data)
    big_mb = big.stat().st_size / MB
    print(f"gc: {big} = {copies} copies, {big.stat().st_size:,} bytes")
    try:
        raw, t_read = timed(big.read_bytes)
        result, t_parse = timed(lambda: parse_unified_gc(raw, str(big)))
        del raw
        got = gc_counts(result)
        expected = tuple(copies * n for n in base)
        check(got == expected, f"{copies} copies give {expected} events, the parser found {got}")
        check(result.complete and result.skipped_lines == 0, "the big log parses cleanly")
        del result
        hits, t_plain = timed(lambda: plain_gc_file(big))
        check(hits == copies * plain_hits, "the plain loop matched every copy")
        both = Timing(t_read.wall_s + t_parse.wall_s, t_read.cpu_s + t_parse.cpu_s, t_read.load1,
                      t_parse.peak_rss_mb)
        add_row("gc-unified: read bytes", f"{big_mb:,.0f} MB", t_read, big_mb, "MB/s")
        add_row("gc-unified: parse (bytes in memory)", f"{big_mb:,.0f} MB", t_parse, big_mb, "MB/s", 100.0)
        add_row("gc-unified: read + parse", f"{big_mb:,.0f} MB", both, big_mb, "MB/s", 100.0, t_plain)
    finally:
        big.unlink(missing_ok=True)


# --- 2. cassandra-stress -------------------------------------------------------------------------

# header and the driver WARN line exactly as in cs_4.1.11_write_n25000_threads3_full_crystalloide.txt
CS_HEADER = ("type                                               total ops,    op/s,    pk/s,   row/s,    mean,     med,"
             "     .95,     .99,    .999,     max,   time,   stderr, errors,  gc: #,  max ms,  sum ms,  sdv ms,      mb")
CS_WARN = ("WARN  15:43:31,966 Query 'com.datastax.driver.core.Statement$1@d6b44c4;' generated server side warning(s): "
           "`USE <keyspace>` with prepared statements is considered to be an anti-pattern due to ambiguity in "
           "non-qualified table names.")
# StressMetrics.ROWFORMAT of 4.x (50-wide type column)
CS_ROWFORMAT = ("%-50s%10d,%8.0f,%8.0f,%8.0f,%8.1f,%8.1f,%8.1f,%8.1f,%8.1f,%8.1f,%7.1f,%9.5f,%7d,%7.0f,%8.0f,"
                "%8.0f,%8.0f,%8.0f")
CS_OPS = (("READ", 5000.0, 1.6), ("WRITE", 4000.0, 0.9), ("DELETE", 1000.0, 0.95))   # op, ops/s, median ms


@dataclass(frozen=True)
class StressLog:
    text: str
    rows: int
    warn_lines: int
    last_counts: dict[str, int]


def make_stress_log(hours: float, seed: int = 7) -> StressLog:
    """A mixed run's stdout: per second one row per op and a total row, 4.x layout."""
    n = int(hours * 3600)
    rng = np.random.default_rng(seed)
    t = np.arange(1, n + 1, dtype=np.float64)
    daily = 1.0 + 0.25 * np.sin(2 * np.pi * t / 86400.0)                  # a day's swing
    per_op: dict[str, dict[str, np.ndarray]] = {}
    for op, rate, med in CS_OPS:
        ops = np.maximum(1, np.round(rate * daily * rng.normal(1.0, 0.05, n))).astype(np.int64)
        m = med * rng.lognormal(0.0, 0.15, n)
        per_op[op] = {"ops": ops, "count": np.cumsum(ops), "med": m, "mean": m * 1.25, "p95": m * 3.1,
                      "p99": m * 6.3, "p999": m * 14.0, "max": m * rng.uniform(20, 80, n),
                      "stderr": 0.02 / np.sqrt(t) + 0.001}
    tot_ops = sum(d["ops"] for d in per_op.values())
    gc_n = (rng.random(n) < 0.03).astype(np.int64)                          # a young GC every ~30 s
    gc_ms = gc_n * rng.uniform(3, 40, n)
    lines = ["Connected to cluster: bench, max pending requests per connection 128, max connections per host 8",
             "Datacenter: dc1; Host: /127.0.0.1:9042; Rack: rack1",
             "Created keyspaces. Sleeping 1s for propagation.",
             "Sleeping 2s...",
             f"Running [READ, WRITE, DELETE] with 16 threads for {n} seconds",
             CS_HEADER]
    fmt = CS_ROWFORMAT
    warns = 0
    cols = {op: [d[k].tolist() for k in ("ops", "count", "mean", "med", "p95", "p99", "p999", "max", "stderr")]
            for op, d in per_op.items()}
    tot_count = np.cumsum(tot_ops).tolist()
    tot = tot_ops.tolist()
    gcn, gcms = gc_n.tolist(), gc_ms.tolist()
    w = {op: int(d["ops"].sum()) for op, d in per_op.items()}
    for i in range(n):
        if i and i % 3600 == 0:
            lines.append(CS_WARN)
            warns += 1
        ts = float(i + 1)
        means = []
        for op, _rate, _med in CS_OPS:
            ops, count, mean, med, p95, p99, p999, mx, se = (c[i] for c in cols[op])
            means.append((mean, ops))
            lines.append(fmt % (op + ",", count, ops, ops, ops, mean, med, p95, p99, p999, mx, ts, se,
                                0, 0, 0, 0, 0, 0))
        tmean = sum(m * o for m, o in means) / tot[i]
        r = cols["READ"]
        lines.append(fmt % ("total,", tot_count[i], tot[i], tot[i], tot[i], tmean, r[3][i] * 0.8, r[4][i],
                            r[5][i], r[6][i], r[7][i], ts, r[8][i], 0, gcn[i], gcms[i], gcms[i], 0,
                            gcn[i] * 2400))
    dur = n
    total = int(tot_count[-1])
    rates = {op: round(int(per_op[op]["count"][-1]) / dur) for op, *_ in CS_OPS}

    def brk(vals: dict[str, str]) -> str:
        return "[" + ", ".join(f"{op}: {v}" for op, v in vals.items()) + "]"

    op_names = [op for op, *_ in CS_OPS]
    lat = {k: {op: float(np.median(per_op[op][k])) for op in op_names}
           for k in ("mean", "med", "p95", "p99", "p999")}
    lmax = {op: float(per_op[op]["max"].max()) for op in op_names}
    total_rate = round(total / dur)
    hh, mm, ss = dur // 3600, dur % 3600 // 60, dur % 60
    gc_total_ms = float(gc_ms.sum())
    lines += ["", "", "Results:",
              f"Op rate                   : {total_rate:>8,} op/s  " + brk({o: f"{rates[o]:,} op/s" for o in op_names}),
              f"Partition rate            : {total_rate:>8,} pk/s  " + brk({o: f"{rates[o]:,} pk/s" for o in op_names}),
              f"Row rate                  : {total_rate:>8,} row/s " + brk({o: f"{rates[o]:,} row/s" for o in op_names})]
    for key, name in (("mean", "Latency mean"), ("med", "Latency median"), ("p95", "Latency 95th percentile"),
                      ("p99", "Latency 99th percentile"), ("p999", "Latency 99.9th percentile")):
        overall = sum(lat[key][o] * w[o] for o in op_names) / sum(w.values())
        lines.append(f"{name:<26}: {overall:6.1f} ms " + brk({o: f"{lat[key][o]:.1f} ms" for o in op_names}))
    lines += [f"{'Latency max':<26}: {max(lmax.values()):6.1f} ms " + brk({o: f"{lmax[o]:.1f} ms" for o in op_names}),
              f"Total partitions          : {total:>10,} " + brk({o: f"{int(per_op[o]['count'][-1]):,}"
                                                              for o in op_names}),
              "Total errors              :          0 " + brk({o: "0" for o in op_names}),
              f"Total GC count            : {int(gc_n.sum())}",
              f"Total GC memory           : {gc_n.sum() * 2400 / 1024:.3f} GiB",
              f"Total GC time             : {gc_total_ms / 1000:6.1f} seconds",
              f"Avg GC time               : {gc_total_ms / max(1, gc_n.sum()):6.1f} ms",
              f"StdDev GC time            : {float(np.std(gc_ms[gc_n > 0])) if gc_n.any() else 0.0:6.1f} ms",
              f"Total operation time      : {hh:02d}:{mm:02d}:{ss:02d}",
              "", "END", ""]
    last = {op: int(per_op[op]["count"][-1]) for op in op_names} | {"total": total}
    return StressLog("\n".join(lines), n * (len(CS_OPS) + 1), warns, last)


# Plain loop: one regex per line, the op name and the 18 numbers of a 4.x row:
# total,                                                     4,       4,       4,       4,    55.4,     1.8, ...
PLAIN_CS = re.compile(r"^(\w+),\s*" + r",\s*".join([r"(-?[\d.]+|NaN)"] * 18) + r"\s*$")


def plain_cs(text: str) -> int:
    match = PLAIN_CS.match
    rows = []
    append = rows.append
    for line in text.splitlines():
        m = match(line)
        if m is not None:
            g = m.groups()
            append((g[0], *map(float, g[1:])))
    return len(rows)


def bench_stress(hours: float) -> None:
    log, tg = timed(lambda: make_stress_log(hours))
    print(f"cassandra-stress: {hours:g} h log, {log.rows:,} interval rows, {len(log.text) / MB:.1f} MB "
          f"(generated in {tg.wall_s:.1f} s, not counted)")
    result, t = timed(lambda: parse_stress_log(log.text, "synthetic-24h.log"))
    check(len(result.runs) == 1, f"one run, got {len(result.runs)}")
    run = result.runs[0]
    iv = run.intervals
    check(iv is not None and len(iv) == log.rows, f"{log.rows} interval rows, got {0 if iv is None else len(iv)}")
    assert iv is not None
    check(result.skipped_lines == log.warn_lines, f"{log.warn_lines} WARN lines skipped, got {result.skipped_lines}")
    check(result.complete and result.warnings == [], f"no warnings: {[str(w) for w in result.warnings[:3]]}")
    for op, count in log.last_counts.items():
        got = int(iv.loc[iv["op"] == op, "count"].iloc[-1])
        check(got == count, f"{op}: last cumulative count {count}, parsed {got}")
    check(list(run.summary["op"]) == ["READ", "WRITE", "DELETE", "total"], f"summary ops {list(run.summary['op'])}")
    check(int(run.summary.loc[run.summary["op"] == "total", "partitions"].iloc[0]) == log.last_counts["total"],
          "Results Total partitions")
    check(float(iv["time_s"].iloc[-1]) == hours * 3600, "last interval time")
    rows_plain, tp = timed(lambda: plain_cs(log.text))
    check(rows_plain == log.rows, f"the plain loop found {rows_plain} rows, expected {log.rows}")
    again, t2 = timed(lambda: parse_stress_log(log.text, "synthetic-24h.log"))
    check(again.runs[0].intervals is not None and len(again.runs[0].intervals) == log.rows, "the second parse")
    add_row(f"cassandra-stress: {hours:g} h log, 1st call", f"{log.rows:,} rows", t, log.rows, "rows/s", 1_000_000.0,
            tp)
    add_row(f"cassandra-stress: {hours:g} h log, again", f"{log.rows:,} rows", t2, log.rows, "rows/s", 1_000_000.0,
            tp)


# --- 3. HDR interval logs ------------------------------------------------------------------------

HDR_TAGS = (("READ-st", 2.0e6, 600), ("WRITE-st", 0.9e6, 480), ("DELETE-st", 1.0e6, 120))  # tag, median ns, ops/s


def make_hdr_logs(folder: Path, clients: int, seconds: int, pool: int = 40, seed: int = 11
                  ) -> tuple[list[Path], dict[str, np.ndarray], dict[str, int]]:
    """Client logs; returns the paths, each tag's expected merged counts and total count."""
    rng = np.random.default_rng(seed)
    payloads: dict[str, list[str]] = {}
    counts: dict[str, list[np.ndarray]] = {}
    for tag, median, rate in HDR_TAGS:
        payloads[tag], counts[tag] = [], []
        for _ in range(pool):
            samples = np.maximum(1, rng.lognormal(math.log(median), 0.5, rng.poisson(rate))).astype(np.int64)
            h = hdr.histogram_from_samples(samples.tolist())
            enc = hdr.encode(h)
            payloads[tag].append(enc)
            counts[tag].append(hdr.decode_counts(enc).counts)
    width = max(len(c) for cs in counts.values() for c in cs)
    expected = {tag: np.zeros(width, dtype=np.int64) for tag, *_ in HDR_TAGS}
    paths = []
    for c in range(clients):
        rows = []
        for i in range(seconds):
            for tag, *_ in HDR_TAGS:
                k = (i * 7 + c * 13 + len(tag)) % pool
                rows.append((tag, float(i), float(i + 1), payloads[tag][k]))
                cnt = counts[tag][k]
                expected[tag][:len(cnt)] += cnt
        path = folder / f"client{c + 1}.hdr"
        write_hdr_log(rows, path, start_epoch_s=1_700_000_000.0 + 0.25 * c)
        paths.append(path)
    totals = {tag: int(v.sum()) for tag, v in expected.items()}
    return paths, expected, totals


# Plain loop: Tag=READ-st,0.000,1.000,9.331,HISTFAAAA...
PLAIN_HDR = re.compile(r"^Tag=([^,]*),(\d+\.\d+),(\d+\.\d+),(\d+\.\d+),(HIST\S+)$")


def plain_hdr_read(paths: list[Path]) -> list[tuple[str, float, float, float, str]]:
    match = PLAIN_HDR.match
    out = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            for line in fh:
                m = match(line)
                if m is not None:
                    tag, a, b, mx, payload = m.groups()
                    out.append((tag, float(a), float(b), float(mx), payload))
    return out


def plain_hdr_merge(rows: list[tuple[str, float, float, float, str]]) -> dict[str, Any]:
    from hdrh.histogram import HdrHistogram

    merged: dict[str, Any] = {}
    for tag, _a, _b, _mx, payload in rows:
        h = HdrHistogram.decode(payload)
        if tag in merged:
            merged[tag].add(h)
        else:
            merged[tag] = h
    return merged


def bench_hdr(tmp: Path, clients: int, seconds: int) -> None:
    folder = tmp / "hdr"
    folder.mkdir()
    (paths, expected, totals), tg = timed(lambda: make_hdr_logs(folder, clients, seconds))
    n_rows = clients * seconds * len(HDR_TAGS)
    size_mb = sum(p.stat().st_size for p in paths) / MB
    print(f"hdr: {clients} logs x {seconds} s x {len(HDR_TAGS)} tags = {n_rows:,} interval histograms, "
          f"{size_mb:.1f} MB (generated in {tg.wall_s:.1f} s, not counted)")
    results, t_read = timed(lambda: [read_hdr_log(p, derive_intervals=False) for p in paths])
    check(sum(len(r.runs[0].histograms) for r in results) == n_rows, "every interval line was read")
    merged, t_merge = timed(lambda: merge_logs(results))
    check(sorted(merged) == sorted(totals), f"tags {sorted(merged)}")
    for tag, h in merged.items():
        got = np.ctypeslib.as_array(h.counts).view(np.int64)
        want = expected[tag]
        n = max(len(got), len(want))
        g = np.zeros(n, dtype=np.int64)
        w = np.zeros(n, dtype=np.int64)
        g[:len(got)] = got
        w[:len(want)] = want
        check(np.array_equal(g, w), f"{tag}: merged counts equal the numpy sum of the written histograms")
        check(int(h.get_total_count()) == totals[tag], f"{tag}: total count {totals[tag]}")
    rows, tp_read = timed(lambda: plain_hdr_read(paths))
    check(len(rows) == n_rows, "the plain loop read every interval line")
    plain_merged, tp_merge = timed(lambda: plain_hdr_merge(rows))
    for tag, h in plain_merged.items():
        check(int(h.get_total_count()) == totals[tag], f"{tag}: HdrHistogram_py's merge total")
        check(hdr.percentile_ms(h, 99.0) == hdr.percentile_ms(merged[tag], 99.0), f"{tag}: the same p99")
    both = Timing(t_read.wall_s + t_merge.wall_s, t_read.cpu_s + t_merge.cpu_s, t_read.load1, t_merge.peak_rss_mb)
    plain_both = Timing(tp_read.wall_s + tp_merge.wall_s, tp_read.cpu_s + tp_merge.cpu_s, tp_read.load1,
                        tp_merge.peak_rss_mb)
    label = f"{clients} x {seconds} s x {len(HDR_TAGS)}"
    add_row("hdr: read logs", label, t_read, n_rows, "hist/s", None, tp_read)
    add_row("hdr: merge per tag (plain: hdrh)", label, t_merge, n_rows, "hist/s", None, tp_merge)
    add_row("hdr: read + merge", label, both, n_rows, "s", 10.0, plain_both)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gc-mb", type=int, default=1024, help="size of the repeated GC log, MB (default 1024)")
    ap.add_argument("--cs-hours", type=float, default=24.0, help="length of the cassandra-stress log, h (default 24)")
    ap.add_argument("--hdr-clients", type=int, default=8, help="HDR client logs (default 8)")
    ap.add_argument("--hdr-seconds", type=int, default=3600, help="1 s intervals per HDR log (default 3600)")
    args = ap.parse_args()
    print(f"{os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"python {sys.version.split()[0]}")
    tmp = Path(tempfile.mkdtemp(prefix="cassperf-bench-parse-"))
    try:
        bench_gc(args.gc_mb, tmp)
        bench_stress(args.cs_hours)
        bench_hdr(tmp, args.hdr_clients, args.hdr_seconds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print()
    print("figure = parser throughput (or seconds) by wall / by process CPU time; met w/c = target met by "
          "wall / by CPU; plain = one compiled regex .match + float() per line (hdr merge: HdrHistogram_py "
          "decode + add); x = plain time / parser time (> 1: the parser is faster)")
    print_table()
    print(f"peak RSS {peak_rss_mb():,.0f} MB; CPU time {time.process_time():.1f} s; "
          f"load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
