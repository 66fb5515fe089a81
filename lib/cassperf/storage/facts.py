"""Storage facts of a cluster, as measured: where its data lives and how a table is compressed.

    measure_storage(cluster, storage_label="") -> {"storage": "ext4 on /dev/vda", "storage_device": ...}
    storage_name(Storage) -> "ext4 on a loop device"
    table_options(cluster, keyspace) -> {"chunk_length_in_kb": "64", "class": "...LZ4Compressor"}
    table_chunk(cluster, keyspace, chunk_kb) -> {"chunk_kb": "64", "compression": "LZ4Compressor, ..."}

An embedded cluster's storage is measured on its first node's data folder (loopfs.storage_of:
the device and filesystem from /proc/self/mountinfo, an md array's level and chunk from ``mdadm
--detail``); a named cluster's disks are beyond the workbook, so the user's ``storage_label``
stands for them. A table's compression is read back from ``system_schema.tables``, the figure
Cassandra itself uses, never the one that was asked for.
"""

from __future__ import annotations

from typing import Any

from cassperf.errors import ConfigError
from cassperf.storage.loopfs import Storage, storage_of

UNKNOWN = "unknown (a named cluster: say what it is with storage_label)"


def storage_name(storage: Storage) -> str:
    """A storage as a stable label: 'ext4 on /dev/vda', 'ext4 on a loop device' (its number
    changes per attach), 'xfs on /dev/md0 (raid0, 64 KiB chunk)', 'tmpfs on no block device'."""
    device = storage.device or "no block device"
    if device.startswith("/dev/loop"):
        device = "a loop device"
    name = f"{storage.fstype} on {device}"
    if storage.md_level is not None:
        name += f" ({storage.md_level}, {storage.md_chunk_kb} KiB chunk)"
    return name


def measure_storage(cluster: Any, storage_label: str = "") -> dict[str, str]:
    """Where the cluster's data lives (module doc): ``storage`` (storage_label, else the measured
    name) and, for an embedded cluster, storage_device, storage_fs (and md_level, md_chunk_kb,
    md_devices for an array)."""
    nodes = getattr(cluster, "nodes", None)
    if nodes and hasattr(nodes[0], "layout"):
        data = nodes[0].layout.data
        data.mkdir(parents=True, exist_ok=True)
        found = storage_of(data)
        return {"storage": storage_label or storage_name(found), **found.labels()}
    return {"storage": storage_label or UNKNOWN}


def table_options(cluster: Any, keyspace: str, table: str = "standard1") -> dict[str, str]:
    """The table's compression options as Cassandra reports them (system_schema.tables), e.g.
    {'chunk_length_in_kb': '64', 'class': 'org.apache.cassandra.io.compress.LZ4Compressor'}."""
    row = cluster.session().execute("SELECT compression FROM system_schema.tables WHERE keyspace_name = %s "
                                    "AND table_name = %s", (keyspace, table)).one()
    if row is None:
        raise ConfigError(f"{keyspace}.{table} does not exist on the cluster: its rows are loaded before the "
                          f"first block")
    return {str(k): str(v) for k, v in dict(row[0]).items()}


def table_chunk(cluster: Any, keyspace: str, chunk_kb: int, table: str = "standard1") -> dict[str, str]:
    """``chunk_kb`` and ``compression`` of the table as Cassandra reports them; a table that
    exists with another chunk length than ``chunk_kb`` (left by an earlier run) is refused with
    the fix."""
    options = table_options(cluster, keyspace, table)
    measured = options.get("chunk_length_in_kb")
    if measured != str(chunk_kb):
        raise ConfigError(f"{keyspace}.{table} exists with chunk_length_in_kb={measured}, the study asks for "
                          f"{chunk_kb}: drop it (DROP KEYSPACE {keyspace}) or use another keyspace_prefix")
    compressor = options.get("class", "").rsplit(".", 1)[-1]
    return {"chunk_kb": measured, "compression": f"{compressor}, chunk_length_in_kb={measured}"}


__all__ = ["UNKNOWN", "measure_storage", "storage_name", "table_chunk", "table_options"]
