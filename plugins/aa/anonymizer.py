"""The ``aa`` anonymizer: the AA cut (:mod:`.apriori`) applied to every record,
published as a ``generalized`` release.

Every record is published: each item is replaced by its cut node, and a record
holding several items under one node publishes that node once. The trail uses
the layout of the other generalising anonymizers, so the ``ncp`` metric and the
``hierarchy`` verifier read it unchanged: ``cluster_of_record[i]`` names the
group of records with input record i's published form (``g0``, ``g1``, ... in
canonical order of the forms) and ``notes["groups"]`` gives each group's labels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privtool.arrays import csr_distinct
from privtool.claims import Claim
from privtool.components import Anonymizer, Outcome
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.errors import ParameterError
from privtool.hierarchy import HIERARCHY, HIERARCHY_FORMAT, Hierarchy, load_hierarchy
from privtool.itemset_mining import itemset_counts
from privtool.params import K, M, Param
from privtool.record_clusters import RecordClusters
from privtool.release import Release
from privtool.trail import Trail

from .apriori import COSTS, ORDERS, AaResult, apriori_anonymize

ORDER = Param(
    "order",
    str,
    "itemset",
    "order in which AA repairs the violating itemsets of a level: itemset (node order, a depth-first "
    "walk of the paper's count tree) or support (rarest first)",
    choices=ORDERS,
)

COST = Param(
    "cost",
    str,
    "ncp",
    "what a repair minimises: ncp (the exact increase of NCP) or leaves (the sum of the leaf counts of the "
    "raised nodes, as the public Python AA orders candidate cuts)",
    choices=COSTS,
)


class Aa(Anonymizer):
    name = "aa"
    summary = "AA: k^m-anonymity by Apriori-based global generalisation through a hierarchy (Terrovitis et al. 2008)"
    params = (K, M, HIERARCHY, HIERARCHY_FORMAT, ORDER, COST)

    def claims(self, params: dict[str, Any]) -> list[Claim]:
        """k^m-anonymity of the published records, against an adversary who
        knows up to m items of a person and the release (not the algorithm: a
        global cut chosen by a deterministic greedy can tell an algorithm-aware
        adversary more, so that is not claimed)."""
        return [Claim("km-anonymity", {"k": params["k"], "m": params["m"]})]

    def anonymize(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
        k, m = params["k"], params["m"]
        hier = load_hierarchy(params["hierarchy"], params["hierarchy_format"], dataset)
        occ_leaf = hier.leaf_ids(dataset)[dataset.items].astype(np.int64)
        n_nonempty = int((dataset.sizes > 0).sum())
        if n_nonempty < k:
            raise ParameterError(
                f"--k {k} is larger than the {n_nonempty} non-empty records of the data; "
                "no k^m-anonymous release exists."
            )
        with ctx.stage(f"{self.name}: apriori generalisation (levels 1..{m})", None):
            result = apriori_anonymize(hier, dataset.indptr, occ_leaf, k, m, params["order"], params["cost"])
        published = result.gen[occ_leaf]
        indptr, nodes = csr_distinct(dataset.indptr, published)
        _check_km(indptr, nodes, k, m, hier.n_nodes)
        return _outcome(self.name, dataset, hier, result, published, indptr, nodes)


def _check_km(indptr: np.ndarray, nodes: np.ndarray, k: int, m: int, n_nodes: int) -> None:
    """Every published itemset of 1..m nodes occurs at least k times; a failure
    is a bug (the verifiers check the release independently)."""
    for size in range(1, m + 1):
        _, counts = itemset_counts(indptr, nodes, size, n_nodes)
        if len(counts) and counts.min() < k:
            raise RuntimeError(f"internal error: an itemset of {size} published nodes occurs fewer than k times")


def _outcome(
    method: str,
    dataset: Dataset,
    hier: Hierarchy,
    result: AaResult,
    published: np.ndarray,
    indptr: np.ndarray,
    nodes: np.ndarray,
) -> Outcome:
    """The release (every record as its published labels) and the trail (each
    input record's group of identical published records, see the module docstring)."""
    rank = hier.label_rank
    order = np.lexsort((rank[nodes], np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))))
    ranks = rank[nodes][order].tolist()
    bounds = indptr.tolist()
    # a form is keyed by the label ranks of its nodes: that tuple order is the canonical order
    forms = [tuple(ranks[bounds[i] : bounds[i + 1]]) for i in range(len(bounds) - 1)]
    label_of_rank = {int(rank[v]): hier.labels[v] for v in np.unique(nodes).tolist()}
    distinct = sorted(set(forms))
    group_id = {form: f"g{i}" for i, form in enumerate(distinct)}
    group_labels = {group_id[form]: [label_of_rank[r] for r in form] for form in distinct}
    group_code = {form: i for i, form in enumerate(distinct)}
    codes = np.fromiter((group_code[form] for form in forms), dtype=np.int32, count=len(forms))
    cluster_of_record = RecordClusters([group_id[form] for form in distinct], codes)
    records = [group_labels[group_id[form]] for form in forms]
    ncp_value = float(hier.ncp[published].mean()) if len(published) else 0.0
    cut = np.unique(published)
    release = Release(
        kind="generalized",
        records=records,
        hierarchy=hier.to_json(),
        stats={
            "records_in": dataset.n_records,
            "records_published": len(records),
            "suppressed_records": 0,
            "item_occurrences_in": dataset.n_occurrences,
            "item_occurrences_published": len(nodes),
            "published_nodes": len(cut),
            "published_internal_nodes": int((~hier.is_leaf[cut]).sum()),
            "ncp": ncp_value,
            "ncp_percent": 100.0 * ncp_value,
        },
    )
    notes: dict[str, Any] = {"method": method, "groups": group_labels}
    for level in result.levels:
        size = level["size"]
        notes[f"violations_{size}"] = level["violations"]
        notes[f"generalisations_{size}"] = level["generalisations"]
        notes[f"passes_{size}"] = level["passes"]
    trail = Trail(cluster_of_record=cluster_of_record, suppressed_records=[], notes=notes)
    return Outcome(release, trail)
