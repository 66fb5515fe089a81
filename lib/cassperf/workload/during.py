"""The ``during`` action of a run: a callable started in a thread while the load goes on.

The garbagecollect study's shape: ``during=lambda run: (time.sleep(60), run.phase(...))``. It
gets the run's open RunWriter, so it can mark its window with ``with run.phase(name):``. Its
failure never loses the run: the error is kept (``error``), warned into the run, and raised by
the caller once the run is stored.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from cassperf.errors import CassperfError

NS_PER_S = 1_000_000_000


class DuringAction:
    """``fn(writer)`` in a thread, started at a monotonic instant (``start_at``) or now."""

    def __init__(self, fn: Callable[[Any], Any], writer: Any) -> None:
        self.fn, self.writer = fn, writer
        self.error: BaseException | None = None
        self.thread: threading.Thread | None = None

    def start_at(self, t0_ns: int | None = None) -> None:
        def body() -> None:
            if t0_ns is not None:
                delay = (t0_ns - time.monotonic_ns()) / NS_PER_S
                if delay > 0:
                    time.sleep(delay)
            try:
                self.fn(self.writer)
            except BaseException as exc:  # noqa: BLE001 - raised by the caller once the run is stored
                self.error = exc
                try:
                    self.writer.warn(f"the during action failed: {type(exc).__name__}: {exc}")
                except CassperfError:        # the run was already closed (the load failed first)
                    pass

        self.thread = threading.Thread(target=body, name="cassperf-during", daemon=True)
        self.thread.start()

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()
