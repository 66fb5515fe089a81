"""Where the nodes spent their time: CPU profiles (stack samples) per run, per arm, and what
changed between two arms.

The input is a table of stack samples, one row per sample (or per group of identical ones, see
``count``), as ``cassperf.parsers.jfr.profile_samples`` reads it from each run's Flight Recorder
files (SAMPLE_COLUMNS):

    run_id  node   state  thread             pool               stack                          time_s  count
    r1      node1  java   MutationStage-3    MutationStage      java.lang.Thread.run;...;X.y   12.34   1

``stack`` holds the frames from the thread's root to the frame running when sampled (the leaf),
each ``package.Class.method``, joined by ";" (Java names never contain one). ``time_s`` is on
the run's own time axis (seconds since the start of measurement, as its intervals), so a run's
steady window selects its samples. ``state`` is "java" for a thread sampled running Java code
(JFR's jdk.ExecutionSample: CPU) and "native" for one sampled inside a native method (its
jdk.NativeMethodSample: mostly threads waiting in epoll or a socket read, so not CPU); every
function here takes ``state`` ("java" by default; None: every sample).

Shares are in % of the samples of the set (an arm: its runs merged, every sample counted once),
and a change between arms A and B is in points of the samples: share in B - share in A.
"Self" counts a frame where it is the leaf (the code that ran); "inclusive" counts it wherever it
is on the stack, once per sample.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from cassperf.analysis.select import AnalysisError

SAMPLE_COLUMNS: dict[str, str] = {
    "run_id": "string",
    "node": "string",
    "state": "string",       # java | native
    "thread": "string",
    "pool": "string",        # sample_pool(thread, stack)
    "stack": "string",       # frames root -> leaf, ";"-joined
    "time_s": "float64",     # s since the run's start of measurement
    "count": "int64",        # samples in the row (1 as read)
}
#: the frame separator of ``stack``
SEP = ";"
#: the first frame of a stack the JVM cut at its depth limit (its root frames are missing)
TRUNCATED = "[truncated]"

# Cassandra's pools name their threads <pool>-<n> (SEPExecutor: MutationStage-3,
# Native-Transport-Requests-12), <pool>:<n> (JMXEnabledThreadPoolExecutor: CompactionExecutor:1,
# GossipStage:1), <pool>_<disk>:<n> (PerDiskMemtableFlushWriter_0:1); netty <group>-<g>-<n>
# (epollEventLoopGroup-5-3, Messaging-EventLoop-3-1); JVM threads "C2 CompilerThread0".
_TRAILING_NUMBER = re.compile(r"(?:[-:_#\s]*\d+)+$")
# java.util.concurrent's pools: pool-3-thread-1 -> pool-thread
_POOL_N_THREAD = re.compile(r"^pool-\d+-thread")
# RMI TCP Connection(3)-127.0.0.1, RMI TCP Connection(idle) -> RMI TCP Connection: a counter or "idle" in
# brackets, a peer's address
_BRACKETED_AND_ADDRESS = re.compile(r"\((?:\d+|idle)\)|-\d{1,3}(?:\.\d{1,3}){3}$")


def thread_pool(thread: str) -> str:
    """The pool a thread belongs to, from its name: the name without its trailing numbers
    (MutationStage-3 -> MutationStage, Native-Transport-Requests-12 -> Native-Transport-Requests,
    CompactionExecutor:1 -> CompactionExecutor, PerDiskMemtableFlushWriter_0:1 ->
    PerDiskMemtableFlushWriter, epollEventLoopGroup-5-3 -> epollEventLoopGroup, pool-3-thread-1 ->
    pool-thread, RMI TCP Connection(3)-127.0.0.1 -> RMI TCP Connection). A name that is only a
    number stays as it is; an empty name is "(unnamed)"."""
    name = thread.strip()
    if not name:
        return "(unnamed)"
    name = _BRACKETED_AND_ADDRESS.sub("", _POOL_N_THREAD.sub("pool-thread", name))
    pool = _TRAILING_NUMBER.sub("", name)
    return pool or name


#: Cassandra's shared-pool stages (SEPExecutor, one pool of worker threads for all of them). A
#: worker renames itself after the stage it takes work from, and Flight Recorder keeps the name a
#: thread had when the JVM's recorder first met it: in a write run after read runs, "ReadStage-1"
#: ran native transport requests. So a shared-pool sample's pool is read from its stack.
SHARED_POOLS = frozenset({"Native-Transport-Requests", "Native-Transport-Auth-Requests", "ReadStage", "MutationStage",
                          "CounterMutationStage", "ViewMutationStage", "RequestResponseStage", "SharedPool-Worker"})
#: a shared-pool sample whose stack shows no known stage's task: the pool's own scheduling
SHARED_WORKER = "SharedPool-Worker"
# the first of these met from the root of the stack names the stage (Counter before Mutation)
_SHARED_TASKS = ((".transport.Dispatcher", "Native-Transport-Requests"),
                 ("StorageProxy$LocalReadRunnable", "ReadStage"), ("ReadCommandVerbHandler", "ReadStage"),
                 ("StorageProxy$LocalMutationRunnable", "MutationStage"),
                 ("CounterMutationVerbHandler", "CounterMutationStage"), ("MutationVerbHandler", "MutationStage"),
                 ("ResponseVerbHandler", "RequestResponseStage"))


def sample_pool(thread: str, stack: str) -> str:
    """The pool a stack sample's work belongs to: thread_pool(thread), except for Cassandra's
    shared-pool workers (SHARED_POOLS, or SEPWorker.run on the stack), whose stage is read from
    the stack: the first task frame from its root (Dispatcher: Native-Transport-Requests,
    StorageProxy$LocalReadRunnable or ReadCommandVerbHandler: ReadStage,
    StorageProxy$LocalMutationRunnable or MutationVerbHandler: MutationStage, ...), else
    SHARED_WORKER."""
    pool = thread_pool(thread)
    if pool not in SHARED_POOLS and "SEPWorker.run" not in stack:
        return pool
    for frame in stack.split(SEP):
        for needle, stage in _SHARED_TASKS:
            if needle in frame:
                return stage
    return SHARED_WORKER


def pools_of(threads: pd.Series, stacks: pd.Series | None = None) -> pd.Series:
    """The pool of each sample: sample_pool(thread, stack), or thread_pool(thread) without
    stacks; computed once per distinct (thread, stack), so categoricals of millions of rows cost
    what their distinct pairs do."""
    t_codes, t_names = pd.factorize(threads.astype("string").fillna(""))
    if stacks is None:
        pools = np.asarray([thread_pool(str(t)) for t in t_names], dtype=object)
        return pd.Series(pd.Categorical(pools[t_codes]), index=threads.index)
    s_codes, s_names = pd.factorize(stacks)
    width = len(s_names) + 1
    p_codes, pairs = pd.factorize(t_codes.astype(np.int64) * width + s_codes)
    pools = np.asarray([sample_pool(str(t_names[k // width]), str(s_names[k % width])) for k in pairs], dtype=object)
    return pd.Series(pd.Categorical(pools[p_codes]), index=threads.index)


def empty_samples() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in SAMPLE_COLUMNS.items()})


def _check(samples: pd.DataFrame, needs: Sequence[str] = ("stack", "count")) -> None:
    missing = [c for c in needs if c not in samples.columns]
    if missing:
        raise AnalysisError(f"a samples table needs the columns {list(needs)}; missing {missing} "
                            f"(read it with cassperf.parsers.jfr.profile_samples)")


def _state(samples: pd.DataFrame, state: str | None) -> pd.DataFrame:
    if state is None:
        return samples
    _check(samples, ("state",))
    return samples[samples["state"] == state]


# -- windows -------------------------------------------------------------------------------------
def in_window(samples: pd.DataFrame, start_s: float, end_s: float) -> pd.DataFrame:
    """The samples taken in [start_s, end_s) on their run's time axis."""
    _check(samples, ("time_s",))
    t = samples["time_s"]
    return samples[(t >= start_s) & (t < end_s)]


def in_run_windows(samples: pd.DataFrame, windows: Mapping[str, tuple[float, float]]) -> pd.DataFrame:
    """Each run's samples inside its own window [start_s, end_s) (``windows``: run_id -> (start_s,
    end_s), e.g. every run's steady window); runs without a window are left out."""
    _check(samples, ("run_id", "time_s"))
    if samples.empty or not windows:
        return samples.iloc[0:0]
    starts = samples["run_id"].map({k: float(v[0]) for k, v in windows.items()}).astype("float64")
    ends = samples["run_id"].map({k: float(v[1]) for k, v in windows.items()}).astype("float64")
    t = samples["time_s"].astype("float64")
    return samples[((t >= starts) & (t < ends)).fillna(False).to_numpy(dtype=bool)]


def steady_windows(figures: pd.DataFrame, *, only_ok: bool = True) -> dict[str, tuple[float, float]]:
    """run_id -> (window_start_s, window_end_s) of each run's steady window, from run figures
    (cassperf.analysis.repeats.run_figures: one row per run and op, every op of a run over the
    same window); with ``only_ok`` only runs whose figures count (status "ok"), so a run left out
    of a comparison is left out of its profile too."""
    _check(figures, ("run_id", "window_start_s", "window_end_s"))
    rows = figures[figures["status"] == "ok"] if only_ok and "status" in figures.columns else figures
    finite = np.isfinite(rows["window_start_s"].astype("float64")) & np.isfinite(rows["window_end_s"].astype("float64"))
    rows = rows[finite]
    first = rows.drop_duplicates("run_id")
    return {str(r): (float(a), float(b)) for r, a, b in zip(first["run_id"], first["window_start_s"],
                                                              first["window_end_s"], strict=True)}


def arm_samples(samples: pd.DataFrame, figures: pd.DataFrame, *, by: str = "arm", only_ok: bool = True) -> pd.DataFrame:
    """The samples of each run inside its steady window (``steady_windows(figures)``), with the
    run's ``by`` label from the figures (its arm) as a column: the samples per arm, merged over
    its runs, that every per-arm function here takes."""
    _check(figures, ("run_id", by))
    kept = in_run_windows(samples, steady_windows(figures, only_ok=only_ok))
    labels = figures.drop_duplicates("run_id").set_index("run_id")[by].astype("string")
    return kept.assign(**{by: kept["run_id"].astype("string").map(labels).to_numpy()})


# -- shares --------------------------------------------------------------------------------------
def _groups(samples: pd.DataFrame, by: str | Sequence[str] | None) -> list[str]:
    cols = [] if by is None else [by] if isinstance(by, str) else list(by)
    _check(samples, cols)
    return cols


def pool_shares(samples: pd.DataFrame, by: str | Sequence[str] | None = None, *,
                state: str | None = "java") -> pd.DataFrame:
    """Samples and share (% of the group's samples) of each thread pool, per group of ``by``
    (e.g. "arm"; None: the whole table), largest first: columns [*by], pool, samples, share_pct."""
    cols = _groups(samples, by)
    _check(samples, ("pool", "count"))
    s = _state(samples, state)
    out = s.groupby([*cols, "pool"], observed=True, sort=False)["count"].sum().rename("samples").reset_index()
    totals = out.groupby(cols, observed=True)["samples"].transform("sum") if cols else out["samples"].sum()
    out["share_pct"] = 100.0 * out["samples"] / totals
    return out.sort_values([*cols, "samples", "pool"], ascending=[True] * len(cols) + [False, True],
                           kind="stable").reset_index(drop=True)


def pool_share_table(samples: pd.DataFrame, by: str = "arm", *, order: Sequence[str] | None = None,
                     top: int | None = None, state: str | None = "java") -> pd.DataFrame:
    """One row per value of ``by`` (an arm), one column per thread pool: its share in % of that
    row's samples (0 where the pool had none), pools by their share over the whole table, largest
    first; with ``top`` the rest summed into "other"; the last column ``samples`` is the row's
    sample count. ``order``: the rows' order (default: as they first appear)."""
    long = pool_shares(samples, by, state=state)
    if long.empty:
        return pd.DataFrame(columns=["samples"], index=pd.Index([], name=by))
    wide = long.pivot_table(index=by, columns="pool", values="share_pct", aggfunc="sum", fill_value=0.0,
                            observed=True)
    counts = long.groupby(by, observed=True)["samples"].sum()
    overall = long.groupby("pool", observed=True)["samples"].sum().sort_values(ascending=False, kind="stable")
    names = list(overall.index)
    if top is not None and len(names) > top:
        kept, rest = names[:top], names[top:]
        wide["other"] = wide[rest].sum(axis=1)
        names = [*kept, "other"]
    wide = wide[names]
    wide.columns.name = None
    wide["samples"] = counts.reindex(wide.index).astype("int64")
    rows = list(order) if order is not None else list(dict.fromkeys(_state(samples, state)[by]))
    return wide.reindex([r for r in rows if r in wide.index])


def _stack_counts(samples: pd.DataFrame, state: str | None, with_pool: bool = False) -> pd.Series:
    s = _state(samples, state)
    keys = ["pool", "stack"] if with_pool else ["stack"]
    return s.groupby(keys, observed=True, sort=False)["count"].sum()


def frame_shares(samples: pd.DataFrame, kind: str = "self", *, by: str | Sequence[str] | None = None,
                 top: int | None = None, state: str | None = "java") -> pd.DataFrame:
    """Samples and share (% of the group's samples) of each frame, largest first: ``kind`` "self"
    (the frame was the leaf: it ran) or "inclusive" (the frame was on the stack, counted once per
    sample however often it recurs). Columns [*by], frame, samples, share_pct; ``top`` rows per
    group."""
    if kind not in ("self", "inclusive"):
        raise AnalysisError(f"kind={kind!r}: expected 'self' (the leaf frame) or 'inclusive' (anywhere on the stack)")
    cols = _groups(samples, by)
    _check(samples, ("stack", "count"))
    s = _state(samples, state)
    parts = []
    for key, group in (s.groupby(cols, observed=True, sort=False) if cols else [((), s)]):
        stacks = group.groupby("stack", observed=True, sort=False)["count"].sum()
        total = int(stacks.sum())
        counts = _self_counts(stacks) if kind == "self" else _inclusive_counts(stacks)
        frame = counts.rename("samples").rename_axis("frame").reset_index()
        frame["share_pct"] = 100.0 * frame["samples"] / total if total else np.nan
        frame = frame.sort_values(["samples", "frame"], ascending=[False, True], kind="stable")
        if top is not None:
            frame = frame.head(top)
        for c, v in zip(cols, key if isinstance(key, tuple) else (key,), strict=True):
            frame.insert(cols.index(c), c, v)
        parts.append(frame)
    if not parts:
        return pd.DataFrame(columns=[*cols, "frame", "samples", "share_pct"])
    return pd.concat(parts, ignore_index=True)


def _self_counts(stacks: pd.Series) -> pd.Series:
    leaves = pd.Series(stacks.to_numpy(), index=[s.rsplit(SEP, 1)[-1] for s in stacks.index])
    return leaves.groupby(level=0, sort=False).sum().astype("int64")


def _inclusive_counts(stacks: pd.Series) -> pd.Series:
    out: dict[str, int] = {}
    for stack, n in stacks.items():
        for frame in set(str(stack).split(SEP)):
            out[frame] = out.get(frame, 0) + int(n)
    return pd.Series(out, dtype="int64")


def gc_pauses(gc: pd.DataFrame, by: str | Sequence[str] | None = None) -> pd.DataFrame:
    """GC pauses per group of ``by`` (an arm) from a GC table (``cassperf.parsers.jfr``: one row
    per jdk.GCPhasePause, one per jdk.GarbageCollection; take each run's window first with
    in_run_windows or arm_samples): pauses, total_ms, max_ms (the pause events; threads running
    Java code stood still meanwhile, so no stack sample shows them)."""
    cols = _groups(gc, by)
    _check(gc, ("event", "duration_ms"))
    pauses = gc[gc["event"] == "jdk.GCPhasePause"]
    grouped = pauses.groupby(cols, observed=True, sort=False)["duration_ms"] if cols else None
    if grouped is None:
        d = pauses["duration_ms"].astype("float64")
        return pd.DataFrame({"pauses": [len(d)], "total_ms": [float(d.sum())], "max_ms": [float(d.max()) if len(d)
                                                                                        else np.nan]})
    return grouped.agg(pauses="count", total_ms="sum", max_ms="max").reset_index()


# -- two arms ------------------------------------------------------------------------------------
#: what a differential is keyed by: the thread pool, the leaf frame, a frame anywhere on the stack
DIFF_KEYS = ("pool", "self", "inclusive")


def differential(a: pd.DataFrame, b: pd.DataFrame, key: str = "pool", *, state: str | None = "java") -> pd.DataFrame:
    """What changed from samples ``a`` (arm A) to ``b`` (arm B), per thread pool (``key`` "pool")
    or per frame ("self", "inclusive"): columns key (the pool or frame), samples_a, samples_b,
    share_a_pct, share_b_pct, change_points (share_b_pct - share_a_pct, in points of the
    samples), sorted by |change_points|, largest first (ties by name). AnalysisError when
    either side has no samples: a change against nothing is not a change."""
    if key not in DIFF_KEYS:
        raise AnalysisError(f"key={key!r}: expected one of {', '.join(DIFF_KEYS)}")

    def shares(samples: pd.DataFrame, side: str) -> pd.DataFrame:
        if key == "pool":
            table = pool_shares(samples, state=state).rename(columns={"pool": "key"})
        else:
            table = frame_shares(samples, key, state=state).rename(columns={"frame": "key"})
        if table.empty or not table["samples"].sum():
            raise AnalysisError(f"arm {side} has no {state or ''} samples to compare".replace("  ", " "))
        return table.set_index("key")[["samples", "share_pct"]].add_suffix(f"_{side}")

    both = shares(a, "a").join(shares(b, "b"), how="outer")
    both = both.rename(columns={"share_pct_a": "share_a_pct", "share_pct_b": "share_b_pct"})
    both[["samples_a", "samples_b"]] = both[["samples_a", "samples_b"]].fillna(0).astype("int64")
    both[["share_a_pct", "share_b_pct"]] = both[["share_a_pct", "share_b_pct"]].fillna(0.0)
    both["change_points"] = both["share_b_pct"] - both["share_a_pct"]
    both = both.rename_axis("key").reset_index()
    order = np.lexsort((both["key"].astype(str).to_numpy(), -both["change_points"].abs().to_numpy()))
    return both.iloc[order][["key", "samples_a", "samples_b", "share_a_pct", "share_b_pct",
                             "change_points"]].reset_index(drop=True)


def short_frame(frame: str) -> str:
    """A frame as a reader names it: Class.method without the package
    ("org.apache.cassandra.db.compaction.CompactionTask.runMayThrow" -> "CompactionTask.runMayThrow")."""
    head, dot, method = frame.rpartition(".")
    if not dot:
        return frame
    return f"{head.rpartition('.')[2]}.{method}"


def change_lines(diff: pd.DataFrame, n: int = 3, *, min_points: float = 0.0, short: bool = True) -> list[str]:
    """The ``n`` largest changes of a differential as one line each, e.g. "CompactionExecutor
    +41.0 points (3.5% -> 44.5% of the samples)"; changes under ``min_points`` left out."""
    lines = []
    for row in diff.itertuples(index=False):
        if abs(row.change_points) < min_points or len(lines) >= n:
            continue
        name = short_frame(str(row.key)) if short and "." in str(row.key) else str(row.key)
        lines.append(f"{name} {row.change_points:+.1f} points ({row.share_a_pct:.1f}% -> {row.share_b_pct:.1f}% "
                     f"of the samples)")
    return lines


# -- the differential flame graph ----------------------------------------------------------------
FLAME_ROOT = "all samples"


def flame_tree(b: pd.DataFrame, a: pd.DataFrame | None = None, *, max_depth: int | None = None,
               min_share_pct: float = 0.0, chains: bool = True, state: str | None = "java") -> pd.DataFrame:
    """The nodes of a flame graph of ``b``'s samples, each against ``a`` (None: no comparison):
    the root (FLAME_ROOT), then each thread pool, then the frames of its stacks from the root of
    the stack down, one node per distinct path. Columns: id (the path, ";"-joined), parent (""
    for the root), frame, frames (the frames the node stands for, ";"-joined: see ``chains``),
    depth (root 0, pool 1, frames from 2: the depth of its last frame), samples_b, share_b_pct,
    share_a_pct and change_points (share_b_pct - share_a_pct; NaN without ``a``): a node's share
    is that of the samples whose path passes through it. ``max_depth`` cuts paths deeper than
    that depth (their samples stay in the node where the cut falls); nodes whose share is under
    ``min_share_pct`` in both arms are left out with everything below them. ``chains``: a frame
    that every sample through it leaves by the same one callee, in both arms (Thread.run ->
    SEPWorker.run -> ...; but for under ``min_share_pct`` of the samples, which the pruning leaves
    out anyway), is one node with that callee, so that the boxes a reader sees first are where
    the paths part. Rows in depth-first order (parents before children)."""
    def paths(samples: pd.DataFrame) -> tuple[dict[tuple[str, ...], int], int]:
        stacks = _stack_counts(samples, state, with_pool=True)
        total = int(stacks.sum())
        out: dict[tuple[str, ...], int] = {}
        for (pool, stack), n in stacks.items():
            frames = (FLAME_ROOT, str(pool), *str(stack).split(SEP))
            if max_depth is not None:
                frames = frames[:max_depth + 1]
            for k in range(1, len(frames) + 1):
                out[frames[:k]] = out.get(frames[:k], 0) + int(n)
        return out, total

    _check(b, ("pool", "stack", "count"))
    got_b, total_b = paths(b)
    if not total_b:
        raise AnalysisError(f"no {state or ''} samples to draw".replace("  ", " "))
    got_a, total_a = paths(a) if a is not None else ({}, 0)
    if a is not None and not total_a:
        raise AnalysisError(f"the arm compared against has no {state or ''} samples".replace("  ", " "))
    rows = []
    keep: set[tuple[str, ...]] = set()
    for path in sorted(got_b):
        share_b = 100.0 * got_b[path] / total_b
        share_a = 100.0 * got_a.get(path, 0) / total_a if a is not None else np.nan
        if len(path) > 1 and (path[:-1] not in keep or max(share_b, 0.0 if np.isnan(share_a) else share_a)
                              < min_share_pct):
            continue
        keep.add(path)
        rows.append({"id": SEP.join(path), "parent": SEP.join(path[:-1]), "frame": path[-1], "frames": path[-1],
                     "depth": len(path) - 1, "samples_b": got_b[path], "samples_a": got_a.get(path, 0),
                     "share_b_pct": share_b, "share_a_pct": share_a, "change_points": share_b - share_a})
    if chains:
        rows = _chains(rows, min_share_pct / 100.0 * total_b, min_share_pct / 100.0 * total_a)
    columns = ["id", "parent", "frame", "frames", "depth", "samples_b", "share_b_pct", "share_a_pct", "change_points"]
    return pd.DataFrame(rows, columns=columns)


def _chains(rows: list[dict], slack_b: float = 0.0, slack_a: float = 0.0) -> list[dict]:
    """Each frame node whose samples all go on to its one child (but fewer than ``slack_*``
    samples: what the pruning under min_share_pct leaves out anyway), in both arms, merged into
    that child (flame_tree's ``chains``)."""
    children: dict[str, list[str]] = {}
    for r in rows:
        children.setdefault(r["parent"], []).append(r["id"])
    by_id = {r["id"]: r for r in rows}
    out: list[dict] = []
    parent_of: dict[str, str] = {}                 # a merged node's id -> the id its children hang from now
    for r in rows:
        r = dict(r, parent=parent_of.get(r["parent"], r["parent"]), frames=by_id[r["id"]]["frames"])
        mine = children.get(r["id"], [])
        only = by_id[mine[0]] if len(mine) == 1 else None
        if r["depth"] >= 2 and only is not None and r["samples_b"] - only["samples_b"] <= slack_b \
                and r["samples_a"] - only["samples_a"] <= slack_a:
            parent_of[r["id"]] = r["parent"]
            by_id[only["id"]] = dict(only, frames=r["frames"] + SEP + only["frames"])
            continue
        out.append(r)
    return out
