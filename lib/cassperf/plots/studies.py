"""Figures of the study reports: bars by a sweep parameter, lines against client threads,
throughput over time per run, and time series with a phase window shaded.

Every function takes tidy frames and returns a go.Figure; axis titles carry units and the
latency type. A chart takes the columns it draws as arguments, with the analysis's names as
defaults (the way pandas.plotting and seaborn do), so a new metric needs no new chart function:
``y`` the value, ``ci`` the column of its 95% CI half width (default: CI_COLUMNS[y], the arms'
run-to-run CI of cassperf.analysis.arm_summary), ``flag`` a boolean column marking a value
"unstable", ``latency`` the column of each percentile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

PERCENTILES = ("p50", "p95", "p99")
_LAYOUT = {"template": "plotly_white", "height": 380, "margin": {"l": 60, "r": 20, "t": 60, "b": 50}}


def _latency_title(latency_type: str | None) -> str:
    return "latency (ms" + (f", {latency_type} time)" if latency_type else ")")


#: the column holding a figure's 95% CI half width (cassperf.analysis.arm_summary: over an arm's runs)
CI_COLUMNS = {"rate_ops_s": "rate_ci_ops_s"}
UNCERTAINTY_NOTE = ("error bars: 95% CI of the mean over the arm's runs (Student's t on the run figures; none "
                    "with one run)")
LATENCY_COLUMNS = {p: f"latency_{p}_ms" for p in ("p50", "p95", "p99")}


def _uncertainty(part: pd.DataFrame, y: str, ci: str | None = None, flag: str = "unstable") \
        -> tuple[dict | None, list[str]]:
    """(plotly error_y, bar texts): the CI half width where the frame has the ``ci`` column, and
    each value marked "unstable" where the ``flag`` column says so."""
    ci = ci or CI_COLUMNS.get(y)
    error = None
    if ci in part.columns:
        error = {"type": "data", "array": part[ci].astype("float64").fillna(0).to_numpy(), "visible": True,
                 "thickness": 1.2}
    unstable = part[flag].fillna(False).astype(bool) if flag in part.columns else pd.Series(False, index=part.index)
    texts = [f"{v:,.0f}" + (" unstable" if u else "") for v, u in zip(part[y], unstable, strict=True)]
    return error, texts


def _caption(fig: go.Figure, frame: pd.DataFrame, y: str, ci: str | None = None) -> None:
    if (ci or CI_COLUMNS.get(y)) in frame.columns:
        # below the x axis title: anchored at the bottom edge of the figure, not in plot units
        fig.add_annotation(text=UNCERTAINTY_NOTE, xref="paper", yref="paper", x=0, y=0, yshift=-78, showarrow=False,
                           xanchor="left", yanchor="top", font={"size": 11, "color": "#52606d"})
        fig.update_layout(margin={**_LAYOUT["margin"], "b": 105}, height=_LAYOUT["height"] + 30)


def _log_ticks(fig: go.Figure, values: pd.Series) -> None:
    """A log x axis ticked at the swept values themselves (4, 16, 64, 256), not at 2, 3, ... 100."""
    ticks = sorted({float(v) for v in pd.to_numeric(values, errors="coerce").dropna() if v > 0})
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[f"{t:g}" for t in ticks])


def bars(frame: pd.DataFrame, x: str, y: str, title: str, y_title: str, color: str | None = None,
         x_title: str | None = None, ci: str | None = None, flag: str = "unstable") -> go.Figure:
    """Bars of ``y`` per ``x`` (grouped by ``color`` when given); x keeps the frame's order.
    Throughput bars carry their 95% CI as error bars and say "unstable" on an unstable run
    (the frame's rate_ci_ops_s and unstable columns), so noise never looks like a finding."""
    fig = go.Figure()
    groups = [(None, frame)] if color is None else list(frame.groupby(color, sort=False))
    for name, part in groups:
        error, texts = _uncertainty(part, y, ci, flag)
        fig.add_bar(name=None if name is None else f"{color} {name}", x=part[x].astype(str), y=part[y],
                    error_y=error, text=texts, **({"textposition": "inside", "insidetextanchor": "end"} if error
                                                  else {"textposition": "outside"}))
    fig.update_layout(title=title, barmode="group", xaxis_title=x_title or x, yaxis_title=y_title,
                      showlegend=color is not None, **_LAYOUT)
    fig.update_xaxes(type="category")
    _caption(fig, frame, y, ci)
    return fig


def latency_bars(frame: pd.DataFrame, x: str, title: str, latency_type: str | None = None,
                 percentiles: Sequence[str] = PERCENTILES, x_title: str | None = None,
                 latency: Mapping[str, str] | None = None) -> go.Figure:
    """p50/p95/p99 bars per ``x``; ``latency`` maps each percentile to its column (default
    latency_<p>_ms, HDR-merged)."""
    columns = {**LATENCY_COLUMNS, **dict(latency or {})}
    fig = go.Figure()
    for p in percentiles:
        fig.add_bar(name=p, x=frame[x].astype(str), y=frame[columns.get(p, f"latency_{p}_ms")])
    fig.update_layout(title=title, barmode="group", xaxis_title=x_title or x, yaxis_title=_latency_title(latency_type),
                      legend_title="percentile", **_LAYOUT)
    fig.update_xaxes(type="category")
    return fig


def lines(frame: pd.DataFrame, x: str, y: str, color: str, title: str, y_title: str,
          x_title: str | None = None, log_x: bool = False, ci: str | None = None, flag: str = "unstable") -> go.Figure:
    """One line per ``color`` value of ``y`` against ``x`` (e.g. ops/s vs client threads per
    RF); throughput points carry their 95% CI and "unstable" as in ``bars``."""
    fig = go.Figure()
    for name, part in frame.groupby(color, sort=False):
        part = part.sort_values(x)
        error, texts = _uncertainty(part, y, ci, flag)
        fig.add_scatter(name=f"{color} {name}", x=part[x], y=part[y], mode="lines+markers", error_y=error,
                        hovertext=texts)
    fig.update_layout(title=title, xaxis_title=x_title or x, yaxis_title=y_title, **_LAYOUT)
    _caption(fig, frame, y, ci)
    if log_x:
        _log_ticks(fig, frame[x])
    return fig


def latency_lines(frame: pd.DataFrame, x: str, color: str, title: str, latency_type: str | None = None,
                  percentiles: Sequence[str] = PERCENTILES, x_title: str | None = None,
                  log_x: bool = False) -> go.Figure:
    """p50/p95/p99 lines per ``color`` value against ``x`` (dash per percentile)."""
    fig = go.Figure()
    dashes = {"p50": "solid", "p95": "dash", "p99": "dot"}
    for name, part in frame.groupby(color, sort=False):
        part = part.sort_values(x)
        for p in percentiles:
            fig.add_scatter(name=f"{color} {name} {p}", x=part[x], y=part[f"latency_{p}_ms"], mode="lines+markers",
                            line={"dash": dashes.get(p, "solid")})
    fig.update_layout(title=title, xaxis_title=x_title or x, yaxis_title=_latency_title(latency_type), **_LAYOUT)
    if log_x:
        _log_ticks(fig, frame[x])
    return fig


def over_time(series: Mapping[str, pd.DataFrame], y: str, title: str, y_title: str) -> go.Figure:
    """One line per run: ``y`` against time_s (each frame a throughput_series)."""
    fig = go.Figure()
    for name, frame in series.items():
        fig.add_scatter(name=name, x=frame["time_s"], y=frame[y], mode="lines")
    fig.update_layout(title=title, xaxis_title="time since the start of measurement (s)", yaxis_title=y_title,
                      **_LAYOUT)
    return fig


def shaded_panels(panels: Sequence[tuple[str, pd.DataFrame, str]], windows: Sequence[tuple[float, float, str]],
                  title: str, height_per_panel: int = 220) -> go.Figure:
    """Stacked time series sharing the time axis, each window shaded on every panel.

    panels: (panel title with unit, frame with time_s / value / a ``series`` column naming each
    line, ...). windows: (start_s, end_s, label)."""
    fig = make_subplots(rows=len(panels), cols=1, shared_xaxes=True, vertical_spacing=0.04,
                        subplot_titles=[p[0] for p in panels])
    shown: set[str] = set()
    for i, (_, frame, _unused) in enumerate(panels, 1):
        for name, part in frame.groupby("series", sort=True):
            fig.add_scatter(name=str(name), x=part["time_s"], y=part["value"], mode="lines", legendgroup=str(name),
                            showlegend=str(name) not in shown, row=i, col=1)
            shown.add(str(name))
    colors = ("rgba(230, 120, 20, 0.18)", "rgba(40, 120, 200, 0.12)")
    for k, (start, end, label) in enumerate(windows):
        fig.add_vrect(x0=start, x1=end, fillcolor=colors[k % 2], line_width=0, layer="below", row="all", col=1,
                      annotation_text=label if k < 2 else None, annotation_position="top left")
    fig.update_layout(title=title, height=120 + height_per_panel * len(panels), template="plotly_white",
                      margin={"l": 60, "r": 20, "t": 80, "b": 50}, legend={"font": {"size": 10}})
    fig.update_xaxes(title_text="time since the start of measurement (s)", row=len(panels), col=1)
    return fig


def sweep_charts(frame: pd.DataFrame, line: str, title: str, latency_type: str | None = None,
                 x: str = "threads", x_title: str = "client threads", log_x: bool = True) -> list[go.Figure]:
    """A thread sweep as the storage study drew it: ops/s against ``x``, then p50, p95 and p99
    on separate charts (easier to read than three percentiles on one), one line per ``line``
    value (named by the value itself); ops/s with its 95% CI and "unstable" as in ``bars``."""
    figures = []
    for y, what, unit in [("rate_ops_s", "ops/s", "ops/s"),
                          *((f"latency_{p}_ms", f"latency {p}", _latency_title(latency_type)) for p in PERCENTILES)]:
        fig = go.Figure()
        for name, part in frame.groupby(line, sort=False):
            part = part.sort_values(x)
            error, texts = _uncertainty(part, y)
            fig.add_scatter(name=str(name), x=part[x], y=part[y], mode="lines+markers", error_y=error,
                            hovertext=texts)
        fig.update_layout(title=f"{title}: {what} vs {x_title}", xaxis_title=x_title, yaxis_title=unit, **_LAYOUT)
        _caption(fig, frame, y)
        if log_x and not frame.empty:
            _log_ticks(fig, frame[x])
        figures.append(fig)
    return figures


def deployment_bars(rows: pd.DataFrame, title: str) -> go.Figure:
    """Two panels for one machine (cassperf.analysis.deployments.deployment_rows rows): row
    rate per workload and node CPU per 1,000 rows, one bar colour per deployment."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("row rate (row/s)", "node CPU per 1,000 rows (ms)"),
                        horizontal_spacing=0.12)
    from plotly.colors import qualitative

    for i, (name, part) in enumerate(rows.groupby("deployment", sort=False)):
        marker = {"color": qualitative.Plotly[i % len(qualitative.Plotly)]}   # one colour per deployment, both panels
        fig.add_bar(name=str(name), x=part["workload"], y=part["row_rate_s"], legendgroup=str(name),
                    marker=marker, text=[f"{v:,.0f}" for v in part["row_rate_s"]], textposition="outside",
                    row=1, col=1)
        fig.add_bar(name=str(name), x=part["workload"], y=part["cpu_ms_per_1k_rows"], legendgroup=str(name),
                    marker=marker, showlegend=False, row=1, col=2)
    fig.update_layout(title=title, barmode="group", legend_title="deployment", **_LAYOUT)
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=["write", "read", "mixed"])
    fig.update_yaxes(title_text="row/s", row=1, col=1)
    fig.update_yaxes(title_text="CPU ms per 1k rows", row=1, col=2)
    return fig
