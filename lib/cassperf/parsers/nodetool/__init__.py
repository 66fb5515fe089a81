"""nodetool output parsers, one module per command family.

Each command's output becomes named tidy frames in `ParseResult.tables` (units in column
names); see each module's docstring for its frames and rules. Registered as the registry
entry "nodetool" (a package defining FORMATS), in this order; every sniff() looks at content
only and claims only its own command's output.
"""

from __future__ import annotations

from cassperf.parsers.base import Format
from cassperf.parsers.nodetool import (
    compactionhistory, compactionstats, gcstats, histograms, info, status, tablestats, tpstats,
)

FORMATS: list[Format] = [
    status.FORMAT,
    info.FORMAT,
    tablestats.FORMAT,
    compactionstats.FORMAT,
    compactionhistory.FORMAT,
    tpstats.FORMAT,
    gcstats.FORMAT,
    histograms.PROXY_FORMAT,
    histograms.TABLE_FORMAT,
]

__all__ = ["FORMATS"]
