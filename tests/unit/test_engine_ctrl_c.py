"""While the engine collects, Ctrl-C only counts (engine._CtrlC): it never raises between a queue
read and the collector's update. The caller's SIGINT handler comes back after; an ignored SIGINT
stays ignored (a run started in the background is not made interruptible)."""

import os
import signal
import threading

import pytest

from cassperf.workload import engine


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

