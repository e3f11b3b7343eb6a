"""Chunk-level checks of a disassociated release: k^m-anonymity and covered items.

A *chunk* is a record chunk or a shared chunk: the multiset of its non-empty
sub-records (docs/design.md, "Release format"). Two independent engines decide each
property:

* ``enum``: direct enumeration with per-item row bitsets (Python ints, bit r =
  sub-record r), level by level, so the first witness found has the fewest items;
* ``cpsat``: an OR-Tools CP-SAT model whose feasibility is the violation
  (infeasible = certificate, feasible = witness), built over the *distinct*
  sub-records weighted by their multiplicity.

Every witness is re-counted directly before it is returned, so a witness is
never a solver artefact. OR-Tools is imported inside the functions that use it.

Cover-freedom by enumeration is also computed for every chunk of a release at
once (:func:`covered_items_all`): the same direct count, vectorised with numpy
over all item occurrences, which is what ``--engine auto|enum`` runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from math import comb
from typing import TYPE_CHECKING

import numpy as np

from privtool.arrays import concat_ranges, int_bincount, offsets_of, run_starts, slabs, sort_int, unique_int
from privtool.context import past
from privtool.errors import TimedOut

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

Rows = Sequence[Sequence[str]]


@dataclass(frozen=True)
class ChunkBits:
    """A chunk as sorted item labels and, per item, the bitset of the sub-records holding it."""

    items: tuple[str, ...]
    bits: tuple[int, ...]
    n_rows: int

    @classmethod
    def of(cls, rows: Rows) -> ChunkBits:
        masks: dict[str, int] = {}
        for r, row in enumerate(rows):
            bit = 1 << r
            for item in row:
                masks[item] = masks.get(item, 0) | bit
        items = tuple(sorted(masks))
        return cls(items, tuple(masks[i] for i in items), len(rows))

    @cached_property
    def mask_of(self) -> dict[str, int]:
        """Item -> bitset of the sub-records holding it."""
        return dict(zip(self.items, self.bits, strict=True))


def support_in_rows(rows: Rows, itemset: Sequence[str]) -> int:
    """Direct count (no bitsets) of the rows containing ``itemset``; used to re-check witnesses."""
    wanted = set(itemset)
    return sum(1 for row in rows if wanted <= set(row))


def enumeration_size(n_items: int, m: int) -> int:
    """Upper bound on the itemsets of 1..m items the enumeration engine may visit
    (``m`` beyond ``n_items`` adds nothing, so the sum stops there)."""
    return sum(comb(n_items, size) for size in range(1, min(m, n_items) + 1))


def effective_m(rows: Rows, m: int) -> int:
    """``m`` clamped to the longest sub-record of the chunk: no itemset with more
    items occurs in it, so checking at the clamped m is the same check."""
    return max(1, min(m, max(map(len, rows), default=1)))


# ------------------------------------------------------------- k^m-anonymity
def km_witness_enum(rows: Rows, k: int, m: int, deadline: float | None = None) -> tuple[list[str], int] | None:
    """An itemset of 1..m items with support in [1, k-1] in the chunk, or None.

    Level-wise enumeration over co-occurring itemsets only (an itemset with support
    0 has no superset with positive support), so the witness has the fewest items.
    Raises :class:`~privtool.errors.TimedOut` once the wall-clock ``deadline``
    has passed (checked every 256 itemsets extended).
    """
    chunk = ChunkBits.of(rows)
    frontier: list[tuple[int, int]] = []  # (index of last item, row mask), itemsets kept in `paths`
    paths: list[tuple[int, ...]] = []
    for j, mask in enumerate(chunk.bits):
        support = mask.bit_count()
        if support < k:
            return [chunk.items[j]], support
        frontier.append((j, mask))
        paths.append((j,))
    n = len(chunk.items)
    for _size in range(2, m + 1):
        next_frontier: list[tuple[int, int]] = []
        next_paths: list[tuple[int, ...]] = []
        for done, ((last, mask), path) in enumerate(zip(frontier, paths, strict=False)):
            if done % 256 == 255 and past(deadline):
                raise TimedOut
            for j in range(last + 1, n):
                joint = mask & chunk.bits[j]
                if not joint:
                    continue
                support = joint.bit_count()
                if support < k:
                    return [chunk.items[i] for i in (*path, j)], support
                next_frontier.append((j, joint))
                next_paths.append((*path, j))
        if not next_frontier:
            break
        frontier, paths = next_frontier, next_paths
    return None


SCREEN_PAIRS = 1 << 18
"""Most item pairs :func:`chunk_shapes` counts at a time (whole chunks); a chunk
with more is left undecided, so a task's memory stays bounded."""

SCREEN_M = 2
"""The largest m :func:`chunk_shapes` decides: it counts items and pairs of items."""


@dataclass(frozen=True)
class ChunkShapes:
    """Per chunk of a CSR batch (:func:`chunk_shapes`): its sub-records, its
    distinct items, its longest sub-record (items as listed, as
    :func:`effective_m` counts them), and ``maybe_weak``: False only when no
    itemset of 1..m items has a support in [1, k-1] in the chunk. The weak
    itemsets come in :func:`km_witness_enum`'s order, in which a chunk's items
    are sorted by label (``label_rank``, see :func:`chunk_shapes`)."""

    rows: np.ndarray
    items: np.ndarray
    longest: np.ndarray
    maybe_weak: np.ndarray
    weak_items: np.ndarray
    """Every item of support in [1, k-1] in its chunk: rows ``(chunk, code,
    support)``, by chunk and then label."""
    weak_pairs: np.ndarray
    """Every pair of items of support in [1, k-1] in its chunk, of the chunks the
    count decided: rows ``(chunk, code, code, support)``, the two codes in
    label order, by chunk and then the labels of the first and the second item."""
    undecided: np.ndarray
    """Per chunk: its pairs were too many to count."""

    def witnesses(self) -> dict[int, tuple[list[int], int]]:
        """Per chunk that has one, the itemset (codes) of support in [1, k-1]
        that :func:`km_witness_enum` returns first, and its support: its first
        weak item, else its first weak pair (a chunk left undecided has none
        unless an item of it is weak)."""
        found = {c: ([a, b], s) for c, a, b, s in self.weak_pairs[run_starts(self.weak_pairs[:, 0])].tolist()}
        found |= {c: ([a], s) for c, a, s in self.weak_items[run_starts(self.weak_items[:, 0])].tolist()}
        return found


def chunk_shapes(
    items: np.ndarray,
    row_offsets: np.ndarray,
    chunk_offsets: np.ndarray,
    k: int,
    m: int,
    label_rank: np.ndarray | None = None,
    most_pairs: int = SCREEN_PAIRS,
) -> ChunkShapes:
    """:class:`ChunkShapes` of chunks in CSR form (as :func:`covered_in_csr`
    takes them), for m at most :data:`SCREEN_M`.

    ``maybe_weak`` is the direct count of the supports of every item and, for
    m = 2, every pair of items of each chunk (distinct sub-records holding
    them), vectorised over all the chunks: a few dozen numpy calls per batch,
    where :func:`km_witness_enum` costs tens of microseconds per chunk. It is
    exact, except that a chunk with more than ``most_pairs`` item pairs is left
    True (undecided: the caller checks it itemset by itemset). Itemsets of
    support 0 never count, as in :func:`km_witness_enum`. ``label_rank[code]``
    is the code's label's place in the sorted order of the labels (default:
    the codes' own order)."""
    if not 1 <= m <= SCREEN_M:
        raise ValueError(f"chunk_shapes decides m = 1 or 2, not {m}")
    n_rows, n_chunks = len(row_offsets) - 1, len(chunk_offsets) - 1
    codes = np.asarray(items, dtype=np.int64)
    span = int(codes.max()) + 1 if len(codes) else 1
    rank = np.arange(span, dtype=np.int64) if label_rank is None else np.asarray(label_rank, dtype=np.int64)
    listed = np.diff(row_offsets)
    row_of = np.repeat(np.arange(n_rows, dtype=np.int64), listed)
    distinct = unique_int(row_of * span + codes)  # (sub-record, item), sub-record by sub-record
    row_of, codes = distinct // span, distinct % span
    chunk_rows = np.diff(chunk_offsets)
    chunk_of_row = np.repeat(np.arange(n_chunks, dtype=np.int64), chunk_rows)
    chunk_of = chunk_of_row[row_of]
    keys = sort_int(chunk_of * span + codes, runs=True)
    starts = run_starts(keys)  # one run per distinct (chunk, item)
    chunk_of_key, code_of_key = np.divmod(keys[starts], span)
    support_of_key = np.diff(starts, append=len(keys))
    weak = np.flatnonzero(support_of_key < k)
    weak_items = np.stack([chunk_of_key[weak], code_of_key[weak], support_of_key[weak]], axis=1)
    weak_items = weak_items[np.lexsort((rank[weak_items[:, 1]], weak_items[:, 0]))]
    weak_pairs = np.zeros((0, 4), dtype=np.int64)
    undecided = np.zeros(n_chunks, dtype=bool)
    longest = np.zeros(n_chunks, dtype=np.int64)
    np.maximum.at(longest, chunk_of_row, listed)
    if m == 2 and len(codes):
        item_of = np.searchsorted(keys[starts], chunk_of * span + codes)  # the (chunk, item) of each occurrence
        row_starts = offsets_of(np.bincount(row_of, minlength=n_rows))
        pairs = _weak_pairs(item_of, row_of, row_starts, chunk_offsets, chunk_of_key, k, most_pairs)
        lo, hi = code_of_key[pairs.first], code_of_key[pairs.second]
        lo, hi = np.where(rank[lo] < rank[hi], lo, hi), np.where(rank[lo] < rank[hi], hi, lo)
        weak_pairs = np.stack([pairs.chunk, lo, hi, pairs.support], axis=1)
        weak_pairs = weak_pairs[np.lexsort((rank[hi], rank[lo], pairs.chunk))]
        undecided = pairs.undecided
    maybe_weak = undecided.copy()
    maybe_weak[weak_items[:, 0]] = True
    maybe_weak[weak_pairs[:, 0]] = True
    return ChunkShapes(
        chunk_rows,
        np.bincount(chunk_of_key, minlength=n_chunks),
        longest,
        maybe_weak,
        weak_items,
        weak_pairs,
        undecided,
    )


@dataclass(frozen=True)
class WeakPairs:
    """:func:`_weak_pairs`' answer: per weak pair its chunk, its two (chunk,
    item) numbers and its support; per chunk whether it was left undecided."""

    chunk: np.ndarray
    first: np.ndarray
    second: np.ndarray
    support: np.ndarray
    undecided: np.ndarray


def _weak_pairs(
    item_of: np.ndarray,
    row_of: np.ndarray,
    row_starts: np.ndarray,
    chunk_offsets: np.ndarray,
    chunk_of_item: np.ndarray,
    k: int,
    most: int,
) -> WeakPairs:
    """The pairs of items with a support in [1, k-1] in their chunk, and the
    chunks that alone have more than ``most`` pairs (undecided, not counted).
    Each distinct (sub-record, item) occurrence, sub-record after sub-record
    and ascending within one, has the number ``item_of`` of its (chunk, item)
    and its sub-record ``row_of``; ``row_starts`` cuts the occurrences into
    sub-records, ``chunk_offsets`` the sub-records into chunks, and
    ``chunk_of_item`` gives each (chunk, item)'s chunk."""
    n_chunks = len(chunk_offsets) - 1
    row_length = np.diff(row_starts)
    chunk_of_row = np.repeat(np.arange(n_chunks, dtype=np.int64), np.diff(chunk_offsets))
    pair_ends = np.cumsum(int_bincount(chunk_of_row, row_length * (row_length - 1) // 2, n_chunks))
    undecided = np.zeros(n_chunks, dtype=bool)
    span = int(item_of.max()) + 1
    found: list[np.ndarray] = []
    supports: list[np.ndarray] = []
    for first, last in slabs(pair_ends, most):
        if int(pair_ends[last - 1]) - (int(pair_ends[first - 1]) if first else 0) > most:
            undecided[first:last] = True  # one chunk alone
            continue
        position = np.arange(row_starts[chunk_offsets[first]], row_starts[chunk_offsets[last]], dtype=np.int64)
        later = row_starts[row_of[position] + 1] - position - 1  # items after this one in its sub-record
        keys = sort_int(item_of[np.repeat(position, later)] * span + item_of[concat_ranges(position + 1, later)])
        starts = run_starts(keys)
        counts = np.diff(starts, append=len(keys))
        weak = counts < k
        found.append(keys[starts[weak]])
        supports.append(counts[weak])
    pairs = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    first_item, second_item = np.divmod(pairs, span)
    support = np.concatenate(supports) if supports else np.zeros(0, dtype=np.int64)
    return WeakPairs(chunk_of_item[first_item], first_item, second_item, support, undecided)


def _distinct(rows: Rows) -> tuple[list[frozenset[str]], list[int]]:
    counts = Counter(frozenset(row) for row in rows)
    ordered = sorted(counts, key=lambda r: sorted(r))
    return ordered, [counts[r] for r in ordered]


def _solver(time_limit: float | None) -> cp_model.CpSolver:
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1  # units already run in parallel through ctx.map
    solver.parameters.cp_model_presolve = False  # tiny models: presolve costs more than it saves
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = time_limit
    return solver


class SolverGaveUp(RuntimeError):
    """CP-SAT stopped (time limit) without proving feasibility or infeasibility."""


def _km_submodel(
    model: cp_model.CpModel, rows: Rows, k: int, m: int
) -> tuple[cp_model.IntVar, list[str], list[cp_model.IntVar]]:
    """Add one chunk's k^m model to ``model``, enforced by a fresh literal ``b``:
    Booleans ``x_j`` (item j chosen) and ``y_r`` (distinct sub-record r holds
    every chosen item), ``y_r <-> AND_{j not in r} not x_j``, and, when ``b``,
    ``1 <= sum x <= m`` and ``1 <= sum_r w_r y_r <= k - 1`` (``w_r`` the
    multiplicity). Returns (b, items, x)."""
    from ortools.sat.python import cp_model

    distinct, weights = _distinct(rows)
    items = sorted({item for row in distinct for item in row})
    x = [model.new_bool_var(f"x{j}") for j in range(len(items))]
    y = []
    for row in distinct:
        yr = model.new_bool_var("y")
        absent = [x[j] for j, item in enumerate(items) if item not in row]
        for xj in absent:
            model.add_implication(yr, ~xj)
        if absent:
            model.add_bool_or(absent).only_enforce_if(~yr)
        else:
            model.add(yr == 1)
        y.append(yr)
    b = model.new_bool_var("b")
    model.add_linear_constraint(sum(x), 1, m).only_enforce_if(b)
    model.add_linear_constraint(cp_model.LinearExpr.weighted_sum(y, weights), 1, k - 1).only_enforce_if(b)
    return b, items, x


def km_witnesses_cpsat(
    chunks: Sequence[Rows], k: int, m: int, time_limit: float | None = None
) -> list[tuple[list[str], int] | None]:
    """The CP-SAT form of :func:`km_witness_enum` for several chunks at once.

    One model holds every chunk's sub-model (:func:`_km_submodel`) and requires
    at least one enforcement literal: it is infeasible iff no chunk has an
    itemset of 1..m items with support in [1, k-1], so one solve certifies the
    whole batch (building and solving many tiny models costs more than one
    larger one). When it is feasible, the chosen chunk's witness is recorded and
    the remaining chunks are solved one by one."""
    from ortools.sat.python import cp_model

    results: list[tuple[list[str], int] | None] = [None] * len(chunks)
    pending = list(range(len(chunks)))
    batch = len(pending) > 1
    while pending:
        model = cp_model.CpModel()
        parts = [_km_submodel(model, chunks[n], k, m) for n in (pending if batch else pending[:1])]
        model.add_bool_or([b for b, _, _ in parts])
        solver = _solver(time_limit)
        status = solver.solve(model)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE):
            raise SolverGaveUp(f"CP-SAT stopped with status {solver.status_name(status)}")
        if not batch:
            n = pending.pop(0)
            if status != cp_model.INFEASIBLE:
                _, items, x = parts[0]
                itemset = [items[j] for j in range(len(items)) if solver.boolean_value(x[j])]
                results[n] = (itemset, support_in_rows(chunks[n], itemset))
            continue
        if status == cp_model.INFEASIBLE:
            break
        for n, (b, items, x) in zip(pending, parts, strict=False):
            if solver.boolean_value(b):
                itemset = [items[j] for j in range(len(items)) if solver.boolean_value(x[j])]
                results[n] = (itemset, support_in_rows(chunks[n], itemset))
        pending = [n for n in pending if results[n] is None]
        batch = False  # a batch with a violation: settle the rest chunk by chunk
    return results


def km_witness_cpsat(rows: Rows, k: int, m: int, time_limit: float | None = None) -> tuple[list[str], int] | None:
    """CP-SAT k^m check of one chunk (see :func:`km_witnesses_cpsat`)."""
    return km_witnesses_cpsat([rows], k, m, time_limit)[0]


# ------------------------------------------------------------- cover problem
def covered_items_enum(rows: Rows) -> tuple[list[str], int]:
    """The covered items of a chunk and the support of its whole itemset.

    Awad et al., Definition 3: with I the set of the chunk's items, an item z is
    covered when s(I) = s({z}), i.e. every sub-record holding z holds all of I.
    Our reading (docs/guarantees.md): a chunk with a single distinct item has no
    covered item, since z would be "covered" by nothing and no link is exposed;
    and s(I) = 0 covers nothing (every item occurs at least once).
    """
    chunk = ChunkBits.of(rows)
    if len(chunk.items) < 2:
        return [], 0
    whole = (1 << chunk.n_rows) - 1
    for mask in chunk.bits:
        whole &= mask
    s_all = whole.bit_count()
    if s_all == 0:
        return [], 0
    return [item for item, mask in zip(chunk.items, chunk.bits, strict=False) if mask.bit_count() == s_all], s_all


def covered_items_all(chunks: Sequence[Rows]) -> list[tuple[list[str], int]]:
    """:func:`covered_items_enum` of every chunk, computed in one vectorised pass
    (:func:`covered_in_csr`) over the chunks' items numbered in string order."""
    rows = [row for chunk in chunks for row in chunk]
    flat = [item for row in rows for item in row]
    labels = sorted(set(flat))
    number = {label: n for n, label in enumerate(labels)}
    items = np.fromiter(map(number.__getitem__, flat), dtype=np.int64, count=len(flat))
    s_all, covered_chunk, covered_item = covered_in_csr(items, offsets_of(map(len, rows)), offsets_of(map(len, chunks)))
    out: list[tuple[list[str], int]] = [([], int(s)) for s in s_all.tolist()]
    for chunk, item in zip(covered_chunk.tolist(), covered_item.tolist(), strict=True):
        out[chunk][0].append(labels[item])
    return out


def covered_in_csr(
    items: np.ndarray, row_offsets: np.ndarray, chunk_offsets: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cover-freedom's direct count for chunks in CSR form: ``items`` (non-negative
    item numbers) cut into sub-records by ``row_offsets``, the sub-records into
    chunks by ``chunk_offsets``. Returns ``s(I)`` per chunk (0 for a chunk of
    fewer than two items) and the covered (chunk, item) pairs, ascending.

    The distinct (sub-record, item) pairs give each sub-record's length and the
    distinct (chunk, item) pairs each item's support and the chunk's number of
    items; a sub-record holds the chunk's whole itemset I iff its length is that
    number, so s(I) is a count of such sub-records and the covered items are
    those with support s(I) >= 1, in chunks of at least two items."""
    n_rows, n_chunks = len(row_offsets) - 1, len(chunk_offsets) - 1
    codes = np.asarray(items, dtype=np.int64)
    span = int(codes.max()) + 1 if len(codes) else 1
    row_of = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(row_offsets))
    pairs = unique_int(row_of * span + codes)  # distinct (sub-record, item)
    row_of, codes = pairs // span, pairs % span
    row_length = np.bincount(row_of, minlength=n_rows)
    chunk_of_row = np.repeat(np.arange(n_chunks, dtype=np.int64), np.diff(chunk_offsets))
    keys = np.sort(chunk_of_row[row_of] * span + codes)
    del pairs, row_of, codes
    starts = run_starts(keys)  # one run per distinct (chunk, item)
    support = np.diff(np.r_[starts, len(keys)])
    chunk_of_key, item_of_key = keys[starts] // span, keys[starts] % span
    n_items = np.bincount(chunk_of_key, minlength=n_chunks)
    whole = np.bincount(chunk_of_row[row_length == n_items[chunk_of_row]], minlength=n_chunks)
    s_all = np.where(n_items >= 2, whole, 0)
    covered = (support == s_all[chunk_of_key]) & (s_all[chunk_of_key] > 0)
    return s_all, chunk_of_key[covered], item_of_key[covered]


def covered_items_cpsat(rows: Rows, time_limit: float | None = None) -> tuple[list[str], int]:
    """The CP-SAT form of :func:`covered_items_enum`: one model per chunk whose
    solutions are the covered items (``z_j`` one-hot, ``y_r = sum_{j in r} z_j``,
    ``sum_r w_r y_r = s(I)`` and ``s(I) >= 1``), all solutions enumerated."""
    from ortools.sat.python import cp_model

    distinct, weights = _distinct(rows)
    items = sorted({item for row in distinct for item in row})
    if len(items) < 2:
        return [], 0
    everything = set(items)
    s_all = sum(w for row, w in zip(distinct, weights, strict=False) if row == everything)
    if s_all == 0:
        return [], 0
    model = cp_model.CpModel()
    z = [model.new_bool_var(f"z{j}") for j in range(len(items))]
    model.add_exactly_one(z)
    y = [sum(z[j] for j, item in enumerate(items) if item in row) for row in distinct]
    model.add(cp_model.LinearExpr.weighted_sum(y, weights) == s_all)

    class _Collect(cp_model.CpSolverSolutionCallback):
        def __init__(self) -> None:
            super().__init__()
            self.found: list[str] = []

        def on_solution_callback(self) -> None:
            self.found.extend(items[j] for j in range(len(items)) if self.boolean_value(z[j]))

    solver = _solver(time_limit)
    solver.parameters.enumerate_all_solutions = True
    collect = _Collect()
    status = solver.solve(model, collect)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE):
        raise SolverGaveUp(f"CP-SAT stopped with status {solver.status_name(status)}")
    return sorted(set(collect.found)), s_all
