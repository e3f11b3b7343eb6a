"""Typed, validated parameters of a component.

Every component (partitioner, chunker, refiner, sanitizer, anonymizer, attack,
verifier, metric) declares its parameters as :class:`Param` objects. The CLI turns
them into ``--options``, ``--config FILE.toml`` can set them, and
:func:`resolve` checks values against type, range and choices, raising a
:class:`~privtool.errors.ParameterError` that names the parameter.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ParameterError

_TYPES = (int, float, str, bool)


@dataclass(frozen=True)
class Param:
    """One parameter: ``name`` (snake_case), its ``type`` (int, float, str, bool),
    ``default`` (``None`` with ``required=True`` when it has none), inclusive
    bounds ``min``/``max`` for numbers and ``choices`` for strings."""

    name: str
    type: type
    default: Any = None
    help: str = ""
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] | None = None
    required: bool = False

    def __post_init__(self) -> None:
        if self.type not in _TYPES:
            raise TypeError(f"parameter {self.name}: unsupported type {self.type!r}")

    @property
    def option(self) -> str:
        """The command-line spelling, ``--max-cluster-size`` for ``max_cluster_size``."""
        return "--" + self.name.replace("_", "-")

    def coerce(self, value: Any) -> Any:
        """Convert ``value`` (possibly a command-line string) and check it."""
        try:
            value = self._convert(value)
        except (TypeError, ValueError):
            kind = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}[self.type]
            raise ParameterError(f"{self.option} must be {kind}, not {value!r}.") from None
        if self.type in (int, float):
            if self.min is not None and value < self.min:
                raise ParameterError(f"{self.option} must be at least {_fmt(self.min)}, not {_fmt(value)}.")
            if self.max is not None and value > self.max:
                raise ParameterError(f"{self.option} must be at most {_fmt(self.max)}, not {_fmt(value)}.")
        if self.choices is not None and value not in self.choices:
            raise ParameterError(f"{self.option} must be one of {', '.join(self.choices)}, not {value!r}.")
        return value

    def json_problem(self, value: Any) -> str | None:
        """What is wrong with ``value`` read from a JSON file (no conversion: a
        count must be a JSON integer, a fraction a JSON number), or None."""
        exact = {
            int: isinstance(value, int) and not isinstance(value, bool),
            float: isinstance(value, (int, float)) and not isinstance(value, bool),
            str: isinstance(value, str),
            bool: isinstance(value, bool),
        }[self.type]
        if not exact:
            kind = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}[self.type]
            return f"must be {kind}, not {value!r}"
        try:
            self.coerce(value)
        except ParameterError as exc:
            return exc.message.removeprefix(f"{self.option} ").rstrip(".")
        return None

    def _convert(self, value: Any) -> Any:
        if self.type is bool:
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("true", "yes", "1", "on"):
                return True
            if isinstance(value, str) and value.lower() in ("false", "no", "0", "off"):
                return False
            raise ValueError(value)
        if self.type is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(value)
            return int(value)
        if self.type is float:
            if isinstance(value, bool):
                raise ValueError(value)
            return float(value)
        if not isinstance(value, str):
            raise TypeError(value)
        return value


def _fmt(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def merge_specs(groups: Iterable[Sequence[Param]]) -> list[Param]:
    """Union of parameter lists; a name declared twice must be declared alike."""
    merged: dict[str, Param] = {}
    for group in groups:
        for param in group:
            earlier = merged.get(param.name)
            if earlier is None:
                merged[param.name] = param
            elif (earlier.type, earlier.default) != (param.type, param.default):
                raise ParameterError(f"parameter {param.option} is declared twice with different types or defaults.")
    return list(merged.values())


def unknown_option(owner: str, option: str, spec: Sequence[Param]) -> ParameterError:
    """The error for an ``option`` (``--zz``) that ``owner`` does not declare,
    listing the options it does: the same sentence from the command line and
    from Python."""
    known = ", ".join(sorted(p.option for p in spec)) or "none"
    return ParameterError(f"{owner} has no option {option} (its options: {known}).")


def resolve(spec: Sequence[Param], given: Mapping[str, Any], owner: str) -> dict[str, Any]:
    """Check ``given`` against ``spec`` and fill in defaults.

    Unknown names are rejected (``owner`` names the component in the message);
    a required parameter without a value too.
    """
    known = {p.name: p for p in spec}
    for name in given:
        if name not in known:
            raise unknown_option(owner, "--" + name.replace("_", "-"), spec)
    values: dict[str, Any] = {}
    for param in spec:
        if param.name in given and given[param.name] is not None:
            values[param.name] = param.coerce(given[param.name])
        elif param.required:
            raise ParameterError(f"{owner} needs {param.option}.")
        else:
            values[param.name] = param.default
    return values


RESERVED_NAMES = frozenset(
    {
        "attack",
        "config",
        "data_format",
        "example",
        "executor",
        "format",
        "from",
        "grid",
        "help",
        "include_examples",
        "json",
        "list",
        "max_rows",
        "method",
        "metric",
        "no_verify",
        "only",
        "original",
        "output",
        "pick",
        "quiet",
        "release",
        "repeat",
        "rules",
        "sample",
        "sanitizer",
        "scheduler",
        "seed",
        "sensitive",
        "to",
        "top",
        "traceback",
        "trail",
        "trail_out",
        "version",
        "workers",
    }
)
"""Names the commands own (``--seed``, ``--output``, ...): a component parameter
with one of them would be taken by the command, so registration refuses it.
Names a command shares with components on purpose (``--k``, ``--known``,
``--engine``, ...) are not here; ``tests/test_plugin_contracts.py`` checks that
every command option is one or the other."""

K = Param("k", int, 5, "k: every published itemset (of up to m items) occurs at least k times.", min=2)
M = Param("m", int, 2, "m: the largest number of items an adversary knows.", min=1)
"""The two parameters almost every privacy component shares."""
