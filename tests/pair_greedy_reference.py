"""The reference m = 2 greedy for tests: VERPART's greedy over pair counts,
one term at a time.

This is :func:`privtool.plugins.disassociation.verpart.pair_greedy_chunks` as
it was before it became a first-fit colouring computed in rounds: the pairs of
items of every record counted with one sort, each term's partners below k kept
as a Python set, and the paper's passes run term by term (a term joins the
chunk of the pass unless one of its partners below k already has).
``tests/test_disassociation.py`` checks that the fast implementation returns
exactly its chunks.
"""

from __future__ import annotations

import numpy as np

from privtool.arrays import concat_ranges, run_starts


def reference_pair_greedy_chunks(
    cluster_sizes: np.ndarray, record_sizes: np.ndarray, items: np.ndarray, k: int
) -> list[list[tuple[int, ...]]]:
    """Each cluster's chunk domains (terms of support >= k, in the paper's
    order: support descending, ties to the smaller id), built pass by pass."""
    n_clusters = len(cluster_sizes)
    span = int(items.max()) + 1 if len(items) else 1
    record_cluster = np.repeat(np.arange(n_clusters, dtype=np.int64), cluster_sizes)
    occ_cluster = np.repeat(record_cluster, record_sizes)
    keys = np.sort(occ_cluster * span + items)
    starts = run_starts(keys)
    supports = np.diff(np.r_[starts, len(keys)])
    frequent = supports >= k
    cluster, term = np.divmod(keys[starts[frequent]], span)
    supports = supports[frequent]
    by_order = np.lexsort((term, -supports, cluster))
    bounds = np.searchsorted(cluster[by_order], np.arange(n_clusters + 1)).tolist()
    ordered = term[by_order].tolist()
    offsets = np.r_[0, np.cumsum(record_sizes)].astype(np.int64)
    after = np.repeat(offsets[1:], record_sizes) - np.arange(len(items), dtype=np.int64) - 1
    first = np.repeat(np.arange(len(items), dtype=np.int64), after)
    second = concat_ranges(first[run_starts(first)] + 1, after[after > 0]) if len(first) else first
    pairs = np.sort((occ_cluster[first] * span + items[first]) * span + items[second])
    pair_starts = run_starts(pairs)
    rare = pair_starts[np.diff(np.r_[pair_starts, len(pairs)]) < k]
    owner, low, high = *np.divmod(pairs[rare] // span, span), pairs[rare] % span
    partners: list[dict[int, set[int]]] = [{} for _ in range(n_clusters)]
    for c, a, b in zip(owner.tolist(), low.tolist(), high.tolist(), strict=True):
        partners[c].setdefault(a, set()).add(b)
        partners[c].setdefault(b, set()).add(a)
    out: list[list[tuple[int, ...]]] = []
    for c in range(n_clusters):
        order, bad = ordered[bounds[c] : bounds[c + 1]], partners[c]
        chunks: list[tuple[int, ...]] = []
        while order:
            members: set[int] = set()
            rest: list[int] = []
            for t in order:
                if t in bad and not bad[t].isdisjoint(members):
                    rest.append(t)
                else:
                    members.add(t)
            chunks.append(tuple(sorted(members)))
            order = rest
        out.append(chunks)
    return out
