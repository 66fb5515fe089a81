"""`cassperf parse` and `cassperf import`: tool output found on disk -> frames or stored runs.

PATH arguments may be files, folders (searched recursively; `*.source.txt` sidecars and hidden
files are left out) or glob patterns (`**` allowed). A path that does not exist or a pattern
that matches nothing is an error naming it (exit 2). All files are parsed before anything is
printed or stored: a file that cannot be parsed stops the command and nothing is imported.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from cassperf import parsers
from cassperf.errors import ConfigError
from cassperf.parsers.base import ParseResult
from cassperf.parsers.paths import expand_paths
from cassperf.results.catalog import import_parsed

def _parse_all(paths: list[str], fmt: str | None) -> list[ParseResult]:
    if fmt is not None:
        try:
            parsers.format_by_name(fmt)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    results = []
    for path in expand_paths(paths):
        try:
            results.append(parsers.parse(path, format=fmt))
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    return results


def _frames(result: ParseResult, compact: bool) -> list[tuple[str, pd.DataFrame]]:
    """(name, frame) pairs for one parse result: per run summary and intervals, then tables.
    compact: leave out columns that are empty in every row (for reading on a terminal)."""
    out: list[tuple[str, pd.DataFrame]] = []
    many = len(result.runs) > 1
    for i, run in enumerate(result.runs, start=1):
        prefix = f"run{i}." if many else ""
        for stem in ("summary", "intervals"):
            frame = getattr(run, stem)
            if not frame.empty:
                out.append((prefix + stem, frame.dropna(axis=1, how="all") if compact else frame))
    out += list(result.tables.items())
    return out


def _report(result: ParseResult) -> None:
    state = "" if result.complete else ", INCOMPLETE"
    print(f"{result.source}: {result.format}, {len(result.runs)} run(s), {len(result.tables)} table(s), "
          f"{result.skipped_lines} skipped line(s), {len(result.warnings)} warning(s){state}", file=sys.stderr)
    for problem in result.warnings:
        print(f"  warning: {problem}", file=sys.stderr)


def cmd_parse(args: argparse.Namespace) -> int:
    results = _parse_all(args.paths, args.format)
    if args.output == "parquet" and args.out is None:
        raise ConfigError("--output parquet needs --out DIR")
    out_dir = Path(args.out) if args.out else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    for result in results:
        _report(result)
        stem = Path(result.source).name
        for name, frame in _frames(result, compact=args.output == "table"):
            if args.output == "table":
                print(f"== {result.source} [{result.format}] {name} ==")
                print(frame.to_string(index=False) if not frame.empty else "(empty)")
                print()
            elif out_dir is not None:
                dest = out_dir / f"{stem}.{name}.{'csv' if args.output == 'csv' else 'parquet'}"
                if args.output == "csv":
                    frame.to_csv(dest, index=False)
                else:
                    frame.to_parquet(dest, index=False)
                print(dest)
            else:
                print(f"# {result.source} [{result.format}] {name}")
                frame.to_csv(sys.stdout, index=False)
                print()
    return 0


def _label(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"a label is key=value, got {text!r}")
    return key.strip(), value


def cmd_import(args: argparse.Namespace) -> int:
    results = _parse_all(args.paths, args.format)
    labels = dict(args.label or [])
    for result in results:
        _report(result)
    for result in results:
        for run_id in import_parsed(result, labels, root=args.root):
            print(run_id)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("parse", help="parse tool output and print its frames",
                              description=cmd_parse.__doc__ or __doc__)
    p.add_argument("paths", nargs="+", metavar="PATH", help="file, folder or glob")
    p.add_argument("--format", help="format name (default: detected from the content)")
    p.add_argument("--output", choices=["table", "csv", "parquet"], default="table",
                   help="table: text tables (default); csv: to stdout, each frame after a '# <file> [format] "
                        "<frame>' line, or one file per frame with --out; parquet: one file per frame in --out")
    p.add_argument("--out", metavar="DIR", help="folder for csv/parquet files (<file>.<frame>.<ext>)")
    p.set_defaults(func=cmd_parse)

    i = subparsers.add_parser("import", help="parse tool output and store it as runs (prints run ids)")
    i.add_argument("paths", nargs="+", metavar="PATH", help="file, folder or glob")
    i.add_argument("--label", action="append", type=_label, metavar="KEY=VALUE",
                   help="label for every imported run (repeatable), e.g. --label rf=3 --label run=a")
    i.add_argument("--format", help="format name (default: detected from the content)")
    i.add_argument("--root", metavar="DIR", help="runs folder (default: data/runs of the workbook)")
    i.set_defaults(func=cmd_import)
