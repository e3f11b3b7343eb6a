"""The pre-images of sanitized chunks (attacks/preimage.py) against brute force:
every chunk of a tiny universe is run through the sanitizers' own repair code
with every random choice, and the chunks that reach a published chunk are its
pre-images."""

from __future__ import annotations

import functools
import itertools
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from safe_examples import as_multiset, brute_covered, figure1_release

from privtool.attacks.cover import analyse_chunk
from privtool.attacks.preimage import FAITHFUL, HARDENED, Rules, invert
from privtool.components import Outcome
from privtool.context import Context
from privtool.plugins.safe_disassociation.hardened import hardened_variant
from privtool.plugins.safe_disassociation.partial import Suppression, apply_suppression, failed_preconditions
from privtool.plugins.safe_disassociation.sanitizer import safe_disassociate
from privtool.trail import Trail

Key = tuple[tuple[str, ...], ...]


def key(rows) -> Key:
    return tuple(sorted(tuple(sorted(row)) for row in rows))


@functools.cache
def universe(items: str, rows: int, full: int = 0) -> list[Key]:
    """Every chunk over exactly ``items`` with at most ``rows`` sub-records, at
    least ``full`` of them equal to ``items`` (precondition (4) needs
    ``k + min(card, m)`` of them before suppression, so a smaller universe loses
    no pre-image)."""
    subsets = [tuple(c) for size in range(1, len(items) + 1) for c in itertools.combinations(items, size)]
    whole = tuple(items)
    out = []
    for n in range(full, rows + 1):
        for rest in itertools.combinations_with_replacement(subsets, n - full):
            chunk = (whole,) * full + rest
            if chunk and set().union(*map(set, chunk)) == set(items):
                out.append(tuple(sorted(chunk)))
    return out


def all_suppressions(items: str) -> list[Suppression]:
    """Every pairing the sanitizer can draw, with both sides for a singleton."""
    out = {}
    for order in itertools.permutations(items):
        parts = [list(order[i : i + 2]) for i in range(0, len(order), 2)]
        for side in (0, 1) if len(items) % 2 else (0,):
            s = Suppression.from_parts(items, parts, side)
            out[(s.parts, s.ghosts)] = s
    return list(out.values())


def remove_outside_whole(rows, item: str, width: int) -> list[list[str]]:
    """``item`` removed from every sub-record that is not the whole itemset."""
    out = []
    for row in rows:
        rest = [x for x in row if x != item] if len(row) != width else list(row)
        if rest:
            out.append(rest)
    return out


def cheapest_uncovered(rows) -> str | None:
    """The item step A makes covered: smallest support, ties to the first label."""
    cover = analyse_chunk(rows)
    outside = [(s, x) for x, s in zip(cover.itemset, cover.supports, strict=True) if x not in cover.covered]
    return min(outside)[1] if outside else None


@functools.cache
def one_step(items: str, records: int, full: int) -> dict[Key, set[Key]]:
    """Chunk after one hardening step A -> the vulnerable chunks it comes from."""
    out: dict[Key, set[Key]] = {}
    for chunk in universe(items, records, full):
        rows = [list(r) for r in chunk]
        y = cheapest_uncovered(rows)
        if y is not None and analyse_chunk(rows).vulnerable:
            out.setdefault(key(remove_outside_whole(rows, y, len(items))), set()).add(chunk)
    return out


def goal(state: Key, items: str, k: int, records: int, full: int) -> bool:
    """Step A's goal on ``state``: at least k one-step pre-images (``state``
    itself counts when every item is covered) and none of its covered items
    covered in all of them."""
    rows = [list(r) for r in state]
    covered = brute_covered(rows)
    pre = [brute_covered([list(r) for r in p]) for p in one_step(items, records, full).get(state, set())]
    if covered == set(items):
        pre.append(covered)
    return len(pre) >= k and not set.intersection(*pre)


def tied_state(chunk: Key, items: str, k: int, records: int, full: int) -> Key:
    """The chunk step A ends with: one step, then more while the goal is not met."""
    state, steps = chunk, 0
    while True:
        rows = [list(r) for r in state]
        y = cheapest_uncovered(rows)
        if y is None or (steps and goal(state, items, k, records, full)):
            return state
        state, steps = key(remove_outside_whole(rows, y, len(items))), steps + 1


def forward(chunk: Key, items: str, k: int, m: int, capacity: int, records: int, hardened: bool) -> set[Key]:
    """Every chunk the repair of ``chunk`` can publish (every random choice)."""
    if not analyse_chunk([list(r) for r in chunk]).vulnerable:
        return set()
    full = k + min((len(items) + 1) // 2, m)
    start = tied_state(chunk, items, k, records, full) if hardened else chunk
    c = analyse_chunk([list(r) for r in start])
    if failed_preconditions(c.rows, c.itemset_support, len(items), k, m, capacity + 2):
        return set()
    if hardened and not goal(start, items, k, records, full):
        return set()  # step C
    return {key(apply_suppression([list(r) for r in start], s)) for s in all_suppressions(items)}


@functools.cache
def brute(items: str, records: int, k: int, m: int, capacity: int, hardened: bool) -> dict[Key, set[Key]]:
    """Published chunk -> its pre-images, over every chunk of at most ``records``
    sub-records (a pre-image lives in a cluster of at most ``records`` records,
    taken as the cluster's published size)."""
    pre: dict[Key, set[Key]] = {}
    full = k + min((len(items) + 1) // 2, m)
    for chunk in universe(items, records, full):
        for out in forward(chunk, items, k, m, capacity, records, hardened):
            if len(out) <= records:
                pre.setdefault(out, set()).add(chunk)
    return pre


CONFIGS = st.sampled_from(
    [
        ("ab", 5),
        ("ab", 7),
        ("abc", 6),
        ("abc", 7),
        ("abcd", 8),
    ]
)


@settings(max_examples=25, deadline=None)
@given(CONFIGS, st.integers(2, 3), st.integers(2, 3), st.integers(0, 3), st.booleans(), st.data())
def test_preimages_match_brute_force(config, k, m, slack, hardened, data) -> None:
    items, records = config
    capacity = records - 2 - slack
    pre = brute(items, records, k, m, capacity, hardened)
    rules = Rules(HARDENED if hardened else FAITHFUL, k, m, capacity, records)
    published = sorted(pre)
    probes = data.draw(st.lists(st.sampled_from(published), max_size=6)) if published else []
    others = universe(items, min(records, 5))
    probes += data.draw(st.lists(st.sampled_from(others), max_size=6))
    for chunk in probes:
        expected = pre.get(chunk, set())
        got = invert([list(r) for r in chunk], rules, cap=10**6)
        if hardened:  # one-step pre-images only: a lower bound, never fewer than k
            assert (got.count > 0) == bool(expected), (chunk, sorted(expected))
            assert got.count <= len(expected) and (not expected or got.count >= k)
        else:
            assert got.count == len(expected) and got.exhausted, (chunk, sorted(expected))
        if expected:
            common = set.intersection(*(brute_covered([list(r) for r in p]) for p in expected))
            assert set(got.covered_in_all) == common
            assert key(got.example) in expected
        else:
            assert got.covered_in_all == () and got.example is None


def test_the_hardened_rules_leave_no_item_covered_in_every_preimage() -> None:
    """Theorem 2 on every published chunk of the universes above."""
    for items, records in [("ab", 7), ("abc", 7), ("abcd", 8)]:
        for k in (2, 3):
            pre = brute(items, records, k, 2, records - 2, True)
            assert pre
            for chunks in pre.values():
                assert len(chunks) >= k
                assert set.intersection(*(brute_covered([list(r) for r in p]) for p in chunks)) == set()


def test_the_faithful_rules_fix_the_covered_items() -> None:
    """Theorem 1: every pre-image of a faithful chunk has the same covered items."""
    for items, records in [("ab", 7), ("abc", 7), ("abcd", 8)]:
        for chunks in brute(items, records, 2, 2, records - 2, False).values():
            covered = {frozenset(brute_covered([list(r) for r in p])) for p in chunks}
            assert len(covered) == 1 and covered != {frozenset()}


def _figure1_safe(seed: int, hardened: bool):
    variant = (hardened_variant(2),) if hardened else ()
    return safe_disassociate(Outcome(figure1_release(), Trail()), 2, 2, 30, Context(seed=seed), *variant)


def test_figure1_faithful_release_has_a_unique_preimage_with_d_covered() -> None:
    original = figure1_release().clusters[0].record_chunks[0]
    for seed in range(10):
        cluster = _figure1_safe(seed, False).release.clusters[0]
        chunk = cluster.record_chunks[0]
        got = invert(chunk, Rules(FAITHFUL, 2, 2, 28, cluster.size), cap=10)
        assert got.count == 1 and got.exhausted
        assert as_multiset(got.example) == as_multiset(original)
        assert got.covered_in_all == ("c", "d")


def test_figure1_hardened_release_keeps_every_item_uncovered_in_some_preimage() -> None:
    for seed in range(10):
        cluster = _figure1_safe(seed, True).release.clusters[0]
        chunk = cluster.record_chunks[0]
        assert brute_covered(chunk) == set()
        assert Counter(x for row in chunk for x in row) == Counter({"a": 6, "b": 4, "c": 4, "d": 4})
        got = invert(chunk, Rules(HARDENED, 2, 2, 28, cluster.size), cap=10)
        assert got.count >= 2
        assert got.covered_in_all == ()
