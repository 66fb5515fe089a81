"""`cassperf cluster status|stop|destroy --name X` find the cluster as it was started (its cluster.json),
and refuse a name that was never started; `--first-address` is a loopback IPv4 address."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


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


def test_an_option_given_still_wins(tmp_path):
    _started_as(tmp_path, "big", topology="dc1:2", version="5.0.6", first_address="127.0.7.1")
    out = _cli(tmp_path, "status", "--name", "big", "--first-address", "127.0.8.1")
    assert [line.split()[1] for line in out.stdout.splitlines()[1:]] == ["127.0.8.1", "127.0.8.2"]


@pytest.mark.parametrize("action", ["status", "stop", "destroy"])
def test_an_unknown_cluster_name_is_an_error_that_lists_the_known_ones(tmp_path, action):
    # issue 11, item 4: `stop --name prob` (a typo of probe) said "stopped cluster prob", exit 0, and
    # `status --name doesnotexist` showed a made-up node1 on 127.0.0.1
    _started_as(tmp_path, "probe", topology="dc1:1", first_address="127.0.3.1")
    _started_as(tmp_path, "big", topology="dc1:2", first_address="127.0.7.1")
    (tmp_path / "data" / "clusters" / "half-made").mkdir()          # no cluster.json: never started
    out = _cli(tmp_path, action, "--name", "prob")
    where = tmp_path / "data" / "clusters"
    assert (out.returncode, out.stdout, out.stderr) == (
        2, "", f"cassperf: error: no local cluster named 'prob' in {where}; known clusters: big, probe\n")
    assert sorted(p.name for p in where.iterdir()) == ["big", "half-made", "probe"]   # destroy removed nothing


def test_an_unknown_cluster_name_with_none_started_says_how_to_start_one(tmp_path):
    out = _cli(tmp_path, "status", "--name", "never-started")
    assert (out.returncode, out.stdout, out.stderr) == (
        2, "", f"cassperf: error: no local cluster named 'never-started' in {tmp_path / 'data' / 'clusters'}, "
               f"and none has been started there; start one with `cassperf cluster start --name never-started`\n")


@pytest.mark.parametrize("address", ["localhost", "::1", "10.0.0.5", "127.0.0"])
def test_first_address_must_be_a_loopback_ipv4_address(tmp_path, address):
    # issue 11, item 6: `cluster start --first-address localhost` (or ::1) was a traceback
    out = _cli(tmp_path, "start", "--name", "harden-addr", "--first-address", address, "--heap-mb", "512")
    assert (out.returncode, out.stdout, out.stderr) == (
        2, "", f"cassperf: error: --first-address {address!r}: local nodes listen on loopback only; give an IPv4 "
               f"address in 127.0.0.0/8, e.g. 127.0.1.1 (not a host name, not IPv6)\n")
    assert not (tmp_path / "data" / "clusters" / "harden-addr").exists()      # nothing was made
