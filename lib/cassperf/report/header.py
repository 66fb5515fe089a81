"""What a published report says about itself, at its top and under its tables.

A report notebook's first code cell after the parameters shows

    report_header(report_parameters(globals()), describe_cluster(cluster))

which renders the parameters as a table, the cluster (Cassandra version, nodes, DCs), when and
from which commit the report was made, and the parameter set the pipeline ran it with. Under a
table built from stored runs, `run_ids_note(ids)` names the runs behind it, so a reader can
find them in `data/runs/<run_id>/`.
"""

from __future__ import annotations

import html
import os
import platform
import subprocess
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any

from IPython.display import HTML

from cassperf import config

#: Set by the report pipeline in the kernel's environment: the parameter set's label.
PARAMETER_SET_ENV = "CASSPERF_REPORT_PARAMETER_SET"

_STYLE = """<style>
.cassperf-header{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;font-size:13px;color:#1f2933;
  border:1px solid #d5dbe1;border-radius:6px;padding:10px 14px;margin:4px 0 12px;background:#f8fafc;max-width:62rem}
.cassperf-header .cassperf-meta{color:#52606d;margin:0 0 8px}
.cassperf-header .cassperf-cols{display:flex;flex-wrap:wrap;gap:10px 28px;align-items:flex-start}
.cassperf-header h4{font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:#52606d;margin:0 0 4px}
.cassperf-header table{border-collapse:collapse;font-size:12.5px}
.cassperf-header td,.cassperf-header th{border:none!important;border-bottom:1px solid #e4e7eb!important;
  padding:2px 12px 2px 0!important;text-align:left!important;vertical-align:top;background:none!important}
.cassperf-header th{font-weight:600;color:#3e4c59}
.cassperf-header td.v{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all}
.cassperf-header tr{background:none!important}
.cassperf-header .empty{color:#9aa5b1;font-style:italic;font-family:system-ui,sans-serif}
.cassperf-runs{font-size:12px;color:#52606d;margin:2px 0 14px}
.cassperf-runs code{font-size:11.5px;background:#f1f4f7;padding:0 3px;border-radius:3px}
</style>"""


def report_parameters(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The notebook's parameters with their current values: every name annotated at the top
    level (the `parameters` cell is the only cell that annotates), read from `namespace`
    (pass `globals()`), so values papermill injected win over the defaults."""
    names = namespace.get("__annotations__", {})
    return {name: namespace[name] for name in names if name in namespace}


def describe_cluster(cluster: Any) -> dict[str, Any]:
    """A cluster handle (LocalCluster or RemoteCluster) as the header shows it, asked of the
    cluster itself over CQL: its name (an embedded cluster's, else system.local's cluster_name),
    kind, the Cassandra version(s) the nodes report, each node (address, DC, rack, version, up:
    the driver's reading of system.local and system.peers_v2), nodes per DC, how it was reached
    (TLS, whether it asked for credentials) and what the sampler reads of it. Never reads
    credentials."""
    from cassperf.sampler.sampler import reach_line
    from cassperf.sampler.virtual_tables import NEEDED_TABLES

    frame = cluster.topology_frame()
    nodes = [{"address": str(r["address"]), "datacenter": str(r["datacenter"]), "rack": str(r["rack"]),
              "release_version": str(r["release_version"]), "up": bool(r["up"])} for _, r in frame.iterrows()]
    desc = dict(getattr(cluster, "description", {}) or {})
    session = cluster.session()
    local = session.execute("SELECT cluster_name FROM system.local").one()
    views = {r[0] for r in session.execute(
        "SELECT table_name FROM system_virtual_schema.tables WHERE keyspace_name = 'system_views'")}
    versions = sorted({n["release_version"] for n in nodes})
    provider = getattr(session.cluster, "auth_provider", None)
    reached = ", ".join([f"{', '.join(cluster.contact_points)} port {cluster.port}",
                         "TLS" if getattr(cluster, "tls", None) is not None else "no TLS",
                         "password authentication" if getattr(provider, "asked", False) else "no authentication"])
    return {"name": desc.get("name") or (str(local[0]) if local else None),
            "kind": "embedded: nodes on this machine" if desc.get("kind") == "LocalCluster" else "your cluster",
            "cassandra_version": ", ".join(versions) or desc.get("cassandra_version"),
            "heap_mb": desc.get("heap_mb"), "nodes": nodes, "reached": reached,
            "sampled": reach_line(cluster.jmx_problem(), [f"system_views.{t}" for t in NEEDED_TABLES if t in views]),
            "datacenters": dict(Counter(n["datacenter"] for n in nodes))}


def _git_commit() -> str | None:
    """The workbook's short commit, with "+ uncommitted changes" when tracked files differ from it."""
    root = config.project_root()
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                             timeout=10)
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--"], cwd=root, capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    commit = out.stdout.strip()
    if not commit:
        return None
    return commit + (" + uncommitted changes" if dirty.returncode == 1 else "")


def _value(v: Any) -> str:
    if v == "":
        return "<span class='empty'>(empty)</span>"
    if isinstance(v, str):
        return html.escape(repr(v) if v != v.strip() else v)
    return html.escape(repr(v))


def header_html(parameters: Mapping[str, Any], cluster: Mapping[str, Any] | None,
                generated_utc: datetime | None = None) -> str:
    """The header as an HTML fragment (report_header wraps it for display)."""
    when = (generated_utc or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    meta = [f"Generated {when}", f"on host {html.escape(platform.node() or 'unknown')}"]
    commit = _git_commit()
    if commit:
        meta.append(f"from commit <code>{html.escape(commit)}</code>")
    pset = os.environ.get(PARAMETER_SET_ENV)
    meta.append(f"parameter set <b>{html.escape(pset)}</b>" if pset else "parameters as given to this notebook")
    params = "".join(f"<tr><th>{html.escape(k)}</th><td class='v'>{_value(v)}</td></tr>" for k, v in parameters.items())
    cols = [f"<div><h4>Parameters</h4><table>{params or '<tr><td>none</td></tr>'}</table></div>"]
    cols.append(f"<div><h4>Cluster</h4>{_cluster_html(cluster)}</div>")
    return (f"{_STYLE}<div class='cassperf-header'><p class='cassperf-meta'>{' · '.join(meta)}</p>"
            f"<div class='cassperf-cols'>{''.join(cols)}</div></div>")


def _cluster_html(cluster: Mapping[str, Any] | None) -> str:
    if not cluster:
        return "<table><tr><td>none: this report reads stored logs and runs only</td></tr></table>"
    nodes = list(cluster.get("nodes") or [])
    dcs = cluster.get("datacenters") or dict(Counter(n.get("datacenter") for n in nodes))
    up = sum(1 for n in nodes if n.get("up"))
    rows = [("Cassandra", cluster.get("cassandra_version") or "unknown"),
            ("Nodes", f"{len(nodes)} ({up} up)"),
            ("Data centers", ", ".join(f"{dc}: {n} node{'s' if n != 1 else ''}" for dc, n in dcs.items()) or "unknown")]
    if cluster.get("kind"):
        rows.insert(0, ("Kind", cluster["kind"]))
    if cluster.get("name"):
        rows.insert(0, ("Name", cluster["name"]))
    if cluster.get("heap_mb"):
        rows.append(("Heap per node", f"{cluster['heap_mb']} MB"))
    if cluster.get("reached"):
        rows.append(("Reached at", cluster["reached"]))
    if cluster.get("sampled"):
        rows.append(("Sampled", cluster["sampled"]))
    body = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>" for k, v in rows)
    if nodes:
        addr = ", ".join(f"{html.escape(n['address'])} ({html.escape(n.get('datacenter', ''))}"
                         f"{'' if n.get('up', True) else ', down'})" for n in nodes)
        body += f"<tr><th>Addresses</th><td class='v'>{addr}</td></tr>"
    return f"<table>{body}</table>"


def report_header(parameters: Mapping[str, Any], cluster: Mapping[str, Any] | None) -> HTML:
    """The report's header, for display in the notebook's first code cell after the parameters:
    parameters as a table, the cluster (`describe_cluster(handle)`, or None for a report that
    runs nothing), when, where and from which commit it was made, and the parameter set."""
    return HTML(header_html(parameters, cluster))


def run_ids_note(run_ids: Iterable[str]) -> HTML:
    """A line to show under a table: the stored runs it was computed from (ids in data/runs/)."""
    ids = list(dict.fromkeys(str(r) for r in run_ids))
    if not ids:
        return HTML(f"{_STYLE}<p class='cassperf-runs'>No stored run behind this table.</p>")
    shown = ", ".join(f"<code>{html.escape(r)}</code>" for r in ids)
    label = "Run behind this table" if len(ids) == 1 else f"The {len(ids)} runs behind this table"
    if len(ids) > 8:
        return HTML(f"{_STYLE}<details class='cassperf-runs'><summary>{label}</summary>{shown}</details>")
    return HTML(f"{_STYLE}<p class='cassperf-runs'>{label}: {shown}</p>")


def json_output(data: Any) -> dict[str, Any]:
    """``display(json_output({...}), raw=True)``: figures a test or a tool can read back from the
    executed notebook, with NaN and infinities as null (JSON has no such numbers)."""
    import json
    import math

    def clean(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {str(k): clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        if hasattr(value, "item") and not isinstance(value, (str, bytes)):
            return clean(value.item())
        if value is not None and not isinstance(value, (str, int, float, bool)):
            return str(value)
        return value

    return {"application/json": json.loads(json.dumps(clean(data)))}
