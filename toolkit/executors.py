"""Executors: where per-unit work (clusters, chunks, targets) runs.

All executors share one contract: :meth:`Executor.map` applies a picklable
top-level function to every item and returns the results **in input order**, so
the result never depends on the executor or the number of workers. Randomness
is never drawn inside an executor; units get their own seeded generator from
:meth:`privtool.context.Context.rng`.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Protocol, TypeVar

from .errors import ParameterError

T = TypeVar("T")
R = TypeVar("R")


def batch_size(n_items: int, workers: int) -> int:
    """Items sent to a worker at a time: about 8 batches per worker, at most 256
    items each, so thousands of small units do not cost a round trip each and
    the workers still share the load evenly."""
    return max(1, min(256, n_items // (8 * max(1, workers))))


BATCH_BYTES = 1 << 24
"""Most bytes of stated payload (:func:`batches`) in one batch: a task's
arguments stay well under glibc's 32 MiB mmap ceiling however large the data,
while :func:`batch_size` alone would put a fixed fraction of the items, and so
of the data, in each batch."""


def batches(items: Sequence[T], size: int, most_bytes: int = BATCH_BYTES) -> Iterator[list[T]]:
    """``items`` in order, in consecutive lists of at most ``size`` items that
    hold at most ``most_bytes`` of the ``nbytes`` their items state (a payload
    of arrays, such as a numpy array; an item without ``nbytes`` counts 0), or
    one item alone when it states more. Items are taken one at a time, so a
    lazy sequence builds only the batch at hand."""
    batch: list[T] = []
    held = 0
    for item in items:
        weight = int(getattr(item, "nbytes", 0))
        if batch and (len(batch) == size or held + weight > most_bytes):
            yield batch
            batch, held = [], 0
        batch.append(item)
        held += weight
    if batch:
        yield batch


IN_FLIGHT_PER_WORKER = 4
"""Batches submitted per worker ahead of the one being consumed: bounds the
payloads and results the calling process holds, whatever the number of items."""


def in_order_window(submit: Callable[[list[T]], Any], items: Sequence[T], workers: int) -> Iterator[R]:
    """The results for ``items``, in input order, run as :func:`batches` of
    :func:`batch_size` items for ``workers`` workers, where ``submit(batch)``
    starts a batch and returns a future whose ``result()`` is that batch's list
    of results; at most :data:`IN_FLIGHT_PER_WORKER` batches per worker are in
    flight, so a lazy sequence of items is built only that far ahead."""
    limit = IN_FLIGHT_PER_WORKER * workers
    pending: deque[Any] = deque()
    for batch in batches(items, batch_size(len(items), workers)):
        pending.append(submit(batch))
        if len(pending) >= limit:
            yield from pending.popleft().result()
    while pending:
        yield from pending.popleft().result()


def fork_is_safe() -> bool:
    """Whether a process forked now by the calling thread is a sound copy of
    this one: true when the calling thread is the process's only (Python)
    thread. Another thread may hold a lock at the fork (a module being
    imported, a stream being written, a logging handler) that the copy, which
    has only the forking thread, would then wait for forever. The executors
    fork their workers from the calling process only then, and from a fork
    server, a single-threaded process of its own, otherwise."""
    return threading.active_count() == 1


def apply_all(fn: Callable[[T], R], batch: list[T]) -> list[R]:
    """``fn`` over one batch, in a worker process."""
    return [fn(item) for item in batch]


class Executor(Protocol):
    """Runs ``fn`` over items, yielding results in input order."""

    name: str

    @property
    def workers(self) -> int:
        """How many units run at once (a Dask executor may wait for its cluster to tell)."""
        ...

    def imap(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]: ...

    def close(self) -> None: ...


class SerialExecutor:
    """Everything in the calling process; the reference for every other executor."""

    name = "serial"
    workers = 1

    def imap(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        return map(fn, items)

    def close(self) -> None:
        pass


class ProcessExecutor:
    """A local process pool of ``workers`` processes.

    When the executor is made by a process whose only thread is the caller
    (:func:`fork_is_safe`), as a command's is when it begins
    (:func:`privtool.cli.common.run_options`, before it reads its input), the
    pool starts at once and its workers are forked from this process: copies
    of it, with numpy and privtool already imported. Otherwise the pool starts
    at the first map that needs it, its workers forked from a fork server,
    which starts as a fresh interpreter and imports what the work needs itself.

    Items are sent in batches (:func:`batches`) so that thousands of small
    clusters do not cost a round trip each, with a bounded window of batches
    in flight (:func:`in_order_window`). Short maps (fewer items than ``2 * workers``) run serially:
    starting processes would cost more than it saves, and the result is the same.
    """

    name = "process"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or os.cpu_count() or 1
        self._pool: ProcessPoolExecutor | None = None
        if self.workers > 1 and fork_is_safe():
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("fork"))
            # A fork-context pool forks all its workers, from the calling
            # thread, at its first submit: now, while the process is small.
            self._pool.submit(int).result()

    def imap(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        if self.workers <= 1 or len(items) < 2 * self.workers:
            return map(fn, items)
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("forkserver"))
        pool = self._pool
        return in_order_window(lambda batch: pool.submit(apply_all, fn, batch), items, self.workers)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


EXECUTOR_NAMES = ("serial", "process", "dask")


def make_executor(name: str, workers: int | None = None, scheduler: str | None = None) -> Any:
    """Build the executor called ``name`` (``serial``, ``process`` or ``dask``)."""
    if name == "serial":
        return SerialExecutor()
    if name == "process":
        return ProcessExecutor(workers)
    if name == "dask":
        from .dask_executor import DaskExecutor  # imported only when asked for

        return DaskExecutor(scheduler=scheduler, workers=workers)
    raise ParameterError(f"--executor must be one of {', '.join(EXECUTOR_NAMES)}, not {name!r}.")
