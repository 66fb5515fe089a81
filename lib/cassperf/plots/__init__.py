"""Plotly figures: functions that take tidy frames and return go.Figure; the notebook shows them."""

from cassperf.plots.basic import latency_bars, rate_bars, use_report_renderer

__all__ = ["latency_bars", "rate_bars", "use_report_renderer"]
