"""Reading and writing dataset files: compression, format detection, errors.

The formats themselves are components (hook ``privtool_formats``). This module
picks one from the file name (``data.csv.gz`` -> ``csv`` in gzip) unless a format
is named, opens the file transparently through gzip / bz2 / xz, and turns every
way a read can fail into one :class:`~privtool.errors.InputError` sentence.
Writes are atomic.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from .atomic import atomic_open
from .dataset import Dataset
from .errors import InputError, ParameterError
from .params import resolve
from .registry import Registry

_COMPRESSORS: dict[str, Callable[..., IO[bytes]]] = {".gz": gzip.GzipFile, ".bz2": bz2.BZ2File, ".xz": lzma.LZMAFile}


def split_suffixes(path: str | os.PathLike[str]) -> tuple[str, str]:
    """``("csv", ".gz")`` for ``data.csv.gz``; ``("dat", "")`` for ``x.dat``."""
    name = Path(path).name.lower()
    compression = ""
    for suffix in _COMPRESSORS:
        if name.endswith(suffix):
            compression = suffix
            name = name[: -len(suffix)]
            break
    ext = name.rsplit(".", 1)[1] if "." in name else ""
    return ext, compression


def choose_format(registry: Registry, path: str | os.PathLike[str], name: str | None) -> Any:
    """The format component named ``name``, or the one whose extension matches."""
    if name:
        return registry.get("format", name)
    ext, _ = split_suffixes(path)
    for fmt in registry.all("format"):
        if ext in fmt.extensions:
            return fmt
    known = ", ".join(f"{f.name} (.{', .'.join(f.extensions)})" for f in registry.all("format"))
    raise ParameterError(f"cannot tell the format of {path} from its extension; pass --format (known: {known}).")


def _check_readable(path: Path) -> None:
    if not path.exists():
        raise InputError("no such file", path=path)
    if path.is_dir():
        raise InputError("expected a file, found a directory", path=path)
    if not os.access(path, os.R_OK):
        raise InputError("permission denied", path=path)


def read_dataset(
    registry: Registry, path: str | os.PathLike[str], fmt: str | None = None, options: dict[str, Any] | None = None
) -> Dataset:
    """Read a dataset file; ``options`` are the format's parameters (e.g. ``delimiter``)."""
    path = Path(path)
    _check_readable(path)
    component = choose_format(registry, path, fmt)
    params = resolve(component.params, options or {}, f"format {component.name!r}")
    _, compression = split_suffixes(path)
    try:
        with open(path, "rb") as raw_file:
            raw: IO[bytes] = _COMPRESSORS[compression](fileobj=raw_file) if compression else raw_file
            text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
            dataset = component.read(text, str(path), params)
    except UnicodeDecodeError as exc:
        raise InputError(f"the file is not UTF-8 text ({exc.reason})", path=path) from None
    except (OSError, EOFError, lzma.LZMAError) as exc:
        kind = f"{compression[1:]}-compressed " if compression else ""
        raise InputError(f"cannot read the {kind}file: {exc}", path=path) from None
    if dataset.n_records == 0:
        raise InputError("the file holds no records", path=path)
    return dataset


def write_dataset(
    registry: Registry,
    dataset: Dataset,
    path: str | os.PathLike[str],
    fmt: str | None = None,
    options: dict[str, Any] | None = None,
) -> None:
    """Write ``dataset`` atomically, compressed when the name ends in .gz/.bz2/.xz."""
    write_dataset_blocks(registry, [dataset], path, fmt, options)


def write_dataset_blocks(
    registry: Registry,
    blocks: Iterable[Dataset],
    path: str | os.PathLike[str],
    fmt: str | None = None,
    options: dict[str, Any] | None = None,
) -> None:
    """Write consecutive blocks of records as one file, each block written as it
    arrives (memory stays bounded by one block); atomic and compressed like
    :func:`write_dataset`."""
    path = Path(path)
    component = choose_format(registry, path, fmt)
    params = resolve(component.params, options or {}, f"format {component.name!r}")
    _, compression = split_suffixes(path)
    with atomic_open(path, "wb") as raw_out:
        sink: IO[bytes] = raw_out
        if compression == ".gz":
            sink = gzip.GzipFile(filename="", fileobj=raw_out, mode="wb", mtime=0)
        elif compression:
            sink = _COMPRESSORS[compression](raw_out, mode="wb")
        text = io.TextIOWrapper(sink, encoding="utf-8", newline="")
        component.write_blocks(blocks, text, params)
        text.flush()
        text.detach()
        if sink is not raw_out:
            sink.close()


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
