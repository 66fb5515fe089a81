"""The claim grammar (cassperf.analysis.claim_text): each form of plain English becomes the exact
rule it says, bad text is one line naming the claim, what was expected and an example, and a rule
decides as the verdict function it names does on the same comparison."""

from __future__ import annotations

import pytest

from cassperf.analysis.arms import compare
from cassperf.analysis.claim_text import ClaimRule, parse_claim, parse_claims
from cassperf.analysis.repeats import run_figures
from cassperf.analysis.verdicts import directional, equivalent
from cassperf.errors import ConfigError
from tests.unit.analysis_runs import shaped_run

ARMS = ("STCS", "LCS", "UCS")
WORKLOADS = ("write", "read", "heavy")


def rule(text: str, kind: str, a: str, b: str, workload: str, metric: str, sign: int,
         size: float | None = None) -> ClaimRule:
    return ClaimRule(text, kind, a, b, workload, metric, sign, size)


@pytest.mark.parametrize("text, expected", [
    ("B writes at least 10% faster than A",
     ("directional", "A", "B", "write", "rate_ops_s", 1, 10.0)),
    ("LCS writes at least 10% slower than STCS",
     ("directional", "STCS", "LCS", "write", "rate_ops_s", -1, 10.0)),
    ("LCS reads faster than STCS",
     ("directional", "STCS", "LCS", "read", "rate_ops_s", 1, None)),
    ("lcs Reads Slower Than stcs.",
     ("directional", "STCS", "LCS", "read", "rate_ops_s", -1, None)),
    ("UCS is at least 2.5% faster than STCS for heavy",
     ("directional", "STCS", "UCS", "heavy", "rate_ops_s", 1, 2.5)),
    ("UCS is slower than LCS for writes",
     ("directional", "LCS", "UCS", "write", "rate_ops_s", -1, None)),
    ("B within ±5% of A for reads",
     ("equivalent", "A", "B", "read", "rate_ops_s", 0, 5.0)),
    ("UCS is within +-10% of STCS for writes",
     ("equivalent", "STCS", "UCS", "write", "rate_ops_s", 0, 10.0)),
    ("UCS within +/- 7.5 % of STCS for heavy",
     ("equivalent", "STCS", "UCS", "heavy", "rate_ops_s", 0, 7.5)),
    ("UCS within 10% of STCS for read",
     ("equivalent", "STCS", "UCS", "read", "rate_ops_s", 0, 10.0)),
    ("B's read p99 lower than A's",
     ("directional", "A", "B", "read", "latency_p99_ms", -1, None)),
    ("LCS's read p99 lower than STCS's",
     ("directional", "STCS", "LCS", "read", "latency_p99_ms", -1, None)),
    ("LCS’s write p50 latency is higher than STCS’s",
     ("directional", "STCS", "LCS", "write", "latency_p50_ms", 1, None)),
    ("UCS's heavy p999 at least 20% lower than LCS's",
     ("directional", "LCS", "UCS", "heavy", "latency_p999_ms", -1, 20.0)),
    ("UCS's read p99.9 higher than LCS",
     ("directional", "LCS", "UCS", "read", "latency_p999_ms", 1, None)),
    ("UCS's write mean latency lower than STCS's",
     ("directional", "STCS", "UCS", "write", "latency_mean_ms", -1, None)),
    ("UCS's read p95 is at least 30% higher than STCS's",
     ("directional", "STCS", "UCS", "read", "latency_p95_ms", 1, 30.0)),
])
def test_each_form_becomes_the_rule_it_says(text: str, expected: tuple) -> None:
    arms = ("A", "B") if text.startswith("B") else ARMS
    assert parse_claim(text, arms, WORKLOADS) == rule(text, *expected)


def test_claims_are_parsed_in_order() -> None:
    found = parse_claims(["LCS writes slower than STCS", "UCS within ±10% of STCS for writes"], ARMS, WORKLOADS)
    assert [(r.arm_b, r.kind) for r in found] == [("LCS", "directional"), ("UCS", "equivalent")]


EXPECTED = ("expected 'B writes|reads [at least N%] faster|slower than A', 'B is [at least N%] faster|slower than A "
            "for W', 'B within ±N% of A for W' or \"B's W p50|p95|p99|p999|mean latency [at least N%] lower|higher "
            "than A's\" (A, B: arms; W: a workload, or writes/reads)")


@pytest.mark.parametrize("text, message", [
    ("LCS writes quicker than STCS",
     f"claim 'LCS writes quicker than STCS': {EXPECTED}; e.g. 'LCS writes at least 10% slower than STCS'"),
    ("LCS is better",
     f"claim 'LCS is better': {EXPECTED}; e.g. 'LCS writes at least 10% slower than STCS'"),
    ("LCZ writes slower than STCS",
     "claim 'LCZ writes slower than STCS': 'LCZ' is not an arm (the arms: STCS, LCS, UCS); "
     "e.g. 'LCZ writes at least 10% slower than STCS'"),
    ("LCS writes slower than LCS",
     "claim 'LCS writes slower than LCS': it compares arm 'LCS' with itself; name two different arms; "
     "e.g. 'LCS writes at least 10% slower than STCS'"),
    ("LCS is faster than STCS for deletes",
     "claim 'LCS is faster than STCS for deletes': 'deletes' is not a workload (the workloads: write, read, heavy); "
     "e.g. 'LCS writes at least 10% slower than STCS'"),
    ("LCS writes at least 100% slower than STCS",
     "claim 'LCS writes at least 100% slower than STCS': 'at least 100% slower' cannot be measured: a size is "
     "above 0 and a fall below 100%; e.g. 'LCS writes at least 10% slower than STCS'"),
    ("LCS within ±0% of STCS for reads",
     "claim 'LCS within ±0% of STCS for reads': a margin of ±0% holds nothing; give one above 0; "
     "e.g. 'LCS writes at least 10% slower than STCS'"),
    ("LCS's read p42 lower than STCS's",
     f"claim \"LCS's read p42 lower than STCS's\": {EXPECTED}; e.g. 'LCS writes at least 10% slower than STCS'"),
])
def test_bad_text_is_one_line_naming_the_claim_what_was_expected_and_an_example(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_claim(text, ARMS, WORKLOADS)
    assert str(err.value) == message and "\n" not in str(err.value)


def test_writes_without_a_workload_named_write_says_so() -> None:
    with pytest.raises(ConfigError, match=r"^claim 'LCS writes slower than STCS': 'writes' means the workload named "
                                          r"write, and there is none \(the workloads: heavy\); e\.g\. "):
        parse_claim("LCS writes slower than STCS", ARMS, ("heavy",))


def _figures(b_scale: float):
    """Three blocks of arm A at 1000 ops/s (block levels 1.0, 1.1, 0.9) and arm B at b_scale of it."""
    runs = []
    for block, level in ((1, 1.0), (2, 1.1), (3, 0.9)):
        for arm, scale in (("A write", 1.0), ("B write", b_scale)):
            counts = [int(100 * level * scale * (1 + 0.03 * ((i * 7 + block) % 5 - 2))) for i in range(40)]
            runs.append(shaped_run(counts, 1.0 / scale, op="write", labels={"arm": arm, "block": str(block)},
                                   run_id=f"{arm}-{block}".replace(" ", "-")))
    return run_figures(runs)


@pytest.mark.parametrize("text", ["B writes at least 10% slower than A", "B writes faster than A",
                                  "B within ±5% of A for writes", "B's write p99 lower than A's"])
def test_a_rule_decides_as_the_verdict_function_it_names(text: str) -> None:
    figures = _figures(0.8)
    r = parse_claim(text, ("A", "B"), ("write",))
    got = r.decide(figures, "A write", "B write", "write")
    c = compare(figures, "A write", "B write", "write", r.metric)
    want = equivalent(c, r.size_pct) if r.kind == "equivalent" else directional(c, r.sign, r.size_pct)
    assert (got.verdict, got.reason, got.rule) == (want.verdict, want.reason, want.rule)


def test_a_fall_of_a_fifth_holds_as_slower_and_fails_as_faster_or_the_same() -> None:
    figures = _figures(0.8)
    said = {t: parse_claim(t, ("A", "B"), ("write",)).decide(figures, "A write", "B write", "write").verdict
            for t in ("B writes at least 10% slower than A", "B writes faster than A", "B within ±5% of A for writes")}
    assert said == {"B writes at least 10% slower than A": "holds", "B writes faster than A": "does not hold",
                    "B within ±5% of A for writes": "does not hold"}
