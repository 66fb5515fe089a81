"""run_spec, the one entry point: what it refuses before anything is created, and when a stored
run is a failed run."""

from __future__ import annotations

import pandas as pd
import pytest

from cassperf.errors import ConfigError
from cassperf.results.model import Run
from cassperf.workload.run import MAX_ERROR_SHARE, failure_of, run_spec
from cassperf.workload.runners.streaming import ToolNotFoundError
from cassperf.workload.spec import WorkloadSpec


class Unreachable:
    """A cluster handle whose session() must never be asked for (the tool check comes first)."""

    contact_points = ["127.0.0.1"]

    def session(self):  # noqa: ANN201
        raise AssertionError("the cluster was contacted before the tool was found")


def test_a_missing_tool_is_refused_before_the_cluster_is_asked_and_nothing_is_created(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.delenv("LATTE", raising=False)
    monkeypatch.delenv("CASSPERF_LATTE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CARGO_HOME", raising=False)
    root = tmp_path / "runs"
    with pytest.raises(ToolNotFoundError, match="latte"):
        run_spec(WorkloadSpec(n=10), Unreachable(), tool="latte", root=root)
    assert not root.exists(), "a refused run leaves nothing behind"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"tool": "ycsb"}, r"tool 'ycsb': expected one of engine, cassandra-stress, latte"),
    ({"processes": 0}, r"processes=0: expected a whole number >= 1"),
    ({"sampler": {"interval_s": -1}}, r"sampler interval_s=-1: expected seconds > 0"),
    ({"max_error_share": 1.5}, r"max_error_share=1.5: expected a share in \[0, 1\)"),
])
def test_bad_options_are_one_clear_line_before_anything_runs(tmp_path, kwargs, message):
    with pytest.raises(ConfigError, match=message):
        run_spec(WorkloadSpec(n=10), Unreachable(), root=tmp_path / "runs", **kwargs)
    assert not (tmp_path / "runs").exists()


def _run(rows: list[tuple[str, int, int]]) -> Run:
    return Run({"run_id": "r"}, summary=pd.DataFrame([{"op": op, "count": ok, "errors": err} for op, ok, err in rows]))


def test_a_run_with_no_successful_operation_is_failed():
    assert failure_of(_run([("write", 0, 100)])) == "no operation succeeded (100 failed)"


def test_a_run_whose_error_share_passes_the_threshold_is_failed_and_below_it_is_not():
    assert failure_of(_run([("read", 900, 50), ("write", 940, 0)])) is None            # 50 of 1,940: 2.6%
    assert failure_of(_run([("read", 900, 60), ("write", 0, 60)])) == \
        "120 of 1,020 operations failed (11.8%, more than max_error_share=5%)"
    assert failure_of(_run([("read", 900, 60)]), max_error_share=0.10) is None        # 6.2% under 10%
    assert MAX_ERROR_SHARE == 0.05


def test_a_run_that_recorded_nothing_is_failed():
    assert failure_of(Run({"run_id": "r"})) == "the run recorded no operations"


def test_a_tool_run_goes_into_one_writer_opened_once(tmp_path):
    """cassandra-stress and latte runs are written through a writer run_spec opens itself (it used
    to enter it a second time and every tool run failed with 'was already opened')."""
    from pathlib import Path
    import sys

    from cassperf.results.store import load_run
    from cassperf.workload.run import _run_tool

    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "latte-0.29" / "write-unthrottled.txt"
    exe = tmp_path / "latte"
    exe.write_text(f"#!{sys.executable}\nimport sys\nif sys.argv[1:] == ['--version']:\n    print('latte 0.29.0')\n"
                   f"else:\n    sys.stdout.write(open({str(fixture)!r}).read())\n")
    exe.chmod(0o755)
    cluster = type("Plain", (), {"contact_points": ["127.0.0.1"], "port": 9042, "tls": None})()
    run_id = _run_tool("latte", exe, WorkloadSpec(op="write", n=10), cluster, {"part": "x"}, None, None,
                       tmp_path / "runs", None, False)
    run = load_run(run_id, root=tmp_path / "runs")
    assert run.complete and run.manifest["labels"] == {"part": "x"} and int(run.summary["count"].sum()) > 0
