"""The cover-problem linkage attack on disassociated releases (issue 7, item 2).

Adversary: knows up to ``known`` items ``Q`` of a person (default: the
release's ``m``) and every reconstruction of the release (the inverse
transformation). In a cluster, the person's record is the union of one
sub-record (possibly empty) of each chunk the record belongs to, so the
sub-records that can be the person's in chunk ``j`` are those holding
``Q_j = Q ∩ I_j``. An item is **linked with certainty** when it is in every one
of them (or, for a chunk ``Q`` does not touch, in every row of the chunk);
:func:`certain_links` computes this for any ``Q``.

Findings (one per chunk and kind of link), each naming the claim model it
refutes (the engine makes it a breach when the release claims that model, a
risk otherwise):

* refutes ``cover-freedom`` (lemma 1 of the safe-disassociation paper, section 3.3): a set
  ``Q_j`` of at most ``known - 1`` items of chunk ``j`` such that every
  sub-record holding ``Q_j`` is the whole itemset ``I_j`` (``s(Q_j) = s(I_j)``;
  for ``Q_j = {z}`` this is "z is covered", definition 3), while the cluster has
  an item ``y`` in another chunk. An adversary who knows ``Q_j ∪ {y}`` (at most
  ``known`` items, which k^m-anonymity says must leave them unable to tell the
  person apart from others) learns the person's complete sub-record ``I_j`` in
  every reconstruction: items spread over two chunks precisely so that they
  could not be linked are linked with certainty. The evidence names the chunk,
  its sub-records holding ``Q_j`` (all equal to ``I_j``), ``y`` and the linked
  items, which a reader checks by eye.
* refutes ``km-anonymity`` (definition 2): a chunk item with support below the
  claimed ``k``: together with any item of another chunk it makes a known set
  that no reconstruction places in ``k`` records (impossible in a k^m-anonymous
  release; found when a release is damaged).
* refutes nothing (a ``risk``): an item ``z`` whose sub-records all hold some
  other items but not the whole ``I_j`` (a partial certain link that
  definition 3 does not cover).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from privtool.claims import claimed, claimed_level
from privtool.components import Attack, Evidence
from privtool.context import Context
from privtool.dataset import label_sort_key
from privtool.memo import shared
from privtool.params import Param
from privtool.release import Release
from privtool.results import Finding

from .cover import RECORD, SHARED, ChunkCover, ChunkRef, analyse_chunk, item_bitsets

NAME = "cover-linkage"


@dataclass(eq=False)
class ChunkView:
    """A chunk as the records of one cluster see it: ``records`` is the number
    of records it spreads over (the cluster size, or the joint cluster's).

    One object per chunk: a shared chunk's view is the same object in every
    cluster under its joint cluster, so what is derived from its rows (its
    cover analysis, its name) is computed once however many clusters see it."""

    ref: ChunkRef
    rows: list[list[str]]
    records: int

    @cached_property
    def cover(self) -> ChunkCover:
        """Definition 3 on this chunk (:func:`~privtool.attacks.cover.analyse_chunk`)."""
        return analyse_chunk(self.rows, self.ref)

    @cached_property
    def name(self) -> str:
        """``str(self.ref)``, as findings name the chunk."""
        return str(self.ref)

    @cached_property
    def least_support(self) -> int:
        """The smallest support of an item of the chunk (0 for an empty chunk)."""
        return min(self.cover.supports, default=0)


@dataclass
class ClusterView:
    """Everything one cluster's records can draw from."""

    cluster: str
    size: int
    chunks: list[ChunkView]
    terms: list[str]

    def items(self) -> set[str]:
        return {x for chunk in self.chunks for row in chunk.rows for x in row} | set(self.terms)


def cluster_views(release: Release) -> list[ClusterView]:
    """Per cluster: its record chunks, the shared chunks of every joint cluster
    above it, and its term chunk."""
    joints = {j.id: j for j in release.joint_clusters}
    sizes = {c.id: c.size for c in release.clusters}

    def base(joint_id: str) -> list[str]:
        out: list[str] = []
        for member in joints[joint_id].members:
            out.extend(base(member) if member in joints else [member])
        return out

    shared_of: dict[str, list[ChunkView]] = {}
    for joint in release.joint_clusters:
        members = base(joint.id)
        records = sum(sizes[m] for m in members)
        for index, rows in enumerate(joint.shared_chunks):
            view = ChunkView(ChunkRef(joint.id, SHARED, index), rows, records)
            for member in members:
                shared_of.setdefault(member, []).append(view)
    return [
        ClusterView(
            c.id,
            c.size,
            [ChunkView(ChunkRef(c.id, RECORD, i), rows, c.size) for i, rows in enumerate(c.record_chunks)]
            + shared_of.get(c.id, []),
            list(c.term_chunk),
        )
        for c in release.clusters
    ]


def shared_cluster_views(release: Release) -> list[ClusterView]:
    """:func:`cluster_views`, built once per assessment (:mod:`privtool.memo`):
    the attacks that read a cluster's chunks share the views, and with them
    each chunk's cover analysis."""
    return shared(release, "cluster_views", lambda: cluster_views(release))


def each_chunk(views: Sequence[ClusterView]) -> Iterator[tuple[ClusterView, ChunkView]]:
    """Every record and shared chunk of ``views`` once, with the cluster it is
    seen from (a shared chunk: the first cluster under its joint cluster)."""
    seen: set[int] = set()  # one ChunkView object per chunk
    for view in views:
        for chunk in view.chunks:
            if id(chunk) not in seen:
                seen.add(id(chunk))
                yield view, chunk


@dataclass
class Link:
    """What knowing ``known`` tells about a person of one cluster."""

    cluster: str
    known: list[str]
    linked: list[str]
    candidates: dict[str, list[list[str]]] = field(default_factory=dict)
    max_records: int = 0
    min_records: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "known": self.known,
            "linked_with_certainty": self.linked,
            "candidate_subrecords": self.candidates,
            "records_with_known": [self.min_records, self.max_records],
        }


def _sorted(items: Any) -> list[str]:
    return sorted(items, key=label_sort_key)


def link_in_cluster(view: ClusterView, known: Sequence[str], k: int) -> Link | None:
    """The certain links of ``known`` in one cluster, or ``None`` when no
    reconstruction gives any record of the cluster all of ``known``."""
    q = set(known)
    if not q <= view.items():
        return None
    linked: set[str] = set()
    candidates: dict[str, list[list[str]]] = {}
    counts: list[int] = []
    slack = 0
    for chunk in view.chunks:
        touched = {x for row in chunk.rows for x in row} & q
        if touched:
            rows = [row for row in chunk.rows if touched <= set(row)]
            if not rows:
                return None
            common = set(rows[0]).intersection(*rows[1:])
            candidates[str(chunk.ref)] = rows
            counts.append(len(rows))
            # pigeonhole over the cluster's records; a shared chunk's rows may all go to other clusters
            slack += view.size - len(rows) if chunk.ref.kind == RECORD else view.size
        else:
            supports: dict[str, int] = {}
            for row in chunk.rows:
                for x in row:
                    supports[x] = supports.get(x, 0) + 1
            common = {x for x, s in supports.items() if s == chunk.records}
        linked |= common
    terms = q & set(view.terms)
    max_records = min(counts) if counts else view.size
    if terms:
        max_records = min(max_records, k - 1)
    min_records = 0 if terms else max(0, view.size - slack) if counts else view.size
    return Link(view.cluster, _sorted(q), _sorted(linked - q), candidates, max_records, min_records)


def certain_links(release: Release, known: Sequence[str], k: int | None = None) -> tuple[list[str], list[Link]]:
    """Items linked with certainty to a person known to hold ``known``, over
    every cluster that can hold them all (the intersection of the clusters'
    links), and the per-cluster links."""
    k = k if k is not None else claimed_level(release.claims, "k", 2) or 2
    links = [link for view in cluster_views(release) if (link := link_in_cluster(view, known, k)) is not None]
    if not links:
        return [], []
    common = set(links[0].linked).intersection(*(set(link.linked) for link in links[1:]))
    return _sorted(common), links


def _complete_witness(rows: Sequence[Sequence[str]], itemset: Sequence[str], full: int, limit: int) -> list[str] | None:
    """A smallest set of at most ``limit`` items whose sub-records are exactly
    the ones equal to ``itemset`` (``None`` if there is none): branch on a
    sub-record that is not full, one of the items it lacks must be known."""
    if full == 0 or limit < 1:
        return None
    bits = item_bitsets(rows)
    everything = (1 << len(rows)) - 1
    full_rows = 0
    for r, row in enumerate(rows):
        if len(row) == len(itemset):
            full_rows |= 1 << r

    best: list[str] | None = None

    def search(chosen: list[str], rowset: int, depth: int) -> None:
        nonlocal best
        if rowset == full_rows:
            if best is None or len(chosen) < len(best):
                best = list(chosen)
            return
        if depth == 0 or (best is not None and len(chosen) + 1 >= len(best)):
            return
        extra = rowset & ~full_rows
        r = (extra & -extra).bit_length() - 1
        for x in itemset:
            if not bits[x] >> r & 1:
                search([*chosen, x], rowset & bits[x], depth - 1)

    for size in range(1, limit + 1):
        search([], everything, size)
        if best is not None:
            return _sorted(best)
    return None


def chunk_findings(view: ClusterView, chunk: ChunkView, known: int, k: int) -> list[Finding]:
    """The findings of one chunk of one cluster (see the module docstring)."""
    cover = chunk.cover
    if len(cover.itemset) < 2:
        return []
    # the smallest item of the first other chunk that has one, else the first term
    partner = next(
        ((other.name, other.cover.itemset[0]) for other in view.chunks if other is not chunk and other.cover.itemset),
        ("term chunk", view.terms[0]) if view.terms else None,
    )
    findings: list[Finding] = []
    witness = list(cover.covered[:1]) or _complete_witness(chunk.rows, cover.itemset, cover.itemset_support, known - 1)
    if witness is not None and partner is not None and known >= 2:
        rows = [row for row in chunk.rows if set(witness) <= set(row)]
        findings.append(
            Finding(
                NAME,
                "breach",
                f"knowing {{{', '.join([*witness, partner[1]])}}} links "
                f"{len(cover.itemset) - len(witness)} more item(s) "
                f"with certainty in cluster {view.cluster}",
                {
                    "cluster": view.cluster,
                    "chunk": str(chunk.ref),
                    "known": [*witness, partner[1]],
                    "partner_chunk": partner[0],
                    "linked_with_certainty": [x for x in cover.itemset if x not in witness],
                    "subrecords_with_known": rows,
                    "covered_items": list(cover.covered),
                    "chunk_itemset_support": cover.itemset_support,
                    "rule": "lemma 1: every sub-record holding the known items is the whole chunk itemset",
                },
                refutes="cover-freedom",
            )
        )
    if partner is None or known < 2:
        return findings
    bits = item_bitsets(chunk.rows)
    partial: dict[str, list[str]] = {}
    for z in cover.itemset:
        if z in cover.covered:
            continue
        implied = [y for y in cover.itemset if y != z and bits[z] & bits[y] == bits[z]]
        if implied:
            partial[z] = implied
    if partial:
        findings.append(
            Finding(
                NAME,
                "risk",
                f"{len(partial)} item(s) of {chunk.ref} imply other items of their chunk with certainty",
                {
                    "cluster": view.cluster,
                    "chunk": str(chunk.ref),
                    "implications": partial,
                    "partner_chunk": partner[0],
                },
                explanation=(
                    "An adversary who knows one of these items and an item of another chunk learns the implied "
                    "items with certainty; cover-freedom (Definition 3) only rules out an item implying its whole "
                    "chunk, so no claim covers this."
                ),
            )
        )
    return findings


def support_findings(view: ClusterView, k: int) -> list[Finding]:
    """Definition 2 for sets spread over several chunks: no reconstruction
    places ``Q`` in more records than the smallest support of its parts, so a
    chunk item with support below k makes every such ``Q`` holding it a breach
    (a damaged release; sets inside one chunk are the k^m verifier's job)."""
    return [
        Finding(
            NAME,
            "breach",
            f"item {x} is in fewer than k={k} sub-records of {chunk.name}",
            {"cluster": view.cluster, "chunk": chunk.name, "known": [x], "support": s},
            refutes="km-anonymity",
        )
        for chunk in view.chunks
        if chunk.least_support < k
        for x, s in zip(chunk.cover.itemset, chunk.cover.supports, strict=True)
        if s < k
    ]


def _worst_first(finding: Finding) -> tuple[int, int]:
    """Breaches first; then the findings that link the most items."""
    linked = len(finding.evidence.get("linked_with_certainty", ())) + sum(
        len(v) for v in finding.evidence.get("implications", {}).values()
    )
    return (0 if finding.severity == "breach" else 1, -linked)


def _within_claim(finding: Finding, release: Release) -> Finding:
    """A lemma-1 finding refutes a ``cover-freedom`` claim only when its known
    set is no larger than the claimed m (an unclaimed model stays named, so the
    finding is a risk that says what is not claimed)."""
    cover = claimed(release.claims, "cover-freedom")
    size = len(finding.evidence.get("known", ()))
    if finding.refutes != "cover-freedom" or not cover or any(size <= int(c.params["m"]) for c in cover):
        return finding
    return replace(
        finding,
        severity="risk",
        refutes=None,
        explanation=f"It needs {size} known items, more than the m the cover-freedom claim covers.",
    )


class CoverLinkage(Attack):
    """See the module docstring."""

    name = NAME
    summary = "items linked with certainty through the cover problem (safe-disassociation paper, lemma 1)"
    applies_to = ("disassociated",)
    criteria = ("inference",)
    refutes = ("cover-freedom", "km-anonymity")
    adversary_statement = (
        "The adversary knows the release and a few items of a person, and looks for items that every "
        "reconstruction links to them (the cover problem)."
    )
    params = (Param("known", int, None, "items the adversary knows (default: the claimed m, or 2).", min=1),)

    def run(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Finding]:
        km = claimed(release.claims, "km-anonymity")
        known = int(params.get("known") or min((int(c.params["m"]) for c in km), default=2))
        k = max((int(c.params["k"]) for c in km), default=2)
        findings: list[Finding] = []
        seen_shared: set[int] = set()
        for view in shared_cluster_views(release):
            findings.extend(support_findings(view, k))
            for chunk in view.chunks:
                if chunk.ref.kind == SHARED:
                    if id(chunk) in seen_shared:
                        continue
                    seen_shared.add(id(chunk))
                findings.extend(chunk_findings(view, chunk, known, k))
        findings = [_within_claim(f, release) for f in findings]
        return sorted(findings, key=_worst_first)

    def exposure(self, findings: Sequence[Finding]) -> str | None:
        lemma = [f for f in findings if f.refutes == "cover-freedom"]
        partial = [f for f in findings if f.refutes is None and f.severity == "risk"]
        if not lemma and not partial:
            return "no item is linked with certainty to a known item"
        parts = []
        if lemma:
            clusters = len({f.evidence.get("cluster") for f in lemma})
            parts.append(
                f"{len(lemma):,} chunk(s) in {clusters:,} cluster(s) link a whole chunk with certainty (lemma 1)"
            )
        if partial:
            items = sum(len(f.evidence.get("implications", {})) for f in partial)
            parts.append(f"{items:,} item(s) in {len(partial):,} chunk(s) imply other items of their chunk")
        return "; ".join(parts)
