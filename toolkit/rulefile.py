"""Sensitive-rule files: ``a b => c`` lines or rule ids from ``privtool rules``.

Syntax, one entry per line (docs/commands/hide.md):

* ``a b => c d``: antecedent labels, ``=>``, consequent labels, separated by
  whitespace, labels exactly as in the data;
* ``r0123456789``: a rule id printed by ``privtool rules`` (:func:`privtool.mining.rule_id`);
* blank lines and everything after ``#`` are ignored.

:func:`parse_rule_lines` checks the syntax; :func:`resolve_rules` turns ids into
rules (by mining the data at the given thresholds) and checks every label
against the data. Every problem is an :class:`~privtool.errors.InputError`
naming the file and line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .dataset import Dataset
from .errors import InputError
from .mining import Rule, Thresholds, association_rules

_ID = re.compile(r"^r[0-9a-f]{10}$")


@dataclass(frozen=True)
class RuleLine:
    """One entry of a rule file: a rule, or an id still to resolve."""

    line: int
    rule: Rule | None = None
    rule_id: str | None = None


def parse_rule_lines(lines: Iterable[str], source: object) -> list[RuleLine]:
    """Parse rule-file lines (1-based line numbers in errors)."""
    entries = []
    for number, raw in enumerate(lines, start=1):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        if "=>" not in text:
            if _ID.match(text):
                entries.append(RuleLine(number, rule_id=text))
                continue
            raise InputError(
                f"expected a rule `a b => c` or a rule id like r0123456789, found {text!r}", source, number
            )
        left, _, right = text.partition("=>")
        if "=>" in right:
            raise InputError("a rule has exactly one `=>`", source, number)
        antecedent, consequent = left.split(), right.split()
        if not antecedent or not consequent:
            side = "antecedent (left of =>)" if not antecedent else "consequent (right of =>)"
            raise InputError(f"the rule has an empty {side}", source, number)
        shared = sorted(set(antecedent) & set(consequent))
        if shared:
            raise InputError(f"item {shared[0]!r} is on both sides of the rule", source, number)
        entries.append(RuleLine(number, rule=Rule.of(antecedent, consequent)))
    if not entries:
        raise InputError("the rule file lists no rule", source)
    return entries


def read_rule_file(path: str | os.PathLike[str]) -> list[RuleLine]:
    p = Path(path)
    if not p.is_file():
        raise InputError("no such rule file" if not p.exists() else "expected a rule file, found a directory", path=p)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("the rule file is not UTF-8 text", path=p) from None
    return parse_rule_lines(text.splitlines(), p)


def resolve_rules(entries: list[RuleLine], dataset: Dataset, thresholds: Thresholds, source: object) -> list[Rule]:
    """The rules of ``entries`` in file order, without repeats. Ids are looked up
    among the strong rules of ``dataset`` at ``thresholds`` (what ``privtool
    rules`` lists at those thresholds); labels must occur in ``dataset``."""
    by_id: dict[str, Rule] = {}
    if any(entry.rule_id for entry in entries):
        by_id = {mined.rule.id: mined.rule for mined in association_rules(dataset, thresholds)}
    rules: list[Rule] = []
    for entry in entries:
        rule = entry.rule
        if rule is None:
            rule = by_id.get(entry.rule_id or "")
            if rule is None:
                raise InputError(
                    f"rule id {entry.rule_id} is not among the rules of the data at these thresholds "
                    "(run `privtool rules` with the same --min-support and --min-confidence)",
                    source,
                    entry.line,
                )
        for label in rule.itemset:
            try:
                dataset.id_of(label)
            except KeyError:
                raise InputError(f"item {label!r} does not occur in the data", source, entry.line) from None
        if rule not in rules:
            rules.append(rule)
    return rules


def rules_from_param(text: str, dataset: Dataset, thresholds: Thresholds) -> list[Rule]:
    """The rules of a ``sensitive_rules`` parameter (rule-file syntax, ``;`` also ends a line)."""
    entries = parse_rule_lines(text.replace(";", "\n").splitlines(), "--sensitive-rules")
    return resolve_rules(entries, dataset, thresholds, "--sensitive-rules")


def rules_text(rules: Iterable[Rule]) -> str:
    """Rules in the file syntax, one a line (the form sanitizer parameters take)."""
    return "\n".join(rule.text for rule in rules)
