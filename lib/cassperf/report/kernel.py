"""How report kernels talk to papermill: ZeroMQ over Unix sockets (IPC) in a private folder,
never over TCP on 127.0.0.1.

Over TCP any local user can connect to a kernel's ports and subscribe to what it publishes
(every cell's code and outputs, in plain text); ipykernel warns "Kernel is running over TCP
without encryption" for that. Over IPC
the five kernel channels are socket files in a folder only this user can enter (0700), which is
removed with its connection file when the notebook has run. ipykernel still binds one TCP port
on 127.0.0.1 that no configuration removes: its IOPub pipe, where forked child processes send
their output. It only receives, and drops every message that does not start with a random
16-byte key the kernel holds, so nothing can be read or run through it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from traitlets.config import Config

#: a Unix socket path has at most 107 bytes (sun_path); "<folder>/kernel-<n>" must fit
_MAX_FOLDER_CHARS = 80


@contextmanager
def ipc_kernel_config() -> Iterator[Config]:
    """A traitlets Config for nbclient's (papermill's) kernel manager: IPC transport, the
    socket files (``kernel-1`` .. ``kernel-5``) and the connection file (``kernel.json``, the
    message-signing key) in a fresh 0700 folder under the temporary directory (``/tmp`` when
    ``TMPDIR`` is too long for a socket path), removed on exit."""
    base = tempfile.gettempdir()
    if len(base) > _MAX_FOLDER_CHARS - 24:
        base = "/tmp"
    folder = Path(tempfile.mkdtemp(prefix="cassperf-kernel-", dir=base))  # mkdtemp: mode 0700
    try:
        yield Config({"KernelManager": {"transport": "ipc", "ip": str(folder / "kernel"),
                                        "connection_file": str(folder / "kernel.json")}})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
