"""A filesystem on a loop device, made for one experiment and removed after it, and what
storage a folder lives on (for labelling a run's data directory from what was measured).

    with loop_filesystem(Path("data/loopfs"), size_mb=1024) as fs:
        ...  # fs.mount_point is an ext4 filesystem on fs.device (/dev/loopN), over fs.backing

:func:`loop_filesystem` needs root (losetup, mkfs, mount). It creates a sparse backing file,
attaches it with ``losetup -f --show``, makes the filesystem and mounts it. On leaving the block,
and on any failure half-way, it undoes exactly what it did, newest first: unmount its own mount,
detach its own loop device, delete its own backing file. Nothing it did not create is touched.
Before it makes anything it writes an owner record (cassperf.cluster.owners, in the data folder,
not on the mount), so what a killed process left is found: the next ``loop_filesystem`` on the
same folder, or any run that reaps (cassperf.cluster.reaper), releases it with :func:`release`
and says so; a folder whose owner still runs is refused.
The loop device is buffered (no direct I/O), so the backing file's pages are cached by the host
too; dropping the page cache drops both.

:func:`storage_of` says which device and filesystem hold a path (from /proc/self/mountinfo and
the path's st_dev), and for an md array parses ``mdadm --detail`` (level, chunk size, members).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from cassperf.cluster import owners
from cassperf.constraints import Whole, check
from cassperf.errors import ConfigError, ToolError
from cassperf.storage import blockdev

SYS_BLOCK = Path("/sys/block")


class LoopUnavailable(ConfigError):
    """A loop filesystem cannot be made here: one line saying why and what would fix it."""


@dataclass(frozen=True)
class LoopFilesystem:
    """A mounted loop filesystem: the loop device (/dev/loopN), its backing file, the mount
    point, the filesystem type and the size in MiB."""

    device: str
    backing: Path
    mount_point: Path
    fstype: str
    size_mb: int


def _sh(*argv: str, timeout_s: float = 120) -> str:
    proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s)
    if proc.returncode != 0:
        raise ToolError(list(argv), proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout


def check_loop_support(fstype: str = "ext4") -> None:
    """Raise LoopUnavailable (one line) unless root, losetup, mkfs.<fstype>, mount and a loop
    driver are present."""
    if os.geteuid() != 0:
        raise LoopUnavailable("a loop-device filesystem needs root (losetup, mkfs, mount); run as root or leave "
                              "the loop configurations out (loop_chunk_kbs=[])")
    for tool in ("losetup", f"mkfs.{fstype}", "mount", "umount"):
        if shutil.which(tool) is None:
            raise LoopUnavailable(f"{tool} is not installed (Debian: util-linux / e2fsprogs); the loop "
                                  f"configurations need it, or leave them out (loop_chunk_kbs=[])")
    if not Path("/dev/loop-control").exists():
        raise LoopUnavailable("the kernel has no loop driver (/dev/loop-control is absent): modprobe loop, or leave "
                              "the loop configurations out (loop_chunk_kbs=[])")


def owner_key(folder: Path) -> str:
    """The owner record key of the loop filesystem made in ``folder``: <name>-<6 hex digits of its path>."""
    folder = Path(folder).resolve()
    return f"{folder.name}-{hashlib.sha1(str(folder).encode()).hexdigest()[:6]}"


def attached_devices(backing: Path) -> list[str]:
    """The loop devices (/dev/loopN) whose backing file is ``backing`` (exactly that path), from
    /sys/block/loopN/loop/backing_file."""
    out = []
    for entry in sorted(SYS_BLOCK.glob("loop*/loop/backing_file")):
        with contextlib.suppress(OSError):
            if entry.read_text().strip().removesuffix(" (deleted)") == str(backing):
                out.append(f"/dev/{entry.parent.parent.name}")
    return out


def release(backing: Path, mount_point: Path) -> list[str]:
    """Undo what a loop filesystem left (its owner died before its own clean-up): unmount
    ``mount_point`` where one of the loop devices of ``backing`` is mounted there, detach those
    devices, delete ``backing``. Returns what was done ([] when nothing was left); ToolError
    when a step fails (e.g. "target is busy": something still uses the mount)."""
    done = []
    devices = attached_devices(backing)
    source, is_mount = blockdev.mount_source(str(mount_point))
    if is_mount and f"/dev/{source}" in devices:
        _sh("umount", str(mount_point))
        done.append(f"unmounted {mount_point}")
    for device in devices:
        _sh("losetup", "-d", device)
        done.append(f"detached {device}")
    if backing.exists():
        backing.unlink()
        done.append(f"deleted {backing}")
    with contextlib.suppress(OSError):
        mount_point.rmdir()
    return done


def describe(data: dict) -> str:
    """`loop filesystem /dev/loop3 at <mount point>` from an owner record's data."""
    device = data.get("device") or ""
    return f"loop filesystem {device + ' ' if device else ''}at {data['mount_point']}"


def _release_earlier(folder: Path, say: Callable[[str], None]) -> None:
    """What an earlier loop filesystem in ``folder`` left: released (and said) when its owner is
    dead; LoopUnavailable when its owner still runs."""
    record = owners.read("loopfs", owner_key(folder))
    if record is None:
        return
    if record.owner.alive():
        raise LoopUnavailable(f"{folder} holds the loop filesystem of {record.owner.describe()}, which still runs; "
                              f"let it finish, or give another folder")
    done = release(Path(record.data["backing"]), Path(record.data["mount_point"]))
    owners.remove("loopfs", record.key)
    if done:
        say(owners.found(describe(record.data), record.owner, ", ".join(done)))


@contextlib.contextmanager
def loop_filesystem(folder: Path, size_mb: int = 1024, fstype: str = "ext4",
                    say: Callable[[str], None] = owners.say) -> Iterator[LoopFilesystem]:
    """A fresh ``fstype`` filesystem of ``size_mb`` MiB on a loop device, mounted at
    ``folder/mnt`` (backing file ``folder/backing.img``, sparse); removed on exit (module doc).
    What a dead owner left in ``folder`` is released first (``say`` gets one line); a folder a
    live owner uses, or that holds a backing file or mount of no record, is refused."""
    check("size_mb", size_mb, Whole(64, unit="MiB"))
    check_loop_support(fstype)
    folder = Path(folder).resolve()
    backing, mount_point = folder / "backing.img", folder / "mnt"
    _release_earlier(folder, say)
    if backing.exists():
        raise LoopUnavailable(f"{backing} exists already (a loop filesystem of an earlier run that was not "
                              f"removed, or in use now): check `losetup -j {backing}` and `findmnt {mount_point}`, "
                              f"detach and delete it, then run again")
    if blockdev.mount_source(str(mount_point))[1]:
        raise LoopUnavailable(f"{mount_point} is a mount point already; unmount it first")
    undo: list[tuple[str, list[str] | Path]] = []
    key = owner_key(folder)
    record = {"folder": str(folder), "backing": str(backing), "mount_point": str(mount_point), "device": None,
              "fstype": fstype, "size_mb": size_mb}
    errors: list[str] = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        owners.claim("loopfs", key, record)
        with open(backing, "wb") as f:
            f.truncate(size_mb * 2**20)
        undo.append(("file", backing))
        device = _sh("losetup", "-f", "--show", str(backing)).strip()
        undo.append(("cmd", ["losetup", "-d", device]))
        owners.claim("loopfs", key, {**record, "device": device})
        _sh(f"mkfs.{fstype}", "-q", *(["-F"] if fstype.startswith("ext") else []), device)
        mount_point.mkdir(exist_ok=True)
        _sh("mount", device, str(mount_point))
        undo.append(("cmd", ["umount", str(mount_point)]))
        yield LoopFilesystem(device, backing, mount_point, fstype, size_mb)
    finally:
        for kind, what in reversed(undo):
            try:
                if kind == "file":
                    Path(what).unlink(missing_ok=True)   # type: ignore[arg-type]
                else:
                    _sh(*what)                            # type: ignore[misc]
            except (ToolError, OSError, subprocess.TimeoutExpired) as exc:
                errors.append(f"{what}: {str(exc).strip().splitlines()[0] if str(exc).strip() else exc}")
        with contextlib.suppress(OSError):
            mount_point.rmdir()
        if errors:      # the record stays: the next run releases what is left
            raise ToolError(["loop_filesystem cleanup"], 1, "", "; ".join(errors),
                            hint="clean up by hand what is named above")
        owners.remove("loopfs", key)


@dataclass(frozen=True)
class Storage:
    """What holds a path: the block device (kernel name and /dev path; None for tmpfs/overlay),
    the filesystem type, the mount point, and for an md array its level, chunk (KiB) and member
    count as ``mdadm --detail`` reports them."""

    path: str
    device: str | None
    fstype: str
    mount_point: str
    md_level: str | None = None
    md_chunk_kb: int | None = None
    md_devices: int | None = None

    def labels(self) -> dict[str, str]:
        """Run labels: storage_device, storage_fs and, for an array, md_level/md_chunk_kb/md_devices."""
        out = {"storage_device": self.device or "none", "storage_fs": self.fstype}
        if self.md_level is not None:
            out.update(md_level=self.md_level, md_chunk_kb=str(self.md_chunk_kb or ""),
                       md_devices=str(self.md_devices or ""))
        return out

    def describe(self) -> str:
        what = f"{self.fstype} on {self.device or 'no block device'} (mounted at {self.mount_point})"
        if self.md_level is not None:
            what += f", mdadm {self.md_level} of {self.md_devices} devices, chunk {self.md_chunk_kb} KiB"
        return what


def _mount_of(path: str) -> tuple[str, str, str]:
    """(mount point, fstype, source) of the mount holding `path` (the longest matching mount point)."""
    real = os.path.realpath(path)
    best = ("/", "", "")
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        sep = fields.index("-")
        point = fields[4].replace("\\040", " ")
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best[0]):
            best = (point, fields[sep + 1], fields[sep + 2] if len(fields) > sep + 2 else "")
    return best


def storage_of(path: str | Path, mdadm_detail: str | None = None) -> Storage:
    """The storage holding ``path`` (module doc). ``mdadm_detail``: the text of ``mdadm --detail``
    to parse instead of running it (tests, or an array on another host)."""
    st = os.stat(path)
    point, fstype, source = _mount_of(str(path))
    name = blockdev.kernel_name(os.major(st.st_dev), os.minor(st.st_dev)) if os.major(st.st_dev) else None
    device = f"/dev/{name}" if name else (source if source.startswith("/dev/") else None)
    storage = Storage(str(path), device, fstype, point)
    if device is None or (not (name or "").startswith("md") and mdadm_detail is None):
        return storage
    text = mdadm_detail
    if text is None:
        if shutil.which("mdadm") is None:
            return storage
        try:
            text = _sh("mdadm", "--detail", device, timeout_s=30)
        except (ToolError, subprocess.TimeoutExpired):
            return storage
    from cassperf.storage.raid_runbook import detail_of

    arrays = detail_of(text).tables["arrays"]
    if arrays.empty:
        return storage
    row = arrays.iloc[0]
    chunk = row.get("chunk_size_bytes")
    devices = row.get("raid_devices")
    import pandas as pd

    return Storage(str(path), device, fstype, point, str(row.get("raid_level")),
                   None if pd.isna(chunk) else int(chunk) // 1024, None if pd.isna(devices) else int(devices))
