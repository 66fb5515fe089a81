"""The storage-and-cache study's analysis: its claims and chart sections from a stored outcome.

Every figure here is over the **whole run**, not a steady window: the slow start of reads from
an emptied cache is what the empty-cache runs measure, and a warm-up rule would cut it off. The
claims are the published study's findings (../shared/studies/004_*) in the project's words, each
decided across runs by a rule fixed before the data, the A/A control first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from cassperf.experiments.outcome import StudyOutcome, run_figures
from cassperf.experiments.storage_cache import StorageStudy

#: the latency percentiles the study drew, each on its own chart
PERCENTILES = (("latency_p50_ms", "p50"), ("latency_p95_ms", "p95"), ("latency_p99_ms", "p99"))
#: "about the same" margin of the chunk-size claim, % of ops/s
SAME_PCT = 10.0
HERE = ("here the stripe chunk cannot be varied (no md driver): the chunk varied is the table's compression chunk, "
        "which sets how much Cassandra reads and decompresses per row, not how the disk stripes it")
COLD = ("the data of a local run is small and fits in memory: an emptied page cache fills again within seconds, and "
        "a restarted node also starts with a cold JIT")


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
            key = (lab["storage"], lab["chunk_kb"], lab["cache"], lab["run"], lab["threads"])
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


# -- the claims ----------------------------------------------------------------------------------
def claims(outcome: StudyOutcome) -> pd.DataFrame:
    """The claims table (cassperf.analysis.claims), the A/A row first."""
    from cassperf.analysis.claims import FAILS, HOLDS, NOT_SHOWN, Claim, alike, claims_frame, describe, higher, lower
    from cassperf.analysis.compare import compare_groups

    study, arms = outcome.study, Arms(outcome)
    source = study.source

    def cmp(a: str, b: str, metric: str = "rate_ops_s") -> Any:
        ra, rb = outcome.runs_of(a), outcome.runs_of(b)
        return compare_groups(ra, rb, "read", metric, steady=False) if ra and rb else None

    def combine(verdicts: Sequence[str]) -> str:
        if not verdicts:
            return NOT_SHOWN
        if FAILS in verdicts:
            return FAILS
        return HOLDS if all(v == HOLDS for v in verdicts) else NOT_SHOWN

    def checked(parts: Sequence[tuple[str, Any, str]], need: str) -> tuple[str, str]:
        """(measured, verdict) of comparisons (what, comparison, its verdict)."""
        if not parts:
            return f"needs {need}", NOT_SHOWN
        return "; ".join(f"{describe(c, what)} ({v})" for what, c, v in parts), combine([v for *_, v in parts])

    rows: list[Claim] = []
    if arms.twin:
        c = cmp(*arms.twin)
        rows.append(Claim(f"A/A control: '{arms.twin[0]}' against its identical twin", source,
                          describe(c, "twin vs original read ops/s"),
                          "control" if c is None or not c.significant else "noise beyond the method",
                          "no significant difference expected", ""))

    def chunk_pairs(a_chunks: Sequence[int], b_chunks: Sequence[int], rule: Callable[[Any], str],
                    empty: bool = True) -> list[tuple[str, Any, str]]:
        """b's arms against a's at every thread count of the full sweep (and run a of the empty
        cache where both have it), per storage."""
        parts = []
        for s in arms.storages:
            for a in a_chunks:
                for b in b_chunks:
                    if a == b or a not in arms.chunks(s) or b not in arms.chunks(s):
                        continue
                    fa, fb = arms.full(s, a), arms.full(s, b)
                    pairs = [(f"{s}, full, {t} thr: {b} vs {a} KiB", fa[t], fb[t]) for t in sorted(set(fa) & set(fb))]
                    ea, eb = arms.empty(s, a), arms.empty(s, b)
                    if empty and ea and eb:
                        pairs.append((f"{s}, empty run a: {b} vs {a} KiB", ea[1], eb[1]))
                    for what, x, y in pairs:
                        c = cmp(x, y)
                        parts.append((what, c, rule(c)))
        return parts

    large = [64, 128, 256]
    parts = [p for i, a in enumerate(large) for p in chunk_pairs([a], large[i + 1:], lambda c: alike(c, SAME_PCT))]
    measured, verdict = checked(parts, "two of 64/128/256 KiB on one storage")
    rows.append(Claim("Chunk sizes of 64, 128 and 256 KiB read at about the same rate, with a full or an empty cache",
                      source, measured, verdict, f"per storage, cache state and thread count the 95% CI of the ops/s "
                      f"change lies within ±{SAME_PCT:g}%; does not hold if any lies wholly outside", HERE))
    measured, verdict = checked(chunk_pairs(large, [4], lower), "4 KiB and a larger chunk on one storage")
    rows.append(Claim("A 4 KiB chunk reads slower than 64 KiB and larger chunks, even with a full cache", source,
                      measured, verdict, "4 KiB's ops/s significantly below the larger chunk's at every thread count "
                      "and cache state", HERE + "; a 4 KiB compression chunk means less to decompress per 4 KiB row, "
                      "so here it may well read faster"))
    measured, verdict = checked(chunk_pairs([64, 256], [128], higher, empty=False),
                                "128 KiB and 64 or 256 KiB on one storage")
    rows.append(Claim("128 KiB chunks may read slightly faster than 64 and 256 KiB", source, measured, verdict,
                      "128 KiB's ops/s significantly above the other's at every thread count (full cache)", HERE))

    tapers = []
    for s in arms.storages:
        for chunk in arms.chunks(s):
            sweep = sorted(arms.full(s, chunk).items())
            if len(sweep) < 3:
                continue
            (lo, a_lo), (mid, a_mid), (hi, a_hi) = sweep[0], sweep[len(sweep) // 2], sweep[-1]
            rise, above = cmp(a_lo, a_mid), cmp(a_mid, a_hi)
            tapers.append((f"{s} {chunk} KiB: {mid} vs {lo} thr", rise, higher(rise)))
            flat = NOT_SHOWN if above is None or above.unstable_a or above.unstable_b else \
                FAILS if above.ci_low_pct > SAME_PCT else HOLDS if above.ci_high_pct < SAME_PCT else NOT_SHOWN
            tapers.append((f"{s} {chunk} KiB: {hi} vs {mid} thr", above, flat))
    measured, verdict = checked(tapers, "a full-cache sweep of three thread counts or more")
    rows.append(Claim("With a full cache, ops/s taper off as client threads rise", source, measured, verdict,
                      f"per configuration: ops/s rise significantly from the sweep's first point to its middle (the "
                      f"knee), and its last point lies below +{SAME_PCT:g}% of the middle (95% CI)",
                      "the study's taper came from the VMs' disk throughput limit; on 2 shared cores the client and "
                      "the node run out of CPU first"))

    def cache_parts(metric: str, rule: Callable[[Any], str], runs: str) -> list[tuple[str, Any, str]]:
        parts = []
        for s in arms.storages:
            for chunk in arms.chunks(s):
                e = arms.empty(s, chunk)
                if e is None or e[0] not in arms.full(s, chunk):
                    continue
                t, a, b = e
                x, y, what = (a, arms.full(s, chunk)[t], "full vs empty run a") if runs == "full" else \
                    (a, b, "run b vs run a")
                c = cmp(x, y, metric)
                parts.append((f"{s} {chunk} KiB, {t} thr, {metric}: {what}", c, rule(c)))
        return parts

    def latency(runs: str) -> list[tuple[str, Any, str]]:
        return [p for metric, _ in PERCENTILES for p in cache_parts(metric, lower, runs)]

    need = "a configuration with the empty-cache runs a and b"
    for text, rule_text, parts in (
            ("Reads with a full cache are faster than with an empty one (run A)",
             "full-cache ops/s significantly above the empty-cache run a's at the same thread count",
             cache_parts("rate_ops_s", higher, "full")),
            ("With a full cache, read latency is lower at p50, p95 and p99 than with an empty one (run A)",
             "each percentile of the full-cache runs' HDR merge significantly below run a's",
             latency("full")),
            ("Run B, right after run A from an empty cache, reads faster (run A filled the cache)",
             "run b's ops/s significantly above run a's", cache_parts("rate_ops_s", higher, "b")),
            ("Run B's read latency is lower than run A's at p50, p95 and p99",
             "each percentile of run b's HDR merge significantly below run a's", latency("b"))):
        measured, verdict = checked(parts, need)
        rows.append(Claim(text, source, measured, verdict, rule_text, COLD))
    frame = claims_frame(rows)
    frame.insert(0, "kind", ["control" if arms.twin else "claim"] + ["claim"] * (len(frame) - 1))
    return frame


# -- the sections ----------------------------------------------------------------------------------
def arm_rows(outcome: StudyOutcome, figures: pd.DataFrame) -> pd.DataFrame:
    """One row per arm (not the A/A twin): its runs' mean ops/s with the 95% CI, the merged
    percentiles, threads and chunk_kb as numbers, and ``configuration`` ('disk 64 KiB')."""
    from cassperf.analysis.arm_summary import arm_table

    used = figures[figures["status"] == "used"]
    table = arm_table(used, outcome.runs)
    if table.empty or "storage" not in table.columns:
        return pd.DataFrame(columns=["configuration", "storage", "chunk_kb", "cache", "run", "threads",
                                     "rate_ops_s", *(m for m, _ in PERCENTILES)])
    if "aa" in table.columns:
        table = table[table["aa"].isna()]
    for col in ("threads", "chunk_kb"):
        table[col] = pd.to_numeric(table[col], errors="coerce").astype("Int64")
    table["configuration"] = table["storage"].astype(str) + " " + table["chunk_kb"].astype(str) + " KiB"
    return table.sort_values(["storage", "chunk_kb", "cache", "run", "threads"]).reset_index(drop=True)


def measured_configurations(outcome: StudyOutcome) -> pd.DataFrame:
    """The configurations as the baseline measured them (the newest execution's)."""
    base = outcome.record.get("baseline") or []
    rows = base[-1].get("configurations", []) if base else []
    cols = ["configuration", "measured_storage", "storage_device", "storage_fs", "md_level", "md_chunk_kb",
            "compression", "flushed"]
    frame = pd.DataFrame(rows)
    return frame[[c for c in cols if c in frame.columns]] if not frame.empty else frame


def sections(outcome: StudyOutcome, figures: pd.DataFrame) -> dict[str, Callable[[], Any]]:
    from cassperf.plots import studies as charts
    from cassperf.report.study_report import Section

    study: StorageStudy = outcome.study
    rows = arm_rows(outcome, figures)
    lat = ", ".join(sorted(set(figures.get("latency_type", pd.Series(dtype=str)).dropna()))) or None
    calibrated = outcome.record.get("calibration")
    from cassperf.experiments.study import Calibrated

    cal = Calibrated.from_json(calibrated) if calibrated else None

    def configurations() -> Any:
        return Section("The storage configurations, as measured",
                       "Each configuration's storage is measured on its node's data folder and its table's compression "
                       "read back from system_schema.tables. " + study.dropped(cal),
                       [measured_configurations(outcome)])

    def full() -> Any:
        f = rows[rows["cache"] == "full"]
        x = {"x_title": "client threads", "log_x": True, "legend_title": "configuration"}
        return Section("Chunk sizes with a full cache",
                       f"Reads after the keyspace's files were read into the page cache (the study's ReadOnly-Full). "
                       f"Each point is the mean of an arm's {study.repeats} runs with its 95% CI; latency percentiles "
                       f"are merged from the runs' HDR histograms, each on its own chart.",
                       [charts.lines(f, "threads", "rate_ops_s", "configuration",
                                     "Full cache: ops/s vs client threads", "ops/s", **x),
                        *(charts.lines(f, "threads", m, "configuration", f"Full cache: latency {p} vs client threads",
                                       charts.latency_title(lat), **x) for m, p in PERCENTILES)])

    def cache() -> Any:
        at = {c: t for c, t in rows[rows["cache"] == "empty"][["configuration", "threads"]].itertuples(index=False)}
        c = rows[rows["configuration"].isin(list(at))]
        c = c[(c["cache"] == "empty") | (c["threads"] == c["configuration"].map(at))].copy()
        c["point"] = c["cache"].where(c["cache"] == "full", "empty, run " + c["run"].astype(str))
        c["configuration_point"] = c["configuration"] + ": " + c["point"]
        c = c.sort_values(["configuration", "point"])
        return Section("Full versus empty cache, run a versus run b",
                       "Run a follows the emptying of the caches (memtables flushed, key and row caches invalidated, "
                       "the node restarted, the OS page cache dropped) and records from its first request; run b "
                       "follows it at once; the full-cache point is the sweep's run at the same thread count.",
                       [charts.bars(c, "point", "rate_ops_s", "Read ops/s: full cache, empty cache run a and run b",
                                    "ops/s", color="configuration", x_title="cache"),
                        charts.latency_bars(c, "configuration_point", "Read latency: full cache, empty run a and b",
                                            lat, x_title="configuration and cache")])

    return {"configurations": configurations, "full": full, "cache": cache}


def parts(outcome: StudyOutcome) -> tuple[pd.DataFrame, pd.DataFrame, Mapping[str, Callable[[], Any]]]:
    figures = run_figures(outcome, steady=False)
    return claims(outcome), figures, sections(outcome, figures)
