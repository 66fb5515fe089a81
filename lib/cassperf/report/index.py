"""reports/index.html: every report in reports/, one row each, in notebook name order.

Each pipeline run writes one record per notebook it ran (`reports/records/<stem>.json`); the
index is rebuilt from all records, so running one notebook (`--notebook`) keeps the others'
rows. A row: the report (linked), its status (failed: where and why), how long the notebook
ran and how much of that its runs applied load (the rest is set-up between runs: schema,
cold-cache steps, client start, analysis), the cluster it ran on and how long providing it
took, the parameter set, the runs it stored, the report's size and when it was made.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path


@dataclass(frozen=True)
class ReportRecord:
    notebook: str                 # file name, e.g. 01-replication-factor.ipynb
    title: str
    html: str | None              # report file name relative to the index; None: no report written
    ok: bool
    error: str | None
    duration_s: float             # notebook execution, s
    parameter_set: str            # local, paper or a file name
    runs_stored: int              # run folders that appeared under the runs dir during the notebook
    cluster: str                  # e.g. "cassperf-dc1_6 (dc1:6 on 127.0.0.1)", "none", "yours: 10.0.0.5"
    cluster_s: float              # s spent starting (or stopping) clusters before it; 0 when reused
    size_bytes: int
    finished_utc: str
    commit: str | None
    load_s: float = 0.0           # s the stored runs applied load (tool wall time, warm-up included)
    variant: str = ""             # "" the published report; else what it tried (report_variant)
    claims: dict[str, int] | None = None   # a study's verdict counts (the A/A control aside)

    @property
    def key(self) -> str:
        return Path(self.notebook).stem + (f"--{self.variant}" if self.variant else "")


def records_dir(reports: Path) -> Path:
    return reports / "records"


def write_record(reports: Path, record: ReportRecord) -> None:
    folder = records_dir(reports)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{record.key}.json").write_text(json.dumps(asdict(record), indent=2), encoding="utf-8")


def read_records(reports: Path) -> list[ReportRecord]:
    """Every record under reports/records, in notebook name order (unreadable ones skipped)."""
    out = []
    for path in sorted(records_dir(reports).glob("*.json")):
        try:
            out.append(ReportRecord(**json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError, TypeError):
            continue
    return sorted(out, key=lambda r: (r.notebook, r.variant))


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cassperf reports</title>
<style>
body{{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:76rem;padding:0 1.5rem;
  color:#1f2933}}
h1{{font-size:1.6rem;margin-bottom:.2rem}} p.meta{{color:#52606d;margin-top:0}}
table{{border-collapse:collapse;font-size:14px;width:100%}}
th,td{{border-bottom:1px solid #e4e7eb;padding:.45rem .6rem;text-align:left;vertical-align:top}}
thead th{{border-bottom:2px solid #9aa5b1;font-weight:600;white-space:nowrap}}
td.num{{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}}
.status{{font-weight:600;white-space:nowrap}} .ok{{color:#1b7f3b}} .failed{{color:#c62828}}
tr.failed-row{{background:#fdecea}} .err{{color:#7f1d1d;font-size:12.5px;margin-top:.2rem}}
code{{font-size:12.5px}} .small{{color:#52606d;font-size:12.5px}}
</style></head>
<body><h1>cassperf reports</h1>
<p class="meta">{count} report(s); index written {generated}.</p>
<table><thead><tr><th>Report</th><th>Status</th><th>Claims</th><th>Duration</th><th>Parameter set</th><th>Runs stored</th>
<th>Cluster</th><th>Size</th><th>Made</th></tr></thead>
<tbody>
{rows}
</tbody></table></body></html>
"""


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"


def _duration(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{int(s // 60)} min {s % 60:02.0f} s"


def _load_share(r: ReportRecord) -> str:
    if r.load_s <= 0 or r.duration_s <= 0:
        return ""
    return f'<div class="small">{r.load_s / r.duration_s:.0%} in workload runs</div>'


def _claims(r: ReportRecord) -> str:
    if not r.claims:
        return ""
    c = r.claims
    parts = [f'<span class="ok">{c.get("holds", 0)} hold</span>', f'{c.get("does not hold", 0)} do not hold',
             f'{c.get("not tested here", 0)} not tested here', f'{c.get("not shown", 0)} not shown']
    if c.get("withheld"):
        parts.append(f'<span class="failed">{c["withheld"]} withheld (A/A control)</span>')
    return "<br>".join(parts)


def _row(r: ReportRecord) -> str:
    title = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(r.title))   # the title's markdown code spans
    link = f'<a href="{html.escape(r.html)}">{title}</a>' if r.html else title
    tried = f' <span class="small">(tried: {html.escape(r.variant)}; the published report is unchanged)</span>' \
        if r.variant else ""
    report = f'{link}{tried}<div class="small"><code>{html.escape(r.notebook)}</code></div>'
    if r.ok:
        status = '<span class="status ok">ok</span>'
    else:
        status = '<span class="status failed">failed</span>'
        if r.error:
            status += f'<div class="err">{html.escape(r.error[:300])}</div>'
    cluster = html.escape(r.cluster)
    if r.cluster_s >= 0.5:
        cluster += f'<div class="small">provided in {_duration(r.cluster_s)}</div>'
    commit = f' <code>{html.escape(r.commit)}</code>' if r.commit else ""
    return (f'<tr class="{"ok-row" if r.ok else "failed-row"}"><td>{report}</td><td>{status}</td>'
            f'<td class="small">{_claims(r)}</td>'
            f'<td class="num">{_duration(r.duration_s)}{_load_share(r)}</td><td>{html.escape(r.parameter_set)}</td>'
            f'<td class="num">{r.runs_stored}</td><td>{cluster}</td><td class="num">{_size(r.size_bytes)}</td>'
            f'<td class="small">{html.escape(r.finished_utc)}{commit}</td></tr>')


def write_index(reports: Path) -> Path:
    """Rebuild reports/index.html from every record; return its path."""
    records = read_records(reports)
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    path = reports / "index.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_PAGE.format(count=len(records), generated=generated, rows="\n".join(_row(r) for r in records)),
                    encoding="utf-8")
    return path
