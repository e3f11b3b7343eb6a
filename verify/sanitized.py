"""Verifiers of a ``sanitized`` release (association-rule hiding).

Convention shared with the rule-hiding sanitizers: ``params.sensitive_rules`` is a
list of ``[[antecedent labels], [consequent labels]]``, ``params.min_support`` an
absolute count and ``params.min_confidence`` a fraction. A rule X -> Y is hidden
iff s(X ∪ Y) < min_support or s(X ∪ Y) / s(X) < min_confidence (a rule whose
antecedent no record holds is hidden: it cannot be mined).

* ``rule-hiding``: every sensitive rule is hidden in the published records; the
  exact counts s(X ∪ Y) and s(X) are the evidence. One unit per rule.
* ``removal-only`` (needs the original): the sanitized data only removed items.
  With a trail, its ``removed_items`` ([record position, label]) must turn the
  original into exactly the published multiset of records; without one, the
  published records must match distinct original supersets (:mod:`.matching`).
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, ClassVar

from privtool.components import Evidence, Verifier
from privtool.context import Context
from privtool.errors import InputError
from privtool.release import Release
from privtool.results import Certificate

from .matching import unmatched_subsets


def sensitive_rules(release: Release) -> list[tuple[list[str], list[str]]]:
    """The release's stated sensitive rules, validated."""
    raw = release.params.get("sensitive_rules")
    if not isinstance(raw, list):
        raise InputError("the sanitized release states no params.sensitive_rules list", path="release")
    rules = []
    for i, rule in enumerate(raw):
        ok = (
            isinstance(rule, list)
            and len(rule) == 2
            and all(isinstance(side, list) and side and all(isinstance(x, str) for x in side) for side in rule)
        )
        if not ok:
            raise InputError(
                f"params.sensitive_rules[{i}] is not [[antecedent labels], [consequent labels]]", path="release"
            )
        rules.append((list(rule[0]), list(rule[1])))
    return rules


def _threshold(release: Release, key: str, kind: type) -> Any:
    value = release.params.get(key)
    if kind is int and (not isinstance(value, int) or isinstance(value, bool)):
        raise InputError(f"params.{key} must be an absolute count (an integer), found {value!r}", path="release")
    if kind is float and (not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1):
        raise InputError(f"params.{key} must be a number in [0, 1], found {value!r}", path="release")
    return value


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
    summary = "Every sensitive rule is below the support or the confidence threshold."
    params = ()
    applies_to: ClassVar[tuple[str, ...]] = ("sanitized",)
    criterion: ClassVar[str] = "inference"

    def verify(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Certificate]:
        start = time.perf_counter()
        rules = sensitive_rules(release)
        min_support = _threshold(release, "min_support", int)
        min_confidence = float(_threshold(release, "min_confidence", float))
        evidence_rows = []
        failing = []
        for antecedent, consequent in rules:
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
    criterion: ClassVar[str] = "faithfulness"

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
