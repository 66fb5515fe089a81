"""`cassperf report`: run the report notebooks, export HTML, write reports/index.html."""

from __future__ import annotations

import argparse

from cassperf import config
from cassperf.report.pipeline import PARAMETER_SETS, REPORT_NOTEBOOKS, run_reports


def _report(args: argparse.Namespace) -> int:
    results = run_reports(args.notebook or None, args.params, start_cluster=not args.no_cluster)
    for r in results:
        print(f"{'ok    ' if r.ok else 'FAILED'} {r.notebook} ({r.duration_s:.1f} s) -> {r.html}"
              + (f"\n       {r.error}" if r.error else ""))
    print(f"index: {config.reports_dir() / 'index.html'}")
    return 0 if all(r.ok for r in results) else 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="run the report notebooks and write reports/index.html")
    p.add_argument("--notebook", action="append", help=f"only this notebook (default: {', '.join(REPORT_NOTEBOOKS)})")
    p.add_argument("--params", default="local", choices=sorted(PARAMETER_SETS), help="parameter set (default: local)")
    p.add_argument("--no-cluster", action="store_true", help="do not start the embedded cluster first")
    p.set_defaults(func=_report)
