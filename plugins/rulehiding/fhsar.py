"""``fhsar``: Weng, Chen & Lo, "A novel algorithm for completely hiding sensitive
association rules" (ISDA 2008), as verified in ALGORITHM-NOTES 2.3.

Every transaction ``t`` that fully supports a strong sensitive rule has the
weight ``w(t) = MIC / 2^(|t| - 1)``, where MIC is the largest number, over the
items of ``t``, of the strong sensitive rules supported by ``t`` that contain the
item. At every step the transaction of largest weight, with every weight as
defined on the current data, loses its max-count item, and the rule counts are
updated exactly; the loop ends when no sensitive rule is strong. Ties [choice]:
equal weights (compared exactly, as rationals) go to the lower record position;
equal counts to the item first in label order.

Implementation: a lazy max-heap, provably the same choice as recomputing every
weight at every step. Invariant: every transaction of positive weight has an
entry whose key is at least its current weight. A removal from ``t`` changes
the items of ``t`` only, so only two things can raise a weight: ``t`` itself
(it got shorter), and a rule becoming strong again (a removal from ``X`` of a
rule in a record without ``Y`` raises its confidence), which raises the weights
of the records that support that rule. After each removal ``t`` and the
supporters of every rule that became strong are pushed with their new weights,
so the invariant holds. Hiding a rule only lowers weights. A popped entry is
re-weighed: if its key is above the current weight it goes back with the
current weight; otherwise its (weight, position) is the exact maximum of every
transaction's current (weight, -position), because every other transaction has
an entry at least as large. docs/algorithms/rule-hiding.md, "fhsar".
"""

from __future__ import annotations

import heapq
from typing import Any

from privtool.context import Context

from .base import RuleHidingSanitizer
from .workspace import Workspace


def weigh(workspace: Workspace, record: int, strong: list[int]) -> tuple[int, int, int] | None:
    """``(MIC, |t|, victim)`` of ``record`` now, or None when it supports no
    strong rule; the weight is ``MIC / 2^(|t| - 1)``."""
    items = workspace.items_of(record)
    counts: dict[int, int] = {}
    for index in strong:
        rule = workspace.rules[index]
        if rule.xy <= items:
            for item in rule.xy:
                counts[item] = counts.get(item, 0) + 1
    if not counts:
        return None
    victim = min(counts, key=lambda item: (-counts[item], item))
    return counts[victim], len(items), victim


class Fhsar(RuleHidingSanitizer):
    name = "fhsar"
    summary = (
        "baseline: remove the max-count item from the heaviest transaction, w = MIC / 2^(|t|-1) (Weng, Chen, Lo 2008)"
    )

    def hide(self, workspace: Workspace, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        # weights MIC / 2^(|t|-1) compared exactly as the integers MIC * 2^(longest - |t|)
        longest = int(workspace.dataset.sizes.max(initial=0))
        strong = workspace.strong_rules()
        heap: list[tuple[int, int]] = []

        def push(record: int) -> None:
            weighed = weigh(workspace, record, strong)
            if weighed is not None:
                mic, size, _ = weighed
                heapq.heappush(heap, (-(mic << (longest - size)), record))

        def push_supporters(indices: list[int]) -> None:
            for record in sorted({int(t) for i in indices for t in workspace.rows_with(workspace.rules[i].xy)}):
                push(record)

        push_supporters(strong)
        reweighed = reemerged = 0
        while strong:
            key, record = heapq.heappop(heap)
            weighed = weigh(workspace, record, strong)
            if weighed is None:
                continue
            mic, size, victim = weighed
            current = -(mic << (longest - size))
            if current > key:
                reweighed += 1
                heapq.heappush(heap, (current, record))
                continue
            workspace.remove(record, victim)
            before = set(strong)
            strong = workspace.strong_rules()
            emerged = [i for i in strong if i not in before]
            push(record)
            if emerged:
                reemerged += len(emerged)
                push_supporters(emerged)
        return {"reweighed": reweighed, "reemerged_rules": reemerged}
