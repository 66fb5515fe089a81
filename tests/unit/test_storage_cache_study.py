"""The storage-and-cache study's plan and hooks (cassperf.experiments.storage_cache), without
nodes: the parameters it refuses, the arms it plans around a calibrated knee with their labels,
contexts and before-actions, what stays out of the plan key, the loop configurations left out
(and said) where this machine cannot make them, the cluster beside the first, and the storage
facts (cassperf.storage.facts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassperf.errors import ConfigError
from cassperf.experiments import storage_cache as sc
from cassperf.experiments.runner import LocalRunner
from cassperf.experiments.node_actions import make_warm
from cassperf.experiments.study import Calibrated
from cassperf.storage.facts import measure_storage, storage_name
from cassperf.storage.loopfs import Storage
from cassperf.workload.runners.stress_cmdline import to_stress_command


def _knee(k: int) -> Calibrated:
    return Calibrated(((1, 100.0), (k, 900.0), (4 * k, 950.0)), k, 950.0, "read")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"threads": [4, 4]}, "threads=[4, 4]: expected client thread counts, each a whole number >= 1, none named twice "
                          "(empty: around the calibrated knee; the study: [4, 8, 16, 32, 64, 128, 256, 512])"),
    ({"threads": [0]}, "threads=[0]: expected client thread counts, each a whole number >= 1, none named twice "
                       "(empty: around the calibrated knee; the study: [4, 8, 16, 32, 64, 128, 256, 512])"),
    ({"threads": [4, 16], "empty_threads": 8}, "empty_threads=8 is not in threads=[4, 16]: the empty-cache runs are "
                                               "compared with the full-cache run at the same thread count; pick one "
                                               "of threads"),
    ({"chunk_kbs": [4, 48]}, "chunk_kbs=[4, 48]: expected chunk sizes in KiB, each a power of two >= 1, none named "
                             "twice, at least one (e.g. [64]: the calibration and the A/A control run on the data "
                             "folder's disk)"),
    ({"chunk_kbs": []}, "chunk_kbs=[]: expected chunk sizes in KiB, each a power of two >= 1, none named twice, at "
                        "least one (e.g. [64]: the calibration and the A/A control run on the data folder's disk)"),
    ({"empty_chunk_kbs": [128]}, "empty_chunk_kbs=[128]: 128 is in neither chunk_kbs nor loop_chunk_kbs"),
    ({"rows": 0}, "rows=0: expected a whole number >= 1"),
    ({"loop_size_mb": 10}, "loop_size_mb=10: expected a whole number of MiB >= 64"),
    ({"run_s": 2, "interval_s": 0.25}, "run_s=2 at interval_s=0.25 gives 8 intervals: a run needs at least 20; "
                                       "raise run_s or lower interval_s"),
])
def test_bad_parameters_are_refused_in_one_line(kwargs, message) -> None:
    with pytest.raises(ConfigError) as info:
        sc.StorageStudy(**kwargs)
    assert str(info.value) == message


def test_the_sweep_spans_the_calibrated_knee_and_the_empty_runs_sit_at_it() -> None:
    study = sc.StorageStudy()
    assert study.sweep(_knee(8)) == ([2, 8, 32], 8)
    assert study.sweep(_knee(1)) == ([1, 4, 16], 1)       # no point below a knee of 1: the sweep goes up
    assert sc.StorageStudy(threads=[32, 4, 8]).sweep(None) == ([4, 8, 32], 8)
    assert sc.StorageStudy(threads=[4, 8], empty_threads=4).sweep(None) == ([4, 8], 4)
    assert study.calibration_spec() is not None and study.calibration_spec().keyspace == "storage_c64"
    assert sc.StorageStudy(threads=[4]).calibration_spec() is None


def test_every_configuration_gets_the_sweep_and_the_empty_ones_a_chain_on_their_own_cluster(monkeypatch) -> None:
    monkeypatch.setattr(sc.StorageStudy, "loop_problem", None)
    study = sc.StorageStudy(chunk_kbs=[4, 64], loop_chunk_kbs=[64], empty_chunk_kbs=[64], rows=1000, read_rows=200,
                            run_s=5, interval_s=0.25)
    arms = study.arms(_knee(8))
    got = [(a.name, a.context, a.follows, a.spec.concurrency) for a in arms]
    assert got == [
        ("disk 4 KiB, full, 8 threads", "", None, 8),          # not in sweep_chunk_kbs: the knee's point only
        ("disk 64 KiB, full, 2 threads", "", None, 2), ("disk 64 KiB, full, 8 threads", "", None, 8),
        ("disk 64 KiB, full, 32 threads", "", None, 32),
        ("disk 64 KiB, empty, run a", "", None, 8), ("disk 64 KiB, empty, run b", "", "disk 64 KiB, empty, run a", 8),
        ("loop 64 KiB, full, 2 threads", "loop", None, 2), ("loop 64 KiB, full, 8 threads", "loop", None, 8),
        ("loop 64 KiB, full, 32 threads", "loop", None, 32),
        ("loop 64 KiB, empty, run a", "loop", None, 8),
        ("loop 64 KiB, empty, run b", "loop", "loop 64 KiB, empty, run a", 8)]
    assert dict(arms[5].labels) == {"storage": "disk", "chunk_kb": "64", "cache": "empty", "run": "b", "concurrency": "8"}
    # full runs fill the page cache first, run a empties the caches, run b follows at once
    assert [a.before is not None for a in arms[3:6]] == [True, True, False]
    # runs a and b share their run-to-run spread with the full-cache reads at their load
    assert [a.pool_label for a in arms[3:6]] == ["read x32", "read x8", "read x8"]
    read = arms[0].spec
    assert (read.op, read.duration, read.n, read.keyspace, read.compression.chunk_length_in_kb) == \
        ("read", 5, None, "storage_c4", 4)
    assert "-pop dist=UNIFORM(1..200)" in to_stress_command(read, schema_precreated=True)   # the working set
    every = sc.StorageStudy(rows=1000, read_rows=0).read_spec(64, 8)
    assert "-pop dist=UNIFORM(1..1000)" in to_stress_command(every, schema_precreated=True)
    assert study.aa_arm(arms) == "disk 64 KiB, full, 8 threads"
    assert [(p.name, p.context, p.spec.n) for p in study.preparations()] == [
        ("disk 4 KiB", "", 1000), ("disk 64 KiB", "", 1000), ("loop 64 KiB", "loop", 1000)]
    warm = study.warm_spec()
    assert (warm.op, warm.keyspace, warm.concurrency) == ("read", "storage_c64", 16)
    # the warm-up reads the reference chunk on every cluster: loaded on the loop one too where it is not its own
    assert [(p.name, p.context) for p in sc.StorageStudy(chunk_kbs=[64], loop_chunk_kbs=[256],
                                                         empty_chunk_kbs=[]).preparations()] == [
        ("disk 64 KiB", ""), ("loop 256 KiB", "loop"), ("loop 64 KiB (warm-up)", "loop")]


def test_a_named_cluster_leaves_the_loop_configurations_out_and_says_so() -> None:
    study = sc.StorageStudy(contact_points="10.0.0.4", chunk_kbs=[4, 64, 256], loop_chunk_kbs=[64, 256])
    assert [c.name for c in study.configurations()] == ["disk 4 KiB", "disk 64 KiB", "disk 256 KiB"]
    assert study.setting_notes() == ["the loop-device configurations (64 KiB, 256 KiB) were left out: a loop-device "
                                     "filesystem is made on this machine for the embedded cluster, not on your "
                                     "cluster's"]
    assert sc.StorageStudy(loop_chunk_kbs=[]).setting_notes() == []


def test_where_it_runs_and_the_runbook_stay_out_of_the_plan_key() -> None:
    base = sc.StorageStudy().plan_key()
    assert sc.StorageStudy(contact_points="10.0.0.4", storage_label="md0", loop_size_mb=512, allow_destructive=True,
                           raid_devices=("/dev/sdx",), experiment="other", repeats=5).plan_key() == base
    assert sc.StorageStudy(chunk_kbs=[4, 64]).plan_key() != base


def test_dropped_says_what_the_published_study_ran_that_this_plan_does_not() -> None:
    assert sc.StorageStudy(chunk_kbs=[4, 64, 256]).dropped(_knee(8)) == (
        "The published study rebuilt an mdadm RAID 0 per chunk size; without an md driver here no RAID stripe can be "
        "varied, so its chunk claims are not tested here (chunk_kbs varies the table's compression chunk, measured for "
        "what it is). It also ran chunk sizes 128 KiB: left out here. It swept 4, 8, 16, 32, 64, "
        "128, 256, 512 client threads for every chunk size; here 2, 8, 32 (around the calibrated knee) for 64 KiB, "
        "and the other chunk sizes at 8 only. It ran the empty-cache sweep over every thread count; here run a and "
        "run b at 8 threads only, for 64 KiB (each run a needs its own cold restart).")


def test_the_cold_run_a_records_from_its_first_request(monkeypatch) -> None:
    seen = []
    monkeypatch.setattr(LocalRunner, "run", lambda self, arm, cluster, labels, *, root, warmup_s, sample=True,
                        sampler=None: seen.append((arm.name, warmup_s)) or [])
    study = sc.StorageStudy(loop_chunk_kbs=[])
    arms = {a.name: a for a in study.arms(_knee(8))}
    runner = sc.ColdStartRunner()
    for name in ("disk 64 KiB, empty, run a", "disk 64 KiB, empty, run b", "disk 64 KiB, full, 8 threads"):
        runner.run(arms[name], None, {}, root=Path("."), warmup_s=1.0, sample=True, sampler={"jmx": "none"})
    assert seen == [("disk 64 KiB, empty, run a", 0.0), ("disk 64 KiB, empty, run b", 1.0),
                    ("disk 64 KiB, full, 8 threads", 1.0)]


def test_the_loop_cluster_is_built_beside_the_first_on_the_next_addresses(tmp_path) -> None:
    from cassperf.cluster.local import LocalCluster

    first = LocalCluster("st-dc1_2", "dc1:2", heap_mb=512, first_address="127.0.23.1", root=tmp_path)
    loop = sc.cluster_beside(first, "st-dc1_2-loop", tmp_path / "mnt" / "clusters")
    assert [n.address for n in loop.nodes] == ["127.0.23.3", "127.0.23.4"]
    assert (loop.name, loop.heap_mb, loop.topology.spec(), loop.version) == ("st-dc1_2-loop", 512, "dc1:2",
                                                                             first.version)
    assert loop.nodes[0].layout.root == tmp_path / "mnt" / "clusters" / "st-dc1_2-loop" / loop.nodes[0].name
    assert {n.ports.jmx for n in loop.nodes}.isdisjoint({n.ports.jmx for n in first.nodes})


def test_a_full_cache_run_reads_its_keyspace_files_into_the_page_cache(tmp_path) -> None:
    from cassperf.cluster.local import LocalCluster

    cluster = LocalCluster("warm-dc1_1", "dc1:1", first_address="127.0.23.1", root=tmp_path)
    table = cluster.nodes[0].layout.data / "storage_c64" / "standard1-abc"
    table.mkdir(parents=True)
    (table / "nb-1-big-Data.db").write_bytes(b"x" * (3 * 2**20))
    (table / "nb-1-big-Index.db").write_bytes(b"y" * 2**19)
    assert make_warm(cluster, "storage_c64") == "warm: 2 files of storage_c64 (3.5 MiB) read into the page cache"
    assert make_warm(cluster, "storage_c4") == "warm: 0 files of storage_c4 (0.0 MiB) read into the page cache"
    assert make_warm(object(), "storage_c64") == ("warm: the servers' page cache was not filled (a named cluster's "
                                                  "disks are not this machine's)")


def test_storage_names_are_stable_labels_from_what_was_measured() -> None:
    assert storage_name(Storage("x", "/dev/vda", "ext4", "/")) == "ext4 on /dev/vda"
    assert storage_name(Storage("x", "/dev/loop3", "ext4", "/m")) == "ext4 on a loop device"
    assert storage_name(Storage("x", "/dev/md0", "xfs", "/d", "raid0", 64, 4)) == "xfs on /dev/md0 (raid0, 64 KiB chunk)"
    assert storage_name(Storage("x", None, "tmpfs", "/dev/shm")) == "tmpfs on no block device"


def test_a_named_cluster_is_labelled_by_what_the_user_says_or_unknown() -> None:
    class Named:
        pass
    assert measure_storage(Named(), "mdadm raid0 4 x P30") == {"storage": "mdadm raid0 4 x P30"}
    assert measure_storage(Named()) == {"storage": "unknown (a named cluster: say what it is with storage_label)"}


def test_the_runbook_is_printed_and_refused_without_named_devices_even_when_destructive_is_allowed() -> None:
    from cassperf.experiments.storage_cache_analysis import runbook_items

    printed, said = runbook_items("/dev/md0", [], [4, 128], 64)
    assert ("mdadm --create /dev/md0 --level=raid0 --chunk=128 --raid-devices=4 /dev/sdc /dev/sdd /dev/sde /dev/sdf"
            in printed.data) and "# RAID 0, 4 KiB chunks (the study&#x27;s devices: give raid_devices)" in printed.data
    assert said.data == "<p>Printed only: <code>allow_destructive</code> is False.</p>"
    refused = runbook_items("/dev/md0", [], [64], 64, allow_destructive=True)[-1]
    assert refused.data == ("<p><b>Runbook not run:</b> not run: pass the devices the runbook may erase explicitly, "
                            "e.g. devices=[&#x27;/dev/nvme1n1&#x27;, &#x27;/dev/nvme2n1&#x27;]</p>")
