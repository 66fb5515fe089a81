"""Figures and tables of a study report's method section: the warm-up curve, the calibration
curve with its knee, and the order the runs went in."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

_LAYOUT = {"template": "plotly_white", "height": 320, "margin": {"l": 60, "r": 20, "t": 60, "b": 50}}


def warmup_figure(warmups: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Throughput of each warm-up step (ops/s), one line per warmed context."""
    fig = go.Figure()
    for w in warmups:
        rates = list(w.get("rates_ops_s", []))
        name = w.get("context") or "cluster"
        fig.add_scatter(x=[w.get("step_s", 0) * (i + 1) for i in range(len(rates))], y=rates, mode="lines+markers",
                        name=f"{name} ({w.get('utc', '')})")
    fig.update_layout(title="Warm-up: throughput per step until it stopped rising", xaxis_title="seconds of warm-up load",
                      yaxis_title="ops/s", **_LAYOUT)
    return fig


def calibration_figure(calibration: Mapping[str, Any]) -> go.Figure:
    """Throughput against requests in flight, the knee marked (log x axis at the tried values)."""
    points = [(int(c), float(r)) for c, r in calibration.get("points", [])]
    fig = go.Figure()
    fig.add_scatter(x=[c for c, _ in points], y=[r for _, r in points], mode="lines+markers",
                    name=str(calibration.get("op", "")))
    knee = calibration.get("knee")
    if knee is not None:
        fig.add_vline(x=knee, line_dash="dash", line_color="#52606d",
                      annotation_text=f"knee: {knee} in flight", annotation_position="top left")
    fig.update_xaxes(type="log", tickvals=[c for c, _ in points], ticktext=[str(c) for c, _ in points])
    fig.update_layout(title=f"Calibration: {calibration.get('op', '')} throughput against requests in flight",
                      xaxis_title="requests in flight (closed loop)", yaxis_title="ops/s", showlegend=False, **_LAYOUT)
    return fig


def order_table(order: Sequence[Sequence[Any]]) -> str:
    """HTML: one column per block, the arms in the order they ran."""
    blocks: dict[int, list[str]] = {}
    for block, _pos, arm in order:
        blocks.setdefault(int(block), []).append(str(arm))
    if not blocks:
        return "<p>No run was scheduled.</p>"
    depth = max(len(v) for v in blocks.values())
    head = "".join(f"<th>block {b}</th>" for b in blocks)
    rows = "".join("<tr><td>" + str(i + 1) + "</td>" + "".join(
        f"<td>{html.escape(v[i]) if i < len(v) else ''}</td>" for v in blocks.values()) + "</tr>" for i in range(depth))
    return f"<table><thead><tr><th>#</th>{head}</tr></thead><tbody>{rows}</tbody></table>"
