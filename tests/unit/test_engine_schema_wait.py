"""create_schema's statements wait for the driver to see a node up, and only then: a
NoHostAvailable that tried no host (the pool to a just-started node still down) is retried each
second up to SCHEMA_HOST_WAIT_S; one whose hosts were tried and failed is raised at once."""

from __future__ import annotations

import pytest
from cassandra.cluster import NoHostAvailable

from cassperf.workload import engine


class Session:
    """Answers like the driver's Session.execute: raises each of `failures` in turn, then works."""

    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.calls: list[str] = []

    def execute(self, cql: str, timeout: float) -> None:
        self.calls.append(cql)
        if self.failures:
            raise self.failures.pop(0)


@pytest.fixture
def clock(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(engine.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(engine.time, "sleep", lambda s: now.__setitem__(0, now[0] + s))
    return now


def test_a_statement_waits_while_no_host_is_up_then_runs(clock):
    session = Session([NoHostAvailable("Unable to complete the operation against any hosts", {})] * 3)
    engine._execute_once_up(session, "CREATE KEYSPACE ks")
    assert session.calls == ["CREATE KEYSPACE ks"] * 4 and clock[0] == 3.0


def test_a_host_that_was_tried_and_failed_raises_at_once(clock):
    tried = NoHostAvailable("Unable to complete the operation against any hosts",
                            {"127.0.0.1:9042": OSError("refused")})
    session = Session([tried])
    with pytest.raises(NoHostAvailable):
        engine._execute_once_up(session, "CREATE KEYSPACE ks")
    assert session.calls == ["CREATE KEYSPACE ks"] and clock[0] == 0.0


def test_no_host_up_for_the_whole_wait_raises(clock):
    session = Session([NoHostAvailable("none", {})] * 100)
    with pytest.raises(NoHostAvailable):
        engine._execute_once_up(session, "CREATE KEYSPACE ks")
    assert clock[0] == engine.SCHEMA_HOST_WAIT_S and len(session.calls) == int(engine.SCHEMA_HOST_WAIT_S) + 1
