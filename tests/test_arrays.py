"""privtool.arrays.offsets_of, the one place CSR offsets are made from group
lengths, against running totals in plain Python."""

from __future__ import annotations

from itertools import accumulate

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from privtool.arrays import offsets_of

LENGTHS = st.lists(st.integers(0, 2**31 - 1), max_size=40)


@given(LENGTHS, st.sampled_from(["list", "int32", "int64", "uint16"]))
def test_offsets_are_the_running_totals_from_zero(lengths: list[int], form: str) -> None:
    """Totals past an int32's range stay exact: the lengths are summed as int64."""
    given_as = lengths if form == "list" else np.array(lengths, dtype=np.int64).astype(form)
    expected = [0, *accumulate(int(n) for n in given_as)]
    got = offsets_of(iter(given_as) if form == "list" else given_as)
    assert got.dtype == np.int64 and not got.flags.writeable
    assert got.tolist() == expected
