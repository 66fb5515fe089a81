"""`cassperf run`: what it refuses, before any load starts, and the message it gives."""

from __future__ import annotations

import json

import pytest

from cassperf.cli import main


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("CASSPERF_HOME", str(tmp_path))
    monkeypatch.delenv("CASSPERF_DATA", raising=False)
    return tmp_path


def _error(capsys, *argv: str) -> str:
    assert main(["run", *argv]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.startswith("cassperf: error: ") and out.err.count("\n") == 1, out.err
    return out.err.removeprefix("cassperf: error: ").strip()


def test_a_cluster_never_started_is_named_with_the_command_that_starts_it(home, capsys):
    assert _error(capsys, "--cluster", "nope", "write", "n=10") == (
        "no local cluster named 'nope' has been started; start it with `cassperf cluster start --name nope` "
        "or name a cluster with --hosts")


def test_a_stopped_cluster_names_its_nodes_that_are_down(home, capsys):
    root = home / "data" / "clusters" / "big"
    root.mkdir(parents=True)
    (root / "cluster.json").write_text(json.dumps({"name": "big", "topology": "dc1:2", "first_address": "127.0.7.1"}))
    assert _error(capsys, "--cluster", "big", "write", "n=10") == (
        "local cluster 'big' is not running (node1, node2 down); start it with `cassperf cluster start --name big`")


def test_a_bad_command_gets_the_spec_error_before_any_cluster_is_looked_for(home, capsys):
    msg = _error(capsys, "write", "n=10", "cl=LOCAL_QUARUM")
    assert "LOCAL_QUARUM" in msg and "LOCAL_QUORUM" in msg and "EACH_QUORUM" in msg


def test_one_quoted_string_and_separate_words_are_the_same_command(home, capsys):
    one = _error(capsys, "write n=10 cl=LOCAL_QUARUM -rate threads=4")
    words = _error(capsys, "write", "n=10", "cl=LOCAL_QUARUM", "-rate", "threads=4")
    assert one == words


def test_a_label_without_a_value_and_a_missing_command(home, capsys):
    assert _error(capsys, "--label", "rf", "write", "n=10") == "--label 'rf': expected KEY=VALUE, e.g. --label rf=3"
    assert _error(capsys).startswith("no command: give a cassandra-stress command line")
