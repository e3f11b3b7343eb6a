"""Pieces every command shares: the registry, consoles, JSON output, the run
context options, ``--config`` files and component options given as free
``--name value`` arguments."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import sys
import tomllib
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.text import Text

from ..assess import DEFAULT_TIME_LIMIT, ComponentFailure
from ..components import Evidence
from ..context import Context
from ..dataset import Dataset
from ..errors import InputError, ParameterError
from ..executors import EXECUTOR_NAMES, Executor, make_executor
from ..gcpause import keep_for_the_run
from ..io import choose_format, read_dataset
from ..params import Param, unknown_option
from ..progress import RichProgress
from ..registry import Registry, load_registry
from ..release import Release, read_release
from ..trail import read_trail


@dataclass
class AppState:
    """Global options, and the registry loaded on first use."""

    blocked: tuple[str, ...] = ()
    load: tuple[str, ...] = ()
    traceback: bool = False
    _registry: Registry | None = field(default=None, repr=False)

    @property
    def registry(self) -> Registry:
        if self._registry is None:
            self._registry = load_registry(self.blocked, self.load)
        return self._registry


def app(ctx: click.Context) -> AppState:
    return ctx.find_object(AppState) or AppState()


TRACEBACK_ENV = "PRIVTOOL_TRACEBACK"


def wants_traceback(ctx: click.Context | None = None) -> bool:
    """``--traceback`` (a global option) or ``PRIVTOOL_TRACEBACK`` set to anything but empty or 0."""
    return os.environ.get(TRACEBACK_ENV, "") not in ("", "0") or (ctx is not None and app(ctx).traceback)


def report_failures(ctx: click.Context, failures: Sequence[ComponentFailure]) -> None:
    """One line on stderr per component that failed during a run whose other
    results were reported (the command then exits 3), each traceback first when
    asked for."""
    shown = wants_traceback(ctx)
    hint = "" if shown else f" (run with --traceback or {TRACEBACK_ENV}=1 for the traceback)"
    for failure in failures:
        if shown and failure.traceback:
            click.echo(failure.traceback, err=True, nl=False)
        click.echo(f"privtool: error: {' '.join(failure.sentence.split())}{hint}", err=True)


def read_command_release(path: str | os.PathLike[str]) -> Release:
    """The release a command reads (:func:`privtool.release.read_release`), then
    everything alive kept out of later garbage collections
    (:func:`privtool.gcpause.keep_for_the_run`): a command owns its process, and
    what it has loaded by then lives until it exits. The Python API reads with
    :func:`~privtool.release.read_release` alone, so a program's collector is left
    as it was."""
    release = read_release(path)
    keep_for_the_run()
    return release


def stdout_console() -> Console:
    """The console of a command's output. Markup is off: every string printed,
    in a table, a title or a tree, is shown as it is, so a data label such as
    ``[/]`` or ``[link=...]`` can neither break the output nor become a
    hyperlink; styled text is passed as :class:`rich.text.Text` (:func:`styled`)."""
    return Console(soft_wrap=False, markup=False)


def stderr_console() -> Console:
    """The console of messages and progress (markup off, as :func:`stdout_console`)."""
    return Console(stderr=True, markup=False)


def styled(text: str, style: str) -> Text:
    """``text`` shown literally in ``style`` (the way to colour output now that
    consoles read no markup)."""
    return Text(text, style=style)


def echo_json(obj: Any) -> None:
    """Print ``obj`` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n")


@dataclass(frozen=True)
class RunSettings:
    """The options of a command that maps work over clusters, chunks or targets,
    with the executor they name, made as the command began (:func:`run_options`)."""

    seed: int
    executor: Executor
    quiet: bool


time_limit_option = click.option(
    "--time-limit",
    type=click.FloatRange(min=0),
    default=DEFAULT_TIME_LIMIT,
    show_default=True,
    metavar="SECONDS",
    help="Seconds each verifier may run; one not finished by then is reported unknown (never as holding). 0: none.",
)
"""``--time-limit`` of the commands that run verifiers (the engine's ``time_limit``; 0 means none)."""


def run_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--seed``, ``--executor``, ``--workers``, ``--scheduler`` and ``--quiet``
    to a command, which receives them as one ``run: RunSettings`` argument.

    The executor is made before the command reads its input and closed when it
    returns or fails: a Dask cluster starts in the background while the command
    reads and prepares its input (:class:`privtool.dask_executor.DaskExecutor`)."""

    @functools.wraps(f)
    def command(
        *args: Any, seed: int, executor: str, workers: int | None, scheduler: str | None, quiet: bool, **kwargs: Any
    ) -> Any:
        with closing(make_executor(executor, workers, scheduler)) as chosen:  # a Dask cluster starts meanwhile
            return f(*args, run=RunSettings(seed, chosen, quiet), **kwargs)

    command = click.option("--quiet", "-q", is_flag=True, help="No progress bars.")(command)
    command = click.option(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="Dask scheduler address (with --executor dask); none starts a local cluster.",
    )(command)
    command = click.option(
        "--workers", type=click.IntRange(min=1), default=None, help="Worker processes (default: all cores)."
    )(command)
    command = click.option(
        "--executor",
        type=click.Choice(EXECUTOR_NAMES),
        default="process",
        show_default=True,
        help="Where per-cluster/per-chunk work runs; the result is the same for every choice.",
    )(command)
    command = click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random choice.")(
        command
    )
    return command


@contextmanager
def running(run: RunSettings, progress: bool = True) -> Iterator[Context]:
    """The run context of a command: its executor (closed by :func:`run_options`)
    and rich progress bars on stderr unless ``--quiet`` (or ``progress`` is
    false, e.g. for JSON output)."""
    with RichProgress(stderr_console(), enabled=progress and not run.quiet) as bars:
        yield Context(seed=run.seed, executor=run.executor, progress=bars)


def load_config(path: str | None) -> dict[str, Any]:
    """Parameters from a TOML file: top-level keys are parameter names
    (``max-cluster-size`` or ``max_cluster_size``) whose values are numbers,
    strings, booleans or arrays of them; ``method`` is a string and
    ``sanitizer`` a string or an array of strings. Anything else (a table, a
    date) is an :class:`InputError` naming the key."""
    if path is None:
        return {}
    p = Path(path)
    if not p.exists():
        raise InputError("no such config file", path=p)
    if p.is_dir():
        raise InputError("expected a config file, found a directory", path=p)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not a valid TOML file ({exc})", path=p) from None
    except OSError as exc:
        raise InputError(f"cannot read the config file ({exc.strerror or exc})", path=p) from None
    scalar = (str, int, float, bool)
    for key, value in data.items():
        values = value if isinstance(value, list) else [value]
        if not all(isinstance(v, scalar) for v in values):
            raise InputError(
                f"key {key!r} holds {type(value).__name__} values; a config holds parameter values "
                "(numbers, strings, true/false, or arrays of them)",
                path=p,
            )
        if key == "method" and not isinstance(value, str):
            raise InputError(f"method must be a string, not {value!r}", path=p)
        if key == "sanitizer" and not all(isinstance(v, str) for v in values):
            raise InputError(f"sanitizer must be a string or an array of strings, not {value!r}", path=p)
    return {key.replace("-", "_"): value for key, value in data.items()}


def parse_component_options(args: Sequence[str], spec: Sequence[Param], owner: str) -> dict[str, Any]:
    """Turn free arguments such as ``--k 5 --max-cluster-size=30 --no-second-objective``
    into raw values for ``spec``. Unknown options and stray words are errors."""
    by_option = {p.option: p for p in spec}
    negated = {"--no-" + p.option[2:]: p for p in spec if p.type is bool}
    values: dict[str, Any] = {}
    i = 0
    while i < len(args):
        word = args[i]
        name, eq, inline = word.partition("=")
        if name in negated and not eq:
            values[negated[name].name] = False
            i += 1
            continue
        param = by_option.get(name)
        if param is None:
            if word.startswith("-"):
                raise unknown_option(owner, name, spec)
            raise ParameterError(f"unexpected argument {word!r}.")
        if eq:
            values[param.name] = inline
            i += 1
        elif param.type is bool:
            values[param.name] = True
            i += 1
        else:
            if i + 1 >= len(args):
                raise ParameterError(f"{param.option} needs a value.")
            values[param.name] = args[i + 1]
            i += 2
    return values


def peek_options(args: Sequence[str], names: Sequence[str]) -> dict[str, str]:
    """The values of the options ``names`` among free arguments (``--partitioner X``
    or ``--partitioner=X``), before the rest can be parsed: which stage a method
    uses decides which other options it accepts."""
    wanted = {"--" + name.replace("_", "-"): name for name in names}
    values: dict[str, str] = {}
    for i, word in enumerate(args):
        option, eq, inline = word.partition("=")
        if option in wanted:
            if eq:
                values[wanted[option]] = inline
            elif i + 1 < len(args):
                values[wanted[option]] = args[i + 1]
    return values


def describe_params(spec: Sequence[Param]) -> str:
    """One line per parameter, for help texts."""
    lines = []
    for p in spec:
        bits = [p.type.__name__]
        if p.choices:
            bits = ["|".join(p.choices)]
        if p.min is not None or p.max is not None:
            bits.append(f"range {p.min if p.min is not None else ''}..{p.max if p.max is not None else ''}")
        default = "required" if p.required else f"default {p.default}"
        option = p.option if p.type is not bool else f"{p.option}/--no-{p.option[2:]}"
        lines.append(f"  {option} ({', '.join(bits)}; {default}): {p.help}")
    return "\n".join(lines)


def load_evidence(
    registry: Registry,
    original: str | None,
    fmt: str | None,
    trail: str | None,
    format_options: dict[str, Any] | None = None,
) -> Evidence:
    """What ``verify``, ``attack``, ``metrics`` and ``audit`` may read besides the
    release: the original dataset (read with its format's options) and the
    private trail, each when given."""
    return Evidence(
        original=read_dataset(registry, original, fmt, format_options) if original else None,
        trail=read_trail(trail) if trail else None,
    )


FORMAT_ARGS = {"ignore_unknown_options": True, "allow_extra_args": True}
"""Click context settings of a command whose free arguments are its data format's options."""
FORMAT_EPILOG = "Options of DATA's format go last, e.g. `data.csv --delimiter ';'`."


def read_data_argument(ctx: click.Context, data: str, fmt: str | None) -> Dataset:
    """DATA of a command whose only free arguments are DATA's format options."""
    registry = app(ctx).registry
    _, read_options = options_and_format_options(registry, data, fmt, ctx.args, (), f"reading {data}")
    return read_dataset(registry, data, fmt, read_options)


def options_and_format_options(
    registry: Registry, data: str | None, fmt: str | None, args: Sequence[str], spec: Sequence[Param], owner: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Free arguments for the components of a command (``spec``) and for the
    format of its data file (``--delimiter ';'`` for a CSV file), parsed
    together: ``(component values, format options)``. A name both declare goes
    to the components; without a data file only ``spec`` is accepted."""
    taken = {p.name for p in spec}
    extra = [p for p in choose_format(registry, data, fmt).params if p.name not in taken] if data else []
    values = parse_component_options(args, [*spec, *extra], owner)
    own = {p.name for p in extra}
    return {k: v for k, v in values.items() if k not in own}, {k: v for k, v in values.items() if k in own}


def format_options(registry: Registry, path: str, fmt: str | None, args: Sequence[str]) -> tuple[str, dict[str, Any]]:
    """The format of ``path`` (``fmt`` or from its extension) and its options
    taken from the free arguments (``--delimiter ';'``)."""
    component = choose_format(registry, path, fmt)
    return component.name, parse_component_options(args, component.params, f"format {component.name!r}")


def two_format_options(
    registry: Registry, source: tuple[str, str | None], target: tuple[str, str | None], args: Sequence[str]
) -> tuple[tuple[str, dict[str, Any]], tuple[str, dict[str, Any]]]:
    """Like :func:`format_options` for an input and an output ``(path, fmt)``.

    An option such as ``--delimiter`` applies to each side whose format declares
    it; ``--in-delimiter`` / ``--out-delimiter`` set one side only and win."""
    sides = [choose_format(registry, path, fmt) for path, fmt in (source, target)]
    spec: dict[str, Param] = {}
    for prefix, component in zip(("in_", "out_"), sides, strict=False):
        for param in component.params:
            spec[prefix + param.name] = dataclasses.replace(param, name=prefix + param.name)
            spec.setdefault(param.name, param)
    values = parse_component_options(args, list(spec.values()), f"converting {sides[0].name} to {sides[1].name}")
    result = []
    for prefix, component in zip(("in_", "out_"), sides, strict=False):
        options = {}
        for param in component.params:
            for key in (prefix + param.name, param.name):
                if key in values:
                    options[param.name] = values[key]
                    break
        result.append((component.name, options))
    return result[0], result[1]
