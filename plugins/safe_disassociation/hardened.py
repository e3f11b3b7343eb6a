"""The ``safe-disassociation-hardened`` sanitizer: safe disassociation that an
adversary who knows the algorithm cannot invert (issue 17).

The paper's partial suppression keeps every item's support and lowers
``s(I)`` by exactly ``card``, so anyone who knows the rules reads the covered
items of a repaired chunk off its published supports (the items whose support
is ``s(I, R') + card``), and usually the whole chunk before suppression
(:mod:`privtool.attacks.preimage`). The hardened repair of a vulnerable chunk
``R0`` (itemset ``I``, covered items ``L``):

A. take the covering item with the smallest support (ties to the first
   label) and remove it from every sub-record that is not ``I`` (a sub-record
   left empty leaves the chunk): it becomes covered. Do this once, then again
   while some item is covering and the chunk ``R1`` has fewer than
   ``min_preimages`` (default k) one-step pre-images or an item covered in all
   of them (:func:`privtool.attacks.preimage.one_step_preimages`, the same code
   the ``preimage`` attack and the algorithm-aware cover-freedom verifier run);
B. the paper's partial suppression of ``R1`` with its preconditions (3), (4)
   and (R) (:mod:`.partial`);
C. the fallback (the chunk is removed) when a precondition fails or step A
   ended short of its goal.

Step A is what breaks the inversion: for an item ``z`` that the published
chunk shows as possibly covered, ``R1`` with ``z`` added back to an empty row
is a chunk whose step A removes exactly that row, so it is a pre-image in
which ``z`` is not covered. Step A draws nothing at random (only the pairing
of step B does), so the guarantee holds for an adversary who knows the seed
the release's provenance publishes. The proof, and what it does not
promise, is in docs/algorithms/safe-disassociation.md ("A hardened safe
disassociation").
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from privtool.attacks.cover import ChunkCover, analyse_chunk
from privtool.attacks.preimage import HARDENED, covered_in_all, encode, one_step_preimages
from privtool.claims import Claim
from privtool.components import Outcome, Sanitizer
from privtool.context import Context
from privtool.params import K, M, Param

from .decoys import DecoyRule
from .partial import apply_suppression, draw_suppression, failed_preconditions
from .sanitizer import (
    MAX_CLUSTER_SIZE,
    ChunkAction,
    Limits,
    Variant,
    partial_action,
    safe_disassociate,
    suppressed_action,
)


def make_cheapest_covered(rows: Sequence[Sequence[str]], cover: ChunkCover) -> tuple[list[list[str]], str, int]:
    """One step A on a chunk with a covering item: the chunk with the covering
    item of smallest support (ties to the first label) made covered, that
    item, and the occurrences removed. No random draw: the rule is the same for
    an adversary who knows the seed."""
    low, index = min(  # the itemset is in canonical label order: ties go to the first label
        (s, i) for i, (x, s) in enumerate(zip(cover.itemset, cover.supports, strict=True)) if x not in cover.covered
    )
    item = cover.itemset[index]
    return covered_by_removal(rows, item, len(cover.itemset)), item, low - cover.itemset_support


def covered_by_removal(rows: Sequence[Sequence[str]], item: str, width: int) -> list[list[str]]:
    """``rows`` with ``item`` removed from every sub-record that is not the
    whole itemset (of ``width`` items); empty sub-records leave the chunk."""
    out = []
    for row in rows:
        if item in row and len(row) != width:
            rest = [x for x in row if x != item]
            if rest:
                out.append(rest)
        else:
            out.append(list(row))
    return out


def goal_met(rows: Sequence[Sequence[str]], records: int, wanted: int) -> bool:
    """Whether ``R1 = rows``, in a cluster of ``records`` records before partial
    suppression (which adds one row when ``|I| = 2`` and two otherwise), has
    ``wanted`` one-step pre-images and no item covered in all of them."""
    chunk = encode(rows)
    grown = len(rows) + (1 if len(chunk.items) == 2 else 2)
    found = one_step_preimages(chunk, chunk.masks, max(records, grown), wanted)
    return len(found) >= wanted and not covered_in_all(found, chunk.full)


def hardened_repair(
    rows: Sequence[Sequence[str]], cover: ChunkCover, limits: Limits, rng: np.random.Generator
) -> tuple[list[list[str]] | None, ChunkAction]:
    """Steps A, B and C of the module docstring on one vulnerable chunk."""
    tied, current, extra = [list(row) for row in rows], cover, 0
    made: list[str] = []
    wanted = limits.min_preimages
    while current.covering and (not made or not goal_met(tied, limits.records, wanted)):
        tied, item, removed = make_cheapest_covered(tied, current)
        current = analyse_chunk(tied, cover.ref)
        made.append(item)
        extra += removed
    width = len(current.itemset)
    failed = failed_preconditions(current.rows, current.itemset_support, width, limits.k, limits.m, limits.capacity + 2)
    if not failed and not goal_met(tied, limits.records, wanted):
        failed = ["C"]
    if failed:
        return None, suppressed_action(cover, failed)
    suppression = draw_suppression(current.itemset, rng)
    return apply_suppression(tied, suppression), partial_action(cover, suppression, extra, made)


MIN_PREIMAGES = Param(
    "min_preimages",
    int,
    None,
    "The fewest pre-images a repaired chunk keeps under the hardened rules (default: k; at least 2).",
    min=2,
)


DECOY_BOUND = Param(
    "decoy_bound",
    float,
    None,
    "With decoys: the largest share of repaired chunks among the published chunks of any repair shape, "
    "so the posterior of 'repaired' an adversary reads off a chunk's shape (default: no decoys).",
    min=0.01,
    max=0.99,
)


def hardened_variant(min_preimages: int, decoy_bound: float | None = None) -> Variant:
    """The hardened rules with step C at ``min_preimages`` pre-images, and
    decoys at ``decoy_bound`` (None: none; :mod:`.decoys`)."""
    decoys = None if decoy_bound is None else DecoyRule(Fraction(str(decoy_bound)))
    return Variant(HARDENED, hardened_repair, min_preimages, decoys)


class HardenedSafeDisassociation(Sanitizer):
    """Safe disassociation whose repaired chunks keep no covered item in any of
    their pre-images (module docstring)."""

    name = HARDENED
    summary = (
        "safe disassociation an algorithm-aware adversary cannot invert: the cheapest covering item is made covered "
        "before partial suppression, and a repaired chunk has at least k pre-images"
    )
    params = (K, M, MAX_CLUSTER_SIZE, MIN_PREIMAGES, DECOY_BOUND)
    applies_to = ("disassociated",)

    def sanitize(self, target: Outcome | Any, params: dict[str, Any], ctx: Context) -> Outcome:
        wanted = params["min_preimages"] or params["k"]
        variant = hardened_variant(wanted, params["decoy_bound"])
        return safe_disassociate(target, params["k"], params["m"], params["max_cluster_size"], ctx, variant)

    def claims(self, params: dict[str, Any], incoming: Sequence[Claim]) -> list[Claim]:
        """What the paper's sanitizer claims, with cover-freedom held against the
        algorithm-aware adversary (theorem 2 of the algorithm page; a claim
        against it covers the consistent-reconstruction adversary too)."""
        kept = [claim for claim in incoming if claim.model == "km-anonymity"]
        return [*kept, Claim("cover-freedom", {"m": params["m"]}, "algorithm-aware")]
