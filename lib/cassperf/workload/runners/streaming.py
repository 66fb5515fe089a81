"""What the stress-tool runners share: finding an executable, running it with its output
streamed line by line into the run folder and a progress bar, storing what the parser
made of that output in the same run (`store_tool_output`), and raising the tool's failure
after that (`raise_if_failed`).

The tool runs in its own session (process group), so stopping it (timeout, Ctrl-C) stops the
JVM a launcher script started too, and nothing else.

Credentials (a cluster with PasswordAuthenticator). `tool_credentials(cluster)` reads them from
the environment variables the cluster handle names (RemoteCluster: CASSPERF_USERNAME /
CASSPERF_PASSWORD; with no handle, those two), or from an embedded cluster's role file
(LocalCluster.credentials_file), as the engine's `Target.credentials()` does; they are never
parameters. When there are any, the runner (1) passes them to the tool in the tool's
own way, (2) filters every line the tool prints through a `Redactor` before it reaches raw/, the
progress bar or the parser, and (3) runs the tool in a private temporary folder outside the run
(`private_workdir`), so that files the tool writes itself (JSON report, HDR/log/graph files, a
JVM crash log echoing its command line) reach raw/ only through the same filter
(`copy_tool_files`). Argv and commands recorded anywhere go through `Redactor.argv`.

The redaction rule (`Redactor`), chosen so that leaking is ruled out first and corrupting a
figure second:
  1. keyed, any length: the password right after a password key -- `Password: s3cr3t`,
     `password=s3cr3t`, `"password": "s3cr3t"`, `truststore-password=s3cr3t`, `--password s3cr3t`
     (key `password`/`passwd` in any case and inside longer names; `=`, `:` or spaces between,
     optional quotes) -- is replaced by REDACTED (with the digits, points and commas right after it
     when it ends with one, as in rule 2). This is where the tools print it (the settings
     dump of cassandra-stress before 5.0, its graph file's command, latte's JSON report).
  2. free: anywhere else, every occurrence is replaced too, but only for a password of at least
     MIN_FREE_SECRET (4) characters that is not made of number characters alone (digits, spaces
     and . , : ; + - / %). Such a password can never lie inside a figure; digits, points and
     commas touching it are replaced with it, so no figure is left cut in half. Shorter or
     number-like passwords ('1', '2024') are redacted by rule 1 only: replacing them everywhere
     would corrupt every figure that contains them. Rule 2 can still blank out a label or a line
     (a password 'total' hides cassandra-stress's `total,` rows): never a wrong figure, at worst
     a missing one, and the runner records a warning whenever rule 2 fired on the tool's output.
  The JSON-escaped form of a password (what latte's report holds) is redacted as well. A password
  holding a line break is refused (ConfigError): a line filter could not see it whole.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pandas as pd

from cassperf.cluster.tls import TlsOptions
from cassperf.errors import ConfigError, ParseError, ToolError
from cassperf.parsers import parse
from cassperf.parsers.base import ParseResult
from cassperf.results.manifest import REDACTED
from cassperf.results.model import Run
from cassperf.workload.backends.base import Target

#: Seconds a stopped tool gets between SIGTERM and SIGKILL.
TERMINATE_GRACE_S = 10.0

#: Where credentials come from when no cluster handle names its own variables.
USERNAME_ENV = "CASSPERF_USERNAME"
PASSWORD_ENV = "CASSPERF_PASSWORD"

#: Passwords shorter than this are redacted only where a password key precedes them.
MIN_FREE_SECRET = 4

# password | Password | truststore-password | cql.password | "password" | passwd, then = : or spaces:
#   Password: s3cr3t   |   password=s3cr3t   |   "password": "s3cr3t"   |   --password s3cr3t
_KEY_PREFIX = r"(?i:pass(?:word|wd))(?:[\"']?\s*[=:]\s*[\"']?|\s+[\"']?)"
# a password made of number characters only (it could be a figure): 2024 | 3.14 | 1,5
_NUMBERISH_RE = re.compile(r"[0-9.,:;+\-/%\s]*")
_NUMBER_CHARS = frozenset("0123456789.,")
_SIGN_CHARS = frozenset("+-")
_MAX_PASSES = 4


class ToolNotFoundError(ConfigError):
    """A stress tool is not installed where the runner looks for it; the message says where it
    looked and how to get the tool."""


def is_executable_file(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def executable_from_env(env: Mapping[str, str], var: str, hint: str) -> Path | None:
    """The executable the environment variable `var` names (`~` expanded), None when it is unset
    or empty. A name that is no executable file is an error, never a silent fallback:
    ToolNotFoundError "<var>=<value> <why>; <hint>" (why: does not exist, is not a file, is not
    executable)."""
    explicit = env.get(var)
    if not explicit:
        return None
    path = Path(explicit).expanduser()
    if is_executable_file(path):
        return path
    why = "does not exist" if not path.exists() else ("is not a file" if not path.is_file() else
                                                      "is not executable (chmod +x?)")
    raise ToolNotFoundError(f"{var}={explicit} {why}; {hint}")


def which(name: str, path_var: str | None) -> Path | None:
    """`name` in the directories of a PATH string (the first executable file), or None."""
    for directory in (path_var or "").split(os.pathsep):
        if directory:
            candidate = Path(directory) / name
            if is_executable_file(candidate):
                return candidate
    return None


@dataclass(frozen=True)
class ToolCredentials:
    """A user name and password for a stress tool, read from the environment (never stored: the
    password is left out of repr)."""

    username: str
    password: str = field(repr=False)
    username_env: str = USERNAME_ENV
    password_env: str = PASSWORD_ENV
    from_file: str | None = None          # an embedded cluster's role file, instead of the variables

    def origin(self) -> dict[str, Any]:
        """What a run's manifest records of where they came from (never the values)."""
        if self.from_file is not None:
            return {"tool_auth_from_file": self.from_file}
        return {"tool_auth_from_env": [self.username_env, self.password_env]}


def tool_credentials(cluster: Any = None) -> ToolCredentials | None:
    """The credentials a stress tool should log in with, or None.

    Read as the engine reads them (`Target.credentials()`): from the environment variables the
    cluster handle names (`username_env` / `password_env`; RemoteCluster's default to
    CASSPERF_USERNAME / CASSPERF_PASSWORD), or those two defaults when no handle is given; an
    embedded cluster's (LocalCluster) from its role file. ConfigError when the user name is set
    but the password variable is unset or empty, or holds a line break."""
    role_file = getattr(cluster, "credentials_file", None) if cluster is not None else None
    if role_file is not None:
        user, password = Target((), credentials_file=str(role_file)).credentials() or ("", "")
        return ToolCredentials(user, password, from_file=str(role_file))
    if cluster is None:
        user_env, password_env = USERNAME_ENV, PASSWORD_ENV
    else:
        user_env, password_env = getattr(cluster, "username_env", None), getattr(cluster, "password_env", None)
    creds = Target((), username_env=user_env, password_env=password_env).credentials()
    if creds is None:
        return None
    assert user_env is not None
    if not password_env or password_env not in os.environ:
        raise ConfigError(f"{user_env} is set but {password_env or 'no password variable'} is not; export both")
    user, password = creds
    if not password:
        raise ConfigError(f"{user_env} is set but {password_env} is empty; export the password too")
    if "\n" in password or "\r" in password:
        raise ConfigError(f"{password_env} holds a line break; the runners cannot keep such a password out of "
                          f"the tool's output (they filter it line by line)")
    return ToolCredentials(user, password, user_env, password_env)


def tool_tls(cluster: Any = None) -> TlsOptions | None:
    """What a stress tool should trust to talk TLS to `cluster`, as the engine does (Target.tls):
    the handle's TlsOptions (a user's cluster: CASSPERF_SSL_CA and friends; an embedded TLS
    cluster: its own CA), or those variables when no handle is given; None for plaintext."""
    if cluster is None:
        return TlsOptions.from_env()
    return getattr(cluster, "tls", None)


class Redactor:
    """Replaces passwords by REDACTED in the lines a tool prints, in files it writes and in argv;
    the rule is in the module doc. `free_hits` counts replacements made by the free rule (2) in
    `line()` calls, so a runner can say that some output lines were altered."""

    def __init__(self, secrets: Iterable[str]) -> None:
        variants: set[str] = set()
        for secret in secrets:
            if secret:
                variants.add(secret)
                variants.add(json.dumps(secret, ensure_ascii=False)[1:-1])   # as a JSON string holds it
                variants.add(json.dumps(secret)[1:-1])
        ordered = sorted(variants, key=len, reverse=True)
        self.secrets: tuple[str, ...] = tuple(ordered)
        self._keyed = [re.compile(f"(?P<key>{_KEY_PREFIX}){re.escape(v)}{_tail(v)}") for v in ordered]
        self._free = [re.compile(_free_pattern(v)) for v in ordered if _free_rule_applies(v)]
        # (a password inside the marker itself, 'redacted', is the marker, not a leak)
        self._refoldable = [v for v in ordered if _free_rule_applies(v) and v not in REDACTED]
        self.free_hits = 0

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def text(self, text: str, *, free: bool = True) -> tuple[str, int]:
        """`text` redacted, and how many replacements the free rule made (rule 1 always applies;
        rule 2 only when `free`)."""
        for pattern in self._keyed:
            text = pattern.sub(lambda m: m["key"] + REDACTED, text)
        hits = 0
        if free and self._free:
            pieces = text.split(REDACTED)      # never look inside a marker already written
            for i, piece in enumerate(pieces):
                for pattern in self._free:
                    piece, n = pattern.subn(REDACTED, piece)
                    hits += n
                pieces[i] = piece
            text = REDACTED.join(pieces)
            # a password sharing characters with the marker could re-form across one ('s<re')
            for _ in range(_MAX_PASSES):
                if not any(v in text for v in self._refoldable):
                    break
                for pattern in self._free:
                    text, n = pattern.subn(REDACTED, text)
                    hits += n
        return text, hits

    def line(self, text: str, *, free: bool = True) -> str:
        """One line of tool output, redacted (counted in free_hits)."""
        out, hits = self.text(text, free=free)
        self.free_hits += hits
        return out

    def argv(self, argv: Sequence[str | Path]) -> list[str]:
        """argv with every secret redacted (`password=<redacted>`), not counted in free_hits."""
        return [self.text(str(a))[0] for a in argv]


def _free_rule_applies(secret: str) -> bool:
    return len(secret) >= MIN_FREE_SECRET and not _NUMBERISH_RE.fullmatch(secret)


def _tail(secret: str) -> str:
    return "[0-9.,]*" if secret[-1] in _NUMBER_CHARS or secret[-1] in _SIGN_CHARS else ""


def _free_pattern(secret: str) -> str:
    """The secret, with the digits, points and commas touching it when it begins or ends with a
    number character (so no figure is left cut in half: 'ab12' in 'x ab123' takes 'ab123')."""
    head = "[0-9.,]*" if secret[0] in _NUMBER_CHARS else ""
    return head + re.escape(secret) + _tail(secret)


@contextlib.contextmanager
def private_workdir(enabled: bool = True) -> Iterator[Path | None]:
    """A fresh folder only this user can read (mode 0700, outside the run folder), removed on
    exit whatever happens; None when not `enabled`. Its `cwd/` subfolder is the tool's working
    directory; credential files go beside it."""
    if not enabled:
        yield None
        return
    top = Path(tempfile.mkdtemp(prefix="cassperf-tool-"))
    try:
        os.chmod(top, 0o700)
        (top / "cwd").mkdir(mode=0o700)
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


def write_private(path: Path, text: str) -> Path:
    """Create `path` readable by this user only (0600), refusing an existing file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    return path


def copy_tool_files(src: Path, writer: Any, redactor: Redactor, *, keyed_only: Collection[str] = (),
                    skip: Collection[str] = ()) -> list[str]:
    """Copy every file under `src` (the tool's private working directory) into the run's raw/
    at the same relative path, each line through `redactor` (bytes that are not UTF-8 pass
    unchanged). Files named in `keyed_only` (relative paths: HDR logs, whose base64 payload a
    free-rule match could corrupt) get rule 1 only; names in `skip` and names already in raw/
    are left out. Returns the relative paths copied."""
    copied = []
    for path in sorted(p for p in src.rglob("*") if p.is_file()):
        rel = path.relative_to(src).as_posix()
        if rel in skip or (writer.path / "raw" / rel).exists():
            continue
        text = path.read_bytes().decode("utf-8", errors="surrogateescape")
        free = rel not in keyed_only
        clean = "\n".join(redactor.line(line, free=free) for line in text.split("\n"))
        writer.add_raw(rel, clean.encode("utf-8", errors="surrogateescape"))
        copied.append(rel)
    return copied


def free_rule_warning(tool: str, redactor: Redactor | None) -> str | None:
    """The run warning to record when the free rule altered some of the tool's output."""
    if not redactor or redactor.free_hits == 0:
        return None
    return (f"{tool}: the password occurred {redactor.free_hits} time(s) in the tool's output outside a password "
            f"setting; each was replaced by {REDACTED} (a figure or label on such a line may be unreadable)")


@dataclass
class Anchor:
    """Where the tool's clock starts in UTC: the arrival time of its first progress row minus
    the tool time that row carries (seconds since the tool's own start of measurement)."""

    utc: pd.Timestamp | None = None

    def see(self, arrived: pd.Timestamp, tool_time_s: float) -> None:
        if self.utc is None:
            self.utc = arrived - pd.Timedelta(seconds=tool_time_s)


@dataclass
class Progress:
    """A tqdm bar fed by the tool's progress rows. `parse_row(line)` returns (done, tool time
    in s) for a progress row, else None; `done` is in the bar's unit (ops or seconds)."""

    parse_row: Callable[[str], tuple[float, float] | None]
    total: float | None
    unit: str
    desc: str
    enabled: bool = True
    anchor: Anchor = field(default_factory=Anchor)
    rows: int = 0
    _bar: Any = None

    def __post_init__(self) -> None:
        if self.enabled:
            from tqdm.auto import tqdm
            self._bar = tqdm(total=self.total, unit=self.unit, desc=self.desc, dynamic_ncols=True)

    def line(self, text: str) -> None:
        try:
            got = self.parse_row(text)
        except (ValueError, IndexError):
            got = None
        if got is None:
            return
        done, tool_time_s = got
        self.rows += 1
        self.anchor.see(pd.Timestamp.now(tz="UTC"), tool_time_s)
        if self._bar is not None:
            target = min(done, self.total) if self.total else done
            self._bar.update(max(0.0, target - self._bar.n))

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


@dataclass(frozen=True)
class ProcessOutcome:
    argv: list[str]
    returncode: int
    lines: int
    started_utc: pd.Timestamp
    duration_s: float
    timed_out: bool


def _stop_group(proc: subprocess.Popen[str]) -> None:
    """SIGTERM the tool's process group, SIGKILL it after TERMINATE_GRACE_S."""
    for sig, wait_s in ((signal.SIGTERM, TERMINATE_GRACE_S), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def stream_process(argv: Sequence[str], out: IO[str], on_line: Callable[[str], None] | None = None, *,
                   env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
                   timeout_s: float | None = None, redactor: Redactor | None = None,
                   on_start: Callable[[int], None] | None = None) -> ProcessOutcome:
    """Run argv with stdout and stderr merged, writing every line to `out` as it arrives and
    passing it to `on_line`. A timeout or Ctrl-C stops the tool's process group (Ctrl-C is
    re-raised after the tool has stopped). With a `redactor`, each line is redacted before it is
    written or passed on, and the outcome's argv is the redacted one. `on_start`: called with the
    tool's pid once it runs (the sampler's client CPU)."""
    started_utc = pd.Timestamp.now(tz="UTC")
    t0 = time.monotonic()
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            text=True, encoding="utf-8", errors="replace", bufsize=1,
                            env=dict(env) if env is not None else None, cwd=cwd, start_new_session=True)
    if on_start is not None:
        on_start(proc.pid)
    timed_out = threading.Event()
    timer = None
    if timeout_s is not None:
        def expire() -> None:
            timed_out.set()
            _stop_group(proc)
        timer = threading.Timer(timeout_s, expire)
        timer.daemon = True
        timer.start()
    lines = 0
    try:
        assert proc.stdout is not None
        for text in proc.stdout:
            if redactor:
                body = text.rstrip("\r\n")
                text = redactor.line(body) + text[len(body):]
            out.write(text)
            lines += 1
            if on_line is not None:
                on_line(text.rstrip("\r\n"))
        returncode = proc.wait()
    except BaseException:
        _stop_group(proc)
        raise
    finally:
        if timer is not None:
            timer.cancel()
        out.flush()
    shown = redactor.argv(argv) if redactor else list(argv)
    return ProcessOutcome(shown, returncode, lines, started_utc, time.monotonic() - t0, timed_out.is_set())


def shift_histograms(histograms: pd.DataFrame, offset_s: float | None) -> pd.DataFrame:
    """HDR interval rows moved from the tool's clock to the run's (start_s, end_s + offset_s)."""
    if not offset_s:
        return histograms
    return histograms.assign(start_s=histograms["start_s"] + offset_s, end_s=histograms["end_s"] + offset_s)


def store_result(writer: Any, result: ParseResult, anchor: Anchor, *, table_prefix: str) -> list[Run]:
    """Append the parsed runs' frames to the writer. Interval times are moved from the tool's
    clock to the run's (seconds since the writer's started_utc) using `anchor`; the shift is
    recorded in the manifest (tool_started_utc, tool_time_offset_s). Several runs in one output
    get an `iteration` column. Parser warnings become run warnings."""
    runs = result.runs
    offset = None
    if anchor.utc is not None:
        offset = (anchor.utc - pd.Timestamp(writer.manifest["started_utc"])).total_seconds()
        writer.manifest["tool_started_utc"] = anchor.utc.isoformat().replace("+00:00", "Z")
        writer.manifest["tool_time_offset_s"] = offset
    elif runs:
        writer.warn(f"{result.format}: no progress row was seen while the tool ran; interval times stay on "
                    f"the tool's clock (seconds since it began measuring)")
    for index, run in enumerate(runs):
        intervals = run.intervals.copy()
        if offset is not None:
            intervals["time_s"] = intervals["time_s"] + offset
        summary = run.summary.copy()
        if len(runs) > 1:
            intervals["iteration"] = index
            summary["iteration"] = index
        writer.append_intervals(intervals)
        writer.append_summary(summary)
        if not run.histograms.empty:
            writer.append_histograms(shift_histograms(run.histograms, offset))
        for note in run.warnings:
            writer.warn(f"{result.format}: {note}")
    for name, frame in result.tables.items():
        writer.add_table(f"{table_prefix}{name}", frame)
    for problem in result.warnings:
        writer.warn(f"{result.format}: {problem}")
    if not result.complete:
        writer.warn(f"{result.format}: the tool's output was cut short; its figures cover what was printed")
    if runs:
        first = runs[0].manifest
        for key in ("tool_version", "latency_type", "histogram_unit", "count_is_total"):
            if first.get(key) not in (None, ""):
                writer.manifest[key] = first[key]
        if len(runs) > 1:
            writer.warn(f"{result.format}: the output holds {len(runs)} runs; their rows carry `iteration`")
    return runs


def tail_text(path: Path, lines: int = 40) -> str:
    """The last `lines` lines of a text file ('' when it cannot be read)."""
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def store_tool_output(writer: Any, raw_path: Path, outcome: ProcessOutcome, anchor: Anchor, *, tool: str,
                      table_prefix: str, redactor: Redactor | None) -> ParseResult | None:
    """What every runner does once its tool has stopped: record the free-rule warning, parse what
    the tool printed (`raw_path`, with the parser of the same name as `tool`) and store it in the
    run (`store_result`). Output that does not parse raises ParseError after a clean exit; after a
    failed one it is a run warning and None (`raise_if_failed` then reports the failure)."""
    warning = free_rule_warning(tool, redactor)
    if warning:
        writer.warn(warning)
    try:
        parsed = parse(raw_path, format=tool)
    except ParseError as exc:
        if outcome.returncode == 0:
            raise
        writer.warn(f"{tool} printed nothing parseable: {exc}")
        return None
    store_result(writer, parsed, anchor, table_prefix=table_prefix)
    return parsed


def raise_if_failed(shown_argv: Sequence[str], outcome: ProcessOutcome, raw_path: Path,
                    timeout_s: float | None) -> None:
    """ToolError (argv as shown, the last lines of the tool's output) when the tool exited non-zero
    or was stopped after `timeout_s` seconds; nothing when it succeeded."""
    if outcome.returncode != 0 or outcome.timed_out:
        hint = f"stopped after timeout_s={timeout_s}" if outcome.timed_out else f"output in {raw_path}"
        raise ToolError(list(shown_argv), outcome.returncode, tail_text(raw_path), "", hint=hint)
