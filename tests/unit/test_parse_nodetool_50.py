"""nodetool parsers on Apache 4.x/5.0 layouts.

No real 5.0 capture is among the public fixtures (tests/fixtures/public). Until one lands in tests/fixtures/nodetool-5.0/
(checked below as soon as it exists), the samples here are CONSTRUCTED, not captured: written
line by line after the format strings of Cassandra's 4.1/5.0 printers (TableStatsPrinter,
TpStatsPrinter, CompactionStats, Info, Status, TableHistograms) with invented values. They
pin the layout features the parsers must tolerate (5.0's extra tablestats lines and top
partitions, 5.0's compactionstats table, 4.0+ tpstats queue latencies, KiB/MiB/GiB and "?"
loads), not any figure a real node printed.
"""

from __future__ import annotations

import math
from decimal import Decimal

import pandas as pd
import pytest

from cassperf.config import project_root
from cassperf.parsers import parse, parse_text
from cassperf.parsers.nodetool import FORMATS

KiB, MiB, GiB = 1024, 1024**2, 1024**3


def size(printed: str, unit: int) -> float:
    return float(Decimal(printed) * unit)


STATUS_50 = """\
Datacenter: dc1
===============
Status=Up/Down
|/ State=Normal/Leaving/Joining/Moving
--  Address    Load        Tokens  Owns (effective)  Host ID                               Rack
UN  127.0.0.1  1.21 GiB    16      66.7%             8d2f5f33-36a4-4e46-a1a2-5d0b5b6f0d01  rack1
DN  127.0.0.2  ?           16      66.7%             0c3d83d5-1b7c-4a0d-9c62-1f1c0c6b8a02  rack1
Datacenter: dc2
===============
Status=Up/Down
|/ State=Normal/Leaving/Joining/Moving
--  Address    Load        Tokens  Owns (effective)  Host ID                               Rack
UJ  127.0.0.4  512 bytes   16      ?                 5e1c7f0e-7c59-4cfb-8a4e-3b3f6a2b2c03  rack2
UL  127.0.0.5  733.5 MiB   16      33.3%             7a9e0b55-2d3c-4c1e-9b7f-6d4e2f1a0c05  rack2

"""

INFO_50 = """\
ID                     : 8d2f5f33-36a4-4e46-a1a2-5d0b5b6f0d01
Gossip active          : true
Native Transport active: true
Load                   : 1.21 GiB
Generation No          : 1763721600
Uptime (seconds)       : 3605
Heap Memory (MB)       : 512.31 / 2048.00
Off Heap Memory (MB)   : 3.42
Data Center            : dc1
Rack                   : rack1
Exceptions             : 0
Key Cache              : entries 1503, size 142.37 KiB, capacity 100 MiB, 12034 hits, 13211 requests, 0.911 recent hit rate, 14400 save period in seconds
Row Cache              : entries 0, size 0 bytes, capacity 0 bytes, 0 hits, 0 requests, NaN recent hit rate, 0 save period in seconds
Counter Cache          : entries 0, size 0 bytes, capacity 50 MiB, 0 hits, 0 requests, NaN recent hit rate, 7200 save period in seconds
Network Cache          : size 8 MiB, overflow size: 0 bytes, capacity 16 MiB
Chunk Cache            : entries 412, size 25.75 MiB, capacity 480 MiB, 1022 misses, 52310 requests, 0.980 recent hit rate, 129.402 microseconds miss latency
Percent Repaired       : 0.0%
Bootstrap state        : COMPLETED
Bootstrap failed       : false
Decommissioning        : false
Decommission failed    : false
Token                  : (invoke with -T/--tokens to see all 16 tokens)
"""

TABLESTATS_50 = """\
Total number of tables: 47
----------------
Keyspace: cassperf
\tRead Count: 120000
\tRead Latency: 0.21837 ms
\tWrite Count: 480000
\tWrite Latency: 0.0173 ms
\tPending Flushes: 0
\t\tTable: rf3
\t\tSSTable count: 4
\t\tOld SSTable count: 0
\t\tMax SSTable size: 96.532MiB
\t\tSSTables in each level: [1, 3/10, 0, 0, 0, 0, 0, 0, 0]
\t\tSSTable bytes in each level: [5.123MiB, 300.456MiB, 0B, 0B, 0B, 0B, 0B, 0B, 0B]
\t\tSpace used (live): 320123456
\t\tSpace used (total): 320123456
\t\tSpace used by snapshots (total): 0
\t\tOff heap memory used (total): 1234567
\t\tSSTable Compression Ratio: 0.71234
\t\tNumber of partitions (estimate): 480000
\t\tMemtable cell count: 12000
\t\tMemtable data size: 3456789
\t\tMemtable off heap memory used: 0
\t\tMemtable switch count: 12
\t\tSpeculative retries: 3
\t\tLocal read count: 120000
\t\tLocal read latency: 0.218 ms
\t\tLocal write count: 480000
\t\tLocal write latency: 0.017 ms
\t\tLocal read/write ratio: 0.25000
\t\tPending flushes: 0
\t\tPercent repaired: 0.0
\t\tBytes repaired: 0B
\t\tBytes unrepaired: 305.579MiB
\t\tBytes pending repair: 0B
\t\tBloom filter false positives: 2
\t\tBloom filter false ratio: 0.00000
\t\tBloom filter space used: 600120
\t\tBloom filter off heap memory used: 600088
\t\tIndex summary off heap memory used: 0
\t\tCompression metadata off heap memory used: 634359
\t\tCompacted partition minimum bytes: 3974
\t\tCompacted partition maximum bytes: 4768
\t\tCompacted partition mean bytes: 4372
\t\tAverage live cells per slice (last five minutes): 1.0
\t\tMaximum live cells per slice (last five minutes): 1
\t\tAverage tombstones per slice (last five minutes): 1.0
\t\tMaximum tombstones per slice (last five minutes): 1
\t\tDroppable tombstone ratio: 0.00000
\t\tTop partitions by size (last update: 2026-11-20T10:15:00Z):
\t\t  Key        Size
\t\t  key0042    4.66 KiB
\t\t  key0017    4.65KiB
\t\tTop partitions by tombstone count (last update: 2026-11-20T10:15:00Z):
\t\t  Key        Count
\t\t  key0099    12

----------------
"""

TABLESTATS_SORTED_50 = """\
Total number of tables: 47 (showing top 1 by reads)
----------------
\tTable: cassperf.rf3
\tSSTable count: 4
\tSpace used (live): 320123456
\tLocal read count: 120000
\tLocal read latency: 0.218 ms

----------------
"""

COMPACTIONSTATS_50 = """\
concurrent compactors                2
pending tasks                        3
cassperf                             rf3             2
system                               paxos           1
compactions completed                1543
data compacted                       5830925670
compactions aborted                  0
compactions reduced                  0
sstables dropped from compaction     0
15 minute rate                       2.41/minute
mean rate                            96.30/hour
compaction throughput (MiB/s)        64.0
id                                   compaction type keyspace table completed total     unit  progress
5ac3c2d0-a7a2-11f0-9d6c-2bd5a0c1d9c1 Compaction      cassperf rf3   41943040  167772160 bytes 25.00%
active compaction remaining time     0h00m01s
"""

COMPACTIONSTATS_41 = """\
pending tasks: 3
- cassperf.rf3: 2
- system.paxos: 1

id                                   compaction type             keyspace table completed total unit  progress
5ac3c2d0-a7a2-11f0-9d6c-2bd5a0c1d9c1 Anticompaction after repair cassperf rf3   1024      4096  bytes 25.00%
6b0e9e10-a7a2-11f0-9d6c-2bd5a0c1d9c1 Secondary index build       cassperf rf3   1200      4800  keys  25.00%
7c4f1a20-a7a2-11f0-9d6c-2bd5a0c1d9c1 Compaction                  cassperf rf3   1.5 MiB   6 MiB bytes 25.00%
Active compaction remaining time :        n/a
"""

COMPACTIONSTATS_21 = """\
pending tasks: 1
          compaction type        keyspace           table       completed           total      unit  progress
               Compaction        cassperf             rf3        41943040       167772160     bytes    25.00%
Active compaction remaining time :   0h00m01s
"""

TPSTATS_50 = """\
Pool Name                         Active Pending Completed Blocked All time blocked
ReadStage                         0      0       120431    0       0
MutationStage                     2      5       480233    0       0
Native-Transport-Requests         1      0       600664    0       3
CompactionExecutor                2      3       1543      0       0

Latencies waiting in queue (micros) per dropped message types
Message type                      Dropped     50%      95%      99%      Max
READ_REQ                          0           0.0      0.0      0.0      0.0
MUTATION_REQ                      12          14.237   61.214   88.148   1.1E7
HINT_RSP                          0           N/A      N/A      N/A      N/A
"""

TABLEHISTOGRAMS_REORDERED = """\
cassperf/rf3 histograms
Percentile      Read Latency     Write Latency          SSTables    Partition Size        Cell Count
                    (micros)          (micros)                             (bytes)
50%                   219.34             17.08              1.00              4768                 5
75%                   263.21             20.50              1.00              4768                 5
95%                   454.83             29.52              2.00              4768                 5
98%                   654.95             35.43              2.00              4768                 5
99%                   785.94             42.51              2.00              4768                 5
Min                    20.50              4.77              0.00              3974                 5
Max                  8409.01           1131.75              3.00              4768                 5

Row sizes are larger than 1155383, unable to calculate percentiles
cassperf/wide histograms
Percentile  SSTables     Write Latency      Read Latency    Partition Size        Cell Count
                              (micros)          (micros)           (bytes)
50%             1.00             17.08            219.34               NaN                 5
75%             1.00             17.08            219.34               NaN                 5
95%             1.00             17.08            219.34               NaN                 5
98%             1.00             17.08            219.34               NaN                 5
99%             1.00             17.08            219.34               NaN                 5
Min             1.00             17.08            219.34               NaN                 5
Max             1.00             17.08            219.34               NaN                 5

"""

SAMPLES = {
    "nodetool-status": STATUS_50,
    "nodetool-info": INFO_50,
    "nodetool-tablestats": TABLESTATS_50,
    "nodetool-compactionstats": COMPACTIONSTATS_50,
    "nodetool-tpstats": TPSTATS_50,
    "nodetool-tablehistograms": TABLEHISTOGRAMS_REORDERED,
}
EXTRA_SAMPLES = {
    "tablestats_sorted": ("nodetool-tablestats", TABLESTATS_SORTED_50),
    "compactionstats_41": ("nodetool-compactionstats", COMPACTIONSTATS_41),
    "compactionstats_21": ("nodetool-compactionstats", COMPACTIONSTATS_21),
}


@pytest.mark.parametrize("name,text", list(SAMPLES.items()) + list(EXTRA_SAMPLES.values()))
def test_sample_is_sniffed_by_its_format_alone_and_parses_cleanly(name: str, text: str) -> None:
    assert [f.name for f in FORMATS if f.sniff(text)] == [name]
    result = parse_text(text)
    assert result.format == name
    assert result.complete and result.skipped_lines == 0 and not result.warnings


def test_status_multi_dc_unknown_load_and_ownership() -> None:
    nodes = parse_text(STATUS_50).tables["nodes"].set_index("address")
    assert list(nodes["datacenter"]) == ["dc1", "dc1", "dc2", "dc2"]
    assert list(nodes["rack"]) == ["rack1", "rack1", "rack2", "rack2"]
    assert list(nodes["state"] + nodes["mode"]) == ["UN", "DN", "UJ", "UL"]
    assert nodes.loc["127.0.0.1", "load_bytes"] == size("1.21", GiB)
    assert math.isnan(nodes.loc["127.0.0.2", "load_bytes"])             # "?" for an unreachable node
    assert nodes.loc["127.0.0.4", "load_bytes"] == 512.0
    assert nodes.loc["127.0.0.5", "load_bytes"] == size("733.5", MiB)
    assert math.isnan(nodes.loc["127.0.0.4", "owns_pct"]) and nodes.loc["127.0.0.5", "owns_pct"] == 33.3
    assert (nodes["tokens"] == 16).all()


def test_info_4x_keys_network_cache_and_miss_latency() -> None:
    result = parse_text(INFO_50)
    info = result.tables["info"]
    assert info["token_count"].iloc[0] == 16
    assert info["load_bytes"].iloc[0] == size("1.21", GiB)
    assert pd.isna(info["thrift_active"].iloc[0])                        # 4.0+ has no Thrift line
    assert info["percent_repaired_pct"].iloc[0] == 0.0
    assert info["bootstrap_state"].iloc[0] == "COMPLETED"
    assert info["decommission_failed"].iloc[0] == "false"
    caches = result.tables["caches"].set_index("cache")
    assert list(caches.index) == ["key", "row", "counter", "network", "chunk"]
    assert caches.loc["network", "size_bytes"] == 8 * MiB
    assert caches.loc["network", "overflow_size_bytes"] == 0.0
    assert caches.loc["network", "capacity_bytes"] == 16 * MiB
    assert caches.loc["chunk", "miss_latency_us"] == 129.402
    assert caches.loc["chunk", "misses"] == 1022 and caches.loc["chunk", "recent_hit_rate"] == 0.980
    assert caches.loc["key", "size_bytes"] == size("142.37", KiB)


def test_tablestats_50_extra_lines_and_top_partitions() -> None:
    result = parse_text(TABLESTATS_50)
    t = result.tables["tables"].iloc[0]
    assert (t["keyspace"], t["table"]) == ("cassperf", "rf3")
    assert (t["old_sstable_count"], t["speculative_retries"]) == (0, 3)
    assert t["max_sstable_size_bytes"] == size("96.532", MiB)
    assert t["sstables_per_level"] == "[1, 3/10, 0, 0, 0, 0, 0, 0, 0]"
    assert t["sstable_bytes_per_level"] == "[5.123MiB, 300.456MiB, 0B, 0B, 0B, 0B, 0B, 0B, 0B]"
    assert t["local_read_write_ratio"] == 0.25
    assert t["unrepaired_bytes"] == size("305.579", MiB) and t["repaired_bytes"] == 0.0
    assert (t["local_read_latency_ms"], t["local_write_latency_ms"]) == (0.218, 0.017)
    assert t["droppable_tombstone_ratio"] == 0.0
    assert t["compacted_partition_max_bytes"] == 4768
    assert pd.isna(t["dropped_mutations"])                              # not printed by 5.0
    top = result.tables["top_partitions"]
    assert list(top["kind"]) == ["size", "size", "tombstones"]
    assert list(top["key"]) == ["key0042", "key0017", "key0099"]
    assert list(top["size_bytes"].iloc[:2]) == [size("4.66", KiB), size("4.65", KiB)]
    assert top["tombstones"].iloc[2] == 12
    assert (top["last_update"] == "2026-11-20T10:15:00Z").all()
    assert result.tables["keyspaces"]["read_latency_ms"].iloc[0] == 0.21837


def test_tablestats_sorted_layout_takes_keyspace_from_the_table_name() -> None:
    result = parse_text(TABLESTATS_SORTED_50)
    t = result.tables["tables"].iloc[0]
    assert (t["keyspace"], t["table"], t["local_read_count"]) == ("cassperf", "rf3", 120000)
    assert result.tables["keyspaces"].empty
    summary = result.tables["summary"].iloc[0]
    assert (summary["total_tables"], summary["showing"]) == (47, "showing top 1 by reads")


def test_tablestats_unknown_field_is_kept_as_a_column() -> None:
    text = TABLESTATS_SORTED_50.replace("\tLocal read count: 120000\n",
                                        "\tLocal read count: 120000\n\tSome future gauge: 7\n"
                                        "\tSome future latency: 1.5 ms\n\tSome future size: 2 KiB\n")
    result = parse_text(text)
    t = result.tables["tables"].iloc[0]
    assert (t["some_future_gauge"], t["some_future_latency_ms"], t["some_future_size_bytes"]) == (7, 1.5, 2048)
    assert result.skipped_lines == 0 and not result.warnings


def test_compactionstats_50_table() -> None:
    result = parse_text(COMPACTIONSTATS_50)
    s = result.tables["summary"].iloc[0]
    assert (s["concurrent_compactors"], s["pending_tasks"], s["compactions_completed"]) == (2, 3, 1543)
    assert s["data_compacted_bytes"] == 5830925670
    assert (s["compactions_aborted"], s["compactions_reduced"], s["sstables_dropped_from_compaction"]) == (0, 0, 0)
    assert (s["rate_15m_per_minute"], s["mean_rate_per_hour"]) == (2.41, 96.30)
    assert s["compaction_throughput_mib_s"] == 64.0
    assert s["remaining_time_s"] == 1
    pending = result.tables["pending_by_table"]
    assert list(zip(pending["keyspace"], pending["table"], pending["pending_tasks"])) == [
        ("cassperf", "rf3", 2), ("system", "paxos", 1)]
    active = result.tables["active"].iloc[0]
    assert (active["id"], active["type"], active["keyspace"], active["table"]) == (
        "5ac3c2d0-a7a2-11f0-9d6c-2bd5a0c1d9c1", "Compaction", "cassperf", "rf3")
    assert (active["completed_bytes"], active["total_bytes"], active["unit"], active["progress_pct"]) == (
        41943040, 167772160, "bytes", 25.0)


def test_compactionstats_throttling_disabled_reads_as_zero() -> None:
    text = COMPACTIONSTATS_50.replace("compaction throughput (MiB/s)        64.0",
                                      "compaction throughput (MiB/s)        throttling disabled (0)")
    assert parse_text(text).tables["summary"]["compaction_throughput_mib_s"].iloc[0] == 0.0


def test_compactionstats_41_multi_word_types_other_units_and_human_sizes() -> None:
    result = parse_text(COMPACTIONSTATS_41)
    active = result.tables["active"]
    assert list(active["type"]) == ["Anticompaction after repair", "Secondary index build", "Compaction"]
    assert list(active["unit"]) == ["bytes", "keys", "bytes"]
    keys = active.iloc[1]
    assert (keys["completed"], keys["total"]) == (1200, 4800)
    assert math.isnan(keys["completed_bytes"]) and math.isnan(keys["total_bytes"])   # not bytes
    human = active.iloc[2]
    assert (human["completed_bytes"], human["total_bytes"]) == (size("1.5", MiB), 6 * MiB)
    assert math.isnan(result.tables["summary"]["remaining_time_s"].iloc[0])           # "n/a"
    assert len(result.tables["pending_by_table"]) == 2


def test_compactionstats_21_without_id_column() -> None:
    active = parse_text(COMPACTIONSTATS_21).tables["active"].iloc[0]
    assert pd.isna(active["id"])
    assert (active["type"], active["keyspace"], active["table"], active["progress_pct"]) == (
        "Compaction", "cassperf", "rf3", 25.0)


def test_tpstats_4x_queue_latencies() -> None:
    result = parse_text(TPSTATS_50)
    pools = result.tables["pools"].set_index("pool")
    assert pools.loc["MutationStage", "pending"] == 5
    assert pools.loc["Native-Transport-Requests", "all_time_blocked"] == 3
    dropped = result.tables["dropped"].set_index("message_type")
    assert dropped.loc["MUTATION_REQ", "dropped"] == 12
    assert (dropped.loc["MUTATION_REQ", "wait_p50_us"], dropped.loc["MUTATION_REQ", "wait_p99_us"]) == (14.237, 88.148)
    assert dropped.loc["MUTATION_REQ", "wait_max_us"] == 1.1e7                     # Java's Double.toString
    assert math.isnan(dropped.loc["HINT_RSP", "wait_p95_us"])


def test_tablehistograms_reordered_columns_and_overflow_note() -> None:
    result = parse_text(TABLEHISTOGRAMS_REORDERED)
    p = result.tables["percentiles"]
    rf3 = p[p["table"] == "rf3"].set_index("stat")
    assert (rf3.loc["50%", "read_latency_us"], rf3.loc["50%", "write_latency_us"]) == (219.34, 17.08)
    assert (rf3.loc["Max", "sstables"], rf3.loc["Min", "partition_size_bytes"]) == (3.0, 3974.0)
    wide = p[p["table"] == "wide"]
    assert wide["partition_size_bytes"].isna().all() and (wide["cell_count"] == 5).all()
    assert not p["no_sstables"].any()


# ------------------------------------------------------------ project-made 5.0 captures

CAPTURED_50 = project_root() / "tests" / "fixtures" / "nodetool-5.0"
#: command in a capture's file name (nodetool_<command>_...) -> the format it must be read as
COMMAND_FORMATS = {
    "status": "nodetool-status", "info": "nodetool-info", "tablestats": "nodetool-tablestats",
    "cfstats": "nodetool-tablestats", "compactionstats": "nodetool-compactionstats",
    "compactionhistory": "nodetool-compactionhistory", "tpstats": "nodetool-tpstats", "gcstats": "nodetool-gcstats",
    "proxyhistograms": "nodetool-proxyhistograms", "tablehistograms": "nodetool-tablehistograms",
    "cfhistograms": "nodetool-tablehistograms",
}
_captured = sorted(p for p in CAPTURED_50.glob("nodetool_*") if not p.name.endswith(".source.txt")
                   and p.name.split("_")[1] in COMMAND_FORMATS) if CAPTURED_50.is_dir() else []


@pytest.mark.skipif(not _captured, reason=f"no captured Apache 5.0 nodetool output in {CAPTURED_50} yet")
@pytest.mark.parametrize("path", _captured, ids=[p.name for p in _captured])
def test_captured_50_output_is_its_own_format_and_parses_cleanly(path) -> None:  # type: ignore[no-untyped-def]
    text = path.read_text()
    expected = COMMAND_FORMATS[path.name.split("_")[1]]
    assert [f.name for f in FORMATS if f.sniff(text[:65536])] == [expected]
    result = parse(path)
    assert result.format == expected
    assert result.complete and result.skipped_lines == 0
    # the only warning allowed: compactionhistory's local time read as UTC
    assert all("local zone" in w.expected for w in result.warnings), [str(w) for w in result.warnings]
    for frame in result.tables.values():
        assert not frame.columns.duplicated().any()


def test_gcstats_reclaimed_is_bytes_whatever_the_header_says() -> None:
    # Apache 5.0.6, one call after 70 s of uptime on a 512 MiB heap (tests/fixtures/capture.py)
    text = ("       Interval (ms) Max GC Elapsed (ms)Total GC Elapsed (ms)Stdev GC Elapsed (ms)   GC Reclaimed (MB)"
            "         Collections      Direct Memory Bytes\n"
            "               60673                 143                 314                  55          1316216048"
            "                   5                       -1\n")
    gc = parse_text(text).tables["gcstats"].iloc[0]
    assert gc["gc_reclaimed_bytes"] == 1316216048
    assert gc["gc_reclaimed_mb"] == 1316216048 / 2**20          # 1255.2 MiB, not 1.3 PB
    assert (gc["interval_ms"], gc["max_gc_elapsed_ms"], gc["total_gc_elapsed_ms"]) == (60673, 143, 314)
    assert (gc["stdev_gc_elapsed_ms"], gc["collections"], gc["direct_memory_bytes"]) == (55, 5, -1)
