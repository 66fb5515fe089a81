"""Which rows of a Run belong to an op, and when each interval began and ended.

Op names differ between tools: the engine writes intervals `write`/`read`/`delete` and
histogram tags `WRITE-st`/`WRITE-rt`; cassandra-stress prints `WRITE`/`READ` (simple mode) or
`insert`/`read`/`delete` (user mode) and tags its HDR log `<op>-st`/`-rt`/`-wt`; latte names
its function. `canonical_op` compares them case-insensitively and counts user mode's `insert`
as `write`. Rows named `total` or `all` are aggregates, never an op of their own.

Tags: `-st` service time (from the actual send), `-rt` response time (from the intended start
under a fixed rate, coordinated omission corrected), `-wt` wait time (never a latency result).
`choose_tag` picks the tag that matches the latency type asked for (default: the manifest's).

Times are seconds since the run's start (`time_s`, the end of an interval). An interval's start
is its `start_s` column when the producer wrote one (the engine does), else `time_s - interval_s`,
else the previous interval end of the same op (the first interval: one typical interval length
before its end, never before 0). A histogram row that states its absolute start
(`start_epoch_s`, as HDR logs with a StartTime do) is placed by it on the run's clock
(`started_utc`): cassandra-stress's HDR log counts from its own start, not the run's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from cassperf.errors import CassperfError
from cassperf.results.model import Run

#: Rows that aggregate all ops (cassandra-stress's `total`, an untagged HDR log's `all`).
TOTAL_OPS: frozenset[str] = frozenset({"total", "all"})
#: Names that mean the same op across tools (lower case) -> canonical name.
OP_ALIASES: dict[str, str] = {"insert": "write"}
#: HDR tag suffix -> latency type.
TAG_KINDS: dict[str, str] = {"-st": "service", "-rt": "response", "-wt": "wait"}


class AnalysisError(CassperfError):
    """A run lacks what an analysis needs (a phase event, an op, a start time)."""


def run_name(run: Run) -> str:
    """How errors name a run: its id, else the file it was parsed from."""
    return str(run.run_id or run.manifest.get("source") or "<unsaved run>")


def canonical_op(name: Any) -> str:
    """'WRITE' -> 'write', 'insert' -> 'write', 'READ' -> 'read'."""
    low = str(name).strip().lower()
    return OP_ALIASES.get(low, low)


def split_tag(tag: str) -> tuple[str, str]:
    """'WRITE-rt' -> ('write', 'response'); a tag without a known suffix -> (op, 'unknown')."""
    for suffix, kind in TAG_KINDS.items():
        if tag.lower().endswith(suffix) and len(tag) > len(suffix):
            return canonical_op(tag[: -len(suffix)]), kind
    return canonical_op(tag or "all"), "unknown"


def ops_of(run: Run) -> list[str]:
    """The canonical ops a run has rows or histograms for, in first-seen order (aggregates
    `total`/`all` only when the run has nothing else)."""
    seen: list[str] = []
    for name in run.intervals["op"].dropna().tolist():
        if canonical_op(name) not in seen:
            seen.append(canonical_op(name))
    for tag in run.histograms["tag"].dropna().tolist():
        op, kind = split_tag(str(tag))
        if kind != "wait" and op not in seen:
            seen.append(op)
    real = [op for op in seen if op not in TOTAL_OPS]
    return real or seen


def choose_tag(run: Run, op: str, latency_type: str | None = None) -> tuple[str | None, str, str]:
    """(tag, latency type, note) of the histograms that hold `op`'s latency.

    latency_type: "response" or "service" (default: the manifest's). Response time is taken
    from `-rt` tags, service time from `-st`; when the asked kind is missing the other is used
    and the note says so. A tag without a suffix counts as the manifest's type. (None, type,
    note) when the run has no histogram for the op.
    """
    wanted = latency_type or str(run.manifest.get("latency_type") or "unknown")
    want = canonical_op(op)
    found: dict[str, str] = {}
    for tag in dict.fromkeys(run.histograms["tag"].dropna().astype(str).tolist()):
        tag_op, kind = split_tag(tag)
        if tag_op == want and kind != "wait":
            found.setdefault(kind, tag)
    if not found:
        return None, wanted, ""
    order = {"response": ("response", "service", "unknown"), "service": ("service", "response", "unknown")}
    for kind in order.get(wanted, ("response", "service", "unknown")):
        if kind in found:
            kind_out = kind if kind != "unknown" else wanted
            note = ""
            if wanted in ("response", "service") and kind not in (wanted, "unknown"):
                note = f"no {wanted}-time histograms for {op!r}; {kind} time ({found[kind]}) used"
            return found[kind], kind_out, note
    raise AssertionError("unreachable")


def interval_bounds(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(start_s, end_s) of each interval row, as the module docstring says."""
    end = rows["time_s"].to_numpy(dtype="float64", na_value=np.nan)
    start = np.full(len(rows), np.nan)
    if "start_s" in rows.columns:
        start = rows["start_s"].to_numpy(dtype="float64", na_value=np.nan).copy()
    if "interval_s" in rows.columns:
        length = rows["interval_s"].to_numpy(dtype="float64", na_value=np.nan)
        start = np.where(np.isnan(start), end - length, start)
    missing = np.isnan(start)
    if missing.any():
        ops = rows["op"].astype("string").fillna("").str.lower().to_numpy() if "op" in rows.columns \
            else np.zeros(len(rows), dtype=object)
        for op in pd.unique(ops[missing]):
            pos = np.flatnonzero((ops == op) & missing)
            order = pos[np.argsort(end[pos], kind="stable")]
            ends = end[order]
            diffs = np.diff(np.unique(ends))
            typical = float(np.median(diffs)) if diffs.size else float(ends[0])
            prev = np.concatenate([[max(ends[0] - typical, 0.0)], ends[:-1]])
            start[order] = prev
    return start, end


def histogram_bounds(run: Run, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(start_s, end_s) of histogram rows on the run's clock (see the module docstring)."""
    start = rows["start_s"].to_numpy(dtype="float64", na_value=np.nan)
    end = rows["end_s"].to_numpy(dtype="float64", na_value=np.nan)
    started = run.manifest.get("started_utc")
    if "start_epoch_s" not in rows.columns or not started:
        return start, end
    epoch = pd.to_numeric(rows["start_epoch_s"], errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    ts = pd.Timestamp(started)
    t0 = (ts.tz_localize("UTC") if ts.tzinfo is None else ts).timestamp()
    placed = np.where(np.isfinite(epoch), epoch - t0, start)
    return placed, placed + (end - start)


def op_rows(run: Run, op: str, tag: str | None = None) -> pd.DataFrame:
    """The interval rows of `op` (canonical match), sorted by time, with columns start_s and
    end_s set by interval_bounds. A frame that has one row per tag (parsed HDR logs carry a
    `tag` column) keeps the rows of `tag`, else of its first non-wait tag for the op."""
    frame = run.intervals
    if frame.empty:
        return frame.assign(start_s=pd.Series(dtype="float64"), end_s=pd.Series(dtype="float64"))
    names = frame["op"].astype("string").fillna("").map(canonical_op)
    rows = frame[(names == canonical_op(op)).to_numpy()]
    if "tag" in rows.columns and rows["tag"].notna().any():
        tags = rows["tag"].astype("string")
        keep = tag if tag is not None and (tags == tag).any() else next(
            (t for t in dict.fromkeys(tags.dropna().tolist()) if split_tag(str(t))[1] != "wait"), None)
        if keep is not None:
            rows = rows[(tags == keep).fillna(False).to_numpy()]
    rows = rows.reset_index(drop=True)
    start, end = interval_bounds(rows)
    out = rows.copy()
    out["start_s"] = start
    out["end_s"] = end
    return out.sort_values("end_s", kind="stable").reset_index(drop=True)


def interval_counts(rows: pd.DataFrame, manifest: dict[str, Any]) -> np.ndarray:
    """Ops completed in each interval row of one op (float; NaN where unknown). Tools whose
    `count` is a running total (manifest count_is_total) are differenced; a missing count is
    rate x length."""
    count = rows["count"].to_numpy(dtype="float64", na_value=np.nan) if "count" in rows.columns \
        else np.full(len(rows), np.nan)
    if manifest.get("count_is_total") and len(count):
        count = np.diff(np.concatenate([[0.0], count]))
    if "rate_ops_s" in rows.columns:
        rate = rows["rate_ops_s"].to_numpy(dtype="float64", na_value=np.nan)
        length = rows["end_s"].to_numpy(dtype="float64") - rows["start_s"].to_numpy(dtype="float64")
        count = np.where(np.isnan(count), rate * length, count)
    return count


def in_window(start: np.ndarray, end: np.ndarray, window_start_s: float, window_end_s: float) -> np.ndarray:
    """Intervals whose midpoint lies in [window_start_s, window_end_s): the rule cassperf.results.hdr
    uses, so windows that tile the time axis count every interval once."""
    mid = (np.asarray(start, dtype="float64") + np.asarray(end, dtype="float64")) / 2.0
    return (mid >= window_start_s) & (mid < window_end_s)
