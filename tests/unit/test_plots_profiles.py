"""Figures of the nodes' CPU profiles (cassperf.plots.profiles) from the hand-made sample tables of
test_analysis_profiles: the differential flame graph draws every node of the tree, coloured on a
scale centred on no change; the pool bars stack to 100% per arm."""

from __future__ import annotations

import pandas as pd

from cassperf.analysis.profiles import flame_tree, pool_share_table
from cassperf.plots.profiles import MIN_COLOR_RANGE_POINTS, OTHER_COLOR, differential_flame, pool_share_bars
from tests.unit.test_analysis_profiles import A, B


def test_the_differential_flame_graph_draws_each_node_coloured_by_its_change() -> None:
    tree = flame_tree(B, A)
    fig = differential_flame(tree, "B against A", a_name="placebo", b_name="garbagecollect")
    (icicle,) = fig.data
    assert icicle.type == "icicle" and list(icicle.ids) == list(tree["id"]) and list(icicle.parents) == list(tree["parent"])
    assert list(icicle.values) == list(tree["samples_b"]) and icicle.branchvalues == "total"
    assert list(icicle.marker.colors) == list(tree["change_points"])
    assert (icicle.marker.cmin, icicle.marker.cmid, icicle.marker.cmax) == (-40.0, 0, 40.0)   # the largest change
    assert "garbagecollect − placebo" in icicle.marker.colorbar.title.text
    labels = dict(zip(tree["frame"], icicle.labels, strict=True))
    assert labels["CompactionExecutor"] == "CompactionExecutor"
    assert labels["org.apache.cassandra.db.compaction.CompactionTask.runMayThrow"] == "… CompactionTask.runMayThrow"
    assert fig.layout.title.text == "B against A"


def test_a_small_change_is_never_drawn_deep_red() -> None:
    same = flame_tree(A, A)
    marker = differential_flame(same, "A against itself").data[0].marker
    assert (marker.cmin, marker.cmax) == (-MIN_COLOR_RANGE_POINTS, MIN_COLOR_RANGE_POINTS)
    assert set(marker.colors) == {0.0}


def test_the_pool_bars_stack_to_a_hundred_per_arm_with_the_rest_in_grey() -> None:
    table = pool_share_table(pd.concat([A.assign(arm="A"), B.assign(arm="B")]), order=["A", "B"], top=1)
    fig = pool_share_bars(table, "pools")
    assert [t.name for t in fig.data] == ["CompactionExecutor", "other"]
    assert list(fig.data[0].y) == ["A (10 samples)", "B (20 samples)"]
    assert [a + b for a, b in zip(fig.data[0].x, fig.data[1].x, strict=True)] == [100.0, 100.0]
    assert fig.data[1].marker.color == OTHER_COLOR and fig.layout.barmode == "stack"
