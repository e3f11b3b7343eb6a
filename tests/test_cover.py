"""Cover-problem detection (definition 3 of the safe-disassociation paper)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from safe_examples import brute_covered, disassociated_releases, figure1_release

from privtool.attacks.cover import (
    analyse_chunk,
    chunk_covers,
    item_bitsets,
    iter_chunks,
    vulnerable_chunks,
    vulnerable_mask,
)


def test_figure1_c_and_d_are_covered_by_a_and_b() -> None:
    first, second = chunk_covers(figure1_release())
    assert first.itemset == ("a", "b", "c", "d")
    assert first.itemset_support == 4
    assert first.supports == (6, 5, 4, 4)
    assert first.covered == ("c", "d")
    assert first.covering == ("a", "b")
    assert first.vulnerable
    # the single-item chunk {e, e} is not vulnerable (documented choice)
    assert second.itemset == ("e",) and not second.vulnerable
    assert [str(c.ref) for c in vulnerable_chunks(figure1_release())] == ["c0/record[0]"]


def test_every_item_covered_when_all_sub_records_are_equal() -> None:
    cover = analyse_chunk([["x", "y"], ["x", "y"], ["x", "y"]])
    assert cover.covered == ("x", "y") and cover.covering == ()


def test_no_cover_when_no_sub_record_holds_the_whole_itemset() -> None:
    cover = analyse_chunk([["x", "y"], ["x", "y"], ["y", "z"], ["y", "z"]])
    assert cover.itemset_support == 0 and not cover.vulnerable


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sets(st.sampled_from("abcdef"), min_size=1).map(sorted), min_size=1, max_size=12))
def test_covered_items_match_brute_force(rows: list[list[str]]) -> None:
    cover = analyse_chunk(rows)
    assert set(cover.covered) == brute_covered(rows)
    assert set(cover.covered) | set(cover.covering) == {x for row in rows for x in row}
    assert cover.itemset_support == sum(set(cover.itemset) <= set(row) for row in rows)


@settings(max_examples=30, deadline=None)
@given(disassociated_releases(st))
def test_every_chunk_is_analysed_once(release) -> None:
    refs = [ref for ref, _ in iter_chunks(release)]
    expected = sum(len(c.record_chunks) for c in release.clusters) + sum(
        len(j.shared_chunks) for j in release.joint_clusters
    )
    assert len(refs) == len(set(refs)) == expected
    for _, rows in iter_chunks(release):
        bits = item_bitsets(rows)
        for x, b in bits.items():
            assert bin(b).count("1") == sum(x in row for row in rows)


def _offsets(lengths: list[int]) -> np.ndarray:
    return np.r_[0, np.cumsum(lengths, dtype=np.int64)].astype(np.int64)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sets(st.integers(0, 5), min_size=1).map(sorted), max_size=9), max_size=8))
def test_vulnerable_mask_matches_analyse_chunk(chunks: list[list[list[int]]]) -> None:
    """The vectorised pass flags exactly the chunks the per-chunk analysis finds vulnerable."""
    rows = [row for chunk in chunks for row in chunk]
    items = np.array([x for row in rows for x in row], dtype=np.int32)
    mask = vulnerable_mask(items, _offsets([len(r) for r in rows]), _offsets([len(c) for c in chunks]))
    expected = [analyse_chunk([[f"x{x}" for x in row] for row in chunk]).vulnerable for chunk in chunks]
    assert mask.tolist() == expected
