"""What every metric source shares: the nodes it reads, the readings it returns, and how a
failure on one node is kept from stopping the others.

A source's `sample(nodes)` returns one `Outcome` per node it read (and host sources one for the
host): the readings, the wall time it took in ms, and the error text when that node could not
be read. Errors the sources expect (a node down, a tool failing, a timeout) become
`Outcome.error`; anything else is a bug and propagates.
"""

from __future__ import annotations

import time
import urllib.error
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from cassperf.errors import CassperfError

#: Failures a source turns into Outcome.error instead of raising.
EXPECTED_ERRORS: tuple[type[BaseException], ...] = (CassperfError, OSError, TimeoutError, urllib.error.URLError)


@dataclass(frozen=True)
class Reading:
    """One metric value: `time` is the UTC moment the source asked for it."""

    time: pd.Timestamp
    node: str
    metric: str
    value: float

    def row(self) -> dict[str, Any]:
        return {"time": self.time, "node": self.node, "metric": self.metric, "value": self.value}


@dataclass(frozen=True)
class NodeRef:
    """A node as the sampler addresses it.

    name     what rows carry in `node` ("node1" for a LocalCluster, the address otherwise)
    address  the node's CQL / JMX address (how the driver names it)
    handle   what the cluster's nodetool() / jolokia_endpoint() accept for this node
    pid      for local nodes: returns the node's JVM pid (None when it is not running)
    storage  for local nodes: the folders of its data and commit log (their disks are sampled)
    """

    name: str
    address: str
    handle: str | int
    pid: Callable[[], int | None] | None = field(default=None, compare=False, repr=False)
    storage: tuple[str, ...] = field(default=(), compare=False)


@dataclass
class Outcome:
    node: str
    readings: list[Reading] = field(default_factory=list)
    cost_ms: float = 0.0
    error: str | None = None


def utc_now() -> pd.Timestamp:
    return pd.Timestamp.now(tz="UTC")


class Source(ABC):
    """A way of reading metrics. `name` appears in sampler_<name>_ms rows and in warnings."""

    name: str = "source"

    @abstractmethod
    def sample(self, nodes: Sequence[NodeRef]) -> list[Outcome]:
        """One Outcome per node read."""

    def prime(self, nodes: Sequence[NodeRef]) -> None:
        """Start measurement windows before the first sample (default: nothing to start)."""

    def close(self) -> None:
        """Release connections (default: nothing to release)."""

    def metric_names(self) -> list[str] | None:
        """The names this source writes, where known before sampling (None: data-dependent)."""
        return None


class PartialRead(CassperfError):
    """Some of a node's values could not be read: carries the readings that could."""

    def __init__(self, readings: list[Reading], message: str) -> None:
        super().__init__(message)
        self.readings = readings


def read_node(node_name: str, fn: Callable[[], list[Reading]]) -> Outcome:
    """Run `fn` for one node, timing it; an expected failure becomes Outcome.error (a
    PartialRead keeps the readings it carries)."""
    started = time.perf_counter()
    try:
        readings = fn()
        error = None
    except PartialRead as exc:
        readings, error = exc.readings, str(exc)
    except EXPECTED_ERRORS as exc:
        readings, error = [], f"{type(exc).__name__}: {exc}"
    return Outcome(node_name, readings, (time.perf_counter() - started) * 1000.0, error)


def cluster_nodes(cluster: Any) -> list[NodeRef]:
    """The nodes of a cluster handle: nodes whose JVMs run here (`local_nodes()`, with their
    pids: a LocalCluster's), else every host the driver knows (named by address)."""
    local = cluster.local_nodes()
    if local is not None:
        return [NodeRef(n.name, n.address, n.name, n.pid, tuple(getattr(n, "storage", ()))) for n in local]
    session = cluster.session()
    hosts = sorted(session.cluster.metadata.all_hosts(), key=lambda h: str(h.address))
    return [NodeRef(str(h.address), str(h.address), str(h.address)) for h in hosts]


def each_node(nodes: Sequence[NodeRef], read: Callable[[NodeRef], list[Reading]]) -> list[Outcome]:
    """read_node over nodes, one after another."""
    return [read_node(n.name, lambda n=n: read(n)) for n in nodes]  # type: ignore[misc]
