"""Shared fixtures: the shared fixtures folder, and local clusters that are always stopped."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest
from hypothesis import settings

# CI runs the fuzz tests on a fixed set of examples (derandomized), so a run lands or fails on
# the code, not on the draw; developers' runs explore new examples (CASSPERF_FUZZ_EXAMPLES).
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

from cassperf import config


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):  # noqa: ANN001 - pytest hook
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


@pytest.fixture(scope="session")
def fixtures() -> Path:
    """../shared/fixtures (real tool output); tests that need it skip when it is absent."""
    path = config.fixtures_dir()
    if not path.is_dir():
        pytest.skip(f"shared fixtures folder {path} is absent (it sits beside the checkout as ../shared/fixtures)")
    return path


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
    for cluster in made:
        try:
            cluster.stop(timeout_s=30)
        finally:
            if failed:
                print(f"\nkept the logs of cluster {cluster.name} at {cluster.root}")
            else:
                cluster.destroy()
    leftover = cassperf_processes(root)
    for proc in leftover:  # only our own test nodes, found by their marker under this root
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
        try:
            cluster.stop(timeout_s=30)
        finally:
            if request.session.testsfailed > failed_before:
                print(f"\nkept the logs of cluster {cluster.name} at {cluster.root}")
            else:
                cluster.destroy()
        leftover = cassperf_processes(root)
        for proc in leftover:      # only this module's nodes, found by their marker under this root
            proc.kill()
        assert not leftover, f"nodes still running after teardown: {[p.pid for p in leftover]}"


def latte_or_skip() -> Path:
    """The latte executable, or skip the test saying how to get it (`make latte`)."""
    from cassperf.workload.runners.latte_runner import locate_latte
    from cassperf.workload.runners.streaming import ToolNotFoundError

    try:
        return locate_latte()
    except ToolNotFoundError as exc:
        pytest.skip(str(exc))
