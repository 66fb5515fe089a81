"""Bar charts of per-op rates and latency percentiles, and how notebooks show figures."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio


def use_report_renderer() -> None:
    """Show figures as plotly JSON (the `application/vnd.plotly.v1+json` output) and nothing
    else: JupyterLab draws it with its plotly extension, and the report exporter
    (`cassperf.report.html`) draws it from one copy of plotly.js per report, offline. The
    executed notebook stays small (no plotly.js inside it). Charts use the plain white template.
    Tables (pandas) show up to 100 rows and 40 columns before eliding: a report's reader cannot
    scroll a DataFrame that was cut."""
    pio.renderers.default = "plotly_mimetype"
    pio.templates.default = "plotly_white"
    pd.set_option("display.max_rows", 100)
    pd.set_option("display.min_rows", 100)
    pd.set_option("display.max_columns", 40)


def latency_bars(frame: pd.DataFrame, title: str, group: str = "op",
                 percentiles: tuple[str, ...] = ("p50", "p95", "p99"), latency_type: str | None = None) -> go.Figure:
    """Grouped bars: one group per `group` value, one bar per percentile (latency_<p>_ms columns)."""
    fig = go.Figure()
    for p in percentiles:
        col = f"latency_{p}_ms"
        fig.add_bar(name=p, x=frame[group].astype(str), y=frame[col])
    ylabel = "latency (ms)" + (f", {latency_type} time" if latency_type else "")
    fig.update_layout(title=title, barmode="group", yaxis_title=ylabel, xaxis_title=group, legend_title="percentile")
    return fig


def rate_bars(frame: pd.DataFrame, title: str, x: str, y: str, y_title: str) -> go.Figure:
    fig = go.Figure(go.Bar(x=frame[x].astype(str), y=frame[y]))
    fig.update_layout(title=title, xaxis_title=x, yaxis_title=y_title)
    return fig
