"""He & Naughton's top-down local generalisation (PVLDB 2(1), 2009, §4, Algorithm 1).

Every record starts generalised to the root; a partition is a set of records
that share one generalised form, its hierarchy *cut*. Each step picks, in every
partition, the cut node with the largest gain ("Max Global Info Gain", §4.2),
expands it, distributes the records into one bucket per
non-empty set of children they use, and balances: buckets below k go to a
leftover; a leftover below k takes the records of least gain from buckets above
k (never taking a donor below k), or, when those do not suffice, the whole
bucket of least total gain. The leftover keeps the parent cut and marks the
expanded node as tried; it may still expand its other cut nodes. A partition is
final when every cut node is a leaf or tried.

The gain is summed over the item occurrences under the node, by one of two
rules (``gain_rule``): ``leaves`` (the default, as the public Partition code:
NCP(node) per occurrence) or ``exact`` (the paper's loss before minus after:
NCP(node) - NCP(child covering the occurrence)). Gains are summed exactly, as
integers in units of 1 / |leaves| (:attr:`privtool.hierarchy.Hierarchy.ncp_units`),
so equal gains are equal and ties follow the rule below, not floating-point
rounding.

Implementation: all partitions advance together, one expansion each per round,
with numpy arrays over item occurrences (``gen``: the cut node covering each
occurrence; ``tried``: whether that node failed for the occurrence's
partition). No Python object is made per occurrence or per partition on the hot
path. Choices where the paper is silent (documented in docs/algorithms/partition.md):
ties in gain go to the smaller node id (preorder), a tried node stays tried in
the sub-partitions of its partition, and the merge fallback moves one whole
bucket, the one of least total gain.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privtool.arrays import int_bincount, rank_in_runs, run_starts
from privtool.hierarchy import Hierarchy

_BITS = 63


@dataclass
class TopDownResult:
    """``part[r]``: final partition id of row ``r`` (-1 for an empty record);
    ``gen[o]``: the node that item occurrence ``o`` is published as."""

    part: np.ndarray
    gen: np.ndarray
    rounds: int


def top_down(
    hier: Hierarchy, indptr: np.ndarray, occ_leaf: np.ndarray, k: int, gain_rule: str = "leaves"
) -> TopDownResult:
    """Partition rows (CSR ``indptr`` over occurrences whose leaves are
    ``occ_leaf``) into k-anonymous groups; see the module docstring.
    ``gain_rule`` is ``exact`` (NCP(node) - NCP(child) per occurrence) or ``leaves`` (NCP(node)
    per occurrence, the public implementation's score)."""
    n_rows = len(indptr) - 1
    sizes = np.diff(indptr)
    occ_row = np.repeat(np.arange(n_rows, dtype=np.int64), sizes)
    # work with each row's occurrences in preorder of their leaves (restored at the end)
    perm = np.lexsort((occ_leaf, occ_row))
    occ_leaf = occ_leaf[perm]
    gen = np.zeros(len(occ_leaf), dtype=np.int32)  # node 0 is the root
    tried = np.zeros(len(occ_leaf), dtype=bool)
    part = np.where(sizes > 0, 0, -1).astype(np.int64)
    n_parts = 1
    units, depth, is_leaf = hier.ncp_units, hier.depth, hier.is_leaf
    act = np.flatnonzero(part[occ_row] >= 0)  # occurrences of active partitions, row order
    rounds = 0
    while len(act):
        rounds += 1
        rows = occ_row[act]
        p = part[rows]
        g = gen[act]
        cand = ~tried[act] & ~is_leaf[g]
        leaf = occ_leaf[act]
        child = hier.ancestor_at[np.minimum(depth[g] + 1, hier.max_depth), leaf]
        gain = np.where(cand, units[g] - units[child] if gain_rule == "exact" else units[g], 0)
        # --- pick_node. Within a row the occurrences are sorted by leaf, so the
        # cut nodes form runs in preorder, and the j-th run of every row of a
        # partition is the same cut node: gains add up per (partition, slot j).
        new_run = np.r_[True, (rows[1:] != rows[:-1]) | (g[1:] != g[:-1])]
        run_id = np.cumsum(new_run) - 1
        run_pos = np.flatnonzero(new_run)
        run_row = rows[run_pos]
        row_first_run = np.r_[True, run_row[1:] != run_row[:-1]]
        slot = np.arange(len(run_pos)) - np.maximum.accumulate(np.where(row_first_run, np.arange(len(run_pos)), 0))
        n_slots = int(slot.max()) + 1
        active_parts = np.zeros(n_parts, dtype=bool)
        active_parts[p[run_pos]] = True
        compact = np.cumsum(active_parts) - 1
        cell = compact[p[run_pos]] * n_slots + slot
        n_cells = int(active_parts.sum()) * n_slots
        total = int_bincount(cell, int_bincount(run_id, gain, len(run_pos)), n_cells)
        is_cand = np.bincount(cell, weights=cand[run_pos], minlength=n_cells) > 0
        # gains are >= 0: -1 marks a slot without a candidate; argmax takes the first best slot
        total = np.where(is_cand, total, -1).reshape(-1, n_slots)
        best_slot = np.argmax(total, axis=1)
        has_cand = total[np.arange(len(best_slot)), best_slot] >= 0
        # the node of the chosen slot, read off the first row of each partition
        slot_node = np.full(n_cells, -1, dtype=np.int64)
        slot_node[cell] = g[run_pos]
        chosen = np.where(has_cand, slot_node[np.arange(len(best_slot)) * n_slots + best_slot], -1)
        choice = np.full(n_parts, -1, dtype=np.int64)
        choice[np.flatnonzero(active_parts)] = chosen
        # partitions without a candidate are final: drop their occurrences
        live = choice[p] >= 0
        if not live.all():
            act, rows, p, g, leaf, child, gain = (
                act[live],
                rows[live],
                p[live],
                g[live],
                leaf[live],
                child[live],
                gain[live],
            )
            if len(act) == 0:
                break
        # --- expand / distribute_data: bucket = set of children used under the node
        exp = g == choice[p]
        eo, er, ep, ec = act[exp], rows[exp], p[exp], child[exp]
        starts = run_starts(er)
        row_local = np.cumsum(np.r_[False, er[1:] != er[:-1]]) if len(er) else np.zeros(0, dtype=np.int64)
        brow = er[starts]  # rows being distributed, ascending
        bpart = ep[starts]
        rank = hier.child_rank[ec].astype(np.int64)
        n_words = int(rank.max()) // _BITS + 1
        keys = np.zeros((len(brow), n_words), dtype=np.uint64)
        np.bitwise_or.at(
            keys, (row_local, rank // _BITS), np.left_shift(np.uint64(1), (rank % _BITS).astype(np.uint64))
        )
        row_gain = int_bincount(row_local, gain[exp], len(brow))
        if n_words == 1:
            _, key_rank = np.unique(keys[:, 0], return_inverse=True)
        else:
            _, key_rank = np.unique(keys, axis=0, return_inverse=True)
        combined = bpart * (int(key_rank.max()) + 1) + key_rank.ravel()
        _, bucket, count = np.unique(combined, return_inverse=True, return_counts=True)
        n_buckets = len(count)
        owner = np.zeros(n_buckets, dtype=np.int64)
        owner[bucket] = bpart
        # --- balance_partitions
        small = count < k
        left = small[bucket].copy()  # rows that end in the leftover
        short = np.bincount(owner, weights=np.where(small, count, 0), minlength=n_parts).astype(np.int64)
        need = np.where((short > 0) & (short < k), k - short, 0)
        if need.any():
            _fill_leftovers(bucket, count, owner, row_gain, need, k, left)
        # rows in the leftover keep the parent cut with the node tried
        left_occ = left[row_local]
        tried[eo[left_occ]] = True
        # rows of successful buckets get fresh partitions and the children as cut nodes
        ok_bucket = np.zeros(n_buckets, dtype=bool)
        ok_bucket[bucket[~left]] = True
        new_id = np.full(n_buckets, -1, dtype=np.int64)
        new_id[ok_bucket] = n_parts + np.arange(int(ok_bucket.sum()))
        n_parts += int(ok_bucket.sum())
        moved = ~left
        part[brow[moved]] = new_id[bucket[moved]]
        gen[eo[~left_occ]] = ec[~left_occ]
        tried[eo[~left_occ]] = False
    out = np.empty_like(gen)
    out[perm] = gen
    return TopDownResult(part=part, gen=out, rounds=rounds)


def _fill_leftovers(
    bucket: np.ndarray,
    count: np.ndarray,
    owner: np.ndarray,
    row_gain: np.ndarray,
    need: np.ndarray,
    k: int,
    left: np.ndarray,
) -> None:
    """Bring every leftover below k up to k (in place on ``left``).

    Donors are the rows of least gain of buckets larger than k, at most
    ``count - k`` from each, chosen globally by gain within the partition; when
    the donors cannot cover the need, the partition's successful bucket of least
    total gain joins the leftover whole.
    """
    row_part = owner[bucket]
    needy = need[row_part] > 0
    big = count > k
    # donor candidates: the (count - k) rows of least gain of each big bucket
    cand = np.flatnonzero(needy & big[bucket])
    order = cand[np.lexsort((cand, row_gain[cand], bucket[cand]))]
    b_sorted = bucket[order]
    pos = rank_in_runs(run_starts(b_sorted), len(order))
    donors = order[pos < (count[b_sorted] - k)]
    pool = np.bincount(row_part[donors], minlength=len(need))
    enough = pool >= need
    # partitions with enough donors take the `need` least-gain donors
    d = donors[enough[row_part[donors]]]
    d = d[np.lexsort((d, row_gain[d], row_part[d]))]
    dp = row_part[d]
    pos = rank_in_runs(run_starts(dp), len(d))
    left[d[pos < need[dp]]] = True
    # the others merge their successful bucket of least total gain
    short = (need > 0) & ~enough
    if short.any():
        bucket_gain = int_bincount(bucket, row_gain, len(count))
        cands = np.flatnonzero(short[owner] & (count >= k))
        cands = cands[np.lexsort((cands, count[cands], bucket_gain[cands], owner[cands]))]
        chosen = cands[run_starts(owner[cands])]
        merge = np.zeros(len(count), dtype=bool)
        merge[chosen] = True
        left |= merge[bucket]
