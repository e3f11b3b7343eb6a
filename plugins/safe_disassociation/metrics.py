"""PEM, RLM and RAE (safe-disassociation paper, section 5.1).

* PEM = vRC / RC: the share of record chunks with a covered item (5.1.1).
  Shared chunks are reported beside it, not mixed in. ``pem_literal`` also
  counts the single-item chunks, which equation 2 matches trivially (see
  :mod:`privtool.attacks.cover` for why they are not vulnerable).
* RLM = sum_x (s(x, T*) - s(x, T')) / sum_x s(x, T*) (5.1.2): the net loss of
  item occurrences between the disassociated release T* and the safe release
  T', over the items of record and shared chunks (term chunks publish no
  counts). Partial suppression keeps every item's support (lemma 2), so RLM
  counts the chunks removed by the fallback. The sanitizer's counts (in the
  trail's stats: they are not published) hold both sums; :func:`rlm_between` computes it from two releases.
  ``rlm_real`` also counts the occurrences moved from real sub-records to
  ghost sub-records.
* RAE (5.1.3): per pair ``{x, y}`` that occurs in the original,
  ``|s(xy, T) - s(xy, A)| / avg(s(xy, T), s(xy, A))`` with ``s(xy, A)`` the
  expected support in a reconstruction of the release (:mod:`.pairs`). The
  paper's formula has no absolute value and does not say over which pairs it
  aggregates; its plotted magnitudes (about 1e5 on BMS1, 1.4e6 on BMS2) look
  like sums over pairs, so both the sum and the mean are reported.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from privtool.attacks.cover import RECORD, iter_chunks
from privtool.attacks.cover_linkage import each_chunk, shared_cluster_views
from privtool.components import Evidence, Metric
from privtool.context import Context
from privtool.errors import MissingEvidence
from privtool.params import Param
from privtool.release import Release
from privtool.trail import Trail

from .pairs import expected_pair_supports, original_pair_supports
from .sanitizer import NAME


def pem(release: Release) -> dict[str, Any]:
    """PEM of a disassociated release, with the counts it comes from (each
    chunk's cover analysis is the one the cover-linkage attack made, when both
    run in one assessment)."""
    covers = [chunk.cover for _, chunk in each_chunk(shared_cluster_views(release))]
    record = [c for c in covers if c.ref.kind == RECORD]
    shared = [c for c in covers if c.ref.kind != RECORD]
    vulnerable = sum(c.vulnerable for c in record)
    single = sum(len(c.itemset) == 1 for c in record)
    return {
        "pem": vulnerable / len(record) if record else 0.0,
        "pem_literal": (vulnerable + single) / len(record) if record else 0.0,
        "vulnerable_record_chunks": vulnerable,
        "single_item_record_chunks": single,
        "record_chunks": len(record),
        "vulnerable_shared_chunks": sum(c.vulnerable for c in shared),
        "shared_chunks": len(shared),
    }


def chunk_item_supports(release: Release) -> Counter[str]:
    """Sum over the record and shared chunks of the support of every item."""
    return Counter(x for _, rows in iter_chunks(release) for row in rows for x in row)


def rlm_between(before: Release, after: Release) -> float:
    """RLM from the release before and after the sanitizer (5.1.2)."""
    s_before = chunk_item_supports(before)
    s_after = chunk_item_supports(after)
    total = sum(s_before.values())
    lost = sum(s_before[x] - s_after.get(x, 0) for x in s_before)
    return lost / total if total else 0.0


def rlm(release: Release, trail: Trail | None = None) -> dict[str, Any]:
    """RLM of a release from the counts the sanitizer kept in the trail's stats
    (in the release's stats for a release written before they moved; 0 for a
    release the sanitizer never touched). The counts say what was suppressed
    and invented, so a release never publishes them: without its trail the RLM
    of a safe-disassociated release is unknown (:class:`MissingEvidence`)."""
    stats = {**release.stats, **(trail.stats if trail is not None else {})}
    if NAME in (release.params.get("sanitizers") or []) and "chunk_item_occurrences_before_safe" not in stats:
        raise MissingEvidence("metric 'rlm' of a safe-disassociated release needs its trail (--trail TRAIL).")
    before = int(stats.get("chunk_item_occurrences_before_safe", 0))
    removed = int(stats.get("suppressed_item_occurrences", 0))
    ghosts = int(stats.get("ghost_item_occurrences", 0))
    return {
        "rlm": (removed - ghosts) / before if before else 0.0,
        "rlm_real": removed / before if before else 0.0,
        "suppressed_item_occurrences": removed,
        "ghost_item_occurrences": ghosts,
        "chunk_item_occurrences_before": before,
    }


def rae(release: Release, evidence: Evidence, max_pairs: int = 0) -> dict[str, Any]:
    """RAE of the release against the original dataset (5.1.3), over every pair
    of items that co-occur in the original, or over the ``max_pairs`` most
    frequent of them (ties by pair key) when ``max_pairs`` is positive."""
    original = evidence.original
    assert original is not None, "Rae.needs declares the original; run_metrics checks it"
    labels = list(original.labels)
    index = {x: i for i, x in enumerate(labels)}
    for _, rows in iter_chunks(release):
        for row in rows:
            for x in row:
                index.setdefault(x, len(index))
    for cluster in release.clusters:
        for x in cluster.term_chunk:
            index.setdefault(x, len(index))
    vocabulary = len(index)
    true_keys, true_support = original_pair_supports(original, vocabulary)
    if 0 < max_pairs < len(true_keys):
        top = np.sort(np.argsort(-true_support, kind="stable")[:max_pairs])
        true_keys, true_support = true_keys[top], true_support[top]
    estimate = expected_pair_supports(release, index, true_keys)
    error = np.abs(true_support - estimate) / ((true_support + estimate) / 2)
    return {
        "rae_mean": float(error.mean()) if len(error) else 0.0,
        "rae_sum": float(error.sum()),
        "rae_pairs": len(error),
    }


class Pem(Metric):
    name = "pem"
    summary = "share of record chunks with a covered item (safe-disassociation paper 5.1.1)"
    applies_to = ("disassociated",)
    better = "lower"

    def compute(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return pem(release)


class Rlm(Metric):
    name = "rlm"
    summary = "relative loss of item occurrences caused by safe disassociation (5.1.2)"
    applies_to = ("disassociated",)
    better = "lower"

    def compute(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return rlm(release, evidence.trail)


class Rae(Metric):
    name = "rae"
    summary = "relative association error of item pairs, original vs expected reconstruction (5.1.3)"
    applies_to = ("disassociated",)
    better = "lower"
    needs = ("original",)
    params = (
        Param(
            "rae_pairs",
            int,
            20_000,
            "Pairs of the original measured: the most frequent ones (0: every co-occurring pair, as in the paper; "
            "that costs minutes and gigabytes on bms-webview-2).",
            min=0,
        ),
    )

    def compute(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return rae(release, evidence, params["rae_pairs"])
