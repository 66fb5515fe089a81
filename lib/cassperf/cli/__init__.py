"""`cassperf ...`: a thin command line over the library's functions.

Each subcommand module defines `register(subparsers)`, adding its parser and setting
`func=<callable(args) -> int>`. Errors derived from CassperfError are printed as one message
(no traceback) with exit code 2; so is an OSError no command turned into one (a file that
cannot be read or written: its path and the reason). When the reader of stdout goes away
(`cassperf parse FILE | head -1`), the command stops quietly, exit 141 (128 + SIGPIPE), as
Unix tools do. Warnings of cassperf's own kinds are printed as one `cassperf: warning: ...` line.
"""

from __future__ import annotations

import argparse
import importlib
import os
import select
import signal
import sys
import warnings
from collections.abc import Callable
from typing import TextIO

from cassperf.errors import CassperfError

_SUBCOMMAND_MODULES = ["cluster", "logs", "run", "report", "clean", "reference"]


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


def _stdout_reader_gone() -> bool:
    """Whether stdout is a pipe whose reading end is closed (poll says POLLERR): a BrokenPipeError
    from that is the reader's choice, one from a socket is a real error."""
    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, 0)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return False


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush at exit does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):
        pass


def _os_error_line(exc: OSError) -> str:
    where = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
    reason = exc.strerror or str(exc)
    return f"{where}: {reason}" if where else reason


def _one_line_warnings(previous: Callable[..., None]) -> Callable[..., None]:
    """A warnings.showwarning printing cassperf's warnings as one line, any other as `previous` does."""
    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: TextIO | None = None, line: str | None = None) -> None:
        if category.__module__.startswith("cassperf."):
            print(f"cassperf: warning: {message}", file=sys.stderr)
        else:
            previous(message, category, filename, lineno, file, line)
    return show


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    previous_show = warnings.showwarning
    warnings.showwarning = _one_line_warnings(previous_show)
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()                     # a closed pipe shows here, not at interpreter exit
        return code
    except CassperfError as exc:
        print(f"cassperf: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError as exc:
        if not _stdout_reader_gone():
            print(f"cassperf: error: {_os_error_line(exc)}", file=sys.stderr)
            return 2
        _quiet_stdout()
        return 128 + signal.SIGPIPE
    except OSError as exc:
        print(f"cassperf: error: {_os_error_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cassperf: interrupted", file=sys.stderr)
        return 130
    finally:
        warnings.showwarning = previous_show


if __name__ == "__main__":
    sys.exit(main())
