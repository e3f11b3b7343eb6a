"""Where the sensitive rules of a rule-hiding release live.

The rules a data owner hid are a secret: publishing them tells everyone which
patterns were sensitive. A ``privtool-release/2`` file states only the
thresholds (its ``rule-hiding`` claim); the rules go to the private trail
(``Trail.sensitive_rules``). A ``privtool-release/1`` file published them in
``params.sensitive_rules``; they are still read from there.

:func:`sensitive_rules` is the one reader, for the ``rule-hiding`` verifier, the
``rule-remining`` attack and the ``rule-side-effects`` metric.
"""

from __future__ import annotations

from .errors import InputError, MissingEvidence
from .mining import Rule
from .release import Release
from .trail import Trail, rule_problem

WHY_PRIVATE = "the sensitive rules are private: they are in the trail, not in the release (give --trail TRAIL)"


def sensitive_rules(release: Release, trail: Trail | None, release_sha256: str | None = None) -> list[Rule]:
    """The sensitive rules of ``release``: the trail's (which must belong to the
    release when ``release_sha256`` is given), else a version 1 release's
    ``params.sensitive_rules``. :class:`~privtool.errors.MissingEvidence` when
    neither holds them."""
    if trail is not None and trail.sensitive_rules:
        if release_sha256 and trail.release_sha256 and trail.release_sha256 != release_sha256:
            raise MissingEvidence("the trail belongs to another release, so its sensitive rules are not this one's")
        return [Rule.of(antecedent, consequent) for antecedent, consequent in trail.sensitive_rules]
    raw = release.params.get("sensitive_rules")
    if raw is None:
        raise MissingEvidence(WHY_PRIVATE)
    if not isinstance(raw, list):
        raise InputError("params.sensitive_rules must be a list of rules", path="release")
    for i, rule in enumerate(raw):
        problem = rule_problem(rule)
        if problem is not None:
            raise InputError(f"params.sensitive_rules[{i}]: {problem}", path="release")
    return [Rule.of(antecedent, consequent) for antecedent, consequent in raw]
