"""Utility metrics measured on reconstructions, one axis for every release
kind: ``tkd`` (top-K deviation) and ``re`` (relative error of pair supports),
after the disassociation paper's evaluation (Terrovitis et al. 2012, section
5.2-5.3 of the implementation thesis in
``papers/disassociation-horpart-verpart-refine.txt``), and ``are`` (average
relative error of random count queries); definitions and every choice the
papers leave open in ``docs/metrics.md``.

Each metric is one function of a reconstructed dataset, averaged over
``samples`` reconstructions (one generator per sample from
``ctx.rng("reconstruction", i)``): a disassociated release's are drawn
uniformly from its inverse transformation
(:mod:`privtool.attacks.reconstruction`), a generalized release's by replacing
every published node with a uniform leaf under it
(:mod:`privtool.attacks.leaf_reconstruction`); a sanitized release is its own
single reconstruction.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from privtool.arrays import csr_positions, rank_in_runs, run_starts
from privtool.attacks.leaf_reconstruction import LeafSampler
from privtool.attacks.reconstruction import ReconstructionModel, ReconstructionSampler
from privtool.components import Evidence, Metric
from privtool.context import Context
from privtool.dataset import Dataset, label_sort_key
from privtool.errors import MissingEvidence
from privtool.itemset_mining import Itemset, itemset_supports, pair_supports, top_itemsets
from privtool.mining import min_support_count
from privtool.params import Param
from privtool.release import Release

SAMPLES = Param(
    "samples",
    int,
    10,
    "Reconstructions sampled and averaged (disassociated and generalized releases; a sanitized release is its own "
    "reconstruction).",
    min=1,
)

Source = ReconstructionSampler | LeafSampler | Dataset
"""Where reconstructions come from: a sampler (light to send to workers), or
the one published dataset."""

KINDS = ("disassociated", "generalized", "sanitized")
"""The release kinds every utility metric of this module applies to."""


def reconstruction_source(release: Release) -> Source:
    """The sampler of a disassociated or generalized release, or the records of a sanitized one."""
    if release.kind == "disassociated":
        return ReconstructionModel(release).sampler
    if release.kind == "generalized":
        return LeafSampler(release)
    return Dataset.from_records(release.records)


def _evaluate(index: int, source: Source, seed: int, evaluate: Callable[..., float], args: tuple) -> float:
    dataset = source if isinstance(source, Dataset) else source.sample(Context(seed=seed).rng("reconstruction", index))
    return evaluate(dataset, *args)


def over_reconstructions(
    release: Release, evaluate: Callable[..., float], args: tuple, samples: int, ctx: Context, what: str
) -> list[float]:
    """``evaluate(reconstruction, *args)`` for each sampled reconstruction (one for a
    sanitized release), through the context's executor; results in sample order."""
    source = reconstruction_source(release)
    count = 1 if isinstance(source, Dataset) else samples
    fn = partial(_evaluate, source=source, seed=ctx.seed, evaluate=evaluate, args=args)
    return ctx.map(fn, list(range(count)), f"{what} over {count} reconstruction{'s' if count > 1 else ''}")


def _summary(name: str, values: list[float], **extra: Any) -> dict[str, Any]:
    array = np.asarray(values, dtype=float)
    return {
        name: float(array.mean()),
        f"{name}_std": float(array.std()),
        f"{name}_samples": len(values),
        **extra,
        f"{name}_detail": {"per_sample": [float(v) for v in array]},
    }


def _original(evidence: Evidence, metric: str) -> Dataset:
    if evidence.original is None:
        raise MissingEvidence(f"metric {metric!r} needs the original data (--original DATA).")
    return evidence.original


# ---------------------------------------------------------------------- tKd
def top_k_deviation(dataset: Dataset, reference: list[Itemset], top_k: int, min_size: int, max_size: int) -> float:
    """``1 - |preserved| / |reference|``: an itemset of the original's top-K is
    preserved when its support in ``dataset`` reaches that of ``dataset``'s own
    K-th most frequent itemset (ties at the boundary all count as top-K)."""
    found = top_itemsets(dataset, top_k, min_size, max_size)
    threshold = found[-1][1] if len(found) >= top_k else 1
    preserved = sum(1 for itemset in reference if dataset.support_of_labels(itemset) >= threshold)
    return 1.0 - preserved / len(reference)


class TopKDeviation(Metric):
    name = "tkd"
    summary = "Top-K deviation: share of the original's K most frequent itemsets not among a reconstruction's top K."
    applies_to = KINDS
    better = "lower"
    needs = ("original",)
    params = (
        SAMPLES,
        Param("top_k", int, 100, "K: how many of the most frequent itemsets are compared.", min=1),
        Param("itemset_min_size", int, 2, "Smallest itemset size counted by tkd.", min=1),
        Param("itemset_max_size", int, 4, "Largest itemset size counted by tkd.", min=1),
    )

    def compute(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        original = _original(evidence, self.name)
        top_k, low, high = params["top_k"], params["itemset_min_size"], params["itemset_max_size"]
        reference = [itemset for itemset, _ in top_itemsets(original, top_k, low, high)]
        if not reference:
            raise MissingEvidence(f"metric 'tkd': the original has no itemset of {low}..{high} items.")
        values = over_reconstructions(
            release, top_k_deviation, (reference, top_k, low, high), params["samples"], ctx, "tkd"
        )
        return _summary("tkd", values, tkd_itemsets=len(reference))


# ----------------------------------------------------------------------- re
def relative_error(
    dataset: Dataset, labels: list[str], first: np.ndarray, second: np.ndarray, truth: np.ndarray, denominator: str
) -> float:
    """Mean over the workload pairs of ``|s_o - s_r| / d``, with ``d`` the original
    support or the average of both supports."""
    got = pair_supports(dataset, labels)[first, second]
    scale = truth if denominator == "original" else (truth + got) / 2
    return float(np.mean(np.abs(truth - got) / scale))


def pair_workload(original: Dataset, terms: int) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """The ``terms`` most frequent items of the original (ties in label order) and
    every pair of them that occurs in the original, with its support."""
    order = sorted(
        range(original.n_items), key=lambda i: (-int(original.supports[i]), label_sort_key(original.labels[i]))
    )
    labels = [original.labels[i] for i in order[:terms] if original.supports[i] > 0]
    supports = pair_supports(original, labels)
    first, second = np.triu_indices(len(labels), k=1)
    keep = supports[first, second] > 0
    return labels, first[keep], second[keep], supports[first, second][keep].astype(float)


class RelativeError(Metric):
    name = "re"
    summary = "Relative error of the supports of pairs of the most frequent items, original vs reconstruction."
    applies_to = KINDS
    better = "lower"
    needs = ("original",)
    params = (
        SAMPLES,
        Param("re_terms", int, 30, "The workload: pairs among this many most frequent items of the original.", min=2),
        Param(
            "re_denominator",
            str,
            "average",
            "Divide by the average of both supports (the paper's figure 14) or by the original support.",
            choices=("average", "original"),
        ),
    )

    def compute(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        original = _original(evidence, self.name)
        labels, first, second, truth = pair_workload(original, params["re_terms"])
        if not len(truth):
            raise MissingEvidence("metric 're': no pair of the original's most frequent items occurs together.")
        args = (labels, first, second, truth, params["re_denominator"])
        values = over_reconstructions(release, relative_error, args, params["samples"], ctx, "re")
        return _summary("re", values, re_pairs=len(truth))


# ---------------------------------------------------------------------- are
def count_query_workload(
    original: Dataset, size: int, queries: int, rng: np.random.Generator
) -> tuple[list[Itemset], np.ndarray]:
    """``queries`` count queries of ``size`` items: each picks a record of the
    original uniformly among those holding at least ``size`` items, then
    ``size`` of its items uniformly (so every query has a non-empty answer, and
    an itemset is asked as often as records hold it). Returns the itemsets
    (labels, canonical order; repeats kept) and their supports in the original;
    nothing when no record holds ``size`` items. Vectorised: one random key per
    item of the chosen records, the ``size`` smallest keys of each record kept."""
    eligible = np.flatnonzero(original.sizes >= size)
    if not len(eligible):
        return [], np.zeros(0)
    chosen = rng.choice(eligible, size=queries)
    positions = csr_positions(original.indptr, chosen)
    query = np.repeat(np.arange(queries, dtype=np.int64), original.sizes[chosen])
    order = np.lexsort((rng.random(len(positions)), query))
    rank = rank_in_runs(run_starts(query[order]), len(order))
    picked = order[rank < size]  # grouped by query: size positions each
    items = np.sort(original.items[positions[picked]].reshape(queries, size), axis=1)
    itemsets = [tuple(original.labels[i] for i in row) for row in items.tolist()]
    return itemsets, itemset_supports(original, itemsets).astype(float)


def average_relative_error(dataset: Dataset, itemsets: list[Itemset], truth: np.ndarray, sanity: int) -> float:
    """Mean over the count queries of ``|s_o - s_r| / max(s_o, sanity)``."""
    got = itemset_supports(dataset, itemsets)
    return float(np.mean(np.abs(truth - got) / np.maximum(truth, sanity)))


class AverageRelativeError(Metric):
    name = "are"
    summary = "Average relative error of random count queries (parts of random records), original vs reconstruction."
    applies_to = KINDS
    better = "lower"
    needs = ("original",)
    params = (
        SAMPLES,
        Param("are_queries", int, 1000, "Count queries, each drawn from a random record of the original.", min=1),
        Param("are_query_size", int, 2, "Items per count query.", min=1),
        Param(
            "are_sanity",
            float,
            0.001,
            "Sanity bound of the denominator: a fraction (< 1) of the original's records, or a record count.",
        ),
    )

    def compute(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        original = _original(evidence, self.name)
        sanity = min_support_count(params["are_sanity"], original.n_records, "--are-sanity")
        size = params["are_query_size"]
        itemsets, truth = count_query_workload(original, size, params["are_queries"], ctx.rng("are-workload"))
        if not itemsets:
            raise MissingEvidence(f"metric 'are': no record of the original holds {size} items.")
        args = (itemsets, truth, sanity)
        values = over_reconstructions(release, average_relative_error, args, params["samples"], ctx, "are")
        return _summary("are", values, are_queries=len(itemsets), are_sanity_records=sanity)
