"""Keeping Python's cyclic garbage collector off large, long-lived structures.

Parsing a release builds millions of small lists; every few thousand
allocations the collector walks all tracked containers, so reading a large
release spent more than half its time collecting nothing (JSON data holds no
cycles). :func:`paused_gc` switches the collector off while such data is built;
:func:`keep_for_the_run` moves what exists into the permanent generation
(``gc.freeze``), so later collections during the command skip it. Reference
counting still frees every object, so nothing leaks unless it is in a cycle.

Freezing is global and lasting (whatever the process holds, its cyclic garbage
included, is never collected again, and it cannot be undone selectively), so
only code that owns the process calls :func:`keep_for_the_run`: a command, after
reading its release (:func:`privtool.cli.common.read_command_release`). Library
functions such as :func:`privtool.release.read_release` and the Python API only
pause the collector for a block and leave it as they found it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Collector off inside the block (restored to its previous state after)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def keep_for_the_run() -> None:
    """Exclude every object alive now from later collections (``gc.freeze``),
    for the rest of the process: only for code that owns the process."""
    gc.freeze()
