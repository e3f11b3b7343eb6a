"""Verifiers of a ``sanitized`` release (association-rule hiding).

The ``rule-hiding`` claim states the thresholds (``min_support`` an absolute
count, ``min_confidence`` a fraction); the sensitive rules are a secret read
from the private trail (:func:`privtool.sensitive_rules.sensitive_rules`; a
``privtool-release/1`` file still has them in ``params.sensitive_rules``). A
rule X -> Y is hidden iff s(X ∪ Y) < min_support or s(X ∪ Y) / s(X) <
min_confidence (a rule whose antecedent no record holds is hidden: it cannot be
mined).

* ``rule-hiding``: every sensitive rule is hidden in the published records; the
  exact counts s(X ∪ Y) and s(X) are the evidence. One unit per rule. Without
  the trail it cannot check (the claim stays unverified).
* ``removal-only`` (needs the original; an integrity check): the sanitized data
  only removed items. With a trail, its ``removed_items`` ([record position,
  label]) must turn the original into exactly the published multiset of
  records; without one, the published records must match distinct original
  supersets (:mod:`.matching`).
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, ClassVar

from privtool.claims import claimed
from privtool.components import Evidence, Verifier
from privtool.context import Context
from privtool.errors import ParameterError
from privtool.params import Param
from privtool.release import Release
from privtool.results import Certificate
from privtool.sensitive_rules import sensitive_rules

from .matching import unmatched_subsets

MIN_SUPPORT = Param("min_support", int, None, "support threshold to check (default: the claimed one)", min=1)
MIN_CONFIDENCE = Param(
    "min_confidence", float, None, "confidence threshold to check (default: the claimed one)", min=0.0, max=1.0
)


def thresholds(release: Release, params: dict[str, Any]) -> tuple[int, float]:
    """The thresholds to check: the given ones, else the release's rule-hiding claim's."""
    claims = claimed(release.claims, "rule-hiding")
    values = []
    for name in ("min_support", "min_confidence"):
        value = params.get(name)
        if value is None:
            if not claims:
                raise ParameterError(f"the release claims no rule-hiding, so it states no {name}.")
            value = claims[0].params[name]
        values.append(value)
    return int(values[0]), float(values[1])


def rule_counts(records: list[list[str]], antecedent: list[str], consequent: list[str]) -> tuple[int, int]:
    """(s(X ∪ Y), s(X)) by a direct pass over the records."""
    x = set(antecedent)
    xy = x | set(consequent)
    s_x = s_xy = 0
    for record in records:
        items = set(record)
        if x <= items:
            s_x += 1
            if xy <= items:
                s_xy += 1
    return s_xy, s_x


def rule_hidden(s_xy: int, s_x: int, min_support: int, min_confidence: float) -> bool:
    if s_xy < min_support or s_x == 0:
        return True
    return s_xy / s_x < min_confidence


class RuleHiding(Verifier):
    name = "rule-hiding"
    summary = "Every sensitive rule (from the private trail) is below the support or the confidence threshold."
    params = (MIN_SUPPORT, MIN_CONFIDENCE)
    applies_to: ClassVar[tuple[str, ...]] = ("sanitized",)
    proves: ClassVar[tuple[str, ...]] = ("rule-hiding",)

    def verify(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Certificate]:
        start = time.perf_counter()
        rules = sensitive_rules(release, evidence.trail, evidence.extra.get("release_sha256"))
        min_support, min_confidence = thresholds(release, params)
        evidence_rows = []
        failing = []
        for rule in rules:
            antecedent, consequent = list(rule.antecedent), list(rule.consequent)
            s_xy, s_x = rule_counts(release.records, antecedent, consequent)
            row = {
                "antecedent": antecedent,
                "consequent": consequent,
                "support": s_xy,
                "antecedent_support": s_x,
                "confidence": round(s_xy / s_x, 6) if s_x else None,
            }
            evidence_rows.append(row)
            if not rule_hidden(s_xy, s_x, min_support, min_confidence):
                failing.append(row)
        details = {
            "min_support": min_support,
            "min_confidence": min_confidence,
            "rules": evidence_rows,
            "violations": len(failing),
        }
        witness = {**failing[0], "min_support": min_support, "min_confidence": min_confidence} if failing else None
        return [
            Certificate(
                self.name, not failing, "count", len(rules), round(time.perf_counter() - start, 4), witness, details
            )
        ]


class RemovalOnly(Verifier):
    name = "removal-only"
    summary = "The sanitized records come from the original by removing items only (needs the original)."
    params = ()
    applies_to: ClassVar[tuple[str, ...]] = ("sanitized",)

    def verify(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Certificate]:
        start = time.perf_counter()
        details: dict[str, Any] = {}

        def done(holds: bool | None, witness: dict[str, Any] | None, engine: str, units: int) -> list[Certificate]:
            return [
                Certificate(self.name, holds, engine, units, round(time.perf_counter() - start, 4), witness, details)
            ]

        if evidence.original is None:
            details["reason"] = "needs --original"
            return done(None, None, "none", 0)
        originals = evidence.original.to_label_records()
        published = [tuple(sorted(r)) for r in release.records]
        trail = evidence.trail
        if trail is not None:
            after = [set(r) for r in originals]
            for n, entry in enumerate(trail.removed_items):
                ok = (
                    isinstance(entry, list)
                    and len(entry) == 2
                    and isinstance(entry[0], int)
                    and isinstance(entry[1], str)
                )
                if not ok or not 0 <= entry[0] < len(after) or entry[1] not in after[entry[0]]:
                    details["trail_entry"] = n
                    return done(
                        False,
                        {"problem": "the trail removes an item the original record does not hold", "entry": entry},
                        "trail",
                        len(originals),
                    )
                after[entry[0]].discard(entry[1])
            suppressed = set(trail.suppressed_records)
            expected = Counter(tuple(sorted(r)) for i, r in enumerate(after) if i not in suppressed)
            got = Counter(published)
            if expected != got:
                extra = sorted((got - expected).items())
                missing = sorted((expected - got).items())
                witness = {
                    "problem": "the published records differ from the original minus the trail's removals",
                    "published_not_explained": [list(r) for r, _ in extra[:5]],
                    "expected_not_published": [list(r) for r, _ in missing[:5]],
                }
                return done(False, witness, "trail", len(originals))
            details["removed_occurrences"] = len(trail.removed_items)
            return done(True, None, "trail", len(originals))
        unmatched = unmatched_subsets(published, [tuple(r) for r in originals])
        if unmatched:
            record = sorted(unmatched)[0]
            return done(
                False,
                {"problem": "no distinct original record contains this published record", "record": list(record)},
                "matching",
                len(published),
            )
        return done(True, None, "matching", len(published))
