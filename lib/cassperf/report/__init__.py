"""Reports: papermill execution of the report notebooks, nbconvert HTML, reports/index.html,
and the header and notes a report notebook shows (`cassperf.report.header`)."""

from cassperf.report.pipeline import NotebookResult, run_reports

__all__ = ["NotebookResult", "run_reports"]
