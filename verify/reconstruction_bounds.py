"""Exact maximum support of small itemsets over all reconstructions of a
disassociated release, and the disassociation guarantee built on it.

Reconstruction model (ALGORITHM-NOTES 1.3; Awad et al. section 3.2): each
record chunk of a cluster P is padded with empty sub-records to |P| entries and
permuted independently; each shared chunk of a joint cluster J is spread over
the records of every cluster under J (joint clusters may nest: a member can be
a joint cluster), one entry per record; a term-chunk term of P occurs in at
least one and at most |P| records of P. The release states no count for a
term-chunk term, so a verifier that trusts nothing must allow any count
(docs/guarantees.md explains why the 1..k-1 reading would make Definition 2
fail for every term-chunk term).

Maximum support of an itemset I:

* inside one cluster P from its own chunks: r_P(I) = min(|P|, c_i) over the
  record chunks C_i meeting I, where c_i counts the sub-records of C_i holding
  I ∩ T_i (the chunks are permuted independently, so their holders can be lined
  up on the same records); term-chunk items only cap at |P|;
* a joint cluster J whose shared chunks meet I can give at most
  cap_J(I) = min over those chunks of c_S(I ∩ T_S) records in total over all the
  clusters under it, so f(J) = min(cap_J, sum of f over its members), with
  f(P) = r_P, computed bottom-up (the caps are nested, so greedy filling is exact);
* top-level clusters and joint clusters reconstruct independently: the maximum
  over the release is the sum of their f.

Joint clusters may nest explicitly or be written flattened (a joint cluster
listing every simple cluster under it); joint clusters whose sets of clusters
cross (neither disjoint nor nested) are not covered by this closed form, and the
certificate then says "not checked".
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any

import numpy as np

from privtool.arrays import offsets_of, rank_in_runs, run_starts, stable_order, unique_int
from privtool.context import Context, past
from privtool.errors import TimedOut
from privtool.lazy_sequence import LazySequence
from privtool.release import Release
from privtool.release_arrays import ReleaseArrays
from privtool.results import Certificate

from .chunk_batches import ChunkBatch, ChunkBatches, label_chunks, label_rows, release_arrays
from .chunks import SCREEN_M, ChunkBits, ChunkShapes
from .engines import BATCH_SIZE
from .joint_tree import OverlappingJointClusters, ancestor_chains, joint_parents

Realization = tuple[tuple[str, ...], int, dict[str, int]]
"""An itemset some reconstruction of a cluster holds, with (r_P, caps per joint cluster)."""

INFINITE = 1 << 62
FREE = -1
"""Mask of a term-chunk item: no count, only the cluster size caps it."""

Rows = tuple[tuple[str, ...], ...]
SourceKey = tuple[str | None, int]
"""A chunk a cluster sees: (None, record chunk index) or (joint id, shared chunk index)."""
ClusterView = tuple[str, int, tuple[Rows, ...], tuple[str, ...], tuple[tuple[str, Sequence[Rows]], ...], int, int]
"""(cluster id, size, record chunks, term chunk, ancestors as (joint id, shared chunks) nearest first, m, k)."""


def _score(r: int, caps: dict[str, int]) -> int:
    """The maximum support inside one cluster: r_P bounded by every shared-chunk cap."""
    return min([r, *caps.values()])


class ClusterViews(LazySequence[ClusterView]):
    """The :data:`ClusterView` of every cluster of a release, each built from the
    release's arrays when it is asked for (so the whole release is never held as
    nested tuples); the clusters' ids, sizes and chains of joint clusters
    (``chains[n]``: ancestors of cluster ``n``, nearest first) are kept for all.
    ``parent`` is :func:`joint_parents` of the release."""

    SHARED_CACHE = 256
    """Joint clusters whose shared chunks are kept decoded (views of the
    clusters under one joint cluster are usually asked for together)."""

    def __init__(self, arrays: ReleaseArrays, parent: dict[str, str], m: int, k: int) -> None:
        self.arrays, self.m, self.k = arrays, m, k
        self.ids = arrays.cluster_ids
        self.sizes: list[int] = arrays.cluster_sizes.tolist()
        self.chains = ancestor_chains(self.ids, parent)
        self.joint_position = {jid: j for j, jid in enumerate(arrays.joint_ids)}
        self._shared: dict[str, tuple[Rows, ...]] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def _build(self, n: int) -> ClusterView:
        return self._view(n, self.shared)

    def lazy_view(self, n: int) -> ClusterView:
        """The view of cluster ``n`` with the shared chunks above it decoded
        one by one when indexed (:class:`_LazyChunks`): the search's sources
        need only the chunks that hold an item of the itemsets they score."""
        first = self.arrays.n_clusters
        return self._view(n, lambda joint: _LazyChunks(self.arrays, first + self.joint_position[joint]))

    def _view(self, n: int, shared: Callable[[str], Sequence[Rows]]) -> ClusterView:
        return (
            self.ids[n],
            self.sizes[n],
            self._chunks(n),
            self.term_chunk(n),
            tuple((joint, shared(joint)) for joint in self.chains[n]),
            self.m,
            self.k,
        )

    def record_chunks(self, n: int) -> tuple[Rows, ...]:
        """The record chunks of cluster ``n``."""
        return self._chunks(n)

    def term_chunk(self, n: int) -> tuple[str, ...]:
        """The term chunk of cluster ``n``."""
        a = self.arrays
        return tuple(a.labels[c] for c in a.term_items[a.term_offsets[n] : a.term_offsets[n + 1]].tolist())

    def shared(self, joint: str) -> tuple[Rows, ...]:
        """The shared chunks of joint cluster ``joint``."""
        found = self._shared.get(joint)
        if found is None:
            if len(self._shared) >= self.SHARED_CACHE:
                self._shared.clear()
            found = self._shared[joint] = self._chunks(self.arrays.n_clusters + self.joint_position[joint])
        return found

    def _chunks(self, owner: int) -> tuple[Rows, ...]:
        """The chunks of owner ``owner`` (a cluster's position, or the number of
        clusters plus a joint cluster's) as sub-records of labels."""
        a = self.arrays
        cuts = a.chunk_offsets[a.owner_offsets[owner] : a.owner_offsets[owner + 1] + 1]
        if len(cuts) < 2:
            return ()
        offsets = a.row_offsets[cuts[0] : cuts[-1] + 1]
        return tuple(label_chunks(a.labels, a.items[offsets[0] : offsets[-1]], offsets - offsets[0], cuts - cuts[0]))


class _LazyChunks(LazySequence[Rows]):
    """The chunks of one owner of a release's arrays (a cluster's position, or
    the number of clusters plus a joint cluster's), each decoded to sub-records
    of labels when indexed."""

    def __init__(self, arrays: ReleaseArrays, owner: int) -> None:
        self.arrays = arrays
        self.first = int(arrays.owner_offsets[owner])
        self.size = int(arrays.owner_offsets[owner + 1]) - self.first

    def __len__(self) -> int:
        return self.size

    def _build(self, index: int) -> Rows:
        a, chunk = self.arrays, self.first + index
        offsets = a.row_offsets[a.chunk_offsets[chunk] : a.chunk_offsets[chunk + 1] + 1]
        return tuple(label_rows(a.labels, a.items[offsets[0] : offsets[-1]], offsets - offsets[0]))


def frequent_items(arrays: ReleaseArrays, owner: int, k: int) -> dict[int, frozenset[str]]:
    """Per chunk of ``owner`` (a cluster's position, or the number of clusters
    plus a joint cluster's), by its index among the owner's chunks, the labels
    held by at least ``k`` of its sub-records (chunks with none are left out)."""
    a = arrays
    cuts = a.chunk_offsets[a.owner_offsets[owner] : a.owner_offsets[owner + 1] + 1]
    if len(cuts) < 2 or cuts[0] == cuts[-1]:
        return {}
    offsets = a.row_offsets[cuts[0] : cuts[-1] + 1]
    row = np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))
    span = len(a.labels)
    held = unique_int(row * span + a.items[offsets[0] : offsets[-1]])  # an item counts once per sub-record
    chunk_of_row = np.repeat(np.arange(len(cuts) - 1, dtype=np.int64), np.diff(cuts))
    keys, counts = np.unique(chunk_of_row[held // span] * span + held % span, return_counts=True)
    frequent = keys[counts >= k]
    found: dict[int, set[str]] = defaultdict(set)
    for chunk, code in zip((frequent // span).tolist(), (frequent % span).tolist(), strict=True):
        found[chunk].add(a.labels[code])
    return {chunk: frozenset(items) for chunk, items in found.items()}


class _Sources:
    """Where each item of a cluster's view can come from: (source index, mask)."""

    def __init__(
        self,
        view: ClusterView,
        shared_bits: dict[SourceKey, ChunkBits] | None = None,
        shared_of: Callable[[str], Sequence[SourceKey]] | None = None,
        strong_in: Callable[[SourceKey, int], frozenset[str]] | None = None,
    ) -> None:
        """``shared_bits`` caches the bitsets of shared chunks, keyed by (joint
        id, chunk index): every cluster under a joint cluster sees its chunks;
        ``shared_of`` (item -> the shared chunks holding it, over the whole
        release) lets :meth:`options_of` skip the chunks without the item;
        ``strong_in`` ((joint id, chunk index), k -> the items of that shared
        chunk with a support of at least k) lets :meth:`strong_extensions` skip
        the bitsets of the shared chunks the part is not in. A chunk's bitsets
        are built when something first needs them (:meth:`bit`)."""
        _, size, record_chunks, term_chunk, chain, _, _ = view
        self.size = size
        self.owner: list[str | None] = []  # None: record chunk of the cluster; else the joint id
        self.keys: list[SourceKey] = []
        self.rows: list[tuple[Sequence[Rows], int]] = []  # (chunks, index): decoded when its bitsets are built
        for owner, chunks in ((None, record_chunks), *chain):
            for index in range(len(chunks)):
                self.owner.append(owner)
                self.keys.append((owner, index))
                self.rows.append((chunks, index))
        self.cache = {} if shared_bits is None else shared_bits
        self._bits: list[ChunkBits | None] = [None] * len(self.keys)
        self.term = frozenset(term_chunk)
        self.n_record = len(record_chunks)
        self.shared_of, self.strong_in = shared_of, strong_in
        self.position = {key: s for s, key in enumerate(self.keys)}
        self._options_of: dict[str, list[tuple[int, int]]] = {}

    def bit(self, s: int) -> ChunkBits:
        """The bitsets of source ``s`` (a shared chunk's are kept in the cache)."""
        found = self._bits[s]
        if found is None:
            key = self.keys[s]
            found = None if key[0] is None else self.cache.get(key)
            if found is None:
                chunks, index = self.rows[s]
                found = ChunkBits.of(chunks[index])
                if key[0] is not None:
                    self.cache[key] = found
            self._bits[s] = found
        return found

    @cached_property
    def options(self) -> dict[str, list[tuple[int, int]]]:
        """Every item of the view with its (source index, mask) choices; built
        only by what walks every item (:meth:`realizations`, :meth:`supersets`),
        single items are looked up by :meth:`options_of`."""
        options: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for s in range(len(self.keys)):
            b = self.bit(s)
            for item, mask in zip(b.items, b.bits, strict=True):
                options[item].append((s, mask))
        for item in self.term:
            options[item].append((len(self.keys), FREE))
        return options

    @cached_property
    def items(self) -> list[str]:
        return sorted(self.options)

    def options_of(self, item: str) -> list[tuple[int, int]]:
        """(source index, mask) of each source of ``item`` in the view (kept
        once found: the release's search asks for the same item, the weak part,
        with every item it is paired with)."""
        if "options" in self.__dict__:
            return self.options.get(item, [])
        found = self._options_of.get(item)
        if found is None:
            found = self._options_of[item] = self._find_options(item)
        return found

    def _find_options(self, item: str) -> list[tuple[int, int]]:
        near = range(len(self.keys) if self.shared_of is None else self.n_record)
        found = [(s, self.bit(s).mask_of[item]) for s in near if item in self.bit(s).mask_of]
        if self.shared_of is not None:
            for key in self.shared_of(item):
                s = self.position.get(key)
                if s is not None:
                    found.append((s, self.bit(s).mask_of[item]))
        if item in self.term:
            found.append((len(self.keys), FREE))
        return found

    def value(self, masks: dict[int, int]) -> tuple[int, dict[str, int]]:
        """(r_P, caps per joint) of the itemset whose parts have these masks."""
        r = self.size
        caps: dict[str, int] = {}
        for s, mask in masks.items():
            if mask == FREE:
                continue
            count = mask.bit_count()
            joint = self.owner[s]
            if joint is None:
                r = min(r, count)
            else:
                caps[joint] = min(caps.get(joint, INFINITE), count)
        return r, caps

    def realizations(self, m: int) -> Iterable[Realization]:
        """Every itemset of 1..m items some reconstruction of the cluster holds,
        with (r_P, caps); an item available from several sources (only in a
        malformed release) yields one entry per choice."""

        def extend(start: int, path: tuple[str, ...], masks: dict[int, int]) -> Iterator[Realization]:
            if len(path) == m:
                return
            for n in range(start, len(self.items)):
                item = self.items[n]
                for s, mask in self.options[item]:
                    current = masks.get(s)
                    joined = mask if (mask == FREE or current is None) else current & mask
                    if not joined:
                        continue
                    new_masks = {**masks, s: joined}
                    new_path = (*path, item)
                    yield (new_path, *self.value(new_masks))
                    yield from extend(n + 1, new_path, new_masks)

        yield from extend(0, (), {})

    def supersets(self, part: tuple[str, ...], size: int) -> Iterable[tuple[str, ...]]:
        """Every itemset of exactly ``size`` items that holds ``part`` and that
        some reconstruction of the cluster holds (items sorted; an itemset may
        come more than once when an item has several sources)."""
        if len(part) > size:
            return
        need = size - len(part)
        taken = set(part)
        rest = [item for item in self.items if item not in taken]

        def extend(start: int, chosen: tuple[str, ...], masks: dict[int, int]) -> Iterable[tuple[str, ...]]:
            if len(chosen) == need:
                yield tuple(sorted((*part, *chosen)))
                return
            for position in range(start, len(rest) - (need - len(chosen)) + 1):
                item = rest[position]
                for s, mask in self.options[item]:
                    current = masks.get(s)
                    joined = mask if (mask == FREE or current is None) else current & mask
                    if joined:
                        yield from extend(position + 1, (*chosen, item), {**masks, s: joined})

        for masks in self._part_masks(part):
            yield from extend(0, (), masks)

    def strong_extensions(self, part: tuple[str, ...], k: int) -> frozenset[str]:
        """Every item ``y`` not in ``part`` such that this cluster alone holds
        ``part`` plus ``y`` with a score (:func:`_score` of :meth:`best`) of at
        least k. An item only adds a bound, the count of its source's mask
        joined with what ``part`` holds there: the score is that of ``part``
        (at least k, or no item qualifies) unless that count is below k. So the
        items are those of the term chunk, those with a support of at least k
        in a chunk ``part`` is not in, and those that share at least k
        sub-records with ``part`` in a chunk it is in."""
        found: set[str] = set()
        for masks in self._part_masks(part):
            if _score(*self.value(masks)) < k:
                continue
            found |= self.term
            for s, key in enumerate(self.keys):
                held = masks.get(s)
                if held is None and key[0] is not None and self.strong_in is not None:
                    found |= self.strong_in(key, k)
                    continue
                b = self.bit(s)
                found.update(
                    item
                    for item, mask in zip(b.items, b.bits, strict=True)
                    if (mask if held is None else held & mask).bit_count() >= k
                )
        return frozenset(found.difference(part))

    def _part_masks(self, part: tuple[str, ...]) -> Iterable[dict[int, int]]:
        """The source masks of every way a reconstruction holds ``part``."""

        def walk(i: int, masks: dict[int, int]) -> Iterable[dict[int, int]]:
            if i == len(part):
                yield masks
                return
            for s, mask in self.options_of(part[i]):
                current = masks.get(s)
                joined = mask if (mask == FREE or current is None) else current & mask
                if joined:
                    yield from walk(i + 1, {**masks, s: joined})

        yield from walk(0, {})

    def best(self, itemset: Sequence[str]) -> tuple[int, dict[str, int]] | None:
        """(r_P, caps) of one itemset in this cluster (the best source choice), or
        None when no reconstruction of the cluster holds it."""
        found = None
        for _, r, caps in self._choices(tuple(itemset)):
            score = _score(r, caps)
            if found is None or score > found[0]:
                found = (score, r, caps)
        return None if found is None else (found[1], found[2])

    def _choices(self, itemset: tuple[str, ...]) -> Iterator[Realization]:
        def walk(i: int, masks: dict[int, int]) -> Iterator[Realization]:
            if i == len(itemset):
                yield (itemset, *self.value(masks))
                return
            for s, mask in self.options_of(itemset[i]):
                current = masks.get(s)
                joined = mask if (mask == FREE or current is None) else current & mask
                if joined:
                    yield from walk(i + 1, {**masks, s: joined})

        yield from walk(0, {})


def cluster_maxima(view: ClusterView) -> list[Realization]:
    """Every itemset some reconstruction of the cluster holds, with (r_P, caps),
    keeping per itemset the source choice with the largest min(r_P, caps)."""
    best: dict[tuple[str, ...], tuple[int, dict[str, int]]] = {}
    for itemset, r, caps in _Sources(view).realizations(view[5]):
        score = _score(r, caps)
        old = best.get(itemset)
        if old is None or score > _score(*old):
            best[itemset] = (r, caps)
    return [(itemset, r, caps) for itemset, (r, caps) in best.items()]


def combine(entries: Iterable[tuple[str, int, dict[str, int]]], parent: dict[str, str]) -> int:
    """Maximum support over the release from per-cluster (cluster id, r_P, caps):
    f(J) = min(cap_J, sum of f over J's members), summed over the top level."""
    value: dict[str, int] = defaultdict(int)
    cap: dict[str, int] = {}
    children: dict[str, set[str]] = defaultdict(set)
    for cluster_id, r, caps in entries:
        value[cluster_id] += r
        for joint, c in caps.items():
            cap[joint] = min(cap.get(joint, INFINITE), c)
        node = cluster_id
        while node in parent:
            children[parent[node]].add(node)
            node = parent[node]

    def f(node: str) -> int:
        if node not in children:
            return value[node]
        return min(cap.get(node, INFINITE), sum(f(child) for child in children[node]))

    tops = {node for node in list(value) + list(children) if node not in parent or parent[node] not in children}
    return sum(f(node) for node in tops)


def max_supports(release: Release, m: int, ctx: Context) -> dict[tuple[str, ...], int]:
    """Maximum support over all reconstructions of every itemset of 1..m items
    that some reconstruction holds (items sorted as strings within a tuple).
    Exhaustive: meant for small releases and tests; the guarantee check below
    enumerates only what can fail."""
    parent = joint_parents(release)
    views = ClusterViews(release_arrays(release), parent, m, 0)
    per_cluster = ctx.map(cluster_maxima, views, "maximum supports per cluster")
    entries: dict[tuple[str, ...], list[tuple[str, int, dict[str, int]]]] = defaultdict(list)
    for view, rows in zip(views, per_cluster, strict=False):
        for itemset, r, caps in rows:
            entries[itemset].append((view[0], r, caps))
    return {itemset: combine(parts, parent) for itemset, parts in entries.items()}


Part = tuple[str, ...]


def chunk_weak_parts(unit: tuple[Rows, int, int, float | None]) -> tuple[Part, ...]:
    """The weak parts of one chunk, ``(rows, k, m, deadline)``: itemsets of 1..m items
    whose support in the chunk is in [1, k-1], found level by level from the
    items up and not grown further, so every itemset of the chunk with such a
    support contains one of them (its first weak prefix). An itemset that
    contains a weak part of a chunk its cluster sees has an in-cluster score
    below k, and only such itemsets do (or every itemset, in a cluster of fewer
    than k records). Empty for a k^m-anonymous chunk. Raises
    :class:`~privtool.errors.TimedOut` once the wall-clock deadline has passed."""
    rows, k, m, deadline = unit
    chunk = ChunkBits.of(rows)
    parts: list[Part] = []
    frontier: list[tuple[tuple[int, ...], int]] = []
    for j, mask in enumerate(chunk.bits):
        if mask.bit_count() < k:
            parts.append((chunk.items[j],))
        else:
            frontier.append(((j,), mask))
    for _size in range(2, m + 1):
        grown: list[tuple[tuple[int, ...], int]] = []
        for done, (path, mask) in enumerate(frontier):
            if done % 256 == 255 and past(deadline):
                raise TimedOut
            for j in range(path[-1] + 1, len(chunk.items)):
                joint = mask & chunk.bits[j]
                if not joint:
                    continue
                if joint.bit_count() < k:
                    parts.append(tuple(chunk.items[i] for i in (*path, j)))
                else:
                    grown.append(((*path, j), joint))
        if not grown:
            break
        frontier = grown
    return tuple(parts)


@dataclass(frozen=True)
class WeakCodes:
    """Weak parts (:func:`chunk_weak_parts`) of chunks as the count leaves them:
    ``singles`` rows (chunk, item code) and ``pairs`` rows (chunk, code, code),
    both ordered by chunk, and ``listed``, (chunk, parts) of the chunks
    enumerated instead. Labelled only where the search needs them (a release
    verified at a k above its own has weak parts in thousands of chunks)."""

    singles: np.ndarray
    pairs: np.ndarray
    listed: tuple[tuple[int, tuple[Part, ...]], ...] = ()

    def labelled(self, labels: Sequence[str]) -> dict[int, tuple[Part, ...]]:
        """Per chunk with any, its weak parts as labels, in chunk order and
        :func:`chunk_weak_parts`' order (the count's: the weak items, then the pairs)."""
        found: dict[int, list[Part]] = {}
        for chunk, code in self.singles.tolist():
            found.setdefault(chunk, []).append((labels[code],))
        for chunk, lo, hi in self.pairs.tolist():
            found.setdefault(chunk, []).append((labels[lo], labels[hi]))
        found.update((chunk, list(parts)) for chunk, parts in self.listed)
        return {chunk: tuple(found[chunk]) for chunk in sorted(found)}

    def within(self, first: int, last: int) -> WeakCodes:
        """The parts of chunks ``first`` to ``last - 1``."""
        s0, s1 = np.searchsorted(self.singles[:, 0], [first, last]).tolist()
        p0, p1 = np.searchsorted(self.pairs[:, 0], [first, last]).tolist()
        listed = tuple((chunk, parts) for chunk, parts in self.listed if first <= chunk < last)
        return WeakCodes(self.singles[s0:s1], self.pairs[p0:p1], listed)


def weak_parts_of_chunks(batch: ChunkBatch, k: int, m: int, deadline: float | None) -> WeakCodes:
    """:func:`chunk_weak_parts` of every chunk of a batch in CSR form, by
    release chunk index and the release's item codes. For m at most :data:`~.chunks.SCREEN_M` they come from
    the batch's vectorised count (:meth:`ChunkBatch.shapes`,
    :func:`counted_weak_parts`), and only a chunk with too many pairs to count
    is enumerated."""
    if m > SCREEN_M:
        which: list[int] = list(range(len(batch)))
        counted = WeakCodes(np.zeros((0, 2), dtype=np.int64), np.zeros((0, 3), dtype=np.int64))
    else:
        shapes = batch.shapes(k, m)
        which = np.flatnonzero(shapes.undecided & shapes.maybe_weak).tolist()
        counted = counted_weak_parts(shapes, len(batch.labels))
    listed = []
    for n, rows in zip(which, batch.chunks_at(which), strict=True):
        parts = chunk_weak_parts((rows, k, m, deadline))
        if parts:
            listed.append((batch.first + n, parts))
    codes = batch.codes.astype(np.int64)
    singles, pairs = counted.singles.copy(), counted.pairs.copy()
    singles[:, 0] += batch.first
    singles[:, 1] = codes[singles[:, 1]]
    pairs[:, 0] += batch.first
    pairs[:, 1:] = codes[pairs[:, 1:]]
    return WeakCodes(singles, pairs, tuple(listed))


def counted_weak_parts(shapes: ChunkShapes, span: int) -> WeakCodes:
    """The weak parts (:func:`chunk_weak_parts`, in its order) of every chunk the
    count decided, by the batch's chunk index, from its weak items and pairs:
    the weak items in label order, then the weak pairs whose first item (in
    label order) is not weak alone, in label order of their first and then
    their second item. ``span``: the number of labels."""
    singles = shapes.weak_items[~shapes.undecided[shapes.weak_items[:, 0]]]
    pairs = shapes.weak_pairs
    alone = np.zeros(len(shapes.undecided) * span, dtype=bool)  # (chunk, item) weak alone: a table, not a sort
    alone[singles[:, 0] * span + singles[:, 1]] = True
    pairs = pairs[~alone[pairs[:, 0] * span + pairs[:, 1]]]
    return WeakCodes(singles[:, :2].astype(np.int64), pairs[:, :3].astype(np.int64))


SuspectUnit = tuple[ClusterView, tuple[Part, ...], int]
"""(cluster view, the weak parts of the chunks it sees, itemset size)."""


def suspects(unit: SuspectUnit) -> list[tuple[str, ...]]:
    """Itemsets of exactly ``size`` items that the cluster holds with a maximum
    support inside it below k: ``(view, weak parts, size)``.

    Every itemset a reconstruction holds is held by some cluster's view, and its
    maximum over the release is at least its maximum inside any one cluster; so
    only these itemsets can break the guarantee. They are the weak parts
    (:func:`chunk_weak_parts`) and their supersets, so a cluster with one weak chunk
    costs its weak parts times the items of its view, not every itemset of the
    view. :func:`check_disassociation_guarantee` calls it only for clusters that
    are smaller than k or see a weak chunk: otherwise none exists."""
    view, parts, size = unit
    found = {part for part in parts if len(part) == size}
    shorter = [part for part in parts if len(part) < size]
    if shorter:
        sources = _Sources(view)
        sources.options  # noqa: B018 - every item is walked: index them all once
        found.update(itemset for part in shorter for itemset in sources.supersets(part, size))
    return sorted(found)


def longest_record(views: ClusterViews) -> int:
    """The most items a record of any reconstruction can hold: per cluster, the
    longest sub-record of each chunk it sees plus its term chunk."""
    a = views.arrays
    widest = np.zeros(a.n_chunks, dtype=np.int64)  # longest sub-record of each chunk
    filled = a.chunk_rows > 0
    if filled.any():
        widest[filled] = np.maximum.reduceat(a.row_lengths, a.chunk_offsets[:-1][filled])
    owners = len(a.owner_offsets) - 1
    of_owner = np.bincount(
        np.repeat(np.arange(owners), np.diff(a.owner_offsets)), weights=widest, minlength=owners
    ).astype(np.int64)
    own = (of_owner[: a.n_clusters] + np.diff(a.term_offsets)).tolist()
    joint = dict(zip(a.joint_ids, of_owner[a.n_clusters :].tolist(), strict=True))
    return max((own[n] + sum(joint[j] for j in chain) for n, chain in enumerate(views.chains)), default=0)


class _WeakParts:
    """The weak parts (:func:`chunk_weak_parts`) of a release's chunks
    (:class:`WeakCodes`), labelled for one cluster (:meth:`of`) or one size
    (:meth:`of_size`) when the search asks for them."""

    def __init__(self, views: ClusterViews, found: Sequence[WeakCodes], k: int) -> None:
        a = self.arrays = views.arrays
        self.views, self.k = views, k
        self.codes = WeakCodes(
            np.concatenate([np.zeros((0, 2), dtype=np.int64), *(f.singles for f in found)]),
            np.concatenate([np.zeros((0, 3), dtype=np.int64), *(f.pairs for f in found)]),
            tuple(pair for f in found for pair in f.listed),
        )
        owners = len(a.owner_offsets) - 1
        owner_of_chunk = np.repeat(np.arange(owners), np.diff(a.owner_offsets))
        fewest = np.full(owners, INFINITE, dtype=np.int64)  # the fewest items of a part, per chunk owner
        np.minimum.at(fewest, owner_of_chunk[self.codes.pairs[:, 0]], 2)
        np.minimum.at(fewest, owner_of_chunk[self.codes.singles[:, 0]], 1)
        for chunk, parts in self.codes.listed:
            owner = owner_of_chunk[chunk]
            fewest[owner] = min(int(fewest[owner]), *map(len, parts))
        self.fewest: list[int] = fewest.tolist()

    def _owners(self, n: int) -> list[int]:
        """Cluster ``n``'s position and those of the joint clusters above it, as chunk owners."""
        first = self.arrays.n_clusters
        return [n, *(first + self.views.joint_position[joint] for joint in self.views.chains[n])]

    def of(self, n: int) -> tuple[Part, ...]:
        """Every weak part cluster ``n`` sees; ``((),)`` below k records."""
        if self.views.sizes[n] < self.k:
            return ((),)
        offsets, labels = self.arrays.owner_offsets, self.arrays.labels
        return tuple(
            part
            for owner in self._owners(n)
            for parts in self.codes.within(int(offsets[owner]), int(offsets[owner + 1])).labelled(labels).values()
            for part in parts
        )

    def shortest(self) -> list[int | None]:
        """Per cluster, the fewest items of a weak part it sees: 0 below k
        records, None when it sees none (each joint cluster's fewest over
        itself and the joint clusters above it is found once)."""
        views, first = self.views, self.arrays.n_clusters
        above: dict[str, int] = {}

        def over(chain: tuple[str, ...], i: int) -> int:
            found = above.get(chain[i])
            if found is None:
                found = self.fewest[first + views.joint_position[chain[i]]]
                if i + 1 < len(chain):
                    found = min(found, over(chain, i + 1))
                above[chain[i]] = found
            return found

        found: list[int | None] = []
        for n, (size, chain) in enumerate(zip(views.sizes, views.chains, strict=True)):
            fewest = 0 if size < self.k else min(self.fewest[n], over(chain, 0)) if chain else self.fewest[n]
            found.append(None if fewest == INFINITE else fewest)
        return found

    def of_size(self, size: int) -> set[Part]:
        """Every weak part of exactly ``size`` items, in any chunk."""
        labels, span = self.arrays.labels, len(self.arrays.labels)
        found = {part for _, parts in self.codes.listed for part in parts if len(part) == size}
        if size == 1:
            found.update((labels[code],) for code in unique_int(self.codes.singles[:, 1]).tolist())
        elif size == 2:
            keys = unique_int(self.codes.pairs[:, 1] * span + self.codes.pairs[:, 2]).tolist()
            found.update((labels[key // span], labels[key % span]) for key in keys)
        return found


def _weak_parts(views: ClusterViews, k: int, m: int, ctx: Context) -> _WeakParts:
    """:func:`chunk_weak_parts` of every chunk, each enumerated once (the
    chunks go to the executor in CSR batches)."""
    check = partial(weak_parts_of_chunks, k=k, m=m, deadline=ctx.deadline)
    return _WeakParts(views, ctx.map(check, ChunkBatches.all_chunks(views.arrays, BATCH_SIZE), "chunks: weak parts"), k)


def _rounds(count: int) -> list[tuple[int, int]]:
    """``[first, last)`` ranges covering ``count`` weak clusters: 1, 2, 4, ...
    up to :data:`SUSPECT_BATCH` clusters each."""
    ranges, first, width = [], 0, 1
    while first < count:
        ranges.append((first, min(count, first + width)))
        first += width
        width = min(SUSPECT_BATCH, 2 * width)
    return ranges


def _stop_reason(ctx: Context) -> str:
    """Why the search for violations must stop now ("" to go on)."""
    return "time" if ctx.expired() else ""


class _ItemIndex:
    """Where each item of a release is, from its arrays: the clusters whose
    record chunks or term chunk hold it (:meth:`own`) and the shared chunks
    holding it (:meth:`shared`). The item occurrences are put in item order
    once (a stable radix sort of their codes); an item's clusters and shared
    chunks are read off its own occurrences when it is first asked for (the
    search asks for a few items, so the whole release is never keyed)."""

    def __init__(self, views: ClusterViews, under: Callable[[str], list[int]]) -> None:
        a = self.arrays = views.arrays
        self.chains = views.chains
        self.under = under
        self.code = {label: i for i, label in enumerate(a.labels)}
        self.by_item, self.item_from = self._by_code(a.items, len(a.labels))
        self.terms_by_item, self.term_from = self._by_code(a.term_items, len(a.labels))
        self._shared: dict[str, list[tuple[str, int]]] = {}

    @staticmethod
    def _by_code(codes: np.ndarray, span: int) -> tuple[np.ndarray, list[int]]:
        """Positions of ``codes`` in code order (stable) and where each code's start."""
        order = stable_order(codes, max(1, span))
        return order, offsets_of(np.bincount(codes, minlength=span)).tolist()

    def _chunks(self, code: int) -> np.ndarray:
        """The chunks holding the item of ``code`` (once each, ascending)."""
        a = self.arrays
        where = self.by_item[self.item_from[code] : self.item_from[code + 1]]
        rows = np.searchsorted(a.row_offsets, where, side="right") - 1
        return np.unique(np.searchsorted(a.chunk_offsets, rows, side="right") - 1)

    def own(self, item: str) -> list[int]:
        """The clusters whose record chunks or term chunk hold ``item``, ascending."""
        code = self.code.get(item)
        if code is None:
            return []
        a = self.arrays
        chunks = self._chunks(code)
        terms = self.terms_by_item[self.term_from[code] : self.term_from[code + 1]]
        in_terms = np.searchsorted(a.term_offsets, terms, side="right") - 1
        owners = np.r_[a.chunk_owner[chunks[~a.chunk_is_shared[chunks]]], in_terms]
        return np.unique(owners).tolist()

    def shared(self, item: str) -> list[tuple[str, int]]:
        """The shared chunks holding ``item`` as (joint id, chunk index), in
        the order the clusters' chains first meet their joint clusters, then by
        index."""
        found = self._shared.get(item)
        if found is None:
            found = self._shared[item] = self._find_shared(item)
        return found

    def _find_shared(self, item: str) -> list[tuple[str, int]]:
        code = self.code.get(item)
        if code is None:
            return []
        a = self.arrays
        chunks = self._chunks(code)
        chunks = chunks[a.chunk_is_shared[chunks]].tolist()
        owners = [int(a.chunk_owner[c]) for c in chunks]
        keys = []
        for c, owner in zip(chunks, owners, strict=True):
            joint = a.joint_ids[owner]
            met = self._met(joint)
            if met is not None:
                keys.append((met, joint, c - int(a.owner_offsets[a.n_clusters + owner])))
        return [(joint, index) for _, joint, index in sorted(keys)]

    def _met(self, joint: str) -> tuple[int, int] | None:
        """Where the clusters' chains, cluster after cluster, first meet
        ``joint``: (cluster, depth); None when no chain does."""
        under = self.under(joint)
        if not under:
            return None
        first = min(under)
        return first, self.chains[first].index(joint)


class _ReleaseMaximum:
    """The maximum support of an itemset over all reconstructions of the
    release, capped at k (:meth:`__call__`): each cluster's sources are built
    once, when an itemset first needs them, and the clusters holding an itemset
    are visited until one alone reaches k."""

    def __init__(self, views: ClusterViews, parent: dict[str, str], k: int) -> None:
        self.views, self.parent, self.k = views, parent, k
        self.sources: dict[int, _Sources] = {}
        self.shared_bits: dict[SourceKey, ChunkBits] = {}
        self.chains = views.chains  # ancestors, nearest first
        self.items_of_joint: dict[str, set[str]] = {}
        # Visit order: round robin over the top-level trees (a joint cluster's
        # cap bounds what all its members add, so a walk that exhausts one tree
        # before the next wastes its time when the cap is below k).
        trees: dict[str, int] = {}
        tops = (chain[-1] if chain else cid for chain, cid in zip(views.chains, views.ids, strict=True))
        tree = np.array([trees.setdefault(top, len(trees)) for top in tops], dtype=np.int64)
        by_tree = stable_order(tree, max(1, len(trees)))
        rank = np.empty(len(tree), dtype=np.int64)
        rank[by_tree] = rank_in_runs(run_starts(tree[by_tree]), len(tree))
        self.order: list[int] = (rank * len(trees) + tree).tolist()
        self.children: dict[str, list[str]] = defaultdict(list)
        for node, above in parent.items():
            self.children[above].append(node)
        self.position = {cid: n for n, cid in enumerate(views.ids)}
        self._under: dict[str, list[int]] = {}
        self.index = _ItemIndex(views, self.under)
        self.strong_of_joint: dict[tuple[str, int], dict[int, frozenset[str]]] = {}
        self.holders_of: dict[str, tuple[frozenset[int], frozenset[str], int]] = {}
        self.clusters_of: dict[str, list[int]] = {}
        self.reached: dict[tuple[int, tuple[str, ...]], int] = defaultdict(int)  # (cluster, part): itemsets reaching k
        self.strong: dict[tuple[str, ...], list[frozenset[str]]] = defaultdict(list)  # part: strong extensions

    def _strong_in(self, key: SourceKey, k: int) -> frozenset[str]:
        """The items of shared chunk ``key`` with a support of at least ``k``
        (counted for all the chunks of its joint cluster at once, from the arrays)."""
        joint, index = key
        assert joint is not None
        found = self.strong_of_joint.get((joint, k))
        if found is None:
            owner = self.views.arrays.n_clusters + self.views.joint_position[joint]
            found = self.strong_of_joint[joint, k] = frequent_items(self.views.arrays, owner, k)
        return found.get(index, frozenset())

    def under(self, joint: str) -> list[int]:
        """The clusters under joint cluster ``joint``, ascending (computed once per joint)."""
        found = self._under.get(joint)
        if found is None:
            found = []
            for node in self.children.get(joint, ()):
                n = self.position.get(node)
                found.extend(self.under(node) if n is None else (n,))
            found.sort()
            self._under[joint] = found
        return found

    def _known_to_reach(self, itemset: tuple[str, ...]) -> bool:
        """Whether a cluster whose strong extensions (:meth:`_Sources.strong_extensions`)
        of ``itemset`` less one item hold that item reaches k alone."""
        return any(
            itemset[i] in found
            for i in range(len(itemset))
            for found in self.strong.get(itemset[:i] + itemset[i + 1 :], ())
        )

    def _reaches(self, n: int, itemset: tuple[str, ...]) -> None:
        """Cluster ``n`` alone reaches k on ``itemset``: on the second itemset that
        it does so with the same part (``itemset`` less one item), list every
        extension of that part with which it does, so that the search's next
        itemsets with that part (the supersets of one weak part, usually certified
        by a few clusters) need no walk."""
        for i in range(len(itemset)):
            part = itemset[:i] + itemset[i + 1 :]
            self.reached[n, part] += 1
            if self.reached[n, part] == STRONG_AFTER:
                self.strong[part].append(self._source(n).strong_extensions(part, self.k))

    def view_items(self, n: int) -> set[str]:
        """Every item cluster ``n``'s view holds (its chunks, its term chunk and
        the shared chunks above it)."""
        view = self.views[n]
        return {*view[3], *(x for ch in view[2] for row in ch for x in row), *self._joint_items(n)}

    def _joint_items(self, n: int) -> set[str]:
        items: set[str] = set()
        for joint in self.chains[n]:
            found = self.items_of_joint.get(joint)
            if found is None:
                chunks = self.views.shared(joint)
                found = self.items_of_joint[joint] = {x for ch in chunks for row in ch for x in row}
            items |= found
        return items

    def _holders(self, item: str) -> tuple[frozenset[int], frozenset[str], int]:
        """The clusters whose own chunks hold ``item``, the joint clusters whose
        shared chunks do, and a bound on the clusters whose view holds it
        (computed once per item)."""
        found = self.holders_of.get(item)
        if found is None:
            own, joints = frozenset(self.index.own(item)), frozenset(joint for joint, _ in self.index.shared(item))
            found = self.holders_of[item] = (own, joints, len(own) + sum(len(self.under(j)) for j in joints))
        return found

    def _clusters_of(self, item: str) -> list[int]:
        """The clusters whose view holds ``item``, in visit order (computed once per item)."""
        found = self.clusters_of.get(item)
        if found is None:
            own, joints, _ = self._holders(item)
            found = sorted(own.union(*(self.under(j) for j in joints)), key=self.order.__getitem__)
            self.clusters_of[item] = found
        return found

    def _clusters(self, itemset: Sequence[str]) -> Iterator[int]:
        """The clusters whose view holds every item of ``itemset``, in visit
        order, found lazily (the walk usually stops after a few): those of the
        item held by the fewest clusters, each kept if the others are in its
        view, so the clusters of a frequent item are never listed."""
        holders = [self._holders(x) for x in itemset]
        bounds = [bound for _, _, bound in holders]
        lead = bounds.index(min(bounds))
        others = holders[:lead] + holders[lead + 1 :]
        for n in self._clusters_of(itemset[lead]):
            if all(n in own or not joints.isdisjoint(self.chains[n]) for own, joints, _ in others):
                yield n

    def _source(self, n: int) -> _Sources:
        found = self.sources.get(n)
        if found is None:
            view = self.views.lazy_view(n)
            found = self.sources[n] = _Sources(view, self.shared_bits, self.index.shared, self._strong_in)
        return found

    def __call__(self, itemset: tuple[str, ...]) -> int:
        """min(k, maximum support of ``itemset``), the value :func:`combine`
        gives for the parts of every cluster that holds it, computed
        incrementally so that the walk over those clusters stops early:

        * a cluster whose own score (r_P within every cap above it) reaches k
          proves the release's maximum reaches k (f(J) >= min(cap_J, f(child))
          all the way up); such a cluster may be known before any walk
          (:meth:`_known_to_reach`);
        * each part raises f along its chain of joint clusters, until a joint
          whose f does not move; the walk stops when the top-level sum reaches k;
        * once a joint's f equals its cap it is saturated: clusters under it
          can add nothing and are skipped without computing their part.

        Every member of a joint cluster sees the same shared chunks, so its cap
        is the same from each; a part that disagrees (only possible when an item
        has several sources, a malformed release) makes the walk visit every
        cluster and fall back to :func:`combine`."""
        parts: list[tuple[str, int, dict[str, int]]] = []
        cap: dict[str, int] = {}
        below: dict[str, int] = defaultdict(int)  # sum of the children's f, per joint
        value: dict[str, int] = {}  # f, per joint
        saturated: set[str] = set()
        total, consistent = 0, True
        if self._known_to_reach(itemset):
            return self.k
        for n in self._clusters(itemset):
            chain = self.chains[n]
            if consistent and any(joint in saturated for joint in chain):
                continue
            found = self._source(n).best(itemset)
            if found is None:
                continue
            r, caps = found
            if _score(r, caps) >= self.k:
                self._reaches(n, itemset)
                return self.k
            parts.append((self.views.ids[n], r, caps))
            for joint, c in caps.items():
                consistent = consistent and cap.setdefault(joint, c) == c
            if not consistent:
                continue
            delta = r
            for joint in chain:
                below[joint] += delta
                new = min(cap.get(joint, INFINITE), below[joint])
                delta, value[joint] = new - value.get(joint, 0), new
                if new == cap.get(joint):
                    saturated.add(joint)
                if not delta:
                    break
            total += delta
            if total >= self.k:
                return self.k
        return min(self.k, total if consistent else combine(parts, self.parent))


class _Search:
    """The search for itemsets that break Definition 2, smallest first (see
    :func:`check_disassociation_guarantee`)."""

    def __init__(
        self, views: ClusterViews, parts: _WeakParts, parent: dict[str, str], k: int, m: int, ctx: Context
    ) -> None:
        self.views, self.parts, self.parent, self.k, self.m, self.ctx = views, parts, parent, k, m, ctx
        self.shortest = parts.shortest()
        self.weak = [n for n, length in enumerate(self.shortest) if length is not None]
        self.examined: set[tuple[str, ...]] = set()
        self.failing: tuple[int, tuple[str, ...]] | None = None  # (maximum support, itemset)

    @cached_property
    def maximum(self) -> _ReleaseMaximum:
        """Built only when some itemset needs it (a release with no weak
        cluster never does)."""
        return _ReleaseMaximum(self.views, self.parent, self.k)

    def run(self) -> str:
        """Search; return why it stopped early ("" when it examined everything):
        "violation" (one found: the verdict is decided) or "time"."""
        for size in range(1, self.m + 1 if self.weak else 1):
            stopped = self._size(size)
            if stopped:
                return stopped
        return ""

    def _size(self, size: int) -> str:
        """The itemsets of ``size`` items: the weak parts of that size first (no
        enumeration: they are known, and the likeliest to fail), then the
        supersets of the shorter ones, in rounds of clusters."""
        growing = [n for n in self.weak if (self.shortest[n] or 0) < size]
        for batch in [None, *_rounds(len(growing))]:
            stopped = _stop_reason(self.ctx)
            if stopped:
                return stopped
            found: Sequence[Iterable[tuple[str, ...]]]
            if batch is None:
                found = [self.parts.of_size(size)]
            elif size == 1:  # clusters below k: every item a cluster sees is realizable alone
                found = [{(item,) for item in self.maximum.view_items(n)} for n in growing[batch[0] : batch[1]]]
            else:
                units = [(self.views[n], self.parts.of(n), size) for n in growing[batch[0] : batch[1]]]
                found = self.ctx.map(suspects, units, f"disassociation guarantee: suspects of {size} items")
            for itemset in sorted({i for itemsets in found for i in itemsets} - self.examined):
                stopped = _stop_reason(self.ctx)
                if stopped:
                    return stopped
                self.examined.add(itemset)
                support = self.maximum(itemset)
                if support < self.k:
                    self.failing = (support, itemset)
                    return "violation"
        return ""


STRONG_AFTER = 2
"""Itemsets a cluster must reach k on with the same part before its strong
extensions of that part are listed (:meth:`_ReleaseMaximum._reaches`)."""

SUSPECT_BATCH = 64
"""Most weak clusters whose suspect itemsets are enumerated in one round; the
rounds of each itemset size start with one cluster and double, so that a
release that fails early costs little enumeration."""


def check_disassociation_guarantee(release: Release, k: int, m: int, ctx: Context) -> Certificate:
    """Definition 2 over the itemsets some reconstruction holds.

    Itemsets are searched by size, 1 item first; within a size, the weak
    clusters (the only ones that can hold a failing itemset, :func:`suspects`)
    are examined in rounds (:func:`_rounds`). The search stops at the first
    violation, which decides the verdict (a refutation costs no more than a
    proof: going on to collect more, up to 21, doubled the time of a release
    verified at a k above its own), or at ``ctx``'s deadline; then
    ``details["violations_complete"]`` is False, and a search stopped by the
    deadline before any violation holds nothing (``holds`` None,
    ``details["timed_out"]``). ``m`` is clamped to the longest record a
    reconstruction can hold. Witness: the first violating itemset found, one
    with the fewest items that any violation has, and its maximum support."""
    start = time.perf_counter()
    details: dict[str, Any] = {"k": k, "m": m, "term_chunk_model": "a term occurs in 1..|P| records of its cluster"}
    try:
        parent = joint_parents(release)
        views = ClusterViews(release_arrays(release), parent, m, k)
    except OverlappingJointClusters as exc:
        details["reason"] = (
            f"joint clusters around {exc.args[0]!r} cross (neither disjoint nor nested); "
            "the closed form does not cover it"
        )
        return Certificate(
            "disassociation-guarantee", None, "closed-form", 0, round(time.perf_counter() - start, 4), None, details
        )
    # A lower bound of every cluster's in-cluster maximum: min(|P|, the smallest
    # sub-k support inside its record chunks and the shared chunks above it).
    # Only clusters whose bound is below k can hold an itemset that fails.
    m = min(m, longest_record(views))  # no reconstruction holds a longer itemset
    details["m_checked"] = m
    parts = _weak_parts(views, k, m, ctx)
    search = _Search(views, parts, parent, k, m, ctx)
    stopped = search.run()
    timed_out = stopped == "time"
    complete = not stopped
    failing = search.failing
    details["weak_clusters"] = len(search.weak)
    details["suspect_itemsets"] = len(search.examined)
    details["violations"] = int(failing is not None)
    details["violations_complete"] = complete
    witness = None
    holds: bool | None = failing is None
    if failing is not None:
        support, itemset = failing
        witness = {"itemset": list(itemset), "max_support": support, "k": k}
    elif timed_out:
        holds = None
        details["timed_out"] = True
        details["reason"] = f"stopped at the time limit after {len(search.examined):,} suspect itemsets"
    return Certificate(
        "disassociation-guarantee",
        holds,
        "closed-form",
        len(views),
        round(time.perf_counter() - start, 4),
        witness,
        details,
    )
