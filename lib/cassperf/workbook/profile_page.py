"""The part of a study's page that says where the nodes spent their time: per arm the share of
the CPU samples per thread pool (a table and bars), and per decided claim what changed between
its two arms (a short table and a differential flame graph, both collapsed). Where there are no
profiles, one line says why (cassperf.experiments.profile_evidence)."""

from __future__ import annotations

import html
import math
from typing import Any

import pandas as pd
from IPython.display import HTML, display

from cassperf.experiments.profile_evidence import MIN_POINTS, ClaimProfile, ProfileEvidence

#: rows of a claim's differential table
DIFF_ROWS = 8


def _esc(v: Any) -> str:
    return html.escape("" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))


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
    cols = "".join(f"<th>{_esc(p)} %</th>" for p in pools)
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
            f"<div style='overflow-x:auto'><table><thead><tr><th>arm</th>{cols}<th>samples</th><th>GC pauses</th>"
            f"<th>GC pause ms</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


def claim_html(found: ClaimProfile) -> str:
    """One decided claim's differential: the pools whose share changed, largest first, collapsed."""
    title = f"{found.claim}: {found.arm_b} against {found.arm_a}"
    if found.note or found.pools is None:
        return f"<p class='small'><b>{_esc(title)}</b>: {_esc(found.note)}</p>"
    rows = "".join(f"<tr><td>{_esc(r.key)}</td><td>{_pct(r.share_a_pct)}</td><td>{_pct(r.share_b_pct)}</td>"
                   f"<td>{r.change_points:+.1f}</td></tr>" for r in found.pools.head(DIFF_ROWS).itertuples())
    lines = "; ".join(found.lines) or f"no pool or frame changed by {MIN_POINTS:g} point or more"
    return (f"<details><summary>What changed: {_esc(title)}</summary><p class='small'>{_esc(lines)}.</p>"
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
    if not found.claims:
        display(HTML(f"{style}<div class='cp-find'><p class='small'>No claim was decided between two profiled arms, "
                     f"so no differential is shown.</p></div>"))
        return
    display(HTML(f"{style}<div class='cp-find'><h4>What changed between the arms of each decided claim</h4>"
                 f"<p class='small'>Points of the samples: an arm's share minus the other's. Open a claim for its "
                 f"table, and its flame graph below it (width: B's samples; red: more of B's samples than of A's "
                 f"pass there, blue: fewer).</p></div>"))
    drawn: set[tuple[str, str]] = set()
    for claim in found.claims:
        display(HTML(f"{style}<div class='cp-find'>{claim_html(claim)}</div>"))
        if claim.tree is not None and not claim.tree.empty and (claim.arm_a, claim.arm_b) not in drawn:
            drawn.add((claim.arm_a, claim.arm_b))
            show_collapsed(differential_flame(claim.tree, f"{claim.arm_b} against {claim.arm_a}",
                                              a_name=claim.arm_a, b_name=claim.arm_b),
                           f"Flame graph: {claim.arm_b} against {claim.arm_a}")


__all__ = ["claim_html", "pools_html", "show_profiles"]
