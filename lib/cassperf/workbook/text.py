"""Text in a study page's HTML."""

from __future__ import annotations

import html
import math
from typing import Any


def esc(v: Any) -> str:
    """``v`` as HTML-escaped text; None and NaN (a figure not measured) as nothing."""
    return html.escape("" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))


__all__ = ["esc"]
