"""Which files a list of PATH arguments names: files, folders (searched recursively) or globs.

Used by ``cassperf parse`` / ``cassperf import`` and by the log explorer. Folders are searched
recursively, leaving out ``*.source.txt`` sidecars (the fixtures' provenance notes) and hidden
files and folders. A path that does not exist, a pattern that matches nothing, or arguments that
name no file at all are a ConfigError naming them.
"""

from __future__ import annotations

import glob
from pathlib import Path

from cassperf.errors import ConfigError

SIDECAR_SUFFIX = ".source.txt"
_GLOB_CHARS = set("*?[")


def expand_paths(args: list[str]) -> list[Path]:
    """Files named by PATH arguments, in order, without duplicates (see the module docstring)."""
    out: list[Path] = []
    for arg in args:
        if _GLOB_CHARS & set(arg):
            matches = [Path(m) for m in sorted(glob.glob(arg, recursive=True))]
            if not matches:
                raise ConfigError(f"no files match {arg}")
        elif Path(arg).exists():
            matches = [Path(arg)]
        else:
            raise ConfigError(f"no such file or folder: {arg}")
        for match in matches:
            if match.is_dir():
                out += sorted(p for p in match.rglob("*") if p.is_file() and _wanted(p.relative_to(match)))
            elif match.is_file() and not match.name.endswith(SIDECAR_SUFFIX):
                out.append(match)
    unique = list(dict.fromkeys(out))
    if not unique:
        raise ConfigError(f"no input files in {' '.join(args)} (sidecars *{SIDECAR_SUFFIX} are skipped)")
    return unique


def _wanted(rel: Path) -> bool:
    return not rel.name.endswith(SIDECAR_SUFFIX) and not any(part.startswith(".") for part in rel.parts)
