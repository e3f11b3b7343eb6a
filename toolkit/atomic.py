"""Atomic output: write to a temporary file beside the target, then rename.

A crash or an exception while writing never leaves a half-written file behind
(docs/design.md, "Error contract"). :func:`write_texts_atomic` writes several
files as a unit (a release and its trail): every one of them or none.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
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
    fd, tmp = _temp_beside(target)
    try:
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


def _temp_beside(target: Path) -> tuple[int, str]:
    """A new temporary file in ``target``'s directory, with the permissions
    ``target`` will have: ``(descriptor, path)``."""
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InputError("the output directory does not exist", path=directory)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        os.chmod(tmp, _final_mode(target))
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    return fd, tmp


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


def write_texts_atomic(files: Sequence[tuple[str | os.PathLike[str], str]]) -> None:
    """Write ``(path, text)`` files as a unit: every file or none.

    Each text is first written in full (and synced) to a temporary file beside
    its target; only then are the temporaries renamed over the targets, in
    order. A failure while writing leaves every target as it was; a rename that
    fails after earlier ones succeeded puts those targets back (their old
    content was kept through a hard link, or the file did not exist before).
    Two paths naming one file are refused before anything is written."""
    targets = [Path(path) for path, _ in files]
    if len({os.path.realpath(t) for t in targets}) < len(targets):
        raise InputError("two outputs of one write are the same file", path=targets[-1])
    staged: list[tuple[str, Path]] = []
    try:
        for target, (_, text) in zip(targets, files, strict=True):
            fd, tmp = _temp_beside(target)
            staged.append((tmp, target))
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
        _replace_together(staged)
    finally:
        for tmp, _ in staged:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def _replace_together(staged: Sequence[tuple[str, Path]]) -> None:
    """Rename each temporary over its target; on a failure undo the renames done."""
    done: list[tuple[Path, str | None]] = []
    try:
        for tmp, target in staged:
            old = _keep_old_content(target)
            try:
                os.replace(tmp, target)
            except BaseException:
                if old is not None:
                    os.unlink(old)
                raise
            done.append((target, old))
    except BaseException:
        for target, old in reversed(done):
            if old is None:
                os.unlink(target)
            else:
                os.replace(old, target)
        raise
    for _, old in done:
        if old is not None:
            os.unlink(old)


def _keep_old_content(target: Path) -> str | None:
    """A hard link (a copy where links are not supported) to ``target``'s
    current content, beside it; ``None`` when ``target`` does not exist."""
    if not target.exists():
        return None
    fd, keep = _temp_beside(target)
    os.close(fd)
    os.unlink(keep)
    try:
        os.link(target, keep)
    except OSError:
        shutil.copy2(target, keep)
    return keep
