"""The deployment study's analysis on runs of known content: node CPU over a window from the
sampler's per-sample process CPU, CPU per 1,000 rows, runs split by machine (label and
hardware record), the published table per machine, and the deployment tokens refused in one line."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from cassperf.analysis import Window
from cassperf.analysis.deployments import deployment_rows, deployment_tables, published_table, workload_of
from cassperf.analysis.format import fmt_rows
from cassperf.analysis.machines import machine_groups, machine_of
from cassperf.analysis.node_cpu import cpu_ms_per_1k_rows, node_cpu_cores
from cassperf.errors import ConfigError
from cassperf.experiments.deployment import parse_deployments
from tests.unit.analysis_runs import STARTED, lognormal, make_run

T0 = pd.Timestamp(STARTED)
HOST = {"cpu_model": "Intel(R) Xeon(R) CPU E5-2620 v3 @ 2.40GHz", "cpu_cores": 2, "ram_bytes": 24 * 2**30,
        "hostname": "vm1"}


def cpu_metrics(values: dict[str, list[float]], step_s: float = 1.0) -> pd.DataFrame:
    """process_cpu_pct samples at t = 0, step, 2*step, ... per node."""
    return pd.DataFrame([{"time": T0 + pd.Timedelta(seconds=i * step_s), "node": node, "metric": "process_cpu_pct",
                          "value": v} for node, vs in values.items() for i, v in enumerate(vs)])


def run_with(labels: dict[str, str], per_interval: int = 100, n: int = 10, machine: dict | None = None,
             cpu: dict[str, list[float]] | None = None, run_id: str = "r", ops: tuple[str, ...] = ("write",)):
    run, _ = make_run({op: lognormal(1.0, per_interval=per_interval) for op in ops}, n, labels=labels, run_id=run_id)
    if machine is not None:
        run.manifest["machine"] = machine
    if cpu is not None:
        run.metrics = cpu_metrics(cpu)
    return run


def test_node_cpu_integrates_each_sample_over_the_span_before_it_and_sums_nodes():
    # sample i covers (i-1, i]; the first sample (999%) covers an unknown span and is not used
    run = run_with({}, cpu={"node1": [999, 100, 200, 300, 400, 500]})
    assert node_cpu_cores(run, Window(0.5, 3.5)) == pytest.approx((0.5 * 1.0 + 2.0 + 3.0 + 0.5 * 4.0) / 3.0)
    two = run_with({}, cpu={"node1": [0, 150, 150, 150, 150], "node2": [0, 50, 50, 50, 50]})
    assert node_cpu_cores(two, Window(1.0, 4.0)) == pytest.approx(2.0)


def test_node_cpu_is_unknown_without_samples_or_when_they_cover_under_half_the_window():
    assert math.isnan(node_cpu_cores(run_with({}), Window(0, 5)))
    run = run_with({}, cpu={"node1": [0, 100, 100]})          # covers (0, 2]
    assert math.isnan(node_cpu_cores(run, Window(0, 5)))
    assert node_cpu_cores(run, Window(0, 3)) == pytest.approx(1.0)


def test_cpu_per_thousand_rows():
    assert cpu_ms_per_1k_rows(1.5, 3000.0) == pytest.approx(500.0)   # 1.5 CPU-s/s over 3,000 rows/s
    assert math.isnan(cpu_ms_per_1k_rows(math.nan, 3000.0)) and math.isnan(cpu_ms_per_1k_rows(1.0, 0.0))


def test_published_number_style_of_the_deployment_study():
    assert fmt_rows(60263.4) == "60 263" and fmt_rows(4126) == "4 126" and fmt_rows(950) == "950"
    assert fmt_rows(12.34, 1) == "12.3" and fmt_rows(None) == "n/a" and fmt_rows(math.nan) == "n/a"


def test_machines_split_by_label_and_hardware_with_a_loud_note():
    same_a = run_with({"machine": "ws"}, machine=HOST, run_id="a")
    same_b = run_with({"machine": "ws"}, machine={**HOST, "hostname": "other"}, run_id="b")
    more_cores = run_with({"machine": "ws"}, machine={**HOST, "cpu_cores": 4}, run_id="c")
    imported = run_with({"machine": "server2"}, run_id="d")
    unlabelled = run_with({}, machine=HOST, run_id="e")
    groups = machine_groups([same_a, same_b, more_cores, imported, unlabelled])
    assert [[r.run_id for r in g.runs] for g in groups] == [["a", "b"], ["c"], ["d"], ["e"]]
    assert groups[0].title == "ws (Intel(R) Xeon(R) CPU E5-2620 v3 @ 2.40GHz, 2 cores, 24 GiB)"
    assert groups[1].title == "ws (Intel(R) Xeon(R) CPU E5-2620 v3 @ 2.40GHz, 4 cores, 24 GiB)"
    for g in groups[:2]:
        assert g.note.startswith("machine 'ws' names runs on 2 different hardware records") and "NOT compared" in g.note
    assert groups[2].title == "server2 (hardware not recorded)"
    assert "carry no hardware record" in groups[2].note
    assert machine_of(unlabelled).name == "vm1" and groups[3].note == ""


def test_the_table_per_machine_holds_the_row_rates_and_cpu_of_its_runs():
    cpu = {"node1": [0] + [150.0] * 12}
    w = run_with({"deployment": "5.0.6-java17-disk", "op": "write", "machine": "ws"}, 100, machine=HOST, cpu=cpu,
                 run_id="w")
    r = run_with({"deployment": "5.0.6-java17-disk", "op": "read", "machine": "ws"}, 200, machine=HOST, cpu=cpu,
                 run_id="r")
    m = run_with({"deployment": "4.1.10-java11-disk", "op": "mixed", "machine": "ws"}, 50, machine=HOST, cpu=cpu,
                 run_id="m", ops=("read", "write"))
    docker = run_with({"deployment": "Docker", "machine": "server2"}, 40, run_id="x")
    docker.manifest["command"] = "write n=25000 no-warmup cl=ONE -rate threads=3"
    ignored = run_with({"deployment": "Docker", "machine": "server2"}, 40, run_id="y")
    ignored.manifest["command"] = "user profile=x.yaml ops(insert=1)"
    assert workload_of(docker) == "write" and workload_of(ignored) is None
    rows, groups = deployment_rows([w, r, m, docker, ignored])
    assert list(rows["run_id"]) == ["w", "r", "m", "x"]
    assert list(rows["row_rate_s"]) == pytest.approx([100.0, 200.0, 100.0, 40.0])   # mixed: reads + writes
    assert list(rows["node_cpu_cores"][:3]) == pytest.approx([1.5] * 3)
    assert list(rows["cpu_ms_per_1k_rows"][:3]) == pytest.approx([15000.0, 7500.0, 15000.0])
    assert math.isnan(rows["cpu_ms_per_1k_rows"].iloc[3])
    tables = deployment_tables([w, r, m, docker, ignored])
    assert [g.machine.name for g, _ in tables] == ["ws", "server2"]
    ws = tables[0][1]
    assert list(ws.columns) == ["Deployment", "Write (row/s)", "Write node CPU (ms/1k rows)", "Read (row/s)",
                                "Read node CPU (ms/1k rows)", "Mixed (row/s)", "Mixed node CPU (ms/1k rows)"]
    assert ws.to_dict(orient="records") == [
        {"Deployment": "5.0.6-java17-disk", "Write (row/s)": "100", "Write node CPU (ms/1k rows)": "15 000.0",
         "Read (row/s)": "200", "Read node CPU (ms/1k rows)": "7 500.0", "Mixed (row/s)": "-",
         "Mixed node CPU (ms/1k rows)": "-"},
        {"Deployment": "4.1.10-java11-disk", "Write (row/s)": "-", "Write node CPU (ms/1k rows)": "-",
         "Read (row/s)": "-", "Read node CPU (ms/1k rows)": "-", "Mixed (row/s)": "100",
         "Mixed node CPU (ms/1k rows)": "15 000.0"}]
    assert tables[1][1].iloc[0].to_dict() == {
        "Deployment": "Docker", "Write (row/s)": "40", "Write node CPU (ms/1k rows)": "n/a", "Read (row/s)": "-",
        "Read node CPU (ms/1k rows)": "-", "Mixed (row/s)": "-", "Mixed node CPU (ms/1k rows)": "-"}
    assert published_table(rows, "nowhere").empty and len(groups) == 2


@pytest.mark.parametrize("text, message", [
    ("5.0.6:java8:disk", "deployments: '5.0.6:java8:disk': Cassandra 5.0 runs on Java 11 or 17, not 8"),
    ("4.1.10:java17:disk", "deployments: '4.1.10:java17:disk': Cassandra 4.1 runs on Java 8 or 11, not 17"),
    ("5.0.6:java17:nfs", "deployments: '5.0.6:java17:nfs' is not VERSION:javaN:STORAGE with STORAGE one of disk, "
                         "tmpfs, e.g. '5.0.6:java17:disk'"),
    ("3.11.16:java8:disk", "deployments: '3.11.16:java8:disk': Cassandra 3.11.16 is not a line cassperf runs "
                           "locally (5.0.x, 4.1.x, 4.0.x)"),
    ("5.0.6:java17:disk,5.0.6:java17:disk", "deployments: '5.0.6:java17:disk' is given twice"),
    (" , ", "deployments: empty; give at least one, e.g. '5.0.6:java17:disk,5.0.6:java17:tmpfs'"),
])
def test_a_bad_deployment_is_refused_in_one_line(text, message):
    with pytest.raises(ConfigError) as err:
        parse_deployments(text)
    assert str(err.value) == message


def test_deployments_parse_to_labels_and_cluster_slugs():
    deps = parse_deployments("5.0.6:java17:disk, 4.1.10:java11:tmpfs")
    assert [d.name for d in deps] == ["5.0.6-java17-disk", "4.1.10-java11-tmpfs"]
    assert [d.slug for d in deps] == ["5_0_6-java17-disk", "4_1_10-java11-tmpfs"]
    assert deps[1].title == "Cassandra 4.1.10 on Java 11, data on tmpfs"


def test_an_imported_log_publishes_the_row_rate_its_tool_printed():
    """cassandra-stress 5.0 printed `Row rate : 3,059 row/s` over its whole run: the table shows that
    figure, not the intervals' length-weighted rate (which differs by the partial last interval)."""
    from pathlib import Path

    from cassperf.analysis.deployments import summary_row_rate
    from cassperf.parsers import parse

    run = parse(Path(__file__).parents[1] / "fixtures" / "cassandra-stress-5.0" / "runner-write.txt").runs[0]
    run.manifest["labels"] = {"deployment": "Ubuntu", "machine": "server"}
    assert summary_row_rate(run) == 3059.0
    rows, _ = deployment_rows([run])
    assert rows.iloc[0][["row_rate_s", "row_rate_source"]].tolist() == [3059.0, "tool summary"]
    assert deployment_tables([run])[0][1].iloc[0]["Write (row/s)"] == "3 059"


def test_repeated_runs_of_one_cell_show_their_mean_and_ci():
    runs = [run_with({"deployment": "d", "op": "write", "machine": "ws"}, rate, machine=HOST, run_id=f"w{i}")
            for i, rate in enumerate((100, 110, 120))]
    rows, groups = deployment_rows(runs)
    cell = published_table(rows, groups[0].title).iloc[0]["Write (row/s)"]
    assert cell == "110 ± 25"     # mean 110, t(0.975, 2) = 4.303 x 10 / sqrt(3) = 24.8
