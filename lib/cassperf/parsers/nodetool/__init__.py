"""nodetool output parsers, one module per command family.

Each command's output becomes named tidy frames in `ParseResult.tables` (units in column
names); see each module's docstring for its frames and rules. Registered as the registry
entry "nodetool" (a package defining FORMATS), in this order; every sniff() looks at content
only and claims only its own command's output.

Rules shared by all of them: blank lines and echoed shell prompts running nodetool
("root@host:/# nodetool gcstats") are ignored; every other line not of the command's layout is
skipped, counted in skipped_lines and warned about; input with none of the layout is a
ParseError naming its first line. nodetool ends every line with a line ending, so input whose
last line has none was cut: complete=False, with a warning naming that line (its values are
read, and may be short). Each module's docstring adds its own end-of-output check.
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
