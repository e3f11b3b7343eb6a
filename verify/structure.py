"""Structural validity of a release: what the assessment engine checks first
(docs/design.md, "Claims and the assessment engine", step 1).

:func:`check_structure` runs every check of :data:`CHECKS` and returns every
problem found, each naming the exact JSON path; when there is any, the engine
runs nothing else and the verdict is FAIL. Reading a release
(:func:`privtool.release.release_from_json`) already refuses what is not a
release at all (wrong types, unknown fields: exit 2); the checks here are about
a well-typed release that contradicts itself or what it claims.

Each check is a small function ``check(subject) -> Iterable[StructureProblem]``
over a :class:`Subject` (the release, the original when given, the registered
claim models); add one by writing the function and listing it in
:data:`CHECKS`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from privtool.arrays import sort_int, unique_int
from privtool.claims import Claim
from privtool.components import ClaimModel
from privtool.contracts import stats_problem
from privtool.dataset import Dataset
from privtool.publishable import accounting_is_public, content_stats
from privtool.release import Release
from privtool.release_arrays import ReleaseArrays
from privtool.trail import rule_problem

from .joint_tree import OverlappingJointClusters, joint_parents


@dataclass(frozen=True)
class StructureProblem:
    """One structural problem: the JSON ``path`` it is at and what is wrong."""

    path: str
    problem: str

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "problem": self.problem}


class Unreachable(StructureProblem):
    """A claim the release cannot meet whatever the method did (too few
    records for its k): when a method made it, the data is at fault (exit 2)."""


@dataclass(frozen=True)
class Subject:
    """What the checks read: the release, the original (or None) and the
    registered claim models by name."""

    release: Release
    original: Dataset | None
    models: Mapping[str, ClaimModel]

    @cached_property
    def joint_parents(self) -> dict[str, str]:
        """:func:`~.reconstruction_bounds.joint_parents` of the release, worked
        out once for all the checks that read it (raises
        :class:`~.reconstruction_bounds.OverlappingJointClusters` each time
        when the joint clusters do not nest). Read-only."""
        return joint_parents(self.release)


def claim_problems(claim: Claim, kind: str | None, models: Mapping[str, ClaimModel]) -> list[tuple[str, str]]:
    """``(key, problem)`` for every way ``claim`` is not a valid claim of a
    release of ``kind`` (None: any kind): an unknown model, invalid parameters,
    an adversary the model cannot be claimed against, a kind that cannot carry
    the model. Key ``model``, ``adversary`` or a parameter name."""
    model = models.get(claim.model)
    if model is None:
        return [("model", f"unknown privacy model {claim.model!r} (known: {', '.join(sorted(models)) or 'none'})")]
    problems = model.problems(claim)
    if kind is not None and kind not in model.carried_by:
        problems.append(
            (
                "model",
                f"a {kind} release cannot carry {claim.model} (carried by {', '.join(model.carried_by)} releases)",
            )
        )
    return problems


def claims_well_formed(subject: Subject) -> Iterator[StructureProblem]:
    """Every claim names a registered model, with valid parameters, that the
    release's kind can carry. For a version 1 file the claims were derived from
    ``params``, so the problem is placed there."""
    release = subject.release
    for i, claim in enumerate(release.claims):
        for key, problem in claim_problems(claim, release.kind, subject.models):
            if release.claims_derived:
                path = "$.kind" if key == "model" else f"$.params.{key}"
                yield StructureProblem(path, f"{problem} (the {claim.model} claim of a privtool-release/1 file)")
            else:
                yield StructureProblem(f"$.claims[{i}]" if key == "model" else f"$.claims[{i}].{key}", problem)


def version_1_rules_well_formed(subject: Subject) -> Iterator[StructureProblem]:
    """A version 1 rule-hiding release published its sensitive rules in
    ``params.sensitive_rules``: each must be ``[[antecedent], [consequent]]``."""
    raw = subject.release.params.get("sensitive_rules") if subject.release.claims_derived else None
    if raw is None:
        return
    if not isinstance(raw, list):
        yield StructureProblem("$.params.sensitive_rules", "expected a list of rules")
        return
    for i, rule in enumerate(raw):
        problem = rule_problem(rule)
        if problem is not None:
            yield StructureProblem(f"$.params.sensitive_rules[{i}]", problem)


SHARED_BY_K = ("km-anonymity", "k-anonymity")
"""The models whose ``k`` means "what an adversary knows is shared by at least
k records" (:func:`claims_within_reach`)."""


def claims_within_reach(subject: Subject) -> Iterator[StructureProblem]:
    """A claim of a model of :data:`SHARED_BY_K` cannot hold on a release that publishes
    an item in fewer than k records: that item is in fewer than k records of
    every reconstruction (and every published record with an item is in a
    group of fewer than k). The issue's example: anonymizing fewer records
    than k."""
    release = subject.release
    arrays = release.backing_arrays
    if release.kind == "disassociated" and arrays is not None:
        n = arrays.n_clusters
        publishing = (np.diff(arrays.owner_offsets[: n + 1]) > 0) | (np.diff(arrays.term_offsets) > 0)
        holding = int(arrays.cluster_sizes[publishing].sum())
    elif release.kind == "disassociated":
        holding = sum(c.size for c in release.clusters if c.record_chunks or c.term_chunk)
    elif arrays is not None:
        holding = int(np.count_nonzero(arrays.row_lengths))
    else:
        holding = sum(1 for row in release.records if row)
    for i, claim in enumerate(release.claims):
        k = claim.params.get("k") if claim.model in SHARED_BY_K else None
        if isinstance(k, int) and not isinstance(k, bool) and 0 < holding < k:
            path = "$.params.k" if release.claims_derived else f"$.claims[{i}].k"
            yield Unreachable(
                path, f"{claim.label} cannot hold: only {holding} published record(s) hold an item, fewer than k={k}"
            )


def joint_clusters_nest(subject: Subject) -> Iterator[StructureProblem]:
    """The joint clusters form a tree: the sets of clusters under two of them
    are disjoint or one holds the other (REFINE's laminar family,
    Terrovitis et al. 2012 Section 4.3), and none lists itself under itself."""
    release = subject.release
    try:
        _ = subject.joint_parents  # raises when the joint clusters cross
    except OverlappingJointClusters as exc:
        node = str(exc.args[0])
        joint = next((i for i, jid in enumerate(_joint_ids(release)) if jid == node), None)
        if joint is not None:
            yield StructureProblem(
                f"$.joint_clusters[{joint}]",
                f"joint cluster {node!r} shares clusters with another joint cluster without either holding the "
                "other's (joint clusters must nest)",
            )
        else:
            where = f"$.clusters[{_cluster_ids(release).index(node)}]"
            yield StructureProblem(where, f"cluster {node!r} is under two joint clusters that do not nest")


def _chunk_path(release: Release, home: tuple[str, int, int]) -> str:
    """The JSON path of a chunk: ``("record", cluster position, chunk)``,
    ``("term", cluster position, 0)`` or ``("shared", joint position, chunk)``."""
    place, owner, index = home
    if place == "record":
        return f"$.clusters[{owner}].record_chunks[{index}]"
    if place == "term":
        return f"$.clusters[{owner}].term_chunk"
    return f"$.joint_clusters[{owner}].shared_chunks[{index}]"


def _ancestors(parent: Mapping[str, str], node: str) -> Iterator[str]:
    """The joint clusters above ``node``, nearest first."""
    while node in parent:
        node = parent[node]
        yield node


def chunk_domains_disjoint(subject: Subject) -> Iterator[StructureProblem]:
    """Every item a cluster sees is in one chunk only: its record chunks, its
    term chunk and the shared chunks of every joint cluster above it have
    pairwise disjoint domains (Terrovitis et al. 2012, Section 3: the vertical
    partitioning splits a cluster's terms into disjoint domains). An item in
    two of them would make a record's sub-records ambiguous and its supports
    double-counted. At most one problem per cluster and per joint cluster; each
    item is looked up once per joint cluster above its chunk."""
    release = subject.release
    if release.kind != "disassociated":
        return
    try:
        parent = subject.joint_parents
    except OverlappingJointClusters:
        return  # reported by joint_clusters_nest
    arrays = release.backing_arrays
    if arrays is not None and domains_disjoint(arrays, parent):
        return
    shared: dict[str, dict[str, Home]] = {}  # joint id -> item -> its shared chunk
    within: dict[str, StructureProblem | None] = {}
    for n, j in enumerate(release.joint_clusters):
        domains = [(("shared", n, i), {x for row in chunk for x in row}) for i, chunk in enumerate(j.shared_chunks)]
        shared[j.id], within[j.id] = _homes(release, domains)
    for j in release.joint_clusters:
        problem = within[j.id] or _met_above(
            release, shared[j.id], (shared[a] for a in _ancestors(parent, j.id)), f"joint cluster {j.id!r}"
        )
        if problem is not None:
            yield problem
    for p, c in enumerate(release.clusters):
        domains = [(("record", p, i), {x for row in chunk for x in row}) for i, chunk in enumerate(c.record_chunks)]
        homes, problem = _homes(release, [*domains, (("term", p, 0), set(c.term_chunk))])
        if problem is None:
            problem = _met_above(release, homes, (shared[a] for a in _ancestors(parent, c.id)), f"cluster {c.id!r}")
        if problem is not None:
            yield problem


def _cluster_ids(release: Release) -> list[str]:
    arrays = release.backing_arrays
    return list(arrays.cluster_ids) if arrays is not None else [c.id for c in release.clusters]


def _joint_ids(release: Release) -> list[str]:
    arrays = release.backing_arrays
    return list(arrays.joint_ids) if arrays is not None else [j.id for j in release.joint_clusters]


def domains_disjoint(arrays: ReleaseArrays, parent: Mapping[str, str]) -> bool:
    """Whether :func:`chunk_domains_disjoint` finds nothing, decided on the
    arrays: the distinct (chunk, item) pairs of every chunk (a term chunk is a
    chunk of its cluster), no item twice among one owner's chunks, and no item
    held by an owner and by a joint cluster above it.

    The last is decided in preorder of the tree of ``parent`` (every subtree
    one interval of positions): the owners holding an item, in preorder, hold
    none above another exactly when none is inside the subtree of the one
    before it (the first descendant of an owner holding the item follows it)."""
    n_clusters, n_chunks = arrays.n_clusters, arrays.n_chunks
    n_nodes = n_clusters + arrays.n_joint_clusters
    span = len(arrays.labels) + 1
    item_chunk = np.repeat(np.repeat(np.arange(n_chunks, dtype=np.int64), arrays.chunk_rows), arrays.row_lengths)
    term_chunk = n_chunks + np.repeat(np.arange(n_clusters, dtype=np.int64), np.diff(arrays.term_offsets))
    pairs = unique_int(np.r_[item_chunk, term_chunk] * span + np.r_[arrays.items, arrays.term_items], runs=True)
    chunk, item = np.divmod(pairs, span)
    owner = np.where(chunk < n_chunks, 0, chunk - n_chunks)  # a term chunk's cluster
    inside = chunk < n_chunks
    owner[inside] = arrays.chunk_owner[chunk[inside]] + np.where(arrays.chunk_is_shared[chunk[inside]], n_clusters, 0)
    held = sort_int(owner * span + item)
    if len(held) and np.any(held[1:] == held[:-1]):
        return False  # an item in two chunks of one owner
    first, size = preorder(parent_array(arrays, parent))
    owner, item = np.divmod(held, span)
    by_item = sort_int(item * max(n_nodes, 1) + first[owner])
    same = by_item[1:] // max(n_nodes, 1) == by_item[:-1] // max(n_nodes, 1)
    position = by_item % max(n_nodes, 1)
    ends = position + size[np.argsort(first)][position]  # the end of each owner's subtree
    return not np.any(same & (position[1:] < ends[:-1]))


def parent_array(arrays: ReleaseArrays, parent: Mapping[str, str]) -> np.ndarray:
    """``parent`` (:attr:`Subject.joint_parents`) over node numbers: cluster
    ``i`` is node ``i``, joint cluster ``j`` node ``n_clusters + j``; -1 at a root."""
    node = {cid: i for i, cid in enumerate(arrays.cluster_ids)}
    node.update({jid: arrays.n_clusters + j for j, jid in enumerate(arrays.joint_ids)})
    up = np.full(arrays.n_clusters + arrays.n_joint_clusters, -1, dtype=np.int64)
    up[np.fromiter(map(node.__getitem__, parent), dtype=np.int64, count=len(parent))] = np.fromiter(
        map(node.__getitem__, parent.values()), dtype=np.int64, count=len(parent)
    )
    return up


def preorder(up: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For a forest given as each node's parent (``up``, -1 at a root; no
    cycles), each node's position in a preorder and the size of its subtree
    (itself included), so that the subtree of ``v`` takes the positions
    ``first[v]`` to ``first[v] + size[v] - 1``. Nodes are ordered by their
    chains of ancestors from the root (a chain sorts before its extensions)."""
    n = len(up)
    chain_node: list[np.ndarray] = [np.arange(n, dtype=np.int64)]
    above = up.copy()
    size = np.ones(n, dtype=np.int64)
    nodes = np.arange(n, dtype=np.int64)
    for _ in range(n + 1):
        alive = above >= 0
        nodes, above = nodes[alive], above[alive]
        if not len(nodes):
            break
        np.add.at(size, above, 1)
        chain_node.append(np.full(n, -1, dtype=np.int64))
        chain_node[-1][nodes] = above
        above = up[above]
    else:
        raise ValueError("the parents form a cycle")
    # chain_node[d][v]: v's ancestor d levels up (-1 above the root); root first, then down to v
    depth = np.zeros(n, dtype=np.int64)
    for level in chain_node[1:]:
        depth += level >= 0
    width = len(chain_node)
    table = np.full((n, width), -1, dtype=np.int64)
    for d, level in enumerate(chain_node):
        column = depth - d  # the ancestor d levels up sits at column depth - d
        has = (level >= 0) if d else np.ones(n, dtype=bool)
        table[np.flatnonzero(has), column[has]] = level[has]
    order = np.lexsort(table.T[::-1]) if n else np.zeros(0, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    first[order] = np.arange(n, dtype=np.int64)
    return first, size


Home = tuple[str, int, int]
"""A chunk: ``("record", cluster position, index)``, ``("term", cluster position, 0)``
or ``("shared", joint cluster position, index)`` (:func:`_chunk_path`)."""


def _homes(release: Release, domains: list[tuple[Home, set[str]]]) -> tuple[dict[str, Home], StructureProblem | None]:
    """Item -> its chunk among ``domains`` (the chunks of one owner), and the
    first item found in two of them."""
    homes: dict[str, Home] = {}
    for here, domain in domains:
        for item in domain:
            earlier = homes.setdefault(item, here)
            if earlier != here:
                where = _chunk_path(release, earlier)
                return homes, StructureProblem(_chunk_path(release, here), f"item {item!r} is also in {where}")
    return homes, None


def _met_above(
    release: Release, homes: Mapping[str, Home], above: Iterable[Mapping[str, Home]], owner: str
) -> StructureProblem | None:
    """The first item of ``homes`` (the chunks of ``owner``) that a shared
    chunk of a joint cluster above it also holds."""
    for shared in above:
        small, large = (homes, shared) if len(homes) <= len(shared) else (shared, homes)
        item = next((x for x in small if x in large), None)
        if item is not None:
            return StructureProblem(
                _chunk_path(release, homes[item]),
                f"item {item!r} is also in {_chunk_path(release, shared[item])}, a shared chunk above {owner}",
            )
    return None


def sub_records_within_sizes(subject: Subject) -> Iterator[StructureProblem]:
    """A chunk has at most one sub-record per record it covers: a record chunk
    at most its cluster's size (refused already when the release is read), a
    shared chunk at most the records of every cluster under its joint cluster."""
    release = subject.release
    if release.kind != "disassociated" or not _joint_ids(release):
        return
    try:
        parent = subject.joint_parents
    except OverlappingJointClusters:
        return
    arrays = release.backing_arrays
    if arrays is not None:
        yield from _shared_rows_within_sizes(arrays, parent)
        return
    records: dict[str, int] = defaultdict(int)
    for c in release.clusters:
        node = c.id
        while node in parent:
            node = parent[node]
            records[node] += c.size
    for n, j in enumerate(release.joint_clusters):
        for i, chunk in enumerate(j.shared_chunks):
            if len(chunk) > records[j.id]:
                yield _too_many_rows(n, i, len(chunk), records[j.id], j.id)


def _too_many_rows(joint: int, chunk: int, rows: int, records: int, jid: str) -> StructureProblem:
    return StructureProblem(
        f"$.joint_clusters[{joint}].shared_chunks[{chunk}]",
        f"{rows} sub-records for the {records} records of the clusters under {jid!r}",
    )


def _shared_rows_within_sizes(arrays: ReleaseArrays, parent: Mapping[str, str]) -> Iterator[StructureProblem]:
    """:func:`sub_records_within_sizes` on the arrays: every cluster's size
    added to each joint cluster above it a level at a time."""
    n = arrays.n_clusters
    up = parent_array(arrays, parent)
    records = np.zeros(len(up), dtype=np.int64)
    above, weight = up[:n], arrays.cluster_sizes.astype(np.int64)
    while len(above):
        alive = above >= 0
        above, weight = above[alive], weight[alive]
        records += np.bincount(above, weight, minlength=len(up)).astype(np.int64)
        above = up[above]
    first = int(arrays.owner_offsets[n])
    owner = np.repeat(np.arange(arrays.n_joint_clusters, dtype=np.int64), np.diff(arrays.owner_offsets[n:]))
    rows = np.diff(arrays.chunk_offsets[first:])
    for chunk in np.flatnonzero(rows > records[n + owner]).tolist():
        j = int(owner[chunk])
        index = first + chunk - int(arrays.owner_offsets[n + j])
        yield _too_many_rows(j, index, int(rows[chunk]), int(records[n + j]), arrays.joint_ids[j])


def stats_match_content(subject: Subject) -> Iterator[StructureProblem]:
    """Every count the release states that its content lets anyone recount
    (:func:`privtool.publishable.content_stats`) equals the recount, and the
    record accounting adds up (:func:`privtool.contracts.stats_problem`, the
    contract every method's release meets: published plus suppressed records
    are the records in)."""
    release = subject.release
    for key, value in content_stats(release).items():
        if key != "records_published" and key in release.stats and release.stats[key] != value:
            yield StructureProblem(f"$.stats.{key}", f"states {release.stats[key]!r}, the content has {value}")
    problem = stats_problem(release, None)
    if problem is not None:
        yield StructureProblem("$.stats", problem)


def _published_items(release: Release) -> Iterator[tuple[str, str]]:
    """``(JSON path of the array holding it, item)`` for every item occurrence of the content."""
    if release.kind == "disassociated":
        for p, c in enumerate(release.clusters):
            for i, chunk in enumerate(c.record_chunks):
                for r, row in enumerate(chunk):
                    for x in row:
                        yield f"$.clusters[{p}].record_chunks[{i}][{r}]", x
            for x in c.term_chunk:
                yield f"$.clusters[{p}].term_chunk", x
        for n, j in enumerate(release.joint_clusters):
            for i, chunk in enumerate(j.shared_chunks):
                for r, row in enumerate(chunk):
                    for x in row:
                        yield f"$.joint_clusters[{n}].shared_chunks[{i}][{r}]", x
    else:
        for r, row in enumerate(release.records):
            for x in row:
                yield f"$.records[{r}]", x


def items_from_the_original(subject: Subject) -> Iterator[StructureProblem]:
    """With the original: every published item occurs in it (a generalized
    release may also publish the nodes of its hierarchy). No method invents
    items: disassociation and its sanitizers only regroup or remove them,
    generalization replaces them by their ancestors."""
    original = subject.original
    if original is None:
        return
    present = np.flatnonzero(original.supports > 0) if original.n_records else np.empty(0, dtype=np.int64)
    known = {original.labels[i] for i in present.tolist()}
    if subject.release.hierarchy is not None:
        edges = subject.release.hierarchy.get("edges", [])
        known |= {str(subject.release.hierarchy.get("root"))} | {str(x) for edge in edges for x in edge}
    arrays = subject.release.backing_arrays
    if arrays is not None and known.issuperset(arrays.labels):
        return  # every label the arrays hold (the walk below only to name a problem)
    missing = [(path, x) for path, x in _published_items(subject.release) if x not in known]
    if missing:
        path, item = missing[0]
        distinct = len({x for _, x in missing})
        more = f" (and {distinct - 1} other item(s))" if distinct > 1 else ""
        yield StructureProblem(path, f"item {item!r} does not occur in the original{more}")


def records_match_the_original(subject: Subject) -> Iterator[StructureProblem]:
    """With the original: the stated ``records_in`` is its number of records,
    and no more records are published than it has (only a sanitizer that adds
    ghost records may publish more, and then the accounting is private)."""
    original, release = subject.original, subject.release
    if original is None:
        return
    n = original.n_records
    stated = release.stats.get("records_in")
    if stated is not None and stated != n:
        yield StructureProblem("$.stats.records_in", f"states {stated!r} records in, the original has {n}")
        return
    published = content_stats(release)["records_published"]
    if accounting_is_public(release) and published > n:
        where = "$.clusters" if release.kind == "disassociated" else "$.records"
        yield StructureProblem(where, f"{published} records published, the original has {n}")


CHECKS: tuple[Callable[[Subject], Iterable[StructureProblem]], ...] = (
    claims_well_formed,
    version_1_rules_well_formed,
    claims_within_reach,
    joint_clusters_nest,
    chunk_domains_disjoint,
    sub_records_within_sizes,
    stats_match_content,
    items_from_the_original,
    records_match_the_original,
)
"""The structural checks, in order."""


def check_structure(
    release: Release, original: Dataset | None = None, *, models: Mapping[str, ClaimModel] | None = None
) -> list[StructureProblem]:
    """Every structural problem of ``release`` (and of its relation to
    ``original`` when given); ``models`` are the claim models by name (default:
    those of every installed plugin)."""
    if models is None:
        from privtool.registry import load_registry

        models = {model.name: model for model in load_registry().all("claim_model")}
    subject = Subject(release, original, models)
    return [problem for check in CHECKS for problem in check(subject)]
