"""The published number style: every figure of the garbagecollect study's table, exactly."""

from __future__ import annotations

import math

import pytest

from cassperf.analysis import fmt_micros, fmt_ms, fmt_pct, fmt_rate

# (value in the table's unit, as published): issue 12, item 3
PUBLISHED_MICROS = [(10280.0, "10.28k micros"), (21920.0, "21.92k micros"), (50350.0, "50.35k micros"),
                    (87410.0, "87.41k micros"), (102230.0, "102.23k micros"), (388140.0, "388.14k micros"),
                    (548.67, "548.67 micros"), (3060.0, "3.06k micros"), (894.0, "894.00 micros"),
                    (8050.0, "8.05k micros"), (1400.0, "1.40k micros"), (160930.0, "160.93k micros")]


@pytest.mark.parametrize(("micros", "text"), PUBLISHED_MICROS)
def test_published_latencies(micros: float, text: str) -> None:
    assert fmt_micros(micros) == text


@pytest.mark.parametrize(("ops_s", "text"), [(1500.0, "1.5k/s"), (950, "950/s"), (1497.3, "1.5k/s"),
                                             (999.6, "1.0k/s"), (12345.0, "12.3k/s"), (0.0, "0/s"),
                                             (2_340_000.0, "2.3M/s")])
def test_rates(ops_s: float, text: str) -> None:
    assert fmt_rate(ops_s) == text


def test_the_thousands_switch_follows_the_rounded_value() -> None:
    assert fmt_micros(999.994) == "999.99 micros"
    assert fmt_micros(999.996) == "1.00k micros"


def test_missing_figures_read_n_a() -> None:
    for fmt in (fmt_rate, fmt_micros, fmt_ms, fmt_pct):
        assert fmt(math.nan) == "n/a" and fmt(None) == "n/a"


def test_ms_and_percent() -> None:
    assert fmt_ms(12.345) == "12.35 ms" and fmt_ms(0.5, decimals=3) == "0.500 ms"
    assert (fmt_pct(12.34), fmt_pct(-4.0), fmt_pct(0.0)) == ("+12.3%", "-4.0%", "+0.0%")
