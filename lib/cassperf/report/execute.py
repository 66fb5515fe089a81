"""Execute one notebook with papermill. A failed execution still writes the output notebook,
marked at the failing cell: a failed run is evidence, not garbage."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import papermill


@dataclass(frozen=True)
class Execution:
    input_path: Path
    output_path: Path
    ok: bool
    duration_s: float
    error: str | None


def execute(input_path: Path, output_path: Path, parameters: dict[str, Any] | None = None,
            kernel_name: str = "python3", timeout_s: int = 1800) -> Execution:
    output_path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    error = None
    try:
        papermill.execute_notebook(str(input_path), str(output_path), parameters=parameters or {},
                                   kernel_name=kernel_name, cwd=str(input_path.parent),
                                   execution_timeout=timeout_s, progress_bar=False, log_output=False)
    except papermill.PapermillExecutionError as exc:
        error = f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}"
    return Execution(input_path, output_path, error is None, time.monotonic() - t0, error)
