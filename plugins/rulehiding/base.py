"""What every rule-hiding sanitizer shares: parameters, the run, the release.

A rule-hiding sanitizer takes the raw data (``applies_to = ("dataset",)``),
removes item occurrences until every sensitive rule is hidden (support below
``min_support`` or confidence below ``min_confidence``, ALGORITHM-NOTES 2.2), and
returns an :class:`~privtool.components.Outcome` whose release has kind
``sanitized`` and whose trail lists every removed occurrence as
``[record position, label]``.

Release convention: the release claims ``rule-hiding`` with ``min_support``
as an ABSOLUTE count and ``min_confidence`` as a float (:meth:`claims`; the
caller, :func:`privtool.hiding.hide`, turns a relative support into the count
first); ``params`` repeat the thresholds. The sensitive rules are a secret: they
go to the private trail (``Trail.sensitive_rules``, ``[[antecedent labels],
[consequent labels]]``), never into the release.

Subclasses implement :meth:`RuleHidingSanitizer.hide` on a
:class:`~privtool.plugins.rulehiding.workspace.Workspace`. Whatever the
heuristic does, :meth:`RuleHidingSanitizer.sanitize` recounts every sensitive
rule from scratch afterwards and refuses to return a release in which one is
still strong.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from privtool.claims import Claim
from privtool.components import Outcome, Sanitizer
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.errors import ParameterError
from privtool.mining import Rule, Thresholds
from privtool.params import Param
from privtool.release import Release
from privtool.rulefile import rules_from_param
from privtool.trail import Trail

from .workspace import IdRule, Workspace

COMMON_PARAMS: tuple[Param, ...] = (
    Param(
        "sensitive_rules",
        str,
        required=True,
        help="the rules to hide, `a b => c` or rule ids, one per line or separated by `;`",
    ),
    Param("min_support", float, required=True, help="minimum support: a fraction in (0, 1) or a record count >= 1"),
    Param("min_confidence", float, required=True, min=0.0, max=1.0, help="minimum confidence in [0, 1]"),
)


class RuleHidingSanitizer(Sanitizer):
    """Base of the rule-hiding sanitizers (see the module docstring)."""

    applies_to: ClassVar[tuple[str, ...]] = ("dataset",)
    params: ClassVar[tuple[Param, ...]] = COMMON_PARAMS

    def hide(self, workspace: Workspace, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """Remove items until every rule of ``workspace`` is hidden; return notes
        for the trail (solver status, passes, ...)."""
        raise NotImplementedError

    def claims(self, params: dict[str, Any], incoming: Sequence[Claim]) -> list[Claim]:
        """``rule-hiding`` at the thresholds (``min_support`` an absolute count)."""
        return [
            Claim(
                "rule-hiding",
                {"min_support": int(params["min_support"]), "min_confidence": float(params["min_confidence"])},
            )
        ]

    def sanitize(self, target: Outcome | Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
        if not isinstance(target, Dataset):
            raise ParameterError(f"sanitizer {self.name!r} hides rules in raw data, not in a release.")
        dataset = target
        thresholds = Thresholds.of(params["min_support"], params["min_confidence"], dataset.n_records)
        rules = rules_from_param(params["sensitive_rules"], dataset, thresholds)
        workspace = Workspace(dataset, [IdRule.of(rule, dataset) for rule in rules], thresholds)
        with ctx.stage(f"hiding {len(rules)} rules ({self.name})"):
            notes = self.hide(workspace, params, ctx)
        for rule in workspace.rules:
            if thresholds.strong(workspace.support(rule.xy), workspace.support(rule.x)):
                raise RuntimeError(f"sanitizer {self.name!r} left the rule {rule.rule.text} strong")
        sanitized = workspace.result()
        return Outcome(
            release=sanitized_release(dataset, sanitized, thresholds, params, self.name),
            trail=removal_trail(workspace, rules, notes),
        )


def sanitized_release(
    original: Dataset, sanitized: Dataset, thresholds: Thresholds, params: dict[str, Any], name: str
) -> Release:
    """The ``sanitized`` release of ``sanitized`` with the convention's params
    and stats (never the sensitive rules)."""
    release_params: dict[str, Any] = {
        "method": "rule-hiding",
        "sanitizer": name,
        "min_support": thresholds.min_support,
        "min_confidence": float(params["min_confidence"]),
    }
    for key, value in params.items():
        if key not in {p.name for p in COMMON_PARAMS}:
            release_params[key] = value
    changed = original.sizes != sanitized.sizes
    stats = {
        "records_in": original.n_records,
        "records_published": sanitized.n_records,
        "suppressed_records": 0,
        "item_occurrences_in": original.n_occurrences,
        "item_occurrences_published": sanitized.n_occurrences,
        "removed_item_occurrences": original.n_occurrences - sanitized.n_occurrences,
        "modified_records": int(changed.sum()),
    }
    return Release(kind="sanitized", params=release_params, stats=stats, records=sanitized.to_label_records())


def removal_trail(workspace: Workspace, rules: list[Rule], notes: dict[str, Any]) -> Trail:
    """The trail: every removed occurrence as ``[record position, label]``, in
    record order, the sensitive rules, and the sanitizer's notes."""
    labels = workspace.dataset.labels
    removed = sorted(workspace.log)
    return Trail(
        removed_items=[[record, labels[item]] for record, item in removed],
        sensitive_rules=[rule.to_json() for rule in rules],
        notes=dict(notes),
    )
