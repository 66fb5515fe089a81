"""A worker's retries (WorkerPlan.retries, a preparation load's): a failed op is sent again until it
succeeds or has been sent 1 + retries times; only an op that failed every time is an error, and
every send again is counted apart. Run on a real Worker with the driver backend's own error
classes; the executor stands in for a node that answers with a timeout a given number of times.
The counting on a real node: tests/cluster/test_engine.py (every write Unavailable)."""

from __future__ import annotations

import asyncio

import pytest
from cassandra import WriteTimeout

from cassperf.workload.backends.base import Target
from cassperf.workload.spec import WorkloadSpec
from cassperf.workload.worker import _FAILED, Worker, WorkerPlan


def _worker(retries: int) -> Worker:
    plan = WorkerPlan(0, 1, WorkloadSpec(op="write", n=10), Target(("127.0.0.1",)), "driver", 1, 10, 0.0,
                      retries=retries)
    return Worker(plan, send=lambda message: None, go=None, t0=None, stop=None)


def _node_failing(times: int) -> tuple[list[list], object]:
    """An executor whose first ``times`` sends time out; the values of every send."""
    sent: list[list] = []

    async def execute(values: list) -> str:
        sent.append(values)
        if len(sent) <= times:
            raise WriteTimeout("Operation timed out - received only 1 responses.", write_type=0)   # SIMPLE
        return "row"

    return sent, execute


@pytest.mark.parametrize(("retries", "fails", "result", "sends", "retried", "timeouts"), [
    (0, 1, _FAILED, 1, 0, 1),          # never retried: the first failure is the op's error
    (9, 3, "row", 4, 3, 0),            # fails 3 times, the 4th send succeeds: no error
    (2, 5, _FAILED, 3, 2, 1),          # fails every one of its 3 sends: one error, 2 sent again
])
def test_a_failed_op_is_sent_again_up_to_retries_times_and_counted_once(retries, fails, result, sends, retried,
                                                                         timeouts):
    worker = _worker(retries)
    sent, execute = _node_failing(fails)
    worker.execs = [execute]
    phase = worker._phase(0, 1, 10)
    try:
        first = asyncio.run(execute(["key", "v"]))
    except WriteTimeout as exc:
        first = asyncio.run(worker._failed(phase, 0, ["key", "v"], exc))
    assert first is result
    assert len(sent) == sends and all(v == ["key", "v"] for v in sent)
    assert phase.retried == retried
    assert phase.errors[0]["write_timeout"] == timeouts and sum(phase.errors[0].values()) == timeouts
