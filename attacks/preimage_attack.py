"""The ``preimage`` attack: invert the published safe-disassociation rules.

Adversary model (algorithm-aware): the adversary knows the release and the
published sanitizer, and for each chunk considers only the chunks that
sanitizer could have turned into it; an item covered in every one of them is
covered in the original, whatever the reconstruction.

For every record and shared chunk of a release made by ``safe-disassociation``
or ``safe-disassociation-hardened`` (the last of them in ``params.sanitizers``)
the attack computes the pre-images (:mod:`.preimage`). A chunk with pre-images
that all have a covered item ``z`` refutes cover-freedom against this
adversary: in the original chunk every sub-record with ``z`` held the whole
itemset ``I``, so knowing ``z`` and an item ``y`` of another chunk of the
cluster (at most ``m`` items) links ``I \\ {z}`` with certainty (lemma 1 of the
safe-disassociation paper, undone). A chunk that admits pre-images was not
necessarily repaired (an untouched chunk can look like a repaired one); the
finding says "if it was repaired", and with ``--trail`` whether it was. One
summary finding counts the chunks with pre-images, with exactly one, and with
an item covered in all of them, and measures the *repair distinguisher*
(:func:`distinguisher`): how well "this chunk admits a pre-image" tells the
repaired chunks from the others, overall and per shape
(:data:`.preimage.Shape`), which decoys are meant to bound.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from privtool.claims import claimed
from privtool.components import Attack, Evidence
from privtool.context import Context
from privtool.dataset import label_sort_key
from privtool.release import Release
from privtool.results import Finding

from .cover import SHARED, ChunkRef
from .cover_linkage import ChunkView, ClusterView, each_chunk, shared_cluster_views
from .preimage import HARDENED, RULES, Inversion, Rules, Shape, encode, invert, shape_of

NAME = "preimage"
ADVERSARY = (
    "algorithm-aware: the adversary knows the release and the published sanitizer, and considers only the chunks "
    "that sanitizer could have turned into each published chunk"
)


def release_rules(release: Release) -> str | None:
    """The safe-disassociation rules the release was made with: the last such
    sanitizer of ``params.sanitizers`` (None when there is none)."""
    chosen = [name for name in release.params.get("sanitizers") or [] if name in RULES]
    return chosen[-1] if chosen else None


def chunk_rules(release: Release, name: str, chunk: ChunkView) -> Rules:
    """What the adversary knows of the rules for one chunk: precondition (3)
    reads ``delta - 2`` for record chunks and ``N - 2`` for shared chunks."""
    params = release.params
    delta = int(params.get("max_cluster_size", 30))
    capacity = chunk.records - 2 if chunk.ref.kind == SHARED else delta - 2
    wanted = int(params.get("min_preimages") or 0) if name == HARDENED else 0
    return Rules(name, int(params.get("k", 2)), int(params.get("m", 2)), capacity, chunk.records, wanted)


def sanitized_chunks(evidence: Evidence) -> set[ChunkRef] | None:
    """The chunks the trail says were repaired (they hold ghost sub-records and
    are not decoys); None without a trail."""
    if evidence.trail is None:
        return None
    ghosts = {ChunkRef(g["cluster"], g.get("kind", "record"), int(g["chunk"])) for g in evidence.trail.ghost_records}
    return ghosts - decoy_chunks(evidence)


def decoy_chunks(evidence: Evidence) -> set[ChunkRef]:
    """The chunks the hardened sanitizer's trail notes list as decoys (the
    repair applied to an untouched chunk), as published."""
    if evidence.trail is None:
        return set()
    runs = evidence.trail.notes.get(HARDENED, [])
    return {ChunkRef(d["cluster"], d["kind"], int(d["chunk"])) for run in runs for d in run.get("decoys", [])}


@dataclass
class ChunkResult:
    """One chunk's inversion, with a partner item from another chunk."""

    view: ClusterView
    chunk: ChunkView
    inversion: Inversion
    partner: str | None


def release_chunks(release: Release) -> Iterator[tuple[ClusterView, ChunkView]]:
    """Every record and shared chunk once (a shared chunk seen from its first
    member cluster), with the cluster it is seen from."""
    return each_chunk(shared_cluster_views(release))


def invert_release(release: Release, name: str, cap: int) -> list[ChunkResult]:
    """The inversion of every chunk that has pre-images under ``name``'s rules."""
    out = []
    for view, chunk in release_chunks(release):
        inversion = invert(chunk.rows, chunk_rules(release, name, chunk), cap)
        if inversion.count:
            out.append(ChunkResult(view, chunk, inversion, _partner(view, chunk)))
    return out


def _partner(view: ClusterView, chunk: ChunkView) -> str | None:
    """The first item (in label order) of the cluster outside ``chunk`` (another
    chunk, or the term chunk): the least of each other chunk's least item."""
    firsts = [other.cover.itemset[0] for other in view.chunks if other is not chunk and other.cover.itemset]
    return min([*firsts, *view.terms], key=label_sort_key, default=None)


def chunk_finding(result: ChunkResult, rules: str, sanitized: set[ChunkRef] | None) -> Finding | None:
    """The finding of one chunk whose pre-images all have a covered item."""
    inv = result.inversion
    if not inv.covered_in_all:
        return None
    z = inv.covered_in_all[0]
    ref = result.chunk.ref
    count = f"{inv.count}{'' if inv.exhausted else '+'}"
    evidence: dict[str, Any] = {
        "cluster": result.view.cluster,
        "chunk": str(ref),
        "rules": rules,
        "adversary": ADVERSARY,
        "itemset": list(inv.items),
        "preimages": count,
        "covered_in_every_preimage": list(inv.covered_in_all),
        "known": [z, result.partner] if result.partner is not None else [z],
        "linked_if_repaired": [x for x in inv.items if x != z],
    }
    if inv.count == 1 and inv.exhausted:
        evidence["only_preimage"] = inv.example
    if sanitized is not None:
        evidence["repaired_per_trail"] = ref in sanitized
    title = (
        f"{ref}: {'its only pre-image' if inv.count == 1 and inv.exhausted else f'all {count} pre-images'} under the "
        f"{rules} rules cover {', '.join(inv.covered_in_all)}; if the chunk was repaired, knowing "
        f"{{{', '.join(evidence['known'])}}} links {', '.join(evidence['linked_if_repaired'])}"
    )
    return Finding(
        NAME,
        "breach",
        title,
        evidence,
        refutes="cover-freedom",
    )


def shape_label(shape: Shape) -> str:
    kind, width, tied = shape
    return f"{kind} chunk, {width} items, {tied} at the smallest support"


def distinguisher(
    results: list[ChunkResult], chunks: int, sanitized: set[ChunkRef] | None, decoys: set[ChunkRef]
) -> dict[str, Any]:
    """The repair distinguisher "this chunk admits a pre-image": what an
    adversary sees (published chunks with pre-images, by shape) and, with the
    trail, how well it works: the share of repaired and of other chunks
    (untouched ones and decoys) it flags, their difference (the advantage),
    the share of flagged chunks that were repaired (the posterior of
    "repaired" for a flagged chunk, every flagged chunk alike), and that
    posterior per shape with its largest value (what decoys bound)."""
    shapes: dict[Shape, list[ChunkRef]] = {}
    for r in results:
        shapes.setdefault(shape_of(encode(r.chunk.rows), r.chunk.ref.kind), []).append(r.chunk.ref)
    out: dict[str, Any] = {"shapes": {shape_label(s): len(refs) for s, refs in sorted(shapes.items())}}
    if sanitized is None:
        return out
    flagged = {r.chunk.ref for r in results}
    repaired, others = len(sanitized), chunks - len(sanitized)
    hits = len(flagged & sanitized)
    per_shape = {
        shape_label(s): {"chunks": len(refs), "repaired": len(set(refs) & sanitized)}
        for s, refs in sorted(shapes.items())
    }
    posteriors = [v["repaired"] / v["chunks"] for v in per_shape.values()]
    out.update(
        {
            "repaired": repaired,
            "decoys": len(decoys),
            "repaired_flagged": round(hits / repaired, 4) if repaired else 0.0,
            "others_flagged": round((len(flagged) - hits) / others, 4) if others else 0.0,
            "posterior_repaired_if_flagged": round(hits / len(flagged), 4) if flagged else 0.0,
            "by_shape": per_shape,
            "largest_posterior_by_shape": round(max(posteriors, default=0.0), 4),
        }
    )
    out["advantage"] = round(out["repaired_flagged"] - out["others_flagged"], 4)
    return out


def summary_finding(
    results: list[ChunkResult],
    rules: str,
    chunks: int,
    sanitized: set[ChunkRef] | None,
    decoys: set[ChunkRef],
) -> Finding:
    """Counts over the release (the figures of docs/results)."""
    unique = sum(r.inversion.count == 1 and r.inversion.exhausted for r in results)
    covered = sum(bool(r.inversion.covered_in_all) for r in results)
    evidence: dict[str, Any] = {
        "rules": rules,
        "adversary": ADVERSARY,
        "chunks": chunks,
        "chunks_with_preimages": len(results),
        "chunks_with_one_preimage": unique,
        "chunks_covered_in_every_preimage": covered,
        "fewest_preimages": min((r.inversion.count for r in results), default=0),
    }
    if sanitized is not None:
        found = {r.chunk.ref for r in results}
        evidence["repaired_per_trail"] = len(sanitized)
        evidence["repaired_with_preimages"] = len(found & sanitized)
        evidence["untouched_with_preimages"] = len(found - sanitized)
    evidence["distinguisher"] = distinguisher(results, chunks, sanitized, decoys)
    return Finding(
        NAME,
        "info",
        f"{len(results)} of {chunks} chunks have pre-images under the {rules} rules; {unique} have exactly one, "
        f"{covered} have an item covered in all of them",
        evidence,
    )


class PreimageAttack(Attack):
    """See the module docstring."""

    name = NAME
    summary = "inverts the published safe-disassociation rules: covered items every pre-image of a chunk shares"
    applies_to = ("disassociated",)
    criteria = ("inference",)
    refutes = ("cover-freedom",)
    adversary = "algorithm-aware"
    adversary_statement = (
        "The adversary knows the release and the published sanitizer, and considers only the chunks that sanitizer "
        "could have turned into each published chunk."
    )

    def exposure(self, findings: Sequence[Finding]) -> str | None:
        summary = next((f.evidence for f in findings if f.severity == "info" and "chunks" in f.evidence), None)
        if summary is None:
            return None
        return (
            f"{summary['chunks_covered_in_every_preimage']:,} of {summary['chunks']:,} chunks have pre-images that all "
            f"cover an item under the published rules ({summary['chunks_with_one_preimage']:,} have exactly one)"
        )

    def run(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Finding]:
        rules = release_rules(release)
        if rules is None:
            return []
        k = max((int(c.params["k"]) for c in claimed(release.claims, "km-anonymity")), default=2)
        wanted = int(release.params.get("min_preimages") or k)
        results = invert_release(release, rules, max(2, wanted))
        sanitized = sanitized_chunks(evidence)
        chunks = sum(len(c.record_chunks) for c in release.clusters)
        chunks += sum(len(j.shared_chunks) for j in release.joint_clusters)
        findings = [f for r in results if (f := chunk_finding(r, rules, sanitized)) is not None]
        return [summary_finding(results, rules, chunks, sanitized, decoy_chunks(evidence)), *findings]
