"""dstat output -> long-format samples with units named (pure functions).

Two formats:

"dstat-csv"      dstat 0.7.x `--output file.csv` and pcp-dstat 5.x CSV. Metadata rows
                 ("Dstat 0.7.2 CSV output", Author/URL, Host/User, Cmdline/Date), then the
                 two-row header: groups ("total cpu usage","dsk/total",...; blank = same group
                 as the cell before) and columns ("usr","read",...; dstat qualifies repeated
                 names as "cpu0 usage:usr"), then one row per sample. dstat APPENDS to an
                 existing --output file: every new metadata block or header pair after data
                 starts a new run (run 0, 1, ...).
"dstat-console"  dstat's screen output (e.g. `dstat -am 2 7`), best effort: groups are located
                 by the column spans of the dashed title line; cells carry dstat's display
                 units (k, M, G with base 1024 for byte columns, 1000 otherwise; "B" = bytes).
                 Console values are rounded by dstat for display (3-4 significant digits);
                 prefer the CSV for analysis.

tables["samples"]  run, sample (0-based within the run), time (UTC: from --epoch, or from the
                   local time column when `tz` is given; else NaT), time_local (the host's
                   wall clock from -t, naive; the year comes from the "Date:" row), time_s
                   (seconds since the run's first sample), since_boot (True on a run's first
                   sample: dstat's first row averages rates since boot), group, metric, value.
                   metric = dstat column name + "_" + unit, e.g. net/total recv -> "recv_bytes_s",
                   total cpu usage usr -> "usr_pct"; load averages have no unit ("1m").
tables["columns"]  the header kept as printed: run, position, group, column, metric, unit.
tables["runs"]     run, tool, tool_version, host, user, cmdline, date, first_line, samples.

Units (from dstat 0.7 source, raw values as written to CSV): cpu groups percent; dsk/* and
net/* and paging bytes/s; io/* requests/s; system int/csw, interrupts, procs new, virtual memory
per second; memory usage, swap bytes; everything that counts (procs run/blk, sockets,
filesystem, ipc, locks) a count. A group not in that list keeps its raw column name as metric
and gets a warning (the unit is unknown).

Line rule (CSV): blank lines are ignored; metadata rows are read; a line starting with '"' is a
header row (dstat quotes header cells and never data cells); a data row whose field count
differs from the header is skipped with a warning (complete=False if it is the last line: a
truncated file); a cell that is not a number becomes NaN with a warning; rows before any header
are skipped and counted.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from datetime import datetime

import pandas as pd

from cassperf.errors import ConfigError, ParseError
from cassperf.parsers.base import Format, ParseResult, check_text

# "Dstat 0.7.2 CSV output"      "pcp-dstat 5.0.3 CSV Output"
_TITLE = re.compile(r"^\s*\"?(?P<tool>Dstat|pcp-dstat|dool)\s+(?P<version>[\w.+-]+)\s+CSV\s+output", re.I)
# 31 Jan 2019 14:44:21 EST
_DATE = re.compile(r"^(?P<d>\d{1,2}) (?P<mon>[A-Z][a-z]{2}) (?P<y>\d{4}) (?P<hms>\d{1,2}:\d{2}:\d{2})")
# 31-01 14:44:21      (dstat's default DSTAT_TIMEFMT "%d-%m %H:%M:%S"; --debug adds ".123")
_TIME_DM = re.compile(r"^(?P<d>\d{2})-(?P<m>\d{2}) (?P<hms>\d{2}:\d{2}:\d{2})(?:\.(?P<ms>\d{1,3}))?$")
# "system","total cpu usage",,,,,,"dsk/total",,"net/total",,"swap",,"tcp sockets",,,,
_SNIFF_CSV = re.compile(r'^"(?:Dstat|pcp-dstat|dool) [\w.+-]+ CSV output"|^"Cmdline:","(?:pcp-)?dstat ', re.I | re.M)
# --total-cpu-usage-- -dsk/total- -net/total- ---paging-- ---system-- ------memory-usage-----
_TITLE_TOKEN = re.compile(r"^[-\w/#:.]*-[-\w/#:.]*$")
_CONSOLE_KNOWN = re.compile(r"total-cpu-usage|-dsk/|-net/|--paging-|memory-usage|-procs-|--system--|-load-avg-")
# \x1b[0;34m  (colour codes when dstat wrote to a terminal capture)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|\x1b[78]")
# 3412k   66B   587M   0
_CELL = re.compile(r"^(?P<num>\d+(?:\.\d+)?)(?P<unit>[BkMGTPEZY]?)$")

_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                       "Nov", "Dec"), start=1)}

#: (group regex, unit suffix, columns it applies to or None for all). First match wins.
_UNIT_RULES: list[tuple[re.Pattern[str], str, frozenset[str] | None]] = [
    (re.compile(r"^(?:total )?cpu\d* ?usage$|^cpu\d+$"), "pct", None),
    (re.compile(r"^dsk/"), "bytes_s", None),
    (re.compile(r"^net/"), "bytes_s", None),
    (re.compile(r"^io/"), "req_s", None),
    (re.compile(r"^paging$"), "bytes_s", None),
    (re.compile(r"^system$"), "per_s", frozenset({"int", "csw"})),
    (re.compile(r"^interrupts$"), "per_s", None),
    (re.compile(r"^procs$"), "per_s", frozenset({"new"})),
    (re.compile(r"^procs$"), "count", frozenset({"run", "blk"})),
    (re.compile(r"^memory usage$"), "bytes", None),
    (re.compile(r"^(?:swap|swp/.+)$"), "bytes", None),
    (re.compile(r"^virtual memory$|^advanced virtual memory$"), "per_s", None),
    (re.compile(r"^load avg$"), "", None),
    (re.compile(r"^(?:tcp sockets|udp|raw|sockets|unix sockets|filesystem|sysv ipc|file locks|async)$"), "count",
     None),
]
_TIME_COLUMNS = {("system", "time"): "time", ("epoch", "epoch"): "epoch"}

SAMPLE_COLUMNS: dict[str, str] = {
    "run": "int64", "sample": "int64", "time": "datetime64[ns, UTC]", "time_local": "datetime64[ns]",
    "time_s": "float64", "since_boot": "bool", "group": "string", "metric": "string", "value": "float64",
}
COLUMN_COLUMNS: dict[str, str] = {
    "run": "int64", "position": "int64", "group": "string", "column": "string", "metric": "string",
    "unit": "string",
}
RUN_COLUMNS: dict[str, str] = {
    "run": "int64", "tool": "string", "tool_version": "string", "host": "string", "user": "string",
    "cmdline": "string", "date": "string", "first_line": "Int64", "samples": "int64",
}


@dataclass(frozen=True)
class Column:
    """One header column: its group (first header row), name (second row), metric and unit."""

    group: str
    name: str
    metric: str
    unit: str | None


@dataclass
class _Run:
    meta: dict[str, str] = field(default_factory=dict)
    first_line: int | None = None
    columns: list[Column] = field(default_factory=list)
    group_row: list[str] | None = None
    rows: list[tuple[int, list[str]]] = field(default_factory=list)  # (line number, cells)
    base_year: int | None = None


def unit_for(group: str, column: str) -> str | None:
    """The unit suffix of a dstat (group, column), or None when the group is unknown."""
    for pattern, unit, names in _UNIT_RULES:
        if pattern.search(group) and (names is None or column in names):
            return unit
    return None


def _column(group: str, name: str, warned: set[str], result: ParseResult, line_no: int, line: str) -> Column:
    if name.startswith(group + ":"):
        name = name[len(group) + 1:]
    if (group, name) in _TIME_COLUMNS:
        return Column(group, name, _TIME_COLUMNS[(group, name)], "time")
    unit = unit_for(group, name)
    if unit is None and group not in warned:
        warned.add(group)
        result.warn(line_no, line, f"a dstat group with known units; {group!r} is unknown, its columns keep "
                                   "their raw names without a unit")
    metric = name if not unit else f"{name}_{unit}"
    return Column(group, name, metric, unit)


def sniff_csv(head: str) -> bool:
    """A dstat/pcp-dstat CSV title row or its "Cmdline:","dstat ..." metadata row."""
    return bool(_SNIFF_CSV.search(head))


def _epoch_ns(cell: str) -> int | None:
    """'1475708693.291' -> 1475708693291000000 exactly (a float would give ...290999808)."""
    m = re.fullmatch(r"\s*(\d{1,10})(?:\.(\d*))?\s*", cell)     # up to 9999999999 s: fits int64 ns
    if not m:
        return None
    ns = int(m.group(1)) * 1_000_000_000 + int(((m.group(2) or "") + "000000000")[:9])
    return ns if ns < 2 ** 63 else None


def _base_year(date_text: str | None) -> int | None:
    m = _DATE.match(date_text or "")
    return int(m.group("y")) if m else None


def parse_dstat_csv(text: str, source: str = "<text>", tz: str | None = None) -> ParseResult:
    """Parse dstat/pcp-dstat CSV (see module doc). `tz` (e.g. "America/New_York") localises the
    -t wall-clock column to UTC; without it `time` is set only from --epoch."""
    check_text(text, source, "dstat CSV output")
    if tz is not None:
        try:
            pd.Timestamp("2000-01-01").tz_localize(tz)
        except Exception as exc:   # pandas raises zoneinfo/pytz/ValueError variants
            raise ConfigError(f"unknown time zone {tz!r} for the dstat time column; use an IANA name such as "
                              f"'America/New_York' or 'UTC' ({exc})") from None
    result = ParseResult(format="dstat-csv", source=source)
    lines = text.splitlines()
    runs: list[_Run] = []
    current: _Run | None = None
    warned: set[str] = set()
    last_content = max((i for i, ln in enumerate(lines) if ln.strip()), default=-1)

    def new_run(line_no: int) -> _Run:
        nonlocal current
        current = _Run(first_line=line_no)
        runs.append(current)
        return current

    for idx, line in enumerate(lines):
        line_no = idx + 1
        if not line.strip():
            continue
        cells = next(csv.reader([line]))
        first = cells[0].strip() if cells else ""
        title = _TITLE.match(line)
        if title or first in ("Author:", "Host:", "Cmdline:"):
            run = current
            if run is None or run.rows or run.columns or (title and run.meta):
                run = new_run(line_no)
            if title:
                run.meta.update(tool=title.group("tool"), tool_version=title.group("version"))
            elif first == "Host:":
                run.meta.update(host=_cell(cells, 1), user=_cell(cells, 6))
            elif first == "Cmdline:":
                run.meta.update(cmdline=_cell(cells, 1), date=_cell(cells, 6))
                run.base_year = _base_year(_cell(cells, 6))
            continue
        if line.lstrip().startswith('"'):
            # dstat quotes header cells and never data cells: the group row, then the column row
            run = current
            if run is None or run.rows or run.columns:
                run = new_run(line_no)
            if run.group_row is None:
                run.group_row = cells
            else:
                run.columns = _header(run.group_row, cells, warned, result, line_no, line)
                if len(run.group_row) != len(cells):
                    result.warn(line_no, line, f"{len(run.group_row)} header columns as in the group row; "
                                               f"the column row has {len(cells)}")
            continue
        if current is None or not current.columns:
            result.skipped_lines += 1
            continue
        if len(cells) != len(current.columns):
            truncated = idx == last_content and len(cells) < len(current.columns)
            if truncated:
                result.complete = False
            else:
                result.skipped_lines += 1
            result.warn(line_no, line, f"{len(current.columns)} fields as in the header; got {len(cells)}"
                        + (" (the file ends inside this row: truncated)" if truncated else " (row skipped)"))
            continue
        current.rows.append((line_no, cells))

    runs = [r for r in runs if r.columns or r.rows]
    if not any(r.columns for r in runs):
        first_idx = next((i for i, ln in enumerate(lines) if ln.strip()), 0)
        raise ParseError(source, first_idx + 1, lines[first_idx] if lines else None,
                         "dstat CSV: a two-row header (groups, then columns such as \"time\",\"usr\")")
    for run_no, run in enumerate(runs):
        if not run.rows:
            result.complete = False
            result.warn(run.first_line, None, f"at least one sample row after the header of run {run_no}; "
                                              "there is none (dstat stopped before its first sample?)")
    _build_tables(runs, result, tz)
    return result


def _cell(cells: list[str], i: int) -> str:
    return cells[i].strip() if len(cells) > i else ""


def _header(groups: list[str], names: list[str], warned: set[str], result: ParseResult, line_no: int,
            line: str) -> list[Column]:
    out: list[Column] = []
    group = ""
    for i, name in enumerate(names):
        g = groups[i].strip() if i < len(groups) else ""
        group = g or group
        out.append(_column(group, name.strip(), warned, result, line_no, line))
    return out


def _local_time(cell: str, year: int | None) -> datetime | None:
    m = _TIME_DM.match(cell.strip())
    if not m or year is None:
        return None
    try:
        base = datetime.strptime(f"{year}-{m.group('m')}-{m.group('d')} {m.group('hms')}", "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None
    if m.group("ms"):
        base = base.replace(microsecond=int(m.group("ms").ljust(3, "0")) * 1000)
    return base


def _build_tables(runs: list[_Run], result: ParseResult, tz: str | None) -> None:
    sample_parts: list[pd.DataFrame] = []
    column_rows: list[dict[str, object]] = []
    run_rows: list[dict[str, object]] = []
    for run_no, run in enumerate(runs):
        columns = run.columns
        for pos, col in enumerate(columns):
            column_rows.append({"run": run_no, "position": pos, "group": col.group, "column": col.name,
                                "metric": col.metric, "unit": col.unit})
        time_idx = next((i for i, c in enumerate(columns) if c.metric == "time"), None)
        epoch_idx = next((i for i, c in enumerate(columns) if c.metric == "epoch"), None)
        value_idx = [i for i, c in enumerate(columns) if c.unit != "time"]
        if time_idx is not None and run.base_year is None and run.rows:
            result.warn(run.first_line, None, f"a \"Date:\" metadata row giving the year of run {run_no}; "
                                              "time_local is NaT")
        year = run.base_year
        local: list[datetime | None] = []
        epochs: list[int | None] = []
        values: list[list[float]] = []
        prev: datetime | None = None
        for line_no, cells in run.rows:
            t = _local_time(cells[time_idx], year) if time_idx is not None else None
            if t is not None and prev is not None and t < prev and year is not None:   # crossed a new year
                year += 1
                t = _local_time(cells[time_idx], year)  # type: ignore[index]
            if time_idx is not None and t is None and year is not None:
                result.warn(line_no, None, f"a dstat time like '31-01 14:44:21'; got {cells[time_idx]!r}")
            prev = t or prev
            local.append(t)
            if epoch_idx is not None:
                epochs.append(_epoch_ns(cells[epoch_idx]))
                if epochs[-1] is None:
                    result.warn(line_no, None, f"seconds since the epoch in the epoch column; got {cells[epoch_idx]!r}")
            values.append([_to_float(cells[i], line_no, result) for i in value_idx])
        n = len(run.rows)
        time_local = pd.Series(pd.to_datetime(pd.Series(local, dtype="object")), dtype="datetime64[ns]")
        if epoch_idx is not None:
            time_utc = pd.Series(pd.to_datetime(pd.array(epochs, dtype="Int64"), unit="ns", utc=True))
        elif tz is not None:
            time_utc = time_local.dt.tz_localize(tz, ambiguous="NaT", nonexistent="NaT").dt.tz_convert("UTC")
        else:
            time_utc = pd.Series(pd.NaT, index=range(n), dtype="datetime64[ns, UTC]")
        basis = time_utc if time_utc.notna().any() else time_local
        time_s = (basis - basis.dropna().iloc[0]).dt.total_seconds() if basis.notna().any() \
            else pd.Series(math.nan, index=range(n))
        wide = pd.DataFrame(values, columns=[f"c{i}" for i in value_idx], dtype="float64")
        wide["sample"] = range(n)
        long = wide.melt(id_vars="sample", var_name="col", value_name="value")
        col_pos = long["col"].str.slice(1).astype("int64")
        long["group"] = col_pos.map(lambda i: columns[i].group)
        long["metric"] = col_pos.map(lambda i: columns[i].metric)
        long["run"] = run_no
        long["time"] = time_utc.reindex(long["sample"]).to_numpy()
        long["time_local"] = time_local.reindex(long["sample"]).to_numpy()
        long["time_s"] = pd.Series(time_s.to_numpy()).reindex(long["sample"]).to_numpy()
        long["since_boot"] = long["sample"] == 0
        sample_parts.append(long.sort_values(["sample", "col"], key=lambda s: s if s.name == "sample"
                                             else s.str.slice(1).astype("int64"), kind="stable"))
        run_rows.append({"run": run_no, "tool": run.meta.get("tool"), "tool_version": run.meta.get("tool_version"),
                         "host": run.meta.get("host"), "user": run.meta.get("user"),
                         "cmdline": run.meta.get("cmdline"), "date": run.meta.get("date"),
                         "first_line": run.first_line, "samples": n})
    samples = pd.concat(sample_parts, ignore_index=True) if sample_parts else pd.DataFrame()
    result.tables["samples"] = _typed(samples, SAMPLE_COLUMNS)
    result.tables["columns"] = _typed(pd.DataFrame(column_rows), COLUMN_COLUMNS)
    result.tables["runs"] = _typed(pd.DataFrame(run_rows), RUN_COLUMNS)


def _to_float(cell: str, line_no: int, result: ParseResult) -> float:
    cell = cell.strip()
    if not cell:
        return math.nan
    try:
        return float(cell)
    except ValueError:
        result.warn(line_no, None, f"a number in every dstat data cell; got {cell!r} (kept as NaN)")
        return math.nan


def _typed(frame: pd.DataFrame, columns: dict[str, str]) -> pd.DataFrame:
    frame = frame.reindex(columns=list(columns))
    out = pd.DataFrame(index=frame.index)
    for name, dtype in columns.items():
        col = frame[name]
        if dtype == "datetime64[ns, UTC]":
            col = pd.to_datetime(col, utc=True).astype(dtype)
        elif dtype == "datetime64[ns]":
            col = pd.to_datetime(col).astype(dtype)
        elif dtype == "bool":
            col = col.fillna(False).astype(bool)
        else:
            col = col.astype(dtype)
        out[name] = col
    return out


# --------------------------------------------------------------------------------------------
# console output

def sniff_console(head: str) -> bool:
    """A dstat dashed title line with a known group, followed by a '|'-separated column line."""
    lines = [_ANSI.sub("", ln).rstrip() for ln in head.splitlines()[:200]]
    for i, line in enumerate(lines[:-1]):
        if _is_console_title(line) and "|" in lines[i + 1]:
            return True
    return False


def _is_console_title(line: str) -> bool:
    """Space-separated dashed tokens ('--total-cpu-usage--'), at least one a known dstat group."""
    tokens = line.rstrip().rstrip(">").split(" ")
    return bool(tokens) and all(_TITLE_TOKEN.match(t) and t.strip("-") for t in tokens) \
        and bool(_CONSOLE_KNOWN.search(line))


def _title_spans(line: str) -> list[tuple[int, int, str]]:
    """(start, end, group name) of every dashed title token: '-dsk/total-' -> 'dsk/total'."""
    spans = []
    for m in re.finditer(r"[^ >]+", line):
        name = m.group().strip("-").replace("-", " ")
        spans.append((m.start(), m.end(), name))
    return spans


def _console_value(token: str, unit: str | None) -> float | None:
    m = _CELL.match(token)
    if not m:
        return None
    number = float(m.group("num"))
    suffix = m.group("unit")
    if suffix in ("", "B"):
        return number
    base = 1024.0 if unit in ("bytes", "bytes_s") else 1000.0
    return number * base ** ("kMGTPEZY".index(suffix) + 1)


def parse_dstat_console(text: str, source: str = "<text>") -> ParseResult:
    """Parse dstat console output (best effort; see module doc). Lines that are neither a
    title, a column line nor a data row matching the title's spans (shell prompts, blank lines)
    are skipped and counted. Times from -t have no year on screen: time_local stays NaT."""
    check_text(text, source, "dstat console output")
    result = ParseResult(format="dstat-console", source=source)
    lines = [_ANSI.sub("", ln).rstrip("\r\n") for ln in text.splitlines()]
    spans: list[tuple[int, int, str]] | None = None
    columns: list[list[Column]] = []
    warned: set[str] = set()
    rows: list[dict[str, object]] = []
    sample = -1
    i = 0
    while i < len(lines):
        line = lines[i]
        line_no = i + 1
        if _is_console_title(line) and i + 1 < len(lines) and "|" in lines[i + 1]:
            spans = _title_spans(line)
            sub = lines[i + 1]
            columns = []
            for start, end, group in spans:
                names = sub[start:end].replace(":", " ").split()
                columns.append([_column(group, n, warned, result, line_no + 1, sub) for n in names])
            i += 2
            continue
        if spans is None or not line.strip() or not _is_console_row(line, spans):
            result.skipped_lines += 1 if line.strip() else 0
            i += 1
            continue
        sample += 1
        for (start, end, group), cols in zip(spans, columns, strict=True):
            cell_text = line[start:end]
            tokens = [cell_text.strip()] if len(cols) == 1 else cell_text.replace(":", " ").split()
            if len(tokens) != len(cols):
                result.warn(line_no, line, f"{len(cols)} values under {group!r}; got {len(tokens)}")
                continue
            for col, token in zip(cols, tokens, strict=True):
                if col.unit == "time":
                    continue
                value = _console_value(token, col.unit)
                if value is None:
                    result.warn(line_no, line, f"a dstat display value like '3412k' under {group!r} {col.name!r}; "
                                               f"got {token!r} (kept as NaN)")
                    value = math.nan
                rows.append({"run": 0, "sample": sample, "time": pd.NaT, "time_local": pd.NaT,
                             "time_s": math.nan, "since_boot": sample == 0, "group": col.group,
                             "metric": col.metric, "value": value})
        i += 1
    if spans is not None and sample < 0:
        result.complete = False
        result.warn(None, None, "at least one dstat sample row under the header; there is none")
    if spans is None:
        first_idx = next((k for k, ln in enumerate(lines) if ln.strip()), 0)
        raise ParseError(source, first_idx + 1, lines[first_idx] if lines else None,
                         "dstat console output: a dashed title line such as '--total-cpu-usage-- -dsk/total-'")
    result.tables["samples"] = _typed(pd.DataFrame(rows), SAMPLE_COLUMNS)
    col_rows = [{"run": 0, "position": p, "group": c.group, "column": c.name, "metric": c.metric, "unit": c.unit}
                for p, c in enumerate(c for cols in columns for c in cols)]
    result.tables["columns"] = _typed(pd.DataFrame(col_rows), COLUMN_COLUMNS)
    return result


def _is_console_row(line: str, spans: list[tuple[int, int, str]]) -> bool:
    """A data row has dstat's separators ('|' or ' ') exactly between the title's spans."""
    if len(line) < spans[-1][0]:
        return False
    for (_, end, _), _next in zip(spans, spans[1:]):
        if end >= len(line) or line[end] not in "| ":
            return False
    return "|" in line


FORMATS = [
    Format(name="dstat-csv", description="dstat 0.7.x / pcp-dstat CSV (--output): samples in long format, units named",
           sniff=sniff_csv, parse=parse_dstat_csv),
    Format(name="dstat-console", description="dstat console output (e.g. dstat -am 2 7), best effort",
           sniff=sniff_console, parse=parse_dstat_console),
]
