"""What the selected studies' parameters ask of this machine that it does not have, said before
the first study runs: one line per deployment or figure the reports will lack, with the command
that adds it. It looks at the programs on PATH and whether this process is root; it starts and
connects to nothing.

- 04 (deployment-comparison): a ``container`` deployment needs podman, runc and debootstrap
  (``make container``, Debian packages) and root (rootful podman); without them it is "not made".
- 02 (multi-dc): its network baseline runs iperf3 and ping where the clients run (this machine
  unless ``client_hosts`` names others); without them those rows say "not measured". The distance
  between the embedded cluster's DCs (``inter_dc_rtt_ms``) needs root (network namespaces) and
  iproute2's ``ip``.
- 05 (storage-and-cache): the loop-device configurations (``loop_chunk_kbs``) need root.

``make report`` installs the packages when run as root (as ``make test`` does); a user who is not
root is told the one command that adds each missing part.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

#: the programs a container deployment needs (``make container``)
CONTAINER_TOOLS = ("podman", "runc", "debootstrap")
#: what the multi-DC baseline runs at each client location, and the make target that installs it
BASELINE_TOOLS = (("iperf3", "iperf3"), ("ping", "ping"))
#: what the distance between the embedded cluster's DCs needs besides root (network namespaces)
DISTANCE_TOOL = "ip"
#: every program this module asks about
TOOLS = (*CONTAINER_TOOLS, *(tool for tool, _ in BASELINE_TOOLS), DISTANCE_TOOL)


@dataclass(frozen=True)
class Host:
    """What this machine gives: the programs of ``TOOLS`` found on PATH, and whether this process
    runs as root."""

    tools: frozenset[str]
    root: bool

    @classmethod
    def here(cls) -> "Host":
        return cls(frozenset(t for t in TOOLS if shutil.which(t) is not None), os.geteuid() == 0)

    def lacks(self, tools: Iterable[str]) -> list[str]:
        return [t for t in tools if t not in self.tools]


@dataclass(frozen=True)
class Gap:
    """One deployment or figure a report will lack here: ``missing`` (what and why) and ``fix``
    (the command that adds it)."""

    notebook: str        # the notebook's stem, e.g. 04-deployment-comparison
    missing: str
    fix: str

    def line(self) -> str:
        return f"{self.notebook}: {self.missing}; add it: {self.fix}"


def _install(target: str, host: Host) -> str:
    return f"make {target}" if host.root else f"sudo make {target}"


def _deployment_gaps(notebook: str, study: Any, embedded: bool, host: Host) -> list[Gap]:
    from cassperf.experiments.deployment import parse_deployments

    if not embedded:
        return []
    lacking = host.lacks(CONTAINER_TOOLS)
    why = ([f"{', '.join(lacking)} not installed"] if lacking else []) + \
          ([] if host.root else ["container nodes run under rootful podman, which needs root"])
    if not why:
        return []
    fix = "sudo make report" if not host.root else _install("container", host)
    return [Gap(notebook, f"deployment {d.name} will not be made ({'; '.join(why)})", fix)
            for d in parse_deployments(study.deployments) if d.storage == "container"]


def _multidc_gaps(notebook: str, study: Any, embedded: bool, host: Host) -> list[Gap]:
    out = []
    if not str(study.client_hosts or "").strip():              # the baseline's clients run on this machine
        for tool, target in BASELINE_TOOLS:
            if tool not in host.tools:
                out.append(Gap(notebook, f"the network baseline's {tool} rows will say \"not measured\" "
                                         f"({tool} not installed)", _install(target, host)))
    if embedded and study.inter_dc_rtt_ms:
        gone = f"no {study.inter_dc_rtt_ms:g} ms distance between the DCs (the study runs without it: "
        if not host.root:
            out.append(Gap(notebook, gone + "network namespaces need root)", "sudo make report"))
        elif DISTANCE_TOOL not in host.tools:
            out.append(Gap(notebook, gone + "iproute2's ip not installed)", "apt-get install iproute2"))
    return out


def _storage_gaps(notebook: str, study: Any, embedded: bool, host: Host) -> list[Gap]:
    if not embedded or not study.loop_chunk_kbs or host.root:
        return []
    chunks = ", ".join(f"{c} KiB" for c in study.loop_chunk_kbs)
    return [Gap(notebook, f"the loop-device configurations ({chunks}) will be left out (loop devices need root)",
                "sudo make report")]


_BY_STUDY = {"deployment-comparison": _deployment_gaps, "multi-dc": _multidc_gaps,
             "storage-and-cache": _storage_gaps}


def study_gaps(notebook: str, study: Any, contact_points: str, host: Host) -> list[Gap]:
    """What ``study`` (a Study made from a notebook's effective parameters, ``contact_points``
    among them: "" for the embedded cluster) will lack on ``host``."""
    check = _BY_STUDY.get(getattr(study, "name", ""))
    return check(notebook, study, not contact_points.strip(), host) if check else []


def gaps(studies: Sequence[tuple[str, Any, str]], host: Host | None = None) -> list[Gap]:
    """Every gap of the (notebook stem, Study, contact_points) triples on ``host`` (default: this
    machine), in order."""
    host = host or Host.here()
    return [g for notebook, study, points in studies for g in study_gaps(notebook, study, points, host)]
