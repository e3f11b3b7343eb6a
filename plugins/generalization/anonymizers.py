"""The ``partition`` and ``lgr`` anonymizers: strictly k-anonymous local
generalisation through a hierarchy, as a ``generalized`` release.

``partition`` is He & Naughton's top-down algorithm (:mod:`.topdown`); ``lgr``
adds LGR's bottom-up reallocation (:mod:`.reallocation`). Both publish every
record: each original item is replaced by the node of the record's cut that
covers it, and every published record occurs at least k times, except with
``lgr --m M``, whose reallocation keeps the release k^m-anonymous instead
(:mod:`.km_reallocation`). Records with no
items (possible in some files) are published as empty records when there are at
least k of them, and suppressed (counted in the stats and the trail) otherwise.

The trail maps every input record to its published record: ``cluster_of_record[i]``
is a group id (``g0``, ``g1``, ... in canonical order of the published forms) and
``notes["groups"]`` gives each group's published labels.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from privtool.arrays import pair_key, run_starts, split_pair_key, unique_int
from privtool.claims import Claim
from privtool.components import Anonymizer, Outcome
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.errors import ParameterError
from privtool.hierarchy import HIERARCHY, HIERARCHY_FORMAT, Hierarchy, load_hierarchy
from privtool.params import K, Param
from privtool.record_clusters import RecordClusters
from privtool.release import Release
from privtool.trail import Trail

from .km_reallocation import reallocate_km
from .ncp import mean_ncp
from .reallocation import reallocate
from .topdown import TopDownResult, top_down

GAIN = Param(
    "gain",
    str,
    "leaves",
    "pick_node score: leaves (NCP of the node per occurrence under it, as the public Partition code) "
    "or exact (NCP(node) - NCP(child) per occurrence, He & Naughton 2009 §4.2)",
    choices=("leaves", "exact"),
)


def check_exact_forms(part: np.ndarray, gen: np.ndarray, occ_row: np.ndarray) -> None:
    """Every row of a partition must have the same node set: a row's distinct
    nodes must number as many as its partition's. A failure is a bug."""
    keep = part[occ_row] >= 0
    rows, nodes = occ_row[keep], gen[keep]
    row_nodes, _ = split_pair_key(unique_int(pair_key(rows, nodes)))
    part_nodes, _ = split_pair_key(unique_int(pair_key(part[rows], nodes)))
    per_row = np.bincount(row_nodes, minlength=len(part))
    per_part = np.bincount(part_nodes, minlength=int(part.max()) + 1)
    placed = part >= 0
    if np.any(per_row[placed] != per_part[part[placed]]):
        raise RuntimeError("internal error: a partition holds records of different generalised forms")


class _LocalGeneralization(Anonymizer):
    """Shared flow: hierarchy, top-down phase, optional reallocation, release."""

    params: ClassVar[tuple[Param, ...]] = (K, HIERARCHY, HIERARCHY_FORMAT, GAIN)
    reallocates: ClassVar[bool] = False

    def claims(self, params: dict[str, Any]) -> list[Claim]:
        """Strict k-anonymity: every published record occurs at least k times."""
        return [Claim("k-anonymity", {"k": params["k"]})]

    def anonymize(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
        k = params["k"]
        hier = load_hierarchy(params["hierarchy"], params["hierarchy_format"], dataset)
        occ_leaf = hier.leaf_ids(dataset)[dataset.items]
        sizes = dataset.sizes
        n_nonempty = int((sizes > 0).sum())
        if n_nonempty < k:
            raise ParameterError(
                f"--k {k} is larger than the {n_nonempty} non-empty records of the data; no k-anonymous release exists."
            )
        with ctx.stage(f"{self.name}: top-down partitioning", None):
            result = top_down(hier, dataset.indptr, occ_leaf, k, params["gain"])
        notes: dict[str, Any] = {"rounds": result.rounds}
        if self.reallocates:
            m = params.get("m")
            with ctx.stage(f"{self.name}: bottom-up reallocation", None):
                if m is None:
                    result, moved = reallocate(hier, dataset.indptr, occ_leaf, k, result)
                else:
                    result, moved = reallocate_km(hier, dataset.indptr, occ_leaf, k, m, result)
            notes.update(moved)
        check_exact_forms(result.part, result.gen, dataset.record_of_occurrence)
        return self._outcome(dataset, hier, result, k, notes)

    def _outcome(
        self, dataset: Dataset, hier: Hierarchy, result: TopDownResult, k: int, notes: dict[str, Any]
    ) -> Outcome:
        part, gen = result.part, result.gen
        occ_row = dataset.record_of_occurrence
        pid, node = split_pair_key(unique_int(pair_key(part[occ_row], gen)))
        rank = hier.label_rank
        order = np.lexsort((rank[node], pid))
        pid, node = pid[order], node[order]
        bounds = np.r_[run_starts(pid), len(pid)]
        node_list, rank_list = node.tolist(), rank[node].tolist()
        # a form is keyed by the label ranks of its nodes: that tuple order is the canonical order
        forms: dict[int, tuple[int, ...]] = {}
        for s, e in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=False):
            forms[pid[s]] = tuple(rank_list[s:e])
        labels_of_rank = {r: hier.labels[v] for r, v in zip(rank_list, node_list, strict=False)}
        empty = np.flatnonzero(dataset.sizes == 0)
        publish_empty = len(empty) >= k
        if publish_empty:
            forms[-1] = ()
        ordered = sorted(set(forms.values()))
        group_labels = {form: [labels_of_rank[r] for r in form] for form in ordered}
        group_id = {form: f"g{i}" for i, form in enumerate(ordered)}
        names = [group_id[f] for f in ordered]
        group_code = {f: i for i, f in enumerate(ordered)}
        part_code = {p: group_code[f] for p, f in forms.items()}
        cluster_of_record = RecordClusters(
            names, np.fromiter((part_code.get(p, -1) for p in part.tolist()), dtype=np.int32, count=len(part))
        )
        records = [group_labels[forms[p]] for p in part.tolist() if p in forms]
        suppressed = [] if publish_empty else empty.tolist()
        published_occ = sum(len(r) for r in records)
        ncp_value = mean_ncp(hier, gen)
        release = Release(
            kind="generalized",
            # the hierarchy by content, never by the local path it was read from
            params={"hierarchy": f"sha256:{hier.content_sha256()}"},
            records=records,
            hierarchy=hier.to_json(),
            stats={
                "records_in": dataset.n_records,
                "records_published": len(records),
                "suppressed_records": len(suppressed),
                "item_occurrences_in": dataset.n_occurrences,
                "item_occurrences_published": published_occ,
                "groups": len(ordered),
                "smallest_group": _smallest_group(cluster_of_record),
                "ncp": ncp_value,
                "ncp_percent": 100.0 * ncp_value,
            },
        )
        trail = Trail(
            cluster_of_record=cluster_of_record,
            suppressed_records=suppressed,
            notes={"method": self.name, "groups": {group_id[f]: group_labels[f] for f in ordered}, **notes},
        )
        return Outcome(release, trail)


def _smallest_group(cluster_of_record: RecordClusters) -> int:
    """Records in the smallest group that has any."""
    counts = np.bincount(cluster_of_record.codes[cluster_of_record.codes >= 0])
    counts = counts[counts > 0]
    return int(counts.min()) if len(counts) else 0


class Partition(_LocalGeneralization):
    name = "partition"
    summary = "He & Naughton's top-down local generalisation (strict k-anonymity) through a hierarchy"


class Lgr(_LocalGeneralization):
    name = "lgr"
    summary = (
        "LGR: Partition plus bottom-up reallocation of rolled-back records (strict k-anonymity, "
        "or k^m-anonymity with --m)"
    )
    params = (
        *_LocalGeneralization.params,
        Param(
            "m",
            int,
            None,
            "reallocate under k^m-anonymity (every set of at most m published labels in at least k records) "
            "instead of whole-record k-anonymity (unset)",
            min=1,
        ),
    )
    reallocates = True

    def claims(self, params: dict[str, Any]) -> list[Claim]:
        """Strict k-anonymity, or with ``m`` k^m-anonymity only: the
        reallocation then keeps every set of at most m published labels in at
        least k records, which is what an adversary who knows m items meets."""
        if params.get("m") is None:
            return super().claims(params)
        return [Claim("km-anonymity", {"k": params["k"], "m": params["m"]})]
