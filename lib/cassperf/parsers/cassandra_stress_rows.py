"""cassandra-stress interval rows (and the auto-rate per-thread summary table) -> column arrays.

The tool prints every interval with one Java format string (StressMetrics.ROWFORMAT), e.g. 4.x:

    %-50s%10d,%8.0f,%8.0f,%8.0f,%8.1f,%8.1f,%8.1f,%8.1f,%8.1f,%8.1f,%7.1f,%9.5f,%7d,%7.0f,%8.0f,%8.0f,%8.0f,%8.0f

so a row is the op name and a comma, then fields separated by commas and padded with spaces.
The columns are taken from the block's own header line, so 2.1 (`type,  total ops,...`), 3.x
(`type       total ops,...`) and 4.x (50-wide type column) share one code path.

Speed: a block of rows is parsed in bulk, never line by line in Python. Tier 1: pyarrow's CSV
reader with typed columns (strict: a field that is not a number rejects the tier). Tier 2,
inside the same read: lines with another field count (driver WARN lines, exception lines, a
row cut short) are set aside by the reader's invalid-row handler and returned with their line
numbers. Tier 3, when tier 1 refuses and for decimal-comma locales (every row then has 8 more
commas): one compiled regex per row, built from the header with each field's number of
decimals, which is what makes '251,4' (a decimal comma) distinguishable from ', ' (the field
separator) even when a wide value eats the padding.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

#: header name -> (column in INTERVAL_COLUMNS or an extra column, printed form)
#: forms: int (%d), f0/f1/f5 (%f with 0/1/5 decimals), num (unknown column: any number)
COLUMN_MAP: dict[str, tuple[str, str]] = {
    "total ops": ("count", "int"),             # cumulative ops of this op type since the run started
    "op/s": ("rate_ops_s", "f0"),
    "pk/s": ("partition_rate_s", "f0"),
    "row/s": ("row_rate_s", "f0"),
    "mean": ("latency_mean_ms", "f1"),
    "med": ("latency_p50_ms", "f1"),
    ".95": ("latency_p95_ms", "f1"),
    ".99": ("latency_p99_ms", "f1"),
    ".999": ("latency_p999_ms", "f1"),
    "max": ("latency_max_ms", "f1"),
    "time": ("time_s", "f1"),                  # seconds since this op type's first interval began
    "stderr": ("rate_stderr_ratio", "f5"),     # uncertainty of the mean row rate (a ratio)
    "errors": ("errors", "int"),
    "gc: #": ("gc_count", "f0"),
    "max ms": ("gc_max_ms", "f0"),
    "sum ms": ("gc_total_ms", "f0"),
    "sdv ms": ("gc_sdv_ms", "f0"),
    "mb": ("gc_mb", "f0"),                     # MiB collected in the interval
}

#: the 3.x/4.x header, assumed for rows that arrive without one (a log cut at the top)
DEFAULT_COLUMNS = ("total ops", "op/s", "pk/s", "row/s", "mean", "med", ".95", ".99", ".999", "max", "time",
                   "stderr", "errors", "gc: #", "max ms", "sum ms", "sdv ms", "mb")

# type       total ops,    op/s,    pk/s,   row/s,    mean,     med,     .95,     .99,    .999,     max,   time, ...
# type,      total ops,    op/s,    pk/s,   row/s,    mean, ...                     (2.1 era)
HEADER_RE = re.compile(r"^\s*type,?\s+(total ops\s*,.*?)\s*$")

#             id, type       total ops,    op/s,    pk/s,   row/s,    mean, ...     (auto-rate summary table)
THREAD_HEADER_RE = re.compile(r"^\s*id,\s*type,?\s+(total ops\s*,.*?)\s*$")

# total,         10000,   16386, ...   |   WRITE, 12, ...   -- starts like a row (op name, comma, a number)
ROW_LIKE_RE = re.compile(r"^\s*(?:[^,]*threadCount,\s*)?[A-Za-z_][\w.\-]*\s*,\s*-?\d")

_OP_NAME_RE = r"[A-Za-z_][\w.\-]*"

_TOKENS = {
    ("int", "."): r"-?\d+", ("int", ","): r"-?\d+",
    ("f0", "."): r"-?\d+|NaN|-?Infinity", ("f0", ","): r"-?\d+|NaN|-?Infinity",
    ("f1", "."): r"-?\d+\.\d|NaN|-?Infinity", ("f1", ","): r"-?\d+,\d|NaN|-?Infinity",
    ("f5", "."): r"-?\d+\.\d{5}|NaN|-?Infinity", ("f5", ","): r"-?\d+,\d{5}|NaN|-?Infinity",
    ("num", "."): r"-?\d+(?:\.\d+)?|NaN|-?Infinity", ("num", ","): r"-?\d+(?:,\d+)?|NaN|-?Infinity",
}


@dataclass(frozen=True)
class Header:
    """The numeric columns of an interval block, in printed order."""

    names: tuple[str, ...]          # as printed: 'total ops', 'op/s', ...
    columns: tuple[str, ...]        # output columns: 'count', 'rate_ops_s', ...
    forms: tuple[str, ...]          # int | f0 | f1 | f5 | num
    type_width: int = 0             # width of the padded type column (10 in 3.x, 50 in 4.x)
    comma_after_type: bool = False  # 2.1 era: 'type,      total ops'

    @property
    def generation(self) -> str:
        if self.comma_after_type:
            return "2.1"
        return "4.x" if self.type_width >= 40 else "3.x"


def _column_name(name: str) -> str:
    return re.sub(r"\W+", "_", name.strip().lower()).strip("_") or "column"


def make_header(names: tuple[str, ...], type_width: int = 0, comma_after_type: bool = False) -> Header:
    columns, forms = [], []
    for name in names:
        col, form = COLUMN_MAP.get(name, (_column_name(name), "num"))
        columns.append(col)
        forms.append(form)
    return Header(tuple(names), tuple(columns), tuple(forms), type_width, comma_after_type)


def parse_header(line: str) -> Header | None:
    """An interval header line -> Header, or None when the line is not one."""
    m = HEADER_RE.match(line)
    if not m:
        return None
    names = tuple(n.strip() for n in m.group(1).split(","))
    if any(not n for n in names):
        return None
    stripped = line.lstrip()
    return make_header(names, type_width=stripped.index("total ops"), comma_after_type=stripped.startswith("type,"))


def parse_thread_header(line: str) -> Header | None:
    m = THREAD_HEADER_RE.match(line)
    if not m:
        return None
    names = tuple(n.strip() for n in m.group(1).split(","))
    return None if any(not n for n in names) else make_header(names)


@functools.lru_cache(maxsize=64)
def row_regex(forms: tuple[str, ...], decimal: str, with_id: bool) -> re.Pattern[str]:
    """One regex for a whole row: op name (and the 'N threadCount' id), then every field."""
    head = r"^\s*(?:(?P<id>[^,]+?)\s*,\s*)?" if with_id else r"^\s*"
    fields = ",".join(rf"\s*({_TOKENS[(f, decimal)]})" for f in forms)
    return re.compile(head + rf"(?P<op>{_OP_NAME_RE})\s*," + fields + r"\s*$")


@dataclass
class Rows:
    """Parsed rows of one block: op names, column arrays, and the lines that were not rows."""

    ops: pa.Array                                    # one op name per row (string)
    values: dict[str, np.ndarray]                    # output column -> float64 (int64 for int forms)
    n_lines: int = 0                                 # physical lines the block spanned
    ids: list[str] = field(default_factory=list)     # thread-summary table only: 'N threadCount'
    other: list[tuple[int, str]] = field(default_factory=list)      # (line_no, line) not rows
    malformed: list[tuple[int, str]] = field(default_factory=list)  # row-like lines that do not parse
    last_row_line: int | None = None

    def __len__(self) -> int:
        return len(self.ops)


def _empty_values(header: Header) -> dict[str, np.ndarray]:
    return {c: np.empty(0, dtype=np.int64 if f == "int" else np.float64) for c, f in zip(header.columns, header.forms)}


def _bulk(buf: bytes | memoryview, first_line_no: int, header: Header) -> Rows | None:
    """Tiers 1-2: dot-locale rows through pyarrow's CSV reader with typed columns; lines with
    another field count are set aside by its invalid-row handler. None when it refuses (a
    field that is not a number, an op name that is not a name, or no row at all)."""
    names = ["op"] + [f"c{i}" for i in range(len(header.columns))]
    types = {"op": pa.string()}
    for i, form in enumerate(header.forms):
        types[f"c{i}"] = pa.int64() if form == "int" else pa.float64()
    invalid: list[tuple[int, str]] = []

    def keep_aside(row: pacsv.InvalidRow) -> str:
        invalid.append((first_line_no + (row.number or 1) - 1, row.text))
        return "skip"

    try:
        table = pacsv.read_csv(
            pa.BufferReader(buf),
            read_options=pacsv.ReadOptions(column_names=names, use_threads=False, block_size=1 << 22),
            parse_options=pacsv.ParseOptions(delimiter=",", quote_char=False, double_quote=False, escape_char=False,
                                             newlines_in_values=False, ignore_empty_lines=True,
                                             invalid_row_handler=keep_aside),
            convert_options=pacsv.ConvertOptions(column_types=types, null_values=[], strings_can_be_null=False,
                                                 quoted_strings_can_be_null=False))
    except (pa.ArrowException, ValueError):
        return None
    if table.num_rows == 0:
        return None
    ops = pc.utf8_trim_whitespace(table.column("op").combine_chunks())
    if not pc.all(pc.match_substring_regex(ops, pattern=rf"^{_OP_NAME_RE}$")).as_py():
        return None
    values = {col: table.column(f"c{i}").to_numpy() for i, col in enumerate(header.columns)}
    n_lines = table.num_rows + len(invalid)
    other = [(no, ln) for no, ln in invalid if ln.strip() and not ROW_LIKE_RE.match(ln)]
    malformed = [(no, ln) for no, ln in invalid if ROW_LIKE_RE.match(ln)]
    bad = {no for no, _ in invalid}
    last = first_line_no + n_lines - 1
    while last in bad:
        last -= 1
    return Rows(ops, values, n_lines, other=other, malformed=malformed, last_row_line=last)


def _regex_rows(lines: list[str], first_line_no: int, header: Header, with_id: bool) -> Rows:
    """Tier 3: one compiled regex per row, either locale."""
    rx = {d: row_regex(header.forms, d, with_id) for d in (".", ",")}
    order = [".", ","]
    ops: list[str] = []
    ids: list[str] = []
    fields: list[tuple[str, ...]] = []
    comma_rows: list[int] = []
    other: list[tuple[int, str]] = []
    malformed: list[tuple[int, str]] = []
    last_row_line = None
    n_groups = len(header.forms)
    for i, line in enumerate(lines):
        m = rx[order[0]].match(line)
        if m is None:
            m = rx[order[1]].match(line)
            if m is not None:
                order.reverse()
        if m is not None:
            ops.append(m.group("op"))
            if with_id:
                ids.append((m.group("id") or "").strip())
            g = m.groups()
            if order[0] == ",":
                comma_rows.append(len(fields))
            fields.append(g[len(g) - n_groups:])
            last_row_line = first_line_no + i
        elif not line.strip():
            continue
        elif ROW_LIKE_RE.match(line):
            malformed.append((first_line_no + i, line))
        else:
            other.append((first_line_no + i, line))
    values: dict[str, np.ndarray] = {}
    for j, (col, form) in enumerate(zip(header.columns, header.forms)):
        raw = [row[j] for row in fields]
        if form == "int":
            values[col] = np.array([int(x) for x in raw], dtype=np.int64)
        else:
            for k in comma_rows:
                raw[k] = raw[k].replace(",", ".")
            values[col] = np.array([float(x) for x in raw], dtype=np.float64)
    return Rows(pa.array(ops, type=pa.string()), values or _empty_values(header), len(lines), ids, other, malformed,
                last_row_line)


def parse_rows(text: str, start: int, end: int, first_line_no: int, header: Header,
               data: bytes | None = None) -> Rows:
    """Parse the interval rows in text[start:end] (no header, no blank line; `first_line_no`
    is the line number of its first line). `data` is text.encode() when text is ASCII (same
    offsets), so tier 1 reads the block without copying it. Lines that are not rows come back in
    `other` (for the caller to classify and count) or `malformed` (they start like a row but do
    not parse)."""
    if end <= start:
        return Rows(pa.array([], type=pa.string()), _empty_values(header), 0)
    buf = memoryview(data)[start:end] if data is not None else text[start:end].encode("utf-8")
    rows = _bulk(buf, first_line_no, header)
    if rows is not None:
        return rows
    return _regex_rows(text[start:end].split("\n"), first_line_no, header, with_id=False)


def parse_thread_rows(lines: list[str], first_line_no: int, header: Header) -> Rows:
    """The auto-rate summary table: ' 4 threadCount, insert,  67,  24, ...' (tier 3 only: it is short)."""
    return _regex_rows(lines, first_line_no, header, with_id=True)


def op_mask(ops: pa.Array, op: str) -> np.ndarray:
    """Boolean mask of the rows of one op."""
    return pc.equal(ops, op).to_numpy(zero_copy_only=False)


def align_times(ops: pa.Array, times: np.ndarray) -> np.ndarray:
    """Per-op rows print their op type's own running time; give every row of an interval the
    time of that interval's 'total' row (the next one), so rows of one interval share time_s.
    Rows after the last 'total' row keep their own time."""
    is_total = op_mask(ops, "total")
    if is_total.all():
        return times
    total_idx = np.flatnonzero(is_total)
    if total_idx.size == 0:
        return times
    nxt = np.searchsorted(total_idx, np.arange(len(ops)))
    out = times.copy()
    has_next = nxt < total_idx.size
    out[has_next] = times[total_idx[nxt[has_next]]]
    return out
