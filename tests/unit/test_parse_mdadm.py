"""mdadm --detail parser over three real outputs kept in tests/fixtures/mdadm (sources and the
figures each states are in the <file>.source.txt sidecars)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from tests.conftest import public_fixture_files
from tests.fuzzing import fuzz_parser, mutated

from cassperf.errors import ParseError
from cassperf.parsers import read_text
from cassperf.parsers.base import ParseResult
from cassperf.parsers.mdadm import (ARRAY_COLUMNS, DEVICE_COLUMNS, parse_mdadm_detail, size_to_bytes,
                                    sniff)

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "mdadm"
RAID0 = "mdadm-detail_raid0_2nvme_512K_fmadio.txt"
FAULTY = "mdadm-detail_raid1_faulty-writemostly-failfast_jc.txt"
REMOVED = "mdadm-detail_raid1_degraded-removed_jc.txt"

NA = None
# file -> (array, level, array size bytes, used dev size bytes, raid devices, total devices, state,
#          active, working, failed, spare, chunk bytes, devices (number, major, minor, raid device,
#          state, path))
EXPECTED = {
    RAID0: ("/dev/md1", "raid0", 937440256 * 1024, NA, 2, 2, "clean", 2, 2, 0, 0, 524288,
            [(0, 259, 0, 0, "active sync", "/dev/nvme2n1"), (1, 259, 1, 1, "active sync", "/dev/nvme0n1")]),
    FAULTY: ("/dev/md127", "raid1", 101376 * 1024, 101376 * 1024, 2, 3, "clean", 2, 2, 1, 0, NA,
             [(0, 254, 1, 0, "active sync", "/dev/vda1"),
              (2, 254, 2, 1, "active sync writemostly failfast", "/dev/vda2"),
              (3, 254, 4, NA, "faulty", "/dev/vda4")]),
    REMOVED: ("/dev/md127", "raid1", 101376 * 1024, 101376 * 1024, 2, 1, "clean, degraded", 1, 1, 0, 0, NA,
              [(0, 254, 1, 0, "active sync", "/dev/vda1"), (NA, 0, 0, 1, "removed", NA)]),
}


def text_of(name: str) -> str:
    return read_text(HERE / name)


def plain(v: object) -> object:
    return None if v is pd.NA else v


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_array_and_devices_equal_the_sidecar_figures(name: str) -> None:
    (array, level, size, used, raid_devs, total_devs, state, active, working, failed, spare, chunk,
     devices) = EXPECTED[name]
    result = parse_mdadm_detail(text_of(name), name)
    assert result.format == "mdadm-detail"
    assert (result.complete, result.warnings, result.skipped_lines) == (True, [], 0)
    arrays = result.tables["arrays"]
    assert list(arrays.columns) == list(ARRAY_COLUMNS)
    assert len(arrays) == 1
    row = arrays.iloc[0]
    assert (row.array, row.raid_level, row.array_size_bytes, plain(row.used_dev_size_bytes)) == \
        (array, level, size, used)
    assert (row.raid_devices, row.total_devices, row.state) == (raid_devs, total_devs, state)
    assert (row.active_devices, row.working_devices, row.failed_devices, row.spare_devices) == \
        (active, working, failed, spare)
    assert plain(row.chunk_size_bytes) == chunk
    table = result.tables["devices"]
    assert list(table.columns) == list(DEVICE_COLUMNS)
    got = [tuple(plain(v) for v in r) for r in
           table[["number", "major", "minor", "raid_device", "state", "path"]].itertuples(index=False)]
    assert got == devices


def test_raid0_chunk_size_and_the_printed_binary_and_decimal_sizes_agree() -> None:
    row = parse_mdadm_detail(text_of(RAID0), RAID0).tables["arrays"].iloc[0]
    assert row.chunk_size_bytes == 512 * 1024
    assert round(row.array_size_bytes / 1024 ** 3, 2) == 894.01         # "(894.01 GiB 959.94 GB)"
    assert round(row.array_size_bytes / 1000 ** 3, 2) == 959.94
    assert (row.version, row.uuid, row.events) == ("1.2", "06234ac8:694ae295:3659e4fc:b59a7d55", "0")
    assert row.creation_time == "Sun Jun  6 17:43:12 2021"


def test_every_key_value_line_is_kept_as_printed() -> None:
    attributes = parse_mdadm_detail(text_of(FAULTY), FAULTY).tables["attributes"]
    assert attributes["key"].tolist()[:4] == ["Version", "Creation Time", "Raid Level", "Array Size"]
    as_dict = dict(zip(attributes["key"], attributes["value"], strict=True))
    assert as_dict["Persistence"] == "Superblock is persistent"
    assert as_dict["Consistency Policy"] == "resync"
    assert as_dict["State"] == "clean"                                     # trailing space stripped
    assert len(attributes) == 18                                           # every "Key : value" line


@pytest.mark.parametrize(("text", "expected"), [("512K", 524288), ("64K", 65536), ("4K", 4096),
                                                ("1M", 1048576), ("512", 512), ("big", None)])
def test_chunk_sizes(text: str, expected: int | None) -> None:
    assert size_to_bytes(text) == expected


# ---------------------------------------------------------------- bad input

def test_empty_and_binary_input_are_parse_errors() -> None:
    with pytest.raises(ParseError, match="input is empty"):
        parse_mdadm_detail("\n\n", "empty.txt")
    with pytest.raises(ParseError, match="binary"):
        parse_mdadm_detail("/dev/md0:\n\x00", "bin.txt")


def test_another_tools_output_is_a_parse_error() -> None:
    with pytest.raises(ParseError) as err:
        parse_mdadm_detail("PING 10.0.0.3 (10.0.0.3) 56(84) bytes of data.\n", "ping.out")
    assert (err.value.line_no, err.value.line) == (1, "PING 10.0.0.3 (10.0.0.3) 56(84) bytes of data.")
    assert "Raid Level" in err.value.expected


def test_output_cut_before_the_device_table_is_partial() -> None:
    text = text_of(RAID0)
    result = parse_mdadm_detail(text[:text.index("    Number")], "cut.txt")
    assert result.complete is False
    assert len(result.warnings) == 1
    assert result.warnings[0].line_no == 1
    assert "device table" in result.warnings[0].expected
    assert result.tables["arrays"].iloc[0].chunk_size_bytes == 524288       # what was there is kept


def test_a_garbage_line_in_the_middle_is_skipped_and_counted() -> None:
    lines = text_of(FAULTY).splitlines(keepends=True)
    lines.insert(12, "%%% line noise %%%\n")
    result = parse_mdadm_detail("".join(lines), "garbage.txt")
    assert result.skipped_lines == 1
    assert result.warnings == []
    assert result.tables["arrays"].iloc[0].failed_devices == 1


def test_prompt_and_command_lines_before_the_output_are_skipped_and_counted() -> None:
    text = "fmadio@fmadio20v3-287:~$ sudo mdadm --detail /dev/md1\n" + text_of(RAID0) + "fmadio@fmadio20v3-287:~$\n"
    result = parse_mdadm_detail(text, "session.txt")
    assert result.skipped_lines == 2
    assert result.tables["arrays"].iloc[0].array_size_bytes == 959938822144


def test_a_missing_device_row_contradicts_the_counts_and_is_a_warning() -> None:
    text = text_of(RAID0).replace("       1     259        1        1      active sync   /dev/nvme0n1\n", "")
    result = parse_mdadm_detail(text, "short.txt")
    assert sorted(w.expected.split(" for")[0] for w in result.warnings) == \
        ["2 device rows with a RaidDevice number", "2 device rows with a path"]


def test_sizes_that_disagree_with_their_gib_figure_are_a_warning() -> None:
    text = text_of(RAID0).replace("937440256 (894.01 GiB", "937440256 (994.01 GiB")
    result = parse_mdadm_detail(text, "edited.txt")
    assert len(result.warnings) == 1
    assert "894.01 GiB" in result.warnings[0].expected and "994.01 GiB" in result.warnings[0].expected


def test_two_arrays_in_one_output() -> None:
    result = parse_mdadm_detail(text_of(RAID0) + "\n" + text_of(REMOVED), "two.txt")
    assert result.tables["arrays"]["array"].tolist() == ["/dev/md1", "/dev/md127"]
    assert result.tables["devices"].groupby("array").size().to_dict() == {"/dev/md1": 2, "/dev/md127": 2}
    assert result.warnings == []


def test_numbers_beyond_int64_are_warnings_or_skipped_never_wrapped() -> None:
    big = "9" * 23
    text = (f"/dev/md0:\n     Raid Level : raid0\n   Raid Devices : {big}\n     Chunk Size : 999999999999G\n"
            f"     Array Size : {big} (1.00 GiB 1.07 GB)\n"
            "    Number   Major   Minor   RaidDevice State\n"
            f"       {big}     8     16        0      active sync   /dev/sdb\n")
    result = parse_mdadm_detail(text, "big.txt")
    assert result.skipped_lines == 1                          # the device row
    assert len(result.warnings) == 3                          # raid devices, chunk, array size
    row = result.tables["arrays"].iloc[0]
    assert pd.isna(row.raid_devices) and pd.isna(row.chunk_size_bytes) and pd.isna(row.array_size_bytes)


# ---------------------------------------------------------------- detection

def test_sniff_claims_the_mdadm_samples_and_no_public_fixture() -> None:
    for name in EXPECTED:
        assert sniff(text_of(name))
    for path in public_fixture_files():
        assert not sniff(read_text(path)[:65536]), path


# ---------------------------------------------------------------- fuzz



def test_fuzz_mutated_samples_give_a_result_or_a_parse_error() -> None:
    texts = [text_of(name) for name in sorted(EXPECTED)]

    def check(result: ParseResult) -> None:
        assert list(result.tables["devices"].columns) == list(DEVICE_COLUMNS)

    tried = fuzz_parser(parse_mdadm_detail, mutated(texts), "fuzz.txt", check)
    print(f"mdadm fuzz: {tried} inputs tried")
    assert tried
