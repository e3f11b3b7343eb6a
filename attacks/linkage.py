"""Background-knowledge linkage (attack ``linkage``), for every release kind.

Adversary model (issue 7, item 3): the targets are records of the original
dataset (all, or a seeded sample of ``targets``); for each target the adversary
knows one itemset of at most ``known`` of its items (every such itemset is
tried, or a seeded sample of ``max_itemsets`` of them when there are more).
For a known itemset ``Q`` the attack counts the records of the release that
could be the target's:

* ``disassociated``: the **largest** support of ``Q`` over all reconstructions
  (:meth:`ReconstructionModel.max_support`); below ``k`` means that in every
  dataset the release could have come from, fewer than ``k`` records match.
  A term of a term chunk is published without any link to records, so for the
  adversary every record of its cluster may hold it: the model is built with a
  term support cap of the cluster size (not ``k - 1``), which makes the count
  the number of records that could hold ``Q``, the disassociation guarantee's
  reading (ALGORITHM-NOTES 1.1: the term chunk hides which records hold a term);
* ``generalized``: the published records in which every item of ``Q`` is covered
  by a label (the label is the item or one of its ancestors in the published
  hierarchy), the knowledge generalised as the release is;
* ``sanitized``: the published records that contain ``Q``.

The threshold ``k`` is the largest k the release claims (``km-anonymity`` or
``k-anonymity``); a release that claims neither (rule hiding) is measured at
k = 2, i.e. records singled out. A count ``c`` with ``0 < c < k`` is a finding.
The prosecutor success rate of a target is ``1 / min c`` over its known itemsets
(the best-informed adversary), ARX-style summaries are given per release:
records at risk (rate above ``1/k``), highest risk, average success rate. A
finding refutes ``km-anonymity`` when a claim (k', m') has ``|Q| <= m'`` and
``c < k'``, and ``k-anonymity`` when a claim k' has ``c < k'``; the engine then
makes it a breach. Otherwise it is a risk that no claim covers. A count of 0
means the target's items were not published together (suppressed): no link.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from privtool.claims import claimed
from privtool.components import Attack, Evidence
from privtool.context import Context, SeedSplitter
from privtool.dataset import Dataset
from privtool.params import Param
from privtool.release import Release
from privtool.results import Finding

from .covering_records import CoveringRecordCounter

EXAMPLES_SHOWN = 20
BATCH_TARGETS = 500
"""Fewest targets per unit of work (each unit ships the counter to a worker)."""
BATCHES_PER_WORKER = 2
"""At most this many units of work per worker: each ships the counter (about a
second to unpickle for a 77,000-record release), and bigger batches share more
cached queries."""


def known_itemsets(
    record: Sequence[str], known: int, limit: int, rng: Callable[[], np.random.Generator]
) -> list[tuple[str, ...]]:
    """Every itemset of 1..``known`` items of ``record``, or a uniform sample of
    ``limit`` of them (without repeats) when there are more, drawn from the
    generator ``rng()`` (called only then: seeding one per target is not free)."""
    n = len(record)
    total = sum(math.comb(n, size) for size in range(1, min(known, n) + 1))
    if total <= limit:
        return [q for size in range(1, min(known, n) + 1) for q in itertools.combinations(record, size)]
    chosen: set[tuple[str, ...]] = set()
    generator = rng()
    sizes = np.arange(1, min(known, n) + 1)
    weights = np.array([math.comb(n, int(s)) for s in sizes], dtype=float)
    p = weights / weights.sum()
    while len(chosen) < limit:
        size = int(generator.choice(sizes, p=p))
        picks = np.sort(generator.choice(n, size=size, replace=False)).tolist()
        chosen.add(tuple([record[i] for i in picks]))
    return sorted(chosen)


class _ReconstructionCounter:
    """Largest support over all reconstructions of a disassociated release, for
    one query (``counter(query)``) or many (``counter.many(queries)``, batched
    and cached per distinct query by :class:`MaxSupportIndex`)."""

    def __init__(self, release: Release) -> None:
        from .reconstruction import MaxSupportIndex, ReconstructionModel

        largest = max((c.size for c in release.clusters), default=1)
        self.index = MaxSupportIndex(ReconstructionModel(release, term_max_support=largest))

    def many(self, queries: Sequence[Sequence[str]]) -> list[int]:
        return self.index.max_supports(queries)

    def __call__(self, query: Sequence[str]) -> int:
        return self.index.max_supports([query])[0]


def match_counter(release: Release) -> CoveringRecordCounter | _ReconstructionCounter:
    """The callable that counts the candidate records of a known itemset
    (``many`` counts a list of them)."""
    if release.kind == "disassociated":
        return _ReconstructionCounter(release)
    if release.kind == "generalized":
        return CoveringRecordCounter(release.records, release.hierarchy or {"root": "", "edges": []})
    return CoveringRecordCounter(release.records)


def _attack_targets(
    counter: CoveringRecordCounter | _ReconstructionCounter,
    known: int,
    limit: int,
    seeds: SeedSplitter,
    batch: list[tuple[int, list[str]]],
) -> list[tuple[int, int, int, tuple[str, ...] | None]]:
    """For each target: (position, itemsets tried, smallest non-zero count, its
    itemset). The known itemsets of the whole batch are counted in one call."""
    queries = [
        known_itemsets(record, known, limit, partial(seeds.rng, "linkage-knowledge", position))
        for position, record in batch
    ]
    counts = iter(counter.many([q for target in queries for q in target]))
    out = []
    for (position, _), target in zip(batch, queries, strict=False):
        best, best_query = 0, None
        for query in target:
            count = next(counts)
            if count and (best == 0 or count < best):
                best, best_query = count, query
        out.append((position, len(target), best, best_query))
    return out


def claimed_levels(release: Release) -> tuple[list[tuple[int, int]], list[int]]:
    """The (k, m) of every ``km-anonymity`` claim and the k of every ``k-anonymity`` claim."""
    km = [(int(c.params["k"]), int(c.params["m"])) for c in claimed(release.claims, "km-anonymity")]
    whole = [int(c.params["k"]) for c in claimed(release.claims, "k-anonymity")]
    return km, whole


def refuted_model(release: Release, size: int, count: int) -> str | None:
    """The claimed model that ``size`` known items matching ``count`` records refute, if any."""
    km, whole = claimed_levels(release)
    if any(size <= m and count < k for k, m in km):
        return "km-anonymity"
    if any(count < k for k in whole):
        return "k-anonymity"
    return None


class BackgroundLinkage(Attack):
    name = "linkage"
    summary = "background-knowledge linkage: known itemsets matching fewer than k records (prosecutor risk)"
    applies_to = ("disassociated", "generalized", "sanitized")
    criteria = ("singling-out", "linkability")
    refutes = ("km-anonymity", "k-anonymity")
    adversary_statement = (
        "The adversary knows the release and a few items of a person taken from the original data, "
        "and counts the records that could be theirs in any dataset the release could have come from."
    )
    params = (
        Param("known", int, None, "Items the adversary knows (default: the release's m, or 2).", min=1),
        Param("targets", int, None, "Attack a seeded sample of this many original records (default: all).", min=1),
        Param("max_itemsets", int, 1000, "Known itemsets tried per target at most (a seeded sample beyond).", min=1),
    )

    def run(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Finding]:
        original = evidence.original
        if original is None:
            return [Finding(self.name, "info", "not run: targets are records of the original; give --original")]
        km, whole = claimed_levels(release)
        k = max([2, *(k for k, _ in km), *whole])
        known = params["known"] or min((m for _, m in km), default=2)
        positions = _choose_targets(original, params["targets"], ctx)
        counter = match_counter(release)
        records = [(int(p), original.record_labels(int(p))) for p in positions]
        size = max(BATCH_TARGETS, -(-len(records) // (BATCHES_PER_WORKER * ctx.executor.workers)))
        batches = [records[i : i + size] for i in range(0, len(records), size)]
        work = partial(_attack_targets, counter, known, params["max_itemsets"], ctx.seeds)
        results = [r for batch in ctx.map(work, batches, f"linkage ({len(records)} targets)") for r in batch]
        return self._findings(release, k, known, results)

    def exposure(self, findings: Sequence[Finding]) -> str | None:
        summary = next((f.evidence for f in findings if f.severity == "info" and "share_at_risk" in f.evidence), None)
        if summary is None:
            return None
        k, known = summary["k"], summary["known"]
        what = "are unique" if k == 2 else f"match fewer than k = {k} records"
        return (
            f"{summary['records_at_risk']:,} of {summary['targets']:,} attacked records "
            f"({100 * summary['share_at_risk']:.1f} %) {what} on {known} known item(s)"
        )

    def _findings(self, release: Release, k: int, known: int, results: list) -> list[Finding]:
        rates = np.array([1.0 / best if best else 0.0 for _, _, best, _ in results])
        at_risk = [r for r in results if 0 < r[2] < k]
        summary = {
            "targets": len(results),
            "known": known,
            "itemsets_tried": int(sum(r[1] for r in results)),
            "records_at_risk": len(at_risk),
            "share_at_risk": round(len(at_risk) / len(results), 6) if results else 0.0,
            "highest_risk": float(rates.max()) if len(rates) else 0.0,
            "average_success_rate": round(float(rates.mean()), 6) if len(rates) else 0.0,
            "threshold": f"1/k = {1 / k:.4g}",
            "k": k,
        }
        findings = [Finding(self.name, "info", f"prosecutor risk over {len(results)} targets", summary)]
        ordered = sorted(at_risk, key=lambda r: (r[2], r[0]))
        for position, _, best, query in ordered[:EXAMPLES_SHOWN]:
            refutes = refuted_model(release, len(query), best)
            findings.append(
                Finding(
                    self.name,
                    "breach" if refutes else "risk",
                    f"{len(query)} known item(s) match {best} record(s) (< k = {k}) in every reconstruction"
                    if release.kind == "disassociated"
                    else f"{len(query)} known item(s) match {best} published record(s) (< k = {k})",
                    {"target": position, "known_items": list(query), "candidates": best, "k": k},
                    refutes=refutes,
                )
            )
        rest = ordered[EXAMPLES_SHOWN:]
        if rest:
            refuting = [r for r in rest if refuted_model(release, len(r[3]), r[2])]
            refutes = refuted_model(release, len(refuting[0][3]), refuting[0][2]) if refuting else None
            findings.append(
                Finding(
                    self.name,
                    "breach" if refutes else "risk",
                    f"{len(rest)} more targets at risk (not listed)",
                    {"count": len(rest), "refuting_a_claim": len(refuting)},
                    refutes=refutes,
                )
            )
        return findings


def _choose_targets(original: Dataset, targets: int | None, ctx: Context) -> np.ndarray:
    n = original.n_records
    if targets is None or targets >= n:
        return np.arange(n)
    return np.sort(ctx.rng("linkage-targets").choice(n, size=targets, replace=False))
