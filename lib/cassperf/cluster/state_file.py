"""cluster.json: what an embedded cluster was started with, in its working folder.

LocalCluster writes it when its nodes are up (topology, version, heap, options, bounds); the
cluster's handle, `cassperf cluster status` and the CLI's other commands read it back, here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

NAME = "cluster.json"


def path(folder: Path) -> Path:
    return Path(folder) / NAME


def read(folder: Path) -> dict[str, Any] | None:
    """The folder's cluster.json, or None when it has none or it does not parse."""
    try:
        state = json.loads(path(folder).read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def write(folder: Path, state: dict[str, Any]) -> None:
    path(folder).write_text(json.dumps(state, indent=2))
