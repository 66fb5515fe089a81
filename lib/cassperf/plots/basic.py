"""How notebooks show figures (charts themselves: cassperf.plots.studies, logs, method)."""

from __future__ import annotations

import json

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

#: the figures' output type (what JupyterLab and the report exporter draw)
PLOTLY_MIME = "application/vnd.plotly.v1+json"
#: a figure output whose metadata holds this key is drawn collapsed in a report, under a
#: <details> whose summary is the key's value, and drawn when first opened (cassperf.report.html)
COLLAPSED_KEY = "cassperf_collapsed"


def show_collapsed(fig: go.Figure, summary: str) -> None:
    """Show ``fig`` collapsed under ``summary`` in the published report (JupyterLab draws it
    open)."""
    from IPython.display import display

    display({PLOTLY_MIME: json.loads(fig.to_json())}, raw=True, metadata={COLLAPSED_KEY: summary})


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
    pd.set_option("display.max_colwidth", 100)
