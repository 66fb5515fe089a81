"""Facts about Linux block devices, read from /proc and /sys (read-only, no side effects).

A device is named by its path (/dev/loop3) and known to the kernel by major:minor and a
kernel name (loop3, vda, nvme0n1p2, dm-0). Everything here answers "may this device be
written to?" questions for the RAID runbook: does it exist as a block device, is it (or a
partition of it) mounted or used as swap, is it held by another device (an md or dm array),
does it belong to the root filesystem's family (the root device, its whole disk, that disk's
partitions, and for an md/dm root every device under it).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

SYS_BLOCK = Path("/sys/class/block")
SYS_DEV_BLOCK = Path("/sys/dev/block")


@dataclass(frozen=True)
class BlockDevice:
    """A block device node: its path, the kernel's name for it, and its numbers."""

    path: str
    name: str
    major: int
    minor: int

    @property
    def devno(self) -> tuple[int, int]:
        return (self.major, self.minor)


def kernel_name(major: int, minor: int) -> str | None:
    """loop3 for 7:3, via /sys/dev/block/MAJ:MIN (None when the kernel has no such block device)."""
    link = SYS_DEV_BLOCK / f"{major}:{minor}"
    try:
        return Path(os.readlink(link)).name
    except OSError:
        return None


def block_device(path: str) -> BlockDevice | None:
    """The block device at `path` (symlinks followed), or None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    major, minor = os.major(st.st_rdev), os.minor(st.st_rdev)
    name = kernel_name(major, minor)
    return None if name is None else BlockDevice(path, name, major, minor)


def partitions(name: str) -> list[str]:
    """Kernel names of the partitions of a whole disk (vda -> [vda1, vda2]); [] for none."""
    base = SYS_BLOCK / name
    try:
        return sorted(p.name for p in base.iterdir() if (p / "partition").is_file())
    except OSError:
        return []


def whole_disk(name: str) -> str:
    """The disk a partition belongs to (vda1 -> vda); a whole disk is its own."""
    part = SYS_BLOCK / name
    if (part / "partition").is_file():
        return part.resolve().parent.name
    return name


def _listing(name: str, sub: str) -> list[str]:
    try:
        return sorted(p.name for p in (SYS_BLOCK / name / sub).iterdir())
    except OSError:
        return []


def holders(name: str) -> list[str]:
    """Devices built on top of this one (an md array, a dm target): /sys/class/block/X/holders."""
    return _listing(name, "holders")


def slaves(name: str) -> list[str]:
    """Devices this one is built on (for md/dm): /sys/class/block/X/slaves."""
    return _listing(name, "slaves")


def family(name: str) -> set[str]:
    """A device, its whole disk, every partition of that disk, and (for md/dm) the same for every
    device below it, recursively."""
    out: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in out:
            continue
        disk = whole_disk(current)
        members = {current, disk, *partitions(disk)}
        out |= members
        for member in members:
            todo.extend(slaves(member))
    return out


def _mountinfo() -> list[tuple[int, int, str, str]]:
    """(major, minor, mount point, source) of every mount this process sees."""
    rows = []
    try:
        text = Path("/proc/self/mountinfo").read_text()
    except OSError:
        return rows
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 10 or ":" not in fields[2]:
            continue
        major, _, minor = fields[2].partition(":")
        sep = fields.index("-") if "-" in fields else None
        source = fields[sep + 2] if sep is not None and len(fields) > sep + 2 else ""
        mount_point = fields[4].replace("\\040", " ")
        if major.isdigit() and minor.isdigit():
            rows.append((int(major), int(minor), mount_point, source))
    return rows


def mounts_of(names: set[str]) -> list[tuple[str, str]]:
    """(kernel name, mount point) for every mount whose device is one of `names`."""
    out = []
    for major, minor, mount_point, _source in _mountinfo():
        name = kernel_name(major, minor) if major else None
        if name is not None and name in names:
            out.append((name, mount_point))
    return out


def mount_source(mount_point: str) -> tuple[str | None, bool]:
    """(kernel name of the block device mounted at `mount_point`, whether anything is mounted
    there); the name is None for a mount with no block device (tmpfs, proc, ...)."""
    target = os.path.realpath(mount_point)
    found: tuple[str | None, bool] = (None, False)
    for major, minor, point, _source in _mountinfo():
        if point == target:                       # the last mount on a point is the visible one
            found = (kernel_name(major, minor) if major else None, True)
    return found


def swap_devices() -> set[str]:
    """Kernel names of block devices in use as swap (/proc/swaps)."""
    out: set[str] = set()
    try:
        lines = Path("/proc/swaps").read_text().splitlines()[1:]
    except OSError:
        return out
    for line in lines:
        dev = block_device(line.split()[0]) if line.split() else None
        if dev is not None:
            out.add(dev.name)
    return out


def root_device() -> str | None:
    """Kernel name of the block device holding "/", or None (an overlay or tmpfs root)."""
    st = os.stat("/")
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    if major:
        name = kernel_name(major, minor)
        if name is not None:
            return name
    for major, minor, point, source in _mountinfo():     # e.g. btrfs subvolumes: anonymous st_dev
        if point == "/":
            dev = block_device(source) if source.startswith("/dev/") else None
            if dev is not None:
                return dev.name
    return None


def root_family() -> set[str]:
    """Every device that is, contains, is contained in, or lies under the root filesystem's device."""
    root = root_device()
    return family(root) if root is not None else set()


def md_driver_present() -> bool:
    """Whether the kernel has the md (software RAID) driver: /proc/mdstat exists exactly then."""
    return Path("/proc/mdstat").exists()
