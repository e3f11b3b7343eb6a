"""k^m-anonymity of a release that publishes records (``generalized`` and
``sanitized``; verifier ``km-anonymity-records``).

**Statement** (Terrovitis et al. 2008, k^m-anonymity): an adversary who knows
up to m items of a person finds them in either no published record or at least
k. A published record *could be* the person's when it covers every known item:
a sanitized record holds it; a generalized record holds the item or one of its
ancestors in the published hierarchy. Under the deepest-cover reading of
records with nested labels (docs/formats.md), this is exact: a record ``{P, b}``
covers ``b`` and every other item under ``P`` (``P`` stands for at least one item
other than ``b``, and the person may hold more), and a record without a label on
an item's path to the root cannot hold it.

**Check.** Leaves (hierarchy leaves, or the labels of a sanitized release) that
the same records cover answer every query alike, so they are merged into
classes (:class:`privtool.attacks.covering_records.CoveringRecordCounter`); a set
holding two leaves of one class counts as the smaller set. The release holds iff
no set of 1..m classes has a count in [1, k-1]:

* one and two classes: the diagonal and the entries of the weighted Gram matrix
  ``Mᵀ diag(w) M`` of the record-by-class matrix, all at once;
* three or more (m >= 3): level by level, Apriori-style: a set of j classes that
  some record covers has every (j-1)-subset covered by that record too, so when
  no smaller set fails, every such set is a join of two sets of the previous
  level with counts >= k; its count is the weight of the intersection of its
  classes' record lists.

The first failing level stops the search; the witness is a set of leaf labels
(one representative per class) and its count. Every leaf the hierarchy lists is
a possible known item, also one that no original record holds, which can only
make the check stricter. One unit per class.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np

from privtool.components import Evidence, Verifier
from privtool.context import Context
from privtool.dataset import label_sort_key
from privtool.release import Release
from privtool.results import Certificate

from .levels import K_CHECKED, M_CHECKED, level

MAX_WITNESSES = 20


def _counter(release: Release) -> Any:
    from privtool.attacks.covering_records import CoveringRecordCounter

    hierarchy = release.hierarchy if release.kind == "generalized" else None
    return CoveringRecordCounter(release.records, hierarchy)


def _pairs_below(counter: Any, k: int) -> Iterator[tuple[tuple[int, ...], int]]:
    """Sets of one or two classes whose count is in [1, k-1] (one class first)."""
    n = counter.n_classes
    if counter.dense is not None:
        gram = counter.dense
        diagonal = np.diagonal(gram)
        for a in np.flatnonzero((diagonal >= 1) & (diagonal < k)).tolist():
            yield (a,), int(diagonal[a])
        rows, cols = np.nonzero(np.triu((gram >= 1) & (gram < k), 1))
        for a, b in zip(rows.tolist(), cols.tolist(), strict=True):
            yield (a, b), int(gram[a, b])
        return
    keys, values = counter.keys, counter.values
    a, b = keys // max(n, 1), keys % max(n, 1)
    low = (values >= 1) & (values < k)
    single, pair = low & (a == b), low & (a < b)
    for x, v in zip(a[single].tolist(), values[single].tolist(), strict=True):
        yield (x,), v
    for x, y, v in zip(a[pair].tolist(), b[pair].tolist(), values[pair].tolist(), strict=True):
        yield (x, y), v


def _frequent_pairs(counter: Any, k: int) -> list[tuple[int, int]]:
    """Sets of two classes with count >= k (the second level of the Apriori join)."""
    if counter.dense is not None:
        rows, cols = np.nonzero(np.triu(counter.dense >= k, 1))
        return list(zip(rows.tolist(), cols.tolist(), strict=True))
    n = max(counter.n_classes, 1)
    a, b = counter.keys // n, counter.keys % n
    keep = (a < b) & (counter.values >= k)
    return list(zip(a[keep].tolist(), b[keep].tolist(), strict=True))


def _wider_below(counter: Any, k: int, m: int) -> Iterator[tuple[tuple[int, ...], int]]:
    """Sets of 3..m classes with a count in [1, k-1], level by level; stops
    after the first level that has any (module docstring)."""
    current: list[tuple[int, ...]] = sorted(_frequent_pairs(counter, k))
    rows: dict[tuple[int, ...], np.ndarray] = {
        (a, b): np.intersect1d(counter.class_rows[a], counter.class_rows[b], assume_unique=True) for a, b in current
    }
    for _ in range(3, m + 1):
        found = False
        by_prefix: dict[tuple[int, ...], list[int]] = {}
        for itemset in current:
            by_prefix.setdefault(itemset[:-1], []).append(itemset[-1])
        level_sets = set(current)
        following: list[tuple[int, ...]] = []
        following_rows: dict[tuple[int, ...], np.ndarray] = {}
        for prefix, lasts in by_prefix.items():
            for i, x in enumerate(lasts):
                for y in lasts[i + 1 :]:
                    candidate = (*prefix, x, y)
                    if any(candidate[:j] + candidate[j + 1 :] not in level_sets for j in range(len(candidate) - 2)):
                        continue  # a (j-1)-subset is not frequent: checked at its own level
                    common = np.intersect1d(rows[(*prefix, x)], counter.class_rows[y], assume_unique=True)
                    count = int(counter.weights[common].sum())
                    if 1 <= count < k:
                        found = True
                        yield candidate, count
                    elif count >= k:
                        following.append(candidate)
                        following_rows[candidate] = common
        if found or not following:
            return
        current, rows = sorted(following), following_rows


class KmAnonymityOfRecords(Verifier):
    name = "km-anonymity-records"
    summary = "No set of up to m known items is covered by between 1 and k-1 published records."
    params = (K_CHECKED, M_CHECKED)
    applies_to: ClassVar[tuple[str, ...]] = ("generalized", "sanitized")
    proves: ClassVar[tuple[str, ...]] = ("km-anonymity",)

    def verify(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Certificate]:
        start = time.perf_counter()
        k, m = level(release, params, "k"), level(release, params, "m")
        with ctx.stage("k^m-anonymity of records"):
            counter = _counter(release)
            failing = [(s, c) for s, c in _pairs_below(counter, k) if len(s) <= m]
            if not failing and m >= 3:
                failing = list(_wider_below(counter, k, m))
        representative: dict[int, str] = {}
        for label in sorted(counter.class_of, key=label_sort_key):
            representative.setdefault(counter.class_of[label], label)
        failing.sort(key=lambda pair: (len(pair[0]), pair[1], pair[0]))

        def itemset(classes: tuple[int, ...]) -> list[str]:
            return sorted(representative[c] for c in classes)

        details: dict[str, Any] = {
            "k": k,
            "m": m,
            "records": len(release.records),
            "classes": counter.n_classes,
            "violations": len(failing),
        }
        witness = None
        if failing:
            classes, count = failing[0]
            witness = {"itemset": itemset(classes), "covering_records": count, "k": k}
            details["witnesses"] = [
                {"itemset": itemset(s), "covering_records": c} for s, c in failing[1 : MAX_WITNESSES + 1]
            ]
        return [
            Certificate(
                self.name,
                not failing,
                "gram",
                counter.n_classes,
                round(time.perf_counter() - start, 4),
                witness,
                details,
            )
        ]
