"""Keys, values and the op mix, generated in numpy batches (a fraction of a microsecond per op).

Seeds. A population picks partition *seeds* (integers): ``seq=low..high`` walks them in order
(process i of P takes low+i, low+i+P, ...; wrapping round at the end, as cassandra-stress's
sequence does), ``uniform(low..high)`` draws them uniformly, ``gaussian(low..high,mean,stdev)``
from a normal distribution clamped to [low, high]. With no population given the engine uses
cassandra-stress's defaults (``default_population``).

Keys. A seed becomes a 10-byte blob key in the shape cassandra-stress writes for
``keyspace1.standard1`` (its HexBytes generator: one byte per 4-bit nibble, low nibble first,
``'0'..'9'`` for 0-9 and ``'K'..'P'`` for 10-15). cassandra-stress first passes the seed
through a seeded Java random generator, which is not reproduced here: the nibbles come from a
splitmix64 hash of the seed instead. So keys look like cassandra-stress's, are unique per seed
(40 hash bits) and spread evenly over the token ring, but are not byte-identical with keys a
cassandra-stress run wrote; read back what this engine wrote.

Values. Each column value is ``column_size`` bytes chosen from a pool of 1,024 random blobs by
a hash of (seed, column), so a row's values are a function of its seed.

Op mix. For a mixed workload each block of ``sum(weights)`` ops holds exactly ``weight`` ops
of each type, shuffled: the ratio is exact over every whole block and the order is random.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cassperf.workload.spec import Population, WorkloadSpec

KEY_BYTES = 10
VALUE_POOL = 1024
#: cassandra-stress's population bound when no op count is given (-pop default with duration=).
STRESS_DEFAULT_POPULATION = 1_000_000
_ALPHABET = np.frombuffer(b"0123456789KLMNOP", dtype=np.uint8)
_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def default_population(spec: WorkloadSpec) -> Population:
    """The spec's population, or cassandra-stress's default ``-pop``: ``seq=1..n`` for writes
    given an op count, otherwise ``gaussian(1..N)`` with the mean in the middle and a standard
    deviation of a sixth of the range, N = n or 1,000,000."""
    if spec.population is not None:
        return spec.population
    high = spec.n or STRESS_DEFAULT_POPULATION
    if spec.op == "write" and spec.n is not None:
        return Population("seq", 1, high)
    return Population("gaussian", 1, high, (1 + high) / 2, max((high - 1) / 6, 1e-9))


def splitmix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def keys_for(seeds: np.ndarray) -> list[bytes]:
    """10-byte keys (HexBytes alphabet, low nibble first) for an array of seeds."""
    h = splitmix64(seeds)
    shifts = (np.arange(KEY_BYTES, dtype=np.uint64) * np.uint64(4))
    nibbles = ((h[:, None] >> shifts[None, :]) & np.uint64(15)).astype(np.uint8)
    return np.ascontiguousarray(_ALPHABET[nibbles]).view(f"S{KEY_BYTES}").ravel().tolist()


class SeedStream:
    """Seeds of one process, in batches. ``seq`` is strided over processes and wraps at the end."""

    def __init__(self, population: Population, process: int = 0, processes: int = 1, rng_seed: int = 0) -> None:
        self.population = population
        self.process = process
        self.processes = processes
        self._next = population.low + process     # seq: this process's next seed (before wrapping)
        self._rng = np.random.default_rng([rng_seed, process])

    def take(self, count: int) -> np.ndarray:
        p = self.population
        span = p.high - p.low + 1
        if p.kind == "seq":
            raw = self._next + self.processes * np.arange(count, dtype=np.int64)
            self._next += self.processes * count
            return p.low + (raw - p.low) % span
        if p.kind == "uniform":
            return self._rng.integers(p.low, p.high, size=count, endpoint=True, dtype=np.int64)
        mean = p.mean if p.mean is not None else (p.low + p.high) / 2
        stdev = p.stdev if p.stdev is not None else max((p.high - p.low) / 6, 1e-9)
        draws = np.rint(self._rng.normal(mean, stdev, size=count))
        return np.clip(draws, p.low, p.high).astype(np.int64)


def op_blocks(weights: list[int], blocks: int, rng: np.random.Generator) -> np.ndarray:
    """Op indices (0..len(weights)-1) for ``blocks`` shuffled blocks of sum(weights) ops."""
    block = np.repeat(np.arange(len(weights), dtype=np.int8), weights)
    out = np.tile(block, (blocks, 1))
    rng.permuted(out, axis=1, out=out)
    return out.ravel()


@dataclass(frozen=True)
class Batch:
    """A batch of ops: op index per op, the key per op and the value-pool row per op."""

    ops: list[int]
    keys: list[bytes]
    value_rows: list[int]


class OpStream:
    """Ops for one process: which op, which key, which values; generated ``batch`` at a time."""

    def __init__(self, spec: WorkloadSpec, weights: list[int], process: int = 0, processes: int = 1,
                 batch: int = 4096, rng_seed: int = 0) -> None:
        self.seeds = SeedStream(default_population(spec), process, processes, rng_seed)
        self.weights = list(weights)
        self._rng = np.random.default_rng([rng_seed, process, 1])
        block = sum(self.weights)
        self._blocks = max(1, batch // block)
        self.batch = self._blocks * block

    def next_batch(self) -> Batch:
        seeds = self.seeds.take(self.batch)
        if len(self.weights) == 1:
            ops = [0] * self.batch
        else:
            ops = op_blocks(self.weights, self._blocks, self._rng).tolist()
        rows = (splitmix64(seeds ^ 0x5DEECE66D) % np.uint64(VALUE_POOL)).astype(np.int64).tolist()
        return Batch(ops, keys_for(seeds), rows)


def value_pool(column_count: int, column_size: int, rng_seed: int = 0) -> list[list[bytes]]:
    """VALUE_POOL rows of ``column_count`` random values of ``column_size`` bytes each. A row
    of the pool is a list of distinct-content blobs (column c of row r rotates the row's bytes)."""
    rng = np.random.default_rng(rng_seed)
    raw = rng.integers(0, 256, size=(VALUE_POOL, column_size), dtype=np.uint8)
    pool = []
    for r in range(VALUE_POOL):
        row = raw[r]
        pool.append([np.roll(row, c).tobytes() for c in range(column_count)])
    return pool
