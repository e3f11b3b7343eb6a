"""Work shared by the components of one assessment.

Several attacks and metrics derive the same index from a release (every
cluster's chunks with their cover analysis, for instance). Within one
:func:`privtool.assess.assess` run the release does not change (components
receive it read-only), so such an index can be built once and handed to every
component that asks for it: :func:`shared` does that while a :func:`sharing`
block is open (the engine opens one per assessment), and simply builds the
value each time outside one, so a component called directly (a test, a
notebook) never sees an index of an earlier, since changed, release.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_MEMO: ContextVar[dict[tuple[int, str], tuple[object, Any]] | None] = ContextVar("privtool_memo", default=None)


@contextmanager
def sharing() -> Iterator[None]:
    """Let :func:`shared` keep what it builds until the block ends."""
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def shared(subject: object, key: str, build: Callable[[], T]) -> T:
    """``build()``, made once per ``subject`` (by identity) and ``key`` within
    the open :func:`sharing` block; made afresh on every call outside one."""
    memo = _MEMO.get()
    if memo is None:
        return build()
    slot = (id(subject), key)
    held = memo.get(slot)
    if held is None or held[0] is not subject:
        held = memo[slot] = (subject, build())  # holding the subject keeps its id from being reused
    value: T = held[1]
    return value
