"""The method section's sentence on each cluster's setting (workbook.study_page.setting_sentences):
a keyspace whose loaded rows were all still in the memtables reads so, never "0 MB on disk" (02's
method line at 7bfcbfd read "data on disk: ks410dc1dc2rf2 0 MB per node")."""

from __future__ import annotations

from cassperf.workbook.study_page import setting_sentences

BOUNDS = "page cache not bounded: each node may use the host's whole page cache"


def test_sizes_on_disk_unflushed_keyspaces_and_clusters_without_figures() -> None:
    setting = {"": {"bounds": BOUNDS, "data_mb": {"big": {"node1": 312.4, "node2": 320.6},
                                                   "small": {"node1": 0.43, "node2": 0.0},
                                                   "fresh": {"node1": 0.0, "node2": 0.0}}},
               "remote": {"bounds": "a named cluster: its page cache and disks are its own", "data_mb": {}}}
    assert setting_sentences(setting) == [
        f"On the cluster: {BOUNDS}; data on disk: big 321 MB per node; small 0.4 MB per node; fresh none yet per "
        "node (its rows were still in the memtables, not flushed).",
        "On the remote cluster: a named cluster: its page cache and disks are its own."]
