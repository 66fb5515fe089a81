"""cassperf: a workbook for Apache Cassandra performance experiments.

The package is the library behind the notebooks: cluster control (`cassperf.cluster`),
workload engines (`cassperf.workload`), log parsers (`cassperf.parsers`), a results store
(`cassperf.results`), analysis, plots and report export (`cassperf.report`).
"""

__version__ = "0.1.0"
