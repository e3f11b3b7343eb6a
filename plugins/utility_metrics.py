"""Utility metrics measured on reconstructions: ``tkd`` (top-K deviation) and
``re`` (relative error of pair supports), after the disassociation paper's
evaluation (Terrovitis et al. 2012, section 5.2-5.3 of the implementation
thesis in ``papers/disassociation-horpart-verpart-refine.txt``; definitions and
every choice the papers leave open in ``docs/metrics.md``).

A disassociated release is compared with the original through ``samples``
reconstructions drawn uniformly (:mod:`privtool.attacks.reconstruction`, one
generator per sample from ``ctx.rng("reconstruction", i)``), and the figures are
averaged; a sanitized release is its own single reconstruction.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from privtool.attacks.reconstruction import ReconstructionModel, ReconstructionSampler
from privtool.components import Evidence, Metric
from privtool.context import Context
from privtool.dataset import Dataset, label_sort_key
from privtool.errors import MissingEvidence
from privtool.hookspecs import hookimpl
from privtool.itemset_mining import (
    Itemset,
    pair_supports,
    top_itemsets,
)
from privtool.params import Param
from privtool.release import Release

SAMPLES = Param(
    "samples",
    int,
    10,
    "Reconstructions sampled and averaged (disassociated releases; a sanitized release is its own reconstruction).",
    min=1,
)

Source = ReconstructionSampler | Dataset
"""Where reconstructions come from: a sampler (light to send to workers), or
the one published dataset."""


def reconstruction_source(release: Release) -> Source:
    """The sampler of a disassociated release, or the records of a sanitized one."""
    if release.kind == "disassociated":
        return ReconstructionModel(release).sampler
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
    count = samples if isinstance(source, ReconstructionSampler) else 1
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
    applies_to = ("disassociated", "sanitized")
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
    applies_to = ("disassociated", "sanitized")
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


@hookimpl
def privtool_metrics() -> list[Metric]:
    return [TopKDeviation(), RelativeError()]
