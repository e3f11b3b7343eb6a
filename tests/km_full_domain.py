"""A small third-party-style plugin for the tests: ``km-full-domain``, a k^m
global generalisation (Terrovitis et al. 2008's model with the simplest
recoding). Every item is replaced by its ancestor at one depth of the hierarchy
(a leaf shallower than that depth stays itself), the deepest depth at which
every set of up to m published labels that occurs occurs in at least k records,
checked here by brute force. The anonymizer claims ``km-anonymity`` (k, m); the
tests verify the claim with privtool's own verifiers."""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from typing import Any

from privtool.claims import Claim
from privtool.components import Anonymizer, Outcome
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.hierarchy import HIERARCHY, HIERARCHY_FORMAT, load_hierarchy
from privtool.hookspecs import hookimpl
from privtool.params import K, M
from privtool.release import Release
from privtool.trail import Trail


def km_anonymous(records: list[list[str]], k: int, m: int) -> bool:
    """Every set of 1..m labels that some record holds is held by at least k records."""
    counts: Counter[tuple[str, ...]] = Counter()
    for record in records:
        for size in range(1, min(m, len(record)) + 1):
            counts.update(combinations(sorted(record), size))
    return all(n >= k for n in counts.values())


class FullDomainKm(Anonymizer):
    name = "km-full-domain"
    summary = "k^m-anonymity by full-domain generalisation: every item to its ancestor at one depth"
    params = (K, M, HIERARCHY, HIERARCHY_FORMAT)

    def claims(self, params: dict[str, Any]) -> list[Claim]:
        return [Claim("km-anonymity", {"k": params["k"], "m": params["m"]})]

    def anonymize(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
        tree = load_hierarchy(params["hierarchy"], params["hierarchy_format"], dataset).to_json()
        parent = {child: up for child, up in tree["edges"]}

        def path(label: str) -> list[str]:  # root first
            steps = [label]
            while steps[-1] in parent:
                steps.append(parent[steps[-1]])
            return steps[::-1]

        originals = dataset.to_label_records()
        deepest = max((len(path(x)) - 1 for r in originals for x in r), default=0)
        for depth in range(deepest, -1, -1):
            published = [sorted({path(x)[min(depth, len(path(x)) - 1)] for x in r}) for r in originals]
            if km_anonymous(published, params["k"], params["m"]):
                break
        release = Release(
            kind="generalized",
            records=published,
            hierarchy=tree,
            stats={"records_in": dataset.n_records, "records_published": dataset.n_records, "suppressed_records": 0},
        )
        return Outcome(release, Trail(notes={"depth": depth}))


@hookimpl
def privtool_anonymizers() -> list[Anonymizer]:
    return [FullDomainKm()]
