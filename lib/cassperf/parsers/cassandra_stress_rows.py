"""cassandra-stress interval rows (and the auto-rate per-thread summary table) -> column arrays.

The tool prints every interval with one Java format string (StressMetrics.ROWFORMAT), e.g. 4.x:

    %-50s%10d,%8.0f,%8.0f,%8.0f,%8.1f,%8.1f,%8.1f,%8.1f,%8.1f,%8.1f,%7.1f,%9.5f,%7d,%7.0f,%8.0f,%8.0f,%8.0f,%8.0f

so a row is the op name and a comma, then fields separated by commas and padded with spaces.
The columns are taken from the block's own header line, so 2.1 (`type,  total ops,...`), 3.x
(`type       total ops,...`) and 4.x (50-wide type column) share one code path.

Early 2.1 (2.1.0 to about 2.1.6) printed no op-type column: one row per interval, the total over
every op type, the count left-justified in ten characters (StressMetrics, 2.1.x:
`%-10d,%10.0f,%8.0f,...`), under one of two headers:

    total ops , adj row/s,    op/s,    pk/s,   row/s,    mean,     med, ..., stderr,  gc: #,  max ms, ...
    ops       ,    op/s,adj op/s,   key/s,    mean,     med,     .95,     .99,    .999,     max,   time,   stderr

(the second from the 2.1 betas). Those rows get op "total" (Header.has_type False).
`adj row/s` is TimingInterval.adjustedRowRate(): rows / (interval length minus the pause, the
stretch in which every thread was waiting), in rows per second.

Speed: a block of rows is parsed in bulk, never line by line in Python. Tier 1: pyarrow's CSV
reader with typed columns (strict: a field that is not a number rejects the tier). Tier 2,
inside the same read: lines with another field count (driver WARN lines, exception lines, a
row cut short) are set aside by the reader's invalid-row handler and returned with their line
numbers. A row tier 1 refuses (it names the line) splits the block around it: the rest stays
in bulk. Tier 3, for refused lines, blocks without line numbers and decimal-comma locales
(every row then has 8 more commas): one compiled regex per row, built from the header with
each field's number of decimals, which is what makes '251,4' (a decimal comma)
distinguishable from ', ' (the field separator) even when a wide value eats the padding.
Measured: ~260,000 4.x rows (55 MB) in ~0.25-0.3 s of CPU on this machine, most of it in
pyarrow; decimal-comma blocks run at regex speed (~4 us a row).
"""

from __future__ import annotations

import bisect
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
    # early 2.1 (no op-type column)
    "adj row/s": ("adj_row_rate_s", "f0"),     # rows / (interval - pause), TimingInterval.adjustedRowRate
    "ops": ("count", "int"),                   # 2.1 betas: cumulative ops
    "adj op/s": ("adj_rate_ops_s", "f0"),      # 2.1 betas: ops / (interval - pause)
    "key/s": ("partition_rate_s", "f0"),       # 2.1 betas: partition keys per second
}

#: the 3.x/4.x header, assumed for rows that arrive without one (a log cut at the top)
DEFAULT_COLUMNS = ("total ops", "op/s", "pk/s", "row/s", "mean", "med", ".95", ".99", ".999", "max", "time",
                   "stderr", "errors", "gc: #", "max ms", "sum ms", "sdv ms", "mb")

#: early 2.1 headers (no op-type column), by the number of fields a row has: assumed for rows
#: that arrive without their header. 2.1.x releases (StressMetrics.HEADMETRICS), then the betas.
EARLY_21_COLUMNS = ("total ops", "adj row/s", "op/s", "pk/s", "row/s", "mean", "med", ".95", ".99", ".999", "max",
                    "time", "stderr", "gc: #", "max ms", "sum ms", "sdv ms", "mb")
BETA_21_COLUMNS = ("ops", "op/s", "adj op/s", "key/s", "mean", "med", ".95", ".99", ".999", "max", "time", "stderr")

# type       total ops,    op/s,    pk/s,   row/s,    mean,     med,     .95,     .99,    .999,     max,   time, ...
# type,      total ops,    op/s,    pk/s,   row/s,    mean, ...                     (2.1 era)
HEADER_RE = re.compile(r"^\s*type,?\s+(total ops\s*,.*?)\s*$")

# total ops , adj row/s,    op/s,    pk/s,   row/s,    mean, ...                 (early 2.1: no type column)
# ops       ,    op/s,adj op/s,   key/s,    mean,     med, ...                    (2.1 betas)
NO_TYPE_HEADER_RE = re.compile(r"^\s*((?:total ops|ops)\s*,\s*(?:adj row/s|op/s)\s*,.*?)\s*$")

#             id, type       total ops,    op/s,    pk/s,   row/s,    mean, ...     (auto-rate summary table)
#          id, total ops , adj row/s,    op/s,    pk/s,   row/s                     (early 2.1)
THREAD_HEADER_RE = re.compile(r"^\s*id,\s*(type,?\s+)?(total ops\s*,.*?)\s*$")

# total,         10000,   16386, ...   |   WRITE, 12, ...   -- starts like a row (op name, comma, a number)
ROW_LIKE_RE = re.compile(r"^\s*(?:[^,]*threadCount,\s*)?[A-Za-z_][\w.\-]*\s*,\s*-?\d")

# 514369    ,     60109,   57871, ...   |    4 threads, 100000    ,       238, ...   (early 2.1: no op name)
NO_TYPE_ROW_LIKE_RE = re.compile(r"^\s*(?:[^,]*threads?,\s*)?-?\d+\s*,\s*-?\d")

_OP_NAME_RE = r"[A-Za-z_][\w.\-]*"
_OP_NAME_FULL_RE = re.compile(rf"^{_OP_NAME_RE}$")

_TOKENS = {
    ("int", "."): r"-?\d{1,18}", ("int", ","): r"-?\d{1,18}",
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
    has_type: bool = True           # False: early 2.1, rows start with the count (op is 'total')

    @property
    def generation(self) -> str:
        if not self.has_type:
            return "2.1-early"
        if self.comma_after_type:
            return "2.1"
        return "4.x" if self.type_width >= 40 else "3.x"

    @property
    def row_like(self) -> re.Pattern[str]:
        """The rule for 'starts like a row' under this header."""
        return ROW_LIKE_RE if self.has_type else NO_TYPE_ROW_LIKE_RE


def _column_name(name: str) -> str:
    return re.sub(r"\W+", "_", name.strip().lower()).strip("_") or "column"


def make_header(names: tuple[str, ...], type_width: int = 0, comma_after_type: bool = False,
                has_type: bool = True) -> Header:
    columns, forms = [], []
    for name in names:
        col, form = COLUMN_MAP.get(name, (_column_name(name), "num"))
        columns.append(col)
        forms.append(form)
    return Header(tuple(names), tuple(columns), tuple(forms), type_width, comma_after_type, has_type)


def parse_header(line: str) -> Header | None:
    """An interval header line -> Header, or None when the line is not one."""
    m = HEADER_RE.match(line)
    if not m:
        m = NO_TYPE_HEADER_RE.match(line)
        if not m:
            return None
        names = tuple(n.strip() for n in m.group(1).split(","))
        return None if any(not n for n in names) else make_header(names, has_type=False)
    names = tuple(n.strip() for n in m.group(1).split(","))
    if any(not n for n in names):
        return None
    stripped = line.lstrip()
    return make_header(names, type_width=stripped.index("total ops"), comma_after_type=stripped.startswith("type,"))


def early_header_for(line: str) -> Header | None:
    """The early-2.1 header a header-less row of that many fields was printed under, or None.

    Rows are read by field count: 18 (2.1.x releases) or 12 (2.1 betas); in a decimal-comma
    locale each of the 8 one- or five-decimal fields adds a comma (26 or 20)."""
    n = line.count(",") + 1
    for names in (EARLY_21_COLUMNS, BETA_21_COLUMNS):
        if n in (len(names), len(names) + 8):
            return make_header(names, has_type=False)
    return None


def parse_thread_header(line: str) -> Header | None:
    m = THREAD_HEADER_RE.match(line)
    if not m:
        return None
    names = tuple(n.strip() for n in m.group(2).split(","))
    return None if any(not n for n in names) else make_header(names, has_type=m.group(1) is not None)


@functools.lru_cache(maxsize=64)
def row_regex(forms: tuple[str, ...], decimal: str, with_id: bool, has_type: bool = True) -> re.Pattern[str]:
    """One regex for a whole row: op name (and the 'N threadCount' id), then every field."""
    head = r"^\s*(?:(?P<id>[^,]+?)\s*,\s*)?" if with_id else r"^\s*"
    fields = ",".join(rf"\s*({_TOKENS[(f, decimal)]})[ \t]*" for f in forms)     # early 2.1 pads after the count
    op = rf"(?P<op>{_OP_NAME_RE})\s*," if has_type else ""
    return re.compile(head + op + fields + r"\s*$")


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


# In CSV column #1: Row #6: CSV conversion error to int64: invalid value '1x'
_ARROW_ROW_RE = re.compile(r"Row #(\d+)")


def _bulk(buf: bytes | memoryview, first_line_no: int, header: Header) -> Rows | int | None:
    """Tiers 1-2: dot-locale rows through pyarrow's CSV reader with typed columns; lines with
    another field count are set aside by its invalid-row handler. Returns the Rows, or the
    1-based line (within `buf`) of a row it refuses (a field that is not a number, an op name
    that is not a name) when it can tell, or None (no row at all, or no line number)."""
    names = (["op"] if header.has_type else []) + [f"c{i}" for i in range(len(header.columns))]
    types = {"op": pa.string()} if header.has_type else {}
    for i, form in enumerate(header.forms):
        types[f"c{i}"] = pa.int64() if form == "int" else pa.float64()
    invalid: list[tuple[int, str]] = []

    def keep_aside(row: pacsv.InvalidRow) -> str:
        invalid.append((row.number or 0, row.text))
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
    except (pa.ArrowException, ValueError) as exc:
        m = _ARROW_ROW_RE.search(str(exc))
        return int(m.group(1)) if m and int(m.group(1)) >= 1 else None
    if table.num_rows == 0 or any(no < 1 for no, _ in invalid):
        return None
    if not header.has_type:
        ops = pa.array(["total"] * table.num_rows, type=pa.string())
    else:
        ops = table.column("op").combine_chunks()
        names = pc.unique(ops).to_pylist()            # a handful: validate those, not every row
        if any(n != n.strip() for n in names):
            ops = pc.utf8_trim_whitespace(ops)
            names = pc.unique(ops).to_pylist()
        wrong = [n for n in names if not _OP_NAME_FULL_RE.match(n)]
        if wrong:
            row = min(pc.index(ops, n).as_py() for n in wrong) + 1              # among the parsed rows
            for no in sorted(no for no, _ in invalid):                           # -> a line of buf
                row += no <= row
            return row
    values = {col: table.column(f"c{i}").to_numpy() for i, col in enumerate(header.columns)}
    n_lines = table.num_rows + len(invalid)
    invalid = [(first_line_no + no - 1, ln) for no, ln in invalid]
    row_like = header.row_like
    other = [(no, ln) for no, ln in invalid if ln.strip() and not row_like.match(ln)]
    malformed = [(no, ln) for no, ln in invalid if row_like.match(ln)]
    bad = {no for no, _ in invalid}
    last = first_line_no + n_lines - 1
    while last in bad:
        last -= 1
    return Rows(ops, values, n_lines, other=other, malformed=malformed, last_row_line=last)


def _regex_rows(lines: list[str], first_line_no: int, header: Header, with_id: bool) -> Rows:
    """Tier 3: one compiled regex per row, either locale."""
    rx = {d: row_regex(header.forms, d, with_id, header.has_type) for d in (".", ",")}
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
            ops.append(m.group("op") if header.has_type else "total")
            if with_id:
                ids.append((m.group("id") or "").strip())
            g = m.groups()
            if order[0] == ",":
                comma_rows.append(len(fields))
            fields.append(g[len(g) - n_groups:])
            last_row_line = first_line_no + i
        elif not line.strip():
            continue
        elif header.row_like.match(line):
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


#: a block with more refused rows than this goes to tier 3 as a whole
_MAX_SPLITS = 32


def _merge(parts: list[Rows], header: Header) -> Rows:
    parts = [p for p in parts if p.n_lines]
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return Rows(pa.array([], type=pa.string()), _empty_values(header), 0)
    lasts = [p.last_row_line for p in parts if p.last_row_line is not None]
    return Rows(pa.concat_arrays([p.ops for p in parts]),
                {c: np.concatenate([p.values[c] for p in parts]) for c in header.columns},
                sum(p.n_lines for p in parts),
                other=sorted(x for p in parts for x in p.other),
                malformed=sorted(x for p in parts for x in p.malformed),
                last_row_line=max(lasts) if lasts else None)


def parse_rows(text: str, start: int, end: int, first_line_no: int, header: Header,
               data: bytes | None = None, header_line: str | None = None) -> Rows:
    """Parse the interval rows in text[start:end] (no header, no blank line; `first_line_no`
    is the line number of its first line). `data` is text.encode() when text is ASCII (same
    offsets), so tier 1 reads the block without copying it. A row tier 1 refuses splits the
    block around it: the rows before and after stay in bulk, that line goes to tier 3; if it is
    `header_line` printed again, every such line is dropped (parse_rows_dropping). Lines
    that are not rows come back in `other` (for the caller to classify and count) or
    `malformed` (they start like a row but do not parse)."""
    if end <= start:
        return Rows(pa.array([], type=pa.string()), _empty_values(header), 0)
    first = _bulk(memoryview(data)[start:end] if data is not None else text[start:end].encode("utf-8", "replace"),
                  first_line_no, header)
    if isinstance(first, Rows):
        return first
    lines = text[start:end].split("\n")
    if first is None:
        return _regex_rows(lines, first_line_no, header, with_id=False)
    if header_line is not None and lines[first - 1] == header_line:
        return parse_rows_dropping(text, start, end, first_line_no, header, header_line)
    # line k of the block spans text[starts[k]:starts[k] + len(lines[k])]
    starts = np.concatenate([[0], np.cumsum([len(ln) + 1 for ln in lines])[:-1]]) + start
    parts: list[Rows] = []
    budget = [_MAX_SPLITS]

    def tier3(a: int, b: int) -> None:
        parts.append(_regex_rows(lines[a:b], first_line_no + a, header, with_id=False))

    def split(a: int, b: int, refused: int | Rows | None) -> None:     # lines [a, b) of the block
        if isinstance(refused, Rows):
            parts.append(refused)
            return
        if refused is None or budget[0] <= 0 or not (1 <= refused <= b - a):
            tier3(a, b)
            return
        budget[0] -= 1
        bad = a + refused - 1
        for lo, hi in ((a, bad), (bad, bad + 1), (bad + 1, b)):
            if hi <= lo:
                continue
            if hi - lo == 1 and lo == bad:
                tier3(lo, hi)
                continue
            s, e = int(starts[lo]), int(starts[hi - 1]) + len(lines[hi - 1])
            buf = memoryview(data)[s:e] if data is not None else text[s:e].encode("utf-8")
            split(lo, hi, _bulk(buf, first_line_no + lo, header))

    split(0, len(lines), first)
    return _merge(parts, header)


def parse_rows_dropping(text: str, start: int, end: int, first_line_no: int, header: Header,
                        header_line: str) -> Rows:
    """parse_rows for a block in which the header line is printed again (4.x `-reporting
    header-frequency=`): those lines are dropped in one pass, the rest is read in bulk, and the
    line numbers reported are those of the original text."""
    blk = text[start:end]
    removed: list[int] = []             # 0-based line indexes (in blk) of the dropped header lines
    pieces: list[str] = []
    line, prev, keep_from = 0, 0, 0
    at = blk.find(header_line)
    while at >= 0:
        stop = at + len(header_line)
        if (at == 0 or blk[at - 1] == "\n") and (stop == len(blk) or blk[stop] == "\n"):
            line += blk.count("\n", prev, at)
            removed.append(line)
            pieces.append(blk[keep_from:at])
            keep_from, prev = stop + 1, at
        at = blk.find(header_line, stop)
    pieces.append(blk[keep_from:])
    cleaned = "".join(pieces)
    if cleaned.endswith("\n"):
        cleaned = cleaned[:-1]
    rows = parse_rows(cleaned, 0, len(cleaned), 0, header, cleaned.encode("ascii") if cleaned.isascii() else None)
    at = [r - i for i, r in enumerate(removed)]            # where each dropped line was, in cleaned lines

    def original(no: int) -> int:
        return first_line_no + no + bisect.bisect_right(at, no)

    rows.other = [(original(no), ln) for no, ln in rows.other]
    rows.malformed = [(original(no), ln) for no, ln in rows.malformed]
    rows.last_row_line = None if rows.last_row_line is None else original(rows.last_row_line)
    rows.n_lines += len(removed)
    return rows


def parse_thread_rows(lines: list[str], first_line_no: int, header: Header) -> Rows:
    """The auto-rate summary table: ' 4 threadCount, insert,  67,  24, ...' (tier 3 only: it is short)."""
    return _regex_rows(lines, first_line_no, header, with_id=True)


def op_mask(ops: pa.Array, op: str) -> np.ndarray:
    """Boolean mask of the rows of one op."""
    return pc.equal(ops, op).to_numpy(zero_copy_only=False)


def whole_numbers(values: dict[str, np.ndarray], columns: dict[str, str]) -> list[str]:
    """Columns that the schema holds as Int64 (count, errors, gc_count ...) must hold whole
    finite numbers: any other value becomes NaN (NA) in place. Returns the columns changed."""
    changed = []
    for col, arr in values.items():
        if columns.get(col) != "Int64" or arr.dtype.kind != "f":
            continue
        ok = np.isnan(arr) | (np.isfinite(arr) & (arr == np.floor(arr)) & (np.abs(arr) < 2.0 ** 62))
        if not ok.all():
            values[col] = np.where(ok, arr, np.nan)
            changed.append(col)
    return changed


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
