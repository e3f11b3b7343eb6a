"""``rule-remining``: mine a sanitized release again, at the original thresholds
and at lowered ones (issue 7, item 4).

For every sensitive rule ``X => Y`` the release states, with ``s'`` its counts in
the released records:

* strong at the original thresholds (``s'(XY) >= MST`` and ``s'(XY)/s'(X) >= MCT``):
  a hiding failure, severity ``breach``;
* otherwise its robustness margin: the smallest relative drop ``d`` such that
  mining with both thresholds lowered by ``d`` (support ``ceil((1-d) MST)``,
  confidence ``(1-d) MCT``) finds the rule again. Exactly,
  ``d = max(1 - s'(XY)/MST, 1 - conf'/MCT, 0)`` up to the rounding of the
  support count; a rule with ``s'(XY) = 0`` never reappears. Severity ``risk``
  when ``d <= risk_drop``, ``info`` otherwise.

The attack also mines the release at each drop in ``drops`` (the adversary's
view) and reports, per level, how many rules are found and whether each
sensitive rule is among them, so a reader can see the rule re-emerge and how
many other rules surround it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from privtool.components import Attack, Evidence
from privtool.context import Context
from privtool.errors import MissingEvidence, ParameterError
from privtool.mining import Thresholds, association_rules, rule_counts
from privtool.params import Param
from privtool.plugins.rulehiding.side_effects import release_dataset, release_rules
from privtool.release import Release
from privtool.results import Finding


def _drops(text: str) -> list[float]:
    try:
        values = sorted({float(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise ParameterError(f"--drops must be comma-separated fractions such as 0.05,0.1, not {text!r}.") from None
    if not values or any(not 0 < v < 1 for v in values):
        raise ParameterError(f"--drops must list fractions strictly between 0 and 1, not {text!r}.")
    return values


def lowered(thresholds: Thresholds, drop: float) -> Thresholds:
    """Both thresholds lowered by the relative ``drop``."""
    factor = 1 - Fraction(repr(drop))
    return Thresholds(max(1, math.ceil(thresholds.min_support * factor)), thresholds.min_confidence * factor)


def reappearance_drop(support_xy: int, support_x: int, thresholds: Thresholds) -> float | None:
    """The smallest relative drop of both thresholds at which the rule is strong
    again (0.0 when it is strong already); None when it can never be (no support)."""
    if support_xy == 0:
        return None
    by_support = max(0.0, 1 - support_xy / thresholds.min_support)
    mct = float(thresholds.min_confidence)
    by_confidence = max(0.0, 1 - (support_xy / support_x) / mct) if mct > 0 else 0.0
    return max(by_support, by_confidence)


class RuleRemining(Attack):
    name = "rule-remining"
    summary = (
        "re-mine a sanitized release at the original and lowered thresholds; "
        "margin at which each sensitive rule reappears"
    )
    applies_to = ("sanitized",)
    criteria = ("inference",)
    refutes = ("rule-hiding",)
    adversary_statement = (
        "The adversary mines the published records for association rules, at the claimed thresholds and below them."
    )
    params = (
        Param("drops", str, "0.05,0.1,0.2", "relative threshold drops at which to mine the release again"),
        Param("risk_drop", float, 0.1, "a rule that reappears at this drop or less is a risk", min=0.0, max=1.0),
    )

    def run(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Finding]:
        try:
            rules, thresholds = release_rules(release, evidence.trail, evidence.extra.get("release_sha256"))
        except MissingEvidence as exc:
            return [Finding(self.name, "info", f"not run: {exc.message}")]
        data = release_dataset(release)
        levels = []
        for drop in _drops(params["drops"]):
            level = lowered(thresholds, drop)
            mined = {m.rule for m in association_rules(data, level)}
            levels.append((drop, level, mined))
        findings = []
        for number, rule in enumerate(rules, start=1):
            sxy, sx = rule_counts(data, rule)
            margin = reappearance_drop(sxy, sx, thresholds)
            per_level = []
            for drop, level, mined in levels:
                found = rule in mined if len(rule.consequent) == 1 else level.strong(sxy, sx)
                per_level.append(
                    {
                        "drop": drop,
                        "min_support": level.min_support,
                        "min_confidence": float(level.min_confidence),
                        "rules_mined": len(mined),
                        "rule_found": found,
                    }
                )
            evidence_json = {
                "rule_number": number,
                "sensitive_rule": rule.to_json(),
                "support": sxy,
                "antecedent_support": sx,
                "confidence": sxy / sx if sx else 0.0,
                "min_support": thresholds.min_support,
                "min_confidence": float(thresholds.min_confidence),
                "reappears_at_drop": margin,
                "levels": per_level,
            }
            refutes = None
            if thresholds.strong(sxy, sx):
                severity, title = "breach", f"sensitive rule {number} is still mined at the stated thresholds"
                refutes = "rule-hiding"
            elif margin is None:
                severity, title = "info", f"sensitive rule {number} has no support left: it cannot be re-mined"
            else:
                severity = "risk" if margin <= params["risk_drop"] else "info"
                title = f"sensitive rule {number} reappears when both thresholds drop by {margin * 100:.3g}%"
            explanation = (
                f"Mining with both thresholds lowered by {margin * 100:.3g} % finds the rule; the rule-hiding claim "
                "covers mining at the claimed thresholds only."
                if severity == "risk" and margin is not None
                else ""
            )
            findings.append(
                Finding(self.name, severity, title, evidence_json, refutes=refutes, explanation=explanation)
            )
        return findings

    def exposure(self, findings: Sequence[Finding]) -> str | None:
        margins = [f.evidence["reappears_at_drop"] for f in findings if "reappears_at_drop" in f.evidence]
        if not margins:
            return None
        found = [m for m in margins if m is not None]
        if not found:
            return f"none of the {len(margins)} sensitive rule(s) can be re-mined (no support left)"
        return (
            f"{len(found)} of {len(margins)} sensitive rule(s) reappear when the thresholds drop; "
            f"the closest at a {min(found) * 100:.3g} % drop"
        )
