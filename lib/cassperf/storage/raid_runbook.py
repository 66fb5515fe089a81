"""The storage study's mdadm RAID 0 runbook: planned and printed always, run only when asked for
explicitly, on explicitly named devices, after checks that refuse anything that could hit data.

The published study rebuilt its data array for each chunk size (4k/64k/128k/256k) with:

    umount <mount point>                      (when the array is mounted)
    mdadm --stop /dev/mdN
    mdadm --zero-superblock <dev> ...
    mdadm --create /dev/mdN --level=raid0 --chunk=<KiB> --raid-devices=<K> <dev> ...
    mdadm --detail --scan
    mdadm --detail /dev/mdN

`plan_raid0()` returns those commands (a list of `Command`, nothing runs); `format_plan()` prints
them. `run_runbook(plan, allow_destructive=True, devices=[...])` runs them in order, each with its
output and exit code recorded, stopping at the first failure. Before anything runs it refuses, with
one line (`RunbookRefused`), when: allow_destructive is not True; no explicit device list is given;
a device of the plan is not in that list, is not a block device, holds the root filesystem (is
the root device, its disk, a partition of that disk, or under an md/dm root), is mounted (it or a
partition of it; mounts this process can see), is swap, or is held by another device; the root
filesystem's device cannot be told (an overlay root: nothing can be cleared as safe); the mount point to unmount holds the root
filesystem or a device outside the plan; a command is not umount/mdadm. Then it needs mdadm
(`make mdadm` installs it) and the kernel's md driver: without /proc/mdstat it tries
`modprobe md_mod` where modprobe exists, and otherwise fails with one message, having run no mdadm
command, so no device is touched (mdadm --create on a kernel without md would leave a stray
/dev/mdN node behind).

"Nothing to do" is not a failure: `umount` of a path that is not mounted, `mdadm --stop` of an array
that does not exist, and `--zero-superblock` of a device with no superblock are recorded as
status "nothing to do". A completed run parses `mdadm --detail` with the mdadm-detail parser
(`RunbookResult.detail`: tables arrays, devices, attributes).
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from cassperf.constraints import PowerOfTwo
from cassperf.errors import ConfigError, ParseError
from cassperf.parsers.base import ParseResult
from cassperf.storage import blockdev

#: /dev/md0, /dev/md127, /dev/md/data
MD_DEVICE_RE = re.compile(r"^/dev/md(?:\d+|/[\w.-]+)$")
RUNNABLE = ("umount", "mdadm")
MAKE_TARGET = "make mdadm"


class RunbookRefused(ConfigError):
    """The runbook was not run: one line saying which device or setting stopped it, and why."""


@dataclass(frozen=True)
class Command:
    """One runbook step. `touches` names the block devices whose content it may change;
    `nothing_to_do` holds stderr fragments that mean the step had nothing to do (not a failure)."""

    argv: tuple[str, ...]
    purpose: str
    touches: tuple[str, ...] = ()
    nothing_to_do: tuple[str, ...] = ()

    @property
    def shell(self) -> str:
        return shlex.join(self.argv)


@dataclass
class StepRecord:
    """What one step did: exit code (None when it did not run), output, status."""

    step: int
    command: str
    purpose: str
    status: str                   # ok | nothing to do | failed | not run
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    seconds: float | None = None


@dataclass
class RunbookResult:
    """The outcome of run_runbook: ok, one message, a record per step, and the parsed
    `mdadm --detail` of the array when the run got that far."""

    ok: bool
    message: str
    records: list[StepRecord] = field(default_factory=list)
    detail: ParseResult | None = None

    def frame(self) -> pd.DataFrame:
        """One row per step: step, command, purpose, status, exit_code, stdout, stderr, seconds."""
        columns = ["step", "command", "purpose", "status", "exit_code", "stdout", "stderr", "seconds"]
        frame = pd.DataFrame([{c: getattr(r, c) for c in columns} for r in self.records], columns=columns)
        frame["exit_code"] = frame["exit_code"].astype("Int64")
        return frame


def plan_raid0(md_device: str, devices: Sequence[str], chunk_kb: int, mount_point: str | None = None) -> list[Command]:
    """The runbook's commands for a RAID 0 of `devices` with a chunk of `chunk_kb` KiB as
    `md_device`; nothing is run. `mount_point`: where the array is mounted now (umounted first)."""
    if not MD_DEVICE_RE.match(md_device):
        raise ConfigError(f"md_device {md_device!r}: expected /dev/mdN or /dev/md/<name>")
    devs = list(devices)
    if len(devs) < 2:
        raise ConfigError(f"devices {devs!r}: RAID 0 needs at least 2 devices")
    if len(set(devs)) != len(devs):
        raise ConfigError(f"devices {devs!r}: a device is named twice")
    if not all(isinstance(d, str) and d.startswith("/dev/") for d in devs):
        raise ConfigError(f"devices {devs!r}: expected paths under /dev/")
    if not PowerOfTwo(4).accepts(chunk_kb):
        raise ConfigError(f"chunk_kb {chunk_kb!r}: expected a power of two >= 4 (KiB), e.g. 4, 64, 128, 256")
    plan: list[Command] = []
    if mount_point is not None:
        plan.append(Command(("umount", mount_point), f"unmount the array's filesystem at {mount_point}",
                            nothing_to_do=("not mounted", "no mount point specified")))
    plan += [
        Command(("mdadm", "--stop", md_device), f"stop {md_device} if it is assembled",
                touches=(md_device,), nothing_to_do=("No such file or directory", "No such device")),
        Command(("mdadm", "--zero-superblock", *devs), "erase old md superblocks on the members",
                touches=tuple(devs), nothing_to_do=("Unrecognised md component device",)),
        Command(("mdadm", "--create", md_device, "--level=raid0", f"--chunk={chunk_kb}",
                 f"--raid-devices={len(devs)}", *devs),
                f"create the RAID 0 ({len(devs)} devices, {chunk_kb} KiB chunks)", touches=(md_device, *devs)),
        Command(("mdadm", "--detail", "--scan"), "list the assembled arrays (the mdadm.conf lines)"),
        Command(("mdadm", "--detail", md_device), "the new array as mdadm reports it (level, chunk, members)"),
    ]
    return plan


def format_plan(plan: Sequence[Command]) -> str:
    """The commands as a shell would run them, one per line, each with its purpose."""
    width = max((len(c.shell) for c in plan), default=0)
    return "\n".join(f"{c.shell:<{width}}  # {c.purpose}" for c in plan)


def _members_and_md(plan: Sequence[Command]) -> tuple[list[str], list[str], list[str]]:
    """(member devices, md devices, mount points) the plan names."""
    members: list[str] = []
    mds: list[str] = []
    mounts: list[str] = []
    for cmd in plan:
        if cmd.argv[:1] == ("umount",):
            mounts.extend(cmd.argv[1:])
        for dev in cmd.touches:
            target = mds if MD_DEVICE_RE.match(dev) else members
            if dev not in target:
                target.append(dev)
    return members, mds, mounts


def check_runbook(plan: Sequence[Command], allow_destructive: bool, devices: Sequence[str] | None) -> None:
    """Raise RunbookRefused (one line) unless the plan may run on this machine; run nothing."""
    if allow_destructive is not True:
        raise RunbookRefused("not run: allow_destructive=True is required to run the mdadm runbook "
                             "(it erases the named devices); format_plan(plan) prints what it would run")
    if not devices:
        raise RunbookRefused("not run: pass the devices the runbook may erase explicitly, "
                             "e.g. devices=['/dev/nvme1n1', '/dev/nvme2n1']")
    for cmd in plan:
        if not cmd.argv or cmd.argv[0] not in RUNNABLE:
            raise RunbookRefused(f"not run: {cmd.shell!r} is not a runbook command (umount or mdadm only)")
    allowed = set(devices)
    members, mds, mounts = _members_and_md(plan)
    if not members:
        raise RunbookRefused("not run: the plan names no member devices (make it with plan_raid0)")
    for dev in members:
        if dev not in allowed:
            raise RunbookRefused(f"not run: {dev} is in the plan but not in devices={list(devices)}")
    root = blockdev.root_family()
    if not root:
        raise RunbookRefused("not run: cannot tell which block device holds the root filesystem (/ is not on a "
                             "block device this process can see), so no device can be cleared as safe")
    swap = blockdev.swap_devices()
    named = {}
    for dev in members:
        bd = blockdev.block_device(dev)
        if bd is None:
            raise RunbookRefused(f"not run: {dev} does not exist as a block device")
        if bd.name in root:
            raise RunbookRefused(f"not run: {dev} ({bd.name}) holds the root filesystem, or shares its disk "
                                 f"({', '.join(sorted(root))})")
        named[dev] = bd
    for dev in mds:
        bd = blockdev.block_device(dev)
        if bd is not None and bd.name in root:
            raise RunbookRefused(f"not run: {dev} ({bd.name}) holds the root filesystem")
    for dev, bd in named.items():
        disk_family = {bd.name, *blockdev.partitions(bd.name)}
        mounted = blockdev.mounts_of(disk_family)
        if mounted:
            name, point = mounted[0]
            what = dev if name == bd.name else f"{dev} (its partition {name})"
            raise RunbookRefused(f"not run: {what} is mounted at {point}; unmount it first, or leave it out")
        if disk_family & swap:
            raise RunbookRefused(f"not run: {dev} is in use as swap")
        held = [h for n in disk_family for h in blockdev.holders(n)]
        if held:
            raise RunbookRefused(f"not run: {dev} is held by {', '.join(sorted(set(held)))} (part of an assembled "
                                 "array or device-mapper target)")
    md_names = {bd.name for d in mds if (bd := blockdev.block_device(d)) is not None}
    member_names = {bd.name for bd in named.values()}
    for point in mounts:
        if Path(point).resolve() == Path("/"):
            raise RunbookRefused("not run: the plan would unmount / (the root filesystem)")
        source, mounted = blockdev.mount_source(point)
        if not mounted:
            continue
        if source is not None and source in root:
            raise RunbookRefused(f"not run: {point} is the root filesystem's device ({source})")
        if source is None or source not in md_names | member_names:
            raise RunbookRefused(f"not run: {point} is mounted from {source or 'a non-block filesystem'}, "
                                 "not from the plan's array")


def _run(cmd: Command, step: int, timeout_s: float) -> StepRecord:
    import time

    start = time.monotonic()
    try:
        proc = subprocess.run(list(cmd.argv), capture_output=True, text=True, timeout=timeout_s,
                              stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired as exc:
        return StepRecord(step, cmd.shell, cmd.purpose, "failed", None, _text(exc.stdout), _text(exc.stderr)
                          + f"\n(timed out after {timeout_s:g} s)", time.monotonic() - start)
    except OSError as exc:
        return StepRecord(step, cmd.shell, cmd.purpose, "failed", None, "", str(exc), time.monotonic() - start)
    status = "ok" if proc.returncode == 0 else "failed"
    if proc.returncode != 0 and any(frag in proc.stderr for frag in cmd.nothing_to_do):
        status = "nothing to do"
    return StepRecord(step, cmd.shell, cmd.purpose, status, proc.returncode, proc.stdout, proc.stderr,
                      time.monotonic() - start)


def _text(value: str | bytes | None) -> str:
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _md_driver(records: list[StepRecord]) -> str | None:
    """None when the md driver is there (loaded now if modprobe could); else why not."""
    if blockdev.md_driver_present():
        return None
    modprobe = shutil.which("modprobe")
    if modprobe is None:
        return "the kernel has no md (software RAID) driver: /proc/mdstat is absent and modprobe is not installed"
    record = _run(Command((modprobe, "md_mod"), "load the md driver"), 0, 60)
    records.append(record)
    if blockdev.md_driver_present():
        return None
    said = (record.stderr or record.stdout).strip().splitlines()
    return ("the kernel has no md (software RAID) driver: /proc/mdstat is absent and "
            f"'modprobe md_mod' failed (exit {record.exit_code}: {said[-1] if said else 'no output'})")


def run_runbook(plan: Sequence[Command], allow_destructive: bool = False, devices: Sequence[str] | None = None,
                timeout_s: float = 300) -> RunbookResult:
    """Run a plan from plan_raid0 (see the module docstring for what is refused and when)."""
    check_runbook(plan, allow_destructive, devices)
    records: list[StepRecord] = []
    if shutil.which("mdadm") is None:
        return RunbookResult(False, f"not run: mdadm is not installed ({MAKE_TARGET} installs it); no device was "
                                    "touched", [_not_run(i, c) for i, c in enumerate(plan, 1)])
    why = _md_driver(records)
    if why is not None:
        return RunbookResult(False, f"not run: {why}; no mdadm command was run and no device was touched",
                             records + [_not_run(i, c) for i, c in enumerate(plan, 1)])
    return _execute_steps(plan, records, timeout_s)


def _execute_steps(plan: Sequence[Command], records: list[StepRecord], timeout_s: float) -> RunbookResult:
    """Run the steps in order, recording each; stop at the first failure (the rest 'not run').
    No checks here: run_runbook calls it only after check_runbook and the md-driver check."""
    detail: ParseResult | None = None
    for i, cmd in enumerate(plan, 1):
        record = _run(cmd, i, timeout_s)
        records.append(record)
        if record.status == "failed":
            said = (record.stderr or record.stdout).strip().splitlines()
            rest = [_not_run(j, c) for j, c in enumerate(plan[i:], i + 1)]
            records.extend(rest)
            tail = "" if not rest else f"; step {i + 1} not run" if len(rest) == 1 else \
                f"; steps {i + 1}-{len(plan)} not run"
            return RunbookResult(False, f"step {i} ({cmd.shell}) failed with exit {record.exit_code}: "
                                        f"{said[-1] if said else 'no output'}{tail}", records)
        if cmd.argv[:2] == ("mdadm", "--detail") and len(cmd.argv) == 3 and MD_DEVICE_RE.match(cmd.argv[2]) \
                and record.status == "ok":
            try:
                detail = detail_of(record.stdout, cmd.shell)
            except ParseError as exc:
                return RunbookResult(True, f"ran {len(plan)} steps; the array's mdadm --detail could not be "
                                           f"parsed: {exc}", records)
    return RunbookResult(True, f"ran {len(plan)} steps", records, detail)


def _not_run(step: int, cmd: Command) -> StepRecord:
    return StepRecord(step, cmd.shell, cmd.purpose, "not run")


def detail_of(output: str, source: str = "mdadm --detail") -> ParseResult:
    """`mdadm --detail` output parsed by the mdadm-detail parser (tables arrays, devices, attributes)."""
    from cassperf.parsers.mdadm import parse_mdadm_detail

    return parse_mdadm_detail(output, source)


__all__ = ["Command", "RunbookRefused", "RunbookResult", "StepRecord", "check_runbook", "detail_of", "format_plan",
           "plan_raid0", "run_runbook"]
