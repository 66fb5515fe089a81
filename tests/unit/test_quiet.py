"""cassperf.experiments.quiet: the wait for idle nodes, measured on real processes standing in for
node JVMs (what it reads is any local process's CPU time by pid)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from cassperf.cluster.base import LocalNodeRef
from cassperf.errors import ConfigError
from cassperf.experiments.quiet import IDLE_CORES, Quiet, describe, wait_quiet
from cassperf.experiments.study import StudyParameters


class _Nodes:
    """A cluster handle as the executor's contexts are, for what wait_quiet asks: local_nodes()."""

    def __init__(self, *procs: subprocess.Popen | None) -> None:
        self.procs = procs

    def local_nodes(self) -> list[LocalNodeRef] | None:
        if not self.procs:
            return None
        return [LocalNodeRef(f"n{i}", "127.0.0.1", (lambda p=p: p.pid if p else None))
                for i, p in enumerate(self.procs)]


@pytest.fixture
def spawn():
    made = []

    def start(code: str) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", code])
        made.append(proc)
        return proc
    yield start
    for proc in made:
        proc.kill()
        proc.wait(10)


SPIN = "import time\nwhile True: pass"
SLEEP = "import time\ntime.sleep(60)"


def test_idle_nodes_end_the_wait_after_one_window(spawn):
    q = wait_quiet([_Nodes(spawn(SLEEP)), _Nodes(spawn(SLEEP))], max_s=10)
    assert q.idle and q.watched == 2 and q.cores < IDLE_CORES and 0.4 < q.waited_s < 2.0
    assert q.note.startswith("nodes idle after ")


def test_a_busy_node_holds_the_wait_to_max_s_and_says_so(spawn):
    q = wait_quiet([_Nodes(spawn(SLEEP), spawn(SPIN))], max_s=1.2)
    assert not q.idle and q.cores > 0.5 and 1.2 <= q.waited_s < 3.0
    assert q.note == f"nodes still busy after {q.waited_s:.1f} s ({q.cores:.2f} cores): ran anyway"
    assert q.to_json() == {"waited_s": round(q.waited_s, 1), "cores": round(q.cores, 2), "idle": False,
                           "watched": 2}


def test_a_node_that_goes_idle_ends_the_wait_then(spawn):
    busy_then_idle = spawn("import time\nend = time.monotonic() + 1.5\nwhile time.monotonic() < end: pass\n"
                           "time.sleep(60)")
    time.sleep(0.2)
    q = wait_quiet([_Nodes(busy_then_idle)], max_s=10)
    assert q.idle and 1.0 <= q.waited_s < 4.0


def test_no_local_node_no_wait():
    q = wait_quiet([_Nodes()], max_s=10)
    assert q == Quiet(0.0, 0.0, 0, True) and q.note == "no local node to wait for"
    stopped = wait_quiet([_Nodes(None)], max_s=10)
    assert stopped.watched == 0 and stopped.waited_s == 0.0


def test_the_report_sentence():
    waits = [{"waited_s": 0.5, "cores": 0.03, "idle": True}, {"waited_s": 2.5, "cores": 0.1, "idle": True},
             {"waited_s": 8.1, "cores": 0.4, "idle": False}]
    assert describe(waits, 8.0) == (
        "Before each measured run, the executor waited for the study's nodes to go idle (their CPU below 0.15 "
        "cores over 0.5 s, at most 8 s), so that one run does not carry the JIT compilation, flushes and "
        "compactions of the one before: median 2.5 s, longest 8.1 s; 1 of 3 runs started with the nodes still busy.")
    assert describe([], 8.0) == ""
    remote = [{"waited_s": 0.0, "cores": 0.0, "idle": True, "watched": 0}] * 3
    assert describe(remote, 8.0) == ("quiet_max_s=8 asked for a wait for idle nodes before each measured run, but no "
                                     "node of the study runs on this machine: nothing was watched or waited for.")


@pytest.mark.parametrize("bad", [-1, 601, True, "5"])
def test_quiet_max_s_is_checked(bad):
    with pytest.raises(ConfigError) as err:
        StudyParameters(quiet_max_s=bad)
    assert str(err.value) == f"quiet_max_s={bad!r}: expected seconds from 0 to 600 (0: no wait)"
