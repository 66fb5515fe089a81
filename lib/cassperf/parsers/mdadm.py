"""mdadm --detail output -> one row per array and one per member device (pure functions).

tables["arrays"]      one row per "/dev/mdX:" block:
    array (e.g. "/dev/md1"), version, raid_level, array_size_bytes, used_dev_size_bytes,
    raid_devices, total_devices, state ("clean", "clean, degraded", ...), active_devices,
    working_devices, failed_devices, spare_devices, layout, chunk_size_bytes, consistency_policy,
    name, uuid, events, creation_time (text as printed), update_time (text as printed)
    mdadm prints sizes in KiB ("937440256 (894.01 GiB 959.94 GB)"): *_bytes = KiB * 1024.
    Chunk Size "512K" -> 524288. Levels without a chunk (raid1) have no Chunk Size line:
    chunk_size_bytes is missing (<NA>), never 0.
tables["devices"]     one row per line of the device table:
    array, number, major, minor, raid_device, state, path. "-" (a removed slot's number, a
    faulty or spare device's RaidDevice) is missing (<NA>); a removed slot has no path.
tables["attributes"]  every "Key : value" line as printed: array, key, value (nothing is lost,
    including keys this parser does not type, e.g. "Intent Bitmap", "Resync Status").

Line rule: blank lines are ignored; lines before the first "/dev/...:" line (shell prompts,
the command itself) and lines that are neither "Key : value" nor a device-table row are
skipped and counted.
Cross-checks (warnings): the parenthesised GiB/GB figures agree with the KiB count; rows with a
RaidDevice number == Raid Devices; rows with a path == Total Devices. An array block without its
device table is truncated: complete=False with a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from cassperf.errors import ParseError
from cassperf.parsers.base import Format, ParseResult, check_text

# /dev/md1:
_ARRAY = re.compile(r"^(?P<dev>/dev/\S+):\s*$")
#      Raid Level : raid0            Consistency Policy : resync
_KEY_VALUE = re.compile(r"^\s*(?P<key>[A-Za-z][A-Za-z ]*?)\s+:\s?(?P<value>.*?)\s*$")
#     Number   Major   Minor   RaidDevice State
_TABLE_HEADER = re.compile(r"^\s*Number\s+Major\s+Minor\s+RaidDevice(?:\s+State)?\s*$")
#        2     254        2        1      active sync writemostly failfast   /dev/vda2
#        -       0        0        1      removed
_DEVICE = re.compile(r"^\s*(?P<number>\d{1,18}|-)\s+(?P<major>\d{1,18})\s+(?P<minor>\d{1,18})\s+(?P<raid>\d{1,18}|-)"
                     r"(?:\s+(?P<rest>.*?))?\s*$")
# 937440256 (894.01 GiB 959.94 GB)
_SIZE = re.compile(r"^(?P<kib>\d{1,15})(?!\d)"
                   r"(?:\s+\((?P<bin>[\d.]+) (?P<binu>[KMGTPE]iB) (?P<dec>[\d.]+) (?P<decu>[KMGTPE]B)\))?")
# 512K
_CHUNK = re.compile(r"^(?P<n>\d{1,12})\s*(?P<u>[KMG]?)$")

_SNIFF_LEVEL = re.compile(r"^\s*Raid Level : \S+", re.M)
_SNIFF_DETAIL = re.compile(r"^\s*(?:Array Size|Raid Devices|Total Devices) : |^\s*Number\s+Major\s+Minor\s+RaidDevice",
                           re.M)
_SNIFF_EXAMINE = re.compile(r"^\s*Magic : |^\s*Device Role : ", re.M)

_POWERS = {"K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}

ARRAY_COLUMNS: dict[str, str] = {
    "array": "string", "version": "string", "raid_level": "string", "array_size_bytes": "Int64",
    "used_dev_size_bytes": "Int64", "raid_devices": "Int64", "total_devices": "Int64", "state": "string",
    "active_devices": "Int64", "working_devices": "Int64", "failed_devices": "Int64", "spare_devices": "Int64",
    "layout": "string", "chunk_size_bytes": "Int64", "consistency_policy": "string", "name": "string",
    "uuid": "string", "events": "string", "creation_time": "string", "update_time": "string",
}
DEVICE_COLUMNS: dict[str, str] = {
    "array": "string", "number": "Int64", "major": "Int64", "minor": "Int64", "raid_device": "Int64",
    "state": "string", "path": "string",
}
ATTRIBUTE_COLUMNS: dict[str, str] = {"array": "string", "key": "string", "value": "string"}

#: "Key" as printed -> arrays column, for the plain-text keys
_TEXT_KEYS = {"Version": "version", "Raid Level": "raid_level", "State": "state", "Layout": "layout",
              "Consistency Policy": "consistency_policy", "Name": "name", "UUID": "uuid", "Events": "events",
              "Creation Time": "creation_time", "Update Time": "update_time"}
_INT_KEYS = {"Raid Devices": "raid_devices", "Total Devices": "total_devices", "Active Devices": "active_devices",
             "Working Devices": "working_devices", "Failed Devices": "failed_devices",
             "Spare Devices": "spare_devices"}
_SIZE_KEYS = {"Array Size": "array_size_bytes", "Used Dev Size": "used_dev_size_bytes"}


@dataclass(frozen=True)
class Device:
    """One row of the device table; None where mdadm printed '-' or no path."""

    number: int | None
    major: int
    minor: int
    raid_device: int | None
    state: str
    path: str | None


@dataclass
class _Array:
    device: str
    line_no: int
    values: dict[str, object] = field(default_factory=dict)
    attributes: list[tuple[str, str]] = field(default_factory=list)
    devices: list[Device] = field(default_factory=list)
    has_table: bool = False


def sniff(head: str) -> bool:
    """mdadm --detail: 'Raid Level :' plus array-level keys or the device table (not --examine)."""
    return bool(_SNIFF_LEVEL.search(head) and _SNIFF_DETAIL.search(head) and not _SNIFF_EXAMINE.search(head))


def size_to_bytes(text: str) -> int | None:
    """A chunk size as mdadm prints it ('512K', '64K', '1M') -> bytes; None if unreadable."""
    m = _CHUNK.match(text.strip())
    if not m:
        return None
    size = int(m.group("n")) * 1024 ** _POWERS.get(m.group("u"), 0)
    return size if size < 2 ** 63 else None


def _size(value: str, key: str, line_no: int, line: str, result: ParseResult) -> int | None:
    m = _SIZE.match(value)
    if not m:
        result.warn(line_no, line, f"'{key} : <KiB> (<x> GiB <y> GB)'; got {value!r}")
        return None
    size = int(m.group("kib")) * 1024
    if m.group("bin"):
        for figure, unit, base in ((m.group("bin"), m.group("binu"), 1024), (m.group("dec"), m.group("decu"), 1000)):
            scale = base ** _POWERS[unit[0]]
            printed = float(figure)
            if abs(size / scale - printed) > 0.0051 + printed * 1e-9:
                result.warn(line_no, line, f"{key} {m.group('kib')} KiB to read {size / scale:.2f} {unit}; "
                                           f"mdadm printed {figure} {unit}")
    return size


def parse_mdadm_detail(text: str, source: str = "<text>") -> ParseResult:
    """Parse `mdadm --detail` output for one or more arrays (see module doc)."""
    check_text(text, source, "mdadm --detail output")
    result = ParseResult(format="mdadm-detail", source=source)
    lines = text.splitlines()
    arrays: list[_Array] = []
    current: _Array | None = None
    in_table = False
    for idx, raw in enumerate(lines):
        line_no = idx + 1
        line = raw.rstrip()
        if not line.strip():
            continue
        m = _ARRAY.match(line)
        if m:
            current = _Array(device=m.group("dev"), line_no=line_no)
            arrays.append(current)
            in_table = False
            continue
        if current is None:
            result.skipped_lines += 1
            continue
        if _TABLE_HEADER.match(line):
            current.has_table = in_table = True
            continue
        if in_table:
            d = _DEVICE.match(line)
            if d:
                current.devices.append(_device(d))
                continue
        kv = _KEY_VALUE.match(line)
        if kv and not in_table:
            _key_value(current, kv.group("key"), kv.group("value"), line_no, line, result)
            continue
        result.skipped_lines += 1

    if not arrays or all("raid_level" not in a.values for a in arrays):
        first = next((i for i, ln in enumerate(lines) if ln.strip()), 0)
        raise ParseError(source, first + 1, lines[first] if lines else None,
                         "mdadm --detail output: a '/dev/mdX:' line followed by 'Raid Level : ...'")
    for a in arrays:
        _check(a, lines, result)
    result.tables["arrays"] = _frame([{"array": a.device, **a.values} for a in arrays], ARRAY_COLUMNS)
    result.tables["devices"] = _frame(
        [{"array": a.device, "number": d.number, "major": d.major, "minor": d.minor, "raid_device": d.raid_device,
          "state": d.state, "path": d.path} for a in arrays for d in a.devices], DEVICE_COLUMNS)
    result.tables["attributes"] = _frame(
        [{"array": a.device, "key": k, "value": v} for a in arrays for k, v in a.attributes], ATTRIBUTE_COLUMNS)
    return result


def _device(m: re.Match[str]) -> Device:
    rest = (m.group("rest") or "").split()
    path = rest.pop() if rest and rest[-1].startswith("/") else None
    return Device(number=None if m.group("number") == "-" else int(m.group("number")),
                  major=int(m.group("major")), minor=int(m.group("minor")),
                  raid_device=None if m.group("raid") == "-" else int(m.group("raid")),
                  state=" ".join(rest), path=path)


def _key_value(array: _Array, key: str, value: str, line_no: int, line: str, result: ParseResult) -> None:
    array.attributes.append((key, value))
    if key in _TEXT_KEYS:
        array.values[_TEXT_KEYS[key]] = value
    elif key in _INT_KEYS:
        if value.isdigit() and len(value) <= 18:
            array.values[_INT_KEYS[key]] = int(value)
        else:
            result.warn(line_no, line, f"a whole number for {key!r}; got {value!r}")
    elif key in _SIZE_KEYS:
        array.values[_SIZE_KEYS[key]] = _size(value, key, line_no, line, result)
    elif key == "Chunk Size":
        chunk = size_to_bytes(value)
        if chunk is None:
            result.warn(line_no, line, f"a chunk size like '512K'; got {value!r}")
        array.values["chunk_size_bytes"] = chunk


def _check(a: _Array, lines: list[str], result: ParseResult) -> None:
    line = lines[a.line_no - 1]
    if not a.has_table:
        result.complete = False
        result.warn(a.line_no, line, f"the device table ('Number Major Minor RaidDevice State') of {a.device}; "
                                     "the output stops before it")
        return
    in_slots = sum(1 for d in a.devices if d.raid_device is not None)
    with_path = sum(1 for d in a.devices if d.path is not None)
    for key, seen, what in (("raid_devices", in_slots, "device rows with a RaidDevice number"),
                            ("total_devices", with_path, "device rows with a path")):
        printed = a.values.get(key)
        if isinstance(printed, int) and printed != seen:
            result.warn(a.line_no, line, f"{printed} {what} for {a.device} ({key.replace('_', ' ')}); "
                                         f"the table shows {seen}")


def _frame(rows: list[dict[str, object]], columns: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(columns)).astype(columns)


FORMAT = Format(
    name="mdadm-detail",
    description="mdadm --detail: RAID level, sizes, chunk size, state and member devices",
    sniff=sniff,
    parse=parse_mdadm_detail,
)
