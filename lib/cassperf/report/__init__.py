"""Reports: papermill execution of the report notebooks, nbconvert HTML, reports/index.html."""

from cassperf.report.pipeline import REPORT_NOTEBOOKS, NotebookResult, run_reports

__all__ = ["REPORT_NOTEBOOKS", "NotebookResult", "run_reports"]
