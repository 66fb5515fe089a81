"""`cassperf cluster status|stop|destroy --name X` find the cluster as it was started (its cluster.json)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CASSPERF_HOME": str(home)}
    env.pop("CASSPERF_DATA", None)
    return subprocess.run([sys.executable, "-m", "cassperf.cli", "cluster", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def _started_as(home: Path, name: str, **state: object) -> None:
    root = home / "data" / "clusters" / name
    root.mkdir(parents=True)
    (root / "cluster.json").write_text(json.dumps({"name": name, **state}))


def test_status_by_name_alone_lists_the_nodes_the_cluster_was_started_with(tmp_path):
    _started_as(tmp_path, "big", topology="dc1:2,dc2:1", version="5.0.6", first_address="127.0.7.1", heap_mb=512)
    out = _cli(tmp_path, "status", "--name", "big")
    assert out.returncode == 3, out.stderr          # nothing runs: every node down
    rows = [line.split() for line in out.stdout.splitlines()[1:]]
    assert [(r[0], r[1], r[2]) for r in rows] == [("node1", "127.0.7.1", "dc1"), ("node2", "127.0.7.2", "dc1"),
                                                  ("node3", "127.0.7.3", "dc2")]
    assert all(r[-1] == "False" for r in rows)


def test_an_option_given_still_wins_and_a_cluster_without_state_gets_the_defaults(tmp_path):
    _started_as(tmp_path, "big", topology="dc1:2", version="5.0.6", first_address="127.0.7.1")
    out = _cli(tmp_path, "status", "--name", "big", "--first-address", "127.0.8.1")
    assert [line.split()[1] for line in out.stdout.splitlines()[1:]] == ["127.0.8.1", "127.0.8.2"]
    fresh = _cli(tmp_path, "status", "--name", "never-started")
    assert [line.split()[:2] for line in fresh.stdout.splitlines()[1:]] == [["node1", "127.0.0.1"]]
