"""A run's manifest: who ran what, where, when — and never a secret.

`build_manifest()` assembles the dict every stored run carries (schema version, run id,
parameters, tool and version, command, labels, cluster, machine, UTC start, the workbook's git
commit). `scrub_secrets()` redacts anything that looks like a credential; the store calls it on
every manifest it writes, so secrets never reach disk.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import secrets as _random
import socket
import subprocess
from pathlib import Path
from typing import Any

from cassperf.config import project_root
from cassperf.results.model import LATENCY_TYPES, SCHEMA_VERSION

REDACTED = "<redacted>"

#: Keys whose values are secrets (matched anywhere in the key, case-insensitive).
_SECRET_KEY = re.compile(r"password|passwd|secret|token|credential|api_?key", re.IGNORECASE)
#: Cassandra settings that match _SECRET_KEY but hold no secret (numbers, names of keyspaces).
_NOT_SECRET_KEY = re.compile(
    r"^(num_tokens|initial_token|allocate_tokens_for_\w+|credentials_(validity|update_interval)\w*"
    r"|credentials_cache_\w+)$", re.IGNORECASE)
# password=hunter2 | -Dapi_key=abc | "secret: s3cr3t" | --password hunter2 inside a string
_SECRET_IN_TEXT = re.compile(
    r"(?<![\w.-])(?=[\w.-]*?(?:password|passwd|secret|token|credential|api_?key))(?P<key>[\w.-]*+)"
    r"(?P<sep>\s*[=:]\s*|\s+)(?P<value>\"[^\"]*\"|'[^']*'|[^\s,;&\"']+)", re.IGNORECASE)
# https://user:hunter2@host/
_SECRET_IN_URL = re.compile(r"(?P<head>\w+://[^/\s:@]+:)(?P<value>[^@\s/]+)(?P<tail>@)")
# a command given as a list: ["cqlsh", "--password", "hunter2"]
_SECRET_FLAG = re.compile(r"^-{1,2}[\w.-]*(password|passwd|secret|token|credential|api_?key)[\w.-]*$",
                          re.IGNORECASE)

_SLUG_BAD = re.compile(r"[^a-z0-9]+")


def utc_now_iso(now: dt.datetime | None = None) -> str:
    """ISO 8601 UTC with a Z, microseconds: '2026-05-09T07:35:25.123456Z'."""
    now = now or dt.datetime.now(dt.timezone.utc)
    return now.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_run_id(slug: str = "run", now: dt.datetime | None = None) -> str:
    """A sortable, filesystem-safe id: '20260509T073525.123456Z-cassandra-stress-3f9a1c'.

    UTC timestamp first (so lexical order is time order), then a slug (lowercase letters,
    digits and dashes, at most 32 characters) and 6 random hex digits against collisions."""
    now = now or dt.datetime.now(dt.timezone.utc)
    stamp = now.astimezone(dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    clean = _SLUG_BAD.sub("-", slug.lower()).strip("-")[:32].strip("-") or "run"
    return f"{stamp}-{clean}-{_random.token_hex(3)}"


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _ram_bytes() -> int | None:
    try:
        import psutil
        return int(psutil.virtual_memory().total)
    except Exception:  # noqa: BLE001 - machine info is best effort
        try:
            return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
        except (ValueError, OSError, AttributeError):
            return None


def machine_info() -> dict[str, Any]:
    """What the numbers were measured on: os, kernel, cpu_model, cpu_cores (logical),
    ram_bytes, hostname, python. Every field is best effort (None when unknown)."""
    return {
        "os": platform.system() or None,
        "os_release": platform.platform(terse=True) or None,
        "kernel": platform.release() or None,
        "arch": platform.machine() or None,
        "cpu_model": _cpu_model(),
        "cpu_cores": os.cpu_count(),
        "ram_bytes": _ram_bytes(),
        "hostname": socket.gethostname() or None,
        "python": platform.python_version(),
    }


def git_commit(path: Path | None = None) -> str | None:
    """The commit of the workbook checkout (with '-dirty' when it has uncommitted changes to
    tracked files), or None outside git or without a git binary. Never raises."""
    where = str(path or project_root())
    try:
        head = subprocess.run(["git", "-C", where, "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=5)
        if head.returncode != 0:
            return None
        commit = head.stdout.strip()
        dirty = subprocess.run(["git", "-C", where, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5)
        return commit + ("-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def build_manifest(run_id: str | None = None, tool: str = "unknown", tool_version: str | None = None,
                   command: str | list[str] | None = None, parameters: dict[str, Any] | None = None,
                   labels: dict[str, Any] | None = None, latency_type: str = "unknown",
                   cluster: dict[str, Any] | None = None, source: str | None = None) -> dict[str, Any]:
    """A fresh manifest for a run starting now. Label values become strings; the run id is
    generated (see `new_run_id`) when not given. Secrets are scrubbed."""
    if latency_type not in LATENCY_TYPES:
        raise ValueError(f"latency_type must be one of {LATENCY_TYPES}, got {latency_type!r}")
    manifest: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id or new_run_id(tool),
        "tool": tool,
        "tool_version": tool_version,
        "command": command,
        "parameters": dict(parameters or {}),
        "labels": {str(k): str(v) for k, v in (labels or {}).items()},
        "latency_type": latency_type,
        "cluster": cluster,
        "machine": machine_info(),
        "source": source,
        "started_utc": utc_now_iso(),
        "ended_utc": None,
        "git_commit": git_commit(),
        "complete": False,
    }
    return scrub_secrets(manifest)


def _redact_match(m: re.Match[str]) -> str:
    key = m["key"]
    bare = key.lstrip("-").rsplit(".", 1)[-1]
    if _NOT_SECRET_KEY.match(bare):
        return m[0]
    if not m["sep"].strip() and not key.startswith("-"):
        return m[0]                      # "token aware": a word, not a `--flag value` pair
    return key + m["sep"] + REDACTED


def _scrub_text(text: str) -> str:
    text = _SECRET_IN_URL.sub(lambda m: m["head"] + REDACTED + m["tail"], text)
    return _SECRET_IN_TEXT.sub(_redact_match, text)


def secret_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each value in `text` that `scrub_secrets(text)` replaces with REDACTED, in
    order: for finding secrets in files that are kept as they came."""
    spans = [m.span("value") for m in _SECRET_IN_URL.finditer(text)]
    spans += [m.span("value") for m in _SECRET_IN_TEXT.finditer(text) if _redact_match(m) != m[0]]
    return sorted(spans)


def scrub_secrets(obj: Any) -> Any:
    """A copy of `obj` with secrets redacted: values of keys matching
    password|passwd|secret|token|credential|api_key (any case, at any depth, except the
    Cassandra settings num_tokens, initial_token, allocate_tokens_for_*, credentials_*_in_ms and
    credentials_cache_*), `key=value` / `--key value` / `user:pass@` inside strings, and the
    item after a secret flag in a command list."""
    if isinstance(obj, dict):
        out: dict[Any, Any] = {}
        for key, value in obj.items():
            k = str(key)
            if _SECRET_KEY.search(k) and not _NOT_SECRET_KEY.match(k) and value is not None:
                out[key] = REDACTED
            else:
                out[key] = scrub_secrets(value)
        return out
    if isinstance(obj, (list, tuple)):
        items: list[Any] = []
        hide_next = False
        for item in obj:
            if hide_next and item is not None:
                items.append(REDACTED)
                hide_next = False
                continue
            hide_next = isinstance(item, str) and bool(_SECRET_FLAG.match(item))
            items.append(scrub_secrets(item))
        return items if isinstance(obj, list) else tuple(items)
    if isinstance(obj, str):
        return _scrub_text(obj)
    return obj
