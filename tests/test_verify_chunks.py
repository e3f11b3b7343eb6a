"""k^m-anonymity and cover-freedom of single chunks: both engines against a
brute-force oracle written here, plus planted violations and the paper example."""

from __future__ import annotations

from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.release import Cluster
from privtool.release_arrays import ReleaseArrays
from privtool.verifiers.chunks import (
    covered_items_all,
    covered_items_cpsat,
    covered_items_enum,
    km_witness_cpsat,
    km_witness_enum,
)
from privtool.verifiers.engines import check_cover_arrays, check_cover_unit, check_km_unit

ITEMS = "abcdef"
LABELS = ("a", "b", "c", "2", "10", "9")


def oracle_km_violations(rows, k, m):
    """Every itemset of 1..m items whose support in the chunk is in [1, k-1]."""
    items = sorted({i for row in rows for i in row})
    bad = []
    for size in range(1, m + 1):
        for itemset in combinations(items, size):
            support = sum(1 for row in rows if set(itemset) <= set(row))
            if 1 <= support < k:
                bad.append((itemset, support))
    return bad


def oracle_covered(rows):
    items = sorted({i for row in rows for i in row})
    if len(items) < 2:
        return []
    s_all = sum(1 for row in rows if set(items) <= set(row))
    if s_all == 0:
        return []
    return [z for z in items if sum(1 for row in rows if z in row) == s_all]


rows_strategy = st.lists(st.sets(st.sampled_from(ITEMS), min_size=1, max_size=4).map(sorted), min_size=1, max_size=9)


def assert_witness(witness, rows, k, m):
    itemset, support = witness
    assert 1 <= len(itemset) <= m
    recount = sum(1 for row in rows if set(itemset) <= set(row))
    assert recount == support and 1 <= support < k


@settings(max_examples=80, deadline=None)
@given(rows=rows_strategy, k=st.integers(2, 4), m=st.integers(1, 3))
def test_km_engines_agree_with_brute_force(rows, k, m):
    expected = oracle_km_violations(rows, k, m)
    for engine in (km_witness_enum, km_witness_cpsat):
        witness = engine(rows, k, m)
        assert (witness is None) == (not expected), engine.__name__
        if witness is not None:
            assert_witness(witness, rows, k, m)
    enum_witness = km_witness_enum(rows, k, m)
    if enum_witness is not None:  # level-wise: the witness has the fewest items
        assert len(enum_witness[0]) == min(len(i) for i, _ in expected)


@settings(max_examples=40, deadline=None)
@given(
    distinct=st.lists(st.sets(st.sampled_from(ITEMS), min_size=1, max_size=4).map(sorted), min_size=1, max_size=4),
    k=st.integers(2, 4),
    m=st.integers(1, 3),
)
def test_repeating_each_sub_record_k_times_is_km_anonymous(distinct, k, m):
    rows = [row for row in distinct for _ in range(k)]
    assert km_witness_enum(rows, k, m) is None
    assert km_witness_cpsat(rows, k, m) is None


@settings(max_examples=40, deadline=None)
@given(
    distinct=st.lists(st.sets(st.sampled_from(ITEMS), min_size=1, max_size=4).map(sorted), min_size=1, max_size=4),
    k=st.integers(2, 4),
    m=st.integers(1, 3),
    where=st.integers(0, 100),
)
def test_planted_rare_item_is_the_witness(distinct, k, m, where):
    rows = [row for row in distinct for _ in range(k)]
    target = where % len(rows)
    rows[target] = sorted([*rows[target], "zz"])  # a rare item moved into the record chunk
    for unit_engine in ("enum", "cpsat", "both", "auto"):
        result = check_km_unit(({"cluster": "c0", "record_chunk": 0}, tuple(map(tuple, rows)), k, m, unit_engine))
        assert result.witness is not None and result.disagreement is None
        assert "zz" in result.witness["itemset"] or result.witness["support"] < k
        recount = sum(1 for row in rows if set(result.witness["itemset"]) <= set(row))
        assert recount == result.witness["support"] < k
    assert check_km_unit(({}, tuple(map(tuple, rows)), k, m, "enum")).witness["itemset"] == ["zz"]


def test_merging_two_chunks_breaks_km_anonymity():
    # two 2^2-anonymous chunks of one cluster: {a},{a},{b},{b} and {x},{x},{y},{y}
    left = [["a"], ["a"], ["b"], ["b"]]
    right = [["x"], ["y"], ["x"], ["y"]]
    assert km_witness_enum(left, 2, 2) is None and km_witness_enum(right, 2, 2) is None
    merged = [sorted(a + b) for a, b in zip(left, right, strict=False)]  # one chunk: ax, ay, bx, by
    for engine in (km_witness_enum, km_witness_cpsat):
        witness = engine(merged, 2, 2)
        assert witness is not None and len(witness[0]) == 2 and witness[1] == 1


@settings(max_examples=80, deadline=None)
@given(rows=rows_strategy)
def test_cover_engines_agree_with_brute_force(rows):
    expected = oracle_covered(rows)
    assert covered_items_enum(rows)[0] == expected
    assert covered_items_cpsat(rows)[0] == expected
    result = check_cover_unit(({"cluster": "c"}, tuple(map(tuple, rows)), "both"))
    assert result.disagreement is None
    assert (result.witness is None) == (not expected)


@settings(max_examples=80, deadline=None)
@given(
    chunks=st.lists(
        st.lists(st.sets(st.sampled_from(ITEMS), min_size=0, max_size=4).map(sorted), max_size=9), max_size=6
    )
)
def test_cover_of_every_chunk_at_once_equals_the_per_chunk_count(chunks):
    """The vectorised pass over a whole release gives, chunk by chunk, exactly
    what the per-chunk enumeration gives (covered items, order and s(I)), and
    covered items the brute-force oracle finds; empty chunks and rows included."""
    assert covered_items_all(chunks) == [covered_items_enum(rows) for rows in chunks]
    assert [covered for covered, _ in covered_items_all(chunks)] == [oracle_covered(rows) for rows in chunks]


@settings(max_examples=80, deadline=None)
@given(
    chunks=st.lists(
        st.lists(st.sets(st.sampled_from(LABELS), min_size=0, max_size=4).map(sorted), max_size=9), max_size=6
    ),
    slab=st.integers(1, 40),
)
def test_cover_of_a_release_from_its_arrays_equals_the_per_chunk_check(chunks, slab):
    """The release-wide pass over the arrays (slab by slab, chunks spread over two
    clusters, labels whose canonical order is not their string order) reports
    exactly the witnesses of the per-chunk check, in chunk order."""
    half = len(chunks) // 2
    clusters = [Cluster("c0", 9, chunks[:half], []), Cluster("c1", 9, chunks[half:], [])]
    tally = check_cover_arrays(ReleaseArrays.from_nested(clusters, [], []), slab)
    expected = [
        check_cover_unit(({"cluster": cid, "record_chunk": i}, tuple(map(tuple, rows)), "enum"))
        for cid, part in (("c0", chunks[:half]), ("c1", chunks[half:]))
        for i, rows in enumerate(part)
    ]
    assert tally.units == len(chunks)
    assert [r.witness for r in tally.notable] == [r.witness for r in expected if r.witness is not None]


def test_paper_figure_1_golden():
    """Awad et al. Figure 1(b), k = m = 2: both chunks 2^2-anonymous; c and d covered
    by a and b in the first chunk; the single-item chunk {e},{e} exposes nothing."""
    chunk1 = [["a"], ["a", "b", "c", "d"], ["a", "b", "c", "d"], ["a", "b", "c", "d"], ["a", "b", "c", "d"], ["a", "b"]]
    chunk2 = [["e"], ["e"]]
    for rows in (chunk1, chunk2):
        assert km_witness_enum(rows, 2, 2) is None and km_witness_cpsat(rows, 2, 2) is None
    assert covered_items_enum(chunk1) == (["c", "d"], 4)
    assert covered_items_cpsat(chunk1) == (["c", "d"], 4)
    assert covered_items_enum(chunk2) == ([], 0)
    witness = check_cover_unit(({"cluster": "c0", "record_chunk": 0}, tuple(map(tuple, chunk1)), "auto")).witness
    assert witness["covered_items"] == ["c", "d"] and witness["covering_items"] == ["a", "b"]
    assert covered_items_all([chunk1, chunk2]) == [(["c", "d"], 4), ([], 0)]
    # at k = 3 the pair {a, b} (support 5) is fine but {e} has support 2 < 3
    assert km_witness_enum(chunk2, 3, 2) == (["e"], 2)


@settings(max_examples=30, deadline=None)
@given(chunks=st.lists(rows_strategy, min_size=1, max_size=6), k=st.integers(2, 3), m=st.integers(1, 2))
def test_one_cpsat_solve_per_batch_agrees_with_brute_force(chunks, k, m):
    from privtool.verifiers.chunks import km_witnesses_cpsat

    found = km_witnesses_cpsat(chunks, k, m)
    for rows, witness in zip(chunks, found, strict=False):
        assert (witness is None) == (not oracle_km_violations(rows, k, m))
        if witness is not None:
            assert_witness(witness, rows, k, m)
