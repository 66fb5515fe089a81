"""The part of a study's page that says where the nodes spent their time: per arm the share of
the CPU samples per thread pool (a table and bars), and for each pair of arms a claim compares
what changed between them (a short table and a differential flame graph, both collapsed). Where there are no
profiles, one line says why (cassperf.experiments.profile_evidence)."""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd
from IPython.display import HTML, display

from cassperf.experiments.profile_evidence import MIN_POINTS, PairProfile, ProfileEvidence
from cassperf.workbook.text import esc as _esc

#: rows of a claim's differential table
DIFF_ROWS = 8


def _breakable(name: str) -> str:
    """A pool's name that may wrap inside a column heading: at its words (epoll<wbr>Event<wbr>Loop<wbr>Group,
    Native-<wbr>Transport-<wbr>Requests)."""
    return "<wbr>".join(_esc(part) for part in re.split(r"(?<=[a-z-])(?=[A-Z])", name))


def _pct(v: Any) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.1f}"


def pools_html(found: ProfileEvidence) -> str:
    """The heading, what the profiles are, and one row per arm: its share of the samples per pool."""
    period = f" every {found.period}" if found.period else ""
    head = ("<h4>Where the nodes spent their time</h4><p class='small'>CPU profiles of the nodes (Java Flight "
            f"Recorder: a stack sample{period} of each thread running Java code, and every GC pause), each run "
            "inside its steady window")
    if found.empty:
        return head + ". " + _esc("; ".join(found.notes) or "No profiles here.") + "</p>"
    pools = [c for c in found.pools.columns if c != "samples"]
    gc = found.gc.set_index("arm") if not found.gc.empty and "arm" in found.gc.columns else pd.DataFrame()
    cols = "".join(f"<th>{_breakable(p)} %</th>" for p in pools)
    rows = []
    for arm, r in found.pools.iterrows():
        g = gc.loc[arm] if arm in gc.index else None
        gc_cells = (f"<td>{int(g['pauses'])}</td><td>{g['total_ms']:.0f}</td>" if g is not None else
                    "<td>0</td><td>0</td>")
        rows.append(f"<tr><td>{_esc(arm)}</td>" + "".join(f"<td>{_pct(r[p])}</td>" for p in pools)
                    + f"<td>{int(r['samples']):,}</td>{gc_cells}</tr>")
    notes = f" Not read: {_esc('; '.join(found.notes))}." if found.notes else ""
    return (head + f", merged per arm over its counted runs ({found.runs} runs). Share of each arm's CPU samples per "
            f"thread pool (a shared-pool worker counted under the stage its stack shows).{notes}</p>"
            f"<div style='overflow-x:auto'><table class='per-arm'><thead><tr><th>arm</th>{cols}<th>samples</th><th>GC pauses</th>"
            f"<th>GC pause ms</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


def pair_html(found: PairProfile) -> str:
    """One pair of arms' differential, collapsed: the claims on it, the pools whose share changed,
    largest first."""
    pair = f"{found.arm_b} against {found.arm_a}"
    title = f"{pair} (the A/A control: how far shares move between identical arms)" if found.control else pair
    if found.note or found.pools is None:
        return f"<p class='small'><b>{_esc(title)}</b>: {_esc(found.note)}</p>"
    on = f"<p class='small'>Claims on this pair: {_esc('; '.join(found.claims))}.</p>"
    rows = "".join(f"<tr><td>{_esc(r.key)}</td><td>{_pct(r.share_a_pct)}</td><td>{_pct(r.share_b_pct)}</td>"
                   f"<td>{r.change_points:+.1f}</td></tr>" for r in found.pools.head(DIFF_ROWS).itertuples())
    lines = "; ".join(found.lines) or f"no pool or frame changed by {MIN_POINTS:g} point or more"
    return (f"<details><summary>What changed: {_esc(title)}</summary>{on}<p class='small'>{_esc(lines)}.</p>"
            f"<table><thead><tr><th>thread pool</th><th>{_esc(found.arm_a)} %</th><th>{_esc(found.arm_b)} %</th>"
            f"<th>change (points)</th></tr></thead><tbody>{rows}</tbody></table></details>")


def show_profiles(found: ProfileEvidence | None, style: str) -> None:
    """The profile block of the method section (module doc)."""
    from cassperf.plots.basic import show_collapsed
    from cassperf.plots.profiles import differential_flame, pool_share_bars

    if found is None:
        return
    display(HTML(f"{style}<div class='cp-find'>{pools_html(found)}</div>"))
    if found.empty:
        return
    display(pool_share_bars(found.pools, "Share of the nodes' CPU samples per thread pool, per arm"))
    if not found.pairs:
        display(HTML(f"{style}<div class='cp-find'><p class='small'>No claim compares two profiled arms, so no "
                     f"differential is shown.</p></div>"))
        return
    display(HTML(f"{style}<div class='cp-find'><h4>What changed between the arms each claim compares</h4>"
                 f"<p class='small'>Points of the samples: an arm's share minus the other's. The A/A pair comes "
                 f"first: a change no larger than its changes is noise. Open a pair for its table, and its flame "
                 f"graph below it (width: the second arm's samples; red: more of them pass there than of the first "
                 f"arm's, blue: fewer).</p></div>"))
    for pair in found.pairs:
        display(HTML(f"{style}<div class='cp-find'>{pair_html(pair)}</div>"))
        if pair.tree is not None and not pair.tree.empty:
            show_collapsed(differential_flame(pair.tree, f"{pair.arm_b} against {pair.arm_a}",
                                              a_name=pair.arm_a, b_name=pair.arm_b),
                           f"Flame graph: {pair.arm_b} against {pair.arm_a}")


__all__ = ["pair_html", "pools_html", "show_profiles"]
