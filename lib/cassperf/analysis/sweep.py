"""A sweep as data: the points (label sets) of a parameter product, and which are still to run.

    plan = SweepPlan.product({"study": "rf"}, rf=[1, 3], op=["write", "read"], run=["a", "b"])
    todo = pending(plan, catalog())      # points without a stored, complete, non-failed run

Points are ordered as `itertools.product` orders them: the first parameter varies slowest, the
last fastest. Every value becomes a string label, as the store keeps labels. A point is done when
the catalog has a run whose labels equal the point's on every key of the point, that is
`complete`, and whose `failed` column (when the catalog has one) is not true. With `spec_key`
(a function of a point giving a string that identifies its spec, e.g. a hash of the rendered
WorkloadSpec), the run's label `spec_key` must equal it too, so a sweep whose spec changed reruns
the points instead of reusing runs of another spec. Running the points is the caller's job.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from cassperf.analysis.select import AnalysisError

#: The label that carries a point's spec key (see pending).
SPEC_KEY_LABEL = "spec_key"
#: Catalog columns that are not labels; a label with one of these names is `label_<name>` there
#: (cassperf.results.catalog renames them so).
CATALOG_RESERVED = frozenset({"run_id", "tool", "started_utc", "ended_utc", "complete", "path", "total_ops",
                              "rate_ops_s"})


@dataclass(frozen=True)
class SweepPlan:
    """Ordered points, each a dict of str labels; `params` the swept keys in order."""

    points: tuple[dict[str, str], ...]
    params: tuple[str, ...] = ()

    @classmethod
    def product(cls, base_labels: Mapping[str, Any] | None = None, **params: list[Any]) -> SweepPlan:
        """Every combination of the `params` values, each point with `base_labels` too."""
        base = {str(k): str(v) for k, v in (base_labels or {}).items()}
        clash = sorted(set(base) & set(params))
        if clash:
            raise AnalysisError(f"SweepPlan.product: {clash} both a base label and a swept parameter; keep one")
        for key, values in params.items():
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                raise AnalysisError(f"SweepPlan.product: parameter {key}={values!r} must be a list of values")
            if not list(values):
                raise AnalysisError(f"SweepPlan.product: parameter {key!r} has no values")
        keys = list(params)
        points = tuple({**base, **{k: str(v) for k, v in zip(keys, combo, strict=True)}}
                       for combo in itertools.product(*(list(params[k]) for k in keys)))
        return cls(points, tuple(keys))

    def __len__(self) -> int:
        return len(self.points)

    def __iter__(self) -> Iterator[dict[str, str]]:
        return iter(dict(p) for p in self.points)

    def frame(self) -> pd.DataFrame:
        """The points as a table, one row per point."""
        return pd.DataFrame(list(self.points))


def _label_column(frame: pd.DataFrame, key: str) -> str | None:
    name = f"label_{key}" if key in CATALOG_RESERVED or key.startswith("p99_ms_") else key
    return name if name in frame.columns else None


def done_mask(point: Mapping[str, str], catalog_frame: pd.DataFrame) -> pd.Series:
    """Catalog rows that hold a usable run of this point (see the module docstring)."""
    keep = pd.Series(True, index=catalog_frame.index)
    if "complete" in catalog_frame.columns:
        keep &= catalog_frame["complete"].fillna(False).astype(bool)
    if "failed" in catalog_frame.columns:
        keep &= ~catalog_frame["failed"].map(lambda v: str(v).lower() in ("true", "1")).astype(bool)
    for key, value in point.items():
        col = _label_column(catalog_frame, key)
        if col is None:
            return pd.Series(False, index=catalog_frame.index)
        keep &= (catalog_frame[col].astype("string") == str(value)).fillna(False).astype(bool)
    return keep


def pending(plan: SweepPlan, catalog_frame: pd.DataFrame,
            spec_key: Callable[[dict[str, str]], str] | None = None) -> list[dict[str, str]]:
    """The points of `plan` (in order) that have no stored, complete, non-failed run with the
    same labels (and the same spec_key label when `spec_key` is given)."""
    out: list[dict[str, str]] = []
    for point in plan:
        wanted = {**point, SPEC_KEY_LABEL: spec_key(point)} if spec_key is not None else point
        if catalog_frame.empty or not done_mask(wanted, catalog_frame).any():
            out.append(point)
    return out
