"""Decoys: the hardened repair applied to untouched chunks, so that a chunk
that looks repaired is repaired with probability at most a stated bound
(issue 17, item 3).

Under the hardened rules a repaired chunk has a *shape*
(:data:`privtool.attacks.preimage.Shape`: it admits pre-images, with its kind,
``|I|`` and the number ``|M|`` of items at its smallest support), and few
untouched chunks have one: the ``preimage`` attack's existence test tells the
adversary which chunks were repaired. The decoy rule, with bound ``beta``
(``0 < beta < 1``), public like the rest of the algorithm:

1. **Survey** (per cluster, in the workers: :meth:`DecoyRule.survey`). After
   the repairs, each published chunk's shape; for every untouched chunk of
   two items or more that has none, the hardened repair run on it as if it
   were vulnerable (step A makes its cheapest item covered, then more while
   A's goal is not met; step B; random draws from
   ``seeds.rng(name, "decoy", owner, kind, index)``), kept as a *candidate*
   when the preconditions hold. Its output is a chunk the repair of a
   vulnerable chunk can publish, so it has a shape.
2. **Selection** (release-wide, :meth:`DecoyRule.select`). For each shape
   ``s`` with ``r`` repaired chunks, ``u`` untouched chunks of that shape and
   ``c`` candidates whose output has it: the fewest decoys ``d`` with
   ``r <= beta (r + u + d)``, drawn uniformly among the ``c`` candidates
   (``seeds.rng(name, "decoys", *s)``). When ``c`` is too small, all ``c`` are
   used and the repaired chunks of that shape are cut down to the most the
   bound allows, ``floor(beta (u + c) / (1 - beta))``, by removing a uniform
   draw of them (the paper's fallback; trail notes ``failed_preconditions:
   ["D"]``).

Every computation uses the cluster sizes before sanitizing (for shared
chunks, their joint clusters' input sizes); the published sizes are never
smaller, and more rows only add pre-images, so each chunk counted with a shape
still has it in the release and the bound holds there
(docs/algorithms/safe-disassociation.md, "Decoys", theorem 3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from privtool.attacks.cover import ChunkCover, ChunkRef, analyse_chunk
from privtool.attacks.preimage import Rules, Shape, repair_shape
from privtool.context import SeedSplitter

from .partial import failed_preconditions
from .sanitizer import ChunkAction, ChunkSetResult, Limits, Variant, suppressed_action

DROPPED = "D"
"""The failed-precondition code of a repaired chunk removed because too few
decoys could hide it."""


@dataclass(frozen=True)
class Surveyed:
    """One published chunk of a :class:`ChunkSetResult` after the repairs:
    ``shape`` as published (None: it admits no pre-image); ``cover`` the
    input chunk's analysis when it was repaired (to remove it); ``decoy`` the
    repair applied to it (its content: label rows, or what
    :meth:`ChunkSetResult.stored` made of them) and ``decoy_shape`` its shape,
    for a candidate."""

    index: int
    shape: Shape | None
    cover: ChunkCover | None = None
    decoy: tuple[Any, ChunkAction] | None = None
    decoy_shape: Shape | None = None

    @property
    def repaired(self) -> bool:
        return self.cover is not None


def decoys_needed(repaired: int, lookalikes: int, bound: Fraction) -> int:
    """The fewest decoys ``d`` with ``repaired <= bound (repaired + lookalikes + d)``."""
    return max(0, math.ceil(repaired / bound) - repaired - lookalikes)


def repairs_kept(others: int, bound: Fraction) -> int:
    """The most repaired chunks ``r`` with ``r <= bound (r + others)``."""
    return math.floor(bound * others / (1 - bound))


@dataclass(frozen=True)
class DecoyRule:
    """The decoy rule at ``bound`` (the module docstring)."""

    bound: Fraction

    def survey(
        self,
        owner: str,
        kind: str,
        chunks: Sequence[Sequence[Sequence[str]]],
        result: ChunkSetResult,
        limits: Limits,
        seeds: SeedSplitter,
        variant: Variant,
    ) -> list[Surveyed]:
        """Step 1 on the chunks of one owner (``chunks`` as they came in,
        ``result`` after the repairs): the published chunks the selection
        counts (repaired, with a shape, or a candidate), in chunk order."""
        repaired = {a.ref.index for a in result.actions if a.action == "partial"}
        wanted = limits.min_preimages or limits.k

        def rules(rows: int) -> Rules:
            return Rules(variant.name, limits.k, limits.m, limits.capacity, max(limits.records, rows), wanted)

        out = []
        for index, rows in result.published(chunks):
            ref = ChunkRef(owner, kind, index)
            shape = repair_shape(rows, kind, rules(len(rows)))
            if index in repaired:
                if shape is None:
                    raise RuntimeError(f"repaired chunk {ref} admits no pre-image (theorem 2 broken)")
                out.append(Surveyed(index, shape, cover=analyse_chunk(chunks[index], ref)))
                continue
            if shape is not None:
                out.append(Surveyed(index, shape))
                continue
            cover = analyse_chunk(rows, ref)
            if not _may_repair(cover, limits):
                continue  # neither a look-alike nor a candidate: nothing the selection counts
            decoy, action = variant.repair(rows, cover, limits, seeds.rng(variant.name, "decoy", owner, kind, index))
            if decoy is None:
                continue
            decoy_shape = repair_shape(decoy, kind, rules(len(decoy)))
            if decoy_shape is None:
                raise RuntimeError(f"the decoy of chunk {ref} admits no pre-image (theorem 3 broken)")
            out.append(Surveyed(index, None, decoy=(decoy, replace(action, action="decoy")), decoy_shape=decoy_shape))
        return out

    def select(self, results: Sequence[ChunkSetResult], seeds: SeedSplitter, name: str) -> None:
        """Step 2 over every result of the release; applies the decoys and
        removals to ``results`` in place."""
        repaired: dict[Shape, list[tuple[ChunkSetResult, Surveyed]]] = {}
        lookalikes: dict[Shape, int] = {}
        candidates: dict[Shape, list[tuple[ChunkSetResult, Surveyed]]] = {}
        for result in results:
            for item in result.survey:
                if item.repaired:
                    assert item.shape is not None
                    repaired.setdefault(item.shape, []).append((result, item))
                elif item.shape is not None:
                    lookalikes[item.shape] = lookalikes.get(item.shape, 0) + 1
                elif item.decoy_shape is not None:
                    candidates.setdefault(item.decoy_shape, []).append((result, item))
        for shape in sorted(repaired):
            chunks, pool = repaired[shape], candidates.get(shape, [])
            rng = seeds.rng(name, "decoys", *shape)
            need = decoys_needed(len(chunks), lookalikes.get(shape, 0), self.bound)
            chosen = sorted(rng.choice(len(pool), min(need, len(pool)), replace=False).tolist())
            for pos in chosen:
                result, item = pool[pos]
                assert item.decoy is not None
                result.changed[item.index], action = item.decoy
                result.actions.append(action)
            if need > len(pool):
                keep = repairs_kept(lookalikes.get(shape, 0) + len(pool), self.bound)
                for pos in sorted(rng.choice(len(chunks), len(chunks) - keep, replace=False).tolist()):
                    _remove(*chunks[pos])


def _may_repair(cover: ChunkCover, limits: Limits) -> bool:
    """Whether preconditions (4) and (R) can hold after step A: it never
    touches the sub-records equal to ``I``, so with ``s(I) >= 1`` it keeps
    ``I`` and ``s(I)``; checking them first spares step A's search on the
    many chunks they rule out."""
    width = len(cover.itemset)
    return width >= 2 and not set(failed_preconditions(0, cover.itemset_support, width, limits.k, limits.m, 2)) - {"3"}


def _remove(result: ChunkSetResult, item: Surveyed) -> None:
    """Undo the repair of a chunk and remove it instead (the fallback)."""
    assert item.cover is not None
    result.changed[item.index] = None
    at = next(i for i, a in enumerate(result.actions) if a.ref.index == item.index and a.action == "partial")
    result.actions[at] = suppressed_action(item.cover, [DROPPED])
