"""One exception root for everything cassperf raises on purpose.

Every error carries what a user needs to act: the file and line, the command and its
output, or the fix. Nothing here shadows a builtin name.
"""

from __future__ import annotations

from dataclasses import dataclass


class CassperfError(Exception):
    """Root of all cassperf errors."""


class ConfigError(CassperfError):
    """Bad user input (a topology, a parameter) or a machine that cannot do what was asked."""


class NotAddressable(ConfigError):
    """The cluster lacks what a study's claims need (e.g. JMX for nodetool garbagecollect): the
    study runs nothing on it and its report says the claims are not addressable there."""


class ToolError(CassperfError):
    """An external command (nodetool, mvn, java, a stress tool) failed."""

    def __init__(self, cmd: list[str] | str, returncode: int | None, stdout: str = "", stderr: str = "",
                 hint: str = "") -> None:
        self.cmd = cmd if isinstance(cmd, str) else " ".join(str(c) for c in cmd)
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.hint = hint
        lines = [ln for ln in (stderr + "\n" + stdout).splitlines() if ln.strip().strip("\x1b[0m")]
        tail = lines[-15:]
        msg = f"command failed (exit {returncode}): {self.cmd}"
        if tail:
            msg += "\n" + "\n".join("  | " + line for line in tail)
        if hint:
            msg += f"\nfix: {hint}"
        super().__init__(msg)


class ClusterError(CassperfError):
    """A cluster could not be started, reached or stopped."""


@dataclass(frozen=True)
class ParseProblem:
    """Where and why a line of input did not fit."""

    path: str
    line_no: int | None
    line: str | None
    expected: str

    def __str__(self) -> str:
        where = self.path if self.line_no is None else f"{self.path}:{self.line_no}"
        text = f"{where}: expected {self.expected}"
        if self.line is not None:
            shown = self.line if len(self.line) <= 200 else self.line[:200] + "..."
            text += f"; got {shown!r}"
        return text


class ParseError(CassperfError):
    """Input that a parser cannot read: names the file, the line and what was expected."""

    def __init__(self, path: str | None, line_no: int | None, line: str | None, expected: str) -> None:
        self.problem = ParseProblem(path or "<text>", line_no, line, expected)
        self.path = self.problem.path
        self.line_no = line_no
        self.line = line
        self.expected = expected
        super().__init__(str(self.problem))


class SchemaVersionError(CassperfError):
    """A stored run has a schema version this cassperf does not know."""
