"""Did a claim's manipulation take? Checks measured in the runs, each a verdicts.Check.

A claim tests what it says only where its runs made the setting it is about: a cache claim needs
data that does not fit in the node's page cache, an emptied cache whose reads then came from disk,
and a full one whose reads came from memory; a claim on where the data lives needs reads that
reached that storage; garbagecollect must have compacted; each write must have reached its
replicas; a RAID stripe claim needs a stripe that was varied. Each function measures that in the
runs (the rows of cassperf.analysis.resources.run_resource_frame: what each node read from and
wrote to storage, its page cache, the writes it applied) and states its rule, fixed before any
data. A check decides only between a verdict and "not tested here" (verdicts.tested), never
which verdict.

    cache_emptied(cold, warm, touched_mb, data_mb, room_mb)    run a's reads came from disk
    cache_filled(first, second)                                run b found what run a read
    storage_read(runs, other, where)                           the reads reached the storage
    storage_written(runs, written_mb, where)                   the writes reached the storage
    compacted(operation, placebo)                              garbagecollect rewrote data
    replicas_applied(runs, rf)                                 each write reached RF replicas
    stripe_varied(stripes_kb, chunks_kb)                       a RAID stripe was what varied
    distance(rtt_ms, why)                                      the DCs were apart

Figures are medians over an arm's counted runs; MB = 10^6 bytes, MiB = 2^20 bytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from cassperf.analysis.verdicts import Check

#: a data set this many times the node's page-cache room cannot live in it: its reads reach the disk
DATA_OVER_CACHE = 2.0
#: run a must read from storage at least this share of what its reads touch (the cache was empty) ...
COLD_READ_SHARE = 0.5
#: ... and this many times what the warm arm read (the warm arm's reads came from memory)
COLD_OVER_WARM = 10.0
#: a cache was filled for the next run when that run read at most this share of the first's bytes
FILLED_SHARE = 0.1
#: the reads reached the storage when they read from it at least this share of the data they returned
STORAGE_READ_SHARE = 0.5
#: the writes reached the storage when it took at least this share of the data written
STORAGE_WRITE_SHARE = 0.5
#: garbagecollect took when its window compacted this many times the placebo's bytes, and over 1 MB
COMPACTED_OVER_PLACEBO = 10.0
COMPACTED_MIN_MB = 1.0
#: the writes each replica applied, per client write, within this share of RF
REPLICAS_TOLERANCE = 0.2
MIB = float(1 << 20)


def median(frame: pd.DataFrame, col: str) -> float:
    """The median of a column over the rows (runs) that measured it; NaN when none did."""
    if col not in frame.columns:
        return math.nan
    vals = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype="float64")
    vals = vals[np.isfinite(vals)]
    return float(np.median(vals)) if len(vals) else math.nan


def mb(v: float) -> str:
    """'not measured', '0.4 MB', '37.0 MB', '412 MB'."""
    if not math.isfinite(v):
        return "not measured"
    return f"{v:,.1f} MB" if v < 100 else f"{v:,.0f} MB"


# -- caches ------------------------------------------------------------------------------------------
CACHE_RULE = (f"the data set per node is at least {DATA_OVER_CACHE:g}x the page cache the node may hold, and "
              f"run a read from disk at least {COLD_READ_SHARE:.0%} of what its reads touch and "
              f"{COLD_OVER_WARM:g}x what the warm arm read")


def data_fits(data_mb: float, room_mib: float | None) -> str | None:
    """Why a data set can live in the page cache, or None when it is DATA_OVER_CACHE times the
    room or more. ``room_mib`` None: the page cache is not bounded (the host's memory)."""
    if room_mib is None or not math.isfinite(room_mib):
        return "the page cache is not bounded, so the data set stays in the host's memory"
    if math.isfinite(data_mb) and data_mb >= DATA_OVER_CACHE * room_mib * MIB / 1e6:
        return None
    return (f"the {mb(data_mb)} data set per node is under {DATA_OVER_CACHE:g}x the {room_mib:,.0f} MiB page cache "
            f"it may hold, so after a first pass every read comes from memory")


def cache_emptied(cold: pd.DataFrame, warm: pd.DataFrame, touched_mb: float, data_mb: float,
                  room_mib: float | None) -> Check:
    """The cache was emptied in effect (CACHE_RULE): the data cannot all live in the node's page
    cache (``room_mib``, None: not bounded), run a (``cold``: its runs' resource rows) read from
    storage at least half of what its reads touch (``touched_mb`` per node summed over nodes), and
    ten times what the warm arm (``warm``) read. Reads per node summed over nodes, medians over runs."""
    a, w = median(cold, "node_read_mb"), median(warm, "node_read_mb")
    room = f"{room_mib:,.0f} MiB of page cache per node" if room_mib is not None and math.isfinite(room_mib) \
        else "the page cache not bounded"
    figure = (f"run a read {mb(a)} from disk per run (median) of the {mb(touched_mb)} its reads touch, the warm "
              f"arm {mb(w)}; data set {mb(data_mb)} per node, {room}")
    if not math.isfinite(a):
        return Check("the emptied cache", None, "what the nodes read from disk was not measured", CACHE_RULE)
    fits = data_fits(data_mb, room_mib)
    took = fits is None and a >= COLD_READ_SHARE * touched_mb and (not math.isfinite(w) or a >= COLD_OVER_WARM * w)
    return Check("the emptied cache", took, figure + (f": {fits}" if fits else ""), CACHE_RULE)


FILLED_RULE = f"run b read from disk at most {FILLED_SHARE:.0%} of what run a read"


def cache_filled(first: pd.DataFrame, second: pd.DataFrame) -> Check:
    """Run a filled the cache for run b (FILLED_RULE): run b read a tenth or less of run a's bytes."""
    a, b = median(first, "node_read_mb"), median(second, "node_read_mb")
    if not (math.isfinite(a) and math.isfinite(b)):
        return Check("run a filling the cache for run b", None, "what the nodes read from disk was not measured",
                     FILLED_RULE)
    if a <= 0:
        return Check("run a filling the cache for run b", False,
                     f"run a read {mb(a)} from disk: its reads came from memory, nothing was filled", FILLED_RULE)
    return Check("run a filling the cache for run b", b <= FILLED_SHARE * a,
                 f"run a read {mb(a)} from disk per run (median), run b {mb(b)} ({b / a:.0%} of it)", FILLED_RULE)


# -- storage -----------------------------------------------------------------------------------------
def storage_read(runs: pd.DataFrame, returned_mb: float, where: str) -> Check:
    """The reads of ``runs`` reached ``where`` (their node's storage): the nodes read from it at
    least half of the data the reads returned (``returned_mb``, per run); else the reads came from
    memory and a claim on the storage is not tested by them."""
    rule = f"the reads took at least {STORAGE_READ_SHARE:.0%} of the data they returned from {where}"
    r = median(runs, "node_read_mb")
    if not math.isfinite(r) or not math.isfinite(returned_mb):
        return Check(f"reads from {where}", None, "what the nodes read from storage was not measured", rule)
    share = r / returned_mb if returned_mb > 0 else math.nan
    took = bool(returned_mb > 0 and share >= STORAGE_READ_SHARE)
    return Check(f"reads from {where}", took,
                 f"the reads read {mb(r)} from {where} per run (median) for the {mb(returned_mb)} they returned "
                 f"({share:.0%})" + ("" if took else ": they came from the page cache, in memory"), rule)


def storage_written(runs: pd.DataFrame, written_mb: float, where: str) -> Check:
    """The writes of ``runs`` reached ``where``: the nodes wrote to their storage at least half of
    the data the client wrote (``written_mb`` per run: commit log, then flushed SSTables)."""
    rule = f"the nodes sent at least {STORAGE_WRITE_SHARE:.0%} of the data written to {where}"
    w = median(runs, "node_write_mb")
    if not math.isfinite(w) or not math.isfinite(written_mb):
        return Check(f"writes to {where}", None, "what the nodes wrote to storage was not measured", rule)
    share = w / written_mb if written_mb > 0 else math.nan
    return Check(f"writes to {where}", bool(written_mb > 0 and share >= STORAGE_WRITE_SHARE),
                 f"the nodes wrote {mb(w)} to {where} per run (median) for {mb(written_mb)} written ({share:.0%})",
                 rule)


# -- operations, replicas, stripes, distance --------------------------------------------------------------
COMPACTED_RULE = (f"garbagecollect's window compacted at least {COMPACTED_OVER_PLACEBO:g}x the placebo's bytes and "
                  f"over {COMPACTED_MIN_MB:g} MB")


def compacted(operation_mb: Sequence[float], placebo_mb: Sequence[float], sstables: Sequence[float] = ()) -> Check:
    """garbagecollect did its work (COMPACTED_RULE): bytes compacted in its operation windows
    against the placebo's (medians over runs); ``sstables``: compactions completed in its windows."""
    g = float(np.nanmedian(operation_mb)) if len(operation_mb) else math.nan
    p = float(np.nanmedian(placebo_mb)) if len(placebo_mb) else math.nan
    if not math.isfinite(g):
        return Check("garbagecollect", None, "bytes compacted were not sampled (no JMX)", COMPACTED_RULE)
    done = f", {float(np.nanmedian(sstables)):.0f} compactions" if len(sstables) else ""
    took = g > COMPACTED_MIN_MB and (not math.isfinite(p) or g >= COMPACTED_OVER_PLACEBO * p)
    return Check("garbagecollect", took, f"it compacted {mb(g)} per window (median){done}, the placebo {mb(p)}",
                 COMPACTED_RULE)


def replicas_applied(runs: pd.DataFrame, rf: int) -> Check:
    """Each write reached RF replicas: the writes the nodes applied per client write (medians over
    runs) within REPLICAS_TOLERANCE of RF."""
    rule = f"the nodes applied RF writes per client write, within ±{REPLICAS_TOLERANCE:.0%}"
    per = median(runs, "local_writes_per_write")
    if not math.isfinite(per):
        return Check(f"RF {rf}", None, "the writes each node applied were not sampled", rule)
    took = abs(per - rf) <= REPLICAS_TOLERANCE * rf
    return Check(f"RF {rf}", took, f"the nodes applied {per:.2f} writes per client write at RF {rf}", rule)


STRIPE_RULE = "the configurations differ in a RAID stripe (chunk) of the data folder's array, as read back"


def stripe_varied(stripes_kb: Sequence[float | None], chunks_kb: Sequence[int]) -> Check:
    """A claim on a RAID stripe tests a stripe: the configurations' arrays (mdadm --detail's chunk,
    read back; None: no array) differ in it. Varying the table's compression chunk is not that."""
    found = sorted({int(s) for s in stripes_kb if s is not None and math.isfinite(s)})
    varied = ", ".join(f"{c} KiB" for c in sorted(set(chunks_kb))) or "none"
    if len(found) >= 2:
        return Check("the RAID stripe", True, f"arrays with chunks of {', '.join(f'{s} KiB' for s in found)}",
                     STRIPE_RULE)
    arrays = f"one array, chunk {found[0]} KiB" if found else "no RAID array under the data folder"
    return Check("the RAID stripe", False, f"{arrays}; what varied is the table's compression chunk ({varied}), "
                                           f"not a stripe", STRIPE_RULE)


def distance(rtt_ms: float | None, why: str) -> Check:
    """The DCs were apart: a measured round trip between them (``why`` says why there is none)."""
    rule = "a round trip between the DCs was set and measured"
    if rtt_ms is None or not math.isfinite(rtt_ms):
        return Check("a distance between the DCs", False, why, rule)
    return Check("a distance between the DCs", True, f"ping RTT {rtt_ms:.1f} ms between the DCs", rule)


__all__ = ["CACHE_RULE", "all_took", "cache_emptied", "cache_filled", "compacted", "data_fits", "distance", "median",
           "of_arm", "replicas_applied", "storage_read", "storage_written", "stripe_varied"]


def all_took(*checks: Check) -> Check:
    """Several checks a claim rests on, as one: taken when every one took, not taken when one did
    not, not measured when none was; the figures joined."""
    if not checks:
        raise ValueError("all_took: no checks")
    took = False if any(c.took is False for c in checks) else (None if all(c.took is None for c in checks)
                                                                else True)
    what = " and ".join(dict.fromkeys(c.what for c in checks))
    return Check(what, took, "; ".join(dict.fromkeys(c.figure for c in checks)),
                 "; ".join(dict.fromkeys(c.rule for c in checks if c.rule)))


def of_arm(rows: pd.DataFrame, arm: str) -> pd.DataFrame:
    """The resource rows (resources.resource_rows) of one arm's counted runs."""
    return rows[rows["arm"] == arm] if not rows.empty else rows
