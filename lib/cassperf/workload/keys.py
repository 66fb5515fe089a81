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

Values. By default each write takes a row of a pool of 1,024 random rows (picked by a hash of
its seed): cheap, so making values never stalls the event loop. With ``stress_values`` a row holds
what cassandra-stress writes there, so cassandra-stress, which checks what it reads, validates
rows the engine wrote (SingleRowIterator, Bytes, FasterRandom): the row's seed is Java's 31-hash
of the key bytes; a java.util.Random seeded with it XOR the column's salt (murmur3 of
"randomstrC<i>") draws uniform(1..100B); its complement seeds FasterRandom (an xorshift
generator re-seeded through java.util.Random every 32 values), whose longs give the bytes, low
byte first. That costs 1.6-2.9 us per row of 5 x 164 bytes and about 5-9 us per row of
5 x 818 bytes in numpy, made a batch at a time on the event loop: a batch of 4096 4 KiB rows
held it 34-51 ms, 256 rows 2.4 ms, which a latency measurement would count. So it is for
loading tables other tools will read, not for measuring.

Op mix. For a mixed workload each block of ``sum(weights)`` ops holds exactly ``weight`` ops
of each type, shuffled: the ratio is exact over every whole block and the order is random.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from cassperf.workload.spec import Population, WorkloadSpec

KEY_BYTES = 10
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


#: cassandra-stress's SeedManager.sampleMultiplier for its default revisit distribution
#: uniform(1..1M): 1 + round(10 ** (22 - log10(1,000,000)))
STRESS_SEED_MULTIPLIER = 10**16 + 1
#: GeneratorConfig's salt of the key column: murmur3 (Cassandra's hash3_x64_128, first half) of
#: b"randomstrkey" (cassandra.murmur3.murmur3 gives the same)
STRESS_KEY_SALT = -6294861599187687378
_LCG_MULT, _LCG_ADD, _LCG_MASK = np.uint64(0x5DEECE66D), np.uint64(0xB), np.uint64((1 << 48) - 1)
_UNIFORM_HIGH = 100_000_000_000        # Generator's default identity distribution, uniform(1..100B)
_FASTER_RANDOM_MULT = np.int64(2685821657736338717)   # FasterRandom.nextLong's multiplier
_HASH_MULT = np.int64(31)              # PartitionIterator.seed: seed = 31 * seed + byte


def _java_next(state: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """java.util.Random.next(bits) on an array of 48-bit states (bits <= 31: never negative)."""
    with np.errstate(over="ignore"):
        state = (state * _LCG_MULT + _LCG_ADD) & _LCG_MASK
    return state, state >> np.uint64(48 - bits)


def _java_next_double(state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    state, high = _java_next(state, 26)
    state, low = _java_next(state, 27)
    return state, ((high << np.uint64(27)) + low).astype(np.float64) * 2.0**-53


def _java_set_seed(seed: np.ndarray) -> np.ndarray:
    """java.util.Random.setSeed on an int64 array: the 48-bit states."""
    return (seed.view(np.uint64) ^ _LCG_MULT) & _LCG_MASK


def _java_next_long(state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """java.util.Random.nextLong(): ((long) next(32) << 32) + next(32), both ints signed."""
    state, high = _java_next(state, 32)
    state, low = _java_next(state, 32)
    high = high.astype(np.uint32).view(np.int32).astype(np.int64)
    low = low.astype(np.uint32).view(np.int32).astype(np.int64)
    with np.errstate(over="ignore"):
        return state, (high << np.int64(32)) + low


def _uniform_draw(state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A Generator's identity distribution, uniform(1..100B): commons-math's
    UniformRealDistribution over [1, 100B + 1), truncated and bounded, one draw per state."""
    state, u = _java_next_double(state)
    return state, np.clip((u * (_UNIFORM_HIGH + 1.0) + (1.0 - u) * 1.0).astype(np.int64), 1, _UNIFORM_HIGH)


def keys_for(seeds: np.ndarray) -> list[bytes]:
    """cassandra-stress's 10-byte keys (simple mode, keyspace1.standard1) for population values."""
    with np.errstate(over="ignore"):
        seed = np.asarray(seeds, dtype=np.int64) * np.int64(STRESS_SEED_MULTIPLIER)   # wraps, as a Java long
    state = _java_set_seed(seed ^ np.int64(STRESS_KEY_SALT))
    state, _ = _uniform_draw(state)                # HexBytes: the draw that seeds the size (FIXED(10))
    _, value = _uniform_draw(state)                # the draw whose nibbles are the key
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


@functools.lru_cache(maxsize=64)
def column_salt(index: int) -> int:
    """GeneratorConfig's salt of value column C<index>: murmur3 of b"randomstrC<index>"."""
    from cassandra.murmur3 import murmur3   # cassandra-driver's Murmur3Partitioner hash

    return int(murmur3(f"randomstrC{index}".encode("ascii")))


def stress_values(keys: list[bytes], column_count: int, column_size: int) -> list[tuple[bytes, ...]]:
    """The column values cassandra-stress writes for these keys: per key, ``column_count``
    blobs of ``column_size`` bytes (see the module doc)."""
    if not keys:
        return []
    raw = np.frombuffer(b"".join(keys), dtype=np.int8).reshape(len(keys), -1).astype(np.int64)
    row_seed = np.zeros(len(keys), dtype=np.int64)
    with np.errstate(over="ignore"):
        for j in range(raw.shape[1]):        # PartitionIterator.seed: seed = 31 * seed + byte
            row_seed = row_seed * _HASH_MULT + raw[:, j]
    salts = np.array([column_salt(c) for c in range(column_count)], dtype=np.int64)
    _, identity = _uniform_draw(_java_set_seed((row_seed[:, None] ^ salts[None, :]).ravel()))   # row-major
    state, xs = _java_next_long(_java_set_seed(~identity))                        # FasterRandom.setSeed(~seed)
    longs = -(-column_size // 8)
    out = np.empty((longs, len(identity)), dtype=np.int64)    # long k of every value: contiguous writes
    tmp = np.empty_like(xs)
    reseed = 0
    with np.errstate(over="ignore"):
        for k in range(longs):
            reseed += 1
            if reseed == 32:                   # FasterRandom.rollover(): Random.setSeed(seed); seed = nextLong()
                state, xs = _java_next_long(_java_set_seed(xs))
                reseed = 0
            np.right_shift(xs, 12, out=tmp)
            np.bitwise_xor(xs, tmp, out=xs)
            np.left_shift(xs, 25, out=tmp)
            np.bitwise_xor(xs, tmp, out=xs)
            np.right_shift(xs, 27, out=tmp)
            np.bitwise_xor(xs, tmp, out=xs)
            np.multiply(xs, _FASTER_RANDOM_MULT, out=out[k])
    data = np.ascontiguousarray(out.T).astype("<i8", copy=False).view(np.uint8)
    data = data.reshape(len(keys), column_count, longs * 8)[:, :, :column_size]
    # one bytes object per value, made in C: a void dtype keeps trailing zero bytes (an S dtype drops them)
    per_column = [np.ascontiguousarray(data[:, c, :]).view(f"V{column_size}").ravel().tolist()
                  for c in range(column_count)]
    return list(zip(*per_column))


@dataclass(frozen=True)
class Batch:
    """A batch of ops: op index per op, the key per op and, for write ops, the row's values
    (None for the other ops)."""

    ops: list[int]
    keys: list[bytes]
    values: list[tuple[bytes, ...] | None]


class OpStream:
    """Ops for one process: which op, which key, which values; generated ``batch`` at a time.
    ``write_index``: the index of the write op in ``weights`` (-1: none; default: 0 for a
    write spec, else none)."""

    def __init__(self, spec: WorkloadSpec, weights: list[int], process: int = 0, processes: int = 1,
                 batch: int = 4096, rng_seed: int = 0, write_index: int | None = None,
                 pool: list[tuple[bytes, ...]] | None = None) -> None:
        self.seeds = SeedStream(default_population(spec), process, processes, rng_seed)
        self.weights = list(weights)
        self.write_index = write_index if write_index is not None else (0 if spec.op == "write" else -1)
        self.column_count, self.column_size = spec.column_count, spec.column_size
        self.pool = pool          # None: cassandra-stress's values (stress_values), else a row of the pool per write
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
        keys = keys_for(seeds)
        values: list[tuple[bytes, ...] | None] = [None] * self.batch
        if self.write_index >= 0:
            writes = [i for i, op in enumerate(ops) if op == self.write_index]
            if self.pool is not None:      # a row of the pool per write, picked by a hash of the seed
                picks = (splitmix64(seeds[writes] ^ 0x5DEECE66D) % np.uint64(len(self.pool))).astype(np.int64)
                rows = [self.pool[r] for r in picks.tolist()]
            else:
                rows = stress_values([keys[i] for i in writes], self.column_count, self.column_size)
            for i, row in zip(writes, rows):
                values[i] = row
        return Batch(ops, keys, values)


#: rows of the engine's default value pool
VALUE_POOL = 1024


def splitmix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def value_pool(column_count: int, column_size: int, rng_seed: int = 0) -> list[tuple[bytes, ...]]:
    """VALUE_POOL rows of ``column_count`` random values of ``column_size`` bytes each. A row
    of the pool holds distinct-content blobs (column c of row r rotates the row's bytes)."""
    rng = np.random.default_rng(rng_seed)
    raw = rng.integers(0, 256, size=(VALUE_POOL, column_size), dtype=np.uint8)
    return [tuple(np.roll(raw[r], c).tobytes() for c in range(column_count)) for r in range(VALUE_POOL)]
