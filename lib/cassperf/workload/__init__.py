"""Workloads: one WorkloadSpec describes the load; engines and tools turn it into traffic.

``spec`` holds the validated, frozen model and the replication check; ``stress_cmdline``
renders and parses cassandra-stress command lines and the schema cassandra-stress creates.
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
from cassperf.workload.stress_cmdline import (
    parse_stress_command,
    schema_cql,
    to_stress_args,
    to_stress_command,
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
    "parse_stress_command",
    "schema_cql",
    "to_stress_args",
    "to_stress_command",
    "warn_replication",
]
