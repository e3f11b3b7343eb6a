"""``mfi-relevance``: Le, Kieu & Tran (JCSC 35(4), 2019), sections 3.1-3.2.

The paper's text stops in 3.2; every choice below that it does not state is
marked [choice] and argued in docs/algorithms/rule-hiding.md.

1. Preprocess (3.1): the frequent itemsets FI at MST; the non-sensitive ones are
   those that contain no generating itemset ``X u Y`` of a sensitive rule
   [choice: the paper says NS-MFIs are identified "based on all frequent itemsets
   and the generating itemset of sensitive rules"]; NS-MFI is the set of their
   maximal elements. Since that family is closed under subsets, ``S`` is maximal
   iff no one-item extension of ``S`` is in it, which is found in one linear pass.
2. Sensitive rules are taken in increasing support of ``X u Y``, ties longer
   itemset first (3.1), then canonical rule text [choice].
3. For a rule still strong, its supporting transactions ``T_r`` are ranked by
   ``rel(t)`` = the number of NS-MFIs ``M`` with ``M`` a subset of ``t`` and
   ``M`` meeting the consequent ``Y`` (3.2: fewer first), ties by shorter
   transaction (3.2), then record position [choice]. Counts are taken on the
   current, partly sanitized data [choice].
4. ``N = min(N_sup, N_conf)`` transactions are modified (ALGORITHM-NOTES 2.2),
   computed before any change, with a consequent item as victim, so exactly
   ``N`` removals hide the rule.
5. Victim in each transaction [choice; the paper: "one item of the consequent ...
   so that the side effects are minimized"]: the item ``y`` of ``Y`` that the
   fewest NS-MFIs supported by ``t`` contain, ties by fewer NS-MFIs overall, then
   lower current support, then label order.
6. Removing an antecedent item elsewhere can raise a rule's confidence; passes
   repeat until no sensitive rule is strong [choice; never needed with
   consequent-only victims unless rules share items across sides].
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privtool.context import Context
from privtool.mining import frequent_itemsets, rule_sort_key

from .base import RuleHidingSanitizer
from .workspace import Workspace


def non_sensitive_maximal(frequent: dict[frozenset[int], int], sensitive: list[frozenset[int]]) -> list[frozenset[int]]:
    """Maximal elements of the frequent itemsets that contain no ``sensitive`` itemset."""
    family = {s for s in frequent if not any(z <= s for z in sensitive)}
    covered: set[frozenset[int]] = set()
    for itemset in family:
        if len(itemset) > 1:
            for item in itemset:
                covered.add(itemset - {item})
    return sorted(family - covered, key=lambda s: (len(s), sorted(s)))


class MfiRelevance(RuleHidingSanitizer):
    name = "mfi-relevance"
    summary = (
        "hide rules removing consequent items from the transactions that support the fewest "
        "non-sensitive maximal frequent itemsets (Le, Kieu, Tran 2019)"
    )

    def hide(self, workspace: Workspace, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        data = workspace.dataset
        frequent = frequent_itemsets(data, workspace.thresholds.min_support)
        ns_mfi = non_sensitive_maximal(frequent, [rule.xy for rule in workspace.rules])
        mfi_count = np.zeros(data.n_items, dtype=np.int64)
        for itemset in ns_mfi:
            mfi_count[list(itemset)] += 1
        order = sorted(
            range(len(workspace.rules)),
            key=lambda i: (workspace.counts[i][0], -len(workspace.rules[i].xy), rule_sort_key(workspace.rules[i].rule)),
        )
        passes = 0
        while workspace.strong_rules():
            passes += 1
            for index in order:
                if workspace.strong(index):
                    self._hide_one(workspace, index, ns_mfi, mfi_count)
        return {"ns_mfi": len(ns_mfi), "frequent_itemsets": len(frequent), "passes": passes}

    @staticmethod
    def _hide_one(workspace: Workspace, index: int, ns_mfi: list[frozenset[int]], mfi_count: np.ndarray) -> None:
        rule = workspace.rules[index]
        rows = workspace.rows_with(rule.xy)
        needed = workspace.to_hide(index)
        relevant = [m for m in ns_mfi if m & rule.y]
        # contained[k, j]: transaction rows[k] supports relevant NS-MFI j (now).
        contained = np.ones((len(rows), len(relevant)), dtype=bool)
        presence: dict[int, np.ndarray] = {}
        for j, itemset in enumerate(relevant):
            for item in itemset:
                if item not in presence:
                    presence[item] = np.isin(rows, workspace.rows_with((item,)), assume_unique=True)
                contained[:, j] &= presence[item]
        relevance = contained.sum(axis=1)
        ranked = np.lexsort((rows, workspace.size_of(rows), relevance))[:needed]
        consequent = sorted(rule.y)
        per_item = np.zeros((len(rows), len(consequent)), dtype=np.int64)
        for c, item in enumerate(consequent):
            columns = [j for j, itemset in enumerate(relevant) if item in itemset]
            if columns:
                per_item[:, c] = contained[:, columns].sum(axis=1)
        supports = [workspace.support((item,)) for item in consequent]
        for k in ranked.tolist():
            victim = min(
                range(len(consequent)),
                key=lambda c: (per_item[k, c], mfi_count[consequent[c]], supports[c], consequent[c]),
            )
            workspace.remove(int(rows[k]), consequent[victim])
