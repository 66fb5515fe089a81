"""`cassperf parse` and `cassperf import`: tool output found on disk -> frames or stored runs.

PATH arguments may be files, folders (searched recursively; `*.source.txt` sidecars and hidden
files are left out) or glob patterns (`**` allowed). A path that does not exist or a pattern
that matches nothing is an error naming it (exit 2). All files are parsed before anything is
printed or stored: a file that cannot be parsed stops the command and nothing is imported.

`import` refuses a file whose content is already stored (the same `source_sha256`), naming the
run, unless `--allow-duplicate`; all files are checked before any is stored. A file holding what
looks like a password gets a warning naming it: raw/ keeps the file as it came, unless
`--redact-raw` asks for a redacted copy.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from cassperf.errors import ConfigError

if TYPE_CHECKING:                  # the parsers and the catalog (pandas) load when a command runs, not for --help
    import pandas as pd

    from cassperf.parsers.base import ParseResult


def _parse_all(paths: list[str], fmt: str | None) -> list[ParseResult]:
    from cassperf import parsers
    from cassperf.parsers.paths import expand_paths

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
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"--out {out_dir}: cannot make the folder ({exc.strerror or exc}); "
                              f"give a folder you can write to") from None
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
                try:
                    if args.output == "csv":
                        frame.to_csv(dest, index=False)
                    else:
                        frame.to_parquet(dest, index=False)
                except OSError as exc:
                    raise ConfigError(f"cannot write {dest}: {exc.strerror or exc}") from None
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


def _runs_root(text: str | None) -> Path | None:
    """--root as a Path; ConfigError when it names something other than a folder."""
    if text is None:
        return None
    root = Path(text)
    if root.exists() and not root.is_dir():
        raise ConfigError(f"--root {root} is a file, not a folder; give the runs folder (made when missing)")
    return root


def cmd_import(args: argparse.Namespace) -> int:
    from cassperf.results.catalog import RawSecretWarning, check_not_imported, import_parsed

    root = _runs_root(args.root)
    results = _parse_all(args.paths, args.format)
    labels = dict(args.label or [])
    for result in results:
        _report(result)
    if not args.allow_duplicate:
        check_not_imported([r.source for r in results if r.runs or r.tables], root)
    for result in results:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RawSecretWarning)
            try:
                ids = import_parsed(result, labels, root=root, allow_duplicate=args.allow_duplicate,
                                    redact_raw=args.redact_raw)
            except OSError as exc:
                where = f"{exc.filename}: " if exc.filename else ""
                raise ConfigError(f"cannot store runs in {root or 'data/runs'}: {where}{exc.strerror or exc}") from None
        for warning in caught:
            if issubclass(warning.category, RawSecretWarning):
                print(f"cassperf: warning: {warning.message}", file=sys.stderr)
            else:
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
        for run_id in ids:
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
    i.add_argument("--allow-duplicate", action="store_true",
                   help="import a file even when the same content is already stored (it then counts twice)")
    i.add_argument("--redact-raw", action="store_true",
                   help="store raw/ with passwords and other secrets replaced by <redacted> (default: the file "
                        "as it came, with a warning when it holds one)")
    i.set_defaults(func=cmd_import)
