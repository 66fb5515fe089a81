"""Which machine a run was measured on, and which runs may share a table.

A row rate says something about a deployment only next to rows from the same hardware (the
deployment study: runs on different machines compare only when the
hardware is identical). A run's machine has two parts:

- its name: the run's ``machine`` label (``cassperf import --label machine=server2``), else
  the hostname the run's manifest recorded, else "unnamed";
- its hardware: CPU model, logical cores and memory (GiB, rounded to a whole GiB) from the
  manifest's ``machine`` record, which every run the workbook makes carries. An imported log
  has none: its hardware is unknown.

Two runs share a group only when both parts agree; a run with unknown hardware never shares a
group with one whose hardware is known. When one name covers several hardware records, each
gets a group of its own and every such group carries a note saying so (the loud note the
tables show), rather than one silent table.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from cassperf.results.model import Run

MACHINE_LABEL = "machine"
UNKNOWN = "hardware not recorded"


@dataclass(frozen=True)
class Hardware:
    """CPU model, logical cores and memory in GiB (None where the record lacks it)."""

    cpu_model: str | None
    cpu_cores: int | None
    ram_gib: int | None

    @property
    def known(self) -> bool:
        return any(v is not None for v in (self.cpu_model, self.cpu_cores, self.ram_gib))

    def describe(self) -> str:
        if not self.known:
            return UNKNOWN
        parts = [self.cpu_model or "CPU model unknown",
                 f"{self.cpu_cores} cores" if self.cpu_cores is not None else "cores unknown",
                 f"{self.ram_gib} GiB" if self.ram_gib is not None else "memory unknown"]
        return ", ".join(parts)


@dataclass(frozen=True)
class Machine:
    name: str
    hardware: Hardware

    @property
    def key(self) -> tuple[str, Hardware]:
        return (self.name, self.hardware)

    def describe(self) -> str:
        return f"{self.name} ({self.hardware.describe()})"


@dataclass
class MachineGroup:
    """Runs measured on one machine (same name, same hardware record)."""

    machine: Machine
    runs: list[Run] = field(default_factory=list)
    note: str = ""          # non-empty: this machine's name also covers other hardware, or none is recorded

    @property
    def title(self) -> str:
        return self.machine.describe()


def _int(value: Any) -> int | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return int(v) if math.isfinite(v) else None


def hardware_of(run: Run) -> Hardware:
    """The manifest's machine record as Hardware (every field None for an imported log)."""
    rec = run.manifest.get("machine")
    if not isinstance(rec, dict):
        return Hardware(None, None, None)
    model = rec.get("cpu_model")
    ram = _int(rec.get("ram_bytes"))
    return Hardware(" ".join(str(model).split()) if model else None, _int(rec.get("cpu_cores")),
                    round(ram / 2**30) if ram is not None else None)


def machine_of(run: Run) -> Machine:
    """The run's machine: its ``machine`` label (else the recorded hostname) and hardware."""
    name = run.labels.get(MACHINE_LABEL)
    if not name:
        rec = run.manifest.get("machine")
        name = rec.get("hostname") if isinstance(rec, dict) else None
    return Machine(str(name) if name else "unnamed", hardware_of(run))


def machine_groups(runs: Iterable[Run]) -> list[MachineGroup]:
    """The runs split by machine (module doc), in order of each machine's first run; the notes
    say when one name covers several hardware records or a machine's hardware is unknown."""
    groups: dict[tuple[str, Hardware], MachineGroup] = {}
    for run in runs:
        m = machine_of(run)
        groups.setdefault(m.key, MachineGroup(m)).runs.append(run)
    by_name: dict[str, list[MachineGroup]] = {}
    for g in groups.values():
        by_name.setdefault(g.machine.name, []).append(g)
    for name, same in by_name.items():
        if len(same) > 1:
            others = "; ".join(g.machine.hardware.describe() for g in same)
            for g in same:
                g.note = (f"machine {name!r} names runs on {len(same)} different hardware records ({others}): "
                          f"they are NOT compared in one table. Label them apart (--label machine=...) or check "
                          f"that the hardware really is the same")
    for g in groups.values():
        if not g.machine.hardware.known and not g.note:
            g.note = (f"the runs of {g.machine.name!r} carry no hardware record (imported logs): they are shown "
                      f"apart from every machine whose hardware is known")
    return list(groups.values())

