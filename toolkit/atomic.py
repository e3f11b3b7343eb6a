"""Atomic output: write to a temporary file beside the target, then rename.

A crash or an exception while writing never leaves a half-written file behind
(docs/design.md, "Error contract").
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from .errors import InputError


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file next to ``path``; on success rename it over ``path``.

    ``mode`` is ``"w"`` (text) or ``"wb"`` (binary). On any exception the
    temporary file is removed and ``path`` is left as it was. The file gets the
    permissions a plain ``open`` would give it (see :func:`_final_mode`).
    """
    if mode not in ("w", "wb"):
        raise ValueError("atomic_open supports only 'w' and 'wb'")
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InputError("the output directory does not exist", path=directory)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        os.chmod(tmp, _final_mode(target))
        with os.fdopen(
            fd, mode, encoding=None if "b" in mode else encoding, newline=None if "b" in mode else ""
        ) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _final_mode(target: Path) -> int:
    """The permissions ``target`` would get from a plain ``open``: those of the
    file it replaces, else 0o666 less the umask (``mkstemp`` gives 0o600, which
    would make every output private to its owner)."""
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_open(path, "w") as handle:
        handle.write(text)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb") as handle:
        handle.write(data)
