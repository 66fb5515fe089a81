"""Execute one notebook with papermill. A failed execution still writes the output notebook,
marked at the failing cell: a failed run is evidence, not garbage."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import papermill

from cassperf.config import BATCH_ENV
from cassperf.report.kernel import ipc_kernel_config

@dataclass(frozen=True)
class Execution:
    input_path: Path
    output_path: Path
    ok: bool
    duration_s: float
    error: str | None     # "cell 7: ClusterError: ..." when it failed


@contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    """Set variables for the kernel papermill starts (it inherits this process's environment)."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def execute(input_path: Path, output_path: Path, parameters: dict[str, Any] | None = None,
            kernel_name: str = "python3", timeout_s: int = 1800, env: dict[str, str] | None = None) -> Execution:
    """Run `input_path` top to bottom in a fresh kernel with `parameters` injected, writing
    `output_path` (also when a cell fails). `timeout_s` bounds each cell; `env` is added to the
    kernel's environment. The kernel's channels are Unix sockets in a private folder, not TCP
    (:func:`cassperf.report.kernel.ipc_kernel_config`)."""
    output_path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    error = None
    try:
        with _environment({BATCH_ENV: "1", **(env or {})}), ipc_kernel_config() as kernel_config:
            papermill.execute_notebook(str(input_path), str(output_path), parameters=parameters or {},
                                       kernel_name=kernel_name, cwd=str(input_path.parent),
                                       execution_timeout=timeout_s, progress_bar=False, log_output=False,
                                       config=kernel_config)
    except papermill.PapermillExecutionError as exc:
        evalue = str(exc.evalue).strip().splitlines()
        error = f"cell {exc.exec_count}: {exc.ename}: {evalue[0] if evalue else ''}"
    except Exception as exc:  # kernel died, cell timeout: papermill wrote what ran
        text = str(exc).strip().splitlines()
        error = f"{type(exc).__name__}: {text[0] if text else ''}"
    return Execution(input_path, output_path, error is None, time.monotonic() - t0, error)
