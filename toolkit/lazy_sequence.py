"""A read-only sequence whose elements are built when they are asked for.

Several views over a release's arrays (batches for the executor, per-cluster
views) hold only what they need to build an element and build it on each
access, so that nothing holds every element at once (issue 20).
:class:`LazySequence` gives them one indexing contract: an integer index may be
negative and raises :class:`IndexError` out of range, a slice gives a list,
and iteration walks ``range(len(self))``, so an :class:`IndexError` raised
while *building* an element propagates instead of silently ending the
iteration (``Sequence``'s default ``__iter__`` would stop there).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator, Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class LazySequence(Sequence[T]):
    """Subclasses define ``__len__`` and :meth:`_build` (for ``0 <= index < len(self)``)."""

    @abstractmethod
    def _build(self, index: int) -> T:
        """Element ``index``, with ``0 <= index < len(self)``."""

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        size = len(self)
        if isinstance(index, slice):
            return [self._build(i) for i in range(*index.indices(size))]
        if not -size <= index < size:
            raise IndexError(index)
        return self._build(index % size)

    def __iter__(self) -> Iterator[T]:
        return (self._build(i) for i in range(len(self)))
