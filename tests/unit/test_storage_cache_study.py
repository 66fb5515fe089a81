"""The storage-and-cache study's plan and rules (cassperf.experiments.storage_cache), without nodes:
the parameters it refuses, the runs it plans in order with their labels, where the caches are
emptied, and how several comparisons combine into one verdict."""

from __future__ import annotations

import pandas as pd
import pytest

from cassperf.errors import ConfigError
from cassperf.experiments import storage_cache as sc
from cassperf.plots.studies import sweep_charts
from cassperf.storage.loopfs import Storage
from cassperf.workload.runners.stress_cmdline import to_stress_command

MEASURED = {"storage": "ext4 on /dev/vda", "storage_device": "/dev/vda", "storage_fs": "ext4"}


def _conf(chunk: int) -> sc.Configuration:
    return sc.Configuration(chunk, {**MEASURED, "chunk_kb": str(chunk),
                                    "compression": f"LZ4Compressor, chunk_length_in_kb={chunk}"}, False)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"threads": []}, "threads=[]: expected client thread counts, whole numbers >= 1 (the study: [4, 8, 16, 32, 64, "
                      "128, 256, 512])"),
    ({"threads": [4, 4]}, "threads=[4, 4]: a thread count is named twice"),
    ({"chunk_kbs": [4, 48]}, "chunk_kbs=[4, 48]: chunk_length_in_kb must be a power of two (4, 16, 64...)"),
    ({"chunk_kbs": [], "loop_chunk_kbs": []}, "chunk_kbs and loop_chunk_kbs are both empty: no storage "
                                              "configuration to run"),
    ({"rows": 0}, "rows=0: expected a whole number >= 1"),
])
def test_bad_parameters_are_refused_in_one_line(kwargs, message) -> None:
    with pytest.raises(ConfigError) as info:
        sc.StorageStudy(**kwargs)
    assert str(info.value) == message


def test_the_plan_writes_then_sweeps_full_then_empties_the_caches_before_run_a_then_run_b() -> None:
    study = sc.StorageStudy(rows=1000, reads=500, threads=[4, 32], chunk_kbs=[4, 64], empty_chunk_kbs=[64])
    steps = sc.plan(study, [_conf(4), _conf(64)])
    points = [(s.labels["chunk_kb"], s.labels["part"], s.labels["cache"], s.labels["run"], s.labels["threads"])
              for s in steps]
    assert points == [
        ("4", "write", "", "a", "64"), ("4", "read", "full", "a", "4"), ("4", "read", "full", "a", "32"),
        ("64", "write", "", "a", "64"), ("64", "read", "full", "a", "4"), ("64", "read", "full", "a", "32"),
        ("64", "read", "empty", "a", "4"), ("64", "read", "empty", "a", "32"),
        ("64", "read", "empty", "b", "4"), ("64", "read", "empty", "b", "32")]
    emptied = [i for i, s in enumerate(steps) if s.before is not None]
    assert emptied == [6], "the caches are emptied once, before the first run a of the empty-cache sweep"
    assert all(s.labels["study"] == "storage-and-cache" and s.labels["storage"] == "ext4 on /dev/vda"
               and s.labels["compression"].startswith("LZ4Compressor, chunk_length_in_kb=") for s in steps)
    read = steps[1].spec
    assert (read.op, read.n, read.concurrency, read.warmup) == ("read", 500, 4, False)
    assert "-pop dist=UNIFORM(1..1000)" in to_stress_command(read, schema_precreated=True)
    assert read.compression.chunk_length_in_kb == 4 and read.keyspace == "storage_c4"
    assert (read.column_count, read.column_size) == (1, 4096)
    # the same point always gets the same spec_key (resume), another chunk size another
    again = sc.plan(study, [_conf(4)])
    assert again[1].full_labels["spec_key"] == steps[1].full_labels["spec_key"]
    assert steps[4].full_labels["spec_key"] != steps[1].full_labels["spec_key"]


def test_storage_names_are_stable_labels_from_what_was_measured() -> None:
    assert sc.storage_name(Storage("x", "/dev/vda", "ext4", "/")) == "ext4 on /dev/vda"
    assert sc.storage_name(Storage("x", "/dev/loop3", "ext4", "/m")) == "ext4 on a loop device"
    assert sc.storage_name(Storage("x", "/dev/md0", "xfs", "/d", "raid0", 64, 4)) == \
        "xfs on /dev/md0 (raid0, 64 KiB chunk)"
    assert sc.storage_name(Storage("x", None, "tmpfs", "/dev/shm")) == "tmpfs on no block device"


def test_a_named_cluster_is_labelled_by_what_the_user_says_or_unknown() -> None:
    class Named:
        pass
    assert sc.measure_storage(Named(), "mdadm raid0 4 x P30") == {"storage": "mdadm raid0 4 x P30"}
    assert sc.measure_storage(Named())["storage"].startswith("unknown")


@pytest.mark.parametrize(("verdicts", "combined"), [
    ([], "not shown"), (["holds", "holds"], "holds"), (["holds", "not shown"], "not shown"),
    (["holds", "does not hold", "not shown"], "does not hold")])
def test_several_comparisons_combine_into_one_verdict(verdicts, combined) -> None:
    assert sc._combine(verdicts) == combined


def test_sweep_charts_draw_ops_then_each_percentile_on_its_own_chart() -> None:
    frame = pd.DataFrame({"config": ["a", "a", "b", "b"], "threads": [32, 4, 4, 32],
                          "rate_ops_s": [2.0, 1.0, 3.0, 4.0], "latency_p50_ms": [1.0, 2.0, 3.0, 4.0],
                          "latency_p95_ms": [5.0, 6.0, 7.0, 8.0], "latency_p99_ms": [9.0, 10.0, 11.0, 12.0]})
    figs = sweep_charts(frame, "config", "Full cache", "service")
    assert [f.layout.title.text for f in figs] == [f"Full cache: {w} vs client threads" for w in
                                                   ("ops/s", "latency p50", "latency p95", "latency p99")]
    assert [t.name for t in figs[0].data] == ["a", "b"]
    assert list(figs[0].data[0].x) == [4, 32] and list(figs[0].data[0].y) == [1.0, 2.0]
    assert list(figs[3].data[1].y) == [11.0, 12.0] and figs[3].layout.yaxis.title.text == "latency (ms, service time)"
