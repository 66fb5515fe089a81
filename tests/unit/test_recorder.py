"""The engine's vectorised HDR recording gives exactly the package's histograms."""

from __future__ import annotations

import numpy as np
from hdrh.histogram import HdrHistogram

from cassperf.results import hdr
from cassperf.workload.recorder import LAYOUT, Samples, counts_index, histogram_of


def _package(values: list[int]) -> HdrHistogram:
    h = HdrHistogram(LAYOUT.lowest, LAYOUT.highest, LAYOUT.significant_figures)
    for v in values:
        assert h.record_value(v)
    return h


def test_counts_index_matches_the_package_bucket_by_bucket():
    rng = np.random.default_rng(7)
    values = np.concatenate([
        np.arange(0, 5000),                                      # the linear first buckets
        2 ** np.arange(0, 42), 2 ** np.arange(1, 42) - 1,        # every power-of-two edge
        rng.integers(0, LAYOUT.highest, 20000),
        rng.lognormal(13, 2, 20000).astype(np.int64),            # latency-like, ~0.4 ms median
        [LAYOUT.highest],
    ]).astype(np.int64)
    h = _package([0])
    expected = np.array([h._counts_index_for(int(v)) for v in values])
    assert (counts_index(values) == expected).all()


def test_histogram_of_encodes_the_same_histogram_as_recording_one_by_one():
    rng = np.random.default_rng(11)
    values = rng.lognormal(14, 1.5, 5000).astype(np.int64)
    mine = histogram_of(values)
    theirs = _package(values.tolist())
    assert mine.count == 5000 and mine.clamped == 0
    decoded = hdr.decode(mine.encoded)
    assert decoded.get_total_count() == theirs.get_total_count()
    for p in (50, 90, 99, 99.9, 100):
        assert decoded.get_value_at_percentile(p) == theirs.get_value_at_percentile(p)
    assert mine.max_ns == theirs.get_max_value()
    assert hdr.merge_encoded([mine.encoded, theirs.encode()]).get_total_count() == 10000


def test_out_of_range_samples_are_clamped_and_counted():
    out = histogram_of(np.array([-5, 10, LAYOUT.highest * 2], dtype=np.int64))
    assert out.count == 3 and out.clamped == 2
    h = hdr.decode(out.encoded)
    assert h.get_total_count() == 3
    assert h.get_value_at_percentile(0) == 0
    assert h.get_max_value() == h.get_highest_equivalent_value(LAYOUT.highest)


def test_empty_interval_encodes_an_empty_histogram():
    out = histogram_of(np.array([], dtype=np.int64))
    assert (out.count, out.max_ns, out.clamped) == (0, 0, 0)
    assert hdr.decode(out.encoded).get_total_count() == 0


def test_samples_drain_empties_buffers_in_place():
    s = Samples(["WRITE-st"])
    buf = s.buffers["WRITE-st"]
    buf.append(5)
    buf.append(7)
    drained = s.drain()
    assert drained["WRITE-st"].tolist() == [5, 7]
    assert len(buf) == 0 and s.buffers["WRITE-st"] is buf
    buf.append(9)
    assert s.drain()["WRITE-st"].tolist() == [9]
