"""What the studies of this data folder made on a cluster: the keyspaces their plans write that
the cluster did not hold before the study first ran there (what ``cassperf clean`` lists and
drops).

The executor keeps, in each study's record (``<runs>/.studies/<study>--<experiment>--<plan>.json``,
``clusters``), every context's cluster as it names itself, when the study first ran there: its
``cluster_name``, its nodes' host ids, and the keyspaces it held then (``cluster_identity``,
``keyspaces``). A
keyspace is the study's when its plan names it (its preparations, arms, warm-up and calibration
loads; for an old record, the keyspaces in its arms' specs), the record's cluster shares a host
id with the one asked about, and it was not among the keyspaces held before. A record without
``clusters`` (written before the executor kept them) names no cluster: it is counted, not used.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the names a study's keyspace may have (WorkloadSpec's own rule): lowercase, so no quoting tricks
KEYSPACE_NAME = re.compile(r"[a-z][a-z0-9_]{0,47}")
_SPEC_KEYSPACE = re.compile(r"keyspace='([a-z][a-z0-9_]{0,47})'")


@dataclass(frozen=True)
class Made:
    """A keyspace a study made on a cluster."""

    keyspace: str
    study: str
    experiment: str
    context: str            # the study's context ("": its one cluster; a deployment's name in 04)
    record: Path


@dataclass(frozen=True)
class Found:
    """What the records say was made on one cluster, and the records that could not say."""

    made: tuple[Made, ...]
    unmatched_records: tuple[Path, ...]     # records without the clusters they ran on


def cluster_identity(cluster: Any) -> dict[str, Any]:
    """The cluster as it names itself over CQL: cluster_name, host ids of its nodes, the keyspaces
    it holds (system ones left out), and how it was reached (contact points, port). A cluster that
    does not answer gives the reason under ``error`` instead."""
    out: dict[str, Any] = {"contact_points": list(getattr(cluster, "contact_points", []) or []),
                           "port": getattr(cluster, "port", None)}
    try:
        session = cluster.session()
        local = session.execute("SELECT cluster_name, host_id FROM system.local").one()
        keyspaces = [row[0] for row in session.execute("SELECT keyspace_name FROM system_schema.keyspaces")]
        try:
            peers = [row[0] for row in session.execute("SELECT host_id FROM system.peers_v2")]
        except Exception:  # noqa: BLE001 - Cassandra before 4.0 has system.peers only
            peers = [row[0] for row in session.execute("SELECT host_id FROM system.peers")]
    except Exception as exc:  # noqa: BLE001 - recorded, never raised: the study runs on without it
        return {**out, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
    return {**out, "cluster_name": str(local[0]), "host_ids": sorted(str(h) for h in [local[1], *peers] if h),
            "keyspaces": sorted(k for k in keyspaces if not k.startswith("system"))}


def rebuild_study(record: Mapping[str, Any]) -> Any:
    """The record's Study rebuilt from its class and parameters, or None when it cannot be."""
    module, _, name = str(record.get("study_class", "")).rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
        return cls.from_parameters(record.get("parameters") or {})
    except Exception:  # noqa: BLE001 - an old record's parameters: its arms' specs still name keyspaces
        return None


def planned_keyspaces(record: Mapping[str, Any]) -> dict[str, set[str]]:
    """The keyspaces a record's plan names, by context: its arms' specs as recorded, and the
    rebuilt study's preparations, arms, warm-up and calibration loads."""
    out: dict[str, set[str]] = {}
    for arm in record.get("arms") or []:
        specs = arm.get("spec")
        text = " ".join(specs) if isinstance(specs, list) else str(specs or "")
        out.setdefault(str(arm.get("context") or ""), set()).update(_SPEC_KEYSPACE.findall(text))
    study = rebuild_study(record)
    if study is not None:
        from cassperf.experiments.study import Calibrated

        calibration = record.get("calibration")
        try:
            arms = study.arms(Calibrated.from_json(calibration) if calibration else None)
            loads = [(p.context, p.spec) for p in study.preparations()]
            loads += [(a.context, s) for a in arms for s in a.specs]
            first = arms[0].context if arms else ""
            loads += [(first, s) for s in (study.warm_spec(), study.calibration_spec()) if s is not None]
        except Exception:  # noqa: BLE001 - the recorded arms above still count
            loads = []
        for context, spec in loads:
            out.setdefault(context, set()).add(spec.keyspace)
    return out


def study_records(runs: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Every readable study record under ``runs``/.studies, sorted by path."""
    folder = runs / ".studies"
    out = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            out.append((path, json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError):
            continue
    return out


def made_on(identity: Mapping[str, Any], runs: Path) -> Found:
    """The keyspaces the studies recorded under ``runs`` made on the cluster of ``identity``
    (cluster_identity of it) and that it still holds; sorted by keyspace."""
    hosts, present = set(identity.get("host_ids") or []), set(identity.get("keyspaces") or [])
    made: dict[str, Made] = {}
    unmatched = []
    for path, record in study_records(runs):
        clusters = record.get("clusters")
        if not isinstance(clusters, dict):
            unmatched.append(path)
            continue
        planned = planned_keyspaces(record)
        for context, seen in clusters.items():
            if not isinstance(seen, dict) or not hosts & set(seen.get("host_ids") or []):
                continue
            before = set(seen.get("keyspaces") or [])            # held when the study first ran there
            for keyspace in sorted(planned.get(context, set()) - before):
                if keyspace in present and KEYSPACE_NAME.fullmatch(keyspace) and keyspace not in made:
                    made[keyspace] = Made(keyspace, str(record.get("study", "")), str(record.get("experiment", "")),
                                          context, path)
    return Found(tuple(made[k] for k in sorted(made)), tuple(unmatched))
