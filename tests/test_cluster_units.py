"""``privtool.chain.cluster_units`` against its definition: the clusters, in
order, cut into units (of about ``unit_occurrences`` item occurrences), each
unit holding its clusters' sizes, its records' sizes and their items,
concatenated."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.chain import cluster_units
from privtool.dataset import Dataset


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 9), min_size=1, max_size=6), min_size=2, max_size=40),
    st.data(),
    st.sampled_from([1, 3, 7, 1 << 20]),
)
def test_units_hold_their_clusters_records_in_order(records: list[list[int]], data: st.DataObject, most: int) -> None:
    ds = Dataset.from_records([[str(t) for t in r] for r in records])
    order = data.draw(st.permutations(range(ds.n_records)))
    cuts = sorted(set(data.draw(st.lists(st.integers(1, ds.n_records - 1), max_size=ds.n_records))) | {0, ds.n_records})
    clusters = [np.array(order[a:b], dtype=np.int64) for a, b in itertools.pairwise(cuts)]
    units = cluster_units(ds, clusters, most)
    assert [int(size) for unit in units for size in unit[1]] == [len(c) for c in clusters]
    first = 0
    for a, sizes, record_sizes, items in units:
        assert a == first
        rows = [r for c in clusters[a : a + len(sizes)] for r in c.tolist()]
        assert record_sizes.tolist() == [len(ds.record(r)) for r in rows]
        assert items.tolist() == [j for r in rows for j in ds.record(r).tolist()]
        first += len(sizes)
