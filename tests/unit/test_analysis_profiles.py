"""CPU profiles (cassperf.analysis.profiles): thread pools from thread names, the window filter,
per-arm shares, top frames and the differential between two arms, on small hand-made sample
tables whose shares can be counted by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from cassperf.analysis.profiles import (
    FLAME_ROOT,
    arm_samples,
    change_lines,
    differential,
    flame_tree,
    frame_shares,
    gc_pauses,
    in_run_windows,
    in_window,
    pool_share_table,
    pool_shares,
    pools_of,
    sample_pool,
    short_frame,
    thread_pool,
)
from cassperf.analysis.select import AnalysisError

REQUEST = "java.lang.Thread.run;org.apache.cassandra.transport.Dispatcher.processRequest"
WRITE = REQUEST + ";org.apache.cassandra.cql3.statements.ModificationStatement.execute"
MUTATION = "java.lang.Thread.run;org.apache.cassandra.db.Mutation.apply"
COMPACTION = "java.lang.Thread.run;org.apache.cassandra.db.compaction.CompactionTask.runMayThrow"
MERGE = COMPACTION + ";org.apache.cassandra.utils.MergeIterator.computeNext"


@pytest.mark.parametrize(("thread", "pool"), [
    ("MutationStage-3", "MutationStage"),
    ("Native-Transport-Requests-12", "Native-Transport-Requests"),
    ("CompactionExecutor:1", "CompactionExecutor"),
    ("ReadStage-2", "ReadStage"),
    ("MemtableFlushWriter:1", "MemtableFlushWriter"),
    ("GossipStage:1", "GossipStage"),
    ("PerDiskMemtableFlushWriter_0:1", "PerDiskMemtableFlushWriter"),
    ("epollEventLoopGroup-5-3", "epollEventLoopGroup"),
    ("Messaging-EventLoop-3-1", "Messaging-EventLoop"),
    ("pool-3-thread-1", "pool-thread"),
    ("RMI TCP Connection(3)-127.0.0.1", "RMI TCP Connection"),
    ("RMI TCP Connection(idle)", "RMI TCP Connection"),
    ("C2 CompilerThread0", "C2 CompilerThread"),
    ("ScheduledTasks:1", "ScheduledTasks"),
    ("COMMIT-LOG-ALLOCATOR", "COMMIT-LOG-ALLOCATOR"),
    ("main", "main"),
    ("42", "42"),
    ("", "(unnamed)"),
])
def test_thread_pool_is_the_name_without_its_trailing_numbers(thread: str, pool: str) -> None:
    assert thread_pool(thread) == pool


SEP = "java.lang.Thread.run;org.apache.cassandra.concurrent.SEPWorker.run;java.util.concurrent.FutureTask.run"


@pytest.mark.parametrize(("thread", "stack", "pool"), [
    # a shared-pool worker's stage is read from its stack, whatever name JFR knew it by
    ("MutationStage-3", SEP + ";org.apache.cassandra.transport.Dispatcher$RequestProcessor.run;x.Y.z",
     "Native-Transport-Requests"),
    ("ReadStage-1", SEP + ";org.apache.cassandra.service.StorageProxy$LocalMutationRunnable.run;x.Y.z", "MutationStage"),
    ("Native-Transport-Requests-2", SEP + ";org.apache.cassandra.service.StorageProxy$DroppableRunnable.run;"
     "org.apache.cassandra.service.StorageProxy$LocalReadRunnable.runMayThrow", "ReadStage"),
    ("MutationStage-1", SEP + ";org.apache.cassandra.net.InboundMessageHandler$ProcessMessage.run;"
     "org.apache.cassandra.db.CounterMutationVerbHandler.doVerb", "CounterMutationStage"),
    ("MutationStage-1", SEP + ";org.apache.cassandra.net.InboundMessageHandler$ProcessMessage.run;"
     "org.apache.cassandra.db.MutationVerbHandler.doVerb", "MutationStage"),
    ("ReadStage-4", SEP + ";org.apache.cassandra.concurrent.SEPWorker.doWaitSpin", "SharedPool-Worker"),
    # a stack cut at the JVM's depth: the thread's name still says it is a shared-pool worker
    ("ReadStage-4", "[truncated];org.apache.cassandra.transport.Dispatcher.processRequest;x.Y.z",
     "Native-Transport-Requests"),
    # a dedicated pool keeps its name, whatever its stack holds
    ("CompactionExecutor:1", "java.lang.Thread.run;org.apache.cassandra.db.Mutation.apply", "CompactionExecutor"),
])
def test_a_shared_pool_samples_stage_comes_from_its_stack(thread: str, stack: str, pool: str) -> None:
    assert sample_pool(thread, stack) == pool


def test_pools_of_many_samples_computes_each_distinct_pair_once() -> None:
    threads = pd.Series(["ReadStage-1", "ReadStage-1", "CompactionExecutor:2", "ReadStage-1"], dtype="category")
    stacks = pd.Series([SEP + ";org.apache.cassandra.transport.Dispatcher.processRequest",
                        SEP + ";org.apache.cassandra.service.StorageProxy$LocalReadRunnable.run", "a.B.c",
                        SEP + ";org.apache.cassandra.transport.Dispatcher.processRequest"], dtype="category")
    assert pools_of(threads, stacks).tolist() == ["Native-Transport-Requests", "ReadStage", "CompactionExecutor",
                                                  "Native-Transport-Requests"]
    assert pools_of(threads).tolist() == ["ReadStage", "ReadStage", "CompactionExecutor", "ReadStage"]


def table(rows: list[tuple]) -> pd.DataFrame:
    """Samples from (run_id, thread, stack, time_s, count[, state]) tuples."""
    out = pd.DataFrame([{"run_id": r[0], "node": "node1", "state": r[5] if len(r) > 5 else "java", "thread": r[1],
                         "pool": thread_pool(r[1]), "stack": r[2], "time_s": r[3], "count": r[4]} for r in rows])
    return out.astype({"count": "int64", "time_s": "float64"})


# arm A: 10 java samples -- 6 request path (4 Native-Transport-Requests, 2 MutationStage), 4 compaction
A = table([("a1", "Native-Transport-Requests-1", WRITE, 1.0, 3), ("a1", "Native-Transport-Requests-2", REQUEST, 2.0, 1),
           ("a1", "MutationStage-1", MUTATION, 3.0, 2), ("a2", "CompactionExecutor:1", MERGE, 1.5, 4),
           ("a2", "epollEventLoopGroup-2-1", "io.netty.channel.epoll.Native.epollWait", 1.5, 7, "native")])
# arm B: 20 java samples -- 4 request path, 16 compaction (12 in MergeIterator, 4 in CompactionTask itself)
B = table([("b1", "Native-Transport-Requests-1", WRITE, 1.0, 2), ("b1", "MutationStage-4", MUTATION, 1.0, 2),
           ("b1", "CompactionExecutor:1", MERGE, 2.0, 12), ("b2", "CompactionExecutor:2", COMPACTION, 2.0, 4)])


def test_in_window_keeps_samples_from_start_up_to_but_not_including_end() -> None:
    assert in_window(A, 1.5, 3.0)["time_s"].tolist() == [2.0, 1.5, 1.5]


def test_in_run_windows_takes_each_runs_own_window_and_drops_runs_without_one() -> None:
    got = in_run_windows(pd.concat([A, B]), {"a1": (0.0, 2.5), "b1": (1.5, 10.0)})
    assert list(zip(got["run_id"], got["time_s"], strict=True)) == [("a1", 1.0), ("a1", 2.0), ("b1", 2.0)]


def test_arm_samples_keep_each_runs_steady_window_and_label_its_arm() -> None:
    figures = pd.DataFrame({"run_id": ["a1", "a1", "a2", "b1", "b2"], "arm": ["A", "A", "A", "B", "B"],
                            "op": ["read", "write", "write", "write", "write"],
                            "status": ["ok", "ok", "excluded", "ok", "ok"],
                            "window_start_s": [0.5, 0.5, 0.0, 1.5, float("nan")],
                            "window_end_s": [2.5, 2.5, 9.0, 9.0, float("nan")]})
    got = arm_samples(pd.concat([A, B]), figures)
    # a2 left out of its comparison (excluded), b2 without a steady window: neither is in the profile
    assert list(zip(got["run_id"], got["arm"], got["time_s"], strict=True)) == [
        ("a1", "A", 1.0), ("a1", "A", 2.0), ("b1", "B", 2.0)]
    every = arm_samples(pd.concat([A, B]), figures, only_ok=False)
    assert sorted(set(every["run_id"])) == ["a1", "a2", "b1"]


def test_pool_shares_per_arm_count_java_samples_only() -> None:
    both = pd.concat([A.assign(arm="A"), B.assign(arm="B")])
    got = pool_shares(both, "arm")
    assert got.to_dict("records") == [
        {"arm": "A", "pool": "CompactionExecutor", "samples": 4, "share_pct": 40.0},          # a tie: by name
        {"arm": "A", "pool": "Native-Transport-Requests", "samples": 4, "share_pct": 40.0},
        {"arm": "A", "pool": "MutationStage", "samples": 2, "share_pct": 20.0},
        {"arm": "B", "pool": "CompactionExecutor", "samples": 16, "share_pct": 80.0},
        {"arm": "B", "pool": "MutationStage", "samples": 2, "share_pct": 10.0},
        {"arm": "B", "pool": "Native-Transport-Requests", "samples": 2, "share_pct": 10.0},
    ]
    native = pool_shares(A, state="native")
    assert native.to_dict("records") == [{"pool": "epollEventLoopGroup", "samples": 7, "share_pct": 100.0}]


def test_pool_share_table_has_one_row_per_arm_and_a_column_per_pool_largest_overall_first() -> None:
    both = pd.concat([B.assign(arm="B"), A.assign(arm="A")])
    got = pool_share_table(both, order=["A", "B"])
    assert list(got.columns) == ["CompactionExecutor", "Native-Transport-Requests", "MutationStage", "samples"]
    assert got.loc["A"].tolist() == [40.0, 40.0, 20.0, 10]
    assert got.loc["B"].tolist() == [80.0, 10.0, 10.0, 20]
    assert list(got.index) == ["A", "B"]
    short = pool_share_table(both, top=1, order=["A", "B"])
    assert list(short.columns) == ["CompactionExecutor", "other", "samples"]
    assert short.loc["A"].tolist() == [40.0, 60.0, 10]


def test_self_frames_are_the_leaves_and_inclusive_frames_count_once_per_sample() -> None:
    self_ = frame_shares(B, "self")
    assert self_.to_dict("records") == [
        {"frame": "org.apache.cassandra.utils.MergeIterator.computeNext", "samples": 12, "share_pct": 60.0},
        {"frame": "org.apache.cassandra.db.compaction.CompactionTask.runMayThrow", "samples": 4, "share_pct": 20.0},
        {"frame": "org.apache.cassandra.cql3.statements.ModificationStatement.execute", "samples": 2, "share_pct": 10.0},
        {"frame": "org.apache.cassandra.db.Mutation.apply", "samples": 2, "share_pct": 10.0},
    ]
    incl = frame_shares(B, "inclusive", top=3)
    assert incl.to_dict("records") == [
        {"frame": "java.lang.Thread.run", "samples": 20, "share_pct": 100.0},
        {"frame": "org.apache.cassandra.db.compaction.CompactionTask.runMayThrow", "samples": 16, "share_pct": 80.0},
        {"frame": "org.apache.cassandra.utils.MergeIterator.computeNext", "samples": 12, "share_pct": 60.0},
    ]
    recursive = table([("r", "ReadStage-1", "a.B.f;a.B.f;a.B.g", 0.0, 5)])
    assert frame_shares(recursive, "inclusive")["samples"].tolist() == [5, 5]


def test_frame_shares_per_arm_top_two_each() -> None:
    got = frame_shares(pd.concat([A.assign(arm="A"), B.assign(arm="B")]), "self", by="arm", top=2)
    assert list(zip(got["arm"], got["frame"].map(short_frame), got["share_pct"], strict=True)) == [
        ("A", "MergeIterator.computeNext", 40.0), ("A", "ModificationStatement.execute", 30.0),
        ("B", "MergeIterator.computeNext", 60.0), ("B", "CompactionTask.runMayThrow", 20.0)]


def test_differential_by_pool_is_b_minus_a_in_points_largest_change_first() -> None:
    got = differential(A, B)
    assert got.to_dict("records") == [
        {"key": "CompactionExecutor", "samples_a": 4, "samples_b": 16, "share_a_pct": 40.0, "share_b_pct": 80.0,
         "change_points": 40.0},
        {"key": "Native-Transport-Requests", "samples_a": 4, "samples_b": 2, "share_a_pct": 40.0, "share_b_pct": 10.0,
         "change_points": -30.0},
        {"key": "MutationStage", "samples_a": 2, "samples_b": 2, "share_a_pct": 20.0, "share_b_pct": 10.0,
         "change_points": -10.0},
    ]
    assert change_lines(got, 2) == ["CompactionExecutor +40.0 points (40.0% -> 80.0% of the samples)",
                                    "Native-Transport-Requests -30.0 points (40.0% -> 10.0% of the samples)"]


def test_differential_by_frame_lists_frames_of_either_arm() -> None:
    got = differential(A, B, "self")
    assert [(short_frame(k), c) for k, c in zip(got["key"], got["change_points"], strict=True)] == [
        ("ModificationStatement.execute", -20.0), ("CompactionTask.runMayThrow", 20.0),
        ("MergeIterator.computeNext", 20.0), ("Mutation.apply", -10.0), ("Dispatcher.processRequest", -10.0)]
    assert change_lines(got, 5, min_points=15) == [
        "ModificationStatement.execute -20.0 points (30.0% -> 10.0% of the samples)",
        "CompactionTask.runMayThrow +20.0 points (0.0% -> 20.0% of the samples)",
        "MergeIterator.computeNext +20.0 points (40.0% -> 60.0% of the samples)"]


def test_a_differential_against_no_samples_is_refused_in_one_line() -> None:
    with pytest.raises(AnalysisError, match="arm a has no java samples to compare"):
        differential(A.iloc[0:0], B)
    with pytest.raises(AnalysisError, match="key='thread': expected one of pool, self, inclusive"):
        differential(A, B, "thread")


def test_flame_tree_nodes_carry_b_samples_and_the_change_against_a() -> None:
    tree = flame_tree(B, A, chains=False)
    rows = {r.id: r for r in tree.itertuples(index=False)}
    root = rows[FLAME_ROOT]
    assert (root.parent, root.depth, root.samples_b, root.share_b_pct, root.change_points) == ("", 0, 20, 100.0, 0.0)
    pool = rows[f"{FLAME_ROOT};CompactionExecutor"]
    assert (pool.frame, pool.depth, pool.samples_b, pool.share_a_pct, pool.change_points) == \
        ("CompactionExecutor", 1, 16, 40.0, 40.0)
    leaf = rows[f"{FLAME_ROOT};CompactionExecutor;{MERGE}"]
    assert (leaf.frame, leaf.depth, leaf.samples_b, leaf.share_b_pct, leaf.change_points) == \
        ("org.apache.cassandra.utils.MergeIterator.computeNext", 4, 12, 60.0, 20.0)
    assert leaf.parent == f"{FLAME_ROOT};CompactionExecutor;{COMPACTION}"
    # every node's parent comes before it, and no node holds more samples than its parent
    seen = {"": math.inf}
    for r in tree.itertuples(index=False):
        assert r.parent in seen and r.samples_b <= seen[r.parent]
        seen[r.id] = r.samples_b
    # a frame only in A (Dispatcher.processRequest without a child) has no node: B drew nothing there
    assert len(tree) == 12


def test_flame_tree_cut_at_a_depth_and_pruned_under_a_share() -> None:
    shallow = flame_tree(B, A, max_depth=2, chains=False)
    assert shallow["depth"].max() == 2
    assert shallow.loc[shallow["frame"] == "java.lang.Thread.run", "samples_b"].tolist() == [16, 2, 2]
    pruned = flame_tree(B, A, min_share_pct=25.0, chains=False)
    assert pruned["frame"].tolist() == [FLAME_ROOT, "CompactionExecutor", "java.lang.Thread.run",
                                        "org.apache.cassandra.db.compaction.CompactionTask.runMayThrow",
                                        "org.apache.cassandra.utils.MergeIterator.computeNext",
                                        "Native-Transport-Requests", "java.lang.Thread.run",
                                        "org.apache.cassandra.transport.Dispatcher.processRequest",
                                        "org.apache.cassandra.cql3.statements.ModificationStatement.execute"]
    alone = flame_tree(B, chains=False)
    assert alone["change_points"].isna().all() and alone["share_b_pct"].iloc[0] == 100.0


def test_flame_tree_merges_a_frame_into_its_one_callee_where_every_sample_goes_on_in_both_arms() -> None:
    tree = flame_tree(B, A)
    level = {"": -1}
    for r in tree.itertuples(index=False):
        level[r.id] = level[r.parent] + 1
    got = [(level[r.id], short_frame(r.frame), r.frames.count(";") + 1, r.samples_b, r.share_a_pct)
           for r in tree.itertuples(index=False)]
    assert got == [
        (0, FLAME_ROOT, 1, 20, 100.0),
        (1, "CompactionExecutor", 1, 16, 40.0),
        # Thread.run and runMayThrow: every sample of both arms goes on to the next frame ...
        (2, "CompactionTask.runMayThrow", 2, 16, 40.0),
        # ... but not from runMayThrow: in B 4 of its 16 samples stop there
        (3, "MergeIterator.computeNext", 1, 12, 40.0),
        (1, "MutationStage", 1, 2, 20.0),
        (2, "Mutation.apply", 2, 2, 20.0),
        (1, "Native-Transport-Requests", 1, 2, 40.0),
        # in A one of processRequest's 4 samples stops there: ModificationStatement.execute stays apart
        (2, "Dispatcher.processRequest", 2, 2, 40.0),
        (3, "ModificationStatement.execute", 1, 2, 30.0),
    ]
    chain = tree.set_index("frame").loc["org.apache.cassandra.transport.Dispatcher.processRequest", "frames"]
    assert chain == REQUEST


def test_flame_tree_merges_past_callees_that_the_pruning_leaves_out() -> None:
    # in B one of MergeIterator's runMayThrow samples (4 of 20, 20%) stops in runMayThrow itself
    strict = flame_tree(B, A, min_share_pct=0.0)
    loose = flame_tree(B, A, min_share_pct=25.0)
    assert "org.apache.cassandra.utils.MergeIterator.computeNext" in set(strict["frame"])
    row = loose.set_index("frame").loc["org.apache.cassandra.utils.MergeIterator.computeNext"]
    assert row["frames"] == MERGE and row["samples_b"] == 12
    assert "org.apache.cassandra.db.compaction.CompactionTask.runMayThrow" not in set(loose["frame"])


def test_gc_pauses_per_arm_count_the_pause_events_only() -> None:
    gc = pd.DataFrame({"run_id": ["a1", "a1", "a1", "b1"], "arm": ["A", "A", "A", "B"],
                       "event": ["jdk.GCPhasePause", "jdk.GarbageCollection", "jdk.GCPhasePause", "jdk.GCPhasePause"],
                       "name": ["GC Pause", "G1New", "GC Pause", "GC Pause"], "time_s": [1.0, 1.0, 2.0, 1.5],
                       "duration_ms": [20.0, 20.0, 5.0, 40.0]})
    assert gc_pauses(gc, "arm").to_dict("records") == [{"arm": "A", "pauses": 2, "total_ms": 25.0, "max_ms": 20.0},
                                                       {"arm": "B", "pauses": 1, "total_ms": 40.0, "max_ms": 40.0}]
    assert gc_pauses(gc).to_dict("records") == [{"pauses": 3, "total_ms": 65.0, "max_ms": 40.0}]
