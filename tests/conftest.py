"""Shared fixtures: the public tool output the repository carries, and local clusters that are always stopped."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import pytest
from hypothesis import settings

# CI runs the fuzz tests on a fixed set of examples (derandomized), so a run lands or fails on
# the code, not on the draw; developers' runs explore new examples (CASSPERF_FUZZ_EXAMPLES).
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


# The tests' nodes live seconds to minutes and their tests assert behaviour, not absolute speed:
# C1 only (no C2 compiler threads), measured on 01's notebook test alone: 276 s against 408 s
# (docs/measurements.md, "make test's nodes: C1 only"); and the memtable's row overhead estimated
# over 100 rows, as Cassandra's own test suite does, not 100,000: on this machine that estimate took
# 3.1-3.2 s of each node's 12 s start (system.log: "Estimated SkipListMemtable row overhead").
# Reports keep Cassandra's and HotSpot's defaults; a study record made under this says so ("On this
# machine: the embedded nodes ran with ...").
os.environ.setdefault("CASSPERF_NODE_JVM_OPTIONS",
                      "-XX:TieredStopAtLevel=1 -Dcassandra.memtable_row_overhead_computation_step=100")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files marked `long` first, each file's tests kept together and in order: make test's
    quick phase runs files two at a time in this order (--no-loadscope-reorder), and the
    simulation proofs take a minute or two each, so started first they do not leave one worker
    running the last of them alone."""
    long_files = {item.path for item in items if item.get_closest_marker("long")}
    items.sort(key=lambda item: item.path not in long_files)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):  # noqa: ANN001 - pytest hook
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


#: real tool output from public repositories, carried by the repository with a source note per file
#: (tests/fixtures/public/README.md); the tests read it from here, never from a folder beside the checkout
PUBLIC_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "public"


def public_fixture(*parts: str) -> Path:
    """One file of the public fixtures, e.g. ``public_fixture("gc", name)``; the calling test fails,
    naming the file, when it is missing."""
    path = PUBLIC_FIXTURES.joinpath(*parts)
    if not path.is_file():
        pytest.fail(f"fixture {path} is missing: the repository carries it (git checkout -- tests/fixtures/public)")
    return path


def public_fixture_text(*parts: str) -> str:
    """The text of one public fixture file (``cassperf.parsers.read_text``: BOM and encoding
    handled as the parsers do)."""
    from cassperf.parsers import read_text
    return read_text(public_fixture(*parts))


def public_fixture_files() -> list[Path]:
    """Every data file of the public fixtures, sorted: not the ``.source.txt`` notes beside them,
    not README.md."""
    return sorted(p for p in PUBLIC_FIXTURES.rglob("*")
                  if p.is_file() and not p.name.endswith(".source.txt") and p.name != "README.md")


@pytest.fixture(scope="session")
def fixtures() -> Path:
    """tests/fixtures/public: real tool output from public repositories."""
    return PUBLIC_FIXTURES


def cassperf_processes(root: Path) -> list[psutil.Process]:
    """Live processes whose command line carries a node marker under `root`."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(arg.startswith(f"-Dcassperf.node={root}") for arg in (proc.info["cmdline"] or [])):
                if proc.status() != psutil.STATUS_ZOMBIE:
                    found.append(proc)
        except psutil.Error:
            continue
    return found


def stop_and_check_gone(cluster: Any, root: Path) -> None:
    """Stop a namespaced test cluster and check that no node, namespace or delay router of it is
    left (nodes still there are killed, then the check fails)."""
    from cassperf.cluster import netns

    cluster.stop(kill=True)                   # a test's nodes: no graceful stop (13-15 s of teardown each)
    left = cassperf_processes(root)
    for proc in left:
        proc.kill()
    assert not left, f"nodes still running after stop: {[p.pid for p in left]}"
    netid = netns.network_id(cluster.name, cluster.root)
    assert (netns.leftover_namespaces(netid), netns.router_pids(netid)) == ([], [])


@pytest.fixture
def make_cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """Factory of LocalClusters under a temporary root. Every cluster is stopped in teardown,
    even when the test fails; on failure its folder (logs) is kept and its path printed."""
    from cassperf.cluster import LocalCluster

    made: list[LocalCluster] = []
    root = tmp_path_factory.mktemp("clusters")

    def factory(name: str, topology: str, first_address: str, **kwargs) -> LocalCluster:
        kwargs.setdefault("heap_mb", 512)
        cluster = LocalCluster(name, topology, first_address=first_address, root=root, **kwargs)
        made.append(cluster)
        return cluster

    yield factory
    failed = getattr(request.node, "rep_call", None) is None or request.node.rep_call.failed
    stop_clusters(made, root, failed)


def stop_clusters(clusters: Iterable[Any], root: Path, failed: bool) -> None:
    """A cluster fixture's teardown: stop every cluster; after a failed test keep its folder (the
    node logs; the path is printed), else destroy it; then kill any node process still running
    under `root` (only the test's own, found by their marker) and fail the test if there was one."""
    try:
        for cluster in clusters:
            if failed:
                try:
                    cluster.stop(timeout_s=30)
                finally:
                    print(f"\nkept the logs of cluster {cluster.name} at {cluster.root}")
            else:
                cluster.destroy()                   # kills: no graceful stop for data removed next
    finally:
        leftover = cassperf_processes(root)
        for proc in leftover:
            proc.kill()
    assert not leftover, f"nodes still running after teardown: {[p.pid for p in leftover]}"


@contextmanager
def started_cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, name: str,
                    topology: str, first_address: str, **kwargs) -> Iterator:
    """One LocalCluster for a module's tests (module-scoped fixtures): started here, stopped in
    finally (its folder kept and printed when a test of the module failed, else destroyed), and
    any node left under its root found by its marker and killed (then the teardown fails)."""
    from cassperf.cluster import LocalCluster

    root = tmp_path_factory.mktemp(f"{name}-clusters")
    kwargs.setdefault("heap_mb", 512)
    cluster = LocalCluster(name, topology, first_address=first_address, root=root, **kwargs)
    failed_before = request.session.testsfailed
    try:
        t0 = time.monotonic()
        cluster.start()
        print(f"\ncluster {name} ({topology}) CQL-ready in {time.monotonic() - t0:.1f} s")
        yield cluster
    finally:
        stop_clusters([cluster], root, failed=request.session.testsfailed > failed_before)


def latte_or_skip() -> Path:
    """The latte executable, or skip the test saying how to get it (`make latte`)."""
    from cassperf.workload.runners.latte_runner import locate_latte
    from cassperf.workload.runners.streaming import ToolNotFoundError

    try:
        return locate_latte()
    except ToolNotFoundError as exc:
        pytest.skip(str(exc))
