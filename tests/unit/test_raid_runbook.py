"""The mdadm RAID 0 runbook (cassperf.storage.raid_runbook), for real on this machine.

Real parts: loop devices over sparse files in the test's tmp dir (attached with `losetup -f --show`,
detached in teardown even when a test fails), a real ext4 filesystem mounted from one of them, a
real MBR partition table on one (partition scanned by the kernel: losetup -P), this machine's
root device, and mdadm itself (`make mdadm` installs it; tests that run it skip without it). The
kernel here has no md driver: the run that needs it is checked to fail with one message and to
leave every device byte for byte as it was (first MiB hashed before and after, no md superblock,
no /dev/mdN node created). Needs root and losetup (skips with the reason otherwise).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from cassperf.errors import ConfigError
from cassperf.storage import blockdev
from cassperf.storage.raid_runbook import (Command, RunbookRefused, detail_of, format_plan, plan_raid0,
                                           run_runbook)

MIB = 1 << 20
MD = "/dev/md127"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mdadm"


def _need_root_and_losetup() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices, mount)")
    for tool in ("losetup", "mkfs.ext4", "mount", "umount"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (util-linux / e2fsprogs)")


def _need_mdadm() -> None:
    if shutil.which("mdadm") is None:
        pytest.skip("mdadm is not installed: `make mdadm` installs it")


def _sh(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL)


@pytest.fixture
def loops(tmp_path: Path) -> Iterator[list[str]]:
    """Two 64 MiB loop devices over sparse files; detached afterwards, whatever happened."""
    _need_root_and_losetup()
    attached: list[str] = []
    try:
        for i in range(2):
            image = tmp_path / f"member{i}.img"
            with open(image, "wb") as f:
                f.truncate(64 * MIB)
            attached.append(_sh("losetup", "-f", "--show", "-P", str(image)).stdout.strip())
        yield attached
    finally:
        for dev in attached:
            subprocess.run(["losetup", "-d", dev], capture_output=True, check=False)


@pytest.fixture
def mounted(tmp_path: Path) -> Iterator[list[str]]:
    """Mount points this test mounted; unmounted afterwards, whatever happened."""
    points: list[str] = []
    try:
        yield points
    finally:
        for point in reversed(points):
            subprocess.run(["umount", point], capture_output=True, check=False)


def _first_mib(dev: str) -> str:
    with open(dev, "rb") as f:
        return hashlib.sha256(f.read(MIB)).hexdigest()


# --- the plan: printed, never run ------------------------------------------------------------------

def test_the_plan_is_the_study_runbook_in_order_and_prints_as_shell() -> None:
    plan = plan_raid0("/dev/md0", ["/dev/nvme1n1", "/dev/nvme2n1"], 64, mount_point="/data")
    assert [c.argv for c in plan] == [
        ("umount", "/data"),
        ("mdadm", "--stop", "/dev/md0"),
        ("mdadm", "--zero-superblock", "/dev/nvme1n1", "/dev/nvme2n1"),
        ("mdadm", "--create", "/dev/md0", "--level=raid0", "--chunk=64", "--raid-devices=2", "/dev/nvme1n1",
         "/dev/nvme2n1"),
        ("mdadm", "--detail", "--scan"),
        ("mdadm", "--detail", "/dev/md0"),
    ]
    lines = format_plan(plan).splitlines()
    assert lines[0].startswith("umount /data ") and lines[0].endswith("# unmount the array's filesystem at /data")
    assert lines[3].startswith("mdadm --create /dev/md0 --level=raid0 --chunk=64 --raid-devices=2 /dev/nvme1n1 "
                               "/dev/nvme2n1  # create the RAID 0 (2 devices, 64 KiB chunks)")
    assert [c.argv[0] for c in plan_raid0("/dev/md/data", ["/dev/sdb", "/dev/sdc", "/dev/sdd"], 256)] == ["mdadm"] * 5


@pytest.mark.parametrize("args,expected", [
    (("/dev/sda", ["/dev/sdb", "/dev/sdc"], 64), "md_device '/dev/sda': expected /dev/mdN or /dev/md/<name>"),
    (("/dev/md0", ["/dev/sdb"], 64), "devices ['/dev/sdb']: RAID 0 needs at least 2 devices"),
    (("/dev/md0", ["/dev/sdb", "/dev/sdb"], 64), "devices ['/dev/sdb', '/dev/sdb']: a device is named twice"),
    (("/dev/md0", ["sdb", "sdc"], 64), "devices ['sdb', 'sdc']: expected paths under /dev/"),
    (("/dev/md0", ["/dev/sdb", "/dev/sdc"], 96), "chunk_kb 96: expected a power of two >= 4 (KiB)"),
])
def test_a_bad_plan_request_is_one_config_error_saying_what_was_expected(args: tuple, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        plan_raid0(*args)
    assert str(info.value).startswith(expected)


# --- refusals: one line, nothing run -----------------------------------------------------------

def test_without_allow_destructive_or_an_explicit_list_nothing_runs(loops: list[str]) -> None:
    plan = plan_raid0(MD, loops, 64)
    before = [_first_mib(d) for d in loops]
    with pytest.raises(RunbookRefused) as info:
        run_runbook(plan, devices=loops)
    assert str(info.value).startswith("not run: allow_destructive=True is required")
    with pytest.raises(RunbookRefused) as info:
        run_runbook(plan, allow_destructive=True)
    assert str(info.value).startswith("not run: pass the devices the runbook may erase explicitly")
    assert [_first_mib(d) for d in loops] == before and not os.path.exists(MD)


def test_a_device_not_in_the_explicit_list_is_refused(loops: list[str]) -> None:
    with pytest.raises(RunbookRefused) as info:
        run_runbook(plan_raid0(MD, loops, 64), allow_destructive=True, devices=loops[:1])
    assert str(info.value) == f"not run: {loops[1]} is in the plan but not in devices={loops[:1]}"


def test_a_device_that_is_not_a_block_device_is_refused(loops: list[str]) -> None:
    for missing in ("/dev/cassperf-no-such-device", "/dev/null"):          # absent; a character device
        plan = plan_raid0(MD, [loops[0], missing], 64)
        with pytest.raises(RunbookRefused) as info:
            run_runbook(plan, allow_destructive=True, devices=[loops[0], missing])
        assert str(info.value) == f"not run: {missing} does not exist as a block device"


def test_a_mounted_device_is_refused_and_stays_mounted_and_unchanged(loops: list[str], mounted: list[str],
                                                                     tmp_path: Path) -> None:
    _sh("mkfs.ext4", "-q", "-F", loops[0])
    point = tmp_path / "mnt"
    point.mkdir()
    _sh("mount", loops[0], str(point))
    mounted.append(str(point))
    (point / "keep.txt").write_text("data the runbook must not touch\n")
    before = _first_mib(loops[1])      # the mounted one changes under ext4 itself (journal, lazy init)
    with pytest.raises(RunbookRefused) as info:
        run_runbook(plan_raid0(MD, loops, 64), allow_destructive=True, devices=loops)
    assert str(info.value) == (f"not run: {loops[0]} is mounted at {point}; unmount it first, or leave it out")
    assert (point / "keep.txt").read_text() == "data the runbook must not touch\n"
    assert blockdev.mounts_of({Path(loops[0]).name}) == [(Path(loops[0]).name, str(point))]
    assert _first_mib(loops[1]) == before and not os.path.exists(MD)


def _image_with_one_partition(path: Path, size: int) -> None:
    """A sparse image with a DOS partition table of one Linux partition (sectors 2048..end), written
    by hand: no partitioning tool is installed here. `losetup -P` makes the kernel scan it."""
    sectors = size // 512
    entry = struct.pack("<B3sB3sII", 0x00, b"\x00\x02\x00", 0x83, b"\xff\xff\xff", 2048, sectors - 2048)
    with open(path, "wb") as f:
        f.truncate(size)
        f.write(bytes(446) + entry + bytes(48) + b"\x55\xaa")


def test_a_disk_whose_partition_is_mounted_is_refused(loops: list[str], mounted: list[str], tmp_path: Path) -> None:
    image = tmp_path / "partitioned.img"
    _image_with_one_partition(image, 64 * MIB)
    disk = _sh("losetup", "-f", "--show", "-P", str(image)).stdout.strip()
    try:
        part = f"{disk}p1"
        if blockdev.block_device(part) is None:
            pytest.skip(f"the kernel did not expose {part} (no loop partition scan here)")
        _sh("mkfs.ext4", "-q", "-F", part)
        point = tmp_path / "part"
        point.mkdir()
        _sh("mount", part, str(point))
        mounted.append(str(point))
        devices = [disk, loops[1]]
        with pytest.raises(RunbookRefused) as info:
            run_runbook(plan_raid0(MD, devices, 64), allow_destructive=True, devices=devices)
        assert str(info.value) == (f"not run: {disk} (its partition {Path(part).name}) is mounted at {point}; "
                                   "unmount it first, or leave it out")
    finally:
        for point in reversed(mounted):
            subprocess.run(["umount", point], capture_output=True, check=False)
        mounted.clear()
        subprocess.run(["losetup", "-d", disk], capture_output=True, check=False)


def test_the_root_device_is_refused_even_when_listed(loops: list[str]) -> None:
    root = blockdev.root_device()
    if root is None:
        pytest.skip("/ is not on a block device here (overlay or tmpfs root)")
    root_path = f"/dev/{root}"
    if blockdev.block_device(root_path) is None:
        pytest.skip(f"{root_path} has no device node here")
    plan = plan_raid0(MD, [loops[0], root_path], 64)
    with pytest.raises(RunbookRefused) as info:
        run_runbook(plan, allow_destructive=True, devices=[loops[0], root_path])
    assert str(info.value).startswith(f"not run: {root_path} ({root}) holds the root filesystem")


def test_unmounting_the_root_filesystem_is_refused(loops: list[str]) -> None:
    with pytest.raises(RunbookRefused) as info:
        run_runbook(plan_raid0(MD, loops, 64, mount_point="/"), allow_destructive=True, devices=loops)
    assert str(info.value) == "not run: the plan would unmount / (the root filesystem)"


def test_a_command_that_is_not_umount_or_mdadm_is_refused(loops: list[str]) -> None:
    plan = [*plan_raid0(MD, loops, 64), Command(("wipefs", "-a", loops[0]), "not a runbook step", (loops[0],))]
    before = _first_mib(loops[0])
    with pytest.raises(RunbookRefused) as info:
        run_runbook(plan, allow_destructive=True, devices=loops)
    assert str(info.value) == f"not run: 'wipefs -a {loops[0]}' is not a runbook command (umount or mdadm only)"
    assert _first_mib(loops[0]) == before


# --- a real run on a kernel without the md driver ----------------------------------------------

def test_without_the_md_driver_the_run_fails_with_one_message_and_leaves_every_device_as_it_was(
        loops: list[str]) -> None:
    _need_mdadm()
    if blockdev.md_driver_present():
        pytest.skip("this kernel has the md driver (/proc/mdstat exists): the no-driver case cannot be shown here")
    if shutil.which("modprobe") is not None and subprocess.run(
            ["modprobe", "-n", "md_mod"], capture_output=True, check=False).returncode == 0:
        pytest.skip("modprobe could load md_mod here: the no-driver case cannot be shown without loading it")
    assert not os.path.exists(MD)
    before = [_first_mib(d) for d in loops]
    examined = [subprocess.run(["mdadm", "--examine", d], capture_output=True, text=True, check=False) for d in loops]
    assert all(e.returncode != 0 and "No md superblock detected" in e.stderr for e in examined)

    result = run_runbook(plan_raid0(MD, loops, 64), allow_destructive=True, devices=loops)

    assert not result.ok and result.detail is None
    assert result.message.startswith("not run: the kernel has no md (software RAID) driver: /proc/mdstat is absent")
    assert result.message.endswith("no mdadm command was run and no device was touched")
    frame = result.frame()
    plan_shell = [c.shell for c in plan_raid0(MD, loops, 64)]
    if shutil.which("modprobe") is None:
        assert "modprobe is not installed" in result.message
        assert list(frame["command"]) == plan_shell and list(frame["status"]) == ["not run"] * len(plan_shell)
    else:                                              # the one thing run: the attempt to load md_mod
        assert frame["command"].iloc[0].endswith("modprobe md_mod") and frame["status"].iloc[0] == "failed"
        assert list(frame["command"][1:]) == plan_shell and set(frame["status"][1:]) == {"not run"}
    assert frame["exit_code"].isna().sum() == len(plan_shell)
    assert [_first_mib(d) for d in loops] == before
    after = [subprocess.run(["mdadm", "--examine", d], capture_output=True, text=True, check=False) for d in loops]
    assert all(e.returncode != 0 and "No md superblock detected" in e.stderr for e in after)
    assert not os.path.exists(MD)                      # mdadm --create was not run: no stray md node


# --- mdadm --detail of an array, parsed -----------------------------------------------------------

def test_mdadm_detail_output_is_parsed_into_the_arrays_and_devices_tables() -> None:
    text = (FIXTURES / "mdadm-detail_raid0_2nvme_512K_fmadio.txt").read_text()    # real mdadm --detail output
    detail = detail_of(text, "mdadm --detail /dev/md1")
    arrays = detail.tables["arrays"]
    assert list(arrays["array"]) == ["/dev/md1"]
    assert (arrays["raid_level"].iloc[0], arrays["chunk_size_bytes"].iloc[0], arrays["raid_devices"].iloc[0]) == (
        "raid0", 524288, 2)
    assert list(detail.tables["devices"]["path"]) == ["/dev/nvme2n1", "/dev/nvme0n1"]


# --- the step runner: real mdadm commands that change nothing -----------------------------------

def test_steps_run_in_order_record_output_and_exit_code_and_stop_at_the_first_failure(loops: list[str]) -> None:
    """run_runbook reaches its step runner only past the checks and with the md driver present,
    which this kernel lacks; the runner itself is shown here with read-only mdadm commands."""
    from cassperf.storage.raid_runbook import _execute_steps

    _need_mdadm()
    assert not os.path.exists(MD)
    plan = [Command(("mdadm", "--stop", MD), "stop an array that is not there",
                    nothing_to_do=("No such file or directory", "No such device")),
            Command(("mdadm", "--detail", "--scan"), "list arrays"),
            Command(("mdadm", "--examine", loops[0]), "read a member's superblock (there is none)"),
            Command(("mdadm", "--detail", "--scan"), "never reached")]
    before = [_first_mib(d) for d in loops]
    result = _execute_steps(plan, [], timeout_s=60)
    frame = result.frame()
    assert not result.ok
    assert list(frame["status"]) == ["nothing to do", "ok", "failed", "not run"]
    assert list(frame["exit_code"][:3]) == [1, 0, 1] and pd.isna(frame["exit_code"].iloc[3])
    assert f"error opening {MD}: No such file or directory" in frame["stderr"].iloc[0]
    assert f"No md superblock detected on {loops[0]}" in frame["stderr"].iloc[2]
    assert result.message == (f"step 3 (mdadm --examine {loops[0]}) failed with exit 1: mdadm: No md superblock "
                              f"detected on {loops[0]}.; step 4 not run")
    assert [_first_mib(d) for d in loops] == before and not os.path.exists(MD)

