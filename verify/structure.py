"""Structural validity of a release: what the assessment engine checks first
(docs/design.md, "Claims and the assessment engine", step 1).

:func:`check_structure` runs every check of :data:`CHECKS` and returns every
problem found, each naming the exact JSON path; when there is any, the engine
runs nothing else and the verdict is FAIL. Reading a release
(:func:`privtool.release.release_from_json`) already refuses what is not a
release at all (wrong types, unknown fields: exit 2); the checks here are about
a well-typed release that contradicts itself or what it claims.

Each check is a small function ``check(subject) -> Iterable[StructureProblem]``
over a :class:`Subject` (the release, the original when given, the registered
claim models); add one by writing the function and listing it in
:data:`CHECKS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from privtool.claims import Claim
from privtool.components import ClaimModel
from privtool.dataset import Dataset
from privtool.release import Release
from privtool.trail import rule_problem


@dataclass(frozen=True)
class StructureProblem:
    """One structural problem: the JSON ``path`` it is at and what is wrong."""

    path: str
    problem: str

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "problem": self.problem}


@dataclass(frozen=True)
class Subject:
    """What the checks read: the release, the original (or None) and the
    registered claim models by name."""

    release: Release
    original: Dataset | None
    models: Mapping[str, ClaimModel]


def claim_problems(claim: Claim, kind: str | None, models: Mapping[str, ClaimModel]) -> list[tuple[str, str]]:
    """``(key, problem)`` for every way ``claim`` is not a valid claim of a
    release of ``kind`` (None: any kind): an unknown model, invalid parameters,
    an adversary the model cannot be claimed against, a kind that cannot carry
    the model. Key ``model``, ``adversary`` or a parameter name."""
    model = models.get(claim.model)
    if model is None:
        return [("model", f"unknown privacy model {claim.model!r} (known: {', '.join(sorted(models)) or 'none'})")]
    problems = model.problems(claim)
    if kind is not None and kind not in model.carried_by:
        problems.append(
            (
                "model",
                f"a {kind} release cannot carry {claim.model} (carried by {', '.join(model.carried_by)} releases)",
            )
        )
    return problems


def claims_well_formed(subject: Subject) -> Iterator[StructureProblem]:
    """Every claim names a registered model, with valid parameters, that the
    release's kind can carry. For a version 1 file the claims were derived from
    ``params``, so the problem is placed there."""
    release = subject.release
    for i, claim in enumerate(release.claims):
        for key, problem in claim_problems(claim, release.kind, subject.models):
            if release.claims_derived:
                path = "$.kind" if key == "model" else f"$.params.{key}"
                yield StructureProblem(path, f"{problem} (the {claim.model} claim of a privtool-release/1 file)")
            else:
                yield StructureProblem(f"$.claims[{i}]" if key == "model" else f"$.claims[{i}].{key}", problem)


def version_1_rules_well_formed(subject: Subject) -> Iterator[StructureProblem]:
    """A version 1 rule-hiding release published its sensitive rules in
    ``params.sensitive_rules``: each must be ``[[antecedent], [consequent]]``."""
    raw = subject.release.params.get("sensitive_rules") if subject.release.claims_derived else None
    if raw is None:
        return
    if not isinstance(raw, list):
        yield StructureProblem("$.params.sensitive_rules", "expected a list of rules")
        return
    for i, rule in enumerate(raw):
        problem = rule_problem(rule)
        if problem is not None:
            yield StructureProblem(f"$.params.sensitive_rules[{i}]", problem)


CHECKS: tuple[Callable[[Subject], Iterable[StructureProblem]], ...] = (
    claims_well_formed,
    version_1_rules_well_formed,
)
"""The structural checks, in order."""


def check_structure(
    release: Release, original: Dataset | None = None, *, models: Mapping[str, ClaimModel] | None = None
) -> list[StructureProblem]:
    """Every structural problem of ``release`` (and of its relation to
    ``original`` when given); ``models`` are the claim models by name (default:
    those of every installed plugin)."""
    if models is None:
        from privtool.registry import load_registry

        models = {model.name: model for model in load_registry().all("claim_model")}
    subject = Subject(release, original, models)
    return [problem for check in CHECKS for problem in check(subject)]
