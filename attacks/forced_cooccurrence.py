"""The ``forced-cooccurrence`` attack: pairs of items that every reconstruction
puts together (pigeonhole; after Barakat et al., SECRYPT 2016, as far as
ALGORITHM-NOTES 5.2 reconstructs it).

Adversary model (consistent-reconstruction): the adversary knows the release and
considers every dataset it could have come from; a pair of items in different
chunks that co-occurs in at least ``f >= 1`` records of every one of them is a
link the adversary learns for certain.

In a cluster of ``n`` records, the sub-records of two record chunks are laid
over the same ``n`` records in any order, so items ``a`` and ``b`` of different
record chunks share at least ``forced(a, b) = max(0, s(a) + s(b) - n)`` records
in every reconstruction, and exactly that many in some (the bound is the
minimum). A shared chunk spreads over the ``N`` records of its joint cluster, so
at least ``s(x) - (N - n)`` of its ``x`` land in a member cluster of ``n``
records; a term-chunk term occurs in at least one record of its cluster. With
these lower bounds ``lo`` in place of ``s`` the same formula is a sound lower
bound for every pair of a cluster, and ``max(0, s(a) + s(b) - N)`` is exact for
two shared chunks of one joint cluster.

Findings: one ``risk`` per cluster with pairs forced together where neither item
is in every record (a pair with an item in every record is public from the
release itself: that item is linked to everyone of the cluster), and one
``info`` summary with the counts of both kinds. No claimed model covers these
links: k^m-anonymity bounds how *few* records an itemset can be narrowed to in
the best reconstruction, not how many it must have in all of them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from privtool.components import Attack, Evidence
from privtool.context import Context
from privtool.dataset import label_sort_key
from privtool.hookspecs import hookimpl
from privtool.release import Release
from privtool.results import Finding

from .cover import SHARED, ChunkRef
from .cover_linkage import ChunkView, ClusterView, cluster_views

NAME = "forced-cooccurrence"
ADVERSARY = (
    "consistent-reconstruction: the adversary knows the release and considers every dataset it could have come from"
)
TERM = "term chunk"


@dataclass(frozen=True)
class ForcedPair:
    """Items ``a`` and ``b`` (of chunks ``chunk_a`` and ``chunk_b``) share at
    least ``forced`` of the ``records`` records of ``scope`` in every
    reconstruction; ``universal`` when one of them is in all of them."""

    scope: str
    a: str
    chunk_a: str
    b: str
    chunk_b: str
    forced: int
    records: int
    universal: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "items": [self.a, self.b],
            "chunks": [self.chunk_a, self.chunk_b],
            "forced_records": self.forced,
            "of_records": self.records,
        }


def _group_pairs(
    scope: str, labels: list[str], groups: list[str], low: np.ndarray, records: int, apart: np.ndarray | None = None
) -> list[ForcedPair]:
    """Pairs of items of different groups whose lower bounds ``low`` add up to
    more than ``records`` (vectorised over the scope's items); ``apart`` masks
    out further pairs (True: keep)."""
    if len(labels) < 2:
        return []
    codes = np.unique(np.asarray(groups, dtype=object), return_inverse=True)[1]
    forced = low[:, None] + low[None, :] - records
    names = np.asarray(labels, dtype=object)
    mask = np.triu((forced > 0) & (codes[:, None] != codes[None, :]) & (names[:, None] != names[None, :]), 1)
    if apart is not None:
        mask &= apart
    out = []
    for i, j in zip(*np.nonzero(mask), strict=True):
        a, b = (int(i), int(j)) if label_sort_key(labels[i]) <= label_sort_key(labels[j]) else (int(j), int(i))
        universal = bool(low[a] >= records or low[b] >= records)
        out.append(ForcedPair(scope, labels[a], groups[a], labels[b], groups[b], int(forced[i, j]), records, universal))
    return out


def cluster_pairs(view: ClusterView) -> list[ForcedPair]:
    """Forced pairs inside one cluster, from the lower bounds of its items."""
    labels: list[str] = []
    groups: list[str] = []
    joint: list[str] = []  # the joint cluster of a shared chunk's item, "" otherwise
    low: list[int] = []
    for chunk in view.chunks:
        supports = Counter(x for row in chunk.rows for x in row)
        outside = chunk.records - view.size
        for x, s in supports.items():
            labels.append(x)
            groups.append(str(chunk.ref))
            joint.append(chunk.ref.owner if chunk.ref.kind == SHARED else "")
            low.append(max(0, s - outside))
    for term in view.terms:
        labels.append(term)
        groups.append(f"{TERM}:{term}")
        joint.append("")
        low.append(1)
    owner = np.asarray(joint, dtype=object)
    # two shared chunks of one joint cluster: joint_pairs has the larger, exact bound
    apart = (owner[:, None] == "") | (owner[:, None] != owner[None, :])
    return _group_pairs(view.cluster, labels, groups, np.asarray(low, dtype=np.int64), view.size, apart)


def joint_pairs(views: list[ClusterView]) -> list[ForcedPair]:
    """Forced pairs between two shared chunks of one joint cluster (exact)."""
    chunks: dict[str, dict[ChunkRef, ChunkView]] = {}
    for view in views:
        for chunk in view.chunks:
            if chunk.ref.kind == SHARED:
                chunks.setdefault(chunk.ref.owner, {})[chunk.ref] = chunk
    out = []
    for joint, by_ref in chunks.items():
        shared = list(by_ref.values())
        labels, groups, low = [], [], []
        for chunk in shared:
            for x, s in Counter(x for row in chunk.rows for x in row).items():
                labels.append(x)
                groups.append(str(chunk.ref))
                low.append(s)
        out.extend(_group_pairs(joint, labels, groups, np.asarray(low, dtype=np.int64), shared[0].records))
    return out


def forced_pairs(release: Release) -> list[ForcedPair]:
    """Every forced pair of the release: per cluster, then per joint cluster (a
    pair of two shared chunks of one joint cluster is reported at that level)."""
    views = cluster_views(release)
    return [p for view in views for p in cluster_pairs(view)] + joint_pairs(views)


class ForcedCooccurrence(Attack):
    """See the module docstring."""

    name = NAME
    summary = "pairs of items of different chunks that every reconstruction puts together (pigeonhole)"
    applies_to = ("disassociated",)
    criterion = "inference"

    def run(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Finding]:
        pairs = forced_pairs(release)
        partial = [p for p in pairs if not p.universal]
        by_scope: dict[str, list[ForcedPair]] = {}
        for p in partial:
            by_scope.setdefault(p.scope, []).append(p)
        findings = [
            Finding(
                NAME,
                "info",
                f"{len(pairs)} pairs of items of different chunks share records in every reconstruction; "
                f"{len(partial)} of them with neither item in every record",
                {
                    "adversary": ADVERSARY,
                    "forced_pairs": len(pairs),
                    "forced_pairs_with_an_item_in_every_record": len(pairs) - len(partial),
                    "forced_pairs_partial": len(partial),
                    "largest_forced": max((p.forced for p in pairs), default=0),
                },
            )
        ]
        for scope, group in by_scope.items():
            worst = sorted(group, key=lambda p: (-p.forced, label_sort_key(p.a), label_sort_key(p.b)))
            top = worst[0]
            findings.append(
                Finding(
                    NAME,
                    "risk",
                    f"{scope}: {len(group)} pair(s) of items share records in every reconstruction, "
                    f"e.g. {top.a} and {top.b} in at least {top.forced} of {top.records}",
                    {
                        "cluster": scope,
                        "adversary": ADVERSARY,
                        "pairs": [p.to_json() for p in worst],
                        "rule": "forced(a, b) = max(0, s(a) + s(b) - n): pigeonhole over the n records",
                    },
                )
            )
        return findings


@hookimpl
def privtool_attacks() -> list[Attack]:
    return [ForcedCooccurrence()]
