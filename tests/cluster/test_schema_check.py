"""A keyspace that exists with another schema than the workload's is refused with a message
naming each difference and the fix (CREATE ... IF NOT EXISTS would silently keep it)."""

from __future__ import annotations

import pytest

from cassperf.errors import ConfigError
from cassperf.workload.engine import create_schema
from cassperf.workload.spec import Compaction, Replication, WorkloadSpec

pytestmark = pytest.mark.cluster


def test_existing_keyspace_with_another_schema_is_refused(make_cluster):
    cluster = make_cluster("schema", "dc1:1", "127.0.16.1").start()
    first = WorkloadSpec(op="write", n=10, keyspace="ksdiff", column_count=3,
                         replication=Replication.network_topology(dc1=1))
    create_schema(first, cluster)
    create_schema(first, cluster)  # the same schema again is fine

    other = WorkloadSpec(op="write", n=10, keyspace="ksdiff", column_count=5,
                         replication=Replication.network_topology(dc1=3),
                         compaction=Compaction.of("LeveledCompactionStrategy"))
    with pytest.raises(ConfigError) as err:
        create_schema(other, cluster)
    msg = str(err.value)
    assert msg.startswith("keyspace ksdiff exists with a different schema than the workload's: "
                          "replication is class=NetworkTopologyStrategy, dc1=1, the spec asks for "
                          "class=NetworkTopologyStrategy, dc1=3; ksdiff.standard1 has missing columns C3, C4 "
                          "(the spec has key blob and 5 blob columns C0..); ksdiff.standard1 uses ")
    assert msg.endswith(", the spec asks for LeveledCompactionStrategy. Drop it (DROP KEYSPACE ksdiff) or give "
                        "the workload another keyspace name")
