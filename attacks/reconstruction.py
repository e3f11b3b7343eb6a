"""The inverse transformation of a disassociated release: every dataset it could
have come from (safe-disassociation paper, section 3.2, definition 2;
ALGORITHM-NOTES 1.3).

What is counted, sampled and enumerated (``docs/algorithms/reconstruction.md``):

* A **chunk** is a record chunk of a cluster, or a shared chunk of a joint
  cluster; its **domain** is the record slots of its cluster, or of every member
  of its joint cluster (``N`` slots). The chunk is padded with empty sub-records
  to ``N`` entries.
* A **reconstruction** is a table with one row per record slot: every chunk gives
  every slot of its domain exactly one of its padded entries, and every term of a
  cluster's term chunk is placed in a set of between 1 and ``min(k-1, n)`` of the
  cluster's ``n`` slots (the model for term chunks: a term-chunk term has support
  below ``k`` in its cluster and occurs at least once). Two reconstructions are the
  same when every slot receives the same sub-records and terms, so swapping two
  equal sub-records does not make a new one. Record slots are labelled: a
  reconstruction is an arrangement of sub-records on slots, not a multiset of
  records (:meth:`ReconstructionModel.distinct_datasets` counts those, by
  enumeration, for small releases).
* Count of a chunk with distinct sub-records of multiplicities ``m_1..m_r`` and
  ``e = N - sum(m)`` empty entries: ``N! / (e! m_1! ... m_r!)``; of a term in a
  cluster of ``n`` slots: ``sum_{s=1..min(k-1,n)} C(n, s)``. The total is the
  product over chunks and terms: the choices are independent.
* The sampler draws uniformly from these reconstructions: an independent uniform
  permutation of every padded chunk, and for every term a size ``s`` with
  probability proportional to ``C(n, s)`` and then a uniform ``s``-subset.

Support bounds of an itemset ``I`` (exact, computed, not sampled): within one
cluster the slots holding the part of ``I`` that lives in each chunk form
independent sets of fixed sizes ``c_i`` (the number of the chunk's sub-records
that contain that part), and a term-chunk term a set of size ``1..k-1``. Sets of
sizes ``c_1..c_q`` in ``n`` slots can overlap in anywhere from
``max(0, sum(c) - (q-1) n)`` to ``min(c)`` slots. Shared chunks couple the
clusters of a joint cluster: the minimum is a maximum-flow problem and the
maximum a packing problem over the joint clusters (greedy on the tree of nested
joint clusters; OR-Tools CP-SAT when joint clusters cross); see the docs page.
The expected support under the uniform model is
``sum_P n_P * prod_i c_i / N_i * p_P ** t_P`` (``p_P`` the probability that a
term of cluster ``P`` lands on a given slot, ``t_P`` the number of ``I``'s terms
in its term chunk).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property

import numpy as np

from privtool.dataset import Dataset, label_sort_key
from privtool.errors import InputError, ParameterError, UserError
from privtool.release import Release

DEFAULT_ENUMERATION_LIMIT = 100_000


class EnumerationLimitError(UserError):
    """The release has more reconstructions than the enumeration may list."""


@dataclass(frozen=True)
class ChunkModel:
    """One record chunk or shared chunk, ready for reconstruction.

    ``clusters`` are the positions (in the release) of the clusters its domain
    spans, in member order; ``slots`` the padded size ``N``; ``rows`` its
    non-empty sub-records; ``bits[item]`` the rows holding ``item`` as a bitset.
    """

    owner: str
    index: int
    shared: bool
    clusters: tuple[int, ...]
    slots: int
    rows: tuple[frozenset[str], ...]
    bits: dict[str, int] = field(repr=False)

    @property
    def items(self) -> frozenset[str]:
        return frozenset(self.bits)

    def rows_containing(self, items: Iterable[str]) -> int:
        """How many sub-records contain every one of ``items`` (all in this chunk)."""
        mask = (1 << len(self.rows)) - 1
        for item in items:
            mask &= self.bits[item]
        return mask.bit_count()

    def arrangements(self) -> int:
        """Distinct ways to lay the padded chunk on its ``N`` slots."""
        counts = list(_multiplicities(self.rows).values())
        return _multinomial(self.slots, [*counts, self.slots - len(self.rows)])


@dataclass(frozen=True)
class ClusterModel:
    """A cluster's record slots ``offset .. offset + size - 1`` and its term chunk."""

    id: str
    size: int
    offset: int
    terms: tuple[str, ...]
    term_cap: int
    """Largest number of slots a term-chunk term can occupy: ``min(k - 1, size)``."""


@dataclass
class ReconstructionCount:
    """Number of reconstructions, per unit (cluster: its record chunks and terms;
    joint cluster: its shared chunks) and in total (their product)."""

    per_unit: dict[str, int]

    @cached_property
    def total(self) -> int:
        return _product(list(self.per_unit.values()))

    @property
    def log10(self) -> float:
        return float(sum(math.log10(v) for v in self.per_unit.values()))


@dataclass(frozen=True)
class _Part:
    """The part of an itemset that one eligible cluster can hold."""

    cluster: int
    size: int
    fixed: tuple[int, ...]  # c_i of its record chunks that hold part of the itemset
    terms: int  # how many items of the itemset are in its term chunk
    shared: tuple[int, ...]  # shared chunks (indices) that hold part of the itemset

    def slack(self) -> int:
        """``sum(sizes) - (q-1) n`` without the shared chunks' shares (added by the flow)."""
        q = len(self.fixed) + self.terms + len(self.shared)
        return sum(self.fixed) + self.terms - (q - 1) * self.size

    def cap(self, term_cap: int) -> int:
        caps = [self.size, *self.fixed]
        if self.terms:
            caps.append(term_cap)
        return min(caps)


class ReconstructionModel:
    """A ``disassociated`` release compiled for counting, bounding, enumerating
    and sampling its reconstructions (see the module docstring for the model).

    ``term_max_support`` is the largest support a term-chunk term may have in its
    cluster; by default ``k - 1`` with ``k`` from the release's ``params``.
    """

    def __init__(self, release: Release, term_max_support: int | None = None) -> None:
        if release.kind != "disassociated":
            raise InputError(f"reconstructions exist for disassociated releases, not {release.kind} ones")
        if term_max_support is None and any(c.term_chunk for c in release.clusters):
            k = release.params.get("k")
            if not isinstance(k, int) or isinstance(k, bool) or k < 2:
                raise ParameterError(
                    "the release does not state an integer k >= 2 in its params, so the support of its "
                    "term-chunk terms is unbounded; give term_max_support."
                )
            term_max_support = k - 1
        if term_max_support is not None and term_max_support < 1:
            raise ParameterError(f"term_max_support must be at least 1, not {term_max_support}.")
        self.term_max_support = term_max_support or 1
        self.clusters: list[ClusterModel] = []
        position: dict[str, int] = {}
        offset = 0
        for c in release.clusters:
            position[c.id] = len(self.clusters)
            cap = min(self.term_max_support, c.size)
            self.clusters.append(ClusterModel(c.id, c.size, offset, tuple(c.term_chunk), cap))
            offset += c.size
        self.n_slots = offset
        self.chunks: list[ChunkModel] = []
        for c in release.clusters:
            for i, rows in enumerate(c.record_chunks):
                self.chunks.append(_chunk(c.id, i, False, (position[c.id],), c.size, rows))
        for j in release.joint_clusters:
            members = tuple(position[m] for m in j.members)
            n = sum(self.clusters[p].size for p in members)
            for i, rows in enumerate(j.shared_chunks):
                if len(rows) > n:
                    raise InputError(f"shared chunk {i} of joint cluster {j.id!r} has {len(rows)} sub-records for {n} records")
                self.chunks.append(_chunk(j.id, i, True, members, n, rows))
        self.joint_ids = [j.id for j in release.joint_clusters]
        self._homes = self._index_homes()
        self.labels: tuple[str, ...] = tuple(sorted(self._homes, key=label_sort_key))

    # ------------------------------------------------------------ structure
    def _index_homes(self) -> dict[str, list[tuple[str, int]]]:
        """item -> its homes: ``("chunk", index)`` or ``("term", cluster)``; checks
        that no cluster is covered by two homes of one item."""
        homes: dict[str, list[tuple[str, int]]] = {}
        covered: dict[tuple[str, int], str] = {}

        def add(item: str, home: tuple[str, int], clusters: Sequence[int], where: str) -> None:
            for p in clusters:
                earlier = covered.get((item, p))
                if earlier is not None:
                    raise InputError(
                        f"item {item!r} is in {earlier} and in {where}, which both cover cluster "
                        f"{self.clusters[p].id!r}; a record could not tell where it came from"
                    )
                covered[(item, p)] = where
            homes.setdefault(item, []).append(home)

        for idx, chunk in enumerate(self.chunks):
            kind = "shared chunk" if chunk.shared else "record chunk"
            for item in chunk.bits:
                add(item, ("chunk", idx), chunk.clusters, f"{kind} {chunk.index} of {chunk.owner!r}")
        for p, cluster in enumerate(self.clusters):
            for term in cluster.terms:
                add(term, ("term", p), (p,), f"the term chunk of {cluster.id!r}")
        return homes

    def _covered(self, home: tuple[str, int]) -> tuple[int, ...]:
        return self.chunks[home[1]].clusters if home[0] == "chunk" else (home[1],)

    # ------------------------------------------------------------- counting
    def count(self) -> ReconstructionCount:
        """Exact number of reconstructions, per unit and in total."""
        per_unit: dict[str, int] = {}
        for cluster in self.clusters:
            per_unit[cluster.id] = _term_choices(cluster.size, cluster.term_cap) ** len(cluster.terms)
        for jid in self.joint_ids:
            per_unit[jid] = 1
        for chunk in self.chunks:
            per_unit[chunk.owner] *= chunk.arrangements()
        return ReconstructionCount(per_unit)

    # -------------------------------------------------------------- support
    def _parts(self, itemset: Iterable[str]) -> tuple[list[_Part], dict[int, int]] | None:
        """The eligible clusters' parts, and ``c_X`` of each shared chunk involved;
        None when some item is not in the release (support 0 everywhere)."""
        items = set(itemset)
        per_cluster: dict[int, dict[tuple[str, int], list[str]]] = {}
        for item in items:
            homes = self._homes.get(item)
            if homes is None:
                return None
            for home in homes:
                for p in self._covered(home):
                    per_cluster.setdefault(p, {}).setdefault(home, []).append(item)
        parts: list[_Part] = []
        shared_counts: dict[int, int] = {}
        for p, by_home in sorted(per_cluster.items()):
            if sum(len(v) for v in by_home.values()) != len(items):
                continue
            fixed, terms, shared = [], 0, []
            for (kind, idx), held in by_home.items():
                if kind == "term":
                    terms += len(held)
                elif self.chunks[idx].shared:
                    shared.append(idx)
                    if idx not in shared_counts:
                        shared_counts[idx] = self.chunks[idx].rows_containing(held)
                else:
                    fixed.append(self.chunks[idx].rows_containing(held))
            parts.append(_Part(p, self.clusters[p].size, tuple(fixed), terms, tuple(sorted(shared))))
        return parts, shared_counts

    def min_support(self, itemset: Iterable[str]) -> int:
        """The smallest support of ``itemset`` over all reconstructions."""
        items = set(itemset)
        if not items:
            return self.n_slots
        found = self._parts(items)
        if found is None:
            return 0
        parts, shared_counts = found
        base = sum(max(0, part.slack()) for part in parts)
        if not shared_counts:
            return base
        free = {part.cluster: max(0, -part.slack()) for part in parts if part.shared}
        return base + sum(shared_counts.values()) - self._free_flow(shared_counts, free)

    def _free_flow(self, shared_counts: dict[int, int], free: dict[int, int]) -> int:
        """Largest number of the shared chunks' itemset-holding entries that can be
        put where they add no support: on a member cluster that cannot hold the
        itemset (``free`` has no entry for it), or within the slack ``free[P]`` of
        one that can. Each chunk gives a cluster at most its size."""
        if len(shared_counts) == 1:
            ((idx, c),) = shared_counts.items()
            size = lambda p: self.clusters[p].size  # noqa: E731
            return min(c, sum(min(size(p), free.get(p, size(p))) for p in self.chunks[idx].clusters))
        import networkx as nx

        graph = nx.DiGraph()
        for idx, c in shared_counts.items():
            graph.add_edge("source", ("x", idx), capacity=c)
            for p in self.chunks[idx].clusters:
                graph.add_edge(("x", idx), ("p", p), capacity=self.clusters[p].size)
                if p in free:
                    graph.add_edge(("p", p), "sink", capacity=free[p])
                else:
                    graph.add_edge(("p", p), "sink")  # no capacity attribute: unbounded
        return int(nx.maximum_flow_value(graph, "source", "sink"))

    def max_support(self, itemset: Iterable[str]) -> int:
        """The largest support of ``itemset`` over all reconstructions."""
        items = set(itemset)
        if not items:
            return self.n_slots
        found = self._parts(items)
        if found is None:
            return 0
        parts, shared_counts = found
        caps = {part.cluster: part.cap(self.clusters[part.cluster].term_cap) for part in parts}
        limits: dict[frozenset[int], int] = {}
        for idx, c in shared_counts.items():
            members = frozenset(part.cluster for part in parts if idx in part.shared)
            limits[members] = min(c, limits.get(members, c))
        if not limits:
            return sum(caps.values())
        return _max_packing(caps, limits)

    def support_bounds(self, itemset: Iterable[str]) -> tuple[int, int]:
        """``(min_support, max_support)`` of ``itemset``."""
        items = set(itemset)
        return self.min_support(items), self.max_support(items)

    def expected_support(self, itemset: Iterable[str], exact: bool = False) -> float | Fraction:
        """Expected support of ``itemset`` in a uniformly drawn reconstruction
        (a :class:`~fractions.Fraction` with ``exact``)."""
        items = set(itemset)
        if not items:
            return Fraction(self.n_slots) if exact else float(self.n_slots)
        found = self._parts(items)
        if found is None:
            return Fraction(0) if exact else 0.0
        parts, shared_counts = found
        total = Fraction(0)
        for part in parts:
            value = Fraction(part.size)
            for c in part.fixed:
                value *= Fraction(c, part.size)
            for idx in part.shared:
                value *= Fraction(shared_counts[idx], self.chunks[idx].slots)
            if part.terms:
                value *= _term_slot_probability(part.size, self.clusters[part.cluster].term_cap) ** part.terms
            total += value
        return total if exact else float(total)

    # ---------------------------------------------------------- enumeration
    def enumerate(self, limit: int = DEFAULT_ENUMERATION_LIMIT) -> Iterator[list[frozenset[str]]]:
        """Every reconstruction once, as the records of the ``n_slots`` slots (clusters
        in release order). Raises :class:`EnumerationLimitError` past ``limit``."""
        total = self.count().total
        if total > limit:
            raise EnumerationLimitError(
                f"the release has {total} reconstructions (10^{math.log10(total):.1f}), more than the "
                f"enumeration limit of {limit}; sample reconstructions instead."
            )
        choices: list[list[list[tuple[int, frozenset[str]]]]] = []
        for chunk in self.chunks:
            domain = self._domain(chunk)
            kinds = list(_multiplicities(chunk.rows))
            values = [kinds.index(row) for row in chunk.rows] + [-1] * (chunk.slots - len(chunk.rows))
            options = [
                [(domain[pos], kinds[kind]) for pos, kind in enumerate(arrangement) if kind >= 0]
                for arrangement in _distinct_permutations(values)
            ]
            choices.append(options)
        for cluster in self.clusters:
            subsets = [
                s for size in range(1, cluster.term_cap + 1) for s in itertools.combinations(range(cluster.size), size)
            ]
            for term in cluster.terms:
                label = frozenset([term])
                choices.append([[(cluster.offset + pos, label) for pos in subset] for subset in subsets])
        for combination in itertools.product(*choices):
            records: list[set[str]] = [set() for _ in range(self.n_slots)]
            for placement in combination:
                for slot, held in placement:
                    records[slot] |= held
            yield [frozenset(r) for r in records]

    def distinct_datasets(self, limit: int = DEFAULT_ENUMERATION_LIMIT) -> set[tuple[frozenset[str], ...]]:
        """The distinct datasets (multisets of records, as sorted tuples) among the
        reconstructions, by enumeration."""
        return {tuple(sorted(records, key=_record_key)) for records in self.enumerate(limit)}

    def _domain(self, chunk: ChunkModel) -> list[int]:
        return [self.clusters[p].offset + s for p in chunk.clusters for s in range(self.clusters[p].size)]

    # ------------------------------------------------------------- sampling
    @cached_property
    def _plan(self) -> "_SamplingPlan":
        return _SamplingPlan(self)

    def sample(self, rng: np.random.Generator) -> Dataset:
        """One reconstruction drawn uniformly (see the module docstring), as a
        :class:`~privtool.dataset.Dataset` over :attr:`labels` whose record ``i`` is
        slot ``i`` (clusters in release order)."""
        return self._plan.sample(rng)


# ----------------------------------------------------------------- sampling
class _SamplingPlan:
    """Numpy arrays that let one sample cost a few vectorised operations.

    Chunks are grouped by padded size ``N``; one ``argsort`` of a random matrix
    per group gives every chunk of the group an independent uniform permutation
    (entry ``e`` of the chunk in row ``r`` goes to domain position ``perm[r, e]``).
    Terms are grouped by cluster size and cap in the same way.
    """

    def __init__(self, model: ReconstructionModel) -> None:
        index = {label: i for i, label in enumerate(model.labels)}
        self.labels = model.labels
        self.n_slots = model.n_slots
        entry_items: list[int] = []
        entry_lengths: list[int] = []
        first_entry = [0]
        for chunk in model.chunks:
            for row in chunk.rows:
                entry_items.extend(sorted(index[item] for item in row))
                entry_lengths.append(len(row))
            first_entry.append(first_entry[-1] + len(chunk.rows))
        self.entry_items = np.asarray(entry_items, dtype=np.int32)
        self.entry_lengths = np.asarray(entry_lengths, dtype=np.int64)
        by_size: dict[int, list[int]] = {}
        for idx, chunk in enumerate(model.chunks):
            by_size.setdefault(chunk.slots, []).append(idx)
        self.chunk_groups: list[_ChunkGroup] = []
        for n in sorted(by_size):
            members = by_size[n]
            counts = np.array([first_entry[i + 1] - first_entry[i] for i in members], dtype=np.int64)
            rows = np.repeat(np.arange(len(members), dtype=np.int64), counts)
            starts = np.repeat(np.cumsum(counts) - counts, counts)
            cols = np.arange(int(counts.sum()), dtype=np.int64) - starts
            entries = np.concatenate([np.arange(first_entry[i], first_entry[i + 1]) for i in members]).astype(np.int64)
            domain = np.concatenate([np.asarray(model._domain(model.chunks[i]), dtype=np.int64) for i in members])
            self.chunk_groups.append(_ChunkGroup(n, len(members), rows, cols, entries, domain))
        term_groups: dict[tuple[int, int], tuple[list[int], list[int]]] = {}
        for cluster in model.clusters:
            offsets, items = term_groups.setdefault((cluster.size, cluster.term_cap), ([], []))
            for term in cluster.terms:
                offsets.append(cluster.offset)
                items.append(index[term])
        self.term_groups = [
            (n, cap, np.asarray(offsets, np.int64), np.asarray(items, np.int32), _term_size_weights(n, cap))
            for (n, cap), (offsets, items) in sorted(term_groups.items())
            if offsets
        ]

    def sample(self, rng: np.random.Generator) -> Dataset:
        slot_of_entry = np.empty(len(self.entry_lengths), dtype=np.int64)
        for g in self.chunk_groups:
            perm = np.argsort(rng.random((g.chunks, g.slots)), axis=1)
            slot_of_entry[g.entries] = g.domain[g.rows * g.slots + perm[g.rows, g.cols]]
        slots = [np.repeat(slot_of_entry, self.entry_lengths)]
        items = [self.entry_items]
        for n, cap, offsets, term_items, weights in self.term_groups:
            sizes = 1 + np.searchsorted(weights, rng.random(len(offsets)) * weights[-1], side="right")
            perm = np.argsort(rng.random((len(offsets), n)), axis=1)
            which, pos = np.nonzero(np.arange(n)[None, :] < sizes[:, None])
            slots.append(offsets[which] + perm[which, pos])
            items.append(term_items[which])
        slot = np.concatenate(slots)
        item = np.concatenate(items)
        order = np.lexsort((item, slot))
        indptr = np.zeros(self.n_slots + 1, dtype=np.int64)
        np.cumsum(np.bincount(slot, minlength=self.n_slots), out=indptr[1:])
        return Dataset.from_csr(indptr, item[order], self.labels, normalise=False)


@dataclass(frozen=True)
class _ChunkGroup:
    """Chunks of one padded size: ``rows``/``cols`` place each of their entries
    (global ids ``entries``) in the group's random matrix; ``domain`` holds the
    slots of every chunk's domain, row after row."""

    slots: int
    chunks: int
    rows: np.ndarray
    cols: np.ndarray
    entries: np.ndarray
    domain: np.ndarray


# ------------------------------------------------------------------ helpers
def _chunk(owner: str, index: int, shared: bool, clusters: tuple[int, ...], slots: int, rows: Sequence[Sequence[str]]) -> ChunkModel:
    frozen = tuple(frozenset(r) for r in rows)
    bits: dict[str, int] = {}
    for r, row in enumerate(frozen):
        for item in row:
            bits[item] = bits.get(item, 0) | (1 << r)
    return ChunkModel(owner, index, shared, clusters, slots, frozen, bits)


def _multiplicities(rows: Sequence[frozenset[str]]) -> dict[frozenset[str], int]:
    counts: dict[frozenset[str], int] = {}
    for row in rows:
        counts[row] = counts.get(row, 0) + 1
    return counts


def _multinomial(n: int, parts: Sequence[int]) -> int:
    result = math.factorial(n)
    for part in parts:
        result //= math.factorial(part)
    return result


def _term_choices(n: int, cap: int) -> int:
    """Number of slot sets a term-chunk term may occupy in a cluster of ``n`` slots."""
    return sum(math.comb(n, s) for s in range(1, cap + 1))


def _term_slot_probability(n: int, cap: int) -> Fraction:
    """Probability that a uniformly placed term lands on one given slot."""
    return Fraction(sum(math.comb(n - 1, s - 1) for s in range(1, cap + 1)), _term_choices(n, cap))


def _term_size_weights(n: int, cap: int) -> np.ndarray:
    """Cumulative weights ``C(n, 1), C(n, 1) + C(n, 2), ...`` of the sizes 1..cap."""
    return np.cumsum([float(math.comb(n, s)) for s in range(1, cap + 1)])


def _product(values: list[int]) -> int:
    """Product of many (big) integers by a balanced tree (fast for huge results)."""
    if not values:
        return 1
    while len(values) > 1:
        values = [values[i] * values[i + 1] if i + 1 < len(values) else values[i] for i in range(0, len(values), 2)]
    return values[0]


def _record_key(record: frozenset[str]) -> tuple:
    return tuple(label_sort_key(label) for label in sorted(record, key=label_sort_key))


def _distinct_permutations(values: list[int]) -> Iterator[tuple[int, ...]]:
    """Distinct orderings of a list whose equal values are interchangeable."""
    counts: dict[int, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    keys = sorted(counts)
    out: list[int] = []

    def walk(remaining: int) -> Iterator[tuple[int, ...]]:
        if remaining == 0:
            yield tuple(out)
            return
        for key in keys:
            if counts[key]:
                counts[key] -= 1
                out.append(key)
                yield from walk(remaining - 1)
                out.pop()
                counts[key] += 1

    yield from walk(len(values))


def _max_packing(caps: dict[int, int], limits: dict[frozenset[int], int]) -> int:
    """max sum(y_P) with 0 <= y_P <= caps[P] and sum_{P in S} y_P <= limits[S].

    Nested or disjoint sets (a laminar family, which REFINE's joint clusters
    form): bottom-up greedy over the inclusion tree, exact because a subtree can
    reach every total between 0 and its best. Crossing sets: CP-SAT.
    """
    sets = sorted(limits, key=len)
    laminar = all(not (a & b) or a <= b or b <= a for a, b in itertools.combinations(sets, 2))
    if not laminar:
        return _max_packing_cpsat(caps, limits)
    best: dict[frozenset[int], int] = {}
    top: dict[int, frozenset[int]] = {}
    for members in sets:
        children = {top[p] for p in members if p in top}
        loose = sum(caps[p] for p in members if p not in top)
        best[members] = min(limits[members], loose + sum(best[c] for c in children))
        for p in members:
            top[p] = members
    return sum(best[s] for s in set(top.values())) + sum(cap for p, cap in caps.items() if p not in top)


def _max_packing_cpsat(caps: dict[int, int], limits: dict[frozenset[int], int]) -> int:
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    y = {p: model.NewIntVar(0, cap, f"y{p}") for p, cap in caps.items()}
    for members, limit in limits.items():
        model.Add(sum(y[p] for p in members) <= limit)
    model.Maximize(sum(y.values()))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.Solve(model)
    if status != cp_model.OPTIMAL:  # a bounded integer program always has an optimum
        raise RuntimeError(f"CP-SAT did not prove the maximum support (status {solver.StatusName(status)})")
    return int(round(solver.ObjectiveValue()))
