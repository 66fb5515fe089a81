"""What is in the store, and how parsed logs get into it.

`catalog()` lists the runs under a root as one row per run (labels as columns, headline
figures from the summary), filtered by labels; runs marked failed (`"failed": true` in the
manifest) are left out unless asked for. `import_parsed()` saves what a parser returned as
runs, with labels and the raw source file; the same file content (`source_sha256`) is imported
once unless a duplicate is asked for, and a raw file holding a secret gets a warning naming it
(or is stored redacted when asked).
"""

from __future__ import annotations

import copy
import hashlib
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from cassperf.config import runs_dir
from cassperf.errors import CassperfError
from cassperf.results.manifest import new_run_id, utc_now_iso
from cassperf.results.model import SUMMARY_COLUMNS, Run, conform
from cassperf.results.raw_secrets import redacted_bytes, scan_file, secret_warning
from cassperf.results.store import (
    MANIFEST_FILE,
    RunStoreWarning,
    read_frame_jsonl,
    read_manifest,
    save_run,
)

if TYPE_CHECKING:  # cassperf.parsers imports cassperf.results: no import cycle at run time
    from cassperf.parsers.base import ParseResult

#: Fixed leading columns of the catalog; labels follow (renamed label_<key> on a clash), then
#: headline figures, then `path`.
BASE_COLUMNS = ["run_id", "tool", "started_utc", "ended_utc", "complete", "failed"]
#: Summary rows whose op names the aggregate of all ops (used for the headline when present).
TOTAL_OPS = ("total", "all")


class DuplicateImportError(CassperfError):
    """A file whose content (sha256) is already stored, or given twice in one import."""

    def __init__(self, message: str, source: str, sha256: str, run_ids: Sequence[str]) -> None:
        self.source = source
        self.sha256 = sha256
        self.run_ids = list(run_ids)
        super().__init__(message)


class RawSecretWarning(UserWarning):
    """An imported file holds what looks like a secret, and its raw/ copy keeps it."""


def _summary(folder: Path) -> pd.DataFrame:
    parquet, jsonl = folder / "summary.parquet", folder / "summary.jsonl"
    if parquet.exists():
        return conform(pd.read_parquet(parquet), SUMMARY_COLUMNS)
    if jsonl.exists():
        return read_frame_jsonl(jsonl, SUMMARY_COLUMNS)[0]
    return conform(None, SUMMARY_COLUMNS)


def headline(summary: pd.DataFrame) -> dict[str, Any]:
    """total_ops and rate_ops_s (the 'total'/'all' row when the tool printed one, else the sum
    over op rows), and p99_ms_<op> for each op row with a p99 (percentiles are not merged)."""
    out: dict[str, Any] = {"total_ops": pd.NA, "rate_ops_s": float("nan")}
    if summary.empty:
        return out
    ops = summary["op"].astype("string").str.lower()
    total = summary[ops.isin(TOTAL_OPS)]
    if len(total) == 1:
        out["total_ops"] = total["count"].iloc[0]
        out["rate_ops_s"] = float(total["rate_ops_s"].iloc[0])
    else:
        if summary["count"].notna().any():
            out["total_ops"] = summary["count"].sum()
        if summary["rate_ops_s"].notna().any():
            out["rate_ops_s"] = float(summary["rate_ops_s"].sum())
    for op, p99 in zip(summary["op"], summary["latency_p99_ms"], strict=True):
        if pd.notna(p99) and pd.notna(op):
            out[f"p99_ms_{op}"] = float(p99)
    return out


def _utc(value: Any) -> pd.Timestamp:
    """A manifest time as a UTC timestamp (NaT when absent); ValueError when unreadable."""
    if value is None:
        return pd.NaT
    if not isinstance(value, str):
        raise ValueError(f"not an ISO 8601 time: {value!r}")
    ts = pd.Timestamp(value)
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def _matches(labels: dict[str, str], filters: dict[str, Any]) -> bool:
    for key, wanted in filters.items():
        values = wanted if isinstance(wanted, (list, tuple, set, frozenset)) else [wanted]
        if key not in labels or labels[key] not in {str(v) for v in values}:
            return False
    return True


def catalog(root: str | Path | None = None, *, include_failed: bool = False, **label_filters: Any) -> pd.DataFrame:
    """One row per run under `root` (default runs_dir()), sorted by run id (= start time):
    run_id, tool, started_utc, ended_utc (UTC datetimes), complete, failed, one column per label,
    total_ops, rate_ops_s, p99_ms_<op>, path. `catalog(rf="3", run=["a", "b"])` keeps runs
    whose labels match (values compared as strings; a list means any of). Runs whose manifest
    says `"failed": true` (a run that started and then failed: its figures are no measurement)
    are left out unless `include_failed=True`; their ids are in `.attrs["failed_left_out"]`.
    Folders that cannot be read are skipped with a RunStoreWarning; their paths and reasons are
    in `.attrs["skipped"]`."""
    base = Path(root) if root is not None else runs_dir()
    rows: list[dict[str, Any]] = []
    label_keys: list[str] = []
    skipped: list[tuple[str, str]] = []
    failed_left_out: list[str] = []
    folders = sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")) \
        if base.is_dir() else []
    for folder in folders:
        try:
            manifest = read_manifest(folder)
            labels = {str(k): str(v) for k, v in (manifest.get("labels") or {}).items()}
            if not _matches(labels, label_filters):
                continue
            failed = manifest.get("failed", False) is True
            if failed and not include_failed:
                failed_left_out.append(str(manifest.get("run_id", folder.name)))
                continue
            figures = headline(_summary(folder))
            started, ended = _utc(manifest.get("started_utc")), _utc(manifest.get("ended_utc"))
        except (CassperfError, OSError, ValueError) as exc:
            reason = str(exc) if (folder / MANIFEST_FILE).exists() else f"no {MANIFEST_FILE}"
            skipped.append((str(folder), reason))
            warnings.warn(f"catalog: skipped {folder}: {reason}", RunStoreWarning, stacklevel=2)
            continue
        for key in labels:
            if key not in label_keys:
                label_keys.append(key)
        rows.append({"run_id": manifest.get("run_id", folder.name), "tool": manifest.get("tool"),
                     "started_utc": started, "ended_utc": ended,
                     "complete": bool(manifest.get("complete", False)), "failed": failed,
                     **{("label", k): v for k, v in labels.items()}, **figures, "path": str(folder)})
    reserved = set(BASE_COLUMNS) | {"path", "total_ops", "rate_ops_s"}
    rename = {("label", k): (f"label_{k}" if k in reserved or k.startswith("p99_ms_") else k) for k in label_keys}
    frame = pd.DataFrame([{rename.get(k, k): v for k, v in r.items()} for r in rows])
    figure_cols = sorted({k for r in rows for k in r if isinstance(k, str) and k.startswith("p99_ms_")})
    columns = [*BASE_COLUMNS, *rename.values(), "total_ops", "rate_ops_s", *figure_cols, "path"]
    frame = frame.reindex(columns=columns)
    for col in ("started_utc", "ended_utc"):
        frame[col] = pd.to_datetime(frame[col], utc=True).astype("datetime64[ns, UTC]")
    for col in ("run_id", "tool", "path", *rename.values()):
        frame[col] = frame[col].astype("string")
    frame["complete"] = frame["complete"].astype("bool")
    frame["failed"] = frame["failed"].astype("bool")
    frame["total_ops"] = frame["total_ops"].astype("Int64")
    frame["rate_ops_s"] = frame["rate_ops_s"].astype("float64")
    for col in figure_cols:
        frame[col] = frame[col].astype("float64")
    frame.attrs["skipped"] = skipped
    frame.attrs["failed_left_out"] = failed_left_out
    return frame


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def imported_sources(root: str | Path | None = None) -> dict[str, list[str]]:
    """source_sha256 -> ids of the runs under `root` (default runs_dir()) made from a file with
    that content, in run id order. Folders whose manifest cannot be read are left out."""
    base = Path(root) if root is not None else runs_dir()
    found: dict[str, list[str]] = {}
    if not base.is_dir():
        return found
    for folder in sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")):
        try:
            manifest = read_manifest(folder)
        except (CassperfError, OSError, ValueError):
            continue
        sha = manifest.get("source_sha256")
        if isinstance(sha, str) and sha:
            found.setdefault(sha, []).append(str(manifest.get("run_id", folder.name)))
    return found


def _runs_named(run_ids: Sequence[str]) -> str:
    more = len(run_ids) - 1
    return f"run {run_ids[0]}" + (f" (and {more} more run(s) from the same file)" if more else "")


def check_not_imported(sources: Sequence[str | Path], root: str | Path | None = None) -> None:
    """DuplicateImportError for the first of `sources` (files) whose content is already stored
    under `root`, or repeats an earlier one of `sources`: the same bytes imported twice count
    twice in every aggregate over labels."""
    stored = imported_sources(root)
    seen: dict[str, str] = {}
    for source in sources:
        path = Path(source)
        if not path.is_file():
            continue
        sha = _sha256(path)
        if sha in stored:
            raise DuplicateImportError(
                f"{path} was imported before as {_runs_named(stored[sha])} (same content, sha256 {sha[:12]}...); "
                f"import it again only with --allow-duplicate (allow_duplicate=True)", str(path), sha, stored[sha])
        if sha in seen:
            raise DuplicateImportError(
                f"{path} has the same content as {seen[sha]} (sha256 {sha[:12]}...), given in the same import; "
                f"import one of them, or both with --allow-duplicate (allow_duplicate=True)", str(path), sha, [])
        seen[sha] = str(path)


def import_parsed(parse_result: ParseResult, labels: dict[str, Any] | None = None,
                  root: str | Path | None = None, *, allow_duplicate: bool = False,
                  redact_raw: bool = False) -> list[str]:
    """Save every Run of `parse_result` (plus one run holding its tables, tool=<format>, when it
    has tables) with `labels` added (they win over the parser's), the source file copied into
    raw/ and the parse warnings kept. Returns the new run ids in order (they sort in that
    order: one timestamp, then -01, -02, ... when there are several).

    A source file whose content is already stored under `root` is refused
    (DuplicateImportError naming the run) unless `allow_duplicate`. raw/ holds the file as it
    came; when it holds what looks like a secret (`raw_secrets`), a RawSecretWarning names the
    file and its lines, and the runs keep that warning. `redact_raw=True` stores a copy with
    those values replaced instead (manifest `raw_redacted`: how many)."""
    extra = {str(k): str(v) for k, v in (labels or {}).items()}
    source = Path(parse_result.source)
    has_file = source.is_file()
    runs: Sequence[Run] = list(parse_result.runs)
    if parse_result.tables:
        runs = [*runs, Run({"tool": parse_result.format, "source": parse_result.source},
                           tables=dict(parse_result.tables))]
    if not runs:
        return []
    if has_file and not allow_duplicate:
        check_not_imported([source], root)
    raw: list[Path] | dict[str, bytes] = [source] if has_file else []
    notes = [str(p) for p in parse_result.warnings]
    redacted: int | None = None
    if has_file and redact_raw:
        content, redacted = redacted_bytes(source)
        raw = {source.name: content}
    elif has_file:
        secret_lines = scan_file(source)
        if secret_lines:
            note = secret_warning(source, secret_lines)
            warnings.warn(note, RawSecretWarning, stacklevel=2)
            notes.append(note)
    base_id = new_run_id(parse_result.format)
    common = {"format": parse_result.format, "imported_utc": utc_now_iso(),
              "skipped_lines": parse_result.skipped_lines,
              "source_sha256": _sha256(source) if has_file else None}
    if redacted is not None:
        common["raw_redacted"] = redacted
    ids: list[str] = []
    for index, run in enumerate(runs, start=1):
        manifest = {**run.manifest, **common}
        manifest["run_id"] = base_id if len(runs) == 1 else f"{base_id}-{index:02d}"
        manifest["labels"] = {**{str(k): str(v) for k, v in run.labels.items()}, **extra}
        manifest.setdefault("source", parse_result.source)
        manifest["source_part"] = f"{index}/{len(runs)}"
        manifest["complete"] = bool(run.complete and parse_result.complete)
        stored = copy.copy(run)                        # frames shared, not changed; no re-conforming
        stored.manifest = manifest
        stored.warnings = [*run.warnings, *(n for n in notes if n not in run.warnings)]
        ids.append(save_run(stored, root, raw=raw))
    return ids
