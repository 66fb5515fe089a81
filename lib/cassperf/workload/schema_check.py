"""Refuse to run against a keyspace1.standard1 that exists with another schema than the spec's.

`CREATE ... IF NOT EXISTS` silently keeps what is there: a keyspace left by an earlier run with
RF 1 would turn an "RF 3" experiment into an RF 1 one without a word. The check reads
system_schema (the same for local and named clusters) after the schema statements ran.
"""

from __future__ import annotations

from typing import Any

from cassperf.errors import ConfigError
from cassperf.workload.spec import Replication, WorkloadSpec


def _short(cls: str) -> str:
    return cls.rsplit(".", 1)[-1]


def schema_differences(spec: WorkloadSpec, session: Any) -> list[str]:
    """What differs between the live keyspace/standard1 and the spec (empty when they agree)."""
    ks = spec.keyspace
    out: list[str] = []
    row = session.execute("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = %s", (ks,)).one()
    if row is None:
        return [f"keyspace {ks} does not exist"]
    live = dict(row[0])
    rep = spec.replication or Replication.simple(1)
    want = {"class": rep.strategy}
    if rep.strategy == "SimpleStrategy":
        want["replication_factor"] = str(rep.factor)
    else:
        want.update({dc: str(rf) for dc, rf in rep.dc_factors})
    live_short = {**live, "class": _short(live.get("class", ""))}
    if live_short != want:
        show = lambda d: ", ".join(f"{k}={v}" for k, v in d.items())  # noqa: E731
        out.append(f"replication is {show(live_short)}, the spec asks for {show(want)}")
    cols = {r[0]: r[1] for r in session.execute(
        "SELECT column_name, type FROM system_schema.columns WHERE keyspace_name = %s AND table_name = 'standard1'",
        (ks,))}
    want_cols = {"key": "blob", **{f"C{i}": "blob" for i in range(spec.column_count)}}
    if cols != want_cols:
        missing = sorted(set(want_cols) - set(cols))
        extra = sorted(set(cols) - set(want_cols))
        typed = sorted(c for c in set(cols) & set(want_cols) if cols[c] != want_cols[c])
        parts = ([f"missing columns {', '.join(missing)}"] if missing else []) + \
                ([f"extra columns {', '.join(extra)}"] if extra else []) + \
                ([f"columns of another type: {', '.join(f'{c} {cols[c]}' for c in typed)}"] if typed else [])
        out.append(f"{ks}.standard1 has {'; '.join(parts)} (the spec has key blob and {spec.column_count} "
                   "blob columns C0..)")
    if spec.compaction is not None:
        row = session.execute("SELECT compaction FROM system_schema.tables WHERE keyspace_name = %s "
                              "AND table_name = 'standard1'", (ks,)).one()
        live_cls = _short(dict(row[0]).get("class", "")) if row else ""
        if live_cls != _short(spec.compaction.strategy):
            out.append(f"{ks}.standard1 uses {live_cls}, the spec asks for {_short(spec.compaction.strategy)}")
    return out


def check_schema(spec: WorkloadSpec, session: Any) -> None:
    """Raise ConfigError naming every difference and the fix."""
    diffs = schema_differences(spec, session)
    if diffs:
        raise ConfigError(f"keyspace {spec.keyspace} exists with a different schema than the workload's: "
                          + "; ".join(diffs) + f". Drop it (DROP KEYSPACE {spec.keyspace}) or give the workload "
                          "another keyspace name")
