"""The engine spawns its workers with single-threaded BLAS, and leaves the caller's env alone."""

import multiprocessing as mp
import os

from cassperf.workload import engine


def _report_env(q) -> None:  # runs in a spawned child
    q.put({k: os.environ.get(k) for k in engine.WORKER_ENV})


def test_workers_get_single_threaded_blas_and_the_parent_env_is_restored(monkeypatch):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")          # a user's own setting wins
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_report_env, args=(q,))
    with engine._worker_env():
        p.start()
    child = q.get(timeout=60)
    p.join(60)
    assert child == {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "3"}
    assert "OPENBLAS_NUM_THREADS" not in os.environ and os.environ["OMP_NUM_THREADS"] == "3"
