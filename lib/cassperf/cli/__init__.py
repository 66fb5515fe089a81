"""`cassperf ...`: a thin command line over the library's functions.

Each subcommand module defines `register(subparsers)`, adding its parser and setting
`func=<callable(args) -> int>`. Errors derived from CassperfError are printed as one message
(no traceback) with exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from cassperf.errors import CassperfError

_SUBCOMMAND_MODULES = ["cluster", "logs", "run", "report"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cassperf", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in _SUBCOMMAND_MODULES:
        try:
            mod = importlib.import_module(f"cassperf.cli.{name}")
        except ModuleNotFoundError as exc:  # a subcommand module not written yet
            if exc.name == f"cassperf.cli.{name}":
                continue
            raise
        mod.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CassperfError as exc:
        print(f"cassperf: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cassperf: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
