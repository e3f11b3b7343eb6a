"""The Python API (docs/python-api.md): what ``import privtool`` offers a
notebook or a pipeline, on the same code path as the command line.

Every function here does what the command of the same name does, by calling
the same code: :func:`anonymize` runs :func:`privtool.pipeline.run_method` and
:meth:`Result.save` :func:`privtool.pipeline.write_outcome`, exactly as
``privtool anonymize`` does, so that a release made here is byte for byte the
release the command makes with the same data, parameters and seed;
:func:`verify`, :meth:`Result.verify`, :meth:`Result.attack` and
:meth:`Result.audit` are views of one :func:`privtool.assess.assess` run with
the scope of ``verify``, ``attack`` and ``audit``; :meth:`Result.metrics` runs
:func:`privtool.assess.measure` as ``privtool metrics`` does; :func:`compare`
runs :func:`privtool.comparison.session.run_comparison` as ``privtool compare``
does. Parameter
and method names are checked by the same code too, and fail with the same
one-sentence errors (:class:`~privtool.errors.ParameterError`, a
:class:`ValueError`).

The registry of plugins is loaded once, on first use, with every installed
plugin.
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import notebook
from .assess import ATTACK, VERIFY, assess, check_options, evidence_of, measure, select
from .audit import build_audit
from .audit.reports import report_format, write_report
from .comparison.session import check_comparison, prepare_folder, run_comparison
from .comparison.spec import parse_spec
from .components import Component, Evidence, Outcome
from .context import Context
from .dataset import Dataset
from .errors import ParameterError
from .executors import Executor, make_executor
from .io import file_sha256, read_dataset
from .pipeline import run_method, write_outcome
from .registry import Registry, load_registry
from .release import Release, read_release, release_from_json
from .trail import Trail, read_trail
from .views import Comparison, Findings, Metrics, Verdict

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

    @functools.cached_property
    def release(self) -> Release:
        """The public release, exactly as its file reads back (canonical
        orders): what :meth:`save` writes and what every assessment sees, so
        that a seeded measure gives what ``privtool metrics`` gives on the file."""
        return release_from_json(json.loads(self._outcome.release_text), "the release")

    @property
    def trail(self) -> Trail:
        """The private audit trail that ties the release to its input."""
        return self._outcome.trail

    def save(self, release_path: PathLike, trail_path: PathLike | None) -> None:
        """Write the release and its trail, atomically and as a unit (both files
        or neither), as ``privtool anonymize -o RELEASE --trail TRAIL`` does
        (same bytes). ``trail_path=None`` writes the release alone."""
        write_outcome(self._outcome, release_path, trail_path)

    def _verifiers(self) -> list[Component]:
        return select(self._registry, "verifier", self.release, ())

    def _evidence(self, original: Dataset | PathLike | None = None) -> Evidence:
        data = self.original if original is None else as_dataset(original)
        return evidence_of(data, self.trail, self.release.sha256())

    def verify(
        self,
        original: Dataset | PathLike | None = None,
        *,
        engine: str = "auto",
        executor: str | Executor = "serial",
    ) -> Verdict:
        """Prove or refute every claim of the release, as ``privtool verify
        RELEASE --original DATA --trail TRAIL`` does: the evidence is the data
        the release was made from (or ``original``) and its trail. ``executor``
        says where the per-chunk work runs (as for :func:`anonymize`); the
        verdict never depends on it."""
        with running(self.seed, executor) as ctx:
            assessment = assess(
                self._registry, self.release, self._evidence(original), ctx, VERIFY, options={"engine": engine}
            )
        return Verdict(assessment)

    def attack(self, *names: str, executor: str | Executor = "serial", **options: Any) -> Findings:
        """Verify the claims and run the attacks ``names`` (default: every one
        that applies), as ``privtool attack RELEASE --original DATA --trail
        TRAIL --attack NAME`` does; ``options`` are the attacks' parameters
        (``targets=100``, ``known=2``). Random choices (sampled targets) use the
        result's seed, never ``executor``."""
        chosen = [*select(self._registry, "attack", self.release, names), *self._verifiers()]
        check_options(chosen, options, "attack or verifier")
        with running(self.seed, executor) as ctx:
            assessment = assess(
                self._registry, self.release, self._evidence(), ctx, ATTACK, options=options, attacks=names
            )
        return Findings(assessment)

    def metrics(self, *names: str, executor: str | Executor = "serial", **options: Any) -> Metrics:
        """Compute the metrics ``names`` (default: every one that applies) with
        the original data and the trail as evidence, as ``privtool metrics``
        does; ``options`` are the metrics' parameters (``samples=20``)."""
        with running(self.seed, executor) as ctx:
            results = measure(self._registry, self.release, self._evidence(), names, options, ctx)
        return Metrics(results)

    def audit(
        self,
        path: PathLike,
        format: str | None = None,
        *,
        include_examples: bool = False,
        release_name: str = "release.json",
        executor: str | Executor = "serial",
        **options: Any,
    ) -> Findings:
        """Write the compliance report of ``privtool audit --format FORMAT -o
        PATH`` (``html``, ``md`` or ``json``, atomically; by default the format
        its extension names, as for the command: ``.html``/``.htm``, ``.md``,
        ``.json``, any other is a ``ParameterError``) and return its
        assessment. ``release_name`` is how the report names the release (and
        the ``-o`` of the command that reproduces it); original records appear
        in the report's evidence only with ``include_examples``: never publish
        such a report."""
        format = report_format(path, format)
        chosen = [
            *select(self._registry, "attack", self.release, ()),
            *select(self._registry, "metric", self.release, ()),
            *self._verifiers(),
        ]
        check_options(chosen, options, "verifier, attack or metric")
        with running(self.seed, executor) as ctx:
            report = build_audit(
                self._registry,
                self.release,
                release_name,
                self.release.sha256(),
                self._evidence(),
                options,
                ctx,
                include_examples,
            )
        write_report(report, path, format)
        return Findings(report.assessment, include_examples)

    def _summary(self) -> str:
        params = self.release.params
        method = str(params.get("method", "?"))
        sanitizers = params.get("sanitizers") or []
        chain = " + ".join([method, *sanitizers])
        return f"{self.release.kind} release by {chain} from {self.original.n_records:,} records"

    def __repr__(self) -> str:
        return f"<privtool.Result: {self._summary()}>"

    def _claims_line(self) -> str:
        """What the release claims, said as unproven: a result has no verdict
        until :meth:`verify` runs (a repr never runs a solver)."""
        claims = self.release.claims
        if not claims:
            return "claims no privacy model; result.verify() gives the verdict"
        said = "; ".join(f"{claim.label} against {claim.adversary}" for claim in claims)
        return f"claims {said}; not verified yet: result.verify() gives the verdict"

    def _repr_html_(self) -> str:
        """What the release claims first (a result has no verdict before
        :meth:`verify`), then its parameters and statistics."""
        rows = [(f"param {k}", v) for k, v in self.release.params.items() if k not in ("method", "sanitizers")]
        rows += [(f"stat {k}", v) for k, v in self.release.stats.items()]
        return notebook.headline(self._summary(), reason=self._claims_line()) + notebook.table(("field", "value"), rows)


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


def as_release(release: Release | PathLike) -> tuple[Release, str]:
    """``(release, its SHA-256)``: the object itself (the SHA-256 of its
    canonical bytes) or the file it names, read and validated (the SHA-256 of
    the file, as ``privtool verify RELEASE`` takes it)."""
    if isinstance(release, Release):
        return release, release.sha256()
    if isinstance(release, (str, os.PathLike)):
        return read_release(release), file_sha256(release)
    raise TypeError(f"expected a Release or a release file path, not a {type(release).__name__}.")


def as_trail(trail: Trail | PathLike | None) -> Trail | None:
    """The trail itself, the file it names read and validated, or ``None``."""
    if trail is None or isinstance(trail, Trail):
        return trail
    if isinstance(trail, (str, os.PathLike)):
        return read_trail(trail)
    raise TypeError(f"expected a Trail or a trail file path, not a {type(trail).__name__}.")


def verify(
    release: Release | PathLike,
    original: Dataset | PathLike | None = None,
    trail: Trail | PathLike | None = None,
    *,
    engine: str = "auto",
    seed: int = 0,
    executor: str | Executor = "serial",
) -> Verdict:
    """Prove or refute every claim of ``release`` (a :class:`Release` or a
    file), as ``privtool verify RELEASE [--original DATA] [--trail TRAIL]``
    does: the same engine, the same verdict. ``original`` (a dataset or a file)
    and ``trail`` (a trail or a file) are the evidence that lets more be
    checked (faithfulness, what was suppressed); without them those checks are
    reported as not checked. ``engine`` picks the certificate engine
    (``auto``, ``cpsat``, ``enum``, ``both``)."""
    published, release_sha = as_release(release)
    data = None if original is None else as_dataset(original)
    evidence = evidence_of(data, as_trail(trail), release_sha)
    with running(seed, executor) as ctx:
        assessment = assess(default_registry(), published, evidence, ctx, VERIFY, options={"engine": engine})
    return Verdict(assessment)


def compare(
    data: Dataset | PathLike,
    methods: str | Sequence[str],
    grid: Mapping[str, Sequence[Any]] | None = None,
    repeat: int = 1,
    *,
    seed: int = 0,
    verify: bool = True,
    metrics: Sequence[str] = (),
    work_dir: PathLike | None = None,
    executor: str | Executor = "serial",
) -> Comparison:
    """Run each of ``methods`` on ``data`` at every point of ``grid``, verify
    and measure every release, as ``privtool compare DATA --method SPEC ...
    --grid NAME=V1,V2 -o DIR`` does (the same rows and files).

    ``methods`` are specs in the command's grammar
    (``"disassociation"``, ``"safe=disassociation+safe-disassociation"``,
    ``"disassociation:partitioner=horpart"``); ``grid`` maps a parameter to
    the values to sweep (``{"k": [3, 5]}``); each cell runs ``repeat`` times
    with seeds ``seed``, ``seed + 1``, ... ``work_dir`` receives
    ``results.csv``, ``results.json``, the plots, ``index.html`` and each
    cell's release and trail (finished cells in it are reused); by default a
    new temporary folder, which is left in place so that the reports stay
    readable (:attr:`Comparison.directory`)."""
    registry = default_registry()
    dataset = as_dataset(data)
    specs = [parse_spec(spec) for spec in spec_strings(methods)]
    axes = grid_axes(grid or {})
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ParameterError(f"repeat must be a positive integer, not {repeat!r}.")
    check_comparison(registry, specs, axes, metrics)
    out_dir = Path(work_dir) if work_dir is not None else Path(tempfile.mkdtemp(prefix="privtool-compare-"))
    prepare_folder(out_dir)
    source = str(data) if isinstance(data, (str, os.PathLike)) else "a Dataset given in Python"
    with running(seed, executor) as ctx:
        rows = run_comparison(
            registry, dataset, specs, axes, out_dir, ctx.executor, repeat=repeat, seed=seed, verify=verify,
            metrics=metrics, meta={"data": source, "sample": None, "command": "privtool.compare(...)"},
        )  # fmt: skip
    return Comparison(rows, list(axes), out_dir)


def spec_strings(methods: str | Sequence[str]) -> list[str]:
    """The method specs: one spec, or a sequence of specs (never the characters of one)."""
    specs = [methods] if isinstance(methods, str) else list(methods)
    for spec in specs:
        if not isinstance(spec, str):
            raise TypeError(f"methods must be specs (strings such as 'disassociation'), not {spec!r}.")
    return specs


def grid_axes(grid: Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
    """The grid as the command line's axes: each parameter (by its Python or
    option name) with its list of values; a single value or a string where a
    list is expected is refused."""
    axes = {}
    for name, values in grid.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise TypeError(f"grid[{name!r}] must be a list of values, not {values!r}.")
        axes[name.replace("-", "_")] = list(values)
    return axes
