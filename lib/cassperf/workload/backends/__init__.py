"""Hot-path backends of the load engine behind one interface (``base.Backend``).

``acsylla`` (the DataStax C++ driver through acsylla) is the fastest measured here and the
default; ``driver`` (the Python cassandra-driver, or scylla-driver, which installs under the
same ``cassandra`` package name) is the fallback, picked automatically when acsylla cannot be
imported. bench/engine.py measures them side by side.
"""

from __future__ import annotations

from cassperf.workload.backends.base import ERROR_KINDS, Backend, BackendError, Target, available, create

__all__ = ["ERROR_KINDS", "Backend", "BackendError", "Target", "available", "create"]
