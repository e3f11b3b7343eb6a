"""The ``safe-disassociation`` sanitizer: a disassociated release in, a release
with no covered item out (safe-disassociation paper, section 4.1).

For every vulnerable chunk (definition 3, :mod:`privtool.attacks.cover`):

* when preconditions (3), (4) and (R) hold (:mod:`.partial`), partial
  suppression with a pairing drawn from ``ctx.rng("safe-disassociation",
  owner, kind, index, pass)``;
* otherwise the paper's fallback (section 5.2.2): the chunk's items are
  suppressed, i.e. the chunk is removed from the release.

Ghost sub-records need rows: a cluster's size grows only as much as needed for
every record chunk to fit (``size = max(size, |R_C|)``), so a ghost sub-record
fills a row that is empty in that chunk when there is one and adds a ghost
record to the cluster otherwise; precondition (3) keeps every size within the
maximum cluster size. Shared chunks (our extension; the paper treats record
chunks only) take the same rules with precondition (3) read as "the two ghost
sub-records fit in the rows of the joint cluster" (``|R_C| <= N - 2``, ``N`` the
number of records of its member clusters), so they never enlarge a cluster.

Termination (docs/algorithms/safe-disassociation.md gives the proof in full):
partial suppression leaves ``I`` unchanged, keeps every item's support
(lemma 2) and lowers ``s(I, R_C)`` by ``card >= 1``, so afterwards every item has
support ``>= old s(I) > new s(I)``: the chunk has no covered item. Removing a
chunk leaves nothing to cover. Neither action changes any other chunk (ghost
rows are empty there). Hence one pass over the chunks removes every cover
problem, and the "repeat until no chunk is vulnerable" loop stops after its
second pass finds nothing; the loop checks this bound.

How one vulnerable chunk is repaired is a :class:`Variant`: the paper's
(:data:`FAITHFUL`, :func:`faithful_repair`) or the hardened one of
:mod:`.hardened`; both share the loop, the fallback, the ghost bookkeeping, the
stats and the trail notes. Both refuse ``m < 2`` (:func:`check_m`). A variant
may also add decoys (:mod:`.decoys`): after every chunk is repaired, a
release-wide step that applies the repair to some untouched chunks (and
removes repaired chunks it cannot hide), before the clusters are built.

The release is handled as CSR arrays (:mod:`.batches`, issue 20): owners go to
the executor in batches, a worker finds the vulnerable chunks of its batch in
one vectorised pass and builds label rows only for the chunks it repairs, and
the driver assembles the sanitized arrays from the input's and the changed
chunks, without a Python object per item occurrence.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from privtool.attacks.cover import RECORD, SHARED, ChunkCover, ChunkRef, analyse_chunk
from privtool.claims import Claim
from privtool.components import Outcome, Sanitizer
from privtool.context import Context, SeedSplitter
from privtool.errors import ParameterError
from privtool.params import K, M, Param
from privtool.release import Release, canonical_itemset
from privtool.release_arrays import ReleaseArrays
from privtool.trail import Trail

from .batches import CodedChunk, OwnerBatch, OwnerBatches, apply_changes, largest_chunks, rows_after
from .partial import Suppression, apply_suppression, draw_suppression, failed_preconditions

if TYPE_CHECKING:
    from .decoys import DecoyRule, Surveyed

NAME = "safe-disassociation"

MAX_CLUSTER_SIZE = Param(
    "max_cluster_size",
    int,
    30,
    "delta: the largest number of records in a cluster (ghost records included).",
    min=2,
)
"""Declared alike by the disassociation method (same name, type and default)."""

REPAIR_PASSES = 1
"""One pass repairs every chunk; the next finds nothing (module docstring)."""


@dataclass
class ChunkAction:
    """What the sanitizer did to one vulnerable chunk (indices are those of the
    input release). ``made_covered`` lists the items the hardened variant made
    covered first (step A), ``removed_occurrences`` counts every occurrence taken
    from a real sub-record (those moved to ghosts included)."""

    ref: ChunkRef
    itemset: list[str]
    action: str  # "partial", "suppressed" or "decoy" (the repair applied to an untouched chunk)
    failed: list[str] = field(default_factory=list)
    parts: list[list[str]] = field(default_factory=list)
    ghosts: list[list[str]] = field(default_factory=list)
    removed_occurrences: int = 0
    ghost_occurrences: int = 0
    made_covered: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"chunk": str(self.ref), "itemset": self.itemset, "action": self.action}
        if self.action in ("partial", "decoy"):
            out["parts"] = self.parts
            out["ghosts"] = self.ghosts
            if self.made_covered:
                out["made_covered"] = self.made_covered
                out["made_covered_removed"] = self.removed_occurrences - self.ghost_occurrences
        else:
            out["failed_preconditions"] = self.failed
        return out


def suppressed_action(cover: ChunkCover, failed: list[str]) -> ChunkAction:
    """The fallback: the whole chunk is removed (section 5.2.2)."""
    return ChunkAction(cover.ref, list(cover.itemset), "suppressed", failed, removed_occurrences=cover.occurrences)


def partial_action(
    cover: ChunkCover, suppression: Suppression, extra: int = 0, made_covered: Sequence[str] = ()
) -> ChunkAction:
    """Partial suppression: every item of ``I`` moves once from a real
    sub-record to a ghost; ``extra`` occurrences were removed before (step A of
    the hardened variant)."""
    moved = len(cover.itemset)
    return ChunkAction(
        cover.ref,
        list(cover.itemset),
        "partial",
        parts=[list(p) for p in suppression.parts],
        ghosts=[canonical_itemset(g) for g in suppression.ghosts if g],
        removed_occurrences=moved + extra,
        ghost_occurrences=moved,
        made_covered=list(made_covered),
    )


@dataclass(frozen=True)
class Limits:
    """What a repair may do to one chunk: ``capacity`` bounds ``|R_C|`` before
    suppression (``delta - 2`` for record chunks, precondition (3); ``N - 2`` for
    shared chunks), ``records`` is the number of records the chunk spreads
    over before the repair (the cluster size, or ``N``) and ``min_preimages``
    the fewest pre-images a repaired chunk must keep (:class:`Variant`)."""

    k: int
    m: int
    capacity: int
    records: int
    min_preimages: int = 0


Repair = Callable[
    [Sequence[Sequence[str]], ChunkCover, Limits, np.random.Generator], tuple[list[list[str]] | None, ChunkAction]
]
"""Turns one vulnerable chunk into a cover-free one (or ``None``: removed)."""


def faithful_repair(
    rows: Sequence[Sequence[str]], cover: ChunkCover, limits: Limits, rng: np.random.Generator
) -> tuple[list[list[str]] | None, ChunkAction]:
    """The paper's rules: partial suppression when (3), (4) and (R) hold, the
    fallback otherwise."""
    width = len(cover.itemset)
    failed = failed_preconditions(cover.rows, cover.itemset_support, width, limits.k, limits.m, limits.capacity + 2)
    if failed:
        return None, suppressed_action(cover, failed)
    suppression = draw_suppression(cover.itemset, rng)
    return apply_suppression(rows, suppression), partial_action(cover, suppression)


@dataclass(frozen=True)
class Variant:
    """A sanitizer built on these rules: its name (trail notes, random
    streams), how it repairs one vulnerable chunk, the fewest pre-images a
    repaired chunk must keep (0: no such requirement) and its decoy rule
    (None: no decoys)."""

    name: str
    repair: Repair
    min_preimages: int = 0
    decoys: DecoyRule | None = None


FAITHFUL = Variant(NAME, faithful_repair)


@dataclass
class ChunkSetResult:
    """What sanitizing did to the chunks of one owner: ``changed`` maps the
    index of every repaired chunk to its new content (label rows; a
    :class:`~.batches.CodedChunk` once :meth:`stored`) and of every removed
    chunk to ``None``; the other chunks are published as they came in.
    ``survey`` is what the variant's decoy rule needs of them (empty without
    one)."""

    changed: dict[int, Any]
    actions: list[ChunkAction]
    passes: int
    survey: list[Surveyed] = field(default_factory=list)

    def published(self, chunks: Sequence[Sequence[Sequence[str]]]) -> Iterator[tuple[int, Sequence[Sequence[str]]]]:
        """``(index, rows)`` of every chunk still published, ``chunks`` being the
        owner's chunks as they came in (label rows; before :meth:`stored`)."""
        for index in range(len(chunks)):
            rows = self.changed[index] if index in self.changed else chunks[index]
            if rows is not None:
                yield index, rows

    def new_index(self, index: int) -> int:
        """Where chunk ``index`` of the input is published (removed chunks left out)."""
        return index - sum(1 for at, rows in self.changed.items() if rows is None and at < index)

    def stored(self, store: Callable[[Sequence[Sequence[str]]], Any]) -> ChunkSetResult:
        """This result with every new content (repairs and decoys) turned into ``store(rows)``."""
        changed = {index: None if rows is None else store(rows) for index, rows in self.changed.items()}
        survey = [
            item if item.decoy is None else replace(item, decoy=(store(item.decoy[0]), item.decoy[1]))
            for item in self.survey
        ]
        return ChunkSetResult(changed, self.actions, self.passes, survey)


def sanitize_chunks(
    owner: str,
    kind: str,
    chunks: Sequence[Sequence[Sequence[str]]],
    capacity: int,
    k: int,
    m: int,
    seeds: SeedSplitter,
    variant: Variant = FAITHFUL,
    records: int = 0,
    candidates: Iterable[int] | None = None,
) -> ChunkSetResult:
    """Make the chunks of one cluster (or one joint cluster) cover-free.

    ``capacity`` bounds ``|R_C|`` before suppression: ``delta - 2`` for record
    chunks (precondition (3)), ``N - 2`` for shared chunks; ``records`` is the
    number of records the chunks spread over, at least the rows of the largest
    chunk (0: that many). ``candidates`` are the indices of the chunks that may
    be vulnerable, ascending (None: every chunk; the others are not analysed).
    The draws of chunk ``index`` come from ``seeds.rng(variant.name, owner,
    kind, index, pass)``.
    """
    if not records:
        records = max((len(rows) for rows in chunks), default=0)
    limits = Limits(k, m, capacity, records, variant.min_preimages)
    # rows are never changed in place: a repaired chunk is a new list
    changed: dict[int, Sequence[Sequence[str]] | None] = {}
    actions: list[ChunkAction] = []
    todo: Iterable[int] = range(len(chunks)) if candidates is None else candidates
    passes = 0
    while True:
        found = False
        for index in todo:
            rows = changed[index] if index in changed else chunks[index]
            if rows is None:
                continue
            cover = analyse_chunk(rows, ChunkRef(owner, kind, index))
            if not cover.vulnerable:
                continue
            found = True
            if passes >= REPAIR_PASSES:
                raise RuntimeError(f"chunk {cover.ref} still has a covered item after {passes} repair pass(es)")
            rng = seeds.rng(variant.name, owner, kind, index, passes)
            changed[index], action = variant.repair(rows, cover, limits, rng)
            actions.append(action)
        passes += 1
        if not found:
            break
        todo = sorted(changed)  # a repair changes only its own chunk: no other can have become vulnerable
    result = ChunkSetResult(changed, actions, passes)
    if variant.decoys is not None:
        result.survey = variant.decoys.survey(owner, kind, chunks, result, limits, seeds, variant)
    return result


@dataclass
class BatchResult:
    """What :func:`sanitize_batch` returns: the results of the owners of the
    batch whose chunks changed or that the decoy rule surveyed (by owner
    position in the release), their contents stored as
    :class:`~.batches.CodedChunk`, and the most passes any owner took (0 for
    an empty batch)."""

    results: dict[int, ChunkSetResult]
    passes: int


def sanitize_batch(
    k: int, m: int, seeds: SeedSplitter, variant: Variant, labels: tuple[str, ...], batch: OwnerBatch
) -> BatchResult:
    """:func:`sanitize_chunks` on every owner of ``batch`` (a top-level
    function, for ``ctx.map``): the vulnerable chunks are found in one
    vectorised pass, and only they (every chunk, for a variant with decoys)
    become label rows."""
    vulnerable = np.flatnonzero(batch.vulnerable())
    owner_of = np.searchsorted(batch.owner_offsets, vulnerable, side="right") - 1
    candidates: dict[int, list[int]] = {}
    for o, chunk in zip(owner_of.tolist(), (vulnerable - batch.owner_offsets[owner_of]).tolist(), strict=True):
        candidates.setdefault(o, []).append(chunk)
    # an owner without a vulnerable chunk takes one pass that finds nothing: only decoys need it looked at
    owners = range(len(batch.ids)) if variant.decoys is not None else candidates
    names = np.array(labels, dtype=object)
    code = {label: i for i, label in enumerate(labels)}
    store = partial(CodedChunk.of, code=code)
    results: dict[int, ChunkSetResult] = {}
    passes = 1 if len(batch.ids) else 0
    for o in owners:
        chunks = batch.chunks(o, names)
        records, capacity = int(batch.records[o]), int(batch.capacity[o])
        owner = batch.ids[o]
        result = sanitize_chunks(
            owner, batch.kind, chunks, capacity, k, m, seeds, variant, records, candidates.get(o, [])
        )
        passes = max(passes, result.passes)
        if result.changed or result.survey:
            results[batch.first + o] = result.stored(store)
    return BatchResult(results, passes)


def joint_records(joint: str, members: Mapping[str, Sequence[str]], sizes: Mapping[str, int]) -> int:
    """Number of records of joint cluster ``joint``: the sizes of its member
    clusters, members that are joint clusters (ids in ``members``) expanded."""
    total = 0
    for member in members[joint]:
        total += joint_records(member, members, sizes) if member in members else sizes[member]
    return total


@dataclass
class SafeSummary:
    """Counts of one sanitizer run (they go to the stats; stamping keeps them in the trail)."""

    vulnerable: int = 0
    partial: int = 0
    suppressed: int = 0
    removed_occurrences: int = 0
    ghost_occurrences: int = 0
    ghost_subrecords: int = 0
    ghost_records: int = 0
    passes: int = 0
    decoys: list[dict[str, Any]] = field(default_factory=list)
    """The decoyed chunks as published (cluster, kind, index in the release)."""


def _record(
    trail_ghosts: list[dict[str, Any]], summary: SafeSummary, notes: list[dict[str, Any]], result: ChunkSetResult
) -> None:
    for action in result.actions:
        summary.removed_occurrences += action.removed_occurrences
        summary.ghost_occurrences += action.ghost_occurrences
        notes.append(action.to_json())
        ref = action.ref
        if action.action == "decoy":
            summary.decoys.append({"cluster": ref.owner, "kind": ref.kind, "chunk": result.new_index(ref.index)})
        else:
            summary.vulnerable += 1
        if action.action == "partial":
            summary.partial += 1
        if action.action in ("partial", "decoy"):
            summary.ghost_subrecords += len(action.ghosts)
            for ghost in action.ghosts:
                trail_ghosts.append(
                    {"cluster": ref.owner, "chunk": result.new_index(ref.index), "kind": ref.kind, "items": ghost}
                )
        else:
            summary.suppressed += 1


def check_m(m: int) -> None:
    """Refuse ``m < 2``: the cover problem is a breach only for an adversary
    who knows two items or more (lemma 1: a covered item and an item of another
    chunk), so below that there is nothing to repair and every suppression
    would be loss for nothing."""
    if m < 2:
        raise ParameterError(
            f"--m {m}: safe disassociation repairs the cover problem, which needs an adversary who knows "
            "at least 2 items (lemma 1); at m < 2 it has nothing to repair, so drop the sanitizer or use --m 2 or more."
        )


def _changes(arrays: ReleaseArrays, results: dict[int, ChunkSetResult]) -> dict[int, CodedChunk | None]:
    """The changed chunks of ``results`` (by owner position) by chunk position in ``arrays``."""
    return {
        int(arrays.owner_offsets[owner]) + index: content
        for owner, result in results.items()
        for index, content in result.changed.items()
    }


def safe_disassociate(
    outcome: Outcome, k: int, m: int, delta: int, ctx: Context, variant: Variant = FAITHFUL
) -> Outcome:
    """The sanitizer's work on a whole outcome (see the module docstring).

    The release travels as CSR arrays (:mod:`.batches`): the clusters' record
    chunks, then the joint clusters' shared chunks (whose capacity depends on
    the cluster sizes after the first map), go through ``ctx.map`` in batches;
    the driver keeps only the changed chunks and assembles the new arrays."""
    check_m(m)
    release = outcome.release
    arrays = release.arrays
    n_clusters = arrays.n_clusters
    largest = largest_chunks(arrays.owner_offsets, arrays.chunk_rows)
    work = partial(sanitize_batch, k, m, ctx.seeds, variant, arrays.labels)

    def run(
        kind: str, owners: range, ids: Sequence[str], records: np.ndarray, capacity: np.ndarray
    ) -> list[BatchResult]:
        batches = OwnerBatches(arrays, kind, owners, ids, records, capacity, ctx.unit_occurrences)
        return ctx.map(work, batches, "safe disassociation" + ("" if kind == RECORD else " (shared chunks)"))

    records = np.maximum(arrays.cluster_sizes, largest[:n_clusters])
    batches = run(RECORD, range(n_clusters), arrays.cluster_ids, records, np.full(n_clusters, delta - 2))
    results = {owner: result for batch in batches for owner, result in batch.results.items()}
    # A shared chunk's rows are its joint cluster's records. With decoys they are
    # counted from the input sizes, which neither decoys nor the repairs they
    # undo can lower, so what the decoy rule computes stays a lower bound.
    sizes = arrays.cluster_sizes
    if variant.decoys is None:
        after = rows_after(arrays, _changes(arrays, results))
        sizes = np.maximum(sizes, largest_chunks(arrays.owner_offsets, after)[:n_clusters])
    size_of = dict(zip(arrays.cluster_ids, sizes.tolist(), strict=True))
    members = dict(zip(arrays.joint_ids, arrays.joint_members, strict=True))
    joint = np.array([joint_records(j, members, size_of) for j in arrays.joint_ids], dtype=np.int64)
    owners = range(n_clusters, n_clusters + arrays.n_joint_clusters)
    shared = run(SHARED, owners, arrays.joint_ids, np.maximum(joint, largest[n_clusters:]), joint - 2)
    batches += shared
    results.update((owner, result) for batch in shared for owner, result in batch.results.items())
    if variant.decoys is not None:
        variant.decoys.select(list(results.values()), ctx.seeds, variant.name)
    safe_arrays = apply_changes(arrays, _changes(arrays, results), canonical=arrays.is_canonical())
    summary = SafeSummary(passes=max((batch.passes for batch in batches), default=0))
    summary.ghost_records = int(safe_arrays.cluster_sizes.sum() - arrays.cluster_sizes.sum())
    ghosts: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for result in results.values():
        _record(ghosts, summary, notes, result)
    safe = Release.from_arrays(safe_arrays, release.kind, **release.envelope())
    # earlier runs' counts are in the trail once stamped (privtool.publishable)
    safe.stats = _stats({**release.stats, **outcome.trail.stats}, summary, len(arrays.items), safe_arrays)
    trail = _trail(outcome.trail, variant, ghosts, notes, summary, k, m, delta)
    return Outcome(safe, trail)


def _stats(old: dict[str, Any], summary: SafeSummary, before: int, arrays: ReleaseArrays) -> dict[str, Any]:
    """Release stats after the sanitizer: its counts add up over repeated runs;
    ``item_occurrences_published`` loses the occurrences no longer published
    anywhere (the fallback's; partially suppressed ones are still published, in
    ghost sub-records), and the per-chunk-kind counts of the disassociation
    method are recomputed (from the sanitized ``arrays``) when present."""
    stats = dict(old)

    def add(key: str, value: int) -> None:
        stats[key] = int(stats.get(key, 0)) + value

    stats.setdefault("chunk_item_occurrences_before_safe", before)
    add("vulnerable_chunks", summary.vulnerable)
    add("partially_suppressed_chunks", summary.partial)
    add("suppressed_chunks", summary.suppressed)
    add("suppressed_item_occurrences", summary.removed_occurrences)
    add("ghost_item_occurrences", summary.ghost_occurrences)
    add("ghost_subrecords", summary.ghost_subrecords)
    add("ghost_records", summary.ghost_records)
    if summary.decoys:
        add("decoy_chunks", len(summary.decoys))
    if "item_occurrences_published" in stats:
        net = summary.removed_occurrences - summary.ghost_occurrences
        stats["item_occurrences_published"] = int(stats["item_occurrences_published"]) - net
    record_chunks = int(arrays.owner_offsets[arrays.n_clusters])
    in_record_chunks = int(arrays.row_offsets[arrays.chunk_offsets[record_chunks]])
    recount = {
        "record_chunks": record_chunks,
        "shared_chunks": arrays.n_chunks - record_chunks,
        "item_occurrences_in_record_chunks": in_record_chunks,
        "item_occurrences_in_shared_chunks": len(arrays.items) - in_record_chunks,
    }
    for key, value in recount.items():
        if key in stats:
            stats[key] = value
    return stats


def _trail(
    old: Trail,
    variant: Variant,
    ghosts: list[dict[str, Any]],
    notes: list[dict[str, Any]],
    summary: SafeSummary,
    k: int,
    m: int,
    delta: int,
) -> Trail:
    trail = replace(old, ghost_records=[*old.ghost_records, *ghosts], notes=dict(old.notes))
    runs = list(trail.notes.get(variant.name, []))
    run: dict[str, Any] = {"k": k, "m": m, "max_cluster_size": delta, "passes": summary.passes, "chunks": notes}
    if variant.decoys is not None:
        run["decoy_bound"] = str(variant.decoys.bound)
        run["decoys"] = summary.decoys
    runs.append(run)
    trail.notes[variant.name] = runs
    return trail


class SafeDisassociation(Sanitizer):
    """Partial suppression of every chunk with a covered item (section 4.1)."""

    name = NAME
    summary = "removes the cover problem of a disassociated release by partial suppression and ghost sub-records"
    params = (K, M, MAX_CLUSTER_SIZE)
    applies_to = ("disassociated",)

    def sanitize(self, target: Outcome | Any, params: dict[str, Any], ctx: Context) -> Outcome:
        return safe_disassociate(target, params["k"], params["m"], params["max_cluster_size"], ctx)

    def claims(self, params: dict[str, Any], incoming: Sequence[Claim]) -> list[Claim]:
        """The incoming ``km-anonymity`` claims (partial suppression keeps every
        item's support and ghost sub-records repeat existing ones, lemma 2; a
        removed chunk has nothing left to break) plus ``cover-freedom`` at m."""
        kept = [claim for claim in incoming if claim.model == "km-anonymity"]
        return [*kept, Claim("cover-freedom", {"m": params["m"]})]
