"""What is in the store, and how parsed logs get into it.

`catalog()` lists the runs under a root as one row per run (labels as columns, headline
figures from the summary), filtered by labels. `import_parsed()` saves what a parser returned
as runs, with labels and the raw source file.
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
BASE_COLUMNS = ["run_id", "tool", "started_utc", "ended_utc", "complete"]
#: Summary rows whose op names the aggregate of all ops (used for the headline when present).
TOTAL_OPS = ("total", "all")


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


def catalog(root: str | Path | None = None, **label_filters: Any) -> pd.DataFrame:
    """One row per run under `root` (default runs_dir()), sorted by run id (= start time):
    run_id, tool, started_utc, ended_utc (UTC datetimes), complete, one column per label,
    total_ops, rate_ops_s, p99_ms_<op>, path. `catalog(rf="3", run=["a", "b"])` keeps runs
    whose labels match (values compared as strings; a list means any of). Folders that cannot be
    read are skipped with a RunStoreWarning; their paths and reasons are in `.attrs["skipped"]`."""
    base = Path(root) if root is not None else runs_dir()
    rows: list[dict[str, Any]] = []
    label_keys: list[str] = []
    skipped: list[tuple[str, str]] = []
    folders = sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")) \
        if base.is_dir() else []
    for folder in folders:
        try:
            manifest = read_manifest(folder)
            labels = {str(k): str(v) for k, v in (manifest.get("labels") or {}).items()}
            if not _matches(labels, label_filters):
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
                     "complete": bool(manifest.get("complete", False)),
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
    frame["total_ops"] = frame["total_ops"].astype("Int64")
    frame["rate_ops_s"] = frame["rate_ops_s"].astype("float64")
    for col in figure_cols:
        frame[col] = frame[col].astype("float64")
    frame.attrs["skipped"] = skipped
    return frame


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def import_parsed(parse_result: ParseResult, labels: dict[str, Any] | None = None,
                  root: str | Path | None = None) -> list[str]:
    """Save every Run of `parse_result` (plus one run holding its tables, tool=<format>, when it
    has tables) with `labels` added (they win over the parser's), the source file copied into
    raw/ and the parse warnings kept. Returns the new run ids in order (they sort in that
    order: one timestamp, then -01, -02, ... when there are several)."""
    extra = {str(k): str(v) for k, v in (labels or {}).items()}
    source = Path(parse_result.source)
    has_file = source.is_file()
    runs: Sequence[Run] = list(parse_result.runs)
    if parse_result.tables:
        runs = [*runs, Run({"tool": parse_result.format, "source": parse_result.source},
                           tables=dict(parse_result.tables))]
    if not runs:
        return []
    base_id = new_run_id(parse_result.format)
    common = {"format": parse_result.format, "imported_utc": utc_now_iso(),
              "skipped_lines": parse_result.skipped_lines,
              "source_sha256": _sha256(source) if has_file else None}
    notes = [str(p) for p in parse_result.warnings]
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
        ids.append(save_run(stored, root, raw=[source] if has_file else ()))
    return ids
