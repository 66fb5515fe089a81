"""reports/index.html: one row per report notebook with its status and a link."""

from __future__ import annotations

import html
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cassperf reports</title>
<style>body{{font-family:system-ui,sans-serif;margin:2rem;max-width:60rem}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}}
.failed{{color:#b00}}.ok{{color:#070}}</style></head>
<body><h1>cassperf reports</h1>
<p>Generated {generated} from commit <code>{commit}</code>.</p>
<table><thead><tr><th>Report</th><th>Notebook</th><th>Status</th><th>Duration (s)</th></tr></thead>
<tbody>
{rows}
</tbody></table></body></html>
"""


def write_index(path: Path, entries: Iterable[dict], commit: str | None) -> None:
    """entries: dicts with title, html (path relative to the index), notebook, ok, duration_s, error."""
    rows = []
    for e in entries:
        status = "ok" if e["ok"] else f"failed: {e['error']}"
        rows.append(f'<tr><td><a href="{html.escape(e["html"])}">{html.escape(e["title"])}</a></td>'
                    f'<td>{html.escape(e["notebook"])}</td>'
                    f'<td class="{"ok" if e["ok"] else "failed"}">{html.escape(status)}</td>'
                    f'<td>{e["duration_s"]:.1f}</td></tr>')
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_PAGE.format(generated=generated, commit=html.escape(commit or "unknown"), rows="\n".join(rows)),
                    encoding="utf-8")
