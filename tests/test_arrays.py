"""privtool.arrays against plain Python: offsets_of (the one place CSR offsets are
made from group lengths) against running totals; sort_int and in_sorted against sorted() and set
membership; search_sorted against a linear scan; slabs and distinct_in_groups against
the groups and sets they stand for."""

from __future__ import annotations

from itertools import accumulate
from typing import Literal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import privtool.arrays
from privtool.arrays import (
    distinct_in_groups,
    in_sorted,
    offsets_of,
    search_sorted,
    slabs,
    sort_int,
    unique_int,
    unique_inverse,
)

LENGTHS = st.lists(st.integers(0, 2**31 - 1), max_size=40)


@given(LENGTHS, st.sampled_from(["list", "int32", "int64", "uint16"]))
def test_offsets_are_the_running_totals_from_zero(lengths: list[int], form: str) -> None:
    """Totals past an int32's range stay exact: the lengths are summed as int64."""
    given_as = lengths if form == "list" else np.array(lengths, dtype=np.int64).astype(form)
    expected = [0, *accumulate(int(n) for n in given_as)]
    got = offsets_of(iter(given_as) if form == "list" else given_as)
    assert got.dtype == np.int64 and not got.flags.writeable
    assert got.tolist() == expected


ints = st.lists(st.integers(-(2**40), 2**40) | st.integers(0, 50) | st.integers(2**32 - 3, 2**32 + 3), max_size=60)


@given(ints, st.sampled_from([np.int64, np.uint64, np.int32]))
def test_sort_int_sorts_in_the_input_dtype(values: list[int], dtype: type) -> None:
    if dtype is np.uint64:
        values = [abs(v) for v in values]
    if dtype is np.int32:
        values = [v % 2**31 for v in values]
    array = np.asarray(values, dtype=dtype)
    out = sort_int(array)
    assert out.dtype == array.dtype
    assert out.tolist() == sorted(array.tolist())
    assert sort_int(array, runs=True).tolist() == out.tolist()
    for runs in (False, True):  # by byte table when the values span few integers, else by sorting
        distinct = unique_int(array, runs)
        assert distinct.dtype == array.dtype
        assert distinct.tolist() == sorted(set(array.tolist()))


BOUNDED = st.integers(1, 300).flatmap(lambda n: st.tuples(st.just(n), st.lists(st.integers(0, n - 1), max_size=80)))


@given(BOUNDED, st.sampled_from([np.int32, np.int64, np.uint16]))
def test_unique_inverse_is_numpys(case: tuple[int, list[int]], dtype: type) -> None:
    """The distinct values (in the values' dtype) and each value's position among
    them, as ``np.unique(..., return_inverse=True)``; repeated values included."""
    bound, values = case
    array = np.asarray(values, dtype=dtype)
    distinct, inverse = unique_inverse(array, bound)
    expected, expected_inverse = np.unique(array, return_inverse=True)
    assert distinct.dtype == array.dtype and inverse.dtype == np.int32
    assert distinct.tolist() == expected.tolist()
    assert inverse.tolist() == expected_inverse.reshape(-1).tolist()


@given(ints, ints, st.booleans(), st.sampled_from([0, 1 << 24]), st.sampled_from([np.int64, np.uint64]))
def test_in_sorted_is_membership(table: list[int], keys: list[int], sort_keys: bool, cells: int, dtype: type) -> None:
    """By byte table (when the table's values span few integers, unless no
    table is allowed) and by binary search, either way round."""
    if dtype is np.uint64:
        table, keys = [abs(v) for v in table], [abs(v) for v in keys]
    ordered = np.sort(np.asarray(table, dtype=dtype))
    probe = np.asarray(sorted(keys) if sort_keys else keys, dtype=dtype)
    expected = [key in set(table) for key in probe.tolist()]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(privtool.arrays, "DENSE_LOOKUP_CELLS", cells)
        assert in_sorted(ordered, probe).tolist() == expected
        if sort_keys:
            assert in_sorted(ordered, probe, keys_sorted=True).tolist() == expected


VALUES = st.lists(st.integers(-50, 50), max_size=60)


@pytest.mark.parametrize("sorts_above", [0, 1 << 30])
@given(table=VALUES, keys=VALUES, side=st.sampled_from(["left", "right"]))
def test_search_sorted_finds_what_a_scan_finds(
    sorts_above: int, table: list[int], keys: list[int], side: Literal["left", "right"]
) -> None:
    """Whether or not the keys are sorted first (threshold 0 or never), each key's
    position is the number of table entries below it (``left``) or not above it
    (``right``), and ``in_sorted`` says whether it is one of them."""
    ordered = np.array(sorted(table), dtype=np.int64)
    wanted = np.array(keys, dtype=np.int64)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(privtool.arrays, "SEARCH_SORTS_KEYS_ABOVE", sorts_above)
        patch.setattr(privtool.arrays, "DENSE_LOOKUP_CELLS", 0)  # in_sorted by search, not by byte table
        got = search_sorted(ordered, wanted, side)
        found = in_sorted(ordered, wanted)
    below = [sum(t < key if side == "left" else t <= key for t in table) for key in keys]
    assert got.tolist() == below
    assert found.tolist() == [key in table for key in keys]


GROUPS = st.lists(st.lists(st.integers(0, 6), max_size=7), max_size=12)


@given(GROUPS, st.integers(1, 10))
def test_slabs_cover_the_groups_in_order_within_their_size(groups: list[list[int]], most: int) -> None:
    """Consecutive ranges, every group once, at most ``most`` elements unless one group alone."""
    ends = np.cumsum([len(g) for g in groups], dtype=np.int64)
    ranges = slabs(ends, most)
    assert [g for first, last in ranges for g in range(first, last)] == list(range(len(groups)))
    for first, last in ranges:
        size = sum(len(g) for g in groups[first:last])
        assert first < last and (size <= most or last == first + 1)


@given(GROUPS, st.integers(1, 10), st.integers(0, 5))
def test_distinct_in_groups_is_the_set_of_pairs(groups: list[list[int]], most: int, skip: int) -> None:
    """From any first offset (``skip`` values before the first group)."""
    span = 7
    values = np.array([0] * skip + [v for g in groups for v in g], dtype=np.int32)
    bounds = skip + np.r_[0, np.cumsum([len(g) for g in groups], dtype=np.int64)]
    expected = sorted({g * span + v for g, row in enumerate(groups) for v in row})
    got = distinct_in_groups(bounds, values, span, most)
    assert got.dtype == np.int64 and got.tolist() == expected
