"""REFINE: joint clusters whose shared chunks rescue term-chunk terms.

Terrovitis et al. (PVLDB 2012) refine the clusters by repeatedly ordering the
(joint) clusters by the contents of their (virtual) term chunks and joining
adjacent ones "based on Equation 1" (``papers/disassociation-horpart-verpart-refine.txt``
§3.3, Figure 7). Equation 1 itself is not available, so the join criterion
here is the project's own (``docs/algorithms/disassociation.md``):

* A group is a simple cluster or a joint cluster. Its *residual* terms are the
  terms of its members' term chunks all of whose occurrences in the group are
  still unpublished (no member has them in a record or shared chunk); residual
  supports are below k by construction.
* Order the groups with residual terms by their virtual term chunk: each group's
  key lists its residual terms by descending number of groups holding the term
  (then ascending id), compared lexicographically, so groups that share their
  commonest rare term sit side by side (ties keep HORPART order).
* Walk the order; from each group, extend a window over the next groups (at most
  ``k`` in all) until some residual term reaches support >= k in the window.
  Then the window becomes one joint cluster, and VERPART's greedy builds
  k^m-anonymous shared chunks over those terms, projected on every record of the
  window. Every such term leaves the members' term chunks, so each join strictly
  lowers tlost. Without such a term, the walk moves on by one group.
* Repeat passes until one joins nothing. Joint clusters can be members of later
  joint clusters (a tree), as in the paper.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privtool.dataset import Dataset

from .horpart import occurrences
from .model import ChunkedCluster, JointPlan
from .verpart import cluster_terms, greedy_chunks


@dataclass
class _Group:
    ref: tuple[str, int]
    rows: np.ndarray
    residual: dict[int, int]
    blocked: set[int]


def _initial_groups(dataset: Dataset, clusters: list[np.ndarray], chunks: list[ChunkedCluster]) -> list[_Group]:
    groups = []
    for i, (rows, chunked) in enumerate(zip(clusters, chunks)):
        residual: dict[int, int] = {}
        if chunked.term_chunk:
            items, _ = occurrences(dataset, rows)
            term = np.asarray(chunked.term_chunk, dtype=items.dtype)
            ids, counts = np.unique(items[np.isin(items, term)], return_counts=True)
            residual = dict(zip(ids.tolist(), counts.tolist()))
        blocked = {t for domain in chunked.record_chunks for t in domain}
        groups.append(_Group(("c", i), rows, residual, blocked))
    return groups


def _merge(window: list[_Group], k: int) -> tuple[dict[int, int], set[int], list[int]]:
    """Combined residual supports, blocked terms, and the terms reaching k."""
    blocked: set[int] = set().union(*(g.blocked for g in window))
    residual: dict[int, int] = {}
    for g in window:
        for t, c in g.residual.items():
            residual[t] = residual.get(t, 0) + c
    for t in blocked.intersection(residual):
        del residual[t]
    lifted = [t for t, c in residual.items() if c >= k]
    return residual, blocked, lifted


def _order(groups: list[_Group]) -> list[_Group]:
    holders: dict[int, int] = {}
    for g in groups:
        for t in g.residual:
            holders[t] = holders.get(t, 0) + 1
    keys = {id(g): sorted(((-holders[t], t) for t in g.residual)) for g in groups}
    return sorted(groups, key=lambda g: keys[id(g)])


def refine(
    dataset: Dataset, clusters: list[np.ndarray], chunks: list[ChunkedCluster], k: int, m: int
) -> list[JointPlan]:
    """Joint clusters (in creation order; members may be earlier joints) for the
    chunked ``clusters``; see the module docstring for the criterion."""
    plans: list[JointPlan] = []
    active = [g for g in _initial_groups(dataset, clusters, chunks) if g.residual]
    changed = True
    while changed and len(active) > 1:
        changed = False
        ordered = _order(active)
        active = []
        i = 0
        while i < len(ordered):
            joined = None
            for end in range(i + 2, min(i + k, len(ordered)) + 1):
                window = ordered[i:end]
                residual, blocked, lifted = _merge(window, k)
                if lifted:
                    joined = (end, window, residual, blocked, lifted)
                    break
            if joined is None:
                active.append(ordered[i])
                i += 1
                continue
            end, window, residual, blocked, lifted = joined
            rows = np.concatenate([g.rows for g in window])
            items, local = occurrences(dataset, rows)
            keep = np.isin(items, np.asarray(lifted, dtype=items.dtype))
            sizes = np.bincount(local[keep], minlength=len(rows))
            terms = cluster_terms(np.array([len(rows)]), sizes, items[keep], k)[0]
            plans.append(JointPlan([g.ref for g in window], list(greedy_chunks(terms, k, m))))
            for t in lifted:
                del residual[t]
            group = _Group(("j", len(plans) - 1), rows, residual, blocked | set(lifted))
            if group.residual:
                active.append(group)
            changed = True
            i = end
    return plans
