"""Declared constraints on parameters, checked in one place (in the spirit of scikit-learn's
``_parameter_constraints``).

A class lists what each parameter must be, and ``validate`` checks them all, raising one
ConfigError line naming the parameter, what was given and what is expected::

    @dataclass(frozen=True)
    class RFStudy(Study):
        CONSTRAINTS = {"rows": Whole(1), "write_threads": Whole(0, note="0: calibrated"),
                       "thread_sweep": Items(Whole(1), "client thread counts", note="empty: around the knee")}

    rows=0  ->  ConfigError("rows=0: expected a whole number >= 1")

``validate(obj)`` checks the CONSTRAINTS of every class in ``type(obj).__mro__`` (a subclass adds
its own to its parents'); ``check(name, value, constraint)`` checks one value. Each constraint's
``accepts(value)`` is the predicate alone, for callers whose errors have a shape of their own.
A whole number is an int that is not a bool (``True`` is no replication factor).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from cassperf.errors import ConfigError


class Constraint(Protocol):
    def accepts(self, value: Any) -> bool: ...

    @property
    def expected(self) -> str: ...


def _note(text: str, note: str) -> str:
    return f"{text} ({note})" if note else text


def _bounds(low: float | None, high: float | None, low_open: bool = False) -> str:
    if low is not None and high is not None:
        return f"from {low:g} to {high:g}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    return f"<= {high:g}" if high is not None else ""


@dataclass(frozen=True)
class Whole:
    """An int (not a bool) in [low, high]; ``unit`` words it ("a whole number of MiB >= 64")."""

    low: int | None = 1
    high: int | None = None
    note: str = ""
    unit: str = ""

    def accepts(self, value: Any) -> bool:
        return (isinstance(value, int) and not isinstance(value, bool)
                and (self.low is None or value >= self.low) and (self.high is None or value <= self.high))

    @property
    def expected(self) -> str:
        what = f"a whole number{' of ' + self.unit if self.unit else ''}"
        return _note(f"{what} {_bounds(self.low, self.high)}".strip(), self.note)


@dataclass(frozen=True)
class Real:
    """A finite int or float (not a bool) in [low, high] (``low_open``: > low); ``unit`` is what
    it counts ("seconds", "milliseconds")."""

    low: float | None = 0.0
    high: float | None = None
    low_open: bool = False
    unit: str = "a number"
    note: str = ""

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or value <= self.high

    @property
    def expected(self) -> str:
        return _note(f"{self.unit} {_bounds(self.low, self.high, self.low_open)}".strip(), self.note)


@dataclass(frozen=True)
class PowerOfTwo:
    """A whole power of two >= low (chunk sizes in KiB)."""

    low: int = 1
    note: str = ""

    def accepts(self, value: Any) -> bool:
        return Whole(self.low).accepts(value) and not value & (value - 1)

    @property
    def expected(self) -> str:
        return _note(f"a power of two >= {self.low}", self.note)


@dataclass(frozen=True)
class Text:
    """A string that is not blank."""

    note: str = ""

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and bool(value.strip())

    @property
    def expected(self) -> str:
        return _note("a non-empty label", self.note)


@dataclass(frozen=True)
class Flag:
    """True or False (not 0 or 1); ``note`` says what True does."""

    note: str = ""

    def accepts(self, value: Any) -> bool:
        return isinstance(value, bool)

    @property
    def expected(self) -> str:
        return _note("True or False", self.note)


@dataclass(frozen=True)
class Items:
    """A list or tuple whose every item meets ``each``; ``unique``: none named twice; ``nonempty``:
    at least one."""

    each: Any
    what: str = "a list"
    unique: bool = False
    nonempty: bool = False
    note: str = ""

    def accepts(self, value: Any) -> bool:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            return False
        items = list(value)
        return (all(self.each.accepts(v) for v in items) and (not self.unique or len(set(items)) == len(items))
                and (not self.nonempty or bool(items)))

    @property
    def expected(self) -> str:
        extra = [w for w, on in (("none named twice", self.unique), ("at least one", self.nonempty)) if on]
        return _note(f"{self.what}, each {self.each.expected}" + (f", {', '.join(extra)}" if extra else ""),
                     self.note)


def _shown(value: Any) -> str:
    return repr(list(value)) if isinstance(value, tuple) else repr(value)


def check(name: str, value: Any, constraint: Constraint) -> None:
    """ConfigError "<name>=<value>: expected <what>" unless ``constraint`` accepts ``value``."""
    if not constraint.accepts(value):
        raise ConfigError(f"{name}={_shown(value)}: expected {constraint.expected}")


def constraints_of(cls: type) -> dict[str, Constraint]:
    """Every class's CONSTRAINTS along the MRO, a subclass's winning over its parents'."""
    out: dict[str, Constraint] = {}
    for klass in reversed(cls.__mro__):
        out.update(vars(klass).get("CONSTRAINTS", {}))
    return out


def validate(obj: Any, constraints: Mapping[str, Constraint] | None = None) -> None:
    """Check each named attribute of ``obj`` (module doc), in the order declared."""
    for name, constraint in (constraints if constraints is not None else constraints_of(type(obj))).items():
        check(name, getattr(obj, name), constraint)


__all__ = ["Constraint", "Items", "PowerOfTwo", "Real", "Text", "Whole", "check", "constraints_of", "validate"]
