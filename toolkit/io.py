"""Reading and writing dataset files: compression, format detection, errors.

The formats themselves are components (hook ``privtool_formats``). This module
picks one from the file name (``data.csv.gz`` -> ``csv`` in gzip; the longest
matching extension wins, so ``data.long.csv`` -> ``csv-long``) unless a format is
named, decompresses gzip / bz2 / xz transparently, and turns every way a read
can fail into one :class:`~privtool.errors.InputError` sentence. Writes are
atomic; compressed output is byte-reproducible (no name or time in the header).
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import hashlib
import io
import itertools
import lzma
import os
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import IO, Any, cast

from .atomic import AtomicUnit, atomic_unit
from .dataset import Dataset
from .errors import InputError, OutputError, ParameterError
from .params import resolve
from .registry import Registry

_OPENERS: dict[str, Callable[[IO[bytes]], IO[bytes]]] = {
    # The compressed file objects are binary streams; typeshed does not declare
    # them as ``IO[bytes]``, hence the casts.
    ".gz": lambda f: cast(IO[bytes], gzip.GzipFile(fileobj=f, mode="rb")),
    ".bz2": lambda f: cast(IO[bytes], bz2.BZ2File(f, mode="rb")),
    ".xz": lambda f: cast(IO[bytes], lzma.LZMAFile(f, mode="rb")),
}
_MAGIC: dict[str, bytes] = {".gz": b"\x1f\x8b", ".bz2": b"BZh", ".xz": b"\xfd7zXZ\x00"}
_NAMES = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}

STREAM_BLOCK_BYTES = 1 << 23
"""Input bytes per block of :func:`read_dataset_blocks` (8 MiB: parsing a block
takes several bytes of arrays per input byte)."""


def split_suffixes(path: str | os.PathLike[str]) -> tuple[str, str]:
    """``("csv", ".gz")`` for ``data.csv.gz``; ``("dat", "")`` for ``x.dat``;
    ``("long.csv", "")`` for ``x.long.csv`` (everything after the first dot of
    the name, less the compression suffix)."""
    name = Path(path).name.lower()
    compression = ""
    for suffix in _OPENERS:
        if name.endswith(suffix):
            compression = suffix
            name = name[: -len(suffix)]
            break
    ext = name.split(".", 1)[1] if "." in name else ""
    return ext, compression


def choose_format(registry: Registry, path: str | os.PathLike[str], name: str | None) -> Any:
    """The format component named ``name``, or the one whose extension is the
    longest dot-separated tail of the file name (compression suffix removed)."""
    if name:
        return registry.get("format", name)
    ext, _ = split_suffixes(path)
    best, best_len = None, -1
    for fmt in registry.all("format"):
        for candidate in fmt.extensions:
            if (ext == candidate or ext.endswith("." + candidate)) and len(candidate) > best_len:
                best, best_len = fmt, len(candidate)
    if best is None:
        known = "; ".join(f"{f.name} (.{', .'.join(f.extensions)})" for f in registry.all("format"))
        raise ParameterError(f"cannot tell the format of {path} from its extension; pass --format (known: {known}).")
    return best


def check_readable(path: Path) -> None:
    """An :class:`InputError` unless ``path`` is a readable file."""
    if not path.exists():
        raise InputError("no such file", path=path)
    if path.is_dir():
        raise InputError("expected a file, found a directory", path=path)
    if not os.access(path, os.R_OK):
        raise InputError("permission denied", path=path)


def check_output(path: Path) -> None:
    """An :class:`InputError` when ``path`` cannot be an output file name."""
    if path.is_dir():
        raise InputError("expected an output file name, found a directory", path=path)
    if not path.parent.is_dir():
        raise InputError("the output directory does not exist", path=path.parent)


def read_chunks(path: str | os.PathLike[str], size: int = -1) -> Iterator[bytes]:
    """The content of ``path`` in consecutive non-empty chunks of ``size``
    bytes (the last may be shorter; ``-1``: the whole content as one chunk),
    decompressed when its first bytes are a gzip, bzip2 or xz header (whatever
    the name says), without a UTF-8 BOM. ``size`` is at least 3 (a BOM is never cut).

    A name ending in ``.gz``/``.bz2``/``.xz`` whose content is not compressed
    that way is an error (a renamed or truncated download). The file is read
    once from start to end, so a FIFO or ``/dev/stdin`` works too (it is read
    whole before the first chunk: it cannot be rewound after the header test)."""
    path = Path(path)
    check_readable(path)
    _, named = split_suffixes(path)
    found = ""
    try:
        with open(path, "rb") as raw_file:
            source: IO[bytes] = raw_file if raw_file.seekable() else io.BytesIO(raw_file.read())
            head = source.read(8)
            source.seek(0)
            found = next((suffix for suffix, magic in _MAGIC.items() if head.startswith(magic)), "")
            if named and found != named:
                raise InputError(
                    f"the name ends in {named} but the content is not {_NAMES[named]}-compressed", path=path
                )
            stream = _OPENERS[found](source) if found else source
            chunk = stream.read(size)
            if chunk.startswith(codecs.BOM_UTF8):
                chunk = chunk[len(codecs.BOM_UTF8) :]
            while chunk:
                yield chunk
                chunk = stream.read(size) if size >= 0 else b""
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        kind = f"{_NAMES[found]}-compressed " if found else ""
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
        raise InputError(f"cannot read the {kind}file ({reason})", path=path) from None


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The whole content of ``path`` as :func:`read_chunks` gives it."""
    return b"".join(read_chunks(path))


def read_dataset(
    registry: Registry, path: str | os.PathLike[str], fmt: str | None = None, options: dict[str, Any] | None = None
) -> Dataset:
    """Read a dataset file; ``options`` are the format's parameters (e.g. ``delimiter``).

    An empty file, or one without a single item, is an error: there is nothing to publish."""
    path = Path(path)
    check_readable(path)
    component = choose_format(registry, path, fmt)
    params = resolve(component.params, options or {}, f"format {component.name!r}")
    data = read_bytes(path)
    if not data or data.isspace():
        raise InputError("the file is empty", path=path)
    dataset = component.read_bytes(data, str(path), params)
    _require_items(path, dataset.n_records, dataset.n_occurrences)
    return dataset


def _require_items(path: Path, records: int, occurrences: int) -> None:
    if occurrences == 0:
        raise InputError(f"the file holds {records} records but not a single item", path=path)


def read_dataset_blocks(
    registry: Registry,
    path: str | os.PathLike[str],
    fmt: str | None = None,
    options: dict[str, Any] | None = None,
    block_bytes: int = STREAM_BLOCK_BYTES,
) -> Iterator[Dataset]:
    """The records of a dataset file as consecutive blocks of about
    ``block_bytes`` of (decompressed) input each, so that a pass over a large
    file never holds it whole. Each block is a :class:`Dataset` over its own
    vocabulary (labels, not ids, are comparable across blocks).

    Only a format that declares :attr:`~privtool.components.Format.line_per_record`
    is cut (after a line end); any other comes as one block, read by
    :func:`read_dataset`. Errors are those of :func:`read_dataset`, with the
    line numbers of the whole file; an empty file or one without an item is
    reported after the last block."""
    path = Path(path)
    check_readable(path)
    component = choose_format(registry, path, fmt)
    if not component.line_per_record:
        yield read_dataset(registry, path, fmt, options)
        return
    params = resolve(component.params, options or {}, f"format {component.name!r}")
    records = occurrences = 0
    blank = True
    pending = b""
    for chunk in itertools.chain(read_chunks(path, block_bytes), [b""]):
        data = pending + chunk
        cut = data.rfind(b"\n") + 1 if chunk else len(data)
        block, pending = data[:cut], data[cut:]
        if not block:
            continue
        blank = blank and block.isspace()
        try:
            dataset = component.read_bytes(block, str(path), params)
        except InputError as exc:
            if exc.line is None:
                raise
            raise InputError(exc.problem, path=exc.path, line=exc.line + records) from None
        records += dataset.n_records
        occurrences += dataset.n_occurrences
        yield dataset
    if blank:
        raise InputError("the file is empty", path=path)
    _require_items(path, records, occurrences)


def open_compressed_writer(raw_out: IO[bytes], compression: str) -> IO[bytes]:
    """A binary sink compressing into ``raw_out``: deterministic bytes (gzip
    header without file name and with mtime 0)."""
    if compression == ".gz":
        return cast(IO[bytes], gzip.GzipFile(filename="", fileobj=raw_out, mode="wb", mtime=0))
    if compression == ".bz2":
        return cast(IO[bytes], bz2.BZ2File(raw_out, mode="wb"))
    if compression == ".xz":
        return cast(IO[bytes], lzma.LZMAFile(raw_out, mode="wb"))
    return raw_out


def write_dataset(
    registry: Registry,
    dataset: Dataset,
    path: str | os.PathLike[str],
    fmt: str | None = None,
    options: dict[str, Any] | None = None,
    unit: AtomicUnit | None = None,
) -> None:
    """Write ``dataset`` atomically, compressed when the name ends in .gz/.bz2/.xz.

    A dataset the format cannot hold raises :class:`OutputError` naming ``path``
    and leaves no file behind. With ``unit`` the file is committed with the
    unit's other files (:func:`privtool.atomic.atomic_unit`)."""
    write_dataset_blocks(registry, [dataset], path, fmt, options, unit)


def write_dataset_blocks(
    registry: Registry,
    blocks: Iterable[Dataset],
    path: str | os.PathLike[str],
    fmt: str | None = None,
    options: dict[str, Any] | None = None,
    unit: AtomicUnit | None = None,
) -> None:
    """Write consecutive blocks of records as one file, each block written as it
    arrives (memory stays bounded by one block); atomic, compressed and checked
    like :func:`write_dataset`."""
    path = Path(path)
    check_output(path)
    component = choose_format(registry, path, fmt)
    params = resolve(component.params, options or {}, f"format {component.name!r}")
    _, compression = split_suffixes(path)
    try:
        with nullcontext(unit) if unit is not None else atomic_unit() as files:
            raw_out = files.open(path, "wb")
            sink = open_compressed_writer(raw_out, compression)
            text = io.TextIOWrapper(sink, encoding="utf-8", newline="")
            component.write_blocks(blocks, text, params)
            text.flush()
            text.detach()
            if sink is not raw_out:
                sink.close()
    except OutputError as exc:
        raise OutputError(f"{path}: {exc.message}") from None
    except OSError as exc:
        raise InputError(f"cannot write the file ({exc.strerror or exc})", path=path) from None


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
