"""The storage-and-cache study's analysis: its claims and chart sections from a stored outcome.

A full-cache run's figures are over its steady window, as in every study; an empty-cache run's
over the **whole run**: the slow start of reads from an emptied cache is what it measures, and
a warm-up rule would cut it off (figures()). The claims are the published study's findings in the project's words, each
decided across runs by a rule fixed before the data, the A/A control first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from cassperf.experiments.analysis import Analysis, Section, Sections
from cassperf.experiments.outcome import StudyOutcome
from cassperf.experiments.storage_cache import StorageStudy

#: the latency percentiles the study drew, each on its own chart
PERCENTILES = (("latency_p50_ms", "p50"), ("latency_p95_ms", "p95"), ("latency_p99_ms", "p99"))
#: "about the same" margin of the chunk-size claim, % of ops/s
SAME_PCT = 10.0
HERE = ("here the stripe chunk cannot be varied (no md driver): the chunk varied is the table's compression chunk, "
        "which sets how much Cassandra reads and decompresses per row, not how the disk stripes it")
COLD = ("the reads read a working set that fits in the node's bounded page cache, out of a data set several times "
        "it, as the study read 3M of its 150M rows; an emptied cache is refilled from a disk whose reads are "
        "throttled (cluster_read_iops) as a stand-in for the study's network-attached disks; the nodes are restarted "
        "only with cold_restart")


class Arms:
    """The outcome's arm names by their labels: full(storage, chunk, threads), empty(storage, chunk, run)."""

    def __init__(self, outcome: StudyOutcome) -> None:
        self.by_key: dict[tuple[str, str, str, str, str], str] = {}
        self.twin: tuple[str, str] | None = None
        for a in outcome.record.get("arms", []):
            lab = a["labels"]
            if lab.get("aa") == "twin":
                self.twin = (a["name"].removesuffix(" (A/A)"), a["name"])
                continue
            key = (lab["storage"], lab["chunk_kb"], lab["cache"], lab["run"], lab["concurrency"])
            self.by_key[key] = a["name"]

    def full(self, storage: str, chunk: int) -> dict[int, str]:
        """threads -> arm of the configuration's full-cache sweep."""
        return {int(t): n for (s, c, cache, _r, t), n in self.by_key.items()
                if (s, c, cache) == (storage, str(chunk), "full")}

    def empty(self, storage: str, chunk: int) -> tuple[int, str, str] | None:
        """(threads, run a arm, run b arm) of the configuration, or None."""
        found = {r: (int(t), n) for (s, c, cache, r, t), n in self.by_key.items()
                 if (s, c, cache) == (storage, str(chunk), "empty")}
        return (found["a"][0], found["a"][1], found["b"][1]) if "a" in found and "b" in found else None

    def chunks(self, storage: str) -> list[int]:
        return sorted({int(c) for s, c, *_ in self.by_key if s == storage})

    @property
    def storages(self) -> list[str]:
        return list(dict.fromkeys(s for s, *_ in self.by_key))


# -- the figures and the claims ------------------------------------------------------------------
#: the cache claims describe a large effect (the study's host cache: "ops/s are high and latency is
#: low" when full); a change shown smaller than this in the claimed direction is not that effect
CACHE_PCT = 10.0

def arm_rows(outcome: StudyOutcome, figures: pd.DataFrame) -> pd.DataFrame:
    """One row per arm (not the A/A twin): its runs' mean ops/s with the 95% CI, the merged
    percentiles, threads and chunk_kb as numbers, and ``configuration`` ('disk 64 KiB')."""
    from cassperf.analysis.arm_summary import arm_table

    used = figures[figures["status"] == "ok"]
    table = arm_table(used, outcome.runs)
    if table.empty or "storage" not in table.columns:
        return pd.DataFrame(columns=["configuration", "storage", "chunk_kb", "cache", "run", "concurrency",
                                     "rate_ops_s", *(m for m, _ in PERCENTILES)])
    if "aa" in table.columns:
        table = table[table["aa"].isna()]
    for col in ("concurrency", "chunk_kb"):
        table[col] = pd.to_numeric(table[col], errors="coerce").astype("Int64")
    table["configuration"] = table["storage"].astype(str) + " " + table["chunk_kb"].astype(str) + " KiB"
    return table.sort_values(["storage", "chunk_kb", "cache", "run", "concurrency"]).reset_index(drop=True)


def measured_configurations(outcome: StudyOutcome) -> pd.DataFrame:
    """The configurations as the baseline measured them (the newest execution's)."""
    base = outcome.record.get("baseline") or []
    rows = base[-1].get("configurations", []) if base else []
    cols = ["configuration", "measured_storage", "storage_device", "storage_fs", "md_level", "md_chunk_kb",
            "compression", "flushed"]
    frame = pd.DataFrame(rows)
    return frame[[c for c in cols if c in frame.columns]] if not frame.empty else frame


STUDY_DEVICES = ("/dev/sdc", "/dev/sdd", "/dev/sde", "/dev/sdf")


def runbook_items(md_device: str, devices: Sequence[str], chunk_kbs: Sequence[int], run_chunk_kb: int,
                  mount_point: str = "", allow_destructive: bool = False) -> list[Any]:
    """The study's mdadm runbook (cassperf.storage.raid_runbook) as report items: the RAID 0
    rebuild commands for every chunk size of ``chunk_kbs`` on ``devices`` (empty: the study's
    /dev/sdc../dev/sdf), printed only; with ``allow_destructive`` the plan for ``run_chunk_kb``
    run on exactly the devices named, after run_runbook's checks (a refusal is one line), each
    step's output and exit code shown."""
    import html

    from IPython.display import HTML

    from cassperf.storage.raid_runbook import RunbookRefused, format_plan, plan_raid0, run_runbook

    named = [str(d) for d in devices]
    members = named or list(STUDY_DEVICES)
    mount = mount_point or None
    text = "\n\n".join(f"# RAID 0, {chunk} KiB chunks" + ("" if named else " (the study's devices: give raid_devices)")
                       + "\n" + format_plan(plan_raid0(md_device, members, int(chunk), mount)) for chunk in chunk_kbs)
    items: list[Any] = [HTML(f"<pre>{html.escape(text)}</pre>")]
    if not allow_destructive:
        return [*items, HTML("<p>Printed only: <code>allow_destructive</code> is False.</p>")]
    try:
        result = run_runbook(plan_raid0(md_device, members, int(run_chunk_kb), mount), allow_destructive=True,
                             devices=named or None)
    except RunbookRefused as exc:
        return [*items, HTML(f"<p><b>Runbook not run:</b> {html.escape(str(exc))}</p>")]
    items += [HTML(f"<p><b>Runbook {'done' if result.ok else 'failed'}:</b> {html.escape(result.message)}</p>"),
              result.frame()]
    if result.detail is not None:
        items.append(result.detail.tables["arrays"])
    return items


class StorageAnalysis(Analysis):
    """What the storage-and-cache study concludes (module doc): a full-cache run's figures over its
    steady window (MSER-5), like every study's; an empty-cache run's over the whole run, and never
    left out for drift: its cold start, throughput rising as the caches fill, is what it measures
    (a drift it has stays in its ``window_note``)."""

    def window(self, run: Any) -> str:
        return "trim" if run.labels.get("cache") == "empty" else "mser5"

    def keeps_drift(self, run: Any) -> bool:
        return run.labels.get("cache") == "empty"

    def cache_sizes(self, outcome: StudyOutcome, storage: str, chunk_kb: int) -> tuple[float, float, float | None]:
        """(MB the reads touch, summed over the nodes; MB of data per node; MiB of page cache a node
        may hold, None when not bounded) of one configuration, from the setting the executor
        measured (experiments.setting). The reads touch the compression chunks that hold their
        working set: of C chunks per node, K keys read at random touch C (1 - (1 - 1/C)^K)."""
        from cassperf.experiments.setting import data_per_node_mb
        from cassperf.experiments.storage_cache import CONTEXTS

        study = self.study
        setting = (outcome.record.get("setting") or {}).get(CONTEXTS.get(storage, ""), {})
        sizes = (setting.get("data_mb") or {}).get(study.keyspace(chunk_kb)) or {}
        data = data_per_node_mb(setting, study.keyspace(chunk_kb))
        chunks = max(1.0, data * 1e6 / (chunk_kb * 1024)) if math.isfinite(data) else math.nan
        share = 1.0 - (1.0 - 1.0 / chunks) ** study.working_set if math.isfinite(chunks) else math.nan
        touched = sum(sizes.values()) * share if sizes else math.nan
        room = setting.get("page_cache_mb")
        return touched, data, float(room) if room else None
    def claims(self, outcome: StudyOutcome, figs: pd.DataFrame) -> pd.DataFrame:
        """The claims table (cassperf.analysis.verdicts), the A/A control first."""
        from cassperf.analysis import manipulation as took
        from cassperf.analysis.arms import compare
        from cassperf.analysis.resources import resource_rows
        from cassperf.analysis.verdicts import (aa_control, all_of, claim, claims_table, directional, equivalent,
                                                not_addressed, plateau, tested)

        src = outcome.study.source
        arms = Arms(outcome)
        res = resource_rows(figs)
        stripe = took.stripe_varied([c.get("md_chunk_kb") for c in measured_configurations(outcome)
                                     .to_dict("records")], [int(c) for s in arms.storages for c in arms.chunks(s)])

        def cmp(a: str, b: str, metric: str = "rate_ops_s") -> Any:
            return compare(figs, a, b, "read", metric)

        def row(text: str, parts: Sequence[tuple[str, Any]], rule: str, need: str, note: str, check: Any = None) -> Any:
            """A claim made of parts (what, verdict): every part must hold; 'needs' without parts.
            ``check``: a manipulation check the whole claim rests on (the RAID stripe)."""
            if not parts:
                verdict = not_addressed(need)
                return claim(text, src, tested(verdict, check) if check is not None else verdict, note,
                             measured=f"needs {need}")
            verdict = all_of([v for _, v in parts], rule)
            return claim(text, src, tested(verdict, check) if check is not None else verdict, note,
                         measured="; ".join(f"{what}: {v.comparison.text}" for what, v in parts))

        first = outcome.study.aa_arm(outcome.study.arms(outcome.calibrated))
        twin = arms.twin or (first, first + " (A/A)")
        aa = claim(f"A/A control: '{twin[0]}' against its identical twin", src, aa_control(cmp(*twin)))

        def chunk_pairs(a_chunks: Sequence[int], b_chunks: Sequence[int], rule: Callable[[Any], Any],
                        empty: bool = True) -> list[tuple[str, Any]]:
            """b's arms against a's at every thread count of the full sweep (and run a of the empty
            cache where both have it), per storage."""
            parts = []
            for s in arms.storages:
                for a in a_chunks:
                    for b in b_chunks:
                        if a == b or a not in arms.chunks(s) or b not in arms.chunks(s):
                            continue
                        fa, fb = arms.full(s, a), arms.full(s, b)
                        pairs = [(f"{s}, full, {t} thr, {b} vs {a} KiB", fa[t], fb[t]) for t in sorted(set(fa) & set(fb))]
                        ea, eb = arms.empty(s, a), arms.empty(s, b)
                        if empty and ea and eb:
                            pairs.append((f"{s}, empty run a, {b} vs {a} KiB", ea[1], eb[1]))
                        parts += [(what, rule(cmp(x, y))) for what, x, y in pairs]
            return parts

        rows = []
        large = [64, 128, 256]
        rows.append(row("Chunk sizes of 64, 128 and 256 KiB read at about the same rate, with a full or an empty cache",
                        [p for i, a in enumerate(large) for p in chunk_pairs([a], large[i + 1:],
                                                                             lambda c: equivalent(c, SAME_PCT))],
                        f"per storage, cache state and thread count ops/s within ±{SAME_PCT:g}% (TOST); every pair must "
                        f"hold", "two of 64/128/256 KiB on one storage (chunk_kbs)", HERE, stripe))
        rows.append(row("A 4 KiB chunk reads slower than 64 KiB and larger chunks, even with a full cache",
                        chunk_pairs(large, [4], lambda c: directional(c, -1)),
                        "4 KiB's ops/s significantly below the larger chunk's at every thread count and cache state",
                        "4 KiB and a larger chunk on one storage (chunk_kbs)",
                        HERE + "; a 4 KiB compression chunk means less to decompress per 4 KiB row, so here it may well "
                               "read faster", stripe))
        rows.append(row("128 KiB chunks may read slightly faster than 64 and 256 KiB",
                        chunk_pairs([64, 256], [128], lambda c: directional(c, +1), empty=False),
                        "128 KiB's ops/s significantly above the other's at every thread count (full cache)",
                        "128 KiB and 64 or 256 KiB on one storage (chunk_kbs)", HERE, stripe))
        tapers = []
        for s in arms.storages:
            for chunk in arms.chunks(s):
                sweep = arms.full(s, chunk)
                if len(sweep) >= 3:
                    knee = sorted(sweep)[len(sweep) // 2]
                    tapers.append((f"{s} {chunk} KiB", plateau(figs, {float(t): a for t, a in sweep.items()},
                                                                float(knee), "read")))
        rows.append(row("With a full cache, ops/s taper off as client threads rise", tapers,
                        f"per configuration: a significant rise from the sweep's first point to its middle (the knee), "
                        f"every point above it below +{SAME_PCT:g}% of it; every configuration must hold",
                        "a full-cache sweep of three thread counts or more",
                        "the study's taper came from the VMs' disk throughput limit; on 2 shared cores the client and the "
                        "node run out of CPU first"))

        def cache_parts(metrics: Sequence[str], sign: int, against: str) -> list[tuple[str, Any]]:
            """Per configuration with runs a and b: the full-cache run (against="full") or run b
            (against="b") against run a, in the claimed direction, each resting on its manipulation
            check: the cache emptied in effect for run a, and for run b also run a filling it."""
            parts = []
            for s in arms.storages:
                for chunk in arms.chunks(s):
                    e = arms.empty(s, chunk)
                    full = arms.full(s, chunk)
                    if e is None or (against == "full" and e[0] not in full):
                        continue
                    t, a, b = e
                    other = full[t] if against == "full" else b
                    emptied = took.cache_emptied(took.of_arm(res, a), took.of_arm(res, full.get(t, b)),
                                                 *self.cache_sizes(outcome, s, chunk))
                    check = emptied if against == "full" else took.all_took(
                        emptied, took.cache_filled(took.of_arm(res, a), took.of_arm(res, b)))
                    parts += [(f"{s} {chunk} KiB, {t} thr, {m}",
                               tested(directional(cmp(a, other, m), sign, CACHE_PCT), check)) for m in metrics]
            return parts

        pcts = [m for m, _ in PERCENTILES]
        need = "a configuration with the empty-cache runs a and b (empty_chunk_kbs)"
        rows.append(row("Reads with a full cache are faster than with an empty one (run A)",
                        cache_parts(["rate_ops_s"], +1, "full"),
                        f"full-cache ops/s significantly above the empty-cache run a's at the same thread count; does not hold "
                        f"when shown less than {CACHE_PCT:g}% above", need, COLD))
        rows.append(row("With a full cache, read latency is lower at p50, p95 and p99 than with an empty one (run A)",
                        cache_parts(pcts, -1, "full"),
                        f"each percentile of the full-cache runs' HDR merge significantly below run a's; does not hold when "
                        f"one is shown less than {CACHE_PCT:g}% below", need, COLD))
        rows.append(row("Run B, right after run A from an empty cache, reads faster (run A filled the cache)",
                        cache_parts(["rate_ops_s"], +1, "b"),
                        f"run b's ops/s significantly above run a's; does not hold when shown less than {CACHE_PCT:g}% above",
                        need, COLD))
        rows.append(row("Run B's read latency is lower than run A's at p50, p95 and p99", cache_parts(pcts, -1, "b"),
                        f"each percentile of run b's HDR merge significantly below run a's; does not hold when one is shown "
                        f"less than {CACHE_PCT:g}% below", need, COLD))
        return claims_table(aa, rows)


    # -- the sections ----------------------------------------------------------------------------------

    def sections(self, outcome: StudyOutcome, figures: pd.DataFrame) -> Sections:
        from cassperf.plots import studies as charts

        study: StorageStudy = outcome.study
        rows = arm_rows(outcome, figures)
        lat = ", ".join(sorted(set(figures.get("latency_type", pd.Series(dtype=str)).dropna()))) or None
        cal = outcome.calibrated

        def configurations() -> Any:
            return Section("The storage configurations, as measured",
                           "Each configuration's storage is measured on its node's data folder and its table's compression "
                           "read back from system_schema.tables. " + study.dropped(cal),
                           [measured_configurations(outcome)])

        def full() -> Any:
            f = rows[rows["cache"] == "full"]
            x = {"x_title": "requests in flight (client threads)", "log_x": True, "legend_title": "configuration"}
            return Section("Chunk sizes with a full cache",
                           f"Reads after the keyspace's files were read into the page cache (the study's ReadOnly-Full). "
                           f"Each point is the mean of an arm's {study.repeats} runs with its 95% CI; latency percentiles "
                           f"are merged from the runs' HDR histograms, each on its own chart.",
                           [charts.lines(f, "concurrency", "rate_ops_s", "configuration",
                                         "Full cache: ops/s vs requests in flight", "ops/s", **x),
                            *(charts.lines(f, "concurrency", m, "configuration", f"Full cache: latency {p} vs requests in flight",
                                           charts.latency_title(lat), **x) for m, p in PERCENTILES)])

        def cache() -> Any:
            at = {c: t for c, t in rows[rows["cache"] == "empty"][["configuration", "concurrency"]].itertuples(index=False)}
            c = rows[rows["configuration"].isin(list(at))]
            c = c[(c["cache"] == "empty") | (c["concurrency"] == c["configuration"].map(at))].copy()
            c["point"] = c["cache"].where(c["cache"] == "full", "empty, run " + c["run"].astype(str))
            c["configuration_point"] = c["configuration"] + ": " + c["point"]
            c = c.sort_values(["configuration", "point"])
            return Section("Full versus empty cache, run a versus run b",
                           "Run a follows the emptying of the caches (memtables flushed, key and row caches invalidated, "
                           "the OS page cache dropped; the nodes restarted only with cold_restart) and records from its "
                           "first request; run b "
                           "follows it at once. Both are taken over their whole runs, the full-cache point (the sweep's "
                           "arm at the same thread count) over its steady window.",
                           [charts.bars(c, "point", "rate_ops_s", "Read ops/s: full cache, empty cache run a and run b",
                                        "ops/s", color="configuration", x_title="cache"),
                            charts.latency_bars(c, "configuration_point", "Read latency: full cache, empty run a and b",
                                                lat, x_title="configuration and cache")])

        def runbook() -> Any:
            run = study.allow_destructive and not outcome.note   # never from the parameters of a stored record
            return Section("The study's mdadm runbook",
                           "The commands the study ran to rebuild its RAID 0 for each chunk size (unmount, stop the array, "
                           "erase the members' superblocks, create it with the chunk size, then mdadm --detail --scan and "
                           "mdadm --detail), for this report's parameters. They are only printed, unless "
                           "allow_destructive=True and raid_devices names the member devices: then the runbook runs for "
                           "raid_run_chunk_kb, after refusing any device that is mounted, holds the root filesystem or is "
                           "not in the list. Rebuilding the array destroys its data: the rows must be loaded again.",
                           runbook_items(study.raid_md_device, study.raid_devices, study.raid_chunk_kbs,
                                         study.raid_run_chunk_kb, study.raid_mount_point, run))

        return {"configurations": configurations, "full": full, "cache": cache, "runbook": runbook}


    #: the study's four data disks (the runbook prints them when raid_devices is empty)

