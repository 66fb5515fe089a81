"""While the engine collects, Ctrl-C only counts (engine._CtrlC): it never raises between a queue
read and the collector's update. The caller's SIGINT handler comes back after; an ignored SIGINT
stays ignored (a run started in the background is not made interruptible)."""

import json
import os
import queue
import signal
import threading
import time

import numpy as np
import pytest

from cassperf.results.manifest import build_manifest
from cassperf.results.store import RunWriter
from cassperf.workload import WorkloadSpec, engine
from cassperf.workload.backends.base import ERROR_KINDS
from cassperf.workload.recorder import histogram_of


@pytest.fixture
def interactive_sigint():
    """SIGINT as a terminal's Python has it: a test run started in the background (`make test &`,
    a CI runner without job control) inherits SIGINT ignored."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def test_sigint_is_counted_not_raised_and_the_callers_handler_comes_back(interactive_sigint):
    before = signal.getsignal(signal.SIGINT)
    with engine._CtrlC() as ctrl_c:
        assert not ctrl_c.waited_enough()
        os.kill(os.getpid(), signal.SIGINT)
        assert ctrl_c.count == 1 and not ctrl_c.waited_enough()
        os.kill(os.getpid(), signal.SIGINT)
        assert ctrl_c.count == 2 and ctrl_c.waited_enough()
    assert signal.getsignal(signal.SIGINT) is before
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)


def test_one_ctrl_c_waits_stop_wait_s(monkeypatch, interactive_sigint):
    monkeypatch.setattr(engine, "STOP_WAIT_S", 0.0)
    with engine._CtrlC() as ctrl_c:
        os.kill(os.getpid(), signal.SIGINT)
        assert ctrl_c.count == 1 and ctrl_c.waited_enough()


def test_an_ignored_sigint_stays_ignored():
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with engine._CtrlC() as ctrl_c:
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
        assert ctrl_c.count == 0 and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, old)


def test_outside_the_main_thread_it_installs_nothing():
    seen = {}

    def collect() -> None:
        with engine._CtrlC():
            seen["handler"] = signal.getsignal(signal.SIGINT)

    before = signal.getsignal(signal.SIGINT)
    thread = threading.Thread(target=collect)
    thread.start()
    thread.join(10)
    assert seen == {"handler": before}


def test_a_third_ctrl_c_raises(interactive_sigint):
    with pytest.raises(KeyboardInterrupt), engine._CtrlC() as ctrl_c:
        for _ in range(3):
            os.kill(os.getpid(), signal.SIGINT)
    assert ctrl_c.count == 3 and signal.getsignal(signal.SIGINT) is signal.default_int_handler



# -- _collect itself: the race that hung CI, made deterministic -----------------------------------

def _interval(w: int, k: int, t0: int, ops: int = 100) -> tuple:
    """A worker's interval report as worker.Worker._interval_message makes it: ``ops`` writes of
    1 ms service time in interval k (1 s long) of worker w."""
    h = histogram_of(np.full(ops, 1_000_000, dtype=np.int64))
    start = t0 + k * 1_000_000_000
    return ("interval", w, k, start, start + 1_000_000_000, {"WRITE-st": (h.count, h.encoded, h.max_ns, h.clamped)},
            {"write": dict.fromkeys(ERROR_KINDS, 0)}, {}, 0, [0])


class _Reports:
    """The workers' queue, scripted: hands out ``messages`` in order, then raises Empty; the
    Ctrl-C comes (a real SIGINT to this process) right after ``interrupt_after`` is handed out,
    where an async KeyboardInterrupt lost that interval."""

    def __init__(self, messages: list[tuple], interrupt_after: tuple | None = None) -> None:
        self.messages, self.interrupt_after = list(messages), interrupt_after

    def get(self, timeout: float) -> tuple:
        if not self.messages:
            time.sleep(min(timeout, 0.05))
            raise queue.Empty
        msg = self.messages.pop(0)
        if msg is self.interrupt_after:
            os.kill(os.getpid(), signal.SIGINT)
        return msg


class _Worker:
    """What _collect asks of a worker process: its exit code, and kill()."""

    def __init__(self) -> None:
        self.exitcode: int | None = None
        self.killed = False

    def kill(self) -> None:
        self.killed, self.exitcode = True, -9


def _collector(tmp_path, workers: int, t0: int):
    spec = WorkloadSpec(op="write", duration=60, keyspace="ks")
    writer = RunWriter(build_manifest(run_id="ctrl-c", tool="test"), root=tmp_path).open()
    return engine._Collector(writer, spec, workers, t0, 0.0, None), writer


@pytest.fixture
def deadline():
    """A _collect that hangs fails this test after 10 s instead of holding the suite."""
    def expired(signum, frame):
        raise TimeoutError("_collect still waiting after 10 s: an interval was lost")
    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def test_a_ctrl_c_right_after_a_queue_read_loses_no_interval(tmp_path, interactive_sigint, deadline):
    """Before _CtrlC, KeyboardInterrupt raised here dropped interval 1 of worker 0, and the engine
    waited for it forever (CI at 8eb7de5)."""
    t0 = 0
    hit = _interval(0, 1, t0)
    reports = _Reports([_interval(0, 0, t0), _interval(1, 0, t0), hit, _interval(1, 1, t0),
                        ("done", 0, 1, {}), ("done", 1, 1, {})], interrupt_after=hit)
    col, writer = _collector(tmp_path, 2, t0)
    stop = threading.Event()
    assert engine._collect(reports, [_Worker(), _Worker()], col, writer, stop, t0) is True
    writer.close(error="interrupted")
    assert stop.is_set() and col.finished() and col.next_k == 2
    assert col.counts == {"write": 400}            # 2 workers x 2 intervals x 100 ops: none lost


def test_stop_wait_kills_the_late_worker_and_keeps_what_the_other_sent(tmp_path, interactive_sigint, deadline,
                                                                       monkeypatch):
    """Worker 1 never finishes; worker 0 sent its last partial interval and done. STOP_WAIT_S after
    the Ctrl-C, worker 1 is killed and closed at the last interval it reported (0); worker 0's
    interval 1 is written all the same."""
    monkeypatch.setattr(engine, "STOP_WAIT_S", 0.2)
    t0 = 0
    first = _interval(0, 0, t0)
    reports = _Reports([first, _interval(1, 0, t0), _interval(0, 1, t0, ops=30), ("done", 0, 1, {})],
                       interrupt_after=first)
    col, writer = _collector(tmp_path, 2, t0)
    late = _Worker()
    assert engine._collect(reports, [_Worker(), late], col, writer, threading.Event(), t0) is True
    assert late.killed
    assert col.counts == {"write": 230}
    writer.close(error="interrupted")
    warnings = [json.loads(line)["warning"] for line in (writer.path / "warnings.jsonl").read_text().splitlines()]
    assert warnings == ["worker 1 had not finished at 0.2 s after Ctrl-C: killed; its intervals after 0 are not in "
                        "the run"]


def test_a_worker_that_exits_without_done_is_closed_at_its_last_interval(tmp_path, deadline):
    """No Ctrl-C: worker 1 reported interval 0 and exited (code 1) without 'done'; the run carries
    on with worker 0's two intervals, and a warning says so."""
    t0 = 0
    reports = _Reports([_interval(0, 0, t0), _interval(1, 0, t0), _interval(0, 1, t0), ("done", 0, 1, {})])
    col, writer = _collector(tmp_path, 2, t0)
    gone = _Worker()
    gone.exitcode = 1
    assert engine._collect(reports, [_Worker(), gone], col, writer, threading.Event(), t0) is False
    writer.close()
    assert col.finished() and col.counts == {"write": 300}
    warnings = [json.loads(line)["warning"] for line in (writer.path / "warnings.jsonl").read_text().splitlines()]
    assert warnings == ["worker 1 exited with code 1 after interval 0; the run carries on without it"]


class _LateReports(_Reports):
    """The parent woke late: its first read timed out, and by then the worker had sent its whole
    run and exited."""

    def __init__(self, messages: list[tuple]) -> None:
        super().__init__(messages)
        self.first = True

    def get(self, timeout: float) -> tuple:
        if self.first:
            self.first = False
            raise queue.Empty
        return super().get(timeout)


def test_a_worker_that_exited_after_sending_its_run_is_read_before_it_is_closed(tmp_path, deadline):
    """CI at 240ec88: the parent's read timed out, worker 0 had exited (code 0) with its intervals
    and 'done' in the queue, and the run was closed at interval -1: "no operation succeeded"."""
    t0 = 0
    reports = _LateReports([_interval(0, 0, t0), _interval(0, 1, t0), ("done", 0, 1, {})])
    col, writer = _collector(tmp_path, 1, t0)
    finished = _Worker()
    finished.exitcode = 0
    assert engine._collect(reports, [finished], col, writer, threading.Event(), t0) is False
    writer.close()
    assert col.finished() and col.counts == {"write": 200}
    assert not (writer.path / "warnings.jsonl").exists() or not (writer.path / "warnings.jsonl").read_text()
