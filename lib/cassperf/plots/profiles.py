"""Figures of the nodes' CPU profiles: the differential flame graph of two arms, and the share of
each thread pool per arm.

Both take the tables of ``cassperf.analysis.profiles`` (``flame_tree``, ``pool_share_table``)
and return a go.Figure; shares are in % of the arm's stack samples, changes in points of them.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from cassperf.analysis.profiles import short_frame

#: blue: a smaller share in B than in A; white: no change; red: a larger share in B
DIFF_COLORSCALE = [[0.0, "#2166ac"], [0.25, "#92c5de"], [0.5, "#f7f7f7"], [0.75, "#f4a582"], [1.0, "#b2182b"]]
#: the colour scale spans at least this many points either way, so that a change of 0.3 points is never deep red
MIN_COLOR_RANGE_POINTS = 5.0
#: a palette for thread pools that keeps each pool's colour from chart to chart (by name)
POOL_COLORS = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b", "#b279a2", "#ff9da6", "#9d755d",
               "#79706e", "#d67195"]
#: the pools summed together beyond a table's ``top``
OTHER_COLOR = "#c7c7c7"


def differential_flame(tree: pd.DataFrame, title: str, *, a_name: str = "A", b_name: str = "B",
                       depth: int = 8, height: int = 700) -> go.Figure:
    """The differential flame graph of arm B against arm A from ``flame_tree(b, a)``: one box per
    stack path (the root, then thread pools, then frames from the root of the stack down), its
    width B's share of the samples, its colour the change in share against A (red: more of B's
    samples pass through it, blue: fewer; points of the samples). ``depth`` levels show at once
    (click a box to open it below). A box stands for a chain of frames where every sample goes on
    to the same callee ("… " before its last frame; the hover lists them). Frames only A ran have
    no box: see the differential table."""
    values = tree["change_points"].astype("float64")
    span = max(MIN_COLOR_RANGE_POINTS, float(np.nanmax(np.abs(values.to_numpy()))) if values.notna().any() else 0.0)
    labels, paths = [], []
    for frame, frames, d in zip(tree["frame"], tree.get("frames", tree["frame"]), tree["depth"], strict=True):
        chain = str(frames).split(";")
        labels.append(str(frame) if d < 2 else ("… " if len(chain) > 1 else "") + short_frame(str(frame)))
        paths.append(str(frame) if d < 2 else "<br>".join(chain[-12:]))
    custom = np.stack([np.array(paths, dtype=object), tree["share_a_pct"].astype("float64"),
                       tree["share_b_pct"].astype("float64"), values], axis=-1)
    fig = go.Figure(go.Icicle(
        ids=tree["id"], parents=tree["parent"], labels=labels, values=tree["samples_b"], branchvalues="total",
        maxdepth=depth, customdata=custom, sort=True,
        marker={"colors": values.fillna(0.0), "colorscale": DIFF_COLORSCALE, "cmin": -span, "cmax": span, "cmid": 0,
                "showscale": True, "line": {"width": 0.5, "color": "#ffffff"},
                "colorbar": {"title": {"text": f"change in share<br>{b_name} − {a_name}<br>(points)", "side": "top"},
                             "ticksuffix": "", "thickness": 14, "len": 0.8}},
        tiling={"orientation": "v"},
        hovertemplate=(f"%{{customdata[0]}}<br>{a_name}: %{{customdata[1]:.1f}}% of the samples<br>"
                       f"{b_name}: %{{customdata[2]:.1f}}%<br>change: %{{customdata[3]:+.1f}} points<extra></extra>"),
        texttemplate="%{label}<br>%{customdata[3]:+.1f}", textfont={"size": 11},
    ))
    fig.update_layout(title={"text": title, "font": {"size": 15}}, template="plotly_white", height=height,
                      margin={"l": 10, "r": 10, "t": 70, "b": 40})
    fig.add_annotation(text=(f"width: share of {b_name}'s CPU samples (threads running Java code); colour: change "
                             f"against {a_name}, points of the samples. Click a box to open it."),
                       xref="paper", yref="paper", x=0, y=0, yshift=-12, showarrow=False, xanchor="left",
                       yanchor="top", font={"size": 11, "color": "#52606d"})
    return fig


def pool_color_map(pools: list[str]) -> dict[str, str]:
    """A colour per pool, stable across charts for the usual Cassandra pools."""
    known = ["Native-Transport-Requests", "MutationStage", "ReadStage", "CompactionExecutor", "MemtableFlushWriter",
             "Messaging-EventLoop", "epollEventLoopGroup", "GossipStage", "ScheduledTasks", "MemtablePostFlush",
             "PerDiskMemtableFlushWriter"]
    out = {p: POOL_COLORS[known.index(p)] for p in pools if p in known}
    if "other" in pools:
        out["other"] = OTHER_COLOR
    spare = [c for c in POOL_COLORS if c not in out.values()]
    for p in pools:
        if p not in out:
            out[p] = spare.pop(0) if spare else "#999999"
    return out


def pool_share_bars(table: pd.DataFrame, title: str, *, height: int | None = None) -> go.Figure:
    """One horizontal bar per arm (the rows of ``pool_share_table``), split by thread pool, each
    part its share in % of the arm's CPU samples; the columns' order (largest pool first) is the
    stacking order. The arm's sample count is in its label."""
    pools = [c for c in table.columns if c != "samples"]
    colors = pool_color_map(pools)
    arms = [f"{arm} ({int(n):,} samples)" if "samples" in table.columns and not math.isnan(n) else str(arm)
            for arm, n in zip(table.index, table.get("samples", pd.Series(np.nan, index=table.index)), strict=True)]
    fig = go.Figure()
    for pool in pools:
        share = table[pool].astype("float64")
        fig.add_bar(name=pool, y=arms, x=share, orientation="h", marker_color=colors[pool],
                    text=[f"{v:.0f}%" if v >= 6 else "" for v in share], textposition="inside",
                    insidetextanchor="middle",
                    hovertemplate=f"{pool}<br>%{{y}}: %{{x:.1f}}% of the samples<extra></extra>")
    fig.update_layout(title={"text": title, "y": 0.98, "yanchor": "top"}, barmode="stack", template="plotly_white",
                      height=height or 190 + 42 * len(arms), margin={"l": 10, "r": 10, "t": 100, "b": 50},
                      xaxis={"title": "share of the CPU samples (%; threads running Java code)", "range": [0, 101],
                             "dtick": 20},
                      yaxis={"autorange": "reversed", "automargin": True},
                      legend={"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom", "traceorder": "normal"})
    return fig
