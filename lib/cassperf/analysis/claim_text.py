"""Claims in plain English -> verdict rules of cassperf.analysis.verdicts.

A user's own study (notebook 06) states each claim as one sentence about two arms A and B and a
workload W; ``parse_claim`` turns it into a :class:`ClaimRule` (pure data: which arms, which
workload, which figure, which rule), and ``ClaimRule.decide`` applies the rule to run figures.
The grammar, case-insensitive (A, B: arm names; W: a workload name; "writes" and "reads" stand
for the workloads named write and read; N: a number; ``±`` may be written ``+-`` or ``+/-``):

    B writes|reads [at least N%] faster|slower than A       directional on rate_ops_s
    B is [at least N%] faster|slower than A for W           the same, any workload
    B [is] within ±N% of A for W                            equivalent (TOST) on rate_ops_s
    B's W METRIC [is] [at least N%] lower|higher than A's   directional on that latency
                                                            (METRIC: p50, p95, p99, p999, mean latency)

"faster" and "higher" claim a rise of B against A (sign +1), "slower" and "lower" a fall (-1);
"at least N%" is the claim's size (``material_pct``: shown smaller, the claim does not hold);
without it any significant change in the claimed direction holds. Examples, with arms STCS, LCS
and UCS and workloads write and read:

    "LCS writes at least 10% slower than STCS"  -> directional(compare(STCS, LCS, write), -1, 10)
    "UCS within ±10% of STCS for writes"        -> equivalent(compare(STCS, UCS, write), 10)
    "LCS's read p99 lower than STCS's"          -> directional(compare(STCS, LCS, read, p99), -1)

Text that does not fit is one ConfigError line naming the claim, what was expected and an example.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from cassperf.analysis.arms import compare
from cassperf.analysis.verdicts import Verdict, directional, equivalent
from cassperf.errors import ConfigError

DIRECTIONAL, EQUIVALENT = "directional", "equivalent"
#: the figure a claim's words name -> the run figures column (cassperf.analysis.repeats)
METRICS = {"p50": "latency_p50_ms", "p95": "latency_p95_ms", "p99": "latency_p99_ms", "p999": "latency_p999_ms",
           "p99.9": "latency_p999_ms", "mean latency": "latency_mean_ms", "mean": "latency_mean_ms"}
THROUGHPUT = "rate_ops_s"
#: the forms, as a reader is told them when a claim does not fit
FORMS = ("'B writes|reads [at least N%] faster|slower than A', 'B is [at least N%] faster|slower than A for W', "
         "'B within ±N% of A for W' or \"B's W p50|p95|p99|p999|mean latency [at least N%] lower|higher than "
         "A's\" (A, B: arms; W: a workload, or writes/reads)")
EXAMPLE = "LCS writes at least 10% slower than STCS"

_NAME = r"[A-Za-z0-9][A-Za-z0-9_.+-]*?"
_SIZE = r"(?:at\s+least\s+(?P<size>\d+(?:\.\d+)?)\s*%\s+)?"
_PM = r"(?:±|\+-|\+/-|\+\s*/\s*-)?\s*"
_POSSESSIVE = r"(?:'s|’s|'|’)"
_FORMS = (
    re.compile(rf"(?P<b>{_NAME})\s+(?P<verb>writes|reads)\s+{_SIZE}(?P<way>faster|slower)\s+than\s+(?P<a>{_NAME})",
               re.I),
    re.compile(rf"(?P<b>{_NAME})\s+is\s+{_SIZE}(?P<way>faster|slower)\s+than\s+(?P<a>{_NAME})\s+for\s+(?P<w>\S+)",
               re.I),
    re.compile(rf"(?P<b>{_NAME})\s+(?:is\s+)?within\s+{_PM}(?P<margin>\d+(?:\.\d+)?)\s*%\s+of\s+(?P<a>{_NAME})\s+"
               rf"for\s+(?P<w>\S+)", re.I),
    re.compile(rf"(?P<b>{_NAME}){_POSSESSIVE}\s+(?P<w>\S+)\s+(?P<metric>p50|p95|p999|p99\.9|p99|mean(?:\s+latency)?)"
               rf"(?:\s+latency)?\s+(?:is\s+)?{_SIZE}(?P<way>lower|higher)\s+than\s+(?P<a>{_NAME}){_POSSESSIVE}?",
               re.I),
)
_PLURALS = {"writes": "write", "reads": "read"}


@dataclass(frozen=True)
class ClaimRule:
    """One claim as a rule: B (``arm_b``) against A (``arm_a``) on ``workload``'s ``metric`` (a
    run figures column); ``kind`` directional (``sign`` +1 a rise, -1 a fall; ``size_pct`` the
    claim's size or None) or equivalent (``size_pct`` the ± margin, ``sign`` 0)."""

    text: str
    kind: str
    arm_a: str
    arm_b: str
    workload: str
    metric: str
    sign: int
    size_pct: float | None = None

    def decide(self, figures: pd.DataFrame, run_arm_a: str, run_arm_b: str, op: str) -> Verdict:
        """The verdict on the run figures, where A's and B's runs are the arms ``run_arm_a`` and
        ``run_arm_b`` of the figures (the study names them) and ``op`` the op compared."""
        c = compare(figures, run_arm_a, run_arm_b, op, self.metric)
        if self.kind == EQUIVALENT:
            return equivalent(c, float(self.size_pct or 0.0))
        return directional(c, self.sign, self.size_pct)


def _fail(text: str, what: str, example: str = EXAMPLE) -> ConfigError:
    return ConfigError(f"claim {text!r}: {what}; e.g. {example!r}")


def _pick(text: str, name: str, known: Sequence[str], kind: str, example: str) -> str:
    """``name`` as one of ``known`` (case-insensitive), else one line naming them."""
    for k in known:
        if k.lower() == name.lower():
            return k
    raise _fail(text, f"{name!r} is not {kind} (the {kind.split()[-1]}s: {', '.join(known)})", example)


def _workload(text: str, word: str, workloads: Sequence[str], example: str) -> str:
    """A workload name from the claim's word: a workload's own name, or writes/reads for the
    workloads named write and read."""
    for w in workloads:
        if w.lower() == word.lower():
            return w
    plural = _PLURALS.get(word.lower())
    if plural is not None:
        if plural in workloads:
            return plural
        raise _fail(text, f"{word!r} means the workload named {plural}, and there is none (the workloads: "
                          f"{', '.join(workloads)})", example)
    raise _fail(text, f"{word!r} is not a workload (the workloads: {', '.join(workloads)})", example)


def parse_claim(text: str, arms: Sequence[str], workloads: Sequence[str]) -> ClaimRule:
    """``text`` (module doc) as a ClaimRule over ``arms`` and ``workloads`` (their names, as the
    rule returns them); ConfigError in one line when it does not fit."""
    said = " ".join(str(text).split()).rstrip(".")
    found = None
    for i, form in enumerate(_FORMS):
        found = form.fullmatch(said)
        if found:
            break
    if found is None:
        raise _fail(str(text), f"expected {FORMS}")
    a, b = found.group("a"), found.group("b")
    example = f"{b} writes at least 10% slower than {a}" if a.lower() != b.lower() else EXAMPLE
    arm_a = _pick(str(text), a, arms, "an arm", example)
    arm_b = _pick(str(text), b, arms, "an arm", example)
    if arm_a == arm_b:
        raise _fail(str(text), f"it compares arm {arm_a!r} with itself; name two different arms", EXAMPLE)
    word = found.group("verb") if i == 0 else found.group("w")
    workload = _workload(str(text), word, workloads, example)
    if i == 2:
        margin = float(found.group("margin"))
        if not margin > 0:
            raise _fail(str(text), f"a margin of ±{margin:g}% holds nothing; give one above 0", example)
        return ClaimRule(str(text), EQUIVALENT, arm_a, arm_b, workload, THROUGHPUT, 0, margin)
    size = float(found.group("size")) if found.group("size") else None
    way = found.group("way").lower()
    sign = 1 if way in ("faster", "higher") else -1
    if size is not None and (size <= 0 or (sign < 0 and size >= 100)):
        raise _fail(str(text), f"'at least {size:g}% {way}' cannot be measured: a size is above 0"
                               + (" and a fall below 100%" if sign < 0 else ""), example)
    metric = THROUGHPUT if i < 3 else METRICS[re.sub(r"\s+", " ", found.group("metric").lower())]
    return ClaimRule(str(text), DIRECTIONAL, arm_a, arm_b, workload, metric, sign, size)


def parse_claims(texts: Sequence[str], arms: Sequence[str], workloads: Sequence[str]) -> list[ClaimRule]:
    """Every claim parsed (the first that does not fit is the ConfigError)."""
    return [parse_claim(t, arms, workloads) for t in texts]


__all__ = ["ClaimRule", "DIRECTIONAL", "EQUIVALENT", "METRICS", "parse_claim", "parse_claims"]
