"""The run context handed to every component (docs/design.md, "Data flow").

A :class:`Context` carries the executor, the seed (split per unit of work),
progress reporting and logging, so that plugins never print, spawn processes or
seed global generators on their own.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

import numpy as np

from .errors import TimedOut
from .executors import Executor, SerialExecutor

T = TypeVar("T")
R = TypeVar("R")


class ProgressTask(Protocol):
    def advance(self, amount: int = 1) -> None: ...


class ProgressReporter(Protocol):
    """Opens one task per stage; the CLI draws each as a rich progress bar."""

    def task(self, description: str, total: int | None) -> Any:
        """A context manager yielding a :class:`ProgressTask`."""
        ...


class _SilentTask:
    def advance(self, amount: int = 1) -> None:
        pass


class SilentProgress:
    """Progress that shows nothing (library use and tests)."""

    @contextmanager
    def task(self, description: str, total: int | None) -> Iterator[ProgressTask]:
        yield _SilentTask()


def _key_words(key: Sequence[int | str]) -> list[int]:
    words: list[int] = []
    for part in key:
        if isinstance(part, bool) or not isinstance(part, (int, str)):
            raise TypeError(f"an RNG key part must be an int or a str, not {part!r}")
        if isinstance(part, int):
            words.append(part & 0xFFFFFFFF)
            words.append((part >> 32) & 0xFFFFFFFF)
        else:
            digest = hashlib.sha256(part.encode("utf-8")).digest()
            words.extend(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    return words


def past(deadline: float | None) -> bool:
    """Whether a wall-clock ``deadline`` (as in :attr:`Context.deadline`, which
    workers in other processes receive as a number) has passed."""
    return deadline is not None and time.time() >= deadline


@dataclass(frozen=True)
class SeedSplitter:
    """A picklable source of per-unit generators: hand it to worker functions
    (``ctx.seeds``) so that a unit draws the same numbers wherever it runs.
    ``key`` prefixes every key (the unit a :meth:`Context.unit` context is for)."""

    seed: int = 0
    key: tuple[int | str, ...] = ()

    def rng(self, *key: int | str) -> np.random.Generator:
        """A generator that depends only on the seed, the prefix and ``key``."""
        words = _key_words((*self.key, *key))
        return np.random.default_rng(np.random.SeedSequence([self.seed & 0xFFFFFFFF, *words]))


@dataclass
class Context:
    """Executor, seed, progress and logger for one run.

    ``rng(*key)`` returns a generator that depends only on the seed and the key
    (for instance ``ctx.rng("safe-disassociation", cluster_id)``), never on the
    order in which units run or where: this is what makes a release
    byte-identical across executors and worker counts.
    """

    seed: int = 0
    executor: Executor = field(default_factory=SerialExecutor)
    progress: ProgressReporter = field(default_factory=SilentProgress)
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("privtool"))
    key: tuple[int | str, ...] = ()
    unit_occurrences: int = 250_000
    """About how many item occurrences one unit of mapped work holds, for methods
    that batch clusters into units (:func:`privtool.chain.chunk_clusters`): small
    inputs then make fewer than two units per worker and run in the calling
    process (starting a pool costs more than VERPART on them), large ones spread
    over the workers. Results never depend on it."""
    deadline: float | None = None
    """Wall-clock time (``time.time()``) after which a verifier stops and
    reports what it could not finish as undecided (``holds`` None,
    ``details["timed_out"]``), never as holding; None: no bound. Wall-clock
    (not monotonic) so that workers in other processes can compare it too."""

    @classmethod
    def of(cls, seeds: SeedSplitter) -> Context:
        """A serial context drawing from ``seeds`` (in a worker, for one unit)."""
        return cls(seed=seeds.seed, key=seeds.key)

    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return past(self.deadline)

    def check_deadline(self) -> None:
        """Raise :class:`TimedOut` once the deadline has passed (for loops that
        cannot report a partial result)."""
        if self.expired():
            raise TimedOut

    def with_time_limit(self, seconds: float | None) -> Context:
        """A copy whose deadline is ``seconds`` from now (no bound for None)."""
        return replace(self, deadline=None if seconds is None else time.time() + seconds)

    @property
    def seeds(self) -> SeedSplitter:
        """The picklable seed splitter, for functions that run in workers."""
        return SeedSplitter(self.seed, self.key)

    def unit(self, *key: int | str) -> Context:
        """A serial, silent context for one unit of work whose generators are
        keyed by ``key`` first: ``ctx.unit("cluster", 7).rng("x")`` is
        ``ctx.rng("cluster", 7, "x")``, the same wherever the unit runs."""
        return Context(
            seed=self.seed,
            log=self.log,
            key=(*self.key, *key),
            unit_occurrences=self.unit_occurrences,
            deadline=self.deadline,
        )

    def rng(self, *key: int | str) -> np.random.Generator:
        """A generator seeded from ``(seed, *key)``; see the class docstring."""
        return self.seeds.rng(*key)

    def map(self, fn: Callable[[T], R], items: Sequence[T], description: str) -> list[R]:
        """Apply ``fn`` to every item through the executor, results in input order,
        advancing a progress bar called ``description``."""
        results: list[R] = []
        with self.progress.task(description, len(items)) as task:
            for result in self.executor.imap(fn, items):
                results.append(result)
                task.advance()
        return results

    @contextmanager
    def stage(self, description: str, total: int | None = None) -> Iterator[ProgressTask]:
        """A progress task for work that is not a map (``total`` may be unknown)."""
        with self.progress.task(description, total) as task:
            yield task
