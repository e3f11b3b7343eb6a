"""The Python API (docs/python-api.md): what ``import privtool`` offers a
notebook or a pipeline, on the same code path as the command line.

Every function here does what the command of the same name does, by calling
the same code: :func:`anonymize` runs :func:`privtool.pipeline.run_method` and
:meth:`Result.save` :func:`privtool.pipeline.write_outcome`, exactly as
``privtool anonymize`` does, so that a release made here is byte for byte the
release the command makes with the same data, parameters and seed. Parameter
and method names are checked by the same code too, and fail with the same
one-sentence errors (:class:`~privtool.errors.ParameterError`, a
:class:`ValueError`).

The registry of plugins is loaded once, on first use, with every installed
plugin.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from . import notebook
from .components import Outcome
from .context import Context
from .dataset import Dataset
from .executors import Executor, make_executor
from .io import read_dataset
from .pipeline import run_method, write_outcome
from .registry import Registry, load_registry
from .release import Release, read_release
from .trail import Trail

PathLike = str | os.PathLike[str]


@functools.cache
def default_registry() -> Registry:
    """Every installed plugin, loaded on first use (as the command line does without ``-p``)."""
    return load_registry()


def read(path: PathLike, format: str | None = None, **format_options: Any) -> Dataset:
    """Read a dataset file, as every command reads ``DATA``.

    ``format`` is a format name (``fimi``, ``basket``, ``spmf``, ``csv``,
    ``csv-long``, ``jsonl``, or a plugin's); by default it follows from the
    extension. ``format_options`` are the format's own parameters
    (``delimiter=";"``). gzip, bzip2 and xz files are read transparently. A file
    that cannot be read raises :class:`~privtool.errors.InputError` naming the
    file and the line; an unknown format or option a
    :class:`~privtool.errors.ParameterError`."""
    return read_dataset(default_registry(), path, format, format_options)


def load_release(path: PathLike) -> Release:
    """Read and validate a release file (any version privtool reads)."""
    return read_release(path)


def as_dataset(data: Dataset | PathLike) -> Dataset:
    """``data`` itself when it is a :class:`Dataset`, else the file it names
    (read as :func:`read` would). Anything else is refused, with the function
    that makes a dataset out of it."""
    if isinstance(data, Dataset):
        return data
    if isinstance(data, (str, os.PathLike)):
        return read(data)
    kind = type(data).__name__
    if type(data).__module__.partition(".")[0] == "pandas":
        raise TypeError(f"expected a Dataset or a file path, not a pandas {kind}; make one with Dataset.from_pandas.")
    raise TypeError(f"expected a Dataset or a file path, not a {kind}; make one with Dataset.from_records.")


def sanitizer_names(sanitizers: str | Sequence[str]) -> tuple[str, ...]:
    """The sanitizer names: one name, or a sequence of names (never the
    characters of a name)."""
    if isinstance(sanitizers, str):
        return (sanitizers,)
    names = tuple(sanitizers)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"sanitizers must be names (strings), not {name!r}.")
    return names


@contextmanager
def running(seed: int, executor: str | Executor) -> Iterator[Context]:
    """The run context of one call: ``executor`` is a name (``serial``,
    ``process``, ``dask``), closed on the way out, or an executor object the
    caller owns. Results never depend on the executor, only on the seed."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an integer, not {seed!r}.")
    owned = isinstance(executor, str)
    chosen = make_executor(executor) if isinstance(executor, str) else executor
    try:
        yield Context(seed=seed, executor=chosen)
    finally:
        if owned:
            chosen.close()


class Result:
    """A release made by :func:`anonymize`, with its private trail and the data
    it was made from.

    ``release`` is what you publish; ``trail`` (which record went where, what
    was suppressed or invented) and ``original`` (the input) are private: never
    publish them."""

    def __init__(self, outcome: Outcome, original: Dataset, seed: int, registry: Registry) -> None:
        self._outcome = outcome
        self.original = original
        self.seed = seed
        self._registry = registry

    @property
    def release(self) -> Release:
        """The public release."""
        return self._outcome.release

    @property
    def trail(self) -> Trail:
        """The private audit trail that ties the release to its input."""
        return self._outcome.trail

    def save(self, release_path: PathLike, trail_path: PathLike | None) -> None:
        """Write the release and its trail, atomically and as a unit (both files
        or neither), as ``privtool anonymize -o RELEASE --trail TRAIL`` does
        (same bytes). ``trail_path=None`` writes the release alone."""
        write_outcome(self._outcome, release_path, trail_path)

    def _summary(self) -> str:
        params = self.release.params
        method = str(params.get("method", "?"))
        sanitizers = params.get("sanitizers") or []
        chain = " + ".join([method, *sanitizers])
        return f"{self.release.kind} release by {chain} from {self.original.n_records:,} records"

    def __repr__(self) -> str:
        return f"<privtool.Result: {self._summary()}>"

    def _repr_html_(self) -> str:
        rows = [(f"param {k}", v) for k, v in self.release.params.items() if k not in ("method", "sanitizers")]
        rows += [(f"stat {k}", v) for k, v in self.release.stats.items()]
        return notebook.headline(self._summary()) + notebook.table(("field", "value"), rows)


def anonymize(
    data: Dataset | PathLike,
    method: str,
    *,
    sanitizers: str | Sequence[str] = (),
    seed: int = 0,
    executor: str | Executor = "serial",
    **params: Any,
) -> Result:
    """Anonymize ``data`` (a :class:`Dataset` or a file path) with ``method``
    (an anonymizer's name, e.g. ``"disassociation"``), then each of
    ``sanitizers`` in order, as ``privtool anonymize DATA --method METHOD
    --sanitizer NAME`` does.

    ``params`` are the parameters of the method and the sanitizers, by their
    Python names (``k=5, m=2, max_cluster_size=30``), checked as the command
    line checks them: an unknown method, sanitizer or parameter, or a value out
    of range, raises :class:`~privtool.errors.ParameterError` in one sentence.
    Random choices depend only on ``seed``, never on ``executor`` (``serial``,
    ``process`` or ``dask``)."""
    registry = default_registry()
    dataset = as_dataset(data)
    chain = sanitizer_names(sanitizers)
    with running(seed, executor) as ctx:
        outcome = run_method(registry, dataset, method, params, ctx, chain)
    return Result(outcome, dataset, seed, registry)
