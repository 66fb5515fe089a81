"""Log explorer: import every log in a folder or glob into a store, and give back tidy frames
for the notebook: the runs table, intervals of every run, GC pauses, and what could not be read.
The charts of these frames are in `cassperf.plots.logs`.

Nothing is guessed: a file no parser recognises is listed in `problems` with the formats tried;
so is a file whose content the store already holds (imported once, never counted twice).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from cassperf import parsers
from cassperf.parsers.paths import expand_paths
from cassperf.errors import CassperfError
from cassperf.results.catalog import DuplicateImportError, catalog, import_parsed


@dataclass
class Explored:
    runs: pd.DataFrame                      # the catalog of imported runs
    intervals: pd.DataFrame                 # every run's intervals + run_id, tool, file
    gc_pauses: pd.DataFrame                 # pauses tables of GC logs + file
    problems: pd.DataFrame                  # file, error
    formats: pd.DataFrame = field(default_factory=pd.DataFrame)  # file, format, runs, tables, warnings


def default_logs() -> Path:
    """What the explorer reads when given no logs: the real tool output the repository carries
    (tests/fixtures/public), or the folder CASSPERF_FIXTURES names."""
    from cassperf import config

    return config.fixtures_dir()


def explore(pattern: str | Path, store: Path) -> Explored:
    """Parse and import every file under `pattern` (a folder or a glob) into the run store at `store`."""
    files = expand_paths([str(pattern)])
    intervals, pauses, problems, formats = [], [], [], []
    for path in files:
        try:
            result = parsers.parse(path)
        except (CassperfError, OSError) as exc:
            problems.append({"file": path.name, "error": str(exc).splitlines()[0]})
            continue
        try:
            import_parsed(result, {"file": path.name, "format": result.format}, root=store)
        except DuplicateImportError as exc:          # already in this store: listed, not counted twice
            problems.append({"file": path.name, "error": str(exc)})
            continue
        formats.append({"file": path.name, "format": result.format, "runs": len(result.runs),
                        "tables": ", ".join(result.tables), "warnings": len(result.warnings),
                        "complete": result.complete})
        for i, run in enumerate(result.runs):
            if not run.intervals.empty:
                frame = run.intervals.copy()
                frame.insert(0, "run", f"{path.name} #{i + 1}")
                frame.insert(1, "tool", run.manifest.get("tool"))
                intervals.append(frame)
        if "pauses" in result.tables:
            frame = result.tables["pauses"].copy()
            frame.insert(0, "file", path.name)
            pauses.append(frame)
    return Explored(runs=catalog(store), intervals=_concat(intervals), gc_pauses=_concat(pauses),
                    problems=pd.DataFrame(problems, columns=["file", "error"]),
                    formats=pd.DataFrame(formats, columns=["file", "format", "runs", "tables", "warnings", "complete"]))


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
