"""Keys, values and the op mix, generated in numpy batches (a fraction of a microsecond per op).

Seeds. A population picks partition *seeds* (integers): ``seq=low..high`` walks them in order
(process i of P takes low+i, low+i+P, ...; wrapping round at the end, as cassandra-stress's
sequence does), ``uniform(low..high)`` draws them uniformly, ``gaussian(low..high,mean,stdev)``
from a normal distribution clamped to [low, high]. With no population given the engine uses
cassandra-stress's defaults (``default_population``).

Keys. A seed becomes the 10-byte blob key cassandra-stress writes for ``keyspace1.standard1``,
byte for byte, so the engine reads rows cassandra-stress wrote and the other way round
(tests/unit/test_keys.py checks keys a real cassandra-stress 5.0 run wrote). cassandra-stress
(SeedManager, PartitionIterator, Generator, HexBytes) multiplies the population value by
10^16 + 1 (its ``sampleMultiplier`` for the default ``-insert revisit=uniform(1..1M)``), XORs
that with the key generator's salt (murmur3 of "randomstrkey", as its GeneratorConfig hashes
it) and seeds a java.util.Random with it; a uniform(1..100B) draw (commons-math
UniformRealDistribution over [1, 100B + 1), truncated) seeds the size distribution (FIXED(10):
unused), a second one gives the key: its low ten nibbles, low first, as ``'0'..'9'`` for 0-9
and ``'K'..'P'`` for 10-15. Reproduced here in numpy, the 48-bit LCG and all. Two population
values can map to one key (about N^2 / 2e11 pairs among N values), as in cassandra-stress.

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


#: cassandra-stress's SeedManager.sampleMultiplier for its default revisit distribution
#: uniform(1..1M): 1 + round(10 ** (22 - log10(1,000,000)))
STRESS_SEED_MULTIPLIER = 10**16 + 1
#: GeneratorConfig's salt of the key column: murmur3 (Cassandra's hash3_x64_128, first half) of
#: b"randomstrkey" (cassandra.murmur3.murmur3 gives the same)
STRESS_KEY_SALT = -6294861599187687378
_LCG_MULT, _LCG_ADD, _LCG_MASK = np.uint64(0x5DEECE66D), np.uint64(0xB), np.uint64((1 << 48) - 1)
_UNIFORM_HIGH = 100_000_000_000        # Generator's default identity distribution, uniform(1..100B)


def _java_next(state: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """java.util.Random.next(bits) on an array of 48-bit states (bits <= 31: never negative)."""
    with np.errstate(over="ignore"):
        state = (state * _LCG_MULT + _LCG_ADD) & _LCG_MASK
    return state, state >> np.uint64(48 - bits)


def _java_next_double(state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    state, high = _java_next(state, 26)
    state, low = _java_next(state, 27)
    return state, ((high << np.uint64(27)) + low).astype(np.float64) * 2.0**-53


def keys_for(seeds: np.ndarray) -> list[bytes]:
    """cassandra-stress's 10-byte keys (simple mode, keyspace1.standard1) for population values."""
    with np.errstate(over="ignore"):
        seed = np.asarray(seeds, dtype=np.int64) * np.int64(STRESS_SEED_MULTIPLIER)   # wraps, as a Java long
    state = ((seed ^ np.int64(STRESS_KEY_SALT)).view(np.uint64) ^ _LCG_MULT) & _LCG_MASK   # Random.setSeed
    state, _ = _java_next_double(state)            # HexBytes: the draw that seeds the size (FIXED(10))
    _, u = _java_next_double(state)                # the draw whose nibbles are the key
    value = np.clip((u * (_UNIFORM_HIGH + 1.0) + (1.0 - u) * 1.0).astype(np.int64), 1, _UNIFORM_HIGH)
    shifts = np.arange(KEY_BYTES, dtype=np.uint64) * np.uint64(4)
    nibbles = ((value.view(np.uint64)[:, None] >> shifts[None, :]) & np.uint64(15)).astype(np.uint8)
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
