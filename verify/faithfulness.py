"""Faithfulness of a release to its original (needs ``--original``).

What is checked (docs/guarantees.md, "faithfulness"):

* provenance: the original's content SHA-256 is the input SHA-256 the release
  and the trail state; the trail belongs to this release (its release SHA-256);
* accounting: every original record is published or counted as suppressed
  (trail ``suppressed_records`` and the ``stats`` of the release and the
  trail), no record appears twice;
* content, disassociated releases (needs the trail's ``cluster_of_record``): per
  cluster, the record chunks partition the items into disjoint domains; each
  record chunk equals, as a multiset, the non-empty projections of the cluster's
  input records on its domain (after the trail's ``removed_items``) plus the
  trail's ghost sub-records for it, or else comes from them by removing items
  from distinct sub-records (partial suppression), with every such removed
  occurrence, and every occurrence of an item published nowhere, counted in
  ``stats.suppressed_item_occurrences`` (of the trail, or of a release written
  before that count moved there); each shared chunk likewise over the records
  of every cluster under its joint cluster (joint clusters may nest); the term chunk is exactly the set of the
  cluster's remaining items; the cluster size is its input records plus the
  ghost records added (a ghost sub-record fills a row that is empty in its
  chunk when there is one, and adds a record otherwise, as the
  safe-disassociation sanitizer documents). Content of sanitized and generalized releases is checked by
  ``removal-only`` and ``hierarchy``.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import Any, ClassVar

import numpy as np

from privtool.arrays import csr_positions, offsets_of, unique_int
from privtool.components import Evidence, Verifier
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.release import Release
from privtool.release_arrays import ReleaseArrays
from privtool.results import Certificate
from privtool.trail import Trail

from .chunk_batches import release_arrays
from .faithful_units import ContentArrays, Units, bad_joints, check_unit, joint_domains
from .joint_tree import OverlappingJointClusters, joint_parents
from .matching import unmatched_subsets
from .reconstruction_bounds import ClusterViews


class Unfaithful(Exception):
    """Carries the witness of the first problem found."""

    def __init__(self, witness: dict[str, Any]) -> None:
        super().__init__(witness.get("problem", "unfaithful"))
        self.witness = witness


def check_provenance(
    release: Release, original: Dataset, trail: Trail | None, release_sha256: str, digest: str
) -> None:
    stated = release.provenance.get("input_sha256")
    if stated and stated != digest:
        raise Unfaithful(
            {
                "problem": "the original is not the release's input (input SHA-256 differs)",
                "release_states": stated,
                "original": digest,
            }
        )
    if trail is not None:
        if trail.input_sha256 and trail.input_sha256 != digest:
            raise Unfaithful(
                {
                    "problem": "the trail belongs to another input (input SHA-256 differs)",
                    "trail_states": trail.input_sha256,
                    "original": digest,
                }
            )
        # release_sha256 may be the SHA-256 of the release file; it equals the
        # canonical one for a file privtool wrote, otherwise recompute.
        if trail.release_sha256 and trail.release_sha256 != release_sha256 and trail.release_sha256 != release.sha256():
            raise Unfaithful(
                {
                    "problem": "the trail belongs to another release (release SHA-256 differs)",
                    "trail_states": trail.release_sha256,
                    "release": release.sha256(),
                }
            )


def stated_stats(release: Release, trail: Trail | None) -> dict[str, Any]:
    """The counts the release and its trail state together (the trail's win:
    it holds what the release does not publish, :mod:`privtool.publishable`)."""
    return {**release.stats, **(trail.stats if trail is not None else {})}


def check_accounting(release: Release, original: Dataset, trail: Trail | None) -> int:
    """Suppressed-record count after the consistency checks; raises on a gap."""
    n = original.n_records
    stats = stated_stats(release, trail)
    if "records_in" in stats and stats["records_in"] != n:
        raise Unfaithful(
            {
                "problem": "stats.records_in is not the number of original records",
                "stated": stats["records_in"],
                "original": n,
            }
        )
    suppressed = stats.get("suppressed_records", 0)
    if trail is not None:
        positions = trail.suppressed_records
        if len(set(positions)) != len(positions) or any(not 0 <= p < n for p in positions):
            raise Unfaithful({"problem": "the trail's suppressed records are repeated or out of range"})
        if "suppressed_records" in stats and stats["suppressed_records"] != len(positions):
            raise Unfaithful(
                {
                    "problem": "stats.suppressed_records disagrees with the trail",
                    "stats": stats["suppressed_records"],
                    "trail": len(positions),
                }
            )
        suppressed = len(positions)
    if release.kind != "disassociated":
        if len(release.records) + suppressed != n:
            raise Unfaithful(
                {
                    "problem": "published plus suppressed records do not add up to the original records",
                    "published": len(release.records),
                    "suppressed": suppressed,
                    "original": n,
                }
            )
    return suppressed


def _project(rows: list[set[str]], domain: set[str]) -> Counter[tuple[str, ...]]:
    out: Counter[tuple[str, ...]] = Counter()
    for row in rows:
        part = row & domain
        if part:
            out[tuple(sorted(part))] += 1
    return out


def _chunk_counter(chunk: Sequence[Sequence[str]]) -> Counter[tuple[str, ...]]:
    return Counter(tuple(sorted(row)) for row in chunk)


class _Records:
    """The original records as sets of labels, built from the dataset's CSR
    arrays only when a cluster asks for them (never all at once), minus the
    trail's removed items."""

    def __init__(self, original: Dataset) -> None:
        self.original = original
        self.labels = np.array(original.labels, dtype=object)
        self.index = {label: i for i, label in enumerate(original.labels)}
        self.removed: dict[int, set[str]] = defaultdict(set)

    def of(self, position: int) -> set[str]:
        """Record ``position`` after the removals so far."""
        start, end = self.original.indptr[position], self.original.indptr[position + 1]
        return set(self.labels[self.original.items[start:end]].tolist()) - self.removed.get(position, set())

    def many(self, positions: np.ndarray, within: Iterable[str] | None = None) -> list[set[str]]:
        """The records at ``positions``, in that order; with ``within``, only
        their items among those labels."""
        indptr = self.original.indptr
        occurrences = csr_positions(indptr, positions)
        codes = self.original.items[occurrences]
        lengths = indptr[positions + 1] - indptr[positions]
        if within is not None:
            wanted = np.zeros(len(self.labels), dtype=bool)
            wanted[[self.index[label] for label in within if label in self.index]] = True
            keep = wanted[codes]
            codes = codes[keep]
            lengths = np.bincount(np.repeat(np.arange(len(positions)), lengths)[keep], minlength=len(positions))
        flat = self.labels[codes].tolist()
        rows = [set(flat[a:b]) for a, b in pairwise(offsets_of(lengths).tolist())]
        if self.removed:
            for row, position in zip(rows, positions.tolist(), strict=True):
                row -= self.removed.get(position, set())
        return rows


def check_disassociated_content(
    release: Release, original: Dataset, trail: Trail, ctx: Context | None = None, *, fast: bool = True
) -> int:
    """See the module docstring; returns the item occurrences removed without a
    trail entry (they must add up, with the trail's ``removed_items``, to the
    release's ``stats.suppressed_item_occurrences``).

    The clusters are checked on arrays in units through ``ctx``'s executor
    (:mod:`.faithful_units`, partial suppressions counted there too; serially
    without one), and only the clusters and joint clusters a unit flags are
    checked again one by one here (:class:`_ClusterChecks`), which finds the
    first problem in release order. ``fast=False`` checks every cluster one by
    one (the reference the units are tested against)."""
    n = original.n_records
    try:
        parent = joint_parents(release)
        arrays = release_arrays(release)
        views = ClusterViews(arrays, parent, 0, 0)
    except OverlappingJointClusters as exc:
        raise Unfaithful({"problem": "joint clusters cross (neither disjoint nor nested)", "at": exc.args[0]}) from None
    if len(trail.cluster_of_record) != n:
        raise Unfaithful(
            {
                "problem": "trail.cluster_of_record does not list every original record",
                "listed": len(trail.cluster_of_record),
                "original": n,
            }
        )
    records = _Records(original)
    for entry in trail.removed_items:
        if not (
            isinstance(entry, list)
            and len(entry) == 2
            and isinstance(entry[0], int)
            and 0 <= entry[0] < n
            and entry[1] in records.of(entry[0])
        ):
            raise Unfaithful({"problem": "the trail removes an item the original record does not hold", "entry": entry})
        records.removed[entry[0]].add(entry[1])
    cluster_of = _cluster_positions(trail, arrays.cluster_ids, n)
    by_cluster = np.argsort(cluster_of, kind="stable")  # each cluster's records ascending
    member_cuts = np.searchsorted(cluster_of[by_cluster], np.arange(arrays.n_clusters + 1))
    owned = np.diff(arrays.owner_offsets).tolist()
    chunk_counts = dict(zip(arrays.cluster_ids, owned[: arrays.n_clusters], strict=True))
    chunk_counts.update(zip(arrays.joint_ids, owned[arrays.n_clusters :], strict=True))
    for g, ghost in enumerate(trail.ghost_records):  # shapes were checked when the trail was read
        owner, index = ghost["cluster"], ghost["chunk"]
        if index >= chunk_counts.get(owner, 0):
            absent = "a chunk" if owner in chunk_counts else "a cluster"
            raise Unfaithful(
                {
                    "problem": f"a ghost of the trail is in {absent} the release does not have",
                    "ghost": g,
                    "cluster": owner,
                    "chunk": index,
                }
            )
    members, member_offsets = by_cluster[member_cuts[0] :], member_cuts - member_cuts[0]
    checks = _ClusterChecks(arrays, views, records, members, member_offsets, trail)
    silent = 0  # occurrences removed without a trail entry (partial suppression)
    if fast and not set(arrays.cluster_ids) & set(arrays.joint_ids):
        data = content_arrays(arrays, views, original, records, (members, member_offsets), trail)
        payloads = Units(data, _occurrences_per_cluster(original, cluster_of, arrays.n_clusters))
        if ctx is not None:
            results = ctx.map(check_unit, payloads, "faithfulness: clusters")
        else:
            results = list(map(check_unit, payloads))
        silent += sum(r.silent for r in results)
        slow_clusters = np.sort(np.concatenate([r.clusters for r in results] or [np.zeros(0, dtype=np.int64)]))
        slow_joints, removed = bad_joints(data, results)
        silent += removed
    else:
        slow_clusters, slow_joints = np.arange(arrays.n_clusters), np.arange(arrays.n_joint_clusters)
    for c in slow_clusters.tolist():
        silent += checks.cluster(c)
    for j in slow_joints.tolist():
        silent += checks.joint(j)
    if silent:
        stated = stated_stats(release, trail).get("suppressed_item_occurrences")
        if stated != silent + len(trail.removed_items):
            raise Unfaithful(
                {
                    "problem": "item occurrences are missing from the release and not counted as suppressed",
                    "missing_occurrences": silent,
                    "trail_removed_items": len(trail.removed_items),
                    "stats_suppressed_item_occurrences": stated,
                }
            )
    return silent


def _cluster_positions(trail: Trail, cluster_ids: Sequence[str], n: int) -> np.ndarray:
    """Per original record, its cluster's position in the release (-1:
    suppressed); raises on the first record that is neither published nor
    suppressed, both, or in a cluster the release does not have."""
    coded = trail.cluster_of_record
    position_of = {cid: c for c, cid in enumerate(cluster_ids)}
    name_position = np.array([position_of.get(name, -2) for name in coded.names] + [-1], dtype=np.int64)
    cluster_of = name_position[coded.codes]  # code -1 (null) takes the last entry
    suppressed = np.zeros(n, dtype=bool)
    listed = np.asarray(trail.suppressed_records, dtype=np.int64)
    suppressed[listed[(listed >= 0) & (listed < n)]] = True
    named = coded.codes >= 0
    wrong = (~named & ~suppressed) | (named & (suppressed | (cluster_of == -2)))
    if np.any(wrong):
        position = int(np.argmax(wrong))
        if not named[position]:
            problem = {
                "problem": "an original record is neither published nor counted as suppressed",
                "record": position,
            }
        elif suppressed[position]:
            problem = {"problem": "a record is both published and suppressed", "record": position}
        else:
            problem = {
                "problem": "the trail names a cluster the release does not have",
                "record": position,
                "cluster": coded[position],
            }
        raise Unfaithful(problem)
    return cluster_of


def _occurrences_per_cluster(original: Dataset, cluster_of: np.ndarray, n_clusters: int) -> np.ndarray:
    """Item occurrences of each cluster's original records."""
    published = cluster_of >= 0
    return np.bincount(cluster_of[published], weights=np.diff(original.indptr)[published], minlength=n_clusters)


def content_arrays(
    arrays: ReleaseArrays,
    views: ClusterViews,
    original: Dataset,
    records: _Records,
    members: tuple[np.ndarray, np.ndarray],
    trail: Trail,
) -> ContentArrays:
    """What the units of :func:`.faithful_units.check_unit` are cut from, as
    arrays (see :class:`ContentArrays`); ``members`` are the published records' positions
    grouped by cluster and their offsets per cluster."""
    n_clusters = arrays.n_clusters
    joint_position = {jid: n_clusters + j for j, jid in enumerate(arrays.joint_ids)}
    owner_parent = np.full(n_clusters + arrays.n_joint_clusters, -1, dtype=np.int64)
    for c, chain in enumerate(views.chains):  # a cluster's chain holds its joint clusters' chains
        up = [c, *(joint_position[j] for j in chain)]
        owner_parent[up[:-1]] = up[1:]
    code_of = {label: i for i, label in enumerate(arrays.labels)}
    owner_first = np.concatenate([arrays.owner_offsets[:n_clusters], arrays.owner_offsets[n_clusters:-1]])
    owners = {cid: c for c, cid in enumerate(arrays.cluster_ids)} | joint_position
    ghosts = sorted(
        (int(owner_first[owners[g["cluster"]]]) + g["chunk"], sorted(code_of.get(item, -1) for item in g["items"]))
        for g in trail.ghost_records
    )
    ghost_counts = np.zeros(n_clusters, dtype=np.int64)
    for g in trail.ghost_records:
        if g["cluster"] in owners and owners[g["cluster"]] < n_clusters:
            ghost_counts[owners[g["cluster"]]] += 1
    joint_keys, joint_chunks = joint_domains(arrays, len(arrays.labels) + 1)
    return ContentArrays(
        n_clusters=n_clusters,
        n_labels=len(arrays.labels),
        items=arrays.items,
        row_offsets=arrays.row_offsets,
        chunk_offsets=arrays.chunk_offsets,
        owner_offsets=arrays.owner_offsets,
        term_items=arrays.term_items,
        term_offsets=arrays.term_offsets,
        sizes=arrays.cluster_sizes,
        owner_parent=owner_parent,
        indptr=original.indptr,
        original_items=original.items,
        release_code=np.array([code_of.get(label, -1) for label in original.labels] or [0], dtype=np.int32),
        removed=_removed_occurrences(original, records),
        members=members[0],
        member_offsets=members[1],
        ghost_chunk=np.array([chunk for chunk, _ in ghosts], dtype=np.int64),
        ghost_offsets=offsets_of(len(items) for _, items in ghosts),
        ghost_items=np.array([code for _, items in ghosts for code in items], dtype=np.int32),
        ghost_counts=ghost_counts,
        joint_keys=joint_keys,
        joint_chunks=joint_chunks,
    )


def _removed_occurrences(original: Dataset, records: _Records) -> np.ndarray:
    """Positions in ``original.items`` of the occurrences the trail removed, ascending."""
    found = [np.zeros(0, dtype=np.int64)]
    for position, labels in records.removed.items():
        start, end = int(original.indptr[position]), int(original.indptr[position + 1])
        row = original.items[start:end].tolist()
        found.append(start + np.flatnonzero(np.array([original.labels[i] in labels for i in row], dtype=bool)))
    return unique_int(np.concatenate(found))


class _ClusterChecks:
    """The per-cluster check of :func:`check_disassociated_content`, one cluster
    or joint cluster at a time, on its views and records (the reference, and
    the fallback for what a unit flags)."""

    def __init__(
        self,
        arrays: ReleaseArrays,
        views: ClusterViews,
        records: _Records,
        members: np.ndarray,
        member_cuts: np.ndarray,
        trail: Trail,
    ) -> None:
        self.arrays, self.views, self.records = arrays, views, records
        self._members, self._cuts = members, member_cuts
        self.ghosts: dict[tuple[str, int], Counter[tuple[str, ...]]] = defaultdict(Counter)
        self.ghost_records: Counter[str] = Counter()
        for ghost in trail.ghost_records:
            self.ghosts[(ghost["cluster"], ghost["chunk"])][tuple(sorted(ghost["items"]))] += 1
            self.ghost_records[ghost["cluster"]] += 1
        self._domains: dict[str, list[set[str]]] = {}
        self.under: dict[str, list[int]] = defaultdict(list)  # joint id -> every cluster under it
        for c, chain in enumerate(views.chains):
            for joint in chain:
                self.under[joint].append(c)

    def members(self, c: int) -> np.ndarray:
        return self._members[self._cuts[c] : self._cuts[c + 1]]

    def shared_domains(self, joint: str) -> list[set[str]]:
        found = self._domains.get(joint)
        if found is None:
            found = self._domains[joint] = [set().union(*map(set, chunk)) for chunk in self.views.shared(joint)]
        return found

    def cluster(self, c: int) -> int:
        """Check cluster ``c``; the occurrences removed from it without a trail entry."""
        views, ghost_records = self.views, self.ghost_records
        cid, size = self.arrays.cluster_ids[c], views.sizes[c]
        record_chunks, term_chunk = views.record_chunks(c), views.term_chunk(c)
        rows = self.records.many(self.members(c))
        if not len(rows) <= size <= len(rows) + ghost_records[cid]:
            raise Unfaithful(
                {
                    "problem": "the cluster size is not its input records plus at most its ghost sub-records",
                    "cluster": cid,
                    "size": size,
                    "input_records": len(rows),
                    "ghost_subrecords": ghost_records[cid],
                }
            )
        domains = [set().union(*map(set, chunk)) for chunk in record_chunks]
        outside = [d for joint in views.chains[c] for d in self.shared_domains(joint)]
        seen: set[str] = set()
        for d in [*domains, *outside, set(term_chunk)]:
            if seen & d:
                raise Unfaithful(
                    {
                        "problem": "an item is published in two chunks of one cluster",
                        "cluster": cid,
                        "items": sorted(seen & d),
                    }
                )
            seen |= d
        silent = 0
        for index, (chunk, domain) in enumerate(zip(record_chunks, domains, strict=False)):
            where = {"cluster": cid, "record_chunk": index}
            silent += _chunk_removals(where, chunk, _project(rows, domain), self.ghosts[(cid, index)])
        remaining = set().union(*rows) - set().union(*domains, *outside) if rows else set()
        invented = set(term_chunk) - remaining
        if invented:
            raise Unfaithful(
                {
                    "problem": "the term chunk holds items the cluster's records do not",
                    "cluster": cid,
                    "invented": sorted(invented)[:10],
                }
            )
        lost = remaining - set(term_chunk)  # items published nowhere
        if lost:
            silent += sum(len(row & lost) for row in rows)
        return silent

    def joint(self, j: int) -> int:
        """Check joint cluster ``j``'s shared chunks; the occurrences removed from them without a trail entry."""
        jid = self.arrays.joint_ids[j]
        # The records of the joint cluster's member clusters, dealt to the shared
        # chunks they meet in one pass (the chunks' domains are disjoint, checked with the clusters).
        shared_chunks = self.views.shared(jid)
        domains = self.shared_domains(jid)
        chunk_of_item = {item: index for index, domain in enumerate(domains) for item in domain}
        meeting: list[list[set[str]]] = [[] for _ in shared_chunks]
        positions = np.sort(np.concatenate([self.members(c) for c in self.under[jid]] or [np.zeros(0, dtype=np.int64)]))
        for record in self.records.many(positions, chunk_of_item):
            for index in {chunk_of_item[item] for item in record if item in chunk_of_item}:
                meeting[index].append(record)
        silent = 0
        for index, (chunk, domain, rows) in enumerate(zip(shared_chunks, domains, meeting, strict=False)):
            where = {"joint_cluster": jid, "shared_chunk": index}
            silent += _chunk_removals(where, chunk, _project(rows, domain), self.ghosts[(jid, index)])
        return silent


def _chunk_removals(
    where: dict[str, Any],
    chunk: Sequence[Sequence[str]],
    projection: Counter[tuple[str, ...]],
    ghosts: Counter[tuple[str, ...]],
) -> int:
    """Item occurrences removed from a chunk's sub-records without a trail entry.

    The chunk must be the projection plus the trail's ghosts; failing that, its
    non-ghost sub-records must each come from a distinct projected sub-record by
    removing items (partial suppression, :mod:`.matching`); anything else is an
    alteration or an invention."""
    got = _chunk_counter(chunk)
    if got == projection + ghosts:
        return 0
    if ghosts - got:
        raise Unfaithful(
            {
                "problem": "a ghost sub-record of the trail is not published",
                **where,
                "ghosts": [list(r) for r in sorted(ghosts - got)][:5],
            }
        )
    rest = got - ghosts
    unmatched = unmatched_subsets(list(rest.elements()), list(projection.elements()))
    if unmatched:
        raise Unfaithful(
            {
                "problem": "a chunk holds sub-records that its records do not explain",
                **where,
                "published_not_in_input": [list(r) for r in sorted(unmatched)][:5],
                "input_not_published": [list(r) for r in sorted(projection - got)][:5],
            }
        )
    return sum(len(r) * n for r, n in projection.items()) - sum(len(r) * n for r, n in rest.items())


class Faithfulness(Verifier):
    name = "faithfulness"
    summary = (
        "The release is what the method should have made from the original (needs --original; --trail for clusters)."
    )
    params = ()
    applies_to: ClassVar[tuple[str, ...]] = ("disassociated", "generalized", "sanitized")

    def verify(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Certificate]:
        start = time.perf_counter()
        details: dict[str, Any] = {"trail": evidence.trail is not None}
        if evidence.original is None:
            details["reason"] = "needs --original"
            return [Certificate(self.name, None, "none", 0, 0.0, None, details)]
        if release.kind == "disassociated" and evidence.trail is None:
            details["reason"] = "a disassociated release needs --trail to tie records to clusters"
            return [Certificate(self.name, None, "none", 0, 0.0, None, details)]
        units = 0
        try:
            check_provenance(
                release,
                evidence.original,
                evidence.trail,
                evidence.extra.get("release_sha256") or release.sha256(),
                evidence.extra.get("original_sha256") or evidence.original.content_sha256(),
            )
            details["suppressed_records"] = check_accounting(release, evidence.original, evidence.trail)
            units = evidence.original.n_records
            if release.kind == "disassociated":
                assert evidence.trail is not None
                details["clusters"] = release_arrays(release).n_clusters
                details["removed_without_trail_entry"] = check_disassociated_content(
                    release, evidence.original, evidence.trail, ctx
                )
        except Unfaithful as failure:
            return [
                Certificate(
                    self.name, False, "direct", units, round(time.perf_counter() - start, 4), failure.witness, details
                )
            ]
        return [Certificate(self.name, True, "direct", units, round(time.perf_counter() - start, 4), None, details)]
