"""tlost: the share of the data that disassociation publishes only in term chunks.

Two variants (``docs/algorithms/disassociation.md``):

* ``tlost_terms`` — the strategies paper's definition (§6.2) read literally:
  the fraction of the terms with support >= k in the original data that are
  "moved to term chunks", i.e. that appear in the term chunk of some cluster;
* ``tlost_terms_everywhere`` — the stricter reading of the same sentence: the
  fraction of those terms that appear in no record or shared chunk at all (all
  their occurrences are published only in term chunks);
* ``tlost_occurrences`` — the fraction of the item occurrences of the published
  records that are held only by term chunks (not by a record or shared chunk).

Records a partitioner suppressed are outside both (the paper's convention); the
release's ``suppressed_records`` stat says how many there were.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privtool.claims import claimed_level
from privtool.dataset import Dataset
from privtool.errors import MissingEvidence, ParameterError
from privtool.release import Release
from privtool.trail import Trail


def chunk_occurrences(release: Release) -> int:
    """Item occurrences held by the record chunks and shared chunks of ``release``."""
    in_records = sum(len(s) for c in release.clusters for chunk in c.record_chunks for s in chunk)
    in_shared = sum(len(s) for j in release.joint_clusters for chunk in j.shared_chunks for s in chunk)
    return in_records + in_shared


def published_occurrences(release: Release, original: Dataset, trail: Trail | None) -> int:
    """Item occurrences of the records the release publishes: from the trail
    when given (its records' clusters, exact; else its ``stats``); without it,
    every occurrence of the original when the release states that it
    suppressed no record of it, or the ``item_occurrences_published`` of a
    release written before that count moved to the trail (it tells how many
    occurrences the term chunks hold)."""
    if trail is not None and trail.cluster_of_record:
        if len(trail.cluster_of_record) != original.n_records:
            raise ParameterError(
                f"the trail covers {len(trail.cluster_of_record)} records but the original has {original.n_records}."
            )
        kept = trail.cluster_of_record.codes >= 0
        return int(original.sizes[kept].sum())
    stats = {**release.stats, **(trail.stats if trail is not None else {})}
    if stats.get("suppressed_records") == 0 and stats.get("records_in") == original.n_records:
        return original.n_occurrences
    if "item_occurrences_published" not in stats:
        raise MissingEvidence("metric 'tlost' needs the trail (--trail TRAIL).")
    return int(stats["item_occurrences_published"])


def tlost(release: Release, original: Dataset, k: int, trail: Trail | None = None) -> dict[str, float]:
    """The three tlost variants of a disassociated ``release`` of ``original``."""
    frequent = {original.labels[t] for t in np.flatnonzero(original.supports >= k).tolist()}
    in_term_chunks = {t for c in release.clusters for t in c.term_chunk}
    in_chunks = {t for c in release.clusters for chunk in c.record_chunks for s in chunk for t in s}
    in_chunks.update(t for j in release.joint_clusters for chunk in j.shared_chunks for s in chunk for t in s)
    published = published_occurrences(release, original, trail)
    held = chunk_occurrences(release)
    return {
        "tlost_terms": len(frequent & in_term_chunks) / len(frequent) if frequent else 0.0,
        "tlost_terms_everywhere": len((frequent & in_term_chunks) - in_chunks) / len(frequent) if frequent else 0.0,
        "tlost_occurrences": (published - held) / published if published else 0.0,
    }


def release_k(release: Release, given: Any) -> int:
    """The k to judge "frequent" by: the metric's own parameter, else the release's."""
    if given is not None:
        return int(given)
    k = claimed_level(release.claims, "k", 2)
    stated = release.params.get("k")  # a release built in memory may claim nothing
    if k is None and isinstance(stated, int) and not isinstance(stated, bool) and stated >= 2:
        k = stated
    if k is None:
        raise ParameterError("the release claims no k; pass --k.")
    return k
