"""Claims by their kind: a verdict and a one-line reason from comparisons across runs.

    directional(c, sign, material_pct=None) -> Verdict
                                                a claimed rise (sign +1) or fall (-1) of B against A
    differs(c, margin_pct) -> Verdict           "B differs from A", either way; refuted by TOST within ±margin_pct
    equivalent(c, margin_pct) -> Verdict        "about the same": TOST within ±margin_pct
    plateau(figures, points, knee, op, metric="rate_ops_s", margin_pct=10.0) -> Verdict
                                                a sweep "stops growing above the knee"
    aa_control(c) -> Verdict                    the A/A row (c: an arm against its identical twin)
    all_of(verdicts) -> Verdict                 a claim made of parts (every part must hold)
    picked_pair(v, candidates, kind) -> Verdict a pair the data picked (the fastest of k against the
                                                slowest): its rise counts at 5% / the pairs (Bonferroni)
    near_reference(v, values, reference, low, high, what) -> Verdict
                                                a significant change whose sizes must also lie between
                                                low x and high x a reference (e.g. one round trip)
    within_band(values, reference, low, high, what) -> Verdict
                                                every value between low x and high x a reference
    not_shown(reason, rule="") -> Verdict       undecided for a stated reason (a part not run, no distance)
    tested(v, check) -> Verdict                 "not tested here" when the claim's manipulation check
                                                (a Check measured in its runs) says it did not take
    claim(text, source, verdict, note="") -> Claim           a claims-table row
    claims_table(aa, claims) -> DataFrame       the A/A row first, then the claims; every verdict
                                                withheld when the A/A row is significant

A study's claims, from its stored runs (labels `arm` and `block` as the executor writes them):

    figures = run_figures(runs)                                  # analysis.repeats, one row per run and op
    twin = compare_arms(figures, "rf-write/rf=3", "rf-write/rf=3/aa", "write")    # analysis.arms
    aa = claim("A/A: RF 3 writes, the same arm twice", SOURCE, aa_control(twin))
    rf = compare_arms(figures, "rf-write/rf=2", "rf-write/rf=1", "write")          # B = RF 1 against A = RF 2
    rows = [claim("Writes at RF 1 are faster than at RF 2", SOURCE, directional(rf, +1)),
            claim("RF 2 and RF 3 write at about the same rate", SOURCE,
                  equivalent(compare_arms(figures, "rf-write/rf=2", "rf-write/rf=3", "write"), 10.0))]
    table = claims_table(aa, rows)                               # the report's claims table
    gone = left_out(figures)                                     # the runs that left, and why

`c` is an analysis.arms.ArmComparison. Verdicts are "holds", "does not hold" or "not shown";
every reason is one line, and every "not shown" says why and what change the runs could have
detected (the comparison's MDE, 80% power at the 5% level).

Rules (fixed before data; stated in each Verdict's `rule`):
- Directional: holds when the change is significant (p < 0.05, two-sided) in the claimed
  direction; does not hold when it is significant the other way; otherwise not shown: "the
  change is -4.0% (p = 0.61) and these runs could detect ±11% or more". Where the claim names a
  size (`material_pct`: "several times slower", "much faster"), a change shown smaller than it
  in the claimed direction does not hold either: the one-sided 95% bound (the 90% CI's bound in
  the claimed direction) short of the size (a non-inferiority test at 5%, the TOST half that
  faces the claim). The size is the claim's, stated in its rule, never fitted to the data.
- Equivalence (TOST, Schuirmann 1987): holds when both one-sided tests reject at 5%, i.e. the
  90% CI of the change lies inside [-margin, +margin]; does not hold when the change is
  significantly beyond a margin (the 90% CI lies wholly above +margin or below -margin: a
  one-sided test at 5%); otherwise not shown. A difference that is merely not significant never
  makes two things "the same".
- Plateau ("throughput stops growing above N threads"), over the sweep's points (x -> arm): it
  grows up to the knee (directional rise from the first point to the knee) and no point above the
  knee exceeds the knee by the margin (each point's 90% CI upper bound of its change against the
  knee < +margin: a one-sided test at 5% per point; the claim needs every point, an
  intersection-union test, so its level stays 5% with no correction). Does not hold when the
  growth is a significant fall, or a point above the knee is significantly more than the margin
  above it. Otherwise not shown.
- A/A control: the twin against its arm. Significant (p < 0.05): "does not hold", and the
  study's verdicts are withheld (claims_table): the machine's noise is then beyond what the
  method can separate. A correct 5% test flags an A/A in 5% of studies: with five studies, one
  flag happens about a fifth of the time.
- all_of: holds when every part holds; does not hold when a part does not hold; otherwise not
  shown with the first part's reason that is not shown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from cassperf.analysis.arms import ArmComparison, compare
from cassperf.analysis.claims import FAILS, HOLDS, NOT_SHOWN, NOT_TESTED, Claim
from cassperf.analysis.format import fmt_p, fmt_pct
from cassperf.analysis.power import ALPHA, mde_pct_at

DIRECTIONAL_RULE = "significant change (p < 0.05, two-sided) in the claimed direction, across runs"
MATERIAL_RULE = ("does not hold either when the {d} is shown below {m:g}% (one-sided test at 5%: the 90% CI's "
                 "bound in the claimed direction short of {m:g}%)")
DIFFERS_RULE = ("significant change (p < 0.05, two-sided) either way; does not hold when the 90% CI lies within "
                "±{m:g}% (TOST), significant or not")
EQUIVALENCE_RULE = "TOST at 5%: the 90% CI of the change within ±{m:g}%"
PLATEAU_RULE = ("rise up to {k:g} significant; every point above it below +{m:g}% of it (90% CI upper bound, "
                "intersection-union test at 5%)")
AA_RULE = "A/A control: the arm against its identical twin; significant (p < 0.05) withholds every verdict"
WITHHELD = "withheld: the A/A control differs significantly ({aa}): this machine's noise is beyond what the " \
           "method can separate"
CLAIM_COLUMNS = ["claim", "verdict", "reason", "change_pct", "ci_low_pct", "ci_high_pct", "p_value", "n_a", "n_b",
                 "mde_pct", "measured", "check", "check_took", "rule", "note", "source", "arm_a", "arm_b"]


@dataclass(frozen=True)
class Check:
    """Whether a claim's manipulation took in its runs (an emptied cache that read from disk, a
    garbagecollect that compacted, data on tmpfs that spared the disk): ``took`` True, False, or
    None where it could not be measured; ``figure`` the measured line that shows it; ``rule`` the
    threshold, fixed before the data."""

    what: str
    took: bool | None
    figure: str
    rule: str = ""


@dataclass(frozen=True)
class Verdict:
    """A verdict ("holds", "does not hold", "not tested here", "not shown"), its one-line reason,
    the stated rule, the comparison the figures columns come from (None for a claim without one)
    and the manipulation check it rests on (None: the claim manipulates nothing)."""

    verdict: str
    reason: str
    rule: str
    comparison: ArmComparison | None = None
    check: Check | None = None


def _undecided(c: ArmComparison, rule: str) -> Verdict | None:
    """'not shown' when the comparison has no test, else None."""
    if c.problem or c.p_value is None:
        return Verdict(NOT_SHOWN, f"the runs cannot decide: {c.problem or 'no test'}", rule, c)
    return None


def _detect(c: ArmComparison) -> str:
    return f"these runs could detect ±{c.mde_pct:.0f}% or more"


def _unclear(c: ArmComparison) -> str:
    """The reason of a change that is not significant: the change, its p-value and the MDE."""
    return f"the change is {fmt_pct(c.change_pct)} ({fmt_p(c.p_value)}) and {_detect(c)}"


def directional(c: ArmComparison, sign: int, material_pct: float | None = None) -> Verdict:
    """A claimed rise (sign +1) or fall (-1) of B against A (rule: module docstring). With
    `material_pct`, the size below which the claim would not be what it says (e.g. "several
    times slower"): a change shown smaller than that in the claimed direction (the one-sided 95%
    bound, the 90% CI's, short of ±material_pct) does not hold either."""
    if sign not in (1, -1):
        raise ValueError(f"directional: sign must be +1 (a rise) or -1 (a fall), got {sign!r}")
    if material_pct is not None and not (0 < material_pct and (sign > 0 or material_pct < 100)):
        raise ValueError(f"directional: material_pct must be > 0 (and < 100 for a fall), got {material_pct!r}")
    rule = DIRECTIONAL_RULE if material_pct is None else DIRECTIONAL_RULE + "; " + MATERIAL_RULE.format(
        m=material_pct, d="rise" if sign > 0 else "fall")
    undecided = _undecided(c, rule)
    if undecided:
        return undecided
    said = "rise" if sign > 0 else "fall"
    low, high = c.ci_pct(0.90)
    bound = high if sign > 0 else low
    if material_pct is not None and (bound < material_pct if sign > 0 else bound > -material_pct):
        # shown short of the size, significant or not: +3% [+2.9%, +3.2%] is no rise of 10%
        return Verdict(FAILS, f"the change is {fmt_pct(c.change_pct)}, 90% CI [{fmt_pct(low)}, {fmt_pct(high)}]: "
                              f"no {said} of {material_pct:g}% or more", rule, c)
    if not c.significant:
        return Verdict(NOT_SHOWN, _unclear(c), rule, c)
    if c.change_pct * sign > 0:
        return Verdict(HOLDS, f"{c.text}: a significant {said}", rule, c)
    other = "fall" if sign > 0 else "rise"
    return Verdict(FAILS, f"{c.text}: a significant {other}, where the claim says a {said}", rule, c)


def differs(c: ArmComparison, margin_pct: float) -> Verdict:
    """"B differs from A" (either way): does not hold when the change is shown within ±margin_pct
    (TOST, as `equivalent`; even when significant, a change inside the band is no material one);
    else holds when the change is significant; otherwise not shown."""
    if not margin_pct > 0:
        raise ValueError(f"differs: margin_pct must be > 0 (a % band), got {margin_pct!r}")
    rule = DIFFERS_RULE.format(m=margin_pct)
    undecided = _undecided(c, rule)
    if undecided:
        return undecided
    same = equivalent(c, margin_pct)
    if same.verdict == HOLDS:              # even a significant change inside the band is no material one
        return Verdict(FAILS, f"{same.reason}: no change of {margin_pct:g}% or more either way", rule, c)
    if c.significant:
        return Verdict(HOLDS, f"{c.text}: a significant {'rise' if c.change_pct > 0 else 'fall'}", rule, c)
    return Verdict(NOT_SHOWN, _unclear(c), rule, c)


def equivalent(c: ArmComparison, margin_pct: float) -> Verdict:
    """"About the same" within ±margin_pct, by TOST (rule: module docstring)."""
    if not margin_pct > 0:
        raise ValueError(f"equivalent: margin_pct must be > 0 (a % band), got {margin_pct!r}")
    rule = EQUIVALENCE_RULE.format(m=margin_pct)
    undecided = _undecided(c, rule)
    if undecided:
        return undecided
    low, high = c.ci_pct(0.90)
    ci = f"{fmt_pct(c.change_pct)}, 90% CI [{fmt_pct(low)}, {fmt_pct(high)}]"
    if -margin_pct <= low and high <= margin_pct:
        return Verdict(HOLDS, f"{ci} lies within ±{margin_pct:g}%", rule, c)
    if low > margin_pct or high < -margin_pct:
        return Verdict(FAILS, f"{ci} lies beyond ±{margin_pct:g}%: a significant difference", rule, c)
    return Verdict(NOT_SHOWN, f"{ci} reaches beyond ±{margin_pct:g}%; {_detect(c)}", rule, c)


def plateau(figures: pd.DataFrame, points: Mapping[float, str], knee: float, op: str, metric: str = "rate_ops_s",
            margin_pct: float = 10.0) -> Verdict:
    """A sweep "stops growing above `knee`": points maps each sweep value (threads, say) to its arm
    (rule: module docstring). The verdict's comparison is the growth up to the knee."""
    xs = sorted(points)
    if knee not in points or knee == xs[0] or knee == xs[-1]:
        raise ValueError(f"plateau: the knee {knee!r} must be one of the sweep's points {xs} with a point "
                         f"below and above it")
    rule = PLATEAU_RULE.format(k=knee, m=margin_pct)
    grow = compare(figures, points[xs[0]], points[knee], op, metric)
    rise = directional(grow, +1)
    above = [(x, compare(figures, points[knee], points[x], op, metric)) for x in xs if x > knee]
    if rise.verdict == FAILS:
        return Verdict(FAILS, f"from {xs[0]:g} to {knee:g}: {grow.text}: it falls", rule, grow)
    beyond = [(x, c) for x, c in above if not c.problem and c.ci_pct(0.90)[0] > margin_pct]
    if beyond:
        x, c = beyond[0]
        return Verdict(FAILS, f"at {x:g}: {c.text}, more than +{margin_pct:g}% above {knee:g}: it keeps growing",
                       rule, grow)
    if rise.verdict != HOLDS:
        return Verdict(NOT_SHOWN, f"the rise from {xs[0]:g} to {knee:g} is not shown: {rise.reason}", rule, grow)
    for x, c in above:
        if c.problem:
            return Verdict(NOT_SHOWN, f"at {x:g}: the runs cannot decide: {c.problem}", rule, grow)
        high = c.ci_pct(0.90)[1]
        if not high < margin_pct:
            return Verdict(NOT_SHOWN, f"at {x:g} the change against {knee:g} is {fmt_pct(c.change_pct)} with a 90% CI "
                                      f"up to {fmt_pct(high)}, not below +{margin_pct:g}%; {_detect(c)}", rule, grow)
    flat = ", ".join(f"{x:g}: {fmt_pct(c.change_pct)}" for x, c in above)
    return Verdict(HOLDS, f"rises {fmt_pct(grow.change_pct)} from {xs[0]:g} to {knee:g} ({fmt_p(grow.p_value)}); "
                          f"above it within +{margin_pct:g}% ({flat})", rule, grow)


def aa_control(c: ArmComparison) -> Verdict:
    """The A/A row: holds when the twin does not differ significantly from its arm."""
    undecided = _undecided(c, AA_RULE)
    if undecided:
        return undecided
    if c.significant:
        return Verdict(FAILS, f"{c.text}: identical arms differ significantly; this machine's noise is beyond what "
                              f"the method can separate, so the study's verdicts are withheld", AA_RULE, c)
    return Verdict(HOLDS, f"{c.text}: identical arms do not differ significantly", AA_RULE, c)


def all_of(verdicts: Sequence[Verdict], rule: str = "") -> Verdict:
    """Every part must hold (rule: module docstring). The comparison (the row's figures: change, CI,
    MDE) is the part's that decides the verdict, or the first part's when every part holds: a row
    "not shown" because its reads had too few runs showed its writes' MDE beside that reason. A part
    not tested here makes the claim not tested here, unless another part, tested, does not hold. The
    parts' manipulation checks are joined: not taken where one did not take."""
    if not verdicts:
        raise ValueError("all_of: no verdicts to combine")
    rule = rule or "; ".join(dict.fromkeys(v.rule for v in verdicts))
    first = verdicts[0].comparison
    checks = [v.check for v in verdicts if v.check is not None]
    check = None if not checks else Check(
        checks[0].what, False if any(k.took is False for k in checks) else
        (None if all(k.took is None for k in checks) else True),
        "; ".join(dict.fromkeys(k.figure for k in checks)), checks[0].rule)
    for v in verdicts:
        if v.verdict == FAILS:
            return Verdict(FAILS, v.reason, rule, v.comparison or first, check)
    for v in verdicts:
        if v.verdict == NOT_TESTED:
            return Verdict(NOT_TESTED, v.reason, rule, v.comparison or first, check)
    for v in verdicts:
        if v.verdict != HOLDS:
            return Verdict(NOT_SHOWN, v.reason, rule, v.comparison or first, check)
    return Verdict(HOLDS, "; ".join(v.reason for v in verdicts), rule, first, check)


def not_shown(reason: str, rule: str = "") -> Verdict:
    """'not shown' for a stated reason, without a comparison (a part these parameters did not run,
    runs that cannot be judged: single imported runs, no distance between the DCs)."""
    return Verdict(NOT_SHOWN, reason, rule)


def not_addressed(need: str) -> Verdict:
    """'not shown': the parameters ran nothing this claim could be judged on; ``need`` says what."""
    return Verdict(NOT_SHOWN, f"not addressed by these parameters: needs {need}", "")


def pairs_of(k: int) -> int:
    """How many pairs k candidates make."""
    return k * (k - 1) // 2


def picked_pair(v: Verdict, candidates: int, kind: str = "arms") -> Verdict:
    """The verdict of a pair picked from the data, the fastest of ``candidates`` against the
    slowest: its rise counts only at 5% / the number of pairs it could have been (Bonferroni),
    since the widest gap of several that do not differ passes a 5% test more often than 1 in 20
    (tests/unit/test_deployment_claims.py: 11.4% of 2,000 simulated studies of three equal
    deployments at a plain 5%, 4.2% at 5% / 3). Its "not shown" states the MDE at that level."""
    k = pairs_of(candidates)
    if k <= 1 or v.comparison is None:
        return v
    level = ALPHA / k
    rule = (f"{v.rule}; the pair is the fastest against the slowest of {candidates} {kind}, so its rise counts at "
            f"p < {level:.3g} (5% / {k} pairs, Bonferroni)")
    c = v.comparison
    if v.verdict != HOLDS or (c.p_value is not None and c.p_value < level):
        return Verdict(v.verdict, v.reason, rule, c)
    mde = mde_pct_at(c.se_log, c.df, level)
    return Verdict(NOT_SHOWN, f"the change is {fmt_pct(c.change_pct)} ({fmt_p(c.p_value)}), not below {level:.3g}, the "
                              f"level of the fastest of {candidates} {kind} against the slowest; at that level these runs "
                              f"could detect ±{mde:.0f}% or more", rule, c)


def near_reference(v: Verdict, sizes: Mapping[str, float], reference: float | None, low: float, high: float,
                   unit: str = "ms", reference_name: str = "the reference", what: str = "each change") -> Verdict:
    """A claim that a change is about one ``reference`` (e.g. an inter-DC round trip): ``v`` (the
    change significant in its direction) must hold, and each of ``sizes`` (what -> the change in
    ``unit``) lie between ``low`` x and ``high`` x the reference. Without a reference: not shown."""
    band = f"{what} between {low:g}x and {high:g}x {reference_name}"
    rule = f"{v.rule}, and {band}" if v.rule else band
    if reference is None or not math.isfinite(reference):
        return Verdict(NOT_SHOWN, f"no {reference_name} to judge against", rule, v.comparison)
    if v.verdict != HOLDS:
        return Verdict(v.verdict, v.reason, rule, v.comparison)
    said = "; ".join(f"{what} {d:+.1f} {unit}" for what, d in sizes.items())
    off = [f"{what} {d:+.1f} {unit}" for what, d in sizes.items() if not low * reference <= d <= high * reference]
    if off:
        return Verdict(FAILS, f"significant, but {', '.join(off)} against {reference_name} of {reference:.1f} {unit}",
                       rule, v.comparison)
    return Verdict(HOLDS, f"{said} for {reference_name} of {reference:.1f} {unit}", rule, v.comparison)


def within_band(values: Mapping[str, float], reference: float | None, low: float, high: float,
                unit: str = "ms", reference_name: str = "the reference", what: str = "every value") -> Verdict:
    """Every one of ``values`` (what -> value in ``unit``) between ``low`` x and ``high`` x the
    ``reference``: holds when all are, does not hold when one is not; not shown without a
    reference or without a value."""
    rule = f"{what} between {low:g}x and {high:g}x {reference_name}"
    if reference is None or not math.isfinite(reference):
        return Verdict(NOT_SHOWN, f"no {reference_name} to judge against", rule)
    if not values or not all(math.isfinite(v) for v in values.values()):
        return Verdict(NOT_SHOWN, "a point has no counted run", rule)
    lo, hi = low * reference, high * reference
    near = all(lo <= v <= hi for v in values.values())
    said = ", ".join(f"{v:.1f} {unit} at {what}" for what, v in values.items())
    return Verdict(HOLDS if near else FAILS, f"{said}; {reference_name} {reference:.1f} {unit}: "
                                             f"{'all' if near else 'not all'} within {lo:.1f}-{hi:.1f} {unit}", rule)

def tested(v: Verdict, check: Check) -> Verdict:
    """``v`` resting on ``check``: "not tested here" when the manipulation did not take (the reason
    is the check's figure), else ``v`` carrying the check (None: not measured, said beside it).
    The check decides only between a verdict and "not tested here", never which verdict."""
    if check.took is False:
        rule = "; ".join(r for r in (v.rule, f"tested only where {check.rule}" if check.rule else "") if r)
        return Verdict(NOT_TESTED, f"{check.what} did not take: {check.figure}", rule, v.comparison, check)
    return replace(v, check=check)


def claim(text: str, source: str, verdict: Verdict, note: str = "", measured: str = "") -> Claim:
    """A claims-table row: the claim, its verdict and reason, the comparison's figures (measured
    defaults to the comparison's one-line text) and the manipulation check's figure."""
    c = verdict.comparison
    figures = {} if c is None else {
        "change_pct": c.change_pct, "ci_low_pct": c.ci_low_pct, "ci_high_pct": c.ci_high_pct, "p_value": c.p_value,
        "n_a": c.n_a, "n_b": c.n_b, "mde_pct": c.mde_pct, "arm_a": c.arm_a, "arm_b": c.arm_b}
    k = verdict.check
    checked = {} if k is None else {"check": f"{k.what}: {k.figure}" if k.took is not None else
                                    f"{k.what}: not measured ({k.figure})", "check_took": k.took}
    return Claim(text, source, measured or (f"{c.metric} {c.op}, {c.arm_b} against {c.arm_a}: {c.text}" if c else ""),
                 verdict.verdict, verdict.rule, note, verdict.reason, **figures, **checked)


def claims_table(aa: Claim, claims: Sequence[Claim]) -> pd.DataFrame:
    """The claims table (CLAIM_COLUMNS): the A/A row first, then the claims. When the A/A row does
    not hold, every other verdict becomes "not shown", its reason saying it was withheld (the
    figures stay)."""
    if aa.verdict == FAILS:      # a claim not tested here stays so: its manipulation did not take, noise or not
        said = fmt_pct(aa.change_pct) + (f", {fmt_p(aa.p_value)}" if aa.p_value is not None else "")
        claims = [c if c.verdict == NOT_TESTED else replace(c, verdict=NOT_SHOWN, reason=WITHHELD.format(aa=said))
                  for c in claims]
    rows = [{k: getattr(c, k) for k in CLAIM_COLUMNS} for c in (aa, *claims)]
    out = pd.DataFrame(rows, columns=CLAIM_COLUMNS)
    for col in ("n_a", "n_b"):
        out[col] = out[col].astype("Int64")
    out["p_value"] = out["p_value"].astype("float64")
    return out


__all__ = ["CLAIM_COLUMNS", "Verdict", "aa_control", "all_of", "claim", "claims_table", "differs", "directional",
           "equivalent", "near_reference", "not_addressed", "not_shown", "pairs_of", "picked_pair", "plateau",
           "tested", "within_band", "Check"]
