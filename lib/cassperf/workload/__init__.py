"""Workloads: one WorkloadSpec describes the load; engines and tools turn it into traffic.

``spec`` holds the validated, frozen model and the replication check; it knows no tool's
command line. ``runners.stress_cmdline`` renders and parses cassandra-stress command lines and
the schema cassandra-stress creates (``runners.stress_profile``: its user profiles).
"""

from cassperf.workload.spec import (
    CONSISTENCY_LEVELS,
    Compaction,
    Compression,
    Population,
    Rate,
    Ratio,
    Replication,
    WorkloadSpec,
    WorkloadSpecError,
    warn_replication,
)

__all__ = [
    "CONSISTENCY_LEVELS",
    "Compaction",
    "Compression",
    "Population",
    "Rate",
    "Ratio",
    "Replication",
    "WorkloadSpec",
    "WorkloadSpecError",
    "warn_replication",
]
