"""``fhsar``: Weng, Chen & Lo, "A novel algorithm for completely hiding sensitive
association rules" (ISDA 2008), as verified in ALGORITHM-NOTES 2.3.

Every transaction ``t`` that fully supports a strong sensitive rule gets the
weight ``w(t) = MIC / 2^(|t| - 1)``, where MIC is the largest number, over the
items of ``t``, of the strong sensitive rules supported by ``t`` that contain the
item. The transaction of largest weight loses its max-count item; the rule
counts are updated exactly; the transaction goes back with its new weight while
it still supports a strong sensitive rule. Ties [choice]: the weight compares as
``log2 MIC - (|t| - 1)``; equal weights go to the lower record position; equal
counts to the item first in label order. Weights only fall while rules get
hidden, so a lazy heap (re-weigh on pop) gives the same order as recomputing
every weight after every step. Should a removal raise the confidence of a hidden
rule back over the threshold, the heap is rebuilt and the loop goes on.
"""

from __future__ import annotations

import heapq
import math
from typing import Any

from privtool.context import Context

from .base import RuleHidingSanitizer
from .workspace import Workspace


def _weigh(workspace: Workspace, record: int, strong: list[int]) -> tuple[float, int] | None:
    """``(-log2 w(t), victim)`` of ``record``, or None when it supports no strong rule."""
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
    return (len(items) - 1) - math.log2(counts[victim]), victim


class Fhsar(RuleHidingSanitizer):
    name = "fhsar"
    summary = (
        "baseline: remove the max-count item from the heaviest transaction, w = MIC / 2^(|t|-1) (Weng, Chen, Lo 2008)"
    )

    def hide(self, workspace: Workspace, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        rebuilds = 0
        while strong := workspace.strong_rules():
            rebuilds += 1
            heap: list[tuple[float, int]] = []
            candidates = sorted({int(t) for i in strong for t in workspace.rows_with(workspace.rules[i].xy)})
            for record in candidates:
                weighed = _weigh(workspace, record, strong)
                if weighed is not None:
                    heapq.heappush(heap, (weighed[0], record))
            while heap and strong:
                key, record = heapq.heappop(heap)
                weighed = _weigh(workspace, record, strong)
                if weighed is None:
                    continue
                if weighed[0] > key:
                    heapq.heappush(heap, (weighed[0], record))
                    continue
                workspace.remove(record, weighed[1])
                strong = workspace.strong_rules()
                again = _weigh(workspace, record, strong)
                if again is not None:
                    heapq.heappush(heap, (again[0], record))
        return {"heap_builds": rebuilds}
