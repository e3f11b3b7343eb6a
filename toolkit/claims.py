"""Claims: the privacy models a release states it satisfies (docs/design.md,
"Claims and the assessment engine"; the vocabulary is docs/guarantees.md).

A :class:`Claim` names a model (``km-anonymity``, ``k-anonymity``,
``cover-freedom``, ``rule-hiding`` or a plugin's), its parameters and the
adversary it holds against. In a ``privtool-release/2`` file it is one flat
JSON object::

    {"model": "km-anonymity", "k": 5, "m": 2, "adversary": "consistent-reconstruction"}

What a model means (its parameters and their validation, the WP29 criteria it
addresses, the adversaries it can hold against) is a
:class:`~privtool.components.ClaimModel` registered through the hook
``privtool_claim_models``; this module only knows the shape of a claim, so that
reading a release needs no plugin.

Adversary models, weakest first (:data:`ADVERSARIES`):

* ``consistent-reconstruction``: knows the release and some items of a person,
  and considers every dataset the release could have come from;
* ``algorithm-aware``: also knows the published algorithm, and so considers only
  the datasets the algorithm would map to this release.

A claim against the stronger adversary covers the weaker one (:meth:`Claim.covers`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError, ParameterError

ADVERSARIES = ("consistent-reconstruction", "algorithm-aware")
"""The adversary models, weakest first."""
DEFAULT_ADVERSARY = ADVERSARIES[0]

WP29_CRITERIA = ("singling-out", "linkability", "inference")
"""The three criteria of the Article 29 Working Party's Opinion 05/2014 on
anonymisation techniques, which claim models and attacks address."""

RESERVED = ("model", "adversary")
"""Keys of a claim's JSON object that are not parameters."""

Scalar = int | float | str | bool


def adversary_strength(adversary: str) -> int:
    """The rank of ``adversary`` in :data:`ADVERSARIES` (0 the weakest)."""
    return ADVERSARIES.index(adversary)


class ClaimParams(Mapping[str, Scalar]):
    """The read-only parameters of a claim (picklable, hashable, in the order given)."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, Scalar] | None = None) -> None:
        self._values = dict(values or {})

    def __getitem__(self, name: str) -> Scalar:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._values.items())))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and self._values == dict(other)

    def __repr__(self) -> str:
        return repr(self._values)


@dataclass(frozen=True)
class Claim:
    """One privacy model a release claims: ``model``, its ``params`` (a read-only
    mapping of JSON scalars) and the ``adversary`` it holds against."""

    model: str
    params: Mapping[str, Scalar] = field(default_factory=ClaimParams)
    adversary: str = DEFAULT_ADVERSARY

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", ClaimParams(self.params))

    def covers(self, adversary: str) -> bool:
        """Whether holding against this claim's adversary implies holding against
        ``adversary`` (a claim against a stronger adversary covers a weaker one)."""
        return adversary in ADVERSARIES and adversary_strength(self.adversary) >= adversary_strength(adversary)

    def with_params(self, **changes: Scalar) -> Claim:
        return Claim(self.model, {**self.params, **changes}, self.adversary)

    @property
    def label(self) -> str:
        """``km-anonymity (k=5, m=2)``: the model and its parameters, for reports."""
        args = ", ".join(f"{name}={value}" for name, value in self.params.items())
        return f"{self.model} ({args})" if args else self.model

    def to_json(self) -> dict[str, Any]:
        """The flat JSON object of a ``privtool-release/2`` file."""
        return {"model": self.model, **self.params, "adversary": self.adversary}

    @classmethod
    def from_json(cls, obj: Any, path: str = "$", source: object = "release") -> Claim:
        """Validate the shape of one claim object (a string ``model``, a known
        ``adversary``, parameters that are JSON scalars) and build the claim; an
        :class:`~privtool.errors.InputError` names the JSON path of the problem.
        Whether the model exists and its parameters are valid is checked against
        the registered claim models (:mod:`privtool.verifiers.structure`)."""

        def fail(where: str, problem: str) -> None:
            raise InputError(f"invalid release at {where}: {problem}.", path=source)

        if not isinstance(obj, dict):
            fail(path, 'expected a claim object such as {"model": "km-anonymity", "k": 5, "m": 2}')
        model = obj.get("model")
        if not isinstance(model, str) or not model:
            fail(f"{path}.model", "missing" if model is None else "expected the name of a privacy model")
        adversary = obj.get("adversary", DEFAULT_ADVERSARY)
        if adversary not in ADVERSARIES:
            fail(f"{path}.adversary", f"expected one of {', '.join(ADVERSARIES)}, found {adversary!r}")
        params = {}
        for name, value in obj.items():
            if name in RESERVED:
                continue
            if value is None or isinstance(value, (list, dict)):
                fail(f"{path}.{name}", "a claim parameter is a number, a string or true/false")
            params[name] = value
        return cls(model, params, adversary)


def claimed(claims: Sequence[Claim], model: str) -> list[Claim]:
    """The claims of ``model`` among ``claims``."""
    return [claim for claim in claims if claim.model == model]


def claimed_level(claims: Sequence[Claim], name: str, minimum: int) -> int | None:
    """The integer level ``name`` (``k``, ``m``) that ``claims`` state, or None
    when no claim has that parameter. Never the release's ``params``: they say
    what the method ran with, the claims are what the release promises and what
    the verifiers check, so an attack or a verifier judged by them cannot be
    talked out of a breach by editing ``params`` (issue 16). Raises
    :class:`~privtool.errors.ParameterError` when the claims state it below
    ``minimum``, as a non-integer, or with different values."""
    values = {claim.params[name] for claim in claims if name in claim.params}
    for value in values:
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise ParameterError(
                f"the release claims {name}={value!r}; {name} must be an integer of at least {minimum}."
            )
    if len(values) > 1:
        stated = ", ".join(map(str, sorted(int(v) for v in values)))
        raise ParameterError(f"the release's claims state different values of {name} ({stated}); pass --{name}.")
    return int(next(iter(values))) if values else None


def claims_of_version_1(kind: str, params: Mapping[str, Any]) -> list[Claim]:
    """The claims a ``privtool-release/1`` file made implicitly, from its kind
    and parameters (version 1 had no ``claims`` field):

    * ``disassociated``: ``km-anonymity`` (k, m), plus ``cover-freedom`` (m) when
      the ``safe-disassociation`` sanitizer ran (``params.sanitizers``);
    * ``generalized``: ``k-anonymity`` (k), the model of ``partition`` and ``lgr``;
    * ``sanitized``: ``rule-hiding`` (min_support, min_confidence) when the
      release states sensitive rules (the rule-hiding sanitizers), else nothing.

    A parameter the file does not state is left out, so that the structural
    check names it as missing instead of this function guessing it."""

    def pick(*names: str) -> dict[str, Scalar]:
        return {name: params[name] for name in names if name in params and _is_scalar(params[name])}

    if kind == "disassociated":
        claims = [Claim("km-anonymity", pick("k", "m"))]
        sanitizers = params.get("sanitizers")
        if (isinstance(sanitizers, list) and "safe-disassociation" in sanitizers) or params.get("cover_free") is True:
            claims.append(Claim("cover-freedom", pick("m")))
        return claims
    if kind == "generalized":
        return [Claim("k-anonymity", pick("k"))]
    if kind == "sanitized" and "sensitive_rules" in params:
        return [Claim("rule-hiding", pick("min_support", "min_confidence"))]
    return []


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (int, float, str, bool))
