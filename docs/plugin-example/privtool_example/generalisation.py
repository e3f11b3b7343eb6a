"""The anonymizer ``global-generalisation``: k^m-anonymity by full-domain
generalisation, the simplest global recoding (Terrovitis, Mamoulis & Kalnis,
VLDB 2008 define k^m-anonymity; their Apriori-based AA, privtool's ``aa``,
chooses a cut per item instead of one level for all).

Every item is replaced by its ancestor at one depth of the hierarchy (an item
shallower than that depth stays itself), the same depth for every item and
every record; the deepest depth at which the published records are
k^m-anonymous wins. Because every item is published as exactly one node, a
record can hold a set of known items exactly when it holds their published
nodes, so counting the itemsets of 1..m published nodes
(:func:`privtool.itemset_mining.itemset_counts`) decides k^m-anonymity, and the
built-in ``km-anonymity-records`` verifier proves it independently. At the root
every record is ``{ALL}``, which is k^m-anonymous when there are at least k
records.

The release is of kind ``generalized``, with the hierarchy; the trail maps each
input record to its published form.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privtool.claims import Claim
from privtool.components import Anonymizer, Outcome
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.errors import ParameterError
from privtool.hierarchy import HIERARCHY, HIERARCHY_FORMAT, Hierarchy, load_hierarchy
from privtool.itemset_mining import itemset_counts
from privtool.params import K, M
from privtool.release import Release
from privtool.trail import Trail


class GlobalGeneralisation(Anonymizer):
    name = "global-generalisation"
    summary = "k^m-anonymity by generalising every item to the deepest hierarchy level that achieves it"
    params = (K, M, HIERARCHY, HIERARCHY_FORMAT)

    def claims(self, params: dict[str, Any]) -> list[Claim]:
        """k^m-anonymity at the method's k and m."""
        return [Claim("km-anonymity", {"k": params["k"], "m": params["m"]})]

    def anonymize(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
        k, m = params["k"], params["m"]
        hierarchy = load_hierarchy(params["hierarchy"], params["hierarchy_format"], dataset)
        leaf = hierarchy.leaf_ids(dataset)[dataset.items]  # the leaf node of every item occurrence
        with ctx.stage("choosing the generalisation level", total=hierarchy.max_depth + 1) as task:
            for depth in range(hierarchy.max_depth, -1, -1):
                published = generalise(dataset, hierarchy, leaf, depth)
                task.advance()
                if km_anonymous(published, k, m):
                    return outcome(dataset, hierarchy, published, depth)
        raise ParameterError(f"the data has {dataset.n_records} records: no level makes it k^m-anonymous for k = {k}.")


def generalise(dataset: Dataset, hierarchy: Hierarchy, leaf: np.ndarray, depth: int) -> Dataset:
    """Every record with each item replaced by its ancestor at ``depth`` (itself
    when it is shallower), as a dataset over the hierarchy's node labels."""
    node = hierarchy.ancestor_at[np.minimum(depth, hierarchy.depth[leaf]), leaf]
    return Dataset.from_csr(dataset.indptr, node, hierarchy.labels, normalise=True)


def km_anonymous(published: Dataset, k: int, m: int) -> bool:
    """Whether every itemset of 1..m published nodes that occurs occurs at least k times."""
    for size in range(1, m + 1):
        _, counts = itemset_counts(published.indptr, published.items, size, published.n_items)
        if len(counts) and counts.min() < k:
            return False
    return True


def outcome(dataset: Dataset, hierarchy: Hierarchy, published: Dataset, depth: int) -> Outcome:
    """The generalized release and its trail: group ``g<i>`` is the i-th distinct
    published record, in canonical order, and the trail maps every input record to its group."""
    records = published.to_label_records()
    forms = sorted({tuple(record) for record in records})
    group = {form: f"g{i}" for i, form in enumerate(forms)}
    release = Release(
        kind="generalized",
        records=records,
        hierarchy=hierarchy.to_json(),
        stats={
            "records_in": dataset.n_records,
            "records_published": published.n_records,
            "suppressed_records": 0,
            "item_occurrences_in": dataset.n_occurrences,
            "item_occurrences_published": published.n_occurrences,
        },
    )
    trail = Trail(
        cluster_of_record=[group[tuple(record)] for record in records],
        notes={"depth": depth, "groups": {group[form]: list(form) for form in forms}},
    )
    return Outcome(release, trail)
