"""The ``minimality`` attack: reconstructions VERPART would map to the release
(after Wong, Fu, Wang, Pei, "Minimality attack in privacy preserving data
publishing", VLDB 2007).

Adversary model (algorithm-aware): the adversary knows the release and the
published vertical chunker (VERPART), and considers only the datasets VERPART
would map to this release's record chunks.

VERPART (:mod:`privtool.plugins.disassociation.verpart`) takes a cluster's
terms in a published order (support descending, ties by label) and adds each
to the chunk it is building when the chunk stays k^m-anonymous. A term ``t``
that ended in a chunk ``B`` built after chunk ``A`` was therefore *rejected*
from ``A``: when it was tried, some set ``X`` of at most ``m - 1`` terms of
``A`` that came before ``t`` had ``1 <= s(X + t) <= k - 1``. Supports inside a
chunk are published, supports across chunks are not, so each rejection is a
constraint on the reconstruction: some candidate ``X`` must co-occur with ``t``
in 1 to ``k - 1`` records. A candidate must co-occur in ``A`` (``s_A(X) >= 1``)
and must not be forced above ``k - 1`` (``s_A(X) + s(t) - n <= k - 1``, the
pigeonhole bound of :mod:`.forced_cooccurrence`).

* **Sound bound** (every cluster): when exactly one candidate ``X`` is left,
  every admissible reconstruction has ``1 <= s(X + t) <= k - 1``: knowing
  ``X + t`` (at most ``m`` items) narrows a person down to fewer than ``k``
  records, which k^m-anonymity over all reconstructions does not show.
* **Exact** (clusters with at most ``exact_limit`` reconstructions of their
  record chunks): every reconstruction is laid out, VERPART itself is run on
  it, and the largest support of every cross-chunk itemset of at most ``m``
  items over the admissible ones is computed; itemsets whose largest support
  is 1 to ``k - 1`` are pinned.

Each finding says which of the two it comes from. With ``--original`` and
``--trail`` the summary counts the records that hold a pinned itemset (the
records an adversary who knows the algorithm and at most ``m`` of their items
narrows down to fewer than ``k``).

Order of the terms: ``params.verpart_order`` ``support`` (the paper's, known to
everyone) or ``random`` (a shuffle drawn from the seed and the cluster's
cross-chunk pair supports, :func:`~privtool.plugins.disassociation.verpart.random_order`).
The bound takes a random order as unknown (any term of ``A`` may have come
before ``t``, and either of two chunks may have been built first); the exact
mode draws, for each reconstruction, the order VERPART would have used on it
when the release's provenance publishes the seed, and tries every order
otherwise (counted in the enumeration's size), so it stays exact.

Releases that went through a safe-disassociation sanitizer: the bound runs with
the published cluster sizes (ghost records only lower the pigeonhole bound, so
more candidates stay: still sound) and the published supports, with the
supports of items of chunks the hardened variant may have lowered taken as
unknown; the exact mode does not run on them.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privtool.claims import claimed
from privtool.components import Attack, Evidence
from privtool.context import Context
from privtool.dataset import label_sort_key
from privtool.params import Param
from privtool.plugins.disassociation.verpart import ClusterTerms, greedy_chunks, random_order
from privtool.release import Cluster, Release
from privtool.results import Finding

from .cover import RECORD, ChunkRef
from .cover_linkage import ChunkView
from .preimage import HARDENED, RULES, Rules, invert

NAME = "minimality"
ADVERSARY = (
    "algorithm-aware: the adversary knows the release and the published vertical chunker (VERPART), and considers "
    "only the datasets VERPART would map to this release's record chunks"
)
EXACT_LIMIT = Param(
    "exact_limit",
    int,
    2000,
    "Clusters with at most this many reconstructions of their record chunks are enumerated exactly (VERPART run "
    "on each); larger ones get the sound bound.",
    min=0,
)


@dataclass(frozen=True)
class Pin:
    """An itemset of at most ``m`` items held by ``low`` to ``high`` records
    (``high < k``) of ``cluster`` in every admissible reconstruction."""

    cluster: str
    itemset: tuple[str, ...]
    low: int
    high: int
    method: str  # "exact" or "bound"

    def to_json(self) -> dict[str, Any]:
        return {"itemset": list(self.itemset), "records": [self.low, self.high], "method": self.method}


@dataclass
class ClusterChunks:
    """The record chunks of one cluster as the attack reads them: per chunk its
    items (canonical order), their supports (lowest, highest possible: the
    hardened sanitizer may have lowered some) and per item the set of rows."""

    cluster: str
    size: int
    items: list[tuple[str, ...]]
    low: dict[str, int]
    high: dict[str, int]
    rows: list[list[list[str]]]
    bits: list[dict[str, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for rows in self.rows:
            bits: dict[str, int] = {}
            for r, row in enumerate(rows):
                for x in row:
                    bits[x] = bits.get(x, 0) | (1 << r)
            self.bits.append(bits)

    def support(self, chunk: int, itemset: Sequence[str]) -> int:
        """``s_A(X)`` inside record chunk ``chunk``."""
        bits = self.bits[chunk]
        common = -1
        for x in itemset:
            common &= bits.get(x, 0)
        return common.bit_count() if itemset else len(self.rows[chunk])


@dataclass(frozen=True)
class Order:
    """What the adversary knows of the order VERPART tried the terms in:
    ``known`` (support descending, ties by label) or not (``random``: a shuffle
    keyed by the cluster's cross-chunk pair supports, which only a
    reconstruction gives; :func:`exact_pins` recomputes it for each one)."""

    known: bool


def before(chunks: ClusterChunks, order: Order, x: str, t: str) -> tuple[bool, bool]:
    """(possibly, certainly): whether ``x`` can have been tried before ``t``, and
    whether it certainly was."""
    if not order.known:
        return True, False
    key_x, key_t = label_sort_key(x), label_sort_key(t)
    certainly = chunks.low[x] > chunks.high[t] or (
        chunks.low[x] == chunks.high[x] == chunks.low[t] == chunks.high[t] and key_x < key_t
    )
    possibly = chunks.high[x] > chunks.low[t] or (chunks.high[x] == chunks.low[t] and key_x < key_t)
    return possibly, certainly


def chunk_orders(chunks: ClusterChunks, order: Order, a: int, b: int) -> list[tuple[int, int]]:
    """The orders in which chunks ``a`` and ``b`` can have been built: the one
    whose first-tried term came first was built first."""
    orders = []
    for first, second in ((a, b), (b, a)):
        lead = chunks.items[second]
        # ``first`` was built first iff some term of it was tried before every term of ``second``
        if any(all(before(chunks, order, x, t)[0] for t in lead) for x in chunks.items[first]):
            orders.append((first, second))
    return orders


def candidates(
    chunks: ClusterChunks, order: Order, a: int, t: str, k: int, m: int, stop: int = 2
) -> list[tuple[str, ...]]:
    """The sets ``X`` of chunk ``a`` that can have made VERPART reject ``t``
    (see the module docstring), at most ``stop`` of them."""
    prefix = [x for x in chunks.items[a] if before(chunks, order, x, t)[0]]
    n = chunks.size
    out: list[tuple[str, ...]] = []
    for size in range(1, m):
        for itemset in itertools.combinations(prefix, size):
            s = chunks.support(a, itemset)
            if s >= 1 and s + chunks.low[t] - n <= k - 1:
                out.append(itemset)
                if len(out) >= stop:
                    return out
    return out


def bound_pins(chunks: ClusterChunks, order: Order, k: int, m: int) -> tuple[list[Pin], bool]:
    """Pins of the sound bound, and whether every rejection had a candidate (a
    release VERPART cannot have made has one without)."""
    pins: dict[tuple[str, ...], Pin] = {}
    consistent = True
    n = chunks.size
    for a, b in itertools.combinations(range(len(chunks.items)), 2):
        per_order: list[dict[tuple[str, ...], Pin]] = []
        for first, second in chunk_orders(chunks, order, a, b):
            found: dict[tuple[str, ...], Pin] = {}
            for t in chunks.items[second]:
                options = candidates(chunks, order, first, t, k, m)
                if not options:
                    consistent = False
                elif len(options) == 1:
                    itemset = tuple(sorted((*options[0], t), key=label_sort_key))
                    low = max(1, chunks.support(first, options[0]) + chunks.low[t] - n)
                    found[itemset] = Pin(chunks.cluster, itemset, low, k - 1, "bound")
            per_order.append(found)
        if per_order:
            common = set(per_order[0]).intersection(*per_order[1:])
            for itemset in common:
                pins[itemset] = Pin(
                    chunks.cluster,
                    itemset,
                    min(p[itemset].low for p in per_order),
                    k - 1,
                    "bound",
                )
    return sorted(pins.values(), key=lambda p: [label_sort_key(x) for x in p.itemset]), consistent


def reconstructions(chunks: ClusterChunks) -> int:
    """Distinct layouts of the record chunks over the cluster's records, the
    first chunk fixed (records are unlabelled)."""
    total = 1
    for rows in chunks.rows[1:]:
        counts = Counter(tuple(r) for r in rows)
        counts[()] = chunks.size - len(rows)
        total *= math.factorial(chunks.size) // math.prod(math.factorial(c) for c in counts.values())
    return total


def _layouts(rows: list[list[str]], size: int) -> Iterator[tuple[tuple[str, ...], ...]]:
    """The distinct orders of a chunk's sub-records padded with empty ones to
    ``size`` (multiset permutations, generated without repeats)."""
    counts = Counter(tuple(r) for r in rows)
    counts[()] += size - len(rows)
    kinds = sorted(counts)
    layout: list[tuple[str, ...]] = []

    def rec() -> Iterator[tuple[tuple[str, ...], ...]]:
        if len(layout) == size:
            yield tuple(layout)
            return
        for kind in kinds:
            if counts[kind]:
                counts[kind] -= 1
                layout.append(kind)
                yield from rec()
                layout.pop()
                counts[kind] += 1

    yield from rec()


def exact_pins(chunks: ClusterChunks, k: int, m: int, shuffled: bool, seed: int | None) -> list[Pin]:
    """Pins by enumeration: every layout of the chunks, VERPART run on each
    (in the paper's order, or with ``shuffled`` in the order
    :func:`~privtool.plugins.disassociation.verpart.random_order` draws for
    that very layout from ``seed``, or in every order when the seed is not
    published), and the largest support of each cross-chunk itemset over the
    layouts VERPART maps to the release."""
    n = chunks.size
    labels = sorted({x for items in chunks.items for x in items}, key=label_sort_key)
    ids = {x: i for i, x in enumerate(labels)}
    domains = {tuple(sorted(ids[x] for x in items)) for items in chunks.items}
    first = tuple(tuple(r) for r in chunks.rows[0]) + ((),) * (n - len(chunks.rows[0]))
    best: dict[tuple[str, ...], int] = {}
    cross = [
        itemset
        for size in range(2, m + 1)
        for itemset in itertools.combinations(labels, size)
        if len({next(i for i, items in enumerate(chunks.items) if x in items) for x in itemset}) > 1
    ]
    for rest in itertools.product(*(list(_layouts(rows, n)) for rows in chunks.rows[1:])):
        bits = {x: 0 for x in labels}
        for layout in (first, *rest):
            for r, row in enumerate(layout):
                for x in row:
                    bits[x] |= 1 << r
        supports = np.array([bits[x].bit_count() for x in labels])
        terms = ClusterTerms(
            ids=np.arange(len(labels)), bits=[bits[x] for x in labels], supports=supports, rare=np.zeros(0, int)
        )
        if not shuffled:
            orders: list[list[int] | None] = [None]
        elif seed is not None:
            orders = [random_order(seed, terms).tolist()]
        else:
            orders = [list(p) for p in itertools.permutations(range(len(labels)))]
        if not any(set(greedy_chunks(terms, k, m, order)) == domains for order in orders):
            continue
        for itemset in cross:
            common = -1
            for x in itemset:
                common &= bits[x]
            best[itemset] = max(best.get(itemset, 0), common.bit_count())
    return [Pin(chunks.cluster, itemset, 1, s, "exact") for itemset, s in sorted(best.items()) if 1 <= s <= k - 1]


def cluster_chunks(cluster: Cluster, lowered: set[int]) -> ClusterChunks:
    """The record chunks of ``cluster``; chunks in ``lowered`` may have had
    supports lowered (their items' original supports are unknown above)."""
    items, low, high = [], {}, {}
    for index, rows in enumerate(cluster.record_chunks):
        supports = Counter(x for row in rows for x in row)
        items.append(tuple(sorted(supports, key=label_sort_key)))
        for x, s in supports.items():
            low[x] = s
            high[x] = cluster.size if index in lowered else s
    return ClusterChunks(
        cluster.id, cluster.size, items, low, high, [list(map(list, r)) for r in cluster.record_chunks]
    )


def lowered_chunks(release: Release, cluster: Cluster) -> set[int]:
    """Chunks whose supports the hardened sanitizer may have lowered: those
    with pre-images under its rules."""
    rules = [name for name in release.params.get("sanitizers") or [] if name in RULES]
    if HARDENED not in rules:
        return set()
    params = release.params
    out = set()
    for index, rows in enumerate(cluster.record_chunks):
        chunk = ChunkView(ChunkRef(cluster.id, RECORD, index), rows, cluster.size)
        r = Rules(
            HARDENED,
            int(params["k"]),
            int(params["m"]),
            int(params.get("max_cluster_size", 30)) - 2,
            chunk.records,
            int(params.get("min_preimages") or 0),
        )
        if invert(rows, r, 1).count:
            out.add(index)
    return out


def release_order(release: Release) -> Order:
    """What the adversary knows of the order VERPART tried the terms in."""
    return Order(release.params.get("verpart_order", "support") != "random")


@dataclass
class ClusterResult:
    cluster: str
    pins: list[Pin]
    method: str
    consistent: bool


def attack_cluster(release: Release, cluster: Cluster, k: int, m: int, exact_limit: int) -> ClusterResult:
    """The pins of one cluster (exact when small enough, the bound otherwise)."""
    chunks = cluster_chunks(cluster, lowered_chunks(release, cluster))
    order = release_order(release)
    if len(chunks.items) < 2 or m < 2:
        return ClusterResult(cluster.id, [], "bound", True)
    seed = release.provenance.get("seed")
    layouts = reconstructions(chunks)
    if not order.known and seed is None:  # every try order of the terms, for each layout
        layouts *= math.factorial(sum(len(items) for items in chunks.items))
    if not release.params.get("sanitizers") and layouts <= exact_limit:
        known_seed = None if seed is None else int(seed)
        return ClusterResult(cluster.id, exact_pins(chunks, k, m, not order.known, known_seed), "exact", True)
    pins, consistent = bound_pins(chunks, order, k, m)
    return ClusterResult(cluster.id, pins, "bound", consistent)


def records_pinned(results: list[ClusterResult], evidence: Evidence) -> int | None:
    """Records of the original holding a pinned itemset of their cluster (None
    without the original and the trail)."""
    if evidence.original is None or evidence.trail is None:
        return None
    data = evidence.original
    coded = evidence.trail.cluster_of_record
    order = np.argsort(coded.codes, kind="stable")
    cuts = np.searchsorted(coded.codes[order], np.arange(len(coded.names) + 1)).tolist()
    by_cluster = {name: order[cuts[n] : cuts[n + 1]].tolist() for n, name in enumerate(coded.names)}
    pinned = set()
    for result in results:
        for pin in result.pins:
            wanted = set(pin.itemset)
            for record in by_cluster.get(result.cluster, []):
                if wanted <= {data.labels[int(i)] for i in data.record(record)}:
                    pinned.add(record)
    return len(pinned)


class Minimality(Attack):
    """See the module docstring."""

    name = NAME
    summary = "itemsets that every dataset VERPART would map to the release holds in fewer than k records"
    applies_to = ("disassociated",)
    criteria = ("singling-out", "linkability")
    refutes = ("km-anonymity",)
    adversary = "algorithm-aware"
    adversary_statement = (
        "The adversary knows the release, the published vertical chunker (VERPART) and up to m items of a person, "
        "and considers only the datasets VERPART would map to this release."
    )
    params = (EXACT_LIMIT,)

    def exposure(self, findings: Sequence[Finding]) -> str | None:
        summary = next((f.evidence for f in findings if f.severity == "info" and "pinned_itemsets" in f.evidence), None)
        if summary is None:
            return None
        records = f", held by {summary['records_pinned']:,} records" if "records_pinned" in summary else ""
        return (
            f"{summary['pinned_itemsets']:,} itemsets pinned below k in {summary['clusters_with_pins']:,} clusters"
            f"{records}"
        )

    def run(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Finding]:
        km = claimed(release.claims, "km-anonymity")  # validated by the structural checks
        k = max((int(c.params["k"]) for c in km), default=2)
        m = min((int(c.params["m"]) for c in km), default=2)
        results = [attack_cluster(release, cluster, k, m, params["exact_limit"]) for cluster in release.clusters]
        pins = [p for r in results for p in r.pins]
        pinned_records = records_pinned(results, evidence)
        summary: dict[str, Any] = {
            "adversary": ADVERSARY,
            "pinned_itemsets": len(pins),
            "clusters_with_pins": sum(bool(r.pins) for r in results),
            "clusters_exact": sum(r.method == "exact" for r in results),
            "clusters_bound": sum(r.method == "bound" for r in results),
            "verpart_order": release.params.get("verpart_order", "support"),
        }
        if pinned_records is not None:
            summary["records_pinned"] = pinned_records
        findings = [
            Finding(
                NAME,
                "info",
                f"{len(pins)} itemsets of at most m={m} items are held by fewer than k={k} records in every dataset "
                f"VERPART would map to this release ({summary['clusters_with_pins']} clusters)",
                summary,
            )
        ]
        for r in results:
            if not r.consistent:
                findings.append(
                    Finding(
                        NAME,
                        "info",
                        f"cluster {r.cluster}: a term of a later chunk has no term VERPART could have rejected it for",
                        {"cluster": r.cluster, "note": "the chunks are not VERPART's output under the stated k, m"},
                    )
                )
            if r.pins:
                how = (
                    "exact: every reconstruction enumerated and VERPART run on each"
                    if r.method == "exact"
                    else "sound bound: the only itemset that can have made VERPART reject the term"
                )
                first = r.pins[0]
                findings.append(
                    Finding(
                        NAME,
                        "breach",
                        f"cluster {r.cluster}: knowing {{{', '.join(first.itemset)}}} narrows a person down to at most "
                        f"{first.high} record(s) in every dataset VERPART would map to this release"
                        + (f" ({len(r.pins)} such itemsets)" if len(r.pins) > 1 else ""),
                        {
                            "cluster": r.cluster,
                            "adversary": ADVERSARY,
                            "method": how,
                            "pinned": [p.to_json() for p in r.pins],
                            "k": k,
                            "m": m,
                        },
                        refutes="km-anonymity",
                    )
                )
        return findings
