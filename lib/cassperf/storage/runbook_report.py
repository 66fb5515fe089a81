"""The storage study's mdadm runbook as a report section: printed always, run only when asked.

    show_runbook(parameters)     # the notebook's parameters (report.parameters)

Prints the RAID 0 rebuild commands (cassperf.storage.raid_runbook) for every chunk size of
``raid_chunk_kbs`` on ``raid_devices`` (empty: the study's /dev/sdc../dev/sdf, printed only).
With ``allow_destructive=True`` it runs the plan for ``raid_run_chunk_kb`` on exactly the devices
``raid_devices`` names, after run_runbook's checks; a refusal is one line, and each step's output
and exit code are shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: the study's four data disks (printed when raid_devices is empty)
STUDY_DEVICES = ("/dev/sdc", "/dev/sdd", "/dev/sde", "/dev/sdf")


def show_runbook(parameters: Mapping[str, Any]) -> None:
    """Print (and with allow_destructive=True run) the runbook of the parameters (module doc)."""
    from IPython.display import Markdown, display

    from cassperf.storage.raid_runbook import RunbookRefused, format_plan, plan_raid0, run_runbook

    md = str(parameters.get("raid_md_device") or "/dev/md0")
    named = [str(d) for d in parameters.get("raid_devices") or []]
    members = named or list(STUDY_DEVICES)
    mount = str(parameters.get("raid_mount_point") or "") or None
    for chunk in parameters.get("raid_chunk_kbs") or [4, 64, 128, 256]:
        print(f"# RAID 0, {chunk} KiB chunks" + ("" if named else " (the study's devices: give raid_devices)"))
        print(format_plan(plan_raid0(md, members, int(chunk), mount)) + "\n")
    if not parameters.get("allow_destructive"):
        display(Markdown("Printed only: `allow_destructive` is False."))
        return
    try:
        result = run_runbook(plan_raid0(md, members, int(parameters.get("raid_run_chunk_kb") or 64), mount),
                             allow_destructive=True, devices=named or None)
    except RunbookRefused as exc:
        display(Markdown(f"**Runbook not run:** {exc}"))
        return
    display(Markdown(f"**Runbook {'done' if result.ok else 'failed'}:** {result.message}"))
    display(result.frame().style.hide(axis="index"))
    if result.detail is not None:
        display(result.detail.tables["arrays"])


__all__ = ["STUDY_DEVICES", "show_runbook"]
