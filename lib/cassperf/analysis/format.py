"""The published number style of the garbagecollect study (and helpers in the same spirit).

    fmt_rate(1500.0)    -> "1.5k/s"          ops per second: one decimal in thousands from 1,000
    fmt_rate(950)       -> "950/s"
    fmt_micros(10280.0) -> "10.28k micros"   microseconds: two decimals, in thousands from 1,000
    fmt_micros(548.67)  -> "548.67 micros"
    fmt_ms(12.345)      -> "12.35 ms"
    fmt_pct(12.34)      -> "+12.3%"          a change, always signed
    fmt_p(0.0342)       -> "p = 0.034"       a p-value: three decimals, "p < 0.001" below
    fmt_rows(60263.4)   -> "60 263"          the deployment study's style: whole numbers, a space
                                             between thousands (the deployment comparison's tables)

NaN or None gives "n/a", so a missing figure never reads as a number.
"""

from __future__ import annotations

import math

NA = "n/a"


def _missing(value: float | None) -> bool:
    return value is None or not math.isfinite(float(value))


def fmt_rate(ops_s: float | None) -> str:
    """Ops per second as published: "1.5k/s" from 1,000, "950/s" below, "2.3M/s" from 1e6."""
    if _missing(ops_s):
        return NA
    v = float(ops_s)  # type: ignore[arg-type]
    if abs(round(v / 1000, 1)) >= 1000:
        return f"{v / 1e6:.1f}M/s"
    if abs(round(v)) >= 1000:
        return f"{v / 1000:.1f}k/s"
    return f"{v:.0f}/s"


def fmt_micros(micros: float | None) -> str:
    """Microseconds as published: "10.28k micros" from 1,000, "548.67 micros" below."""
    if _missing(micros):
        return NA
    v = float(micros)  # type: ignore[arg-type]
    if abs(round(v, 2)) >= 1000:
        return f"{v / 1000:.2f}k micros"
    return f"{v:.2f} micros"


def fmt_ms(ms: float | None, decimals: int = 2) -> str:
    """Milliseconds: "12.35 ms"."""
    return NA if _missing(ms) else f"{float(ms):.{decimals}f} ms"  # type: ignore[arg-type]


def fmt_pct(pct: float | None, decimals: int = 1) -> str:
    """A change in percent, signed: "+12.3%", "-4.0%"."""
    return NA if _missing(pct) else f"{float(pct):+.{decimals}f}%"  # type: ignore[arg-type]


def fmt_p(p: float | None) -> str:
    """A p-value: "p = 0.034", "p < 0.001" ("p n/a" when there is none)."""
    if _missing(p):
        return f"p {NA}"
    return "p < 0.001" if float(p) < 0.001 else f"p = {float(p):.3f}"  # type: ignore[arg-type]


def fmt_rows(value: float | None, decimals: int = 0) -> str:
    """A rate or count in the deployment study's style: "60 263" (space between thousands);
    ``decimals`` for small figures ("12.5")."""
    return NA if _missing(value) else f"{float(value):,.{decimals}f}".replace(",", " ")  # type: ignore[arg-type]
