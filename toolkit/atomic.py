"""Atomic output: write to a temporary file beside the target, then rename.

A crash or an exception while writing never leaves a half-written file behind
(docs/design.md, "Error contract"). This module is the only place that makes
temporary output files:

* a temporary file is named ``.<target name>.privtool-<pid>-<random>.tmp`` in
  the target's directory, so that the next run writing the same target removes
  the ones a killed run (``kill -9``) left behind: those whose process is gone
  (:func:`remove_stale_temporaries`);
* :func:`write_texts_atomic` writes several files as a unit (a release and its
  trail): every file is written to its temporary first, and the renames happen
  only when all of them were written; a rename that still fails puts back the
  files already renamed, so the targets end up all new or all as they were;
* every way the file system refuses (a directory as target, a missing or
  unwritable directory, a full disk) is one :class:`InputError` sentence naming
  the path, never a traceback.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

from .errors import InputError

TEMP_TAG = ".privtool-"
"""Marks a temporary output file: ``.<name>.privtool-<pid>-<random>.tmp``."""


def _temp_prefix(target: Path) -> str:
    return f".{target.name}{TEMP_TAG}{os.getpid()}-"


def _process_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this machine (one owned by another
    user counts as alive: its temporary file is not ours to remove)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return True
    return True


def remove_stale_temporaries(target: Path) -> list[Path]:
    """Remove the temporary files of ``target`` left by runs that were killed
    (their process no longer exists); returns what was removed. A directory
    that cannot be listed is left alone (the write that follows reports it)."""
    directory = target.parent if str(target.parent) else Path(".")
    pattern = re.compile(re.escape(f".{target.name}{TEMP_TAG}") + r"(\d+)-[^/]*\.tmp\Z")
    removed: list[Path] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        found = pattern.match(entry.name)
        if found is None or int(found.group(1)) == os.getpid() or _process_alive(int(found.group(1))):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed


def same_place(a: Path, b: Path) -> bool:
    """Whether two output paths name the same file (real paths)."""
    return os.path.realpath(a) == os.path.realpath(b)


def _writable_target(path: str | os.PathLike[str]) -> Path:
    """``path`` as a :class:`Path` once it is known that a file can be put
    there: not a directory, in a directory that exists."""
    target = Path(path)
    if target.is_dir():
        raise InputError("expected an output file name, found a directory", path=target)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InputError("the output directory does not exist", path=directory)
    return target


def _write_failure(target: Path, exc: OSError) -> InputError:
    """The one sentence for a file system refusal while writing ``target``."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return InputError(f"cannot write the file ({reason})", path=target)


def _make_temporary(target: Path) -> tuple[int, str]:
    remove_stale_temporaries(target)
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(target), suffix=".tmp", dir=directory)
    except OSError as exc:
        raise _write_failure(target, exc) from None
    try:
        os.chmod(tmp, _final_mode(target))
    except OSError:
        os.close(fd)
        os.unlink(tmp)
        raise
    return fd, tmp


class AtomicUnit:
    """Files written together: each :meth:`open` gives a handle on a temporary
    file beside its target; :meth:`commit` renames them all (see
    :func:`_rename_all`), :meth:`discard` removes them. Use it through
    :func:`atomic_unit`."""

    def __init__(self) -> None:
        self._files: list[tuple[IO, str, Path]] = []

    def open(self, path: str | os.PathLike[str], mode: str = "w", encoding: str | None = "utf-8") -> IO:
        """A handle on the temporary file of ``path`` (``"w"`` text, ``"wb"`` binary)."""
        if mode not in ("w", "wb"):
            raise ValueError("atomic output supports only 'w' and 'wb'")
        target = _writable_target(path)
        if any(same_place(target, other) for _, _, other in self._files):
            raise ValueError(f"{target} is written twice in one unit")
        fd, tmp = _make_temporary(target)
        binary = "b" in mode
        handle = os.fdopen(fd, mode, encoding=None if binary else encoding, newline=None if binary else "")
        self._files.append((handle, tmp, target))
        return handle

    def write_text(self, path: str | os.PathLike[str], text: str) -> None:
        """Add a UTF-8 file with ``text`` (written in :func:`text_pieces`)."""
        handle = self.open(path)
        for piece in text_pieces(text):
            handle.write(piece)

    def commit(self) -> None:
        for handle, _, target in self._files:
            try:
                handle.flush()
                os.fsync(handle.fileno())
                handle.close()
            except OSError as exc:
                raise _write_failure(target, exc) from None
        _rename_all([(tmp, target) for _, tmp, target in self._files])

    def discard(self) -> None:
        for handle, tmp, _ in self._files:
            with contextlib.suppress(OSError):
                handle.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


TEXT_PIECE_CHARS = 1 << 22
"""Characters of a text encoded at a time (:func:`text_pieces`): at most 16 MiB
of UTF-8, under glibc's 32 MiB threshold above which every buffer is a fresh
mapping, faulted in anew (docs/results/scale.md, "Session 10: disassociate at 5M")."""


def text_pieces(text: str) -> Iterator[str]:
    """``text`` in consecutive pieces of :data:`TEXT_PIECE_CHARS` characters,
    so that a large text is encoded without a copy of it whole (a piece never
    splits a character: the pieces' encodings, concatenated, are the text's)."""
    for start in range(0, len(text), TEXT_PIECE_CHARS):
        yield text[start : start + TEXT_PIECE_CHARS]


@contextlib.contextmanager
def atomic_unit() -> Iterator[AtomicUnit]:
    """Write several files as a unit: all of them or none. On any exception
    every temporary file is removed and the targets are left as they were; an
    ``OSError`` while writing (disk full) becomes an :class:`InputError`."""
    unit = AtomicUnit()
    try:
        yield unit
        unit.commit()
    except OSError as exc:
        target = unit._files[-1][2] if unit._files else Path(".")
        raise _write_failure(target, exc) from None
    finally:
        unit.discard()


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file next to ``path``; on success rename it over ``path``.

    ``mode`` is ``"w"`` (text) or ``"wb"`` (binary). On any exception the
    temporary file is removed and ``path`` is left as it was; an ``OSError``
    (disk full, permission denied) becomes an :class:`InputError` naming
    ``path``. The file gets the permissions a plain ``open`` would give it
    (see :func:`_final_mode`).
    """
    with atomic_unit() as unit:
        yield unit.open(path, mode, encoding)


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
    write_texts_atomic([(path, text)])


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb") as handle:
        handle.write(data)


def write_texts_atomic(files: Sequence[tuple[str | os.PathLike[str], str]]) -> None:
    """Write several UTF-8 files as a unit: all of them or none (see the module
    docstring). The targets must be distinct files."""
    with atomic_unit() as unit:
        for path, text in files:
            unit.write_text(path, text)


def _rename_all(moves: list[tuple[str, Path]]) -> None:
    """Rename each temporary over its target; if one rename fails, put the
    targets already replaced back as they were (from hard-linked backups) and
    raise the failure."""
    backups: list[tuple[Path, str | None]] = []  # (target, its old content; None: it did not exist)
    try:
        for tmp, target in moves:
            backup = _backup(target) if target.exists() else None
            try:
                os.replace(tmp, target)
            except OSError as exc:
                if backup is not None:
                    os.unlink(backup)
                raise _write_failure(target, exc) from None
            backups.append((target, backup))
    except BaseException:
        for target, backup in reversed(backups):
            with contextlib.suppress(OSError):
                if backup is None:
                    os.unlink(target)
                else:
                    os.replace(backup, target)
        raise
    finally:
        for _, backup in backups:
            if backup is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(backup)


def _backup(target: Path) -> str:
    """A temporary hard link to (or, where links are refused, a copy of) the
    current ``target``, to put it back if a later rename of the unit fails."""
    fd, backup = _make_temporary(target)
    os.close(fd)
    try:
        os.unlink(backup)
        os.link(target, backup)
    except OSError:
        shutil.copy2(target, backup)
    return backup
