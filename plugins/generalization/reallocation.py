"""LGR's bottom-up reallocation (Kim, Electronics 12(14):3047, 2023, §3), as
reconstructed by this project (docs/algorithms/lgr.md; the paper's Figure 5 is
not available).

After the top-down phase (:mod:`.topdown`) every final partition is in
*FinalQ* (partitions with one form count as one group). The records whose form
still holds a generalised node (NCP > 0) are the ones a failed expansion rolled
back: they wait in *WaitForQ*. A waiting record's candidate forms lie between its
original items and its current cut: the form *h levels below the cut* replaces
each cut node by the ancestor, h levels further down, of each original item it
covers (the item itself when closer). Bottom-up, from the most specific form
(the original record, h = max depth) to one level below the cut:

1. *match*: a record whose form is exactly the cut of a FinalQ group and
   cheaper than its current form moves there;
2. *group*: waiting records (from any groups) that share a cheaper form and
   number at least k become a new FinalQ group, which later levels can match.

A record leaves its group only while the group keeps at least k records (the
largest savings first), or when every record of the group leaves. Every move is exact (a record joins a
group only with that group's form), so the output stays strictly k-anonymous; a
move is made only when it lowers the record's NCP, so the result is never
above the top-down one.
"""

from __future__ import annotations

import numpy as np

from privtool.arrays import csr_positions, pair_key, run_starts, split_pair_key, unique_int
from privtool.hierarchy import Hierarchy

from .topdown import TopDownResult

_EPS = 1e-12


class _Forms:
    """Set-valued forms of rows as 128-bit hashes (XOR of two independent
    random 64-bit codes per node), so that equal forms are found by sorting. A
    collision would put two different forms in one group; the anonymizer's final
    exact check (:func:`.anonymizers.check_exact_forms`) would catch it."""

    def __init__(self, n_nodes: int) -> None:
        rng = np.random.default_rng(20230712)
        self.codes = rng.integers(0, np.iinfo(np.uint64).max, size=(n_nodes, 2), dtype=np.uint64, endpoint=True)

    def hash_rows(self, rows: np.ndarray, nodes: np.ndarray, n_rows: int) -> np.ndarray:
        """Hash of the set of ``nodes`` of each row (duplicates counted once)."""
        r, v = split_pair_key(unique_int(pair_key(rows, nodes)))
        out = np.zeros((n_rows, 2), dtype=np.uint64)
        if len(r):
            starts = run_starts(r)
            out[r[starts]] = np.bitwise_xor.reduceat(self.codes[v], starts, axis=0)
        return out


class _Reallocator:
    """State of the reallocation: partition of each row, node of each
    occurrence, row costs, group sizes and the FinalQ form table."""

    def __init__(self, hier: Hierarchy, indptr: np.ndarray, occ_leaf: np.ndarray, k: int, top: TopDownResult) -> None:
        self.hier, self.indptr, self.occ_leaf, self.k = hier, indptr, occ_leaf, k
        self.n_rows = len(indptr) - 1
        self.occ_row = np.repeat(np.arange(self.n_rows, dtype=np.int64), np.diff(indptr))
        self.gen = top.gen.copy()
        self.part = top.part.copy()
        self.forms = _Forms(hier.n_nodes)
        self.cost = np.bincount(self.occ_row, weights=hier.ncp[self.gen], minlength=self.n_rows)
        row_hash = self.forms.hash_rows(self.occ_row, self.gen, self.n_rows)
        placed = np.flatnonzero(self.part >= 0)
        forms, first, form_id = np.unique(row_hash[placed], axis=0, return_index=True, return_inverse=True)
        self.part[placed] = form_id.ravel()
        self.size = np.bincount(self.part[placed], minlength=len(forms)).astype(np.int64)
        self.table_hash = forms
        self.table_pid = np.arange(len(forms), dtype=np.int64)
        self.stats = {"waiting": 0, "matched": 0, "grouped": 0, "new_groups": 0}

    # ------------------------------------------------------------ FinalQ
    def lookup(self, probes: np.ndarray) -> np.ndarray:
        """The live group whose form hash equals each probe's, -1 when none."""
        table, pids = self.table_hash, self.table_pid
        if len(table) == 0 or len(probes) == 0:
            return np.full(len(probes), -1, dtype=np.int64)
        order = np.lexsort((table[:, 1], table[:, 0]))
        sk, s2 = table[order, 0], table[order, 1]
        pos = np.minimum(np.searchsorted(sk, probes[:, 0]), len(sk) - 1)
        hit = (sk[pos] == probes[:, 0]) & (s2[pos] == probes[:, 1])
        found = np.where(hit, pids[order][pos], -1)
        found[found >= 0] = np.where(self.size[found[found >= 0]] > 0, found[found >= 0], -1)
        return found

    def new_group(self, form_hash: np.ndarray) -> int:
        pid = len(self.size)
        self.size = np.append(self.size, 0)
        self.table_hash = np.vstack([self.table_hash, form_hash[None, :]])
        self.table_pid = np.append(self.table_pid, pid)
        return pid

    def move(self, rows: np.ndarray, dest: np.ndarray, occ: np.ndarray, nodes: np.ndarray) -> None:
        """Move ``rows`` to groups ``dest``; ``occ``/``nodes``: their new nodes."""
        np.subtract.at(self.size, self.part[rows], 1)
        np.add.at(self.size, dest, 1)
        self.part[rows] = dest
        self.gen[occ] = nodes
        self.cost[rows] = np.bincount(self.occ_row[occ], weights=self.hier.ncp[nodes], minlength=self.n_rows)[rows]

    # ------------------------------------------------------------ phases
    def run(self) -> None:
        hier, k = self.hier, self.k
        self.stats["waiting"] = int(((self.cost > _EPS) & (self.part >= 0)).sum())
        for h in range(hier.max_depth, 0, -1):
            waiting = np.flatnonzero((self.cost > _EPS) & (self.part >= 0))
            if len(waiting) == 0:
                break
            occ = csr_positions(self.indptr, waiting)
            o_row, leaf = self.occ_row[occ], self.occ_leaf[occ]
            below = hier.ancestor_at[np.minimum(hier.depth[leaf], hier.depth[self.gen[occ]] + h), leaf]
            new_cost = np.bincount(o_row, weights=hier.ncp[below], minlength=self.n_rows)
            saving = self.cost - new_cost
            better = waiting[saving[waiting] > _EPS]
            if len(better) == 0:
                continue
            h_hash = self.forms.hash_rows(o_row, below, self.n_rows)
            # 1. match: exact FinalQ forms, while the source keeps k records
            target = self.lookup(h_hash[better])
            cand = better[target >= 0]
            moved = _within_spare(cand, self.part, self.size, saving, k)
            if len(moved):
                dest = target[target >= 0][np.searchsorted(cand, moved)]
                sel = np.isin(o_row, moved)
                self.move(moved, dest, occ[sel], below[sel])
                self.stats["matched"] += len(moved)
            # 2. group: >= k waiting records with one cheaper form
            rest = np.setdiff1d(better, moved, assume_unique=True)
            if len(rest) >= k:
                self._split(rest, h_hash, saving, occ, o_row, below)

    def _split(self, rows: np.ndarray, h_hash: np.ndarray, saving: np.ndarray, occ: np.ndarray, o_row: np.ndarray, below: np.ndarray) -> None:
        """New groups of at least k rows sharing one cheaper form, largest total
        saving first, taking from each source group only what keeps it at k."""
        k = self.k
        hh = h_hash[rows]
        order = np.lexsort((rows, -saving[rows], hh[:, 1], hh[:, 0]))
        rows, hh = rows[order], hh[order]
        starts = np.flatnonzero(np.r_[True, (hh[1:] != hh[:-1]).any(axis=1)])
        ends = np.r_[starts[1:], len(rows)]
        big = [(float(saving[rows[s:e]].sum()), s, e) for s, e in zip(starts.tolist(), ends.tolist()) if e - s >= k]
        spare = self.size - k
        for _, s, e in sorted(big, key=lambda t: (-t[0], t[1])):
            members = rows[s:e]
            taken, used = [], {}
            for row, p in zip(members.tolist(), self.part[members].tolist()):
                if spare[p] - used.get(p, 0) > 0:
                    used[p] = used.get(p, 0) + 1
                    taken.append(row)
            if len(taken) < k:
                continue
            for p, n in used.items():
                spare[p] -= n
            chosen = np.array(taken, dtype=np.int64)
            pid = self.new_group(h_hash[chosen[0]])
            spare = np.append(spare, 0)
            sel = np.isin(o_row, chosen)
            self.move(chosen, np.full(len(chosen), pid), occ[sel], below[sel])
            self.stats["grouped"] += len(chosen)
            self.stats["new_groups"] += 1


def _within_spare(rows: np.ndarray, part: np.ndarray, size: np.ndarray, saving: np.ndarray, k: int) -> np.ndarray:
    """The rows that may leave their groups, ascending: at most ``size - k``
    from each group, largest savings first, or every row of a group when all
    of them are leaving (the group then simply disappears)."""
    if len(rows) == 0:
        return rows
    order = rows[np.lexsort((rows, -saving[rows], part[rows]))]
    src = part[order]
    starts = run_starts(src)
    counts = np.diff(np.r_[starts, len(order)])
    pos = np.arange(len(order)) - np.repeat(starts, counts)
    whole = np.repeat(counts, counts) == size[src]
    return np.sort(order[(pos < size[src] - k) | whole])


def reallocate(hier: Hierarchy, indptr: np.ndarray, occ_leaf: np.ndarray, k: int, top: TopDownResult) -> tuple[TopDownResult, dict]:
    """Run the bottom-up reallocation on a top-down result; returns the new
    result and counts of what moved."""
    state = _Reallocator(hier, indptr, occ_leaf, k, top)
    state.run()
    return TopDownResult(state.part, state.gen, top.rounds), state.stats
