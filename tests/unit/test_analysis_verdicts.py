"""Claims by their kind: directional, equivalence (TOST), a sweep's plateau, the A/A control that
withholds a study's verdicts, and the claims table with its figures columns."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from cassperf.analysis.arms import ArmComparison, compare_arms
from cassperf.analysis.claims import FAILS, HOLDS, NOT_SHOWN
from cassperf.analysis.simulate import Noise, SimArm, sim_figures, simulate
from cassperf.analysis.verdicts import (
    CLAIM_COLUMNS,
    Verdict,
    aa_control,
    all_of,
    claim,
    claims_table,
    differs,
    directional,
    equivalent,
    plateau,
)

SOURCE = "\"A study\" (a write-up of runs)"


def paired(a: list[float], b: list[float]) -> ArmComparison:
    rows = [(f"a{k}", "a", k, v) for k, v in enumerate(a, 1)] + [(f"b{k}", "b", k, v) for k, v in enumerate(b, 1)]
    frame = pd.DataFrame({"run_id": [r[0] for r in rows], "arm": [r[1] for r in rows],
                          "block": pd.array([r[2] for r in rows], dtype="Int64"), "op": "write", "status": "ok",
                          "reason": "", "rate_ops_s": [r[3] for r in rows]})
    return compare_arms(frame, "a", "b", "write")


RISE = paired([100, 102, 98], [150, 155, 149])          # +52%, significant
FALL = paired([100, 102, 98], [70, 72, 69])             # -30%, significant
FLAT = paired([100, 120, 90], [95, 125, 92])            # +0.4%, p = 0.90; its 90% CI [-7.5%, +9.0%]
SAME = paired([100, 101, 99, 100, 100], [100.5, 100.9, 99.4, 100.2, 99.8])   # within a few tenths of a %


def test_directional_holds_fails_or_is_not_shown_with_its_mde() -> None:
    v = directional(RISE, +1)
    assert (v.verdict, v.reason) == (HOLDS, f"{RISE.text}: a significant rise")
    v = directional(RISE, -1)
    assert (v.verdict, v.reason) == (FAILS, f"{RISE.text}: a significant rise, where the claim says a fall")
    assert directional(FALL, -1).verdict == HOLDS
    v = directional(FLAT, +1)
    assert v.verdict == NOT_SHOWN
    assert v.reason == (f"the change is {FLAT.change_pct:+.1f}% (p = {FLAT.p_value:.3f}) and these runs could "
                        f"detect ±{FLAT.mde_pct:.0f}% or more")
    assert v.rule == "significant change (p < 0.05, two-sided) in the claimed direction, across runs"
    with pytest.raises(ValueError, match="sign must be"):
        directional(RISE, 0)


def test_a_claim_that_names_a_size_does_not_hold_when_the_change_is_shown_smaller() -> None:
    # FLAT's 90% CI [-7.5%, +9.0%]: no rise of 10% or more (its upper bound short of +10%)
    v = directional(FLAT, +1, material_pct=10.0)
    low, high = FLAT.ci_pct(0.90)
    assert (v.verdict, v.reason) == (FAILS, f"the change is {FLAT.change_pct:+.1f}%, 90% CI [{low:+.1f}%, "
                                            f"{high:+.1f}%]: no rise of 10% or more")
    assert v.rule.endswith("does not hold either when the rise is shown below 10% (one-sided test at 5%: the 90% "
                           "CI's bound in the claimed direction short of 10%)")
    # a fall: FLAT's lower bound -7.5% is short of -10% too
    assert directional(FLAT, -1, material_pct=10.0).verdict == FAILS
    # a size the CI still reaches is not shown, as without one
    assert directional(FLAT, +1, material_pct=5.0).verdict == NOT_SHOWN
    # significant changes decide as before, unless shown short of the size
    assert directional(RISE, +1, material_pct=10.0).verdict == HOLDS
    assert directional(RISE, -1, material_pct=10.0).verdict == FAILS
    small = paired([100, 101, 99, 100, 100], [103, 104, 102, 103, 103])     # +3%, significant, CI well short of 10%
    assert small.significant
    v = directional(small, +1, material_pct=10.0)
    assert v.verdict == FAILS and v.reason.endswith("no rise of 10% or more")
    with pytest.raises(ValueError, match="material_pct must be > 0"):
        directional(RISE, -1, material_pct=100.0)


def test_a_claimed_difference_either_way_holds_when_significant_and_fails_when_shown_the_same() -> None:
    assert differs(RISE, 10.0).verdict == HOLDS and differs(FALL, 10.0).verdict == HOLDS
    assert differs(FALL, 10.0).reason == f"{FALL.text}: a significant fall"
    assert differs(paired([100, 101, 99, 100, 100], [103, 104, 102, 103, 103]), 10.0).verdict == FAILS  # +3%
    v = differs(SAME, 10.0)                  # within a few tenths of a %: shown within ±10%
    assert v.verdict == FAILS and v.reason.endswith("lies within ±10%: no change of 10% or more either way")
    v = differs(FLAT, 5.0)                   # 90% CI [-7.5%, +9.0%]: neither
    assert (v.verdict, v.reason) == (NOT_SHOWN, f"the change is {FLAT.change_pct:+.1f}% (p = {FLAT.p_value:.3f}) and "
                                                f"these runs could detect ±{FLAT.mde_pct:.0f}% or more")
    assert v.rule == ("significant change (p < 0.05, two-sided) either way; does not hold when the 90% CI lies within "
                      "±5% (TOST), significant or not")


def test_a_comparison_without_a_test_is_not_shown_with_its_problem() -> None:
    few = paired([100], [150])
    v = directional(few, +1)
    assert (v.verdict, v.reason) == (NOT_SHOWN, "the runs cannot decide: too few runs counted (1 of a, 1 of b; "
                                                "2 a side needed)")


def test_equivalence_by_tost_within_the_margin() -> None:
    v = equivalent(SAME, 5.0)
    low, high = SAME.ci_pct(0.90)
    assert v.verdict == HOLDS
    assert v.reason == f"{SAME.change_pct:+.1f}%, 90% CI [{low:+.1f}%, {high:+.1f}%] lies within ±5%"
    assert v.rule == "TOST at 5%: the 90% CI of the change within ±5%"
    assert equivalent(RISE, 10.0).verdict == FAILS            # significantly beyond +10%
    assert equivalent(RISE, 10.0).reason.endswith("lies beyond ±10%: a significant difference")
    v = equivalent(FLAT, 5.0)                                 # no difference found, but no equivalence either
    assert v.verdict == NOT_SHOWN and v.reason.endswith(f"reaches beyond ±5%; these runs could detect "
                                                        f"±{FLAT.mde_pct:.0f}% or more")
    with pytest.raises(ValueError, match="margin_pct must be > 0"):
        equivalent(SAME, 0)


def test_the_aa_row_and_a_study_whose_aa_row_is_significant_withholds_its_verdicts() -> None:
    ok = aa_control(FLAT)
    assert (ok.verdict, ok.reason) == (HOLDS, f"{FLAT.text}: identical arms do not differ significantly")
    bad = aa_control(RISE)
    assert bad.verdict == FAILS and bad.reason.endswith("this machine's noise is beyond what the method can "
                                                        "separate, so the study's verdicts are withheld")
    rows = [claim("B is faster", SOURCE, directional(RISE, +1)), claim("B is slower", SOURCE, directional(FALL, -1))]
    table = claims_table(claim("A/A: the arm twice", SOURCE, ok), rows)
    assert list(table.columns) == CLAIM_COLUMNS
    assert table["verdict"].tolist() == [HOLDS, HOLDS, HOLDS]
    assert table["n_a"].tolist() == [3, 3, 3] and table["n_a"].dtype == "Int64"
    assert table.loc[1, "change_pct"] == RISE.change_pct and table.loc[1, "mde_pct"] == RISE.mde_pct
    assert table.loc[1, "measured"] == f"rate_ops_s write, b against a: {RISE.text}"
    withheld = claims_table(claim("A/A: the arm twice", SOURCE, bad), rows)
    assert withheld["verdict"].tolist() == [FAILS, NOT_SHOWN, NOT_SHOWN]
    assert withheld.loc[1, "reason"] == (f"withheld: the A/A control differs significantly ({RISE.change_pct:+.1f}%, "
                                         f"p < 0.001): this machine's noise is beyond what the method can separate")
    assert withheld.loc[1, "change_pct"] == RISE.change_pct          # the figures stay


def test_all_of_needs_every_part() -> None:
    assert all_of([directional(RISE, +1), directional(FALL, -1)]).verdict == HOLDS
    assert all_of([directional(RISE, +1), directional(FLAT, +1)]).verdict == NOT_SHOWN
    v = all_of([directional(FLAT, +1), directional(RISE, -1)])
    assert v.verdict == FAILS and v.reason.endswith("where the claim says a fall")
    # the row's figures are the deciding part's: its MDE beside its reason, not the first part's
    assert v.comparison is RISE
    assert all_of([directional(RISE, +1), directional(FLAT, +1)]).comparison is FLAT
    assert all_of([directional(RISE, +1), directional(FALL, -1)]).comparison is RISE
    with pytest.raises(ValueError, match="no verdicts"):
        all_of([])


def test_a_claim_without_a_comparison_has_empty_figures() -> None:
    row = claim("Runs on Docker are slower", SOURCE, Verdict(NOT_SHOWN, "needs a Docker deployment", "rule"))
    assert row.measured == "" and math.isnan(row.change_pct) and row.p_value is None and row.n_a is None
    table = claims_table(row, [])
    assert table["p_value"].isna().all() and table["n_a"].isna().all()


QUIET = Noise(interval_sd=0.05, pause_prob=0.0, run_sd=0.01, block_sd=0.01, trend=0.0)


def sweep(rates: list[float], noise: Noise = QUIET, repeats: int = 4) -> pd.DataFrame:
    arms = [SimArm(f"t{x}", rate=r) for x, r in zip((1, 2, 4, 8), rates, strict=True)]
    return sim_figures(simulate(arms, repeats, noise, seed=5)[0])


POINTS = {1: "t1", 2: "t2", 4: "t4", 8: "t8"}


def test_a_sweep_that_stops_growing_above_the_knee() -> None:
    v = plateau(sweep([1.0, 1.6, 2.0, 2.0]), POINTS, 4, "write", margin_pct=10.0)
    assert v.verdict == HOLDS and v.reason.startswith("rises +")
    assert v.rule == ("rise up to 4 significant; every point above it below +10% of it (90% CI upper bound, "
                      "intersection-union test at 5%)")


def test_a_sweep_that_keeps_growing_or_falls_does_not_hold() -> None:
    v = plateau(sweep([1.0, 1.6, 2.0, 3.0]), POINTS, 4, "write", margin_pct=10.0)
    assert v.verdict == FAILS and v.reason.startswith("at 8: +") and v.reason.endswith("it keeps growing")
    v = plateau(sweep([1.0, 0.8, 0.6, 0.6]), POINTS, 4, "write", margin_pct=10.0)
    assert v.verdict == FAILS and v.reason.endswith("it falls")


def test_a_noisy_sweep_is_not_shown_and_a_bad_knee_is_an_error() -> None:
    v = plateau(sweep([1.0, 1.1, 1.2, 1.2], Noise(), repeats=2), POINTS, 4, "write", margin_pct=10.0)
    assert v.verdict == NOT_SHOWN and "these runs could detect" in v.reason
    with pytest.raises(ValueError, match=r"the knee 8 must be one of the sweep's points \[1, 2, 4, 8\]"):
        plateau(sweep([1.0, 1.6, 2.0, 2.0]), POINTS, 8, "write")


def test_a_claim_whose_manipulation_did_not_take_is_not_tested_here_with_its_figure() -> None:
    from cassperf.analysis.claims import NOT_TESTED
    from cassperf.analysis.verdicts import Check, tested

    cold = Check("the emptied cache", False, "run a read 0.4 MiB from disk of the 40.0 MiB its reads touch (1%)",
                 "run a reads at least half of what its reads touch from disk")
    v = tested(directional(FALL, -1), cold)            # a significant fall, but the cache was never emptied in effect
    assert (v.verdict, v.reason) == (NOT_TESTED, "the emptied cache did not take: run a read 0.4 MiB from disk of "
                                                 "the 40.0 MiB its reads touch (1%)")
    assert v.rule.endswith("; tested only where run a reads at least half of what its reads touch from disk")
    row = claim("Cold reads are slower", SOURCE, v)
    assert (row.check, row.check_took, row.arm_a, row.arm_b) == (
        "the emptied cache: run a read 0.4 MiB from disk of the 40.0 MiB its reads touch (1%)", False, "a", "b")
    took = tested(directional(FALL, -1), Check("the emptied cache", True, "run a read 412 MiB (103%)"))
    assert took.verdict == HOLDS and claim("x", SOURCE, took).check == "the emptied cache: run a read 412 MiB (103%)"
    unknown = claim("x", SOURCE, tested(directional(FLAT, +1), Check("the emptied cache", None, "a named cluster")))
    assert (unknown.verdict, unknown.check, unknown.check_took) == (
        NOT_SHOWN, "the emptied cache: not measured (a named cluster)", None)


def test_all_of_is_not_tested_here_when_a_part_was_not_unless_a_tested_part_does_not_hold() -> None:
    from cassperf.analysis.claims import NOT_TESTED
    from cassperf.analysis.verdicts import Check, tested

    no = Check("the emptied cache", False, "disk 64 KiB: 1 MiB")
    yes = Check("the emptied cache", True, "disk 4 KiB: 300 MiB")
    both = all_of([tested(directional(RISE, +1), yes), tested(directional(RISE, +1), no)])
    assert both.verdict == NOT_TESTED and both.check.took is False
    assert both.check.figure == "disk 4 KiB: 300 MiB; disk 64 KiB: 1 MiB"
    assert all_of([tested(directional(RISE, -1), yes), tested(directional(RISE, +1), no)]).verdict == FAILS
    assert all_of([tested(directional(RISE, +1), yes)] * 2).check.took is True


def test_the_a_a_control_withholds_verdicts_but_not_a_not_tested_here() -> None:
    from cassperf.analysis.claims import NOT_TESTED
    from cassperf.analysis.verdicts import Check, tested

    aa = claim("A/A", SOURCE, aa_control(RISE))                  # identical arms differ: withheld
    untested = claim("cold", SOURCE, tested(directional(FALL, -1), Check("the emptied cache", False, "1%")))
    table = claims_table(aa, [untested, claim("rise", SOURCE, directional(RISE, +1))])
    assert table["verdict"].tolist() == [FAILS, NOT_TESTED, NOT_SHOWN]
