"""What a study notebook calls: the one machine that runs and reports any study
(``study_report``), above the studies (cassperf.experiments) and the report pipeline
(cassperf.report), which know nothing of each other."""

from cassperf.workbook.study_page import StudyReport, study_report

__all__ = ["StudyReport", "study_report"]
