"""What the report says, before the first study, that this machine will not make of the selected
studies (cassperf.experiments.host_needs): the studies are the real notebooks' Study objects with
their parameter sets, the machine a Host with or without root and the packages `make report`
installs."""

from __future__ import annotations

import pytest

from cassperf.experiments.host_needs import CONTAINER_TOOLS, TOOLS, Gap, Host, gaps
from cassperf.report.params import resolve, select_notebooks
from cassperf.workbook.preflight import check_studies, host_gap_lines

EVERYTHING = frozenset(TOOLS)


def _studies(parameter_set: str = "local", **explicit: object) -> list:
    """(notebook, Study) of 02, 04 and 05 with the set's parameters and those of ``explicit`` each declares."""
    out = []
    for path in select_notebooks(["02-multi-dc", "04-deployment-comparison", "05-storage-and-cache"]):
        declared = resolve(path, parameter_set, {}).declared
        out.append(resolve(path, parameter_set, {k: v for k, v in explicit.items() if k in declared}))
    return check_studies(out)


def test_a_fresh_machine_without_root_is_told_each_missing_part_and_the_command_that_adds_it() -> None:
    assert host_gap_lines(_studies(), Host(frozenset(), root=False)) == [
        "not made on this machine (each report says so too):",
        "  02-multi-dc: the network baseline's iperf3 rows will say \"not measured\" (iperf3 not installed); "
        "add it: sudo make iperf3",
        "  02-multi-dc: the network baseline's ping rows will say \"not measured\" (ping not installed); "
        "add it: sudo make ping",
        "  02-multi-dc: no 27 ms distance between the DCs (the study runs without it: network namespaces need "
        "root); add it: sudo make report",
        "  04-deployment-comparison: deployment 5.0.6-java17-container will not be made (podman, runc, debootstrap "
        "not installed; container nodes run under rootful podman, which needs root); add it: sudo make report",
    ]


def test_root_without_the_packages_is_told_the_make_targets() -> None:
    assert host_gap_lines(_studies(), Host(frozenset({"podman", "ping", "ip"}), root=True)) == [
        "not made on this machine (each report says so too):",
        "  02-multi-dc: the network baseline's iperf3 rows will say \"not measured\" (iperf3 not installed); "
        "add it: make iperf3",
        "  04-deployment-comparison: deployment 5.0.6-java17-container will not be made (runc, debootstrap not "
        "installed); add it: make container",
    ]


def test_root_without_iproute2_gets_no_distance_between_the_dcs() -> None:
    multidc = [(r.notebook.stem, s, "") for r, s in _studies() if r.notebook.stem == "02-multi-dc"]
    assert [g.line() for g in gaps(multidc, Host(EVERYTHING - {"ip"}, root=True))] == [
        "02-multi-dc: no 27 ms distance between the DCs (the study runs without it: iproute2's ip not installed); "
        "add it: apt-get install iproute2"]


def test_root_with_what_make_report_installs_hears_nothing() -> None:
    assert host_gap_lines(_studies(), Host(EVERYTHING, root=True)) == []


def test_the_packages_without_root_still_leave_the_container_and_the_distance_out() -> None:
    assert [g.line() for g in gaps([(r.notebook.stem, s, "") for r, s in _studies()], Host(EVERYTHING, False))] == [
        "02-multi-dc: no 27 ms distance between the DCs (the study runs without it: network namespaces need root); "
        "add it: sudo make report",
        "04-deployment-comparison: deployment 5.0.6-java17-container will not be made (container nodes run under "
        "rootful podman, which needs root); add it: sudo make report",
    ]


def test_on_your_cluster_nothing_is_made_here_but_the_baseline_tools_of_local_clients() -> None:
    studies = _studies(contact_points="10.0.0.1", deployment_name="Ubuntu")
    triples = [(r.notebook.stem, s, "10.0.0.1") for r, s in studies]
    assert [g.line() for g in gaps(triples, Host(frozenset(), root=False))] == [
        "02-multi-dc: the network baseline's iperf3 rows will say \"not measured\" (iperf3 not installed); "
        "add it: sudo make iperf3",
        "02-multi-dc: the network baseline's ping rows will say \"not measured\" (ping not installed); "
        "add it: sudo make ping",
    ]
    remote_clients = _studies(contact_points="10.0.0.1", deployment_name="Ubuntu",
                              client_hosts="dc1=10.0.0.20,dc2=10.1.0.20")
    assert gaps([(r.notebook.stem, s, "10.0.0.1") for r, s in remote_clients], Host(frozenset(), False)) == []


def test_the_loop_device_configurations_need_root() -> None:
    studies = _studies(loop_chunk_kbs=[4, 64])
    storage = [(r.notebook.stem, s, "") for r, s in studies if r.notebook.stem == "05-storage-and-cache"]
    assert gaps(storage, Host(EVERYTHING, root=False)) == [
        Gap("05-storage-and-cache", "the loop-device configurations (4 KiB, 64 KiB) will be left out (loop devices "
                                    "need root)", "sudo make report")]
    assert gaps(storage, Host(EVERYTHING, root=True)) == []


def test_analyse_only_runs_nothing_so_it_needs_nothing() -> None:
    assert host_gap_lines(_studies(analyse_only=True), Host(frozenset(), root=False)) == []


@pytest.mark.parametrize("tool", CONTAINER_TOOLS)
def test_any_one_container_tool_missing_is_named(tool: str) -> None:
    deployment = [(r.notebook.stem, s, "") for r, s in _studies() if r.notebook.stem == "04-deployment-comparison"]
    [gap] = gaps(deployment, Host(EVERYTHING - {tool}, root=True))
    assert gap.missing == f"deployment 5.0.6-java17-container will not be made ({tool} not installed)"
