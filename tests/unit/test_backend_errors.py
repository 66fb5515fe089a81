"""Each engine backend sorts its driver's exceptions into the ERROR_KINDS the intervals count:
server-side write and read timeouts and unavailables by their driver class, anything else "other"."""

from __future__ import annotations

import pytest

from cassperf.workload.backends.base import ERROR_KINDS, create


def driver_errors() -> list[tuple[BaseException, str]]:
    cassandra = pytest.importorskip("cassandra")
    return [(cassandra.WriteTimeout("w", write_type=cassandra.WriteType.SIMPLE), "write_timeout"),
            (cassandra.ReadTimeout("r"), "read_timeout"), (cassandra.Unavailable("u"), "unavailable"),
            (cassandra.OperationTimedOut("client-side"), "other"), (ConnectionResetError("reset"), "other")]


def acsylla_errors() -> list[tuple[BaseException, str]]:
    errors = pytest.importorskip("acsylla.errors")
    return [(errors.CassErrorServerWriteTimeout("w"), "write_timeout"),
            (errors.CassErrorServerReadTimeout("r"), "read_timeout"),
            (errors.CassErrorServerUnavailable("u"), "unavailable"),
            (errors.CassErrorLibRequestTimedOut("client-side"), "other"), (ConnectionResetError("reset"), "other")]


@pytest.mark.parametrize(("name", "cases"), [("driver", driver_errors), ("acsylla", acsylla_errors)])
def test_error_kinds_of_each_backend(name, cases) -> None:
    pairs = cases()
    backend = create(name)
    assert [backend.error_kind(exc) for exc, _ in pairs] == [kind for _, kind in pairs]
    assert {kind for _, kind in pairs} == set(ERROR_KINDS)
