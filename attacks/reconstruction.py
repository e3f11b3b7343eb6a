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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property

import numpy as np

from privtool.arrays import concat_ranges, offsets_of
from privtool.claims import claimed_level
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

    def rows_containing(self, items: Iterable[str]) -> int:
        """How many sub-records contain every one of ``items`` (all in this chunk)."""
        mask = (1 << len(self.rows)) - 1
        for item in items:
            mask &= self.bits[item]
        return mask.bit_count()

    def arrangements(self) -> int:
        """Distinct ways to lay the padded chunk on its ``N`` slots."""
        result = math.perm(self.slots, len(self.rows))  # N! / e!
        for count in _multiplicities(self.rows).values():
            result //= math.factorial(count)
        return result


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


@dataclass
class _Profile:
    """Where an itemset can be held: its eligible clusters (every item is in a chunk
    or the term chunk covering them) and, aligned with them, the sizes ``n``, the
    number ``q`` of independent slot sets the itemset needs, ``slack`` = ``sum of
    the record-chunk counts + terms - (q-1) n`` (shared chunks count in ``q`` but
    not in the sum), ``cap`` (the largest support without shared chunks), the
    product of ``c_i / n`` over record chunks, the number of terms; and for each
    shared chunk involved ``(chunk, c_X, eligible member positions)``."""

    eligible: np.ndarray
    n: np.ndarray
    q: np.ndarray
    slack: np.ndarray
    cap: np.ndarray
    share: np.ndarray
    terms: np.ndarray
    fixed: list[tuple[int, int]]
    shared: list[tuple[int, int, np.ndarray]]


class ReconstructionModel:
    """A ``disassociated`` release compiled for counting, bounding, enumerating
    and sampling its reconstructions (see the module docstring for the model).

    ``term_max_support`` is the largest support a term-chunk term may have in its
    cluster; by default ``k - 1`` with the ``k`` the release claims (its ``params`` only when it claims
    nothing, as a release built in memory may).
    """

    def __init__(self, release: Release, term_max_support: int | None = None) -> None:
        if release.kind != "disassociated":
            raise InputError(f"reconstructions exist for disassociated releases, not {release.kind} ones")
        if term_max_support is None and any(c.term_chunk for c in release.clusters):
            k = claimed_level(release.claims, "k", 2)
            if k is None:  # a release built in memory without claims: its params, validated
                stated = release.params.get("k")
                k = stated if isinstance(stated, int) and not isinstance(stated, bool) and stated >= 2 else None
            if k is None:
                raise ParameterError(
                    "the release claims no k (nor states an integer k >= 2 in its params), so the support of "
                    "its term-chunk terms is unbounded; give term_max_support."
                )
            term_max_support = k - 1
        if term_max_support is not None and term_max_support < 1:
            raise ParameterError(f"term_max_support must be at least 1, not {term_max_support}.")
        self.term_max_support = term_max_support or 1
        self.release = release
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
        for j, members in zip(release.joint_clusters, _flat_members(release, position), strict=False):
            n = sum(self.clusters[p].size for p in members)
            for i, rows in enumerate(j.shared_chunks):
                if len(rows) > n:
                    raise InputError(
                        f"shared chunk {i} of joint cluster {j.id!r} has {len(rows)} sub-records for {n} records"
                    )
                self.chunks.append(_chunk(j.id, i, True, members, n, rows))
        self.joint_ids = [j.id for j in release.joint_clusters]
        self._chunk_clusters = [np.asarray(chunk.clusters, dtype=np.int64) for chunk in self.chunks]
        self._sizes = np.array([c.size for c in self.clusters], dtype=np.int64)
        self._term_caps = np.array([c.term_cap for c in self.clusters], dtype=np.int64)
        self._term_probability = np.array([float(_term_slot_probability(c.size, c.term_cap)) for c in self.clusters])
        self._homes = self._index_homes()
        self.labels: tuple[str, ...] = tuple(sorted(self._homes, key=label_sort_key))

    # ------------------------------------------------------------ structure
    def _index_homes(self) -> dict[str, list[tuple[str, int]]]:
        """item -> its homes: ``("chunk", index)`` or ``("term", cluster)``; checks
        that no cluster is covered by two homes of one item."""
        homes: dict[str, list[tuple[str, int]]] = {}
        for idx, chunk in enumerate(self.chunks):
            for item in chunk.bits:
                homes.setdefault(item, []).append(("chunk", idx))
        for p, cluster in enumerate(self.clusters):
            for term in cluster.terms:
                homes.setdefault(term, []).append(("term", p))
        marked = np.zeros(len(self.clusters), dtype=bool)
        for item, places in homes.items():
            if len(places) < 2:
                continue
            arrays = [self._home_clusters(home) for home in places]
            clash = False
            for clusters in arrays:
                clash = clash or bool(marked[clusters].any())
                marked[clusters] = True
            for clusters in arrays:
                marked[clusters] = False
            if not clash:
                continue
            owner: dict[int, tuple[str, int]] = {}
            for home in places:
                for p in self._home_clusters(home).tolist():
                    earlier = owner.setdefault(p, home)
                    if earlier != home:
                        raise InputError(
                            f"item {item!r} is in {self._describe(earlier)} and in {self._describe(home)}, which "
                            f"both cover cluster {self.clusters[p].id!r}; a record could not tell where it came from"
                        )
        return homes

    def _describe(self, home: tuple[str, int]) -> str:
        if home[0] == "term":
            return f"the term chunk of {self.clusters[home[1]].id!r}"
        chunk = self.chunks[home[1]]
        return f"{'shared' if chunk.shared else 'record'} chunk {chunk.index} of {chunk.owner!r}"

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
    def _profile(self, items: set[str]) -> _Profile | None:
        """The :class:`_Profile` of a non-empty itemset; None when some item is not
        in the release (support 0 everywhere)."""
        by_home: dict[tuple[str, int], list[str]] = {}
        for item in items:
            homes = self._homes.get(item)
            if homes is None:
                return None
            for home in homes:
                by_home.setdefault(home, []).append(item)
        cover = np.zeros(len(self.clusters), dtype=np.int64)
        for home, held in by_home.items():
            cover[self._home_clusters(home)] += len(held)  # a cluster is covered once per item
        eligible = np.flatnonzero(cover == len(items))
        at = np.full(len(self.clusters), -1, dtype=np.int64)
        at[eligible] = np.arange(len(eligible))
        n = self._sizes[eligible]
        q = np.zeros(len(eligible), dtype=np.int64)
        total = np.zeros(len(eligible), dtype=np.int64)
        cap = n.copy()
        share = np.ones(len(eligible))
        terms = np.zeros(len(eligible), dtype=np.int64)
        fixed: list[tuple[int, int]] = []
        shared: list[tuple[int, int, np.ndarray]] = []
        for (kind, idx), held in by_home.items():
            if kind == "term":
                if at[idx] >= 0:
                    terms[at[idx]] += len(held)
                continue
            chunk = self.chunks[idx]
            members = at[self._home_clusters((kind, idx))]
            members = members[members >= 0]
            if not len(members):
                continue
            count = chunk.rows_containing(held)
            q[members] += 1
            if chunk.shared:
                shared.append((idx, count, members))
            else:
                (p,) = members
                total[p] += count
                cap[p] = min(cap[p], count)
                share[p] *= count / n[p]
                fixed.append((int(p), count))
        with_terms = terms > 0
        cap[with_terms] = np.minimum(cap[with_terms], self._term_caps[eligible][with_terms])
        q += terms
        slack = total + terms - (q - 1) * n
        return _Profile(eligible, n, q, slack, cap, share, terms, fixed, shared)

    def _home_clusters(self, home: tuple[str, int]) -> np.ndarray:
        if home[0] == "term":
            return np.array([home[1]], dtype=np.int64)
        return self._chunk_clusters[home[1]]

    def min_support(self, itemset: Iterable[str]) -> int:
        """The smallest support of ``itemset`` over all reconstructions."""
        return self._bound(itemset, self._min_of)

    def _bound(self, itemset: Iterable[str], of: Callable[[_Profile], int]) -> int:
        items = set(itemset)
        if not items:
            return self.n_slots
        profile = self._profile(items)
        return 0 if profile is None else of(profile)

    def _min_of(self, profile: _Profile) -> int:
        base = int(np.maximum(profile.slack, 0).sum())
        if not profile.shared:
            return base
        return base + sum(c for _, c, _ in profile.shared) - self._free_flow(profile)

    def _free_flow(self, profile: _Profile) -> int:
        """Largest number of the shared chunks' itemset-holding entries that can be
        put where they add no support: on a member cluster that cannot hold the
        itemset (any number, at most its size per chunk), or within the slack
        ``-slack`` of one that can (at most its size per chunk). A maximum flow
        source -> chunk -> eligible cluster -> sink, the ineligible members of a
        chunk folded into one edge chunk -> sink (they are independent)."""
        free = np.maximum(-profile.slack, 0)
        ineligible = [self.chunks[idx].slots - int(profile.n[members].sum()) for idx, _, members in profile.shared]
        if len(profile.shared) == 1:
            (_, count, members) = profile.shared[0]
            return min(count, ineligible[0] + int(np.minimum(profile.n[members], free[members]).sum()))
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import maximum_flow

        m, e = len(profile.shared), len(profile.eligible)
        source, sink = 0, 1 + m + e
        rows, cols, caps = [], [], []
        for j, (_, count, members) in enumerate(profile.shared):
            rows += [source, 1 + j]
            cols += [1 + j, sink]
            caps += [count, ineligible[j]]
            useful = members[free[members] > 0]
            rows += [1 + j] * len(useful)
            cols += (1 + m + useful).tolist()
            caps += profile.n[useful].tolist()
        useful = np.flatnonzero(free > 0)
        rows += (1 + m + useful).tolist()
        cols += [sink] * len(useful)
        caps += free[useful].tolist()
        graph = csr_matrix((np.asarray(caps, dtype=np.int32), (rows, cols)), shape=(sink + 1, sink + 1))
        return int(maximum_flow(graph, source, sink).flow_value)

    def max_support(self, itemset: Iterable[str]) -> int:
        """The largest support of ``itemset`` over all reconstructions."""
        return self._bound(itemset, self._max_of)

    def _max_of(self, profile: _Profile) -> int:
        if not profile.shared:
            return int(profile.cap.sum())
        limits: dict[frozenset[int], int] = {}
        for _, count, members in profile.shared:
            key = frozenset(members.tolist())
            limits[key] = min(count, limits.get(key, count))
        return _max_packing(profile.cap, limits)

    def support_bounds(self, itemset: Iterable[str]) -> tuple[int, int]:
        """``(min_support, max_support)`` of ``itemset`` over all reconstructions."""
        items = set(itemset)
        if not items:
            return self.n_slots, self.n_slots
        profile = self._profile(items)
        if profile is None:
            return 0, 0
        return self._min_of(profile), self._max_of(profile)

    def expected_support(self, itemset: Iterable[str], exact: bool = False) -> float | Fraction:
        """Expected support of ``itemset`` in a uniformly drawn reconstruction
        (a :class:`~fractions.Fraction` with ``exact``)."""
        items = set(itemset)
        if not items:
            return Fraction(self.n_slots) if exact else float(self.n_slots)
        profile = self._profile(items)
        if profile is None:
            return Fraction(0) if exact else 0.0
        if not exact:
            value = profile.n * profile.share * self._term_probability[profile.eligible] ** profile.terms
            for idx, count, members in profile.shared:
                value[members] *= count / self.chunks[idx].slots
            return float(value.sum())
        values = [Fraction(int(n)) for n in profile.n]
        for p, count in profile.fixed:
            values[p] *= Fraction(count, int(profile.n[p]))
        for idx, count, members in profile.shared:
            for p in members:
                values[p] *= Fraction(count, self.chunks[idx].slots)
        for p, cluster in enumerate(profile.eligible):
            if profile.terms[p]:
                c = self.clusters[cluster]
                values[p] *= _term_slot_probability(c.size, c.term_cap) ** int(profile.terms[p])
        return sum(values, Fraction(0))

    # ---------------------------------------------------------- enumeration
    def enumerate(self, limit: int = DEFAULT_ENUMERATION_LIMIT) -> Iterator[list[frozenset[str]]]:
        """Every reconstruction once, as the records of the ``n_slots`` slots (clusters
        in release order). Raises :class:`EnumerationLimitError` past ``limit``."""
        count = self.count()
        if count.total > limit:
            # a huge int cannot even be printed (Python caps int-to-str at 4300 digits)
            size = str(count.total) if count.log10 < 18 else f"about 10^{count.log10:.1f}"
            raise EnumerationLimitError(
                f"the release has {size} reconstructions, more than the enumeration limit of {limit}; "
                "sample reconstructions instead."
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
    def sampler(self) -> ReconstructionSampler:
        """The uniform sampler: numpy arrays only, cheap to pickle to workers."""
        return ReconstructionSampler(self)

    def sample(self, rng: np.random.Generator) -> Dataset:
        """One reconstruction drawn uniformly (see the module docstring), as a
        :class:`~privtool.dataset.Dataset` over :attr:`labels` whose record ``i`` is
        slot ``i`` (clusters in release order)."""
        return self.sampler.sample(rng)


def _flat_members(release: Release, position: dict[str, int] | None = None) -> list[tuple]:
    """For each joint cluster, the clusters its records come from, in member
    order: a member may be an earlier joint cluster (REFINE builds a tree), whose
    own clusters it stands for. Cluster positions with ``position``, ids without."""
    flat: dict[str, tuple] = {}
    result = []
    for joint in release.joint_clusters:
        parts: list = []
        for member in joint.members:
            if member in flat:
                parts.extend(flat[member])
            else:
                parts.append(position[member] if position is not None else member)
        flat[joint.id] = tuple(parts)
        result.append(flat[joint.id])
    return result


def component_of(release: Release, cluster_id: str) -> Release:
    """The part of ``release`` whose reconstructions are tied to cluster
    ``cluster_id``: the clusters joined to it through joint clusters (directly or
    not) and those joint clusters. Reconstructions of different components are
    independent, so a small cluster of a large release can be enumerated alone:
    ``ReconstructionModel(component_of(release, "c7")).enumerate()``."""
    if cluster_id not in {c.id for c in release.clusters}:
        raise ParameterError(f"the release has no cluster {cluster_id!r}.")
    spans = _flat_members(release)
    members, frontier = {cluster_id}, [cluster_id]
    while frontier:
        current = frontier.pop()
        for span in spans:
            if current in span:
                for other in span:
                    if other not in members:
                        members.add(other)
                        frontier.append(other)
    return Release(
        kind=release.kind,
        params=dict(release.params),
        clusters=[c for c in release.clusters if c.id in members],
        joint_clusters=[
            j for j, span in zip(release.joint_clusters, spans, strict=False) if members.intersection(span)
        ],
    )


# ----------------------------------------------------------------- sampling
DENSE_SLOTS = 64
"""Chunks of at most this many slots, or filled more than half, are permuted
whole; larger sparse ones draw slots for their entries only."""


class ReconstructionSampler:
    """Draws reconstructions of one release uniformly: numpy arrays that let one
    sample cost a few vectorised operations (build it with
    :attr:`ReconstructionModel.sampler`).

    Every chunk gives each of its ``E`` entries a distinct position ``0..N-1`` of
    its domain, uniformly over the ordered ``E``-tuples of distinct positions:

    * small or dense chunks (``N <= 64`` or ``2E > N``), grouped by ``N``: one
      ``argsort`` of a random (chunks x N) matrix; entry ``e`` takes ``perm[e]``;
    * large sparse ones (shared chunks over many clusters): ``L > E`` positions
      are drawn independently, and entry ``e`` takes the ``e``-th distinct one
      in draw order. The distinct values of an i.i.d. uniform sequence, in order
      of first appearance, are a uniformly random ordering, so this is exact.
      A chunk whose ``L`` draws hold fewer than ``E`` distinct values is drawn
      again (rare, and exact: the event is symmetric in the positions).

    A position becomes a slot through the chunk's member clusters, laid end to
    end on one virtual line (``base`` of each chunk, member boundaries) and one
    ``searchsorted``, so no array as long as a joint cluster is ever built.
    All terms are drawn together: a size per term from its cluster's weights,
    then its ``s <= k-1`` slots one at a time without replacement
    (:func:`_distinct_positions`).
    """

    def __init__(self, model: ReconstructionModel) -> None:
        index = {label: i for i, label in enumerate(model.labels)}
        self.labels = model.labels
        self.n_slots = model.n_slots
        entry_items: list[int] = []
        entry_lengths: list[int] = []
        entries = np.zeros(len(model.chunks), dtype=np.int64)
        slots = np.zeros(len(model.chunks), dtype=np.int64)
        bounds: list[int] = []
        bound_slot: list[int] = []
        line = 0
        for idx, chunk in enumerate(model.chunks):
            for row in chunk.rows:
                entry_items.extend(sorted(index[item] for item in row))
                entry_lengths.append(len(row))
            entries[idx], slots[idx] = len(chunk.rows), chunk.slots
            for p in chunk.clusters:
                bounds.append(line)
                bound_slot.append(model.clusters[p].offset)
                line += model.clusters[p].size
        self.entry_items = np.asarray(entry_items, dtype=np.int32)
        self.entry_lengths = np.asarray(entry_lengths, dtype=np.int64)
        self.bounds = np.asarray(bounds, dtype=np.int64)
        self.bound_slot = np.asarray(bound_slot, dtype=np.int64)
        first_entry = np.concatenate([[0], np.cumsum(entries)])
        base = np.concatenate([[0], np.cumsum(slots)])[:-1]
        self.entry_base = np.repeat(base, entries)  # virtual start of each entry's chunk
        self.entry_rank = np.arange(int(entries.sum()), dtype=np.int64) - np.repeat(first_entry[:-1], entries)
        dense = (slots <= DENSE_SLOTS) | (2 * entries > slots)
        self.dense_groups = []
        for n in np.unique(slots[dense & (entries > 0)]):
            members = np.flatnonzero(dense & (slots == n) & (entries > 0))
            counts = entries[members]
            rows = np.repeat(np.arange(len(members), dtype=np.int64), counts)
            ids = np.concatenate([np.arange(first_entry[i], first_entry[i + 1]) for i in members])
            self.dense_groups.append((int(n), len(members), rows, ids))
        sparse = np.flatnonzero(~dense & (entries > 0))
        self.sparse = (sparse, entries[sparse], slots[sparse], first_entry[sparse])
        with_terms = [c for c in model.clusters if c.terms]
        term_counts = [len(c.terms) for c in with_terms]
        self.term_items = np.asarray([index[t] for c in with_terms for t in c.terms], dtype=np.int32)
        self.term_offset = np.repeat(np.asarray([c.offset for c in with_terms], dtype=np.int64), term_counts)
        self.term_n = np.repeat(np.asarray([c.size for c in with_terms], dtype=np.int64), term_counts)
        self.term_cap = max((c.term_cap for c in with_terms), default=0)
        # cumulative weights of the sizes 1..cap of each cluster's terms, padded with +inf
        weights = np.full((len(with_terms), max(self.term_cap, 1)), np.inf)
        for w, c in enumerate(with_terms):
            weights[w, : c.term_cap] = _term_size_weights(c.size, c.term_cap)
        self.term_weights = np.repeat(np.arange(len(with_terms)), term_counts), weights
        self.term_total = np.repeat(
            np.asarray([weights[w, c.term_cap - 1] for w, c in enumerate(with_terms)]), term_counts
        )

    def _sparse_positions(self, rng: np.random.Generator, out: np.ndarray) -> None:
        """Fill ``out[entry]`` with distinct positions for the sparse chunks."""
        chunks, need, n, first = self.sparse
        todo = np.arange(len(chunks))
        while len(todo):
            e, size = need[todo], n[todo]
            draws = e + 2 * (e * e) // size + 16
            owner = np.repeat(np.arange(len(todo), dtype=np.int64), draws)
            values = (rng.random(int(draws.sum())) * np.repeat(size, draws)).astype(np.int64)
            _, firsts = np.unique(owner * (int(size.max()) + 1) + values, return_index=True)
            firsts.sort()  # distinct values, chunk by chunk, in draw order
            which = owner[firsts]
            have = np.bincount(which, minlength=len(todo))
            done = have >= e
            rank = np.arange(len(firsts)) - np.repeat(np.cumsum(have) - have, have)
            keep = done[which] & (rank < e[which])
            out[first[todo][which[keep]] + rank[keep]] = values[firsts[keep]]
            todo = todo[~done]

    def sample(self, rng: np.random.Generator) -> Dataset:
        position = np.empty(len(self.entry_lengths), dtype=np.int64)
        for n, count, rows, ids in self.dense_groups:
            perm = np.argsort(rng.random((count, n)), axis=1)
            position[ids] = perm[rows, self.entry_rank[ids]]
        if len(self.sparse[0]):
            self._sparse_positions(rng, position)
        virtual = self.entry_base + position
        member = np.searchsorted(self.bounds, virtual, side="right") - 1
        slot_of_entry = self.bound_slot[member] + virtual - self.bounds[member]
        slots = [np.repeat(slot_of_entry, self.entry_lengths)]
        items = [self.entry_items]
        if len(self.term_items):
            row, weights = self.term_weights
            draw = rng.random(len(self.term_items)) * self.term_total
            sizes = 1 + (weights[row] <= draw[:, None]).sum(axis=1)  # searchsorted(side="right") per term
            chosen = _distinct_positions(rng, self.term_n, sizes, self.term_cap)
            which, column = np.nonzero(np.arange(self.term_cap)[None, :] < sizes[:, None])
            slots.append(self.term_offset[which] + chosen[which, column])
            items.append(self.term_items[which])
        slot = np.concatenate(slots)
        item = np.concatenate(items)
        order = np.argsort(slot * len(self.labels) + item)  # by slot, then item: one int64 key
        indptr = offsets_of(np.bincount(slot, minlength=self.n_slots))
        return Dataset.from_csr(indptr, item[order], self.labels, normalise=False)


# ------------------------------------------------------------------ helpers
def _distinct_positions(rng: np.random.Generator, n: np.ndarray, sizes: np.ndarray, width: int) -> np.ndarray:
    """For each row, ``sizes[row]`` distinct uniform positions in ``0..n[row]-1``
    (columns ``0..sizes-1`` of the result), drawn one column at a time: column
    ``j`` is redrawn where it repeats an earlier column, which makes it uniform
    over the positions not yet taken (sequential sampling without replacement).
    Cheap when ``width`` is small, as for term chunks (``width = k - 1``)."""
    chosen = np.full((len(sizes), width), -1, dtype=np.int64)
    for column in range(width):
        todo = np.flatnonzero(sizes > column)
        while len(todo):
            chosen[todo, column] = (rng.random(len(todo)) * n[todo]).astype(np.int64)
            clash = (chosen[todo, :column] == chosen[todo, column][:, None]).any(axis=1)
            todo = todo[clash]
    return chosen


def _chunk(
    owner: str, index: int, shared: bool, clusters: tuple[int, ...], slots: int, rows: Sequence[Sequence[str]]
) -> ChunkModel:
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


def _max_packing(caps: np.ndarray, limits: dict[frozenset[int], int]) -> int:
    """max sum(y) with 0 <= y[p] <= caps[p] and sum_{p in S} y[p] <= limits[S].

    Nested or disjoint sets (a laminar family, which REFINE's joint clusters
    form): bottom-up greedy over the inclusion tree, exact because a subtree can
    reach every total between 0 and its best. Crossing sets: CP-SAT.
    """
    sets = sorted(limits, key=len)
    laminar = all(not (a & b) or a <= b or b <= a for a, b in itertools.combinations(sets, 2))
    if not laminar:
        return _max_packing_cpsat(caps, limits)
    top = np.full(len(caps), -1, dtype=np.int64)
    best = np.zeros(len(sets), dtype=np.int64)
    for j, members in enumerate(sets):
        where = np.fromiter(members, dtype=np.int64, count=len(members))
        tops = top[where]
        children = np.unique(tops[tops >= 0])
        best[j] = min(limits[members], int(caps[where[tops < 0]].sum()) + int(best[children].sum()))
        top[where] = j
    return int(best[np.unique(top[top >= 0])].sum()) + int(caps[top < 0].sum())


def _max_packing_cpsat(caps: np.ndarray, limits: dict[frozenset[int], int]) -> int:
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    y = {p: model.new_int_var(0, int(cap), f"y{p}") for p, cap in enumerate(caps)}
    for members, limit in limits.items():
        model.add(sum(y[p] for p in members) <= limit)
    model.maximize(sum(y.values()))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.solve(model)
    if status != cp_model.OPTIMAL:  # a bounded integer program always has an optimum
        raise RuntimeError(f"CP-SAT did not prove the maximum support (status {solver.status_name(status)})")
    return round(solver.ObjectiveValue())


# ------------------------------------------------------- batched max support
_TERM, _EVERYWHERE = -2, -3
"""The "record chunk" of a term-chunk home and of the home spanning every cluster."""
QUERIES_PER_PASS = 10_000
"""1- and 2-itemsets answered by one pass of array operations: about 60 pieces
each on bms-webview-2, so a pass holds arrays of some 600,000 entries."""


class MaxSupportIndex:
    """Largest supports of many itemsets at once, equal to
    :meth:`ReconstructionModel.max_support` one by one (same model, section 3.2).

    REFINE's joint clusters are nested or disjoint (a laminar family). The index
    then lays the clusters out in the depth-first order of the joint-cluster
    forest (:func:`_laminar_order`), so every joint cluster is an interval of
    positions, and describes each item by its **homes** as intervals: a record
    chunk or a term chunk is the one position of its cluster, a shared chunk the
    interval of its joint cluster. One item's homes are disjoint (the model
    rejects an item with two homes over one cluster), so they are sorted by start.

    An itemset of one or two items is answered without visiting its clusters one
    by one. Its eligible clusters are the **pieces**: the intersections of a home
    of each item, and two nested intervals meet in the smaller one. A piece holds
    at most its number of records (prefix sums of the cluster sizes); on a single
    cluster, at most the rows of a record chunk holding its part of the itemset
    (an AND and popcount of ``uint64`` words when both items share the chunk) and
    at most the term cap with a term-chunk term. Each shared home limits the sum
    over the pieces inside it to the rows of its chunk holding its part: a piece
    equal to a home takes that home's limit, and a home strictly larger than its
    pieces sums them and then takes its limit. This is the bottom-up greedy of
    :func:`_max_packing` on a laminar tree of depth two (each item's homes are
    disjoint, so nesting alternates between the two items): exact. All queries
    of a batch are answered together by array operations, with no Python work
    per cluster or per piece.

    Itemsets of three or more items, and releases whose joint clusters cross, go
    through :meth:`ReconstructionModel.max_support`. Results are cached per itemset.
    """

    def __init__(self, model: ReconstructionModel) -> None:
        self._model: ReconstructionModel | None = model
        self._release, self._term_max_support = model.release, model.term_max_support
        self.n_slots = model.n_slots
        self.cache: dict[frozenset[str], int] = {}
        self.labels = list(model._homes)
        self.codes = {item: code for code, item in enumerate(self.labels)}
        shared_spans = [model._chunk_clusters[idx] for idx, chunk in enumerate(model.chunks) if chunk.shared]
        order = _laminar_order(len(model.clusters), shared_spans)
        self.laminar = order is not None
        if order is None:
            return
        n = len(model.clusters)
        position = np.empty(n, dtype=np.int64)
        position[order] = np.arange(n)
        self.prefix = np.concatenate([[0], np.cumsum(model._sizes[order])])
        self.term_caps = model._term_caps[order]
        widest = max((len(c.rows) for c in model.chunks if not c.shared), default=1)
        self.words = max(1, -(-widest // 64))
        # (item, lo, hi, record chunk, shared chunk, rows holding the item, those rows
        # as a bitset for a record chunk, for a shared chunk); "record chunk" is
        # _TERM for a term-chunk term and _EVERYWHERE for the home of no item that
        # spans every cluster (the partner of a 1-itemset)
        homes: list[tuple[int, int, int, int, int, int, int, int]] = [
            (len(self.labels), 0, n, _EVERYWHERE, -1, 0, 0, 0)
        ]
        for idx, ch in enumerate(model.chunks):
            where = position[model._chunk_clusters[idx]]
            start, stop = int(where.min()), int(where.max()) + 1
            for label, rows in ch.bits.items():
                if ch.shared:
                    homes.append((self.codes[label], start, stop, -1, idx, rows.bit_count(), 0, rows))
                else:
                    homes.append((self.codes[label], start, stop, idx, -1, rows.bit_count(), rows, 0))
        for p, cluster in enumerate(model.clusters):
            at = int(position[p])
            homes += [(self.codes[term], at, at + 1, _TERM, -1, 0, 0, 0) for term in cluster.terms]
        homes.sort(key=lambda home: (home[0], home[1]))
        item, lo, hi, chunk, shared, count, record_bits, shared_bits = zip(*homes, strict=False)
        self.item, self.lo, self.hi, self.chunk, self.shared, self.count = (
            np.asarray(column, dtype=np.int64) for column in (item, lo, hi, chunk, shared, count)
        )
        raw = b"".join(bits.to_bytes(8 * self.words, "little") for bits in record_bits)
        self.bits = np.frombuffer(raw, dtype="<u8").reshape(len(homes), self.words)
        self.shared_bits = list(shared_bits)  # a shared chunk's rows: Python ints (chunks can be wide)
        self.first = np.searchsorted(self.item, np.arange(len(self.labels) + 2))
        self.key_lo = self.item * (n + 1) + self.lo
        self.key_hi = self.item * (n + 1) + self.hi

    def __getstate__(self) -> dict:
        """Pickled (to a worker) without the compiled model, which is larger and
        slower to pickle than the release: :attr:`model` rebuilds it there, only
        if a query needs it."""
        return {**self.__dict__, "_model": None}

    @property
    def model(self) -> ReconstructionModel:
        """The model answering what the index does not (3+ items, crossing joint clusters)."""
        if self._model is None:
            self._model = ReconstructionModel(self._release, self._term_max_support)
        return self._model

    def max_supports(self, itemsets: Iterable[Iterable[str]]) -> list[int]:
        """``max_support`` of each itemset, in order."""
        keys = [frozenset(itemset) for itemset in itemsets]
        small = []
        for key in dict.fromkeys(keys):
            if key in self.cache:
                continue
            if not key:
                self.cache[key] = self.n_slots
            elif any(item not in self.codes for item in key):
                self.cache[key] = 0
            elif len(key) <= 2 and self.laminar:
                small.append(key)
            else:
                self.cache[key] = self.model.max_support(key)
        for start in range(0, len(small), QUERIES_PER_PASS):
            part = small[start : start + QUERIES_PER_PASS]
            self.cache.update(zip(part, self._small_max_supports(part).tolist(), strict=False))
        return [self.cache[key] for key in keys]

    def _small_max_supports(self, keys: list[frozenset[str]]) -> np.ndarray:
        """The largest supports of 1- and 2-itemsets (see the class docstring)."""
        codes = [[self.codes[item] for item in key] for key in keys]
        a = np.fromiter((c[0] for c in codes), dtype=np.int64, count=len(codes))
        b = np.fromiter((c[-1] for c in codes), dtype=np.int64, count=len(codes))
        b[a == b] = len(self.labels)  # a 1-itemset meets the home spanning every cluster
        homes = np.diff(self.first)
        swap = homes[a] > homes[b]
        a[swap], b[swap] = b[swap], a[swap]  # walk the item with fewer homes
        query, ea = _ranges(self.first[a], homes[a])
        width = self.prefix.shape[0]  # n + 1
        start = np.searchsorted(self.key_hi, b[query] * width + self.lo[ea], side="right")
        stop = np.searchsorted(self.key_lo, b[query] * width + self.hi[ea], side="left")
        which, eb = _ranges(start, np.maximum(stop - start, 0))
        query, ea = query[which], ea[which]
        lo = np.maximum(self.lo[ea], self.lo[eb])
        hi = np.minimum(self.hi[ea], self.hi[eb])
        cap = self.prefix[hi] - self.prefix[lo]
        in_a, in_b = self.chunk[ea] >= 0, self.chunk[eb] >= 0
        same = in_a & (self.chunk[ea] == self.chunk[eb])
        if same.any():
            cap[same] = np.bitwise_count(self.bits[ea[same]] & self.bits[eb[same]]).sum(axis=1, dtype=np.int64)
        cap = np.where(in_a & ~same, np.minimum(cap, self.count[ea]), cap)
        cap = np.where(in_b & ~same, np.minimum(cap, self.count[eb]), cap)
        term = (self.chunk[ea] == _TERM) | (self.chunk[eb] == _TERM)
        cap[term] = np.minimum(cap[term], self.term_caps[lo[term]])
        # shared homes: the limit of each, and whether it is the piece or contains it
        limit_a, limit_b = self.count[ea].copy(), self.count[eb].copy()
        home_a, home_b = self.shared[ea] >= 0, self.shared[eb] >= 0
        both = home_a & (self.shared[ea] == self.shared[eb])
        rows = self.shared_bits
        limit_a[both] = [
            (rows[x] & rows[y]).bit_count() for x, y in zip(ea[both].tolist(), eb[both].tolist(), strict=False)
        ]
        home_b &= ~both
        equal_a = home_a & (self.hi[ea] - self.lo[ea] == hi - lo)
        equal_b = home_b & (self.hi[eb] - self.lo[eb] == hi - lo)
        cap = np.where(equal_a, np.minimum(cap, limit_a), cap)
        cap = np.where(equal_b, np.minimum(cap, limit_b), cap)
        # a home strictly larger than its pieces: sum them, then its limit
        outer_a, outer_b = home_a & ~equal_a, home_b & ~equal_b
        outer = np.where(outer_a, ea, np.where(outer_b, eb, -1))
        limit = np.where(outer_a, limit_a, limit_b)
        total = _sum_by(query[outer < 0], cap[outer < 0], len(keys))
        grouped = outer >= 0
        if grouped.any():
            group_key = query[grouped] * len(self.item) + outer[grouped]
            groups, first, inverse = np.unique(group_key, return_index=True, return_inverse=True)
            values = np.minimum(_sum_by(inverse, cap[grouped], len(groups)), limit[grouped][first])
            total += _sum_by(query[grouped][first], values, len(keys))
        return total


def _sum_by(owner: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """The sum of the (integer) ``values`` of each owner ``0..n-1``, as ``int64``
    (``bincount`` adds in float64: exact below 2**53)."""
    return np.rint(np.bincount(owner, weights=values, minlength=n)).astype(np.int64)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(owner, index)`` for every index of the ranges ``starts[i] .. starts[i] +
    lengths[i] - 1``, ranges in order: the owner is ``i``."""
    return np.repeat(np.arange(len(starts), dtype=np.int64), lengths), concat_ranges(starts, lengths)


def _laminar_order(n: int, spans: Sequence[np.ndarray]) -> np.ndarray | None:
    """An order of the ``n`` clusters in which every span (the clusters of a joint
    cluster) is contiguous: the depth-first order of the forest of nested spans.
    None when two spans cross (neither disjoint nor nested)."""
    distinct = {tuple(sorted(span.tolist())) for span in spans}
    sets = sorted(distinct, key=len)
    top = np.full(n, -1, dtype=np.int64)  # the largest span placed so far holding each cluster
    children: list[list[tuple[bool, int]]] = [[] for _ in sets]  # (is a span, index)
    for j, members in enumerate(sets):
        where = np.asarray(members, dtype=np.int64)
        tops = top[where]
        inner, counts = np.unique(tops[tops >= 0], return_counts=True)
        if any(len(sets[c]) != count for c, count in zip(inner.tolist(), counts.tolist(), strict=False)):
            return None
        children[j] = [(True, c) for c in inner.tolist()] + [(False, p) for p in where[tops < 0].tolist()]
        top[where] = j
    roots = [(True, j) for j in np.unique(top[top >= 0]).tolist()] + [
        (False, p) for p in np.flatnonzero(top < 0).tolist()
    ]
    order: list[int] = []
    stack = roots[::-1]
    while stack:
        is_span, index = stack.pop()
        if is_span:
            stack.extend(children[index][::-1])
        else:
            order.append(index)
    return np.asarray(order, dtype=np.int64)
