"""cassandra-stress `-graph file=x.html` -> Runs (format "cassandra-stress-graph").

The HTML embeds one JavaScript assignment between two markers (StressGraph.java):

    /* stats start */
    stats = {"stats":[{"revision":"unknown","command":"user profile=... ops(insert=1,...)",
             "metrics":["type","total ops","op/s",...], "intervals":[[null,2243,2243,...],...],
             "op rate":"4,564 op/s  [events: 1,519 op/s, insert: 1,526 op/s, ...]", ...}, ...],
             "title":"Summit-2016"};
    /* stats end */

Every entry of `stats` is one run (a later -graph run with the same file appends entries, so a
file holds several revisions; an auto-rate ramp appends one entry per thread count). Each becomes
a Run labelled with its revision and title ("rev - 8 threads" revisions also give threads).

Op inference. StressGraph re-reads the tool's stdout and turns every field into a BigDecimal,
so the op name column ("total", "insert", ...) and any NaN become null. The stdout prints, per
interval, one row per op type in sorted order (a TreeMap) and then the `total` row; the
Results line brackets list the ops in that same order. So: with k ops named in the summary
(else in the command's ops(...)), rows come in groups of k+1 whose last row is `total`, and
this is verified, not assumed: the total row's cumulative `total ops` must equal the sum of
the group's per-op rows. Where groups are irregular, rows are walked one by one with the same
rule; per-op rows that cannot be named get 'unknown-N' and a warning. The result is then
checked against the summary's per-op figures (each op's last cumulative count / its time
against its op rate; its mean interval row rate against its row rate) and a warning says when
they disagree. A single-op run prints only `total` rows.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from cassperf.errors import ParseError
from cassperf.parsers.base import Format, ParseResult, check_text
from cassperf.parsers.cassandra_stress_rows import DEFAULT_COLUMNS, align_times, make_header, whole_numbers
from cassperf.parsers.cassandra_stress_settings import rate_and_latency_type
from cassperf.parsers.cassandra_stress_summary import RESULT_KEYS, parse_results, summary_rows
from cassperf.results.model import INTERVAL_COLUMNS, Run

FORMAT_NAME = "cassandra-stress-graph"

# /* stats start */\nstats = {"stats":[{"total operation time":"00:01:00", ...
_STATS_START_RE = re.compile(r"/\*\s*stats start\s*\*/\s*stats\s*=\s*")
# ...,"title":"Summit-2016"};\n/* stats end */
_STATS_END_RE = re.compile(r";?\s*/\*\s*stats end\s*\*/")
# "revision":"unknown - 8 threads"
_REVISION_THREADS_RE = re.compile(r"^(.*?) - (\d+) threads$")
# user profile=./tlp-users.yaml duration=1m ops(insert=1,latest_event=1,events=1) truncate=once
_OPS_RE = re.compile(r"\bops\(([^)]*)\)")

_RESERVED_KEYS = frozenset({"intervals", "metrics", "revision", "command", "test", "title"})


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _load_stats(text: str, source: str, result: ParseResult) -> tuple[list[Any], str | None]:
    """(entries of `stats`, title). A cut or damaged object keeps the entries that are whole."""
    m = _STATS_START_RE.search(text)
    if m is None:
        raise ParseError(source, None, None, "a cassandra-stress -graph HTML file with a '/* stats start */ "
                                             "stats = {...}' block")
    start = m.end()
    end_m = _STATS_END_RE.search(text, start)
    body_end = end_m.start() if end_m else len(text)
    try:
        obj = json.loads(text[start:body_end])
    except json.JSONDecodeError as exc:
        return _salvage(text, start, source, result, exc)
    if not isinstance(obj, dict) or not isinstance(obj.get("stats"), list):
        line_no = _line_of(text, start)
        raise ParseError(source, line_no, text[start:start + 200], 'a JSON object {"stats": [...], "title": ...}')
    if end_m is None:
        result.warn(None, None, "'/* stats end */' after the stats object; the file ends without it")
    return obj["stats"], obj.get("title") if isinstance(obj.get("title"), str) else None


def _salvage(text: str, start: int, source: str, result: ParseResult,
             exc: json.JSONDecodeError) -> tuple[list[Any], str | None]:
    """Entries that decode whole, up to the first that does not (a truncated or damaged file)."""
    decoder = json.JSONDecoder()
    m = re.compile(r'\{\s*"stats"\s*:\s*\[').match(text, start)
    if m is None:
        pos = start + exc.pos
        raise ParseError(source, _line_of(text, pos), text[pos:pos + 200],
                         f'a JSON object {{"stats": [...]}} ({exc.msg})')
    pos, entries = m.end(), []
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos < len(text) and text[pos] == "]":
            break
        try:
            entry, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as err:
            result.complete = False
            result.warn(_line_of(text, err.pos), text[err.pos:err.pos + 120],
                        f"a whole JSON stats entry ({err.msg}); the stats object is cut or damaged here, "
                        f"{len(entries)} whole entries kept")
            break
        entries.append(entry)
    title = re.search(r'"title"\s*:\s*"((?:[^"\\]|\\.)*)"\s*}\s*;?\s*/\*\s*stats end', text[start:])
    return entries, json.loads(f'"{title.group(1)}"') if title else None


def infer_ops(counts: np.ndarray, op_names: list[str]) -> tuple[list[str], list[str]]:
    """Op name of each interval row whose type is null, from the cumulative `total ops` column.

    Returns (ops, problems). See the module docstring for the rule."""
    n, k = len(counts), len(op_names)
    if k <= 1:
        return ["total"] * n, []
    g = k + 1
    if n and n % g == 0:
        c = counts.reshape(-1, g)
        if np.array_equal(c[:, :k].sum(axis=1), c[:, k]):
            return (list(op_names) + ["total"]) * (n // g), []
    ops: list[str] = [""] * n
    problems: list[str] = []
    start, buf_sum = 0, 0.0
    for i in range(n):
        size = i - start
        c = counts[i]
        if 1 <= size <= k and c == buf_sum:
            names = op_names if size == k else [f"unknown-{j + 1}" for j in range(size)]
            if size != k:
                problems.append(f"interval rows {start + 1}-{i}: {size} per-op row(s) before a total row, "
                                f"expected {k} ({', '.join(op_names)}); their ops are unknown")
            ops[start:i] = names
            ops[i] = "total"
            start, buf_sum = i + 1, 0.0
        else:
            buf_sum += c
    if start < n:
        size = n - start
        names = op_names if size == k else [f"unknown-{j + 1}" for j in range(size)]
        if size > k:
            names = [f"unknown-{j + 1}" for j in range(size)]
        ops[start:] = names
        problems.append(f"interval rows {start + 1}-{n}: no total row whose count is their sum; "
                        + ("named in summary order" if size == k else "their ops are unknown"))
    return ops, problems


def _op_names(entry: dict[str, Any], block_ops: list[str]) -> list[str]:
    if block_ops:
        return block_ops
    m = _OPS_RE.search(str(entry.get("command") or ""))
    if m:
        return sorted(p.split("=", 1)[0].strip() for p in m.group(1).split(",") if p.strip())
    return []


def _verify(ops: list[str], values: dict[str, np.ndarray], per_op: dict[str, dict[str, float]]) -> list[str]:
    """Disagreements between inferred per-op rows and the summary's per-op figures."""
    out: list[str] = []
    ops_arr = np.asarray(ops, dtype=object)
    for op, figures in per_op.items():
        idx = np.flatnonzero(ops_arr == op)
        if idx.size == 0:
            continue
        last = idx[-1]
        rate = figures.get("rate_ops_s")
        t = values["time_s"][last] if "time_s" in values else np.nan
        if rate is not None and "count" in values and t > 0:
            est = values["count"][last] / t
            if abs(est - rate) > max(1.5, 0.02 * rate):
                out.append(f"{op}: last cumulative count / time = {est:.1f} op/s, summary says {rate:g} op/s")
        row_rate = figures.get("row_rate_s")
        if row_rate and "row_rate_s" in values:
            mean = float(np.nanmean(values["row_rate_s"][idx]))
            if abs(mean - row_rate) > 0.15 * row_rate:
                out.append(f"{op}: mean interval row rate {mean:.0f} row/s, summary says {row_rate:g} row/s")
    return out


def _run(entry: dict[str, Any], index: int, title: str | None, result: ParseResult) -> Run | None:
    warnings: list[str] = []

    def warn(expected: str) -> None:
        result.warn(None, None, f"run {index}: {expected}")
        warnings.append(str(result.warnings[-1]))

    metrics = entry.get("metrics")
    names = tuple(str(x) for x in metrics[1:]) if isinstance(metrics, list) and len(metrics) > 1 else DEFAULT_COLUMNS
    header = make_header(names)
    width = len(names) + 1
    raw = entry.get("intervals") if isinstance(entry.get("intervals"), list) else []
    good = [r for r in raw if isinstance(r, list) and len(r) == width
            and all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) < 1e300)
                    for v in r[1:])]
    if len(good) != len(raw):
        warn(f"interval rows of {width} fields (type, then numbers or null); {len(raw) - len(good)} row(s) skipped")
    items = [(None, k, v) for k, v in entry.items() if k not in _RESERVED_KEYS and isinstance(v, str)]
    block = parse_results(items) if items else None
    if block is not None:
        for _, shown, expected in block.problems:
            warn(f"{expected} (in {shown!r})")
    matrix = np.array([r[1:] for r in good], dtype=np.float64).reshape(len(good), len(names))
    values = {col: matrix[:, j] for j, col in enumerate(header.columns)}
    types = [r[0] for r in good]
    if all(isinstance(t, str) for t in types):
        ops = [str(t) for t in types]
    else:
        op_names = _op_names(entry, block.ops if block is not None else [])
        counts = values.get("count", np.zeros(len(good)))
        ops, problems = infer_ops(np.nan_to_num(counts, nan=-1.0), op_names)
        for p in problems:
            warn(f"op inference: {p}")
        if block is not None and len(op_names) > 1:
            for p in _verify(ops, values, block.per_op):
                warn(f"op inference unverified: {p}")
    frame: dict[str, Any] = {"op": np.asarray(ops, dtype=object), **values}
    if "time_s" in values:
        frame["time_s"] = align_times(pa.array(ops, type=pa.string()), values["time_s"])
    for col in whole_numbers(values, INTERVAL_COLUMNS):
        warn(f"whole numbers in interval column {col}; other values set to NA")
        frame[col] = values[col]
    last: dict[str, int] = {}
    if "count" in values:
        for op in dict.fromkeys(ops):
            idx = [i for i, o in enumerate(ops) if o == op][-1]
            if np.isfinite(values["count"][idx]):
                last[op] = int(values["count"][idx])
    summary = None
    complete = bool(good) or block is not None
    if block is not None:
        counts_by_op: dict[str, int | None] = dict(last)
        if len(block.ops) == 1 and set(last) == {"total"}:
            counts_by_op[block.ops[0]] = last["total"]
        summary = pd.DataFrame(summary_rows(block, counts_by_op))
        if not block.complete:
            complete = False
            warn("a complete summary; missing: " + ", ".join(block.missing))
    else:
        complete = False
        warn("the run's summary figures (op rate, latency ...); the entry has none")
    revision = str(entry.get("revision")) if entry.get("revision") is not None else None
    threads = None
    labels: dict[str, str] = {}
    if revision is not None:
        m = _REVISION_THREADS_RE.match(revision)
        if m:
            labels["revision"], threads = m.group(1), int(m.group(2))
            labels["threads"] = m.group(2)
        else:
            labels["revision"] = revision
    run_title = entry.get("title") if isinstance(entry.get("title"), str) else title
    if run_title is not None:
        labels["title"] = run_title
    command = entry.get("command") if isinstance(entry.get("command"), str) else None
    rate, latency_type = rate_and_latency_type(command, command is not None, None, False)
    manifest = {
        "tool": "cassandra-stress", "tool_version": None, "command": command,
        "command_source": "graph" if command else None, "threads": threads, "latency_type": latency_type,
        "rate": rate, "labels": labels, "source": result.source, "complete": complete, "count_is_total": True,
        "run_index": index, "revision": revision, "test": entry.get("test"),
        "ops": block.ops if block is not None else sorted(set(ops) - {"total"}),
    }
    return Run(manifest=manifest, intervals=pd.DataFrame(frame, copy=False), summary=summary, warnings=warnings)


def parse_stress_graph(text: str, source: str = "<text>") -> ParseResult:
    """Parse a cassandra-stress -graph HTML file into one Run per stats entry."""
    check_text(text, source, "a cassandra-stress -graph HTML file")
    result = ParseResult(format=FORMAT_NAME, source=source)
    entries, title = _load_stats(text, source, result)
    for i, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or not (set(entry) - _RESERVED_KEYS or entry.get("intervals")):
            result.skipped_lines += 1
            result.warn(None, None, f"stats entry {i} to be a run (intervals and summary figures); "
                                    "it is empty and was skipped")
            continue
        run = _run(entry, i, title, result)
        if run is not None:
            result.runs.append(run)
    if not result.runs:
        result.complete = False
        result.warn(None, None, "at least one run in the stats object; it has none")
    result.complete = result.complete and all(r.complete for r in result.runs)
    return result


def sniff(head: str) -> bool:
    return _STATS_START_RE.search(head) is not None


FORMAT = Format(name=FORMAT_NAME, description="cassandra-stress -graph HTML (embedded stats JSON: runs, "
                                              "revisions, intervals, summaries)",
                sniff=sniff, parse=parse_stress_graph)

__all__ = ["FORMAT", "infer_ops", "parse_stress_graph", "sniff", "RESULT_KEYS"]
