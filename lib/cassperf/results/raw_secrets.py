"""Secrets inside a file that is about to be kept as it came (a run's raw/ copy of an imported log).

The rule is the manifests' (`manifest.secret_spans`: `password=...`, `--password ...`,
`"secret": "..."`, `user:pass@host`), with two additions for files:

- values that say there is no secret are not secrets: `null`, `none`, `*not set*`, `<redacted>`,
  `***`, an empty quoted string, and a parenthesised remark with what it holds (`Token : (invoke
  with -T/--tokens to see all 16 tokens)` in `nodetool info`). cassandra-stress prints
  `Password: null` / `CQL password: *not set*` in every settings dump, so without this every log
  would be flagged;
- values that are code (`function(a,b)`, `!0` in minified JavaScript, which cassandra-stress's
  graph HTML embeds) or a ring token (`Token : 3074457345618258602`) are not secrets either;
- a quoted key before a colon (`"password": "s3cr3t"`, JSON and YAML) counts as a key, and a
  quoted value is redacted inside its quotes;
- `user:password@host` is looked for after every `://`;
- the rule is applied to a window of WINDOW_BEFORE / WINDOW_AFTER characters around each key
  word (password, secret, token, ...), never to a whole line: on a long run of word characters
  the rule takes more than cubic time (40 s for 10,000 characters), and logs have 50 MB lines.

`scan_file()` says on which lines a secret is; `redacted_bytes()` is the file with every such
value replaced by REDACTED (bytes that are not UTF-8 pass through unchanged).
"""

from __future__ import annotations

import re
from pathlib import Path

from cassperf.results.manifest import REDACTED, secret_spans

#: The key words of the manifest rule, and '://' (user:password@host); a window is scanned only
#: around one of them.
_KEY_WORD = re.compile(r"password|passwd|secret|token|credential|api_?key|://", re.IGNORECASE)
#: A quoted key before ':' (JSON, YAML): "password": "s3cr3t". The manifest rule reads keys
#: unquoted, so the quotes become spaces (same length: positions do not move).
_QUOTED_KEY = re.compile(r"""(["'])([\w.-]*(?:password|passwd|secret|token|credential|api_?key)[\w.-]*)\1(?=\s*:)""",
                         re.IGNORECASE)
#: Values that mean "no secret here": null | none | *not set* (the rule stops at the space: '*not')
#: | <redacted> | *** | "" -- and '(' opens a remark (nodetool info's 'Token : (invoke with
#: -T/--tokens to see all 16 tokens)'), inside which nothing is taken for a secret.
_NO_SECRET = re.compile(r"""["']?(?:null|none|nil|\*?not|<redacted>|\*+|true|false|!0|!1|)["']?""", re.IGNORECASE)
#: A value holding '(' is code or a call, not a secret: minified JavaScript in cassandra-stress
#: graph HTML ('fb.tokenize=function(a,b)'; 'password:!0' is covered by _NO_SECRET).
_CODE = re.compile(r"\w*\(")
#: A ring token is a number after the key word token(s): nodetool info's 'Token : 3074457345618258602'.
_TOKEN_KEY_BEFORE = re.compile(r"tokens?[\"']?\s*[=:]?\s*[\"']?$", re.IGNORECASE)
_INTEGER = re.compile(r"[+-]?\d+")
#: Characters that end a value (as in the manifest rule's unquoted value).
_VALUE_END = re.compile(r"[\s,;&\"']")
WINDOW_BEFORE = 64
WINDOW_AFTER = 192
#: How many line numbers a warning names before it says "and N more".
SHOWN_LINES = 5


def _window_spans(line: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Secret value spans of the manifest rule in line[lo:hi], as positions in `line`."""
    window = _QUOTED_KEY.sub(lambda m: f" {m[2]} ", line[lo:hi])
    return [(start + lo, end + lo) for start, end in secret_spans(window)]


def _is_secret(line: str, start: int, value: str) -> bool:
    """Whether `value` (found by the rule at line[start:]) is a secret, not a placeholder, code or a ring token."""
    if _NO_SECRET.fullmatch(value) or _CODE.match(value):
        return False
    return not (_INTEGER.fullmatch(value) and _TOKEN_KEY_BEFORE.search(line, max(0, start - 40), start))


def line_secret_spans(line: str) -> list[tuple[int, int]]:
    """(start, end) of each secret value in one line, merged, in order. A quoted value's span
    leaves its quotes out (a redacted JSON file stays JSON)."""
    found: list[tuple[int, int]] = []
    remarks: list[tuple[int, int]] = []
    for word in _KEY_WORD.finditer(line):
        lo = max(0, word.start() - WINDOW_BEFORE)
        hi = min(len(line), word.end() + WINDOW_AFTER)
        for start, end in _window_spans(line, lo, hi):
            if end == hi and hi < len(line):          # the window cut the value: take it to its end
                cut = _VALUE_END.search(line, end)
                end = cut.start() if cut else len(line)
            value = line[start:end]
            if value.startswith("("):
                close = line.find(")", start)
                remarks.append((start, close + 1 if close >= 0 else len(line)))
            elif _is_secret(line, start, value):
                if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                    start, end = start + 1, end - 1
                found.append((start, end))
    spans = [(s, e) for s, e in found if not any(rs <= s and e <= re_ for rs, re_ in remarks)]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _lines(path: Path) -> list[str]:
    return path.read_bytes().decode("utf-8", errors="surrogateescape").splitlines(keepends=True)


def scan_file(path: str | Path) -> list[int]:
    """Numbers (from 1) of the lines of `path` that hold a secret by the rule above."""
    return [n for n, line in enumerate(_lines(Path(path)), start=1) if line_secret_spans(line)]


def redacted_bytes(path: str | Path) -> tuple[bytes, int]:
    """The content of `path` with every secret value replaced by REDACTED, and how many were."""
    out: list[str] = []
    count = 0
    for line in _lines(Path(path)):
        spans = line_secret_spans(line)
        count += len(spans)
        for start, end in reversed(spans):
            line = line[:start] + REDACTED + line[end:]
        out.append(line)
    return "".join(out).encode("utf-8", errors="surrogateescape"), count


def secret_warning(path: str | Path, lines: list[int]) -> str:
    """One line for a file whose raw copy keeps secrets (`lines` from scan_file, not empty)."""
    shown = ", ".join(str(n) for n in lines[:SHOWN_LINES])
    more = f" and {len(lines) - SHOWN_LINES} more" if len(lines) > SHOWN_LINES else ""
    where = f"line {shown}" if len(lines) == 1 else f"lines {shown}{more}"
    return (f"{path}: {where} hold{'s' if len(lines) == 1 else ''} what looks like a password or other secret; "
            f"the run's raw/ copy keeps the file as it came (import with --redact-raw, or redact_raw=True, "
            f"to store a redacted copy instead)")
