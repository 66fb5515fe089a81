"""Keys, values and op mixes of the load engine."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cassperf.workload import Population, WorkloadSpec
from cassperf.workload.keys import (
    KEY_BYTES,
    OpStream,
    SeedStream,
    default_population,
    keys_for,
    op_blocks,
    VALUE_POOL,
    stress_values,
    value_pool,
)
from cassperf.workload.worker import statements, tags_for


def test_keys_have_cassandra_stress_shape_and_are_unique_and_stable():
    keys = keys_for(np.arange(1, 200_001))
    assert len(set(keys)) == 200_000
    assert {len(k) for k in keys} == {KEY_BYTES}
    assert set(b"".join(keys)) <= set(b"0123456789KLMNOP")
    assert keys_for(np.array([1, 2, 3])) == [b"708PK46680", b"N3O6LLK750", b"M50367M111"]


STRESS_ROWS = Path(__file__).resolve().parent.parent / "fixtures" / "cassandra-stress-keys" / "write-seq-1..50.rows"


def _stress_rows() -> dict[bytes, tuple[bytes, ...]]:
    """The 50 rows of a real `cassandra-stress write n=50 -pop seq=1..50` (5.0 sources), read back."""
    rows = {}
    for line in STRESS_ROWS.read_text().splitlines():
        key, *values = line.split()
        rows[key.encode("ascii")] = tuple(bytes.fromhex(v) for v in values)
    return rows


def test_keys_are_the_bytes_cassandra_stress_writes():
    written = _stress_rows()
    assert len(written) == 50
    assert sorted(keys_for(np.arange(1, 51))) == sorted(written)
    assert keys_for(np.arange(1, 51)) != keys_for(np.arange(2, 52))     # the value, not its position, decides


def test_values_are_the_bytes_cassandra_stress_writes():
    written = _stress_rows()
    keys = keys_for(np.arange(1, 51))
    assert stress_values(keys, 5, 34) == [written[k] for k in keys]
    # in chunks or at once, the same values; other sizes are prefixes of one stream per column
    assert stress_values(keys, 5, 34) == [v for k in keys for v in stress_values([k], 5, 34)]
    longer = stress_values(keys[:3], 5, 818)
    assert all(len(v) == 818 and v[:34] == written[k][c] for k, row in zip(keys, longer) for c, v in enumerate(row))


def test_seq_seeds_are_split_across_processes_without_overlap_and_wrap():
    pop = Population("seq", 1, 2000)
    taken = [SeedStream(pop, i, 3).take(n) for i, n in enumerate((667, 667, 666))]
    assert sorted(np.concatenate(taken).tolist()) == list(range(1, 2001))
    one = SeedStream(Population("seq", 5, 7))
    assert one.take(5).tolist() == [5, 6, 7, 5, 6]
    assert one.take(2).tolist() == [7, 5]


def test_uniform_and_gaussian_seeds_stay_in_bounds():
    u = SeedStream(Population("uniform", 10, 20)).take(10_000)
    assert u.min() == 10 and u.max() == 20
    g = SeedStream(Population("gaussian", 1, 1000, 500.0, 100.0)).take(20_000)
    assert g.min() >= 1 and g.max() <= 1000
    assert abs(g.mean() - 500) < 5 and abs(g.std() - 100) < 5


def test_default_population_follows_cassandra_stress():
    assert default_population(WorkloadSpec(op="write", n=2000)) == Population("seq", 1, 2000)
    read = default_population(WorkloadSpec(op="read", n=3001))
    assert (read.kind, read.low, read.high, read.mean, read.stdev) == ("gaussian", 1, 3001, 1501.0, 500.0)
    assert default_population(WorkloadSpec(op="write", duration=10)).high == 1_000_000
    given = Population("uniform", 1, 5)
    assert default_population(WorkloadSpec(op="read", n=10, population=given)) is given


def test_op_blocks_hold_the_exact_ratio_in_every_block():
    ops = op_blocks([4, 5, 1], 100, np.random.default_rng(1))
    blocks = ops.reshape(100, 10)
    assert all(np.bincount(b, minlength=3).tolist() == [4, 5, 1] for b in blocks)
    assert len({tuple(b) for b in blocks}) > 50          # shuffled, not one fixed order


def test_op_stream_batches_keep_the_ratio_and_carry_values_for_the_writes_only():
    spec = WorkloadSpec(op="mixed", ratio={"read": 5, "write": 4, "delete": 1}, n=100, column_size=100)
    stream = OpStream(spec, [4, 5, 1], batch=4096, write_index=0)
    batch = stream.next_batch()
    assert len(batch.ops) == stream.batch == 4090
    assert np.bincount(batch.ops).tolist() == [1636, 2045, 409]
    assert len(batch.keys) == 4090
    for op, key, values in zip(batch.ops, batch.keys, batch.values):
        if op == 0:
            assert values is not None and [len(v) for v in values] == [100] * 5
        else:
            assert values is None
    first_write = batch.ops.index(0)
    assert batch.values[first_write] == stress_values([batch.keys[first_write]], 5, 100)[0]
    reads = OpStream(WorkloadSpec(op="read", n=10), [1]).next_batch()
    assert set(reads.values) == {None}


def test_with_a_pool_each_write_takes_a_pool_row_picked_by_its_seed():
    spec = WorkloadSpec(op="write", n=5000, column_size=50)
    pool = value_pool(5, 50)
    assert len(pool) == VALUE_POOL and {len(v) for row in pool for v in row} == {50}
    assert all(len(set(row)) == 5 for row in pool[:10])          # the columns of a row differ
    batch = OpStream(spec, [1], batch=4096, pool=pool).next_batch()
    assert all(row in pool for row in batch.values)
    assert len(set(batch.values)) > 900                        # spread over the pool
    again = OpStream(spec, [1], batch=4096, pool=pool).next_batch()
    assert again.values == batch.values and again.keys == batch.keys


def test_statements_and_tags():
    cql = statements(WorkloadSpec(n=1, keyspace="ks", column_count=2))
    assert cql["write"] == 'INSERT INTO ks.standard1 (key, "C0", "C1") VALUES (?, ?, ?)'
    assert cql["read"] == "SELECT * FROM ks.standard1 WHERE key = ?"
    assert cql["delete"] == "DELETE FROM ks.standard1 WHERE key = ?"
    assert tags_for(["write", "read"], fixed=True) == ["WRITE-st", "WRITE-rt", "READ-st", "READ-rt"]
    assert tags_for(["write"], fixed=False) == ["WRITE-st"]


@pytest.mark.parametrize("column_count", [1, 12])
def test_statements_bind_one_marker_per_column(column_count):
    cql = statements(WorkloadSpec(n=1, column_count=column_count))["write"]
    assert cql.count("?") == column_count + 1
