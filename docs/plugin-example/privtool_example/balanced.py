"""The partitioner ``balanced``: records in a canonical order that puts similar
records side by side, cut into runs of ``cluster_size`` records.

Records are ordered by their first three items (item ids ascend in the
canonical label order, so these are a record's "smallest" items), ties by
position; the order is cut into ``n // cluster_size`` runs of equal size (the
sizes differ by at most one), so every cluster has at least ``cluster_size``
records when the data has that many, and at least k, which disassociation
needs for its clusters to publish record chunks. Nothing is suppressed. All of
it is vectorised: numpy, no Python object per item occurrence.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privtool.components import Partitioner, Partitioning
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.errors import ParameterError
from privtool.params import K, Param

CLUSTER_SIZE = Param("cluster_size", int, 10, "records per cluster (at least k; the last runs take the rest)", min=2)
SORT_ITEMS = 3
"""How many leading items of a record order it."""


class Balanced(Partitioner):
    name = "balanced"
    summary = "records ordered by their first items, cut into runs of cluster-size records"
    params = (K, CLUSTER_SIZE)

    def partition(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Partitioning:
        size = params["cluster_size"]
        if size < params["k"]:
            raise ParameterError(f"--cluster-size must be at least --k ({params['k']}), not {size}.")
        with ctx.stage("balanced partitioning", total=1) as task:
            starts, sizes = dataset.indptr[:-1], dataset.sizes
            padded = np.append(dataset.items.astype(np.int64), -1)  # -1: a record shorter than j + 1 items
            keys = [padded[np.where(sizes > j, starts + j, dataset.n_occurrences)] for j in range(SORT_ITEMS)]
            order = np.lexsort([np.arange(dataset.n_records), *reversed(keys)])
            clusters = [run.astype(np.int64) for run in np.array_split(order, max(1, dataset.n_records // size))]
            task.advance()
        return Partitioning([c for c in clusters if len(c)])
