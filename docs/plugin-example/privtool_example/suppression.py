"""The anonymizer ``global-suppression``: k^1-anonymity by suppression.

It removes every item whose support (number of records holding it) is below
``k``, everywhere, and drops the records left empty. What remains satisfies
k^1-anonymity: every published item occurs in at least k records of the input.
The anonymizer says so in :meth:`GlobalSuppression.claims`, the pipeline writes
the claim into the release, and ``privtool verify`` proves it with the built-in
``km-anonymity-records`` verifier. The release is of kind ``sanitized``; the
private trail lists every removed item occurrence and every dropped record, so
nothing is lost silently.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privtool.claims import Claim
from privtool.components import Anonymizer, Outcome
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.params import K
from privtool.release import Release
from privtool.trail import Trail


class GlobalSuppression(Anonymizer):
    name = "global-suppression"
    summary = "remove every item with support below k (k^1-anonymity by suppression)"
    params = (K,)

    def claims(self, params: dict[str, Any]) -> list[Claim]:
        """k^1-anonymity: one known item never narrows a person down to fewer than k records."""
        return [Claim("km-anonymity", {"k": params["k"], "m": 1})]

    def anonymize(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
        k = params["k"]
        with ctx.stage("suppressing rare items", total=1) as task:
            rare = dataset.supports < k  # vectorised: one flag per item id
            removed = rare[dataset.items]  # one flag per item occurrence
            kept_per_record = np.bincount(dataset.record_of_occurrence[~removed], minlength=dataset.n_records)
            task.advance()
        kept = Dataset.from_csr(
            np.concatenate([[0], np.cumsum(kept_per_record)]), dataset.items[~removed], dataset.labels, normalise=False
        )
        published = np.flatnonzero(kept_per_record > 0)
        dropped = np.flatnonzero(kept_per_record == 0)
        release = Release(
            kind="sanitized",
            records=kept.subset(published).to_label_records(),
            stats={
                "records_in": dataset.n_records,
                "records_published": len(published),
                "suppressed_records": len(dropped),
                "item_occurrences_in": dataset.n_occurrences,
                "item_occurrences_published": int((~removed).sum()),
            },
        )
        occurrence_record = dataset.record_of_occurrence[removed].tolist()
        occurrence_label = [dataset.labels[j] for j in dataset.items[removed].tolist()]
        trail = Trail(
            suppressed_records=dropped.tolist(),
            removed_items=[[r, label] for r, label in zip(occurrence_record, occurrence_label, strict=False)],
        )
        return Outcome(release, trail)
