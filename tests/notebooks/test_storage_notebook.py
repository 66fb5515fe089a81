"""Notebook 05 (storage and cache) run by papermill in a real kernel with its test parameter set
against a real one-node embedded cluster and, beside it, a second one on a real loop-device ext4
filesystem (root): 2 randomized blocks in which the arms of both storages interleave, the
warm-up, the calibration, the cold runs, the A/A control. What it publishes is checked against
the stored runs and the study's record, and nothing of the loop filesystem is left after it."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from cassperf import config
from cassperf.experiments.outcome import load_outcome
from cassperf.experiments.storage_cache import StorageStudy
from cassperf.experiments.study import Calibrated
from cassperf.results.catalog import catalog
from cassperf.storage.facts import storage_name
from cassperf.storage.loopfs import storage_of
from tests.conftest import cassperf_processes
from tests.notebooks.studykit import check_in_chromium, check_report_shape, execute_study, study_data  # noqa: F401

# beside another file in make test: its own cache drop and restarts only slow a neighbour, and what it asserts
# (the slots' notes, the order, the claims' words) no neighbour moves; the tests a drop would move are `alone`
pytestmark = [pytest.mark.notebook, pytest.mark.cluster]

NB = "05-storage-and-cache.ipynb"
WHERE = {"cluster_name": "storagetest", "first_address": "127.0.23.1"}
LOOP = "storagetest-dc1_1-loop"


def _loop_leftovers(data: Path) -> list[str]:
    """Mounts, loop devices and backing files of loop filesystems under ``data``."""
    mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()
              if line.split()[4].startswith(str(data))]
    backing = [str(p) for p in (data / "loopfs").rglob("backing.img")] if (data / "loopfs").exists() else []
    attached = [line for line in subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout.splitlines()
                if str(data) in line]
    return mounts + backing + attached


@pytest.fixture(scope="module")
def storage_data(study_data: Path) -> Iterator[Path]:  # noqa: F811
    """study_data, and after the module (also when a test failed) every loop filesystem the
    notebooks left under it unmounted and detached, its nodes killed first (study_data's stop
    comes after this, so the nodes are killed here)."""
    try:
        yield study_data
    finally:
        for proc in cassperf_processes(study_data):
            proc.kill()
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            if line.split()[4].startswith(str(study_data)):
                subprocess.run(["umount", "-l", line.split()[4]], check=False)
        for line in subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout.splitlines():
            if str(study_data) in line:
                subprocess.run(["losetup", "-d", line.split(":")[0]], check=False)


def test_storage_notebook_interleaves_both_storages_in_randomized_blocks_and_leaves_no_loop_behind(
        storage_data, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the loop-device configuration needs root")
    run = execute_study(NB, tmp_path / "first", **WHERE)
    check_report_shape(run)
    params = yaml.safe_load((config.notebooks_dir() / "params" / "test" / "05-storage-and-cache.yaml").read_text())
    study = StorageStudy.from_parameters(params)
    outcome = load_outcome(study)
    record = outcome.record
    cal = record["calibration"]
    knee = cal["knee"]
    sweep, empty_at = study.sweep(Calibrated.from_json(cal))
    assert empty_at == knee and knee in sweep and len(sweep) == 3 and cal["op"] == "read"
    # every arm once per block, the A/A twin among them
    arms = outcome.arm_names
    expected = [f"{s} {c} KiB, full, {t} threads" for s, c in (("disk", 4), ("disk", 64), ("loop", 64)) for t in sweep]
    expected += [f"{s} 64 KiB, empty, run {r}" for s in ("disk", "loop") for r in "ab"]
    expected += [f"disk 64 KiB, full, {knee} threads (A/A)"]
    assert sorted(arms) == sorted(expected)
    measured = catalog(study="storage-and-cache", experiment="test", role="measure")
    assert measured["complete"].all()
    assert sorted(zip(measured["arm"], measured["block"], strict=True)) == sorted((a, b) for a in arms for b in "12")
    # run b right after its run a; the two storages interleave within a block
    order = record["order"]
    for block in (1, 2):
        names = [o[2] for o in order if o[0] == block]
        for s in ("disk", "loop"):
            assert names.index(f"{s} 64 KiB, empty, run b") == names.index(f"{s} 64 KiB, empty, run a") + 1
        storages = [n.split()[0] for n in names]
        switches = sum(1 for x, y in zip(storages, storages[1:], strict=False) if x != y)
        assert switches >= 2, storages
    # the empty-cache run a followed the caches' emptying (no restart in the test set: test_jmx_ops restarts),
    # the full-cache runs a filled page cache
    slots = record["slots"]
    cold = ("cold: memtables flushed, key and row caches invalidated, nodes not restarted: the JVM stays warm (and a "
            "chunk cache, where file_cache_enabled turns one on), OS page cache dropped")
    assert all(slots[f"{b}/{s} 64 KiB, empty, run a"]["note"] == cold for b in "12" for s in ("disk", "loop"))
    warm = slots[f"1/loop 64 KiB, full, {knee} threads"]["note"]
    assert warm.startswith(f"warm: rows 1..{study.read_rows} of storage_c64 read once ("), warm
    # measured configurations: the data folder's disk, the loop device; system_schema's chunk
    confs = {c["configuration"]: c for c in record["baseline"][-1]["configurations"]}
    here = storage_of(storage_data)
    assert {k: confs[k]["measured_storage"] for k in confs} == {
        "disk 4 KiB": storage_name(here), "disk 64 KiB": storage_name(here), "loop 64 KiB": "ext4 on a loop device"}
    assert confs["loop 64 KiB"]["storage_device"].startswith("/dev/loop")
    assert [confs[k]["compression"] for k in ("disk 4 KiB", "disk 64 KiB", "loop 64 KiB")] == [
        "LZ4Compressor, chunk_length_in_kb=4", "LZ4Compressor, chunk_length_in_kb=64",
        "LZ4Compressor, chunk_length_in_kb=64"]
    # nothing of the loop filesystem is left: no mount, loop device, backing file, or node
    assert _loop_leftovers(storage_data) == []
    assert not [p for p in cassperf_processes(storage_data) if LOOP in " ".join(p.cmdline())]
    # the published claims are the analysis function's on the stored runs
    expected_claims = outcome.study.analysis().conclude(outcome).claims
    assert [c["verdict"] for c in run.claims] == expected_claims["verdict"].tolist()
    assert [c["claim"] for c in run.claims] == expected_claims["claim"].tolist()
    assert run.claims[3]["measured"] == "needs 128 KiB and 64 or 256 KiB on one storage (chunk_kbs)"
    # (unless the A/A control of these 2-block test runs came out significant: then every claim is withheld)
    # a chunk claim on a table's compression chunk, with no RAID array here: not tested here, with what varied
    assert (run.claims[3]["verdict"] == "not tested here" and run.claims[3]["reason"].startswith(
        "the RAID stripe did not take: no RAID array under the data folder; what varied is the table's compression "
        "chunk (4 KiB, 64 KiB)")) or (
        run.claims[0]["verdict"] == "does not hold" and run.claims[3]["reason"].startswith("withheld: the A/A control"))
    # the runbook is printed for the study's chunk sizes and nothing is run
    text = run.text()
    assert "mdadm --create /dev/md0 --level=raid0 --chunk=128 --raid-devices=4 /dev/sdc /dev/sdd /dev/sde /dev/sdf" \
        in text
    assert "<p>Printed only: <code>allow_destructive</code> is False.</p>" in text
    check_in_chromium(run, tmp_path)
    # analyse_only rebuilds the same claims from the store, no cluster; asked to run the runbook without
    # an explicit device list it refuses in one line and runs nothing
    only = execute_study(NB, tmp_path / "only", analyse_only=True, allow_destructive=True, **WHERE)
    assert only.claims == run.claims
    assert ("<b>Runbook not run:</b> not run: pass the devices the runbook may erase explicitly, e.g. "
            "devices=[&#x27;/dev/nvme1n1&#x27;, &#x27;/dev/nvme2n1&#x27;]") in only.text()
