"""Shared hypothesis strategies for fuzzing parsers with mutated real fixture text."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def mutated(draw: st.DrawFn, texts: list[str]) -> str:
    """A fixture text with 1-4 line edits: delete, duplicate, swap, truncate, replace a
    character, insert a garbage line."""
    lines = draw(st.sampled_from(texts)).splitlines(keepends=True)
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
    return "".join(lines)
