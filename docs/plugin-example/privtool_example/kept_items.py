"""The metric ``kept-items``: how much of the vocabulary a release still names.

``kept_items`` is the share of the original's distinct items that the release
publishes under their own label (anywhere: a record, a record chunk, a shared
chunk, a term chunk); a generalised or suppressed item does not count. Higher
keeps more. It needs the original data, so ``privtool metrics`` skips it (with
the reason) without ``--original``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privtool.components import Evidence, Metric
from privtool.context import Context
from privtool.errors import MissingEvidence
from privtool.release import Release


class KeptItems(Metric):
    name = "kept-items"
    summary = "share of the original's distinct items published under their own label (kept_items)"
    applies_to = ("disassociated", "generalized", "sanitized")
    needs = ("original",)
    better = "higher"

    def compute(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        if evidence.original is None:  # privtool skips the metric without it (needs); a direct call gets this
            raise MissingEvidence("metric 'kept-items' needs the original data (--original DATA).")
        dataset = evidence.original
        original = {dataset.labels[j] for j in np.flatnonzero(dataset.supports > 0).tolist()}
        published = published_labels(release)
        kept = len(original & published)
        return {"kept_items": kept / len(original) if original else 1.0, "kept_items_count": kept}


def published_labels(release: Release) -> set[str]:
    """Every label the release publishes."""
    labels = {label for row in release.records for label in row}
    for cluster in release.clusters:
        labels.update(cluster.term_chunk)
        labels.update(label for chunk in cluster.record_chunks for row in chunk for label in row)
    for joint in release.joint_clusters:
        labels.update(label for chunk in joint.shared_chunks for row in chunk for label in row)
    return labels
