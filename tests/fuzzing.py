"""Shared hypothesis strategies for fuzzing parsers with mutated real fixture text."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cassperf.errors import ParseError
from cassperf.parsers.base import ParseResult

#: generated inputs per fuzz test (CI and a quick local run may lower it)
FUZZ_EXAMPLES = int(os.environ.get("CASSPERF_FUZZ_EXAMPLES", "150"))


def edit_lines(draw: st.DrawFn, lines: list[str]) -> list[str]:
    """1-4 drawn line edits: delete, duplicate, swap, truncate, replace a character, insert a
    garbage line (lines keep their line endings)."""
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "truncate", "replace", "insert"]))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "truncate":
            lines = lines[:i] + [lines[i][:draw(st.integers(0, len(lines[i])))]]
        elif op == "replace" and lines[i]:
            k = draw(st.integers(0, len(lines[i]) - 1))
            lines[i] = lines[i][:k] + draw(st.characters(exclude_categories=("Cs",))) + lines[i][k + 1:]
        elif op == "insert":
            lines.insert(i, draw(st.text(st.characters(exclude_categories=("Cs",)), max_size=80)) + "\n")
    return lines


@st.composite
def mutated(draw: st.DrawFn, texts: list[str]) -> str:
    """A fixture text with 1-4 line edits: delete, duplicate, swap, truncate, replace a
    character, insert a garbage line."""
    return "".join(edit_lines(draw, draw(st.sampled_from(texts)).splitlines(keepends=True)))


def mutate_lines(lines: list[str], ops: list[tuple[int, int, str]], truncate_mod: int = 60) -> str:
    """Apply (kind, position, junk) edits to lines (no line endings) and join them with
    newlines: kind 0 delete, 1 duplicate, 2 swap, 3 truncate the text there (up to truncate_mod - 1
    characters off the last line kept), 4 replace a
    character with junk's first, else insert junk as a line."""
    out = list(lines)
    for kind, pos, junk in ops:
        if not out:
            break
        i = pos % len(out)
        if kind == 0:
            del out[i]
        elif kind == 1:
            out.insert(i, out[i])
        elif kind == 2:
            j = (pos * 7 + 3) % len(out)
            out[i], out[j] = out[j], out[i]
        elif kind == 3:
            out = out[: i + 1]
            out[-1] = out[-1][: max(0, len(out[-1]) - pos % truncate_mod)]
        elif kind == 4:
            k = pos % max(1, len(out[i]))
            out[i] = out[i][:k] + junk[:1] + out[i][k + 1:]
        else:
            out.insert(i, junk)
    return "\n".join(out)


def fuzz_parser(parse: Callable[[str, str], ParseResult], texts: st.SearchStrategy[str], path: str,
                check: Callable[[ParseResult], None] | None = None) -> int:
    """Parse FUZZ_EXAMPLES texts drawn from ``texts`` as ``parse(text, path)``: each must give a
    ParseResult (then ``check(result)``, the caller's own checks) or a ParseError naming ``path``,
    never another exception. Returns how many inputs were tried."""
    tried = [0]

    @settings(max_examples=FUZZ_EXAMPLES, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(texts)
    def run(text: Any) -> None:
        tried[0] += 1
        try:
            result = parse(text, path)
        except ParseError as err:
            assert err.path == path
            return
        assert isinstance(result, ParseResult)
        if check is not None:
            check(result)

    run()
    return tried[0]
