"""Every executor returns the same results in the same order (docs/design.md, "Data flow": the
result never depends on the executor or worker count)."""

from __future__ import annotations

import pickle
from functools import partial

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privtool.context import Context, SeedSplitter
from privtool.executors import (
    IN_FLIGHT_PER_WORKER,
    ProcessExecutor,
    SerialExecutor,
    batch_size,
    batches,
    make_executor,
)


def _draw(seeds: SeedSplitter, unit: int) -> list[float]:
    return seeds.rng("unit", unit).random(3).tolist()


def _run(executor, n: int = 40) -> list[list[float]]:
    ctx = Context(seed=7, executor=executor)
    try:
        return ctx.map(partial(_draw, ctx.seeds), list(range(n)), "draw")
    finally:
        executor.close()


def test_rng_depends_on_seed_and_key_only() -> None:
    a, b = SeedSplitter(3), pickle.loads(pickle.dumps(SeedSplitter(3)))
    assert a.rng("x", 1).random() == b.rng("x", 1).random()
    assert a.rng("x", 1).random() != a.rng("x", 2).random()
    assert SeedSplitter(4).rng("x", 1).random() != a.rng("x", 1).random()


def test_process_pool_equals_serial() -> None:
    serial = _run(SerialExecutor())
    assert _run(ProcessExecutor(workers=1)) == serial
    assert _run(ProcessExecutor(workers=2)) == serial


def test_dask_local_cluster_equals_serial() -> None:
    """1,000 units: batches of 62, more batches than the window of 8 in flight,
    so results cross the window's refills and must still come back in order."""
    pytest.importorskip("dask.distributed")
    serial = _run(SerialExecutor(), n=1000)
    assert _run(make_executor("dask", workers=2), n=1000) == serial


class _CountedItems(list):
    """A list that counts the items taken out of it."""

    taken = 0

    def __iter__(self):
        for item in super().__iter__():
            self.taken += 1
            yield item


def test_process_pool_builds_a_bounded_window_of_batches() -> None:
    """The pool is handed at most ``IN_FLIGHT_PER_WORKER * workers`` batches
    ahead of the result being read, so a lazy sequence of unit payloads is not
    built all at once (as ``ProcessPoolExecutor.map`` would)."""
    items = _CountedItems(float(i) for i in range(5000))
    executor = ProcessExecutor(workers=2)
    try:
        results = executor.imap(np.sqrt, items)
        assert next(results) == 0.0
        window = IN_FLIGHT_PER_WORKER * 2 * batch_size(len(items), 2)
        assert items.taken <= window + 1 < len(items)  # batches reads one item past a full batch
        assert [0.0, *results] == [float(np.sqrt(i)) for i in range(5000)]
        assert items.taken == len(items)
    finally:
        executor.close()


def test_results_keep_input_order() -> None:
    executor = ProcessExecutor(workers=2)
    try:
        out = Context(executor=executor).map(np.sqrt, [float(i * i) for i in range(50)], "sqrt")
    finally:
        executor.close()
    assert out == [float(i) for i in range(50)]


@given(
    st.lists(st.one_of(st.integers(0, 9), st.integers(0, 40).map(lambda n: np.zeros(n, dtype=np.uint8)))),
    st.integers(1, 5),
    st.integers(1, 60),
)
def test_batches_bound_items_and_stated_bytes(items, size, most_bytes) -> None:
    """In order, at most ``size`` items and ``most_bytes`` stated bytes a batch
    (or one item alone), and each batch as long as those bounds allow."""
    cut = list(batches(items, size, most_bytes))
    assert [id(x) for batch in cut for x in batch] == [id(x) for x in items]
    stated = [[getattr(x, "nbytes", 0) for x in batch] for batch in cut]
    for weights, following in zip(stated, [*(s[0] for s in stated[1:]), None], strict=False):
        assert 1 <= len(weights) <= size
        assert len(weights) == 1 or sum(weights) <= most_bytes
        if following is not None:
            assert len(weights) == size or sum(weights) + following > most_bytes
