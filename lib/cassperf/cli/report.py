"""`cassperf report`: run the report notebooks, export HTML, write reports/index.html."""

from __future__ import annotations

import argparse

from cassperf import config


def _report(args: argparse.Namespace) -> int:
    from cassperf.workbook.preflight import plan_reports, run_reports

    explicit = dict(args.parameter or [])
    if args.plan:
        for line in plan_reports(args.notebook or None, args.params, explicit=explicit):
            print(line)
        return 0
    results = run_reports(args.notebook or None, args.params, explicit=explicit, show_code=args.show_code,
                          start_clusters=not args.no_cluster, log=lambda line: print(line, flush=True))
    print(f"index: {config.reports_dir() / 'index.html'}")
    return 0 if all(r.ok for r in results) else 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="run the report notebooks and write reports/index.html",
                       description="Run every notebooks/NN-*.ipynb (or those named) with a parameter set on the "
                                   "embedded clusters their parameters declare, export each to HTML and write "
                                   "reports/index.html. Exit code 1 if a notebook failed (its report is still written).")
    p.add_argument("--notebook", action="append", metavar="NAME",
                   help="only this notebook (file name or stem, e.g. 01-replication-factor); repeatable")
    p.add_argument("--params", default="local", metavar="SET",
                   help="parameter set: local (defaults + notebooks/params/local/<stem>.yaml), paper "
                        "(notebooks/params/paper/<stem>.yaml) or FILE.yaml for the selected notebooks (default: local)")
    p.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("NAME", "VALUE"),
                   help="one parameter for every selected notebook that declares it, over the set's value "
                        "(e.g. -p contact_points 10.0.0.5); repeatable")
    p.add_argument("--show-code", action="store_true", help="keep the code cells in the reports (hidden by default)")
    p.add_argument("--plan", action="store_true",
                   help="print what would run and its cost (per notebook: arms, runs, load time, data size) and "
                        "what this machine will not make, then stop: no cluster is started or connected to")
    p.add_argument("--no-cluster", action="store_true",
                   help="start no embedded cluster (the notebooks find or start their own)")
    p.set_defaults(func=_report)
