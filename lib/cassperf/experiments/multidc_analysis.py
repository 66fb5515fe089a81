"""The multi-DC study's analysis: its claims and report sections from a stored outcome.

Arms with a client in each DC (independent write, replicated write, replicated mixed) hold one
run per DC client per block, and a block's clients run at the same time on the same cores. So
how a block's ops split between the DCs is the scheduler's, not a DC's: one client that gets
less CPU leaves more to the other (docs/measurements.md: replicated write per
DC 438 and 149 ops/s in one block, 287 and 935 in the next), and one block's dc1 and dc2
figures are not independent repeats. Their claims (and the A/A control, on one of them)
therefore compare the clients' ops/s summed per block (``clients_summed``: a block counts only
where every client counted), and state each DC's own change beside it. The tables show each DC
and, "both DCs together", per block the clients' ops/s summed, then the mean over blocks;
latency from every run's HDR histograms merged. The claims, the A/A control first, each decided
by a rule fixed before the data (cassperf.analysis.verdicts) on the runs of the arms it
compares (cassperf.analysis.arms: paired per block); a run that did not count (a client lost, a
run cut short) is listed by the comparison of its arm with its reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd
from scipy import stats as sps

from cassperf.experiments.analysis import Analysis, Section, Sections
from cassperf.experiments.outcome import StudyOutcome

SHARED = ("every node and both clients share this machine's cores: ops/s are bounded by CPU, which the delay does "
          "not use, more than by the round trips")
NONE = "No run of this part is stored."


# -- the runs, by arm and DC --------------------------------------------------------------------
def baseline(outcome: StudyOutcome) -> dict[str, Any] | None:
    """The newest network baseline in the study's record (None: none measured)."""
    found = outcome.record.get("baseline") or []
    return found[-1] if found else None


def rtt_ms(outcome: StudyOutcome) -> float | None:
    """The round trip the claims use: the measured ping RTT, else the configured one; None when
    the DCs had no distance between them."""
    from cassperf.experiments.network import measured_rtt_ms

    b = baseline(outcome)
    return measured_rtt_ms(b) if b and b.get("far") else None


def _ok(figures: pd.DataFrame) -> pd.DataFrame:
    return figures[figures["status"] == "ok"] if "status" in figures.columns else figures.iloc[0:0]


def per_dc(outcome: StudyOutcome, figures: pd.DataFrame) -> pd.DataFrame:
    """One row per arm, DC and op: the counted runs' mean ops/s with its 95% CI, merged latency."""
    from cassperf.analysis.arm_summary import arm_table

    return _typed(arm_table(_ok(figures), outcome.runs, keys=("arm", "dc")))


def together(outcome: StudyOutcome, figures: pd.DataFrame) -> pd.DataFrame:
    """One row per arm and op, both DCs' clients together: ops/s summed per block (blocks where
    every client of the arm counted), mean and 95% CI over those blocks; latency of every run's
    HDR histograms merged."""
    from cassperf.analysis.arm_summary import arm_table

    used = _ok(figures)
    if used.empty:
        return used
    table = arm_table(used, outcome.runs, keys=("arm",))
    summed = clients_summed(figures)
    several = set(summed["arm"])                   # arms with a client in each DC: a block's clients summed
    rates, cis, blocks = [], [], []
    for row in table.itertuples():
        frame = _ok(summed) if row.arm in several else used
        sums = frame[(frame["arm"] == row.arm) & (frame["op"] == row.op)]["rate_ops_s"].to_numpy(dtype="float64")
        n = len(sums)
        rates.append(float(sums.mean()) if n else math.nan)
        cis.append(float(sps.t.ppf(0.975, n - 1) * sums.std(ddof=1) / math.sqrt(n)) if n >= 2 else math.nan)
        blocks.append(n)
    table = table.assign(rate_ops_s=rates, rate_ci_ops_s=cis, n_blocks=blocks)
    return _typed(table.drop(columns=[c for c in ("dc", "client") if c in table.columns]))


def clients_summed(figures: pd.DataFrame) -> pd.DataFrame:
    """The run figures of the arms with more than one client, one row per arm, op and block: the
    clients' rate_ops_s summed (they ran at once on one cluster), with run_id the clients' run
    ids joined by "+", and status "ok" only where every client of the arm counted in that block
    (else "excluded", the reason naming each client's run that did not count). Other columns:
    arm, block, op, pool (the arm's), as cassperf.analysis.arms compares them."""
    cols = ["run_id", "arm", "block", "op", "pool", "status", "reason", "rate_ops_s"]
    if figures.empty or "client" not in figures.columns:
        return pd.DataFrame(columns=cols)
    clients = figures.groupby("arm")["client"].nunique()
    mine = figures[figures["arm"].isin(clients[clients > 1].index)]
    rows = []
    for (arm, op, block), g in mine.groupby(["arm", "op", "block"], sort=False):
        ok = g["status"] == "ok"
        whole = bool(ok.all()) and g["client"].nunique() == clients[arm]
        why = "; ".join(f"client {r.client}: {r.reason}" for r in g[~ok].itertuples()) or (
            f"{g['client'].nunique()} of the arm's {clients[arm]} clients ran in this block")
        rows.append({"run_id": "+".join(g["run_id"].astype(str)), "arm": arm, "block": block, "op": op,
                     "pool": g["pool"].iloc[0] if "pool" in g.columns else None,
                     "status": "ok" if whole else "excluded", "reason": "" if whole else why,
                     "rate_ops_s": float(g["rate_ops_s"].sum()) if whole else math.nan})
    return pd.DataFrame(rows, columns=cols)


def _typed(table: pd.DataFrame) -> pd.DataFrame:
    for col in ("rf", "concurrency"):
        if col in table.columns:
            table[col] = pd.to_numeric(table[col], errors="coerce").astype("Int64")
    return table


def traffic(outcome: StudyOutcome, root: Any = None) -> pd.DataFrame:
    """Network send and receive per arm and DC client location (MB/s, 10^6 bytes), the mean over
    the arm's runs with clients in both DCs: the interface counters read around each (group records)."""
    from cassperf import config
    from cassperf.experiments.clients import group_records

    ids = {r.run_id: r.labels.get("arm") for r in outcome.runs}
    rows = []
    for g in group_records(root if root is not None else config.runs_dir()):
        arms = {ids.get(c["run_id"]) for c in g.get("clients", [])} - {None}
        if len(arms) == 1:
            arm = arms.pop()
            rows.extend({"arm": arm, **t} for t in g.get("traffic") or [])
    cols = ["arm", "where", "send_mb_s", "receive_mb_s", "runs", "how"]
    if not rows:
        return pd.DataFrame(columns=cols)
    frame = pd.DataFrame(rows)
    out = frame.groupby(["arm", "where"], sort=False).agg(send_mb_s=("send_mb_s", "mean"),
                                                         receive_mb_s=("receive_mb_s", "mean"),
                                                         runs=("send_mb_s", "size"), how=("how", "first"))
    return out.reset_index()[cols]


# -- the claims ---------------------------------------------------------------------------------
def said(c: Any, label: str) -> str:
    """'<label>: <the comparison's line>', and the runs it left out with their reasons."""
    return f"{label}: {c.text}" + (f" (left out: {'; '.join(c.left_out)})" if c.left_out else "")


def _styled(frame: pd.DataFrame, formats: Mapping[str, str]) -> Any:
    return frame.style.hide(axis="index").format(dict(formats), na_rep="-")


class MultiDCAnalysis(Analysis):
    """What the multi-DC study concludes (module doc)."""
    def claims(self, outcome: StudyOutcome, figs: pd.DataFrame) -> pd.DataFrame:
        """The claims table (cassperf.analysis.verdicts), the A/A control first. Arms with a client in
        each DC compare their clients' ops/s summed per block (module doc), each DC's own change
        given beside it."""
        from cassperf.analysis.arms import compare
        from cassperf.analysis import manipulation as took
        from cassperf.analysis.verdicts import (aa_control, all_of, claim, claims_table, directional, equivalent,
                                                near_reference, tested, within_band)

        study, src = outcome.study, outcome.study.source
        home = study.cl_dc
        rtt = rtt_ms(outcome)
        b = baseline(outcome)
        dc_of = figs["dc"] if "dc" in figs.columns else pd.Series(pd.NA, index=figs.index, dtype="object")

        def cmp(a: str, b_: str, op: str, metric: str = "rate_ops_s", dc: str | None = None) -> Any:
            return compare(figs[dc_of == dc] if dc else figs, a, b_, op, metric)

        def far(v: Any) -> Any:
            """A claim on the round trip rests on a distance between the DCs: without one it is not
            tested here, and says why (manipulation.distance)."""
            return tested(v, took.distance(rtt, str(b.get("distance")) if b else "no network baseline was measured"))

        summed = clients_summed(figs)

        def together_cmp(a: str, b_: str, op: str) -> Any:
            """ops/s of arms with a client in each DC: their clients summed per block (module doc)."""
            return compare(summed, a, b_, op) if {a, b_} <= set(summed["arm"]) else cmp(a, b_, op)

        aa_name = study.aa_arm([])
        c = together_cmp(aa_name, aa_name + " (A/A)", "write")
        aa = claim(f"A/A control: '{aa_name}' against its identical twin, both DCs' clients summed per block", src,
                   aa_control(c), "compared as the claims on this arm are: the clients of a block share the cores",
                   measured=said(c, "both DCs"))
        rows = []
        # replication lowers each DC's write ops/s: judged on the DCs' clients summed per block
        both = directional(together_cmp("independent write", "replicated write", "write"), -1)
        each = {dc: cmp("independent write", "replicated write", "write", dc=dc) for dc in study.dcs}
        rows.append(claim("Replicating to the other DC lowers each DC's write ops/s against independent RF 1 writes, "
                          "even at LOCAL_QUORUM", src,
                          both,
                          f"{study.rf_note}; {SHARED}: a replica costs CPU here, on the same cores; the two clients of a "
                          f"block share those cores, so how the ops split between the DCs is not a DC's (each DC's own "
                          f"change is given beside the sum)",
                          measured="; ".join([said(both.comparison, "both DCs, summed per block")]
                                             + [said(v, f"{dc} alone") for dc, v in each.items()])))
        lq, eq = "LOCAL_QUORUM", "EACH_QUORUM"
        if lq in study.cl_levels and eq in study.cl_levels:
            ops = {op: directional(cmp(f"{op} {lq}", f"{op} {eq}", op), -1) for op in ("write", "read")}
            rows.append(claim("EACH_QUORUM is far slower than LOCAL_QUORUM across the inter-DC round trip, for writes and "
                              "for reads", src,
                              far(all_of(list(ops.values()), "EACH_QUORUM's ops/s significantly below LOCAL_QUORUM's, "
                                                             "for writes and for reads")),
                              f"one client in {home}; {SHARED}",
                              measured="; ".join(said(v.comparison, f"{op}s, EACH_QUORUM vs LOCAL_QUORUM ops/s")
                                                 for op, v in ops.items())))
            lats = {op: cmp(f"{op} {lq}", f"{op} {eq}", op, "latency_p50_ms") for op in ("write", "read")}
            rises = {f"{op}s": x.b - x.a for op, x in lats.items()}
            verdict = near_reference(all_of([directional(x, +1) for x in lats.values()],
                                            "the p50 rise significant for writes and reads"),
                                         rises, rtt, 0.5, 2.0, "ms", "the RTT", "each rise (b - a of the arms' merged p50)")
            rows.append(claim("EACH_QUORUM adds about one inter-DC round trip to each operation's latency", src,
                              far(verdict), "EACH_QUORUM waits for a quorum in the other DC too",
                              measured="; ".join(said(x, f"{op}s p50, +{rises[op + 's']:.1f} ms") for op, x in lats.items())
                              + (f" (RTT {rtt:.1f} ms)" if rtt else "")))
        # QUORUM reads against client threads
        sweep = sorted((int(a["labels"]["concurrency"]), a["name"]) for a in outcome.record.get("arms", [])
                       if a["labels"].get("part") == "quorum-read" and "aa" not in a["labels"])
        if len(sweep) >= 2:
            (_, a0), (_, a1) = sweep[0], sweep[-1]
            rows.append(claim("More client threads give more QUORUM read ops/s (each read waits on the round trip, so "
                              "parallel reads add up)", src, directional(cmp(a0, a1, "read"), +1), SHARED))
            rows.append(claim("QUORUM read latency stays about the same as client threads increase", src,
                              equivalent(cmp(a0, a1, "read", "latency_p50_ms"), 20.0),
                              "more threads than the cores can serve would add queueing to the round trip"))
            table = per_dc(outcome, figs)
            merged = {(r.arm, r.op): float(r.latency_p50_ms) for r in table.itertuples()} if not table.empty else {}
            p50s = {f"{t} threads": merged.get((a, "read"), math.nan) for t, a in sweep}
            verdict = far(within_band(p50s, rtt, 0.8, 2.0, "ms", "the RTT",
                                      "every thread count's p50 (the arm's runs merged)"))
            rows.append(claim("QUORUM reads (not LOCAL) take about one inter-DC round trip, at every client thread "
                              "count", src, verdict, "QUORUM over both DCs' replicas needs a replica of the other DC",
                              measured="p50 " + ", ".join(f"{p:.1f} ms at {t}" for t, p in p50s.items()
                                                          if math.isfinite(p))
                              + (f" (RTT {rtt:.1f} ms)" if rtt else "")))
        return claims_table(aa, rows)


    # -- the sections -------------------------------------------------------------------------------

    def sections(self, outcome: StudyOutcome, figures: pd.DataFrame) -> Sections:
        from cassperf.experiments import network
        from cassperf.plots import studies as charts

        study = outcome.study
        dcs = per_dc(outcome, figures)
        both = together(outcome, figures)
        lat = ", ".join(sorted(set(figures.get("latency_type", pd.Series(dtype=str)).dropna()))) or None
        dropped = study.dropped(outcome.calibrated)

        def rows(frame: pd.DataFrame, part: str) -> pd.DataFrame:
            if frame.empty or "part" not in frame.columns:
                return frame.iloc[0:0]
            aa = frame["aa"] if "aa" in frame.columns else pd.Series(pd.NA, index=frame.index)
            return frame[(frame["part"] == part) & aa.isna()]

        def network_section() -> Any:
            b = baseline(outcome)
            text = (f"{b['distance'][:1].upper() + b['distance'][1:]}. " if b and b.get("distance") else "") + (
                "Measured from the client locations before the blocks: ping each way, iperf3 from the first DC's client "
                "to a server at the other's. Every packet between the DCs of the embedded cluster passes the delay router, "
                "a small Python process: iperf3 then measures that router (a few hundred Mbit/s here), not a link, and "
                "more streams cannot add to it as they do across regions. Below: send and receive at each DC's client "
                "location during the runs of clients in both DCs (interface byte counters before and after each run, the "
                "mean over the arm's runs).")
            net = network.baseline_table(b)
            return Section("Network between the DCs", text, [_styled(net, {"value": "{:,.2f}"}),
                                                             _styled(traffic(outcome), {"send_mb_s": "{:,.3f}",
                                                                                        "receive_mb_s": "{:,.3f}"})])

        def writes() -> Any:
            title = "Independent RF 1 writes vs replicated writes, both DCs at once"
            w = pd.concat([rows(dcs, "independent"), rows(dcs, "replicated")])
            t = pd.concat([rows(both, "independent"), rows(both, "replicated")])
            if w.empty:
                return Section(title, NONE)
            w = w.assign(point=w["arm"] + " " + w["dc"].astype(str))
            return Section(title,
                           f"Each bar is the mean of a DC client's {study.repeats} runs with its 95% CI; latency "
                           f"percentiles are merged over the runs. Together: per block the two clients' ops/s added, "
                           f"then the mean over blocks. {study.rf_note}. {dropped}",
                           [charts.bars(w, "dc", "rate_ops_s", "Write ops/s per DC: independent RF 1 vs replicated",
                                        "ops/s", color="arm", x_title="DC of the client"),
                            charts.latency_bars(w, "point", "Write latency per DC", lat, x_title="arm and DC"),
                            charts.bars(t, "arm", "rate_ops_s", "Write ops/s, both DCs together", "ops/s", x_title="arm"),
                            charts.latency_bars(t, "arm", "Write latency, both DCs together (HDR-merged)", lat,
                                                x_title="arm")])

        def ops_and_latency(title: str, frame: pd.DataFrame, x: str, color: str, text: str, ops_title: str,
                            lat_title: str, x_title: str, point_title: str) -> Any:
            """Ops/s bars by ``x`` coloured by ``color``, and latency bars per (x, color) point."""
            if frame.empty:
                return Section(title, NONE)
            frame = frame.assign(point=frame[x].astype(str) + " " + frame[color].astype(str))
            return Section(title, text,
                           [charts.bars(frame, x, "rate_ops_s", ops_title, "ops/s", color=color, x_title=x_title),
                            charts.latency_bars(frame, "point", lat_title, lat, x_title=point_title)])

        def mixed() -> Any:
            return ops_and_latency("Replicated 50/50 mixed, both DCs at once", rows(dcs, "mixed"), "dc", "op",
                                   "A mixed run has a row per operation; ops/s are each operation's own rate.",
                                   "Mixed 50/50 on the replicated keyspaces: ops/s per DC",
                                   "Mixed 50/50: latency per DC and operation", "DC of the client", "DC and operation")

        def consistency() -> Any:
            return ops_and_latency("LOCAL_QUORUM vs EACH_QUORUM, writes and reads",
                                   pd.concat([rows(dcs, "cl-write"), rows(dcs, "cl-read")]), "op", "cl",
                                   f"From {study.cl_dc}'s client alone, on its replicated keyspace. EACH_QUORUM waits for "
                                   f"a quorum in every DC, so each operation waits for the other DC at least once.",
                                   "Ops/s by consistency level", "Latency by consistency level", "operation",
                                   "operation and consistency level")

        def quorum() -> Any:
            title = "QUORUM reads against requests in flight"
            q = rows(dcs, "quorum-read")
            if q.empty:
                return Section(title, NONE)
            return Section(title,
                           f"From {study.cl_dc}'s client. QUORUM counts replicas in both DCs, so every read waits for "
                           f"the other DC. {dropped}",
                           [charts.lines(q, "concurrency", "rate_ops_s", "cl", "QUORUM read ops/s vs requests in flight", "ops/s",
                                         x_title="requests in flight (client threads)", log_x=True),
                            charts.latency_lines(q, "concurrency", "cl", "QUORUM read latency vs requests in flight", lat,
                                                 x_title="requests in flight (client threads)", log_x=True)])

        return {"network": network_section, "writes": writes, "mixed": mixed, "consistency": consistency,
                "quorum": quorum}

