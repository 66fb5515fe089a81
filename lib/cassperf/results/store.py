"""Runs on disk: `data/runs/<run_id>/`, written once, read back exactly.

Layout of a run folder::

    manifest.json        written at open (complete=false) and again at close (ended_utc, complete)
    raw/                 the tools' own output, as it came (never rewritten); raw/profiles/<node>.jfr
                         each node's Flight Recorder file of a profiled run (cassperf.cluster.profiler)
    <frame>.jsonl        intervals, summary, metrics, events, histograms: one JSON object per
                         line, appended, flushed and fsynced as rows arrive (crash-safe)
    warnings.jsonl       {"warning": text} per line
    <frame>.parquet      derived from the jsonl at close (or written directly by `save_run`)
    tables/<nnn>-<name>.parquet  named frames of any shape (Run.tables), in order; name %-quoted

A writer killed mid-run (SIGKILL, power loss) leaves the jsonl files and a manifest saying
complete=false; `load_run` rebuilds the frames from them and warns. A half-written last line is
dropped with a warning naming the file and line.

Versioning: manifest.json carries `schema_version`. Loaders accept the current version and any
version with a migration in `MIGRATIONS` (version n -> n+1, applied in order); anything else is a
SchemaVersionError.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import shutil
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote, unquote

import numpy as np
import pandas as pd

from cassperf.config import runs_dir
from cassperf.errors import CassperfError, ParseError, SchemaVersionError
from cassperf.results.manifest import build_manifest, new_run_id, scrub_secrets, utc_now_iso
from cassperf.results.model import (
    EVENT_COLUMNS,
    HISTOGRAM_COLUMNS,
    INTERVAL_COLUMNS,
    LATENCY_TYPES,
    METRIC_COLUMNS,
    SCHEMA_VERSION,
    SUMMARY_COLUMNS,
    Run,
    conform,
    empty_frame,
)

MANIFEST_FILE = "manifest.json"
RAW_DIR = "raw"
TABLES_DIR = "tables"
WARNINGS_FILE = "warnings.jsonl"

#: The schema'd frames of a Run, by attribute name (= file stem).
FRAMES: dict[str, dict[str, str]] = {
    "intervals": INTERVAL_COLUMNS,
    "summary": SUMMARY_COLUMNS,
    "metrics": METRIC_COLUMNS,
    "events": EVENT_COLUMNS,
    "histograms": HISTOGRAM_COLUMNS,
}

Frames = dict[str, pd.DataFrame]
#: A migration takes a run of version n (manifest, frames) and returns it as version n+1.
Migration = Callable[[dict[str, Any], Frames], tuple[dict[str, Any], Frames]]
MIGRATIONS: dict[int, Migration] = {}   # none yet: version 1 is the first


class StoreError(CassperfError):
    """A run folder that cannot be found, created or read."""


class RunExistsError(StoreError):
    """A writer was asked to write a run folder that already exists (runs are written once)."""


class RunStoreWarning(UserWarning):
    """Something was recovered rather than read as written (a crashed run, a torn last line)."""


def known_schema_versions() -> list[int]:
    return sorted({SCHEMA_VERSION, *MIGRATIONS})


def check_schema_version(manifest: dict[str, Any], where: str) -> int:
    """The manifest's schema version, or SchemaVersionError saying what it has and what we know."""
    version = manifest.get("schema_version")
    known = known_schema_versions()
    if version is None:
        raise SchemaVersionError(f"{where}: the manifest has no schema_version; "
                                 f"this cassperf knows schema versions {known}")
    if isinstance(version, bool) or not isinstance(version, int) or version not in known:
        raise SchemaVersionError(f"{where}: the manifest has schema_version {version!r}; this cassperf "
                                 f"knows schema versions {known} (written by a newer cassperf?)")
    return version


def _migrate(manifest: dict[str, Any], frames: Frames) -> tuple[dict[str, Any], Frames]:
    version = manifest["schema_version"]
    while version < SCHEMA_VERSION:
        manifest, frames = MIGRATIONS[version](manifest, frames)
        version += 1
        manifest["schema_version"] = version
    return manifest, frames


# ---- JSON lines -----------------------------------------------------------------------------

def _jsonable(value: Any) -> Any:
    """A JSON value for one cell: NA/NaN/NaT -> null, timestamps -> ISO 8601 UTC with Z
    (naive ones are taken as UTC), numpy scalars -> Python numbers."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (pd.Timestamp, dt.datetime)):
        ts = pd.Timestamp(value)
        ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
        return ts.isoformat().replace("+00:00", "Z")
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def _rows(rows: pd.DataFrame | dict[str, Any] | Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(rows, pd.DataFrame):
        records = rows.to_dict("records")
    elif isinstance(rows, dict):
        records = [rows]
    else:
        records = list(rows)
    return [{str(k): _jsonable(v) for k, v in r.items()} for r in records]


def read_jsonl(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows of a jsonl stream and warnings. A last line without its newline that is not a
    complete JSON object (a write cut short) is dropped with a warning naming file and line;
    a bad line anywhere else is a ParseError."""
    data = path.read_bytes()
    pieces = data.split(b"\n")
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for line_no, piece in enumerate(pieces, start=1):
        if not piece.strip():
            continue
        is_torn_tail = line_no == len(pieces)       # the file does not end with a newline
        try:
            row = json.loads(piece.decode("utf-8"))
            if not isinstance(row, dict):
                raise ValueError("not an object")
        except (ValueError, UnicodeDecodeError):
            if is_torn_tail:
                notes.append(f"{path}:{line_no}: dropped a partial last line ({len(piece)} bytes; the writer "
                             f"stopped mid-write)")
                continue
            raise ParseError(str(path), line_no, piece.decode("utf-8", "replace"),
                             "one JSON object per line (a run's jsonl stream)") from None
        rows.append(row)
    return rows, notes


def frame_from_rows(rows: list[dict[str, Any]], columns: dict[str, str], source: str = "<rows>") -> pd.DataFrame:
    """The schema'd frame for jsonl rows (datetime columns parsed as UTC); rows whose values do
    not fit the schema's types are a ParseError naming `source`."""
    if not rows:
        return empty_frame(columns)
    try:
        frame = pd.DataFrame(rows)
        for name, dtype in columns.items():
            if name in frame.columns and dtype.startswith("datetime64"):
                frame[name] = pd.to_datetime(frame[name], utc=True, format="ISO8601").astype(dtype)
        return conform(frame, columns)
    except (ValueError, TypeError, OverflowError) as exc:
        raise ParseError(source, None, None, f"rows whose values fit the columns {list(columns)} "
                                             f"({type(exc).__name__}: {exc})") from None


def read_frame_jsonl(path: Path, columns: dict[str, str]) -> tuple[pd.DataFrame, list[str]]:
    """A schema'd frame from a jsonl stream, and the warnings reading it gave."""
    rows, notes = read_jsonl(path)
    return frame_from_rows(rows, columns, str(path)), notes


# ---- files --------------------------------------------------------------------------------

def _fsync_write(path: Path, data: bytes) -> None:
    """Write a whole file atomically: temp file, fsync, rename."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _json_default(value: Any) -> Any:
    out = _jsonable(value)
    if out is value:
        return str(value)
    return out


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    """Scrub secrets and write manifest.json atomically."""
    text = json.dumps(scrub_secrets(manifest), indent=2, default=_json_default, ensure_ascii=False)
    _fsync_write(folder / MANIFEST_FILE, (text + "\n").encode("utf-8"))


def read_manifest(folder: Path) -> dict[str, Any]:
    """manifest.json of a run folder, its schema version checked."""
    path = folder / MANIFEST_FILE
    if not path.is_file():
        raise StoreError(f"{folder}: not a run folder (no {MANIFEST_FILE})")
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as exc:
        lines = text.splitlines()
        line = lines[exc.lineno - 1] if 0 < exc.lineno <= len(lines) else None
        raise ParseError(str(path), exc.lineno, line, f"a JSON manifest ({exc.msg} at column {exc.colno}); "
                                                     "the file is corrupt") from None
    if not isinstance(manifest, dict):
        raise ParseError(str(path), 1, text[:200], "a JSON object as the manifest")
    check_schema_version(manifest, str(path))
    labels, latency = manifest.get("labels", {}), manifest.get("latency_type", "unknown")
    if not isinstance(labels, dict):
        raise ParseError(str(path), None, None, f"labels as an object of strings, not {labels!r}")
    if latency not in LATENCY_TYPES:
        raise ParseError(str(path), None, None, f"latency_type one of {LATENCY_TYPES}, not {latency!r}")
    return manifest


def _write_parquet(frame: pd.DataFrame, path: Path, index: bool | None = False) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        frame.to_parquet(tmp, index=index)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types; name the file
        tmp.unlink(missing_ok=True)
        raise StoreError(f"cannot write {path}: {type(exc).__name__}: {exc}") from exc
    os.replace(tmp, path)


def _read_parquet(path: Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001
        raise StoreError(f"cannot read {path}: {type(exc).__name__}: {exc}") from exc


def _table_file(folder: Path, index: int, name: str) -> Path:
    """tables/<nnn>-<%-quoted name>.parquet: the number keeps the tables' order."""
    if not name:
        raise ValueError("a table needs a non-empty name")
    return folder / TABLES_DIR / f"{index:03d}-{quote(name, safe='')}.parquet"


def _read_tables(folder: Path) -> dict[str, pd.DataFrame]:
    numbered = []
    for path in (folder / TABLES_DIR).glob("*.parquet"):
        index, sep, quoted = path.name[: -len(".parquet")].partition("-")
        if sep and index.isdigit():
            numbered.append((int(index), unquote(quoted), path))
    return {name: _read_parquet(path) for _, name, path in sorted(numbered)}


def _safe_relative(name: str) -> Path:
    rel = Path(name)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise ValueError(f"raw file name must be a relative path inside raw/, got {name!r}")
    return rel


@contextmanager
def phase_events(event: Callable[[str, str], None], name: str, detail: str = "") -> Iterator[None]:
    """``event('<name>:start', detail)`` and ``event('<name>:end', detail)`` around the block (the
    window analysis.phase_window reads back); when the block raises, the end's detail notes the
    failure (``[failed: <type>: <message>]``) and the exception goes on."""
    event(f"{name}:start", detail)
    try:
        yield
    except BaseException as exc:
        event(f"{name}:end", f"{detail} [failed: {type(exc).__name__}: {exc}]".strip())
        raise
    event(f"{name}:end", detail)


def _check_run_id(run_id: str) -> None:
    if not run_id or run_id.startswith(".") or any(c in run_id for c in "/\\\0") or run_id in ("..",):
        raise ValueError(f"run_id must be a plain folder name, got {run_id!r}")


# ---- writing ----------------------------------------------------------------------------

class RunWriter:
    """Writes one run folder as the run happens. Use as a context manager::

        with RunWriter(tool="cassandra-stress", labels={"rf": 3}) as w:
            out = w.raw_stream("stdout.txt")          # raw output, written as it arrives
            w.append_intervals(rows)                  # fsynced at once
            with w.phase("garbagecollect", "nodetool garbagecollect ks t"):
                ...                                   # events 'garbagecollect:start' / ':end'

    Pass a manifest from `build_manifest()` or the same keyword arguments. `root` defaults to
    `cassperf.config.runs_dir()`. On exit by exception the frames written so far are still
    finalised, and the manifest says complete=false with the error text.
    """

    def __init__(self, manifest: dict[str, Any] | None = None, root: str | Path | None = None,
                 **manifest_fields: Any) -> None:
        if manifest is None:
            manifest = build_manifest(**manifest_fields)
        elif manifest_fields:
            raise TypeError("give either a manifest or manifest fields, not both")
        self.manifest: dict[str, Any] = dict(manifest)
        self.manifest.setdefault("schema_version", SCHEMA_VERSION)
        self.manifest["labels"] = {str(k): str(v) for k, v in (self.manifest.get("labels") or {}).items()}
        self.manifest.setdefault("started_utc", utc_now_iso())
        if not self.manifest.get("run_id"):
            self.manifest["run_id"] = new_run_id(str(self.manifest.get("tool") or "run"))
        _check_run_id(self.manifest["run_id"])
        self.root = Path(root) if root is not None else runs_dir()
        self.path = self.root / self.manifest["run_id"]
        self._jsonl: dict[str, IO[bytes]] = {}
        self._streams: list[IO[str]] = []
        self._tables: list[str] = []
        self._warned: set[str] = set()
        self._t0 = 0.0
        self._state = "new"
        self._lock = threading.Lock()      # the sampler's thread and a load's thread append together

    @property
    def run_id(self) -> str:
        return str(self.manifest["run_id"])

    def open(self) -> RunWriter:
        """Create the folder (refusing an existing one) and write the first manifest."""
        if self._state != "new":
            raise StoreError(f"writer for {self.path} was already opened")
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            self.path.mkdir()
        except FileExistsError:
            raise RunExistsError(f"run folder already exists: {self.path} (a run is written once; "
                                 "use a new run_id)") from None
        (self.path / RAW_DIR).mkdir()
        self.manifest["complete"] = False
        self.manifest.setdefault("ended_utc", None)
        write_manifest(self.path, self.manifest)
        self._t0 = time.monotonic()
        self._state = "open"
        return self

    def __enter__(self) -> RunWriter:
        return self.open()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        self.close(error=None if exc_type is None else f"{exc_type.__name__}: {exc}")

    def _need_open(self) -> None:
        if self._state != "open":
            raise StoreError(f"writer for {self.path} is {self._state}, not open")

    # raw output
    def add_raw(self, path_or_name: str | Path, data: bytes | str | None = None) -> Path:
        """Copy a file into raw/ (data=None), or write `data` as raw/<name>. Bytes as they came."""
        self._need_open()
        return _put_raw(self.path / RAW_DIR, path_or_name, data)

    def raw_folder(self, name: str) -> Path:
        """raw/<name>/, created now and empty, for raw output that another process writes
        while the run is open (a node's Flight Recorder file); refuses one that exists."""
        self._need_open()
        dest = self.path / RAW_DIR / _safe_relative(name)
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            dest.mkdir()
        except FileExistsError:
            raise RunExistsError(f"raw folder {dest} already exists (raw output is written once)") from None
        return dest

    def raw_stream(self, name: str) -> IO[str]:
        """A line-buffered text file raw/<name> for output written as it arrives (closed at close)."""
        self._need_open()
        dest = self.path / RAW_DIR / _safe_relative(name)
        dest.parent.mkdir(parents=True, exist_ok=True)
        stream = open(dest, "x", buffering=1, encoding="utf-8", newline="")
        self._streams.append(stream)
        return stream

    # crash-safe frames
    def _append(self, stem: str, rows: pd.DataFrame | dict[str, Any] | Iterable[dict[str, Any]]) -> None:
        self._need_open()
        records = _rows(rows)
        if not records:
            return
        payload = "".join(json.dumps(r, ensure_ascii=False, default=_json_default) + "\n" for r in records)
        with self._lock:
            f = self._jsonl.get(stem)
            if f is None:
                f = self._jsonl[stem] = open(self.path / f"{stem}.jsonl", "ab")
            f.write(payload.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())

    def append_intervals(self, rows: pd.DataFrame | dict[str, Any] | Iterable[dict[str, Any]]) -> None:
        """Interval rows (INTERVAL_COLUMNS), durable on return."""
        self._append("intervals", rows)

    def append_summary(self, rows: pd.DataFrame | dict[str, Any] | Iterable[dict[str, Any]]) -> None:
        self._append("summary", rows)

    def append_metrics(self, rows: pd.DataFrame | dict[str, Any] | Iterable[dict[str, Any]]) -> None:
        self._append("metrics", rows)

    def append_events(self, rows: pd.DataFrame | dict[str, Any] | Iterable[dict[str, Any]]) -> None:
        self._append("events", rows)

    def append_histograms(self, rows: pd.DataFrame | dict[str, Any] | Iterable[dict[str, Any]]) -> None:
        self._append("histograms", rows)

    def set_clock(self, origin_monotonic_s: float) -> None:
        """Count time_s from ``origin_monotonic_s`` (a ``time.monotonic()`` instant, past or
        future) instead of the writer's opening: events get that origin and ``started_utc``
        moves to it, so every frame's time_s (intervals, histograms, events; metrics through
        their UTC time) shares one origin. The engine sets it to the start of measurement."""
        self._need_open()
        now_m, now_utc = time.monotonic(), dt.datetime.now(dt.timezone.utc)
        self._t0 = origin_monotonic_s
        self.manifest["started_utc"] = utc_now_iso(now_utc + dt.timedelta(seconds=origin_monotonic_s - now_m))

    def event(self, name: str, detail: str = "") -> None:
        """Record an event now: UTC time and time_s (seconds since open, monotonic clock)."""
        self._append("events", {"time": pd.Timestamp.now(tz="UTC"), "time_s": time.monotonic() - self._t0,
                                "name": name, "detail": detail})

    def phase(self, name: str, detail: str = "") -> AbstractContextManager[None]:
        """Events '<name>:start' and '<name>:end' around the block (end detail notes a failure;
        ``phase_events``)."""
        return phase_events(self.event, name, detail)

    def warn(self, text: str) -> None:
        """Record a warning; the same text twice is stored once (a parser can report one problem
        both for the run and for the whole output, and the run said it twice)."""
        if text in self._warned:
            return
        self._warned.add(text)
        self._append("warnings", {"warning": text})

    def add_table(self, name: str, frame: pd.DataFrame) -> None:
        """Store a named frame of any shape now (tables/<name>.parquet); refuses to replace one."""
        self._need_open()
        if name in self._tables:
            raise RunExistsError(f"table {name!r} already written in {self.path}")
        dest = _table_file(self.path, len(self._tables), name)
        dest.parent.mkdir(exist_ok=True)
        _write_parquet(frame, dest, index=None)
        self._tables.append(name)

    def close(self, error: str | None = None) -> None:
        """Close streams, derive <frame>.parquet from the jsonl, write the final manifest."""
        if self._state != "open":
            return
        self._state = "closed"
        for handle in [*self._streams, *self._jsonl.values()]:
            try:
                handle.close()
            except OSError:
                pass
        try:
            for stem, columns in FRAMES.items():
                jsonl = self.path / f"{stem}.jsonl"
                frame, notes = read_frame_jsonl(jsonl, columns) if jsonl.exists() else (empty_frame(columns), [])
                for note in notes:
                    warnings.warn(note, RunStoreWarning, stacklevel=2)
                _write_parquet(frame, self.path / f"{stem}.parquet")
        except Exception as exc:
            error = error or f"finalising failed: {type(exc).__name__}: {exc}"
            raise
        finally:
            self.manifest["ended_utc"] = utc_now_iso()
            self.manifest["complete"] = error is None
            if error is not None:
                self.manifest["error"] = error
            write_manifest(self.path, self.manifest)


def _put_raw(raw_dir: Path, path_or_name: str | Path, data: bytes | str | None) -> Path:
    if data is None:
        src = Path(path_or_name)
        dest = raw_dir / src.name
        with open(src, "rb") as fin, open(dest, "xb") as fout:
            shutil.copyfileobj(fin, fout)
        return dest
    dest = raw_dir / _safe_relative(str(path_or_name))
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest, "xb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)
    return dest


def save_run(run: Run, root: str | Path | None = None,
             raw: Iterable[str | Path] | dict[str, bytes | str] = ()) -> str:
    """Write a whole Run at once (importers); returns its run id (generated when the manifest has
    none). `raw` is files to copy into raw/ or {name: content}. The folder appears complete or
    not at all (written under a temporary name, then renamed)."""
    manifest = dict(run.manifest)
    manifest["labels"] = {str(k): str(v) for k, v in (manifest.get("labels") or {}).items()}
    if not manifest.get("run_id"):
        manifest["run_id"] = new_run_id(str(manifest.get("tool") or "run"))
    run_id = str(manifest["run_id"])
    _check_run_id(run_id)
    base = Path(root) if root is not None else runs_dir()
    base.mkdir(parents=True, exist_ok=True)
    final = base / run_id
    if final.exists():
        raise RunExistsError(f"run folder already exists: {final} (a run is written once; use a new run_id)")
    tmp = base / f".{run_id}.partial-{os.getpid()}"
    try:
        tmp.mkdir()
        (tmp / RAW_DIR).mkdir()
        for stem in FRAMES:
            _write_parquet(getattr(run, stem), tmp / f"{stem}.parquet")
        if run.tables:
            (tmp / TABLES_DIR).mkdir()
            for index, (name, table) in enumerate(run.tables.items()):
                _write_parquet(table, _table_file(tmp, index, name), index=None)
        if run.warnings:
            lines = "".join(json.dumps({"warning": w}, ensure_ascii=False) + "\n" for w in run.warnings)
            _fsync_write(tmp / WARNINGS_FILE, lines.encode("utf-8"))
        items = raw.items() if isinstance(raw, dict) else ((p, None) for p in raw)
        for name, content in items:
            _put_raw(tmp / RAW_DIR, name, content)
        write_manifest(tmp, manifest)
        try:
            os.rename(tmp, final)
        except OSError:
            raise RunExistsError(f"run folder already exists: {final}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return run_id


# ---- reading ----------------------------------------------------------------------------

def run_folder(run_id_or_path: str | Path, root: str | Path | None = None) -> Path:
    """The folder of a run given its id (under `root`, default runs_dir()) or its path."""
    base = Path(root) if root is not None else runs_dir()
    candidate = base / str(run_id_or_path)
    if isinstance(run_id_or_path, str) and os.sep not in run_id_or_path and candidate.is_dir():
        return candidate
    path = Path(run_id_or_path)
    if path.is_dir():
        return path
    raise StoreError(f"no run {str(run_id_or_path)!r}: not a folder, and no such run id under {base}")


def load_run(run_id_or_path: str | Path, root: str | Path | None = None) -> Run:
    """Read a run back exactly as it was saved. A run never finalised (its writer crashed or is
    still running) is rebuilt from its jsonl files, with complete=False and a warning."""
    folder = run_folder(run_id_or_path, root)
    manifest = read_manifest(folder)
    notes: list[str] = []
    rebuilt: list[str] = []
    frames: Frames = {}
    for stem, columns in FRAMES.items():
        parquet, jsonl = folder / f"{stem}.parquet", folder / f"{stem}.jsonl"
        if parquet.exists():
            frames[stem] = _read_parquet(parquet)           # Run() conforms it to the schema
        elif jsonl.exists():
            frames[stem], more = read_frame_jsonl(jsonl, columns)
            notes += more
            rebuilt.append(stem)
        else:
            frames[stem] = empty_frame(columns)
    stored: list[str] = []
    if (folder / WARNINGS_FILE).exists():
        rows, more = read_jsonl(folder / WARNINGS_FILE)
        notes += more
        stored = [str(r.get("warning", r)) for r in rows]
    tables = _read_tables(folder)
    manifest, frames = _migrate(manifest, frames)
    if rebuilt:
        manifest["complete"] = False
        notes.insert(0, f"run {manifest.get('run_id')} at {folder} was not finalised (its writer crashed "
                        f"or is still running): rebuilt {', '.join(rebuilt)} from jsonl")
    for note in notes:
        warnings.warn(note, RunStoreWarning, stacklevel=2)
    return Run(manifest, warnings=stored + notes, tables=tables, **frames)


def mark_failed(folder: str | Path, reason: str) -> None:
    """Mark a stored run failed (manifest ``failed: true`` and the one-line ``failure``): a run
    in which the operations failed is evidence, kept on disk, never a result. The catalog
    leaves failed runs out unless asked (``catalog(include_failed=True)``)."""
    path = Path(folder)
    manifest = read_manifest(path)
    manifest["failed"] = True
    manifest["failure"] = " ".join(str(reason).split())
    write_manifest(path, manifest)
