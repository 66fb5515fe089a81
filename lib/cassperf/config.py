"""Where things live. No import-time side effects: every function computes, nothing is created.

Environment overrides:
  CASSPERF_HOME   project root (default: the checkout this package sits in, else the cwd)
  CASSPERF_DATA   runs and local clusters (default: <root>/data)
  CASSPERF_REPORTS  executed notebooks and HTML (default: <root>/reports)
  CASSPERF_CACHE  cache for downloaded jars (default: ~/.cache/cassperf)
  CASSPERF_FIXTURES  real tool output the log explorer reads by default (default: <root>/tests/fixtures/public)
"""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    env = os.environ.get("CASSPERF_HOME")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").exists() and (parent / "lib" / "cassperf").is_dir():
            return parent
    return Path.cwd().resolve()


def data_dir() -> Path:
    env = os.environ.get("CASSPERF_DATA")
    return Path(env).resolve() if env else project_root() / "data"


def runs_dir() -> Path:
    return data_dir() / "runs"


def clusters_dir() -> Path:
    """One working folder per local cluster: conf, data, commitlog, hints, logs (git-ignored)."""
    return data_dir() / "clusters"


def reports_dir() -> Path:
    env = os.environ.get("CASSPERF_REPORTS")
    return Path(env).resolve() if env else project_root() / "reports"


def notebooks_dir() -> Path:
    return project_root() / "notebooks"


def cache_dir() -> Path:
    env = os.environ.get("CASSPERF_CACHE")
    if env:
        return Path(env).resolve()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "cassperf"


def fixtures_dir() -> Path:
    """Real tool output from public repositories that the repository carries (tests/fixtures/public,
    each file with its source note), or CASSPERF_FIXTURES."""
    env = os.environ.get("CASSPERF_FIXTURES")
    if env:
        return Path(env)
    return project_root() / "tests" / "fixtures" / "public"


#: set in the environment of every kernel `cassperf report` runs (report.execute): the notebook
#: runs in batch, so progress goes to the report's terminal, not into the published page
BATCH_ENV = "CASSPERF_BATCH"
