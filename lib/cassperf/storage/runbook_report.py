"""The storage study's mdadm runbook as report items: printed always, run only when asked.

    runbook_items(md_device, devices, chunk_kbs, run_chunk_kb, mount_point, allow_destructive)
        -> [HTML, ...]      what a report section shows

The RAID 0 rebuild commands (cassperf.storage.raid_runbook) for every chunk size of
``chunk_kbs`` on ``devices`` (empty: the study's /dev/sdc../dev/sdf, printed only). With
``allow_destructive=True`` the plan for ``run_chunk_kb`` runs on exactly the devices ``devices``
names, after run_runbook's checks; a refusal is one line, and each step's output and exit code
are shown.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

#: the study's four data disks (printed when no devices are named)
STUDY_DEVICES = ("/dev/sdc", "/dev/sdd", "/dev/sde", "/dev/sdf")


def runbook_items(md_device: str, devices: Sequence[str], chunk_kbs: Sequence[int], run_chunk_kb: int,
                  mount_point: str = "", allow_destructive: bool = False) -> list[Any]:
    """The runbook printed (and with allow_destructive run) as displayable items (module doc)."""
    from IPython.display import HTML

    from cassperf.storage.raid_runbook import RunbookRefused, format_plan, plan_raid0, run_runbook

    named = [str(d) for d in devices]
    members = named or list(STUDY_DEVICES)
    mount = mount_point or None
    text = "\n\n".join(f"# RAID 0, {chunk} KiB chunks" + ("" if named else " (the study's devices: give raid_devices)")
                       + "\n" + format_plan(plan_raid0(md_device, members, int(chunk), mount)) for chunk in chunk_kbs)
    items: list[Any] = [HTML(f"<pre>{html.escape(text)}</pre>")]
    if not allow_destructive:
        return [*items, HTML("<p>Printed only: <code>allow_destructive</code> is False.</p>")]
    try:
        result = run_runbook(plan_raid0(md_device, members, int(run_chunk_kb), mount), allow_destructive=True,
                             devices=named or None)
    except RunbookRefused as exc:
        return [*items, HTML(f"<p><b>Runbook not run:</b> {html.escape(str(exc))}</p>")]
    items += [HTML(f"<p><b>Runbook {'done' if result.ok else 'failed'}:</b> {html.escape(result.message)}</p>"),
              result.frame()]
    if result.detail is not None:
        items.append(result.detail.tables["arrays"])
    return items


__all__ = ["STUDY_DEVICES", "runbook_items"]
