"""Runs on disk: the data model (`model`), the store (`store`) and the catalog (`catalog`)."""

from cassperf.results.model import (
    EVENT_COLUMNS,
    HISTOGRAM_COLUMNS,
    INTERVAL_COLUMNS,
    METRIC_COLUMNS,
    SCHEMA_VERSION,
    SUMMARY_COLUMNS,
    Run,
    conform,
    empty_frame,
)

__all__ = [
    "EVENT_COLUMNS", "HISTOGRAM_COLUMNS", "INTERVAL_COLUMNS", "METRIC_COLUMNS", "SCHEMA_VERSION",
    "SUMMARY_COLUMNS", "Run", "conform", "empty_frame",
]
