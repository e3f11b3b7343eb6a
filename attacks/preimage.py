"""Inverting the published safe-disassociation rules: the pre-images of a chunk.

Adversary model (algorithm-aware): the adversary knows the release and the
published sanitizer, and for a chunk considers every chunk the sanitizer could
have turned into it; a covered item is learnt when it is covered in all of them.

Safe disassociation (Awad et al., section 4.1) turns a vulnerable chunk ``R``
(itemset ``I``, ``t = s(I, R)`` sub-records equal to ``I``) into ``R'`` by
*partial suppression*: ``card = ceil(|I|/2)`` sub-records equal to ``I`` each
lose one part of a partition of ``I`` into pairs (and one singleton when
``|I|`` is odd), and two ghost sub-records ``L1``, ``L2`` take one item of each
pair (the singleton goes to one of them). Every rule is public, so the inverse
is a finite search (:func:`partial_suppression_inverses`): two sub-records
``G1``, ``G2`` of ``R'`` that split ``I`` into halves (``|G1| = ceil(|I|/2)``),
a perfect matching of the items of ``G2`` with items of ``G1`` such that for
each pair ``P`` the sub-record ``I \\ P`` is in ``R'`` (for ``|I| = 2`` the
touched sub-record left the chunk), and for odd ``|I|`` the unmatched item
``s`` of ``G1`` with ``I \\ {s}`` in ``R'``. Removing those sub-records and
putting back ``card`` copies of ``I`` gives the chunk before suppression.

Partial suppression keeps every item's support (lemma 2) and lowers
``s(I)`` by exactly ``card``, so a chunk before suppression has
``t = s(I, R') + card`` and its covered items are exactly those whose published
support is ``t``: a quick screen (:func:`screen`) discards every chunk whose
smallest support is not ``s(I, R') + card``, and for the paper's rules every
pre-image has the same covered items (docs/algorithms/safe-disassociation.md,
"The algorithm-aware adversary", theorem 1).

Two rule sets are inverted:

* ``safe-disassociation`` (:data:`FAITHFUL`): the pre-images are the chunks
  before partial suppression that are vulnerable and meet preconditions (3),
  (4) and (R).
* ``safe-disassociation-hardened`` (:data:`HARDENED`): before partial
  suppression the sanitizer makes the cheapest covering item covered too (it
  removes that item from every sub-record that is not ``I``), and it publishes
  a repaired chunk only when the chunk has at least ``k`` pre-images; see
  :func:`hardened_preimages`.

Every sub-record is a bitmask over the chunk's items (``I`` sorted
canonically, bit ``i`` = ``I[i]``) and a chunk a ``Counter`` of masks: no
Python object per item occurrence.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from privtool.dataset import label_sort_key

FAITHFUL = "safe-disassociation"
HARDENED = "safe-disassociation-hardened"
RULES = (FAITHFUL, HARDENED)

Masks = Counter[int]
"""A chunk: sub-record bitmask -> number of sub-records."""


@dataclass(frozen=True)
class Rules:
    """What the adversary knows of the sanitizer that made a chunk.

    ``capacity`` is the largest chunk partial suppression applies to
    (precondition (3): ``delta - 2`` for record chunks, ``N - 2`` for shared
    chunks over ``N`` records); ``records`` the number of records the chunk
    spreads over in the release (the cluster size, or ``N``);
    ``min_preimages`` the hardened rules' step C threshold (0: k)."""

    name: str
    k: int
    m: int
    capacity: int
    records: int
    min_preimages: int = 0

    @property
    def wanted(self) -> int:
        """Step C of the hardened rules: the fewest pre-images a repaired chunk
        keeps (the parameter ``min_preimages``, by default k)."""
        return self.min_preimages or self.k


@dataclass(frozen=True)
class EncodedChunk:
    """A chunk as bitmasks: ``items`` is ``I`` in canonical order."""

    items: tuple[str, ...]
    masks: Masks

    @property
    def full(self) -> int:
        return (1 << len(self.items)) - 1

    def supports(self) -> list[int]:
        out = [0] * len(self.items)
        for mask, count in self.masks.items():
            bits = mask
            while bits:
                low = bits & -bits
                out[low.bit_length() - 1] += count
                bits ^= low
        return out

    def rows(self) -> int:
        return sum(self.masks.values())

    def decode(self, masks: Masks) -> list[list[str]]:
        """Sub-records of ``masks`` as label lists (canonical order)."""
        out = []
        for mask in sorted(masks):
            row = [x for i, x in enumerate(self.items) if mask >> i & 1]
            out.extend([row] * masks[mask])
        return out


def encode(rows: Sequence[Sequence[str]]) -> EncodedChunk:
    """The chunk ``rows`` (non-empty sub-records) as bitmasks."""
    items = tuple(sorted({x for row in rows for x in row}, key=label_sort_key))
    index = {x: i for i, x in enumerate(items)}
    masks: Masks = Counter()
    for row in rows:
        mask = 0
        for x in row:
            mask |= 1 << index[x]
        masks[mask] += 1
    return EncodedChunk(items, masks)


def card_of(width: int) -> int:
    """``card = ceil(|I|/2)``: the sub-records partial suppression touches."""
    return math.ceil(width / 2)


@dataclass(frozen=True)
class Screen:
    """What the counts alone say about a chunk: ``t`` is ``s(I)`` before
    suppression (``s(I, R') + card``) and ``covered`` the items that would be
    covered then (published support ``t``); ``possible`` is False when no
    pre-image can exist (fewer than two items, smallest support not ``t``, or a
    precondition that depends on counts only fails)."""

    possible: bool
    t: int = 0
    card: int = 0
    covered: int = 0


def screen(chunk: EncodedChunk, rules: Rules) -> Screen:
    """The counting conditions every sanitized pre-image must meet."""
    width = len(chunk.items)
    if width < 2:
        return Screen(False)
    supports = chunk.supports()
    card = card_of(width)
    t = chunk.masks.get(chunk.full, 0) + card
    if min(supports) != t:
        return Screen(False)
    touched_left = card if width >= 3 else 0  # |I| = 2: the touched sub-record leaves the chunk
    before = chunk.rows() - 2 - touched_left + card
    if before > rules.capacity or t < rules.k + min(card, rules.m) or t < card:
        return Screen(False)
    covered = sum(1 << i for i, s in enumerate(supports) if s == t)
    return Screen(True, t, card, covered)


def partial_suppression_inverses(chunk: EncodedChunk, card: int) -> Iterator[Masks]:
    """Every multiset of sub-records of ``chunk`` that partial suppression can
    have added (the two ghosts and the ``card`` touched sub-records), each once.
    The chunk before suppression is ``chunk - removed + card x I``."""
    full = chunk.full
    width = len(chunk.items)
    big, small = card, width - card
    masks = chunk.masks
    seen: set[tuple[tuple[int, int], ...]] = set()
    for g1 in sorted(m for m in masks if m.bit_count() == big):
        g2 = full ^ g1
        if masks.get(g2, 0) < 1 or (big == small and g2 < g1):
            continue
        available = Counter(masks)
        available[g1] -= 1
        available[g2] -= 1
        if available[g1] < 0 or available[g2] < 0:
            continue
        left = [i for i in range(width) if g2 >> i & 1]
        right = [i for i in range(width) if g1 >> i & 1]
        for touched in _matchings(left, right, full, width, available):
            removed: Masks = Counter({g1: 1})
            removed[g2] += 1
            for mask in touched:
                removed[mask] += 1
            key = tuple(sorted(removed.items()))
            if key not in seen:
                seen.add(key)
                yield removed


def _matchings(left: list[int], right: list[int], full: int, width: int, available: Masks) -> Iterator[list[int]]:
    """Pairings of every item of ``left`` with a distinct item of ``right`` (the
    leftover item of ``right`` is the singleton part when ``|I|`` is odd) whose
    touched sub-records ``I \\ part`` are available; yields the touched
    sub-records (none for ``|I| = 2``, where the touched sub-record left)."""
    used: list[int] = []

    def rec(pos: int, free: int) -> Iterator[list[int]]:
        if pos == len(left):
            if free:  # odd |I|: the singleton part
                touched = full ^ free
                if available[touched] > 0:
                    yield [*used, touched]
            else:
                yield list(used)
            return
        x = left[pos]
        bits = free
        while bits:
            low = bits & -bits
            bits ^= low
            part = (1 << x) | low
            touched = full ^ part
            if width == 2:
                yield from rec(pos + 1, free ^ low)
                continue
            if available[touched] > 0:
                available[touched] -= 1
                used.append(touched)
                yield from rec(pos + 1, free ^ low)
                used.pop()
                available[touched] += 1

    free = 0
    for i in right:
        free |= 1 << i
    yield from rec(0, free)


def before_suppression(chunk: EncodedChunk, removed: Masks, card: int) -> Masks:
    """The chunk partial suppression started from, given what it added."""
    out = Counter(chunk.masks)
    out.subtract(removed)
    out[chunk.full] += card
    return +out


@dataclass
class Inversion:
    """The sanitized pre-images of one chunk.

    ``count`` is the number of distinct pre-images found, stopped at ``cap``
    (``exhausted`` is True when no more exist; for the hardened rules it is a
    lower bound, see :func:`hardened_preimages`); ``covered_in_all`` the items
    covered in every pre-image (as labels; empty when there is no pre-image);
    ``example`` one pre-image (the only one when ``count == 1`` and
    ``exhausted``)."""

    items: tuple[str, ...]
    count: int = 0
    exhausted: bool = True
    covered_in_all: tuple[str, ...] = ()
    example: list[list[str]] | None = None


def _key(masks: Masks) -> tuple[tuple[int, int], ...]:
    return tuple(sorted(masks.items()))


def faithful_preimages(chunk: EncodedChunk, rules: Rules, cap: int) -> Inversion:
    """Pre-images under the paper's rules: the chunks before partial
    suppression. All have the covered items of :func:`screen`."""
    out = Inversion(chunk.items)
    scr = screen(chunk, rules)
    if not scr.possible:
        return out
    seen: set[tuple[tuple[int, int], ...]] = set()
    for removed in partial_suppression_inverses(chunk, scr.card):
        before = before_suppression(chunk, removed, scr.card)
        key = _key(before)
        if key in seen:
            continue
        seen.add(key)
        if out.example is None:
            out.example = chunk.decode(before)
        if len(seen) >= cap:
            out.exhausted = False
            break
    out.count = len(seen)
    if out.count:
        out.covered_in_all = tuple(x for i, x in enumerate(chunk.items) if scr.covered >> i & 1)
    return out


def restorations(chunk: EncodedChunk, before: Masks, z: int, limit: int, room: int, cap: int) -> Iterator[Masks]:
    """Chunks whose hardening step A, with ``z`` as the item it makes covered,
    gives ``before``: ``z`` is added back to ``e`` sub-records (``1 <= e <=
    limit``) that lack it and do not become ``I`` (existing ones, or up to
    ``room`` empty rows, which become ``{z}``). At most ``cap`` are yielded."""
    full = chunk.full
    bit = 1 << z
    slots = sorted(m for m in before if m != full and not m & bit and (m | bit) != full)
    bins = [(m, before[m]) for m in slots] + ([(0, room)] if room > 0 else [])
    made = 0
    for e in range(1, min(limit, sum(c for _, c in bins)) + 1):
        for choice in _multisets(bins, e):
            out = Counter(before)
            for mask, count in choice:
                if mask:
                    out[mask] -= count
                out[mask | bit] += count
            yield +out
            made += 1
            if made >= cap:
                return


def _multisets(bins: list[tuple[int, int]], size: int) -> Iterator[list[tuple[int, int]]]:
    """Ways to take ``size`` elements from typed bins with capacities."""

    def rec(pos: int, left: int) -> Iterator[list[tuple[int, int]]]:
        if left == 0:
            yield []
            return
        if pos == len(bins):
            return
        mask, capacity = bins[pos]
        for take in range(min(capacity, left), -1, -1):
            for rest in rec(pos + 1, left - take):
                yield ([(mask, take)] if take else []) + rest

    yield from rec(0, size)


def one_step_preimages(chunk: EncodedChunk, before: Masks, records: int, cap: int) -> list[tuple[Masks, int]]:
    """The chunks one hardening step A turns into ``before`` (``R1``), with
    their covered items, at most ``cap`` of them: ``R1`` itself when every item
    is covered (step A had nothing to do), and for each covered item ``z`` of
    ``R1`` (there must be two or more) ``R1`` with ``z`` put back by
    :func:`restorations`, where ``z`` is the item step A picks: the covering
    item of smallest support, ties to the first label (``t + e`` at most the
    smallest support ``u`` of the items ``R1`` does not cover, and below it
    when one of those comes first), in a chunk that fits in ``records`` rows.
    Their number is ``r(R1)`` of the hardened rules. The list has one
    pre-image per covered item of ``R1`` that has one before it is cut at
    ``cap``."""
    items = EncodedChunk(chunk.items, before)
    supports = items.supports()
    t = before.get(chunk.full, 0)
    covered = sum(1 << i for i, s in enumerate(supports) if s == t)
    if covered.bit_count() < 2 or t < 1:
        return []
    out: list[tuple[Masks, int]] = []
    if covered == chunk.full:
        out.append((before, covered))
    outside = [(s, i) for i, s in enumerate(supports) if not covered >> i & 1]
    room = records - sum(before.values())
    streams = []
    for z in range(len(chunk.items)):
        if covered >> z & 1:
            if outside:
                u, first = min(outside)  # the cheapest uncovered item, first label on ties
                limit = u - t if z < first else u - t - 1
            else:
                limit = records
            streams.append((covered ^ (1 << z), restorations(chunk, before, z, limit, room, cap)))
    # one pre-image per covered item first, whatever the cap, so that a capped
    # list still shows every item uncovered somewhere; then the rest
    for left, stream in streams:
        for restored in stream:
            out.append((restored, left))
            break
    for left, stream in streams:
        for restored in stream:
            if len(out) >= cap:
                return out
            out.append((restored, left))
    return out


def covered_in_all(candidates: Sequence[tuple[Masks, int]], full: int) -> int:
    """The items covered in every one of ``candidates`` (a bitmask)."""
    common = full
    for _, covered in candidates:
        common &= covered
    return common


def hardened_preimages(chunk: EncodedChunk, rules: Rules, cap: int) -> Inversion:
    """Pre-images under the hardened rules (``safe-disassociation-hardened``).

    The hardened sanitizer, on a vulnerable chunk ``R0``: (A) makes the covering
    item of smallest support (ties to the first label) covered, by removing it
    from every sub-record that is not ``I``, at least once and again while some
    item is covering and ``R1`` has fewer than ``min_preimages`` one-step
    pre-images (:func:`one_step_preimages`) or an item covered in all of them;
    (B) the paper's partial suppression of ``R1``; (C) the fallback when a
    precondition fails or (A) ended short of its goal. So for a published
    chunk, the pre-images are reached through the ``R1`` of the paper's inverse
    that meet (A)'s goal: the chunks one step A turns into them (chunks that
    needed several steps are pre-images too; they are not enumerated, so
    ``count`` is a lower bound and ``exhausted`` False). By (A)'s goal no item
    is covered in every pre-image (docs/algorithms/safe-disassociation.md,
    theorem 2); nothing here depends on a random draw, so the guarantee holds
    for an adversary who knows the seed.
    """
    out = Inversion(chunk.items)
    scr = screen(chunk, rules)
    if not scr.possible or scr.covered.bit_count() < 2:
        return out
    want = max(cap, rules.wanted)
    seen: set[tuple[tuple[int, int], ...]] = set()
    common = chunk.full
    first: Masks | None = None
    for removed in partial_suppression_inverses(chunk, scr.card):
        before = before_suppression(chunk, removed, scr.card)
        candidates = one_step_preimages(chunk, before, rules.records, want)
        if len(candidates) < rules.wanted or covered_in_all(candidates, chunk.full):
            continue  # step A would have gone on, or step C removed the chunk
        for pre, covered in candidates:
            common &= covered
            seen.add(_key(pre))
            if first is None:
                first = pre
        if len(seen) >= want:
            break
    if first is None:
        return out
    out.count = min(len(seen), want)
    out.exhausted = False
    out.covered_in_all = tuple(x for i, x in enumerate(chunk.items) if common >> i & 1)
    out.example = chunk.decode(first)
    return out


INVERTERS = {FAITHFUL: faithful_preimages, HARDENED: hardened_preimages}


def invert(rows: Sequence[Sequence[str]], rules: Rules, cap: int) -> Inversion:
    """The pre-images of the chunk ``rows`` under ``rules`` (see the module doc)."""
    return INVERTERS[rules.name](encode(rows), rules, cap)


Shape = tuple[str, int, int]
"""What a chunk that admits pre-images shows of its repair: its kind (record
or shared), ``|I|`` and ``|M|``, the number of items at the smallest support
(the items covered before partial suppression, by the screen). Every such
chunk has the two complementary ghost-shaped sub-records, and under the
hardened rules at least ``min_preimages`` pre-images, so neither tells
chunks of one shape apart (docs/algorithms/safe-disassociation.md, "Decoys")."""


def shape_of(chunk: EncodedChunk, kind: str) -> Shape:
    """The shape of a chunk known to admit pre-images (:data:`Shape`)."""
    supports = chunk.supports()
    return (kind, len(chunk.items), supports.count(min(supports)))


def repair_shape(rows: Sequence[Sequence[str]], kind: str, rules: Rules) -> Shape | None:
    """The shape of the chunk ``rows`` when it admits a pre-image under
    ``rules`` (it looks repaired), else None: the distinguisher's test."""
    chunk = encode(rows)
    if not INVERTERS[rules.name](chunk, rules, 1).count:
        return None
    return shape_of(chunk, kind)
