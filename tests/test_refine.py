"""REFINE's vectorised walk against the reference walk (``tests/refine_reference.py``).

The fast implementation must return exactly the reference's joint clusters
(members in order, shared chunk domains), so that releases stay byte-identical:
on random small inputs over every partitioner and several k and m, and on a
real dataset.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from refine_reference import refine as reference_refine

from privtool import arrays
from privtool.chain import ChunkedCluster, cluster_units
from privtool.dataset import Dataset
from privtool.io import read_dataset
from privtool.plugins.disassociation.horpart import STRATEGIES, partition
from privtool.plugins.disassociation.refine import refine
from privtool.plugins.disassociation.verpart import verpart_batch

refine_module = importlib.import_module("privtool.plugins.disassociation.refine")  # the package exports the function

CHUNKERS = ("verpart", "term-chunk", "random")
"""VERPART, and two chunkers a third-party plugin could be: every term in the
term chunk (frequent ones too), and each term at random in the term chunk or
one of two record chunks. REFINE must follow the reference on any chunker."""


def chunks_of(dataset: Dataset, clusters: list[np.ndarray], k: int, m: int, chunker: str) -> list[ChunkedCluster]:
    if chunker == "verpart":
        units = cluster_units(dataset, clusters, 1 << 20)
        return [c for _, *arrays in units for c in verpart_batch((arrays[0], arrays[1], arrays[2]), k, m)]
    rng = np.random.default_rng(len(clusters))
    out = []
    for rows in clusters:
        terms = np.unique(dataset.subset(rows).items)
        where = rng.integers(0, 3, len(terms)) if chunker == "random" else np.zeros(len(terms), dtype=np.int64)
        domains = tuple(tuple(terms[where == n].tolist()) for n in (1, 2) if (where == n).any())
        out.append(ChunkedCluster(domains, tuple(terms[where == 0].tolist())))
    return out


def plans_of(dataset: Dataset, k: int, m: int, size: int, strategy: str, chunker: str = "verpart") -> tuple[list, list]:
    """The joint plans of both implementations, as comparable tuples."""
    parts = partition(dataset, k, size, strategy)
    chunks = chunks_of(dataset, parts.clusters, k, m, chunker)
    fast = refine(dataset, parts.clusters, chunks, k, m)
    slow = reference_refine(dataset, parts.clusters, chunks, k, m)
    return [(p.members, p.shared_chunks) for p in fast], [(p.members, p.shared_chunks) for p in slow]


# many rare items over few records, so that term chunks are full and windows lift
records = st.lists(st.lists(st.integers(0, 25), min_size=1, max_size=8), min_size=2, max_size=160)


@settings(max_examples=200, deadline=None)
@given(
    records,
    st.sampled_from(STRATEGIES),
    st.integers(2, 6),
    st.integers(1, 4),
    st.integers(0, 12),
    st.sampled_from(CHUNKERS),
)
def test_refine_matches_the_reference_walk(
    rows: list[list[int]], strategy: str, k: int, m: int, extra: int, chunker: str
) -> None:
    dataset = Dataset.from_records([[str(t) for t in row] for row in rows])
    fast, slow = plans_of(dataset, k, m, k + extra, strategy, chunker)
    assert fast == slow


@settings(max_examples=60, deadline=None)
@given(
    records,
    st.integers(2, 5),
    st.integers(1, 40),
    st.sampled_from(CHUNKERS),
    st.sampled_from([0, 1 << 24]),
    st.integers(1, 12),
)
def test_refine_matches_the_reference_walk_in_small_batches(
    rows: list[list[int]], k: int, batch: int, chunker: str, cells: int, walk_block: int
) -> None:
    """The initial residual supports read in batches of any size (down to
    one cluster at a time), with membership looked up by binary search (no
    byte table allowed: ``privtool.arrays.in_sorted``) or by table, and the
    lifting windows found a few entries at a time (their predecessors across
    the blocks' edges), give the reference's joint clusters."""
    dataset = Dataset.from_records([[str(t) for t in row] for row in rows])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(refine_module, "RESIDUAL_BATCH_OCCURRENCES", batch)
        patch.setattr(arrays, "DENSE_LOOKUP_CELLS", cells)
        patch.setattr(refine_module, "WALK_BLOCK", walk_block)
        fast, slow = plans_of(dataset, k, 2, k + 3, "adding", chunker)
    assert fast == slow


def test_refine_leaves_out_groups_it_can_no_longer_join(monkeypatch: pytest.MonkeyPatch) -> None:
    """The property above covers the passes that leave out the groups whose
    residual terms no other group holds (``_Groups.joinable``): on inputs of
    its kind plus records whose rare term no other record holds, some passes
    do leave groups out."""
    left_out: list[int] = []
    joinable = refine_module._Groups.joinable

    def spy(self: refine_module._Groups, active: np.ndarray, k: int) -> np.ndarray:
        kept = joinable(self, active, k)
        left_out.append(len(active) - len(kept))
        return kept

    monkeypatch.setattr(refine_module._Groups, "joinable", spy)
    rng = np.random.default_rng(11)
    shared = [sorted({str(t) for t in rng.integers(0, 25, rng.integers(1, 8))}) for _ in range(160)]
    rows = shared + [["frequent", f"once-{i}"] for i in range(60)]  # clusters whose rare terms no one else has
    fast, slow = plans_of(Dataset.from_records(rows), 3, 2, 6, "adding")
    assert fast == slow
    assert len(fast) >= 5 and sum(left_out) > 0


@pytest.mark.parametrize("chunker", CHUNKERS)
def test_refine_joins_something_on_the_random_inputs(chunker: str) -> None:
    """The property above is not vacuous: inputs of its kind do make joint
    clusters, nested ones included, with every chunker (with every term in the
    term chunk, the case a third-party chunker first exposed)."""
    rng = np.random.default_rng(7)
    rows = [sorted({str(t) for t in rng.integers(0, 25, rng.integers(1, 8))}) for _ in range(160)]
    fast, slow = plans_of(Dataset.from_records(rows), 3, 2, 6, "adding", chunker)
    assert fast == slow
    assert len(fast) >= 5 and any(kind == "j" for members, _ in fast for kind, _ in members)


def test_refine_matches_the_reference_walk_on_bms_webview_1(registry, shared_data) -> None:
    dataset = read_dataset(registry, shared_data / "bms-webview-1.dat.gz")
    fast, slow = plans_of(dataset, 5, 2, 30, "adding")
    assert fast == slow
    assert len(fast) > 100
