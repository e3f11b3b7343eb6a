"""The side-effect report of a sanitized release (ALGORITHM-NOTES 2.4).

R(D) is the set of strong rules of D at the release's thresholds: the mined
single-consequent rules plus the sensitive rules that are strong
(:func:`privtool.mining.rule_universe`); R_S the sensitive rules, R_NS = R(D) minus R_S.

* hiding failure HF = |R_S n R(D')| / |R_S n R(D)|;
* lost rules = |R_NS(D) minus R(D')| and misses cost MC = lost / |R_NS(D)| (the
  safe form of the notes: ghosts do not offset losses);
* ghost rules = |R(D') minus R(D)| and artifactual patterns AP = ghosts / |R(D')|;
* dissimilarity = sum_i |f_D(i) - f_D'(i)| / sum_i f_D(i) over item frequencies;
* side-effect factor SEF = (|R(D)| - (|R(D')| + |R_S(D)|)) / (|R(D)| - |R_S(D)|);
* removed item occurrences, and modified transactions (exact from the trail;
  without it, the number of original records that have no identical record
  left in the release, a lower bound);
* added item occurrences (must be 0 for a distortion-by-deletion method).

Ratios whose denominator is 0 are reported as 0.0.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from privtool.claims import claimed
from privtool.components import Evidence, Metric
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.errors import MissingEvidence, ParameterError
from privtool.mining import Rule, Thresholds, confidence_fraction, rule_universe
from privtool.release import Release
from privtool.sensitive_rules import sensitive_rules
from privtool.trail import Trail


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


def _frequencies(dataset: Dataset, labels: list[str]) -> np.ndarray:
    index = {label: k for k, label in enumerate(labels)}
    out = np.zeros(len(labels), dtype=np.int64)
    positions = np.array([index[label] for label in dataset.labels], dtype=np.int64)
    np.add.at(out, positions, dataset.supports)
    return out


def side_effects(
    original: Dataset, sanitized: Dataset, sensitive: list[Rule], thresholds: Thresholds, trail: Trail | None = None
) -> dict[str, Any]:
    """Every side-effect figure of hiding ``sensitive`` in ``original`` (see the module doc)."""
    before = rule_universe(original, thresholds, sensitive)
    after = rule_universe(sanitized, thresholds, sensitive)
    sensitive_set = set(sensitive)
    strong_sensitive = before & sensitive_set
    non_sensitive = before - sensitive_set
    lost = non_sensitive - after
    ghosts = after - before
    labels = sorted(set(original.labels) | set(sanitized.labels))
    f_before, f_after = _frequencies(original, labels), _frequencies(sanitized, labels)
    if trail is not None:
        modified = len({int(record) for record, _ in trail.removed_items})
        modified_source = "trail"
    else:
        left = Counter(map(tuple, sanitized.to_label_records()))
        kept = sum(min(n, left[record]) for record, n in Counter(map(tuple, original.to_label_records())).items())
        modified = original.n_records - kept
        modified_source = "lower bound (no trail)"
    return {
        "sensitive_rules": len(sensitive_set),
        "sensitive_rules_strong_before": len(strong_sensitive),
        "sensitive_rules_not_hidden": len(after & sensitive_set),
        "hiding_failure": _ratio(len(after & strong_sensitive), len(strong_sensitive)),
        "rules_before": len(before),
        "rules_after": len(after),
        "lost_rules": len(lost),
        "misses_cost": _ratio(len(lost), len(non_sensitive)),
        "ghost_rules": len(ghosts),
        "artifactual_patterns": _ratio(len(ghosts), len(after)),
        "dissimilarity": _ratio(int(np.abs(f_before - f_after).sum()), int(f_before.sum())),
        "side_effect_factor": _ratio(
            len(before) - (len(after) + len(strong_sensitive)), len(before) - len(strong_sensitive)
        ),
        "removed_item_occurrences": int(np.clip(f_before - f_after, 0, None).sum()),
        "added_item_occurrences": int(np.clip(f_after - f_before, 0, None).sum()),
        "modified_transactions": modified,
        "modified_transactions_source": modified_source,
    }


def release_rules(
    release: Release, trail: Trail | None, release_sha256: str | None = None
) -> tuple[list[Rule], Thresholds]:
    """The sensitive rules (from the private trail, or a version 1 release's
    params) and the thresholds of the release's ``rule-hiding`` claim;
    :class:`~privtool.errors.MissingEvidence` when either is not there."""
    claims = claimed(release.claims, "rule-hiding")
    if not claims:
        raise MissingEvidence("the release claims no rule-hiding, so it states no thresholds to mine at.")
    rules = sensitive_rules(release, trail, release_sha256)
    params = claims[0].params
    try:
        thresholds = Thresholds(int(params["min_support"]), confidence_fraction(float(params["min_confidence"])))
    except (KeyError, TypeError, ValueError) as exc:
        raise ParameterError(f"the release's rule-hiding claim does not state valid thresholds ({exc!r}).") from None
    return rules, thresholds


def release_dataset(release: Release) -> Dataset:
    return Dataset.from_records(release.records)


class RuleSideEffects(Metric):
    name = "rule-side-effects"
    summary = (
        "hiding failure, lost and ghost rules, misses cost, dissimilarity, side-effect factor of a rule-hiding release"
    )
    applies_to = ("sanitized",)
    better = "lower"
    needs = ("original",)

    def compute(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        if evidence.original is None:  # ``needs`` keeps this from happening through the runners
            raise MissingEvidence(f"metric {self.name!r} needs the original data (--original DATA).")
        rules, thresholds = release_rules(release, evidence.trail, evidence.extra.get("release_sha256"))
        return side_effects(evidence.original, release_dataset(release), rules, thresholds, evidence.trail)
