"""``mdsrrc``: DSRRC (Modi et al. 2010) and its multi-item extension MDSRRC
(Domadiya & Rao 2013), as verified in ALGORITHM-NOTES 2.3.

1. Rules are clustered by their consequent item. For a consequent of several
   items the cluster item is the one in the most sensitive rules, ties by label
   order [choice, in MDSRRC's spirit of deleting the most sensitive item].
2. Within a cluster, item sensitivity = the number of the cluster's rules that
   contain the item; rule sensitivity = the sum over its items; cluster
   sensitivity = the sum over its rules.
3. Clusters are taken in decreasing sensitivity (ties by cluster item label
   order [choice]). The transactions that fully support a strong rule of the
   cluster are sorted by decreasing transaction sensitivity (the sum of the
   sensitivities of their items), ties by shorter transaction then position
   [choice]; each in turn loses the cluster item, skipping one that no longer
   supports a strong rule of the cluster, until every rule of the cluster is hidden.
4. Passes repeat until no sensitive rule is strong (a deletion of an antecedent
   item can raise the confidence of a rule of another cluster).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from privtool.context import Context

from .base import RuleHidingSanitizer
from .workspace import Workspace


class Mdsrrc(RuleHidingSanitizer):
    name = "mdsrrc"
    summary = (
        "baseline: delete each rule cluster's common consequent from the most sensitive transactions "
        "(Modi et al. 2010; Domadiya, Rao 2013)"
    )

    def hide(self, workspace: Workspace, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        rules = workspace.rules
        in_rules: dict[int, int] = defaultdict(int)
        for rule in rules:
            for item in rule.xy:
                in_rules[item] += 1
        clusters: dict[int, list[int]] = defaultdict(list)
        for index, rule in enumerate(rules):
            head = min(rule.y, key=lambda item: (-in_rules[item], item))
            clusters[head].append(index)
        sensitivity: dict[int, dict[int, int]] = {}
        for head, members in clusters.items():
            local: dict[int, int] = defaultdict(int)
            for index in members:
                for item in rules[index].xy:
                    local[item] += 1
            sensitivity[head] = dict(local)
        cluster_order = sorted(
            clusters,
            key=lambda head: (-sum(sensitivity[head][i] for m in clusters[head] for i in rules[m].xy), head),
        )
        passes = 0
        while workspace.strong_rules():
            passes += 1
            for head in cluster_order:
                self._hide_cluster(workspace, head, clusters[head], sensitivity[head])
        return {"clusters": len(clusters), "passes": passes}

    @staticmethod
    def _hide_cluster(workspace: Workspace, head: int, members: list[int], sensitivity: dict[int, int]) -> None:
        strong = [i for i in members if workspace.strong(i)]
        if not strong:
            return
        rows = np.unique(np.concatenate([workspace.rows_with(workspace.rules[i].xy) for i in strong]))
        weight = np.array([sum(sensitivity.get(item, 0) for item in workspace.items_of(t)) for t in rows.tolist()])
        for k in np.lexsort((rows, workspace.size_of(rows), -weight)).tolist():
            strong = [i for i in members if workspace.strong(i)]
            if not strong:
                return
            record = int(rows[k])
            items = workspace.items_of(record)
            if any(workspace.rules[i].xy <= items for i in strong):
                workspace.remove(record, head)
