"""Runs on disk: the data model (`model`), the store (`store`), the catalog (`catalog`), and the
HDR histograms a Run carries (`hdr`: decode, encode, merge, percentiles; pure)."""

from cassperf.results.catalog import catalog, import_parsed
from cassperf.results.manifest import build_manifest, new_run_id, scrub_secrets
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
from cassperf.results.store import RunExistsError, RunStoreWarning, RunWriter, load_run, save_run

__all__ = [
    "EVENT_COLUMNS", "HISTOGRAM_COLUMNS", "INTERVAL_COLUMNS", "METRIC_COLUMNS", "SCHEMA_VERSION",
    "SUMMARY_COLUMNS", "Run", "RunExistsError", "RunStoreWarning", "RunWriter", "build_manifest", "catalog",
    "conform", "empty_frame", "import_parsed", "load_run", "new_run_id", "save_run", "scrub_secrets",
]
