"""Partial suppression of one vulnerable chunk (safe-disassociation paper, section 4.1).

Hypothesis: ``I`` is the itemset of a chunk ``R_C`` with a covered item.
``card = ceil(|I| / 2)``. Rules:

1. a random partition ``I_1 .. I_card`` of ``I`` into pairs (the last part is a
   singleton when ``|I|`` is odd);
2. two empty ghost sub-records ``L1`` and ``L2``;
3. for each part ``I_i``: suppress ``I_i`` from a sub-record equal to ``I``
   (a different one for each part) and add its first item to ``L1``, its second
   to ``L2``;
4. add ``L1`` and ``L2`` to ``R_C``.

Preconditions, with ``delta`` the maximum cluster size:

* (3) ``|R_C| <= delta - 2`` (``|R_C|`` counts the non-empty sub-records, as
  ``R_C2 = {{e}, {e}}`` in the paper's section 3.2);
* (4) ``s(I, R_C) >= k + min(card, m)``;
* (R) ``s(I, R_C) >= card`` -- our addition: rule 3 needs ``card`` distinct
  sub-records equal to ``I``; (4) implies it when ``card <= m`` but not when
  ``card > m`` and ``k + m < card`` (e.g. ``|I| = 12``, ``k = m = 2``).

Lemma 2 (supports of single items unchanged) and the k^m argument of section
4.1.1 hold under these preconditions; the tests check both by brute force.

The random draw (:func:`draw_suppression`) is separate from its application
(:func:`apply_suppression`) so that a test can force the pairing of the paper's
Figure 2 (``Suppression.from_parts``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Suppression:
    """One application of the rules: the parts ``I_1 .. I_card`` and the two
    ghost sub-records they give."""

    itemset: tuple[str, ...]
    parts: tuple[tuple[str, ...], ...]
    ghosts: tuple[tuple[str, ...], tuple[str, ...]]

    @classmethod
    def from_parts(cls, itemset: Sequence[str], parts: Sequence[Sequence[str]], singleton_side: int = 0) -> Suppression:
        """The suppression with the given partition: the first item of each pair
        goes to ``L1``, the second to ``L2``; a singleton part goes to ghost
        ``singleton_side`` (0 for ``L1``, 1 for ``L2``)."""
        flat = [x for part in parts for x in part]
        if sorted(flat) != sorted(itemset) or len(set(flat)) != len(flat):
            raise ValueError("the parts must partition the itemset")
        if any(not 1 <= len(part) <= 2 for part in parts) or sum(len(p) == 1 for p in parts) > len(itemset) % 2:
            raise ValueError("the parts must be pairs, and one singleton when the itemset is odd")
        ghosts: tuple[list[str], list[str]] = ([], [])
        for part in parts:
            if len(part) == 2:
                ghosts[0].append(part[0])
                ghosts[1].append(part[1])
            else:
                ghosts[singleton_side].append(part[0])
        return cls(tuple(itemset), tuple(tuple(p) for p in parts), (tuple(ghosts[0]), tuple(ghosts[1])))

    @property
    def card(self) -> int:
        return len(self.parts)


def card_of(width: int) -> int:
    """``card = ceil(|I| / 2)``: the number of sub-records partial suppression touches."""
    return math.ceil(width / 2)


def failed_preconditions(rows: int, itemset_support: int, width: int, k: int, m: int, delta: int) -> list[str]:
    """Which of the preconditions (3), (4) and (R) fail (empty: partial
    suppression applies). ``rows`` is ``|R_C|``, ``itemset_support`` is ``s(I, R_C)``."""
    card = card_of(width)
    failed = []
    if rows > delta - 2:
        failed.append("3")
    if itemset_support < k + min(card, m):
        failed.append("4")
    if itemset_support < card:
        failed.append("R")
    return failed


def draw_suppression(itemset: Sequence[str], rng: np.random.Generator) -> Suppression:
    """A uniformly random pairing of ``itemset`` (rule 1) and a random side for
    the singleton of an odd itemset."""
    order = rng.permutation(len(itemset))
    shuffled = [itemset[i] for i in order]
    parts = [shuffled[i : i + 2] for i in range(0, len(shuffled), 2)]
    side = int(rng.integers(2)) if len(itemset) % 2 else 0
    return Suppression.from_parts(itemset, parts, side)


def apply_suppression(rows: Sequence[Sequence[str]], suppression: Suppression) -> list[list[str]]:
    """The chunk after rules 3 and 4: ``card`` sub-records equal to ``I`` lose one
    part each (a sub-record left empty disappears from the chunk) and the two
    ghost sub-records are added. ``rows`` must hold ``card`` copies of ``I``."""
    full = set(suppression.itemset)
    out: list[list[str]] = []
    parts = list(suppression.parts)
    for row in rows:
        if parts and len(row) == len(full) and set(row) == full:
            removed = set(parts.pop())
            rest = [x for x in row if x not in removed]
            if rest:
                out.append(rest)
        else:
            out.append(list(row))
    if parts:
        raise ValueError("the chunk has fewer sub-records equal to its itemset than card")
    out.extend(list(ghost) for ghost in suppression.ghosts if ghost)
    return out
