"""The vectorised count that clears k^m-anonymous chunks of a batch
(:func:`privtool.verifiers.chunks.chunk_shapes`) against the brute-force
oracle of ``test_verify_chunks``, and the batch checks built on it
(``check_km_chunks``, ``weak_parts_of_chunks``) against the same checks run
chunk by chunk, as they ran before the count."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_verify_chunk_batches import releases
from test_verify_chunks import oracle_km_violations

from privtool.arrays import offsets_of
from privtool.release import Cluster, Release
from privtool.verifiers.certify import certificate_from_units
from privtool.verifiers.chunk_batches import ChunkBatches
from privtool.verifiers.chunks import ChunkBits, chunk_shapes, effective_m, km_witness_enum
from privtool.verifiers.engines import UnitTally, check_km_batch, check_km_chunks, check_km_unit
from privtool.verifiers.reconstruction_bounds import chunk_weak_parts, counted_weak_parts, weak_parts_of_chunks

LABELS = ["10", "9", "x", "1", "05", "b", "7"]
"""The label of each code 0..6."""

# sub-records as listed, repeats allowed (a tampered release may repeat an item)
listed_rows = st.lists(st.lists(st.integers(0, 6), max_size=5).map(sorted), max_size=10)


@settings(max_examples=200, deadline=None)
@given(
    chunks=st.lists(listed_rows, max_size=6),
    k=st.integers(1, 5),
    m=st.integers(1, 2),
    most=st.sampled_from([1, 4, 30, 1 << 18]),
)
def test_the_count_clears_exactly_the_chunks_without_weak_itemsets(chunks, k, m, most) -> None:
    rows = [row for chunk in chunks for row in chunk]
    items = np.array([item for row in rows for item in row], dtype=np.int32)
    rank = np.argsort(np.argsort(LABELS))  # the labels' sorted order is not the codes'
    shapes = chunk_shapes(items, offsets_of(map(len, rows)), offsets_of(map(len, chunks)), k, m, rank, most)
    parts = counted_weak_parts(shapes, len(LABELS)).labelled(LABELS)
    witnesses = shapes.witnesses()
    for n, chunk in enumerate(chunks):
        labelled = [tuple(LABELS[item] for item in row) for row in chunk]
        weak = bool(oracle_km_violations(labelled, k, m))
        pairs = sum(len(set(row)) * (len(set(row)) - 1) // 2 for row in chunk)
        assert shapes.maybe_weak[n] == (weak or (m == 2 and pairs > most))
        if n in witnesses:  # what enumeration finds first, with its support
            codes, support = witnesses[n]
            witness = [LABELS[code] for code in codes]
            assert (witness, support) == km_witness_enum(labelled, k, effective_m(labelled, m))
        else:  # none: the chunk holds no weak itemset, or its pairs were too many to count and no item is weak
            assert not weak or (m == 2 and pairs > most and not oracle_km_violations(labelled, k, 1))
        assert shapes.undecided[n] == (m == 2 and pairs > most)
        if not shapes.undecided[n]:  # the weak parts, in enumeration's order
            assert parts.get(n, ()) == chunk_weak_parts((labelled, k, m, None))
        assert shapes.rows[n] == len(chunk)
        assert shapes.items[n] == len(ChunkBits.of(labelled).items)
        assert max(1, min(m, int(shapes.longest[n]))) == effective_m(labelled, m)


def test_the_count_refuses_an_m_it_does_not_decide() -> None:
    with pytest.raises(ValueError, match="m = 1 or 2"):
        chunk_shapes(np.zeros(1, dtype=np.int32), offsets_of([1]), offsets_of([1]), 2, 3)


def tally_key(tally: UnitTally) -> tuple:
    """Everything of a tally but the seconds."""
    notable = [(r.location, r.engine, r.witness, r.disagreement, r.extra) for r in tally.notable]
    return tally.units, list(tally.engines.items()), notable


@settings(max_examples=80, deadline=None)
@given(
    release=releases(),
    size=st.integers(1, 5),
    k=st.integers(1, 4),
    m=st.integers(1, 3),
    requested=st.sampled_from(["auto", "enum", "both"]),
)
def test_batch_checks_find_what_the_chunk_by_chunk_checks_find(
    release: Release, size: int, k: int, m: int, requested: str
) -> None:
    for batch in ChunkBatches.all_chunks(release.arrays, size):
        chunks = batch.chunks()
        each = UnitTally.of(check_km_batch((tuple(batch.locations()), tuple(chunks), k, m, requested, None)))
        assert tally_key(check_km_chunks(batch, k, m, requested, None)) == tally_key(each)
        weak = [(batch.first + n, chunk_weak_parts((rows, k, m, None))) for n, rows in enumerate(chunks)]
        found = weak_parts_of_chunks(batch, k, m, None).labelled(release.arrays.labels)
        assert found == {c: parts for c, parts in weak if parts}
        which = list(range(len(batch)))[::-2]
        assert batch.chunks_at(which) == [chunks[n] for n in which]


@st.composite
def many_chunks(draw: st.DrawFn) -> Release:
    """Releases of 22-40 clusters with one or two small record chunks each:
    more refuted chunks than a tally keeps witnesses for."""
    chunk = st.lists(st.lists(st.sampled_from(LABELS), min_size=1, max_size=3, unique=True).map(sorted), max_size=4)
    clusters = [
        Cluster(f"c{i}", 4, draw(st.lists(chunk, min_size=1, max_size=2)), []) for i in range(draw(st.integers(22, 40)))
    ]
    return Release(kind="disassociated", clusters=clusters)


@settings(max_examples=40, deadline=None)
@given(release=many_chunks(), k=st.integers(2, 4), m=st.integers(1, 2), size=st.sampled_from([5, 64]))
def test_a_tally_keeps_the_certificates_witnesses_and_counts_the_rest(release, k, m, size) -> None:
    """The certificate of the batch checks (which keep the first
    ``KEPT_WITNESSES`` witnesses of each batch and count the others) equals
    that of every chunk's own result: same verdict, witness, witnesses listed
    and number of violations."""
    whole = UnitTally()
    for batch in ChunkBatches.all_chunks(release.arrays, size):
        whole.add(check_km_chunks(batch, k, m, "auto", None))
    each = [
        check_km_unit((location, rows, k, m, "auto"))
        for batch in ChunkBatches.all_chunks(release.arrays, size)
        for location, rows in zip(batch.locations(), batch.chunks(), strict=True)
    ]
    expected, got = (certificate_from_units("km-anonymity", "auto", t, 0.0) for t in (each, whole))
    assert (got.holds, got.witness, got.details) == (expected.holds, expected.witness, expected.details)
