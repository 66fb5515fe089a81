"""Plotly figures: functions that take tidy frames and return go.Figure; the notebook shows them."""

from cassperf.plots.basic import use_report_renderer

__all__ = ["use_report_renderer"]
