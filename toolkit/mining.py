"""Frequent itemsets, maximal frequent itemsets and association rules.

One small interface over Borgelt's compiled miner ``pyfim`` (imported lazily):

* :func:`min_support_count` turns a support threshold given as a fraction
  (``0 < s < 1``) or an absolute count (an integer ``>= 1``) into the absolute
  count that every other function uses. A fraction ``s`` means "at least
  ``ceil(s * n)`` records" (ALGORITHM-NOTES 2.2: frequent means ``s(Z) >= MST * n``).
* :class:`Thresholds` holds the absolute support and the confidence as an exact
  fraction; :meth:`Thresholds.strong` is THE rule predicate of privtool: a rule
  ``X => Y`` is strong iff ``s(XY) >= min_support`` and ``s(XY) / s(X) >=
  min_confidence``; it is hidden otherwise. Comparisons are made in integers
  (``min_confidence`` is read as the decimal it was written as), so no rule
  flips at a threshold because of floating-point rounding.
* :func:`frequent_itemsets` (all or maximal) and :func:`association_rules`.
  Mined rules have ONE item in the consequent (the Agrawal-Srikant / Borgelt
  convention used by the rule-hiding literature); sensitive rules given by a
  user may have several consequent items and are evaluated directly with
  :func:`rule_counts`.
* Rules are identified by :func:`rule_id`, a hash of their canonical text, so an
  id means the same rule whatever the thresholds, the data or the run.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .dataset import Dataset, label_sort_key
from .errors import ParameterError
from .itemset_mining import pyfim_transactions  # pyfim input, with the empty record that keeps it exact

Labels = tuple[str, ...]


def min_support_count(value: float, n_records: int, option: str = "--min-support") -> int:
    """The absolute support count of a threshold given as a fraction or a count.

    ``0 < value < 1`` is a fraction of ``n_records`` (rounded up: ``ceil(value * n)``);
    an integral ``value >= 1`` is an absolute count. Anything else is a
    :class:`~privtool.errors.ParameterError` naming ``option``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ParameterError(f"{option} must be a fraction in (0, 1) or a record count >= 1, not {value!r}.")
    if value < 1:
        # The decimal the user wrote, so 0.3 * 10 is 3 and not 3.0000000000000004.
        return max(1, math.ceil(Fraction(repr(float(value))) * n_records))
    if float(value) != int(value):
        raise ParameterError(f"{option} of 1 or more is a record count and must be an integer, not {value!r}.")
    return int(value)


def confidence_fraction(value: float, option: str = "--min-confidence") -> Fraction:
    """``value`` in [0, 1] as the exact decimal fraction it was written as."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ParameterError(f"{option} must be a number between 0 and 1, not {value!r}.")
    return Fraction(repr(float(value))).limit_denominator(10**9)


@dataclass(frozen=True)
class Thresholds:
    """Absolute minimum support and minimum confidence (an exact fraction)."""

    min_support: int
    min_confidence: Fraction

    @classmethod
    def of(cls, min_support: float, min_confidence: float, n_records: int) -> Thresholds:
        return cls(min_support_count(min_support, n_records), confidence_fraction(min_confidence))

    def strong(self, support_xy: int, support_x: int) -> bool:
        """True iff a rule with these counts is mined (not hidden)."""
        if support_xy < self.min_support:
            return False
        conf = self.min_confidence
        return support_xy * conf.denominator >= conf.numerator * support_x

    def transactions_to_hide(self, support_xy: int, support_x: int) -> int:
        """The fewest supporting transactions from which one consequent item must
        be removed to hide a rule (ALGORITHM-NOTES 2.2): ``min(N_sup, N_conf)``
        with ``N_sup = s(XY) - MST + 1`` and ``N_conf = floor(s(XY) - MCT s(X)) + 1``,
        computed exactly; 0 when the rule is already hidden."""
        if not self.strong(support_xy, support_x):
            return 0
        by_support = support_xy - self.min_support + 1
        conf = self.min_confidence
        by_confidence = math.floor(support_xy - conf * support_x) + 1
        return min(by_support, by_confidence)

    @property
    def confidence_float(self) -> float:
        return float(self.min_confidence)


def canonical_labels(labels: Iterable[str]) -> Labels:
    return tuple(sorted(set(labels), key=label_sort_key))


@dataclass(frozen=True)
class Rule:
    """An association rule ``antecedent => consequent`` over item labels (each
    side canonical and non-empty, the sides disjoint)."""

    antecedent: Labels
    consequent: Labels

    @classmethod
    def of(cls, antecedent: Iterable[str], consequent: Iterable[str]) -> Rule:
        return cls(canonical_labels(antecedent), canonical_labels(consequent))

    @property
    def itemset(self) -> Labels:
        return canonical_labels(self.antecedent + self.consequent)

    @property
    def text(self) -> str:
        """``a b => c``: the canonical text that :func:`rule_id` hashes."""
        return f"{' '.join(self.antecedent)} => {' '.join(self.consequent)}"

    @property
    def id(self) -> str:
        return rule_id(self)

    def to_json(self) -> list[list[str]]:
        """``[[antecedent labels], [consequent labels]]`` (the release convention)."""
        return [list(self.antecedent), list(self.consequent)]


def rule_id(rule: Rule) -> str:
    """``r`` + the first 10 hex digits of the SHA-256 of the rule's canonical
    text (``a b => c``, each side in canonical label order, one space apart)."""
    return "r" + hashlib.sha256(rule.text.encode("utf-8")).hexdigest()[:10]


@dataclass(frozen=True)
class MinedRule:
    """A rule with its counts in one dataset."""

    rule: Rule
    support: int
    antecedent_support: int

    @property
    def confidence(self) -> float:
        return self.support / self.antecedent_support if self.antecedent_support else 0.0


def frequent_itemsets(dataset: Dataset, min_support: int, maximal: bool = False) -> dict[frozenset[int], int]:
    """Every frequent itemset (or only the maximal ones) with its support count,
    as frozensets of item ids of ``dataset``."""
    import fim  # lazily: compiled extension

    if min_support < 1:
        raise ParameterError(f"the minimum support count must be at least 1, not {min_support}.")
    found = fim.fim(pyfim_transactions(dataset), target="m" if maximal else "s", supp=-min_support, report="a")
    return {frozenset(itemset): int(support) for itemset, support in found}


def association_rules(dataset: Dataset, thresholds: Thresholds) -> list[MinedRule]:
    """Every strong rule with a single consequent item, in canonical order
    (by :func:`rule_sort_key`). pyfim finds the candidates; each is then checked
    with :meth:`Thresholds.strong` on its exact counts."""
    import fim  # lazily: compiled extension

    labels = dataset.labels
    # A hair below the threshold: pyfim compares percentages in floating point,
    # the exact test below has the last word.
    conf_percent = max(0.0, float(thresholds.min_confidence) * 100.0 - 1e-6)
    found = fim.arules(
        pyfim_transactions(dataset), supp=-thresholds.min_support, conf=conf_percent, zmin=2, report="ab", mode="o"
    )
    rules = []
    for head, body, support, body_support in found:
        if thresholds.strong(int(support), int(body_support)):
            rule = Rule.of((labels[i] for i in body), (labels[head],))
            rules.append(MinedRule(rule, int(support), int(body_support)))
    rules.sort(key=lambda mined: rule_sort_key(mined.rule))
    return rules


def strongest_first(mined: Iterable[MinedRule]) -> list[MinedRule]:
    """Rules by decreasing confidence, then decreasing support, then canonical
    order (stable): the order ``privtool rules`` lists and ``pick=top`` takes."""
    return sorted(mined, key=lambda m: (-m.support / m.antecedent_support, -m.support))


def rule_sort_key(rule: Rule) -> tuple:
    """Canonical order of rules: by antecedent, then consequent, in label order."""
    return (tuple(map(label_sort_key, rule.antecedent)), tuple(map(label_sort_key, rule.consequent)))


def rule_counts(dataset: Dataset, rule: Rule) -> tuple[int, int]:
    """``(s(XY), s(X))`` of ``rule`` in ``dataset``."""
    return dataset.support_of_labels(rule.itemset), dataset.support_of_labels(rule.antecedent)


def rule_universe(dataset: Dataset, thresholds: Thresholds, extra: Iterable[Rule] = ()) -> set[Rule]:
    """R(D): the mined single-consequent strong rules plus those of ``extra``
    (the sensitive rules, which may have several consequent items) that are strong."""
    rules = {mined.rule for mined in association_rules(dataset, thresholds)}
    for rule in extra:
        if thresholds.strong(*rule_counts(dataset, rule)):
            rules.add(rule)
    return rules


def item_frequencies(dataset: Dataset, labels: Sequence[str]) -> np.ndarray:
    """Support of each label of ``labels`` in ``dataset`` (0 when absent)."""
    out = np.zeros(len(labels), dtype=np.int64)
    supports = dataset.supports
    for k, label in enumerate(labels):
        try:
            out[k] = supports[dataset.id_of(label)]
        except KeyError:
            pass
    return out
