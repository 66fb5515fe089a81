"""The loop-device filesystem of the storage study (cassperf.storage.loopfs), for real on this
machine: a real sparse file, a real loop device, real ext4, a real mount. Checked: the mount is
the loop device's ext4, and afterwards nothing of it is left (no mount, no loop device attached to
the backing file, no backing file), also when the block raises and when mkfs fails half-way.
Needs root, losetup, mkfs.ext4 (skips with the reason otherwise)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cassperf.errors import ConfigError, ToolError
from cassperf.storage import blockdev, loopfs
from cassperf.storage.loopfs import LoopUnavailable, loop_filesystem, storage_of

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mdadm"


def _need_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices, mount)")
    for tool in ("losetup", "mkfs.ext4", "mount", "umount"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (util-linux / e2fsprogs)")


def _attached_to(backing: Path) -> str:
    return subprocess.run(["losetup", "-j", str(backing)], capture_output=True, text=True).stdout.strip()


def _left_over(folder: Path) -> list[str]:
    backing, point = folder / "backing.img", folder / "mnt"
    found = []
    if backing.exists():
        found.append(f"backing file {backing}")
        if _attached_to(backing):
            found.append(_attached_to(backing))
    if blockdev.mount_source(str(point))[1]:
        found.append(f"mount at {point}")
    return found


def test_a_loop_filesystem_is_ext4_on_its_loop_device_and_is_removed_after(tmp_path: Path) -> None:
    _need_root()
    folder = tmp_path / "fs"
    with loop_filesystem(folder, size_mb=64) as fs:
        assert fs.device.startswith("/dev/loop") and fs.fstype == "ext4" and fs.size_mb == 64
        assert _attached_to(fs.backing).startswith(f"{fs.device}:")
        assert os.stat(fs.backing).st_size == 64 * 2**20
        assert os.stat(fs.backing).st_blocks * 512 < 64 * 2**20      # sparse
        (fs.mount_point / "probe").write_text("x")
        where = storage_of(fs.mount_point / "probe")
        assert (where.device, where.fstype, where.mount_point) == (fs.device, "ext4", str(fs.mount_point))
        assert where.labels() == {"storage_device": fs.device, "storage_fs": "ext4"}
        device = fs.device
    assert _left_over(folder) == []
    assert not (folder / "mnt").exists()
    listed = subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    assert str(folder / "backing.img") not in listed, f"{device} still attached"


def test_a_failure_inside_the_block_still_removes_everything(tmp_path: Path) -> None:
    _need_root()
    folder = tmp_path / "fs"
    with pytest.raises(RuntimeError, match="boom"):
        with loop_filesystem(folder, size_mb=64) as fs:
            assert blockdev.mount_source(str(fs.mount_point)) != (None, False)
            raise RuntimeError("boom")
    assert _left_over(folder) == []


@pytest.fixture
def failing_mkfs(monkeypatch):
    real = loopfs._sh

    def sh(*argv: str, timeout_s: float = 120) -> str:
        if argv[0].startswith("mkfs."):
            return real("false")
        return real(*argv, timeout_s=timeout_s)
    monkeypatch.setattr(loopfs, "_sh", sh)


def test_a_failure_half_way_undoes_what_was_done(tmp_path: Path, failing_mkfs) -> None:
    _need_root()
    folder = tmp_path / "fs"
    with pytest.raises(ToolError, match="false"):
        with loop_filesystem(folder, size_mb=64):
            pytest.fail("the block must not run when the filesystem could not be made")
    assert _left_over(folder) == []


def test_a_backing_file_left_from_before_is_refused_untouched(tmp_path: Path) -> None:
    _need_root()
    folder = tmp_path / "fs"
    folder.mkdir()
    (folder / "backing.img").write_bytes(b"keep")
    with pytest.raises(LoopUnavailable, match=r"backing.img exists already .* check `losetup -j "):
        with loop_filesystem(folder, size_mb=64):
            pytest.fail("must not run")
    assert (folder / "backing.img").read_bytes() == b"keep"


def test_a_size_too_small_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^size_mb=8: expected a whole number of MiB >= 64$"):
        with loop_filesystem(tmp_path, size_mb=8):
            pass


def test_storage_of_a_tmpfs_folder_has_no_block_device() -> None:
    where = storage_of("/dev/shm")
    assert (where.device, where.fstype, where.mount_point) == (None, "tmpfs", "/dev/shm")
    assert where.labels() == {"storage_device": "none", "storage_fs": "tmpfs"}


def test_storage_on_an_md_array_is_labelled_from_mdadm_detail(tmp_path: Path) -> None:
    # the published fixture: a RAID 0 of 2 NVMe devices with 512K chunks
    text = (FIXTURES / "mdadm-detail_raid0_2nvme_512K_fmadio.txt").read_text()
    where = storage_of(tmp_path, mdadm_detail=text)
    assert (where.md_level, where.md_chunk_kb, where.md_devices) == ("raid0", 512, 2)
    assert where.labels()["md_chunk_kb"] == "512" and where.labels()["md_level"] == "raid0"
    assert where.describe().endswith("mdadm raid0 of 2 devices, chunk 512 KiB")
