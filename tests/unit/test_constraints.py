"""Declared parameter constraints (cassperf.constraints): what each accepts, and the one line a
bad value gets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from cassperf.constraints import Items, PowerOfTwo, Real, Text, Whole, check, constraints_of, validate
from cassperf.errors import ConfigError


@pytest.mark.parametrize(("constraint", "good", "bad"), [
    (Whole(1), [1, 7, 10**12], [0, -1, True, 1.0, "1", None]),
    (Whole(0, 3), [0, 3], [-1, 4, False]),
    (Real(0, low_open=True), [0.1, 5, 1e9], [0, -0.1, True, float("inf"), float("nan"), "1"]),
    (Real(0, 600), [0, 600, 12.5], [-1, 601]),
    (PowerOfTwo(4), [4, 64, 1024], [2, 48, 0, True]),
    (Text(), ["local", " x "], ["", "  ", None, 3]),
    (Items(Whole(1), unique=True), [[], (1, 2), [3]], [[1, 1], [0], "12", 5, [True]]),
    (Items(Whole(1), nonempty=True), [[1]], [[], ()]),
])
def test_each_constraint_accepts_exactly_its_values(constraint: Any, good: list[Any], bad: list[Any]) -> None:
    assert [v for v in good if not constraint.accepts(v)] == []
    assert [v for v in bad if constraint.accepts(v)] == []


@pytest.mark.parametrize(("name", "value", "constraint", "line"), [
    ("rows", 0, Whole(1), "rows=0: expected a whole number >= 1"),
    ("threads", -1, Whole(0, note="0: calibrated"), "threads=-1: expected a whole number >= 0 (0: calibrated)"),
    ("loop_size_mb", 10, Whole(64, unit="MiB"), "loop_size_mb=10: expected a whole number of MiB >= 64"),
    ("level", 9, Whole(0, 3), "level=9: expected a whole number from 0 to 3"),
    ("interval_s", 0, Real(0, low_open=True, unit="seconds", note="e.g. 0.25"),
     "interval_s=0: expected seconds > 0 (e.g. 0.25)"),
    ("quiet_max_s", "5", Real(0, 600, unit="seconds", note="0: no wait"),
     "quiet_max_s='5': expected seconds from 0 to 600 (0: no wait)"),
    ("chunk_kb", 48, PowerOfTwo(4), "chunk_kb=48: expected a power of two >= 4"),
    ("experiment", " ", Text("e.g. 'local'"), "experiment=' ': expected a non-empty label (e.g. 'local')"),
    ("rfs", (1, 0), Items(Whole(1), "replication factors"),
     "rfs=[1, 0]: expected replication factors, each a whole number >= 1"),
    ("chunks", [64, 64], Items(PowerOfTwo(1), "chunk sizes in KiB", unique=True, nonempty=True),
     "chunks=[64, 64]: expected chunk sizes in KiB, each a power of two >= 1, none named twice, at least one"),
])
def test_a_bad_value_gets_one_line_naming_it_and_what_is_expected(name: str, value: Any, constraint: Any,
                                                                   line: str) -> None:
    with pytest.raises(ConfigError) as err:
        check(name, value, constraint)
    assert str(err.value) == line


@dataclass(frozen=True)
class Base:
    CONSTRAINTS: ClassVar[dict[str, Any]] = {"repeats": Whole(2), "rows": Whole(1)}
    repeats: int = 3
    rows: int = 10

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class Child(Base):
    CONSTRAINTS: ClassVar[dict[str, Any]] = {"rows": Whole(100), "chunk": PowerOfTwo(4)}
    rows: int = 200
    chunk: int = 64


def test_a_subclass_adds_its_constraints_to_its_parents_and_overrides_by_name() -> None:
    assert list(constraints_of(Child)) == ["repeats", "rows", "chunk"]
    assert constraints_of(Child)["rows"] == Whole(100)
    Child()
    with pytest.raises(ConfigError, match=r"^repeats=1: expected a whole number >= 2$"):
        Child(repeats=1)
    with pytest.raises(ConfigError, match=r"^rows=50: expected a whole number >= 100$"):
        Child(rows=50)
    Base(rows=50)
    with pytest.raises(ConfigError, match=r"^chunk=3: expected a power of two >= 4$"):
        Child(chunk=3)
