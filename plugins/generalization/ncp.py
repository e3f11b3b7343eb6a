"""NCP (Normalized Certainty Penalty) of a generalised release (He & Naughton
2009, §3.2; LGR, Kim 2023, §3).

* NCP of a node: |leaves under it| / |all leaves|, 0 for a node over one leaf
  (:attr:`privtool.hierarchy.Hierarchy.ncp`).
* NCP of a dataset (the papers' figure): the mean, over the **original** item
  occurrences, of the NCP of the node each occurrence was published as. This
  needs the original data and the trail: the release alone does not say how many
  original items a published node stands for (``{wine, diapers, pregnancy test}``
  published as ``{alcohol, health care}`` charges *health care* twice).
* Published NCP: the mean over the **published** labels, computable from the
  release and its hierarchy alone. It differs from the papers' NCP whenever two
  items of a record collapse into one node; it is reported so that anyone
  holding only the release can still compare releases.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privtool.components import Evidence, Metric
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.errors import InputError, MissingEvidence
from privtool.hierarchy import Hierarchy
from privtool.release import Release
from privtool.trail import Trail


def mean_ncp(hier: Hierarchy, nodes: np.ndarray) -> float:
    """Mean NCP of ``nodes`` (0 for none), summed exactly in integer units of
    1 / |leaves| and divided once."""
    if len(nodes) == 0:
        return 0.0
    return int(hier.ncp_units[nodes].sum()) / (max(hier.n_leaves, 1) * len(nodes))


def published_ncp(hier: Hierarchy, records: list[list[str]]) -> float:
    """Mean NCP over the published labels of ``records`` (0 when there are none)."""
    labels = [label for record in records for label in record]
    return mean_ncp(hier, np.array([hier.node_id(label) for label in labels], dtype=np.int64))


def original_ncp(hier: Hierarchy, original: Dataset, trail: Trail) -> float:
    """The papers' NCP: each original occurrence charged the NCP of the node of
    its published record that covers it. The trail gives each input record's
    group (``cluster_of_record``) and each group's published form
    (``notes["groups"]``); an occurrence no published node covers is an error."""
    groups = trail.notes.get("groups")
    if groups is None or len(trail.cluster_of_record) != original.n_records:
        raise MissingEvidence("the trail does not map every input record to a published record (no notes.groups)")
    names = sorted(groups)
    gid = {name: i for i, name in enumerate(names)}
    set_ids = np.array([gid[name] for name in names for _ in groups[name]], dtype=np.int64)
    set_nodes = np.array([hier.node_id(label) for name in names for label in groups[name]], dtype=np.int64)
    coded = trail.cluster_of_record
    group_of_name = np.array([gid[name] for name in coded.names] + [-1], dtype=np.int64)
    group_of_row = group_of_name[coded.codes]  # code -1 (suppressed) takes the last entry
    occ_group = group_of_row[original.record_of_occurrence]
    keep = occ_group >= 0
    leaves = hier.leaf_ids(original)[original.items]
    cover = hier.covering(occ_group[keep], leaves[keep], set_ids, set_nodes)
    if np.any(cover < 0):
        bad = int(np.flatnonzero(keep)[np.flatnonzero(cover < 0)[0]])
        record = int(original.record_of_occurrence[bad])
        raise InputError(
            f"input record {record} holds item {original.labels[original.items[bad]]!r}, "
            "which no node of its published record covers"
        )
    # occurrences of suppressed records count in the denominator, charged nothing
    total = original.n_occurrences
    return int(hier.ncp_units[cover].sum()) / (max(hier.n_leaves, 1) * total) if total else 0.0


class Ncp(Metric):
    """NCP of a generalized release; the papers' figure when the original and
    the trail are given, the published-label figure always."""

    name = "ncp"
    summary = "NCP information loss of a generalized release (He & Naughton 2009; LGR 2023)"
    applies_to = ("generalized",)
    better = "lower"

    def compute(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        if release.hierarchy is None:
            raise InputError("the generalized release has no hierarchy")
        hier = Hierarchy.from_json(release.hierarchy)
        out: dict[str, Any] = {}
        if evidence.original is not None and evidence.trail is not None:
            value = original_ncp(hier, evidence.original, evidence.trail)
            out.update(ncp=value, ncp_percent=100.0 * value)
        value = published_ncp(hier, release.records)
        out.update(ncp_published=value, ncp_published_percent=100.0 * value)
        return out
