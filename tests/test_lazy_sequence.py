"""The indexing contract every lazy view over a release's arrays shares."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from privtool.lazy_sequence import LazySequence


class Squares(LazySequence[int]):
    def __init__(self, n: int, broken: int | None = None) -> None:
        self.n, self.broken, self.built = n, broken, 0

    def __len__(self) -> int:
        return self.n

    def _build(self, index: int) -> int:
        assert 0 <= index < self.n  # the base normalises before building
        self.built += 1
        if index == self.broken:
            raise IndexError("a bug while building element", index)
        return index * index


@given(st.integers(0, 12), st.integers(-20, 20), st.integers(-20, 20), st.integers(-3, 3).filter(bool))
def test_indexing_and_slicing_match_a_list(n: int, i: int, j: int, step: int) -> None:
    lazy, eager = Squares(n), [x * x for x in range(n)]
    assert list(lazy) == eager
    assert lazy[i:j:step] == eager[i:j:step]
    if -n <= i < n:
        assert lazy[i] == eager[i]
    else:
        with pytest.raises(IndexError):
            lazy[i]


def test_an_index_error_while_building_is_not_the_end_of_iteration() -> None:
    with pytest.raises(IndexError, match="a bug"):
        list(Squares(5, broken=2))


def test_elements_are_built_on_access_only() -> None:
    lazy = Squares(1000)
    assert lazy[3] == 9 and lazy[-1] == 998_001
    assert lazy.built == 2
