"""Exact assignment of published records to distinct original records.

Used when no trail says which input record became which published one: a
sanitized record must come from a distinct original superset, a generalized
record from a distinct original record it generalizes. Both are bipartite
b-matchings between *groups* of identical records (capacity = multiplicity),
solved as a maximum matching (augmenting paths, or scipy's maximum flow
for large cases); a perfect matching of the published side
exists iff the flow saturates it.

For containment (sanitized data) identical records are matched first: if some
perfect matching pairs a published record p with o' while an identical original
o = p is left over or paired with p' ⊆ o, swapping gives p -> o and p' -> o'
(p' ⊆ p ⊆ o'), so pairing identical records never loses a perfect matching.
Only the records that changed reach the flow.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

Record = tuple[str, ...]


SMALL_MATCHING = 256
"""Published records (with multiplicity) up to which :func:`_augmenting_unmatched`
runs instead of the general maximum flow."""


def _flow_unmatched(
    published: Counter[Record], originals: Counter[Record], candidates: Callable[[Record], Iterable[Record]]
) -> Counter[Record]:
    """Published records (with multiplicity) that a maximum matching leaves unmatched.

    Small cases (every chunk of a disassociated release but the largest shared
    chunks) use augmenting paths in Python (:func:`_augmenting_unmatched`), a
    few microseconds each; larger ones a maximum flow in C (:func:`_scipy_unmatched`),
    whose set-up costs about a millisecond. Both are exact; the size of the
    maximum matching, hence whether one is perfect, is the same for both."""
    if not published:
        return Counter()
    lists = {p: list(candidates(p)) for p in published}
    if sum(published.values()) <= SMALL_MATCHING:
        return _augmenting_unmatched(published, originals, lists)
    return _scipy_unmatched(published, originals, lists)


def _augmenting_unmatched(
    published: Counter[Record], originals: Counter[Record], lists: dict[Record, list[Record]]
) -> Counter[Record]:
    """Kuhn's augmenting paths for a b-matching: each copy of a published record
    needs one slot of a candidate original group (``originals[o]`` slots). A
    search visits each original group at most once (a depth-first search in
    the residual network of the flow formulation), so each copy costs
    O(edges) and the result is a maximum matching."""
    copies = [p for p, count in published.items() for _ in range(count)]
    holders: dict[Record, list[int]] = {o: [] for o in originals}

    def place(copy: int, seen: set[Record]) -> bool:
        for o in lists[copies[copy]]:
            if o in seen:
                continue
            seen.add(o)
            if len(holders[o]) < originals[o]:
                holders[o].append(copy)
                return True
            for n, other in enumerate(holders[o]):
                if place(other, seen):
                    holders[o][n] = copy
                    return True
        return False

    unmatched: Counter[Record] = Counter()
    for copy, p in enumerate(copies):
        if not place(copy, set()):
            unmatched[p] += 1
    return unmatched


def _scipy_unmatched(
    published: Counter[Record], originals: Counter[Record], lists: dict[Record, list[Record]]
) -> Counter[Record]:
    """The same by scipy's Dinic maximum flow: source -> published group
    (capacity: its multiplicity) -> every candidate original group (capacity:
    the published multiplicity, i.e. unbounded) -> sink (capacity: the
    original multiplicity)."""
    import numpy as np
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import maximum_flow

    pub = list(published)
    orig = {o: n for n, o in enumerate(originals)}
    first_o, sink = 1 + len(pub), 1 + len(pub) + len(orig)
    tails, heads, caps = [], [], []
    for n, p in enumerate(pub, start=1):
        tails.append(0)
        heads.append(n)
        caps.append(published[p])
        for o in lists[p]:
            tails.append(n)
            heads.append(first_o + orig[o])
            caps.append(published[p])
    if len(tails) == len(pub):  # no published record has a candidate
        return Counter(published)
    for o, n in orig.items():
        tails.append(first_o + n)
        heads.append(sink)
        caps.append(originals[o])
    graph = csr_array(
        (np.asarray(caps, dtype=np.int32), (np.asarray(tails), np.asarray(heads))), shape=(sink + 1, sink + 1)
    )
    sent = maximum_flow(graph, 0, sink, method="dinic").flow[[0], 1 : 1 + len(pub)].toarray().ravel().tolist()
    return Counter({p: published[p] - s for p, s in zip(pub, sent, strict=False) if s < published[p]})


def unmatched_subsets(published: Sequence[Record], originals: Sequence[Record]) -> Counter[Record]:
    """Published records that cannot each be given a distinct original superset
    (empty Counter: a matching exists)."""
    pub = Counter(tuple(sorted(set(r))) for r in published)
    orig = Counter(tuple(sorted(set(r))) for r in originals)
    for record in list(pub):
        same = min(pub[record], orig.get(record, 0))
        if same:
            pub[record] -= same
            orig[record] -= same
    pub = +pub
    orig = +orig
    rest = [(o, set(o)) for o in orig]

    def supersets(p: Record) -> Iterable[Record]:
        wanted = set(p)
        return [o for o, items in rest if wanted <= items]

    return _flow_unmatched(pub, orig, supersets)


def unmatched_generalizations(
    published: Sequence[Record], originals: Sequence[Record], ancestors: dict[str, frozenset[str]]
) -> Counter[Record]:
    """Published generalized records that cannot each be given a distinct original
    record they generalize. ``ancestors[item]`` is the set of ancestors-or-self of
    a hierarchy node. g generalizes o when every item of o has an
    ancestor-or-self in g and every label of g is the deepest such label of at
    least one item of o (the deepest-cover reading of a record with nested
    labels, docs/formats.md: each item is published as its deepest cover)."""
    pub = Counter(tuple(sorted(set(r))) for r in published)
    orig = Counter(tuple(sorted(set(r))) for r in originals)
    # every label of a candidate g is an ancestor-or-self of an item of o, so g is
    # found under its rarest label among o's ancestors: one probe per (o, g) pair,
    # and labels near the root (in many forms) are rarely a form's rarest
    forms_with: Counter[str] = Counter(label for g in pub for label in g)
    by_rarest: dict[str, list[tuple[Record, frozenset[str]]]] = {}
    for g in pub:
        if g:
            by_rarest.setdefault(min(g, key=lambda label: (forms_with[label], label)), []).append((g, frozenset(g)))
    candidates_of: dict[Record, list[Record]] = {g: [] for g in pub}
    for o in orig:
        if not o:
            if () in candidates_of:
                candidates_of[()].append(o)
            continue
        above = frozenset().union(*(ancestors.get(item, frozenset()) for item in o))
        for label in above:
            for g, labels in by_rarest.get(label, ()):
                if labels <= above and generalizes(g, o, ancestors):
                    candidates_of[g].append(o)
    return _flow_unmatched(pub, orig, lambda g: candidates_of[g])


def assignment_is_matching(
    published: Sequence[Record],
    originals: Sequence[Record],
    assignment: Sequence[object],
    labels_of: Mapping[object, Sequence[str]],
    ancestors: dict[str, frozenset[str]],
) -> bool:
    """Whether a claimed assignment (original record ``i`` is published as the
    labels ``labels_of[assignment[i]]``) is a perfect matching: every original
    record is generalized by its claimed record and the claimed records are
    exactly the published multiset. A valid assignment is a certificate checked
    in linear time (the trail is not trusted: it is checked); when it fails,
    :func:`unmatched_generalizations` searches for a matching itself."""
    if len(assignment) != len(originals):
        return False
    claimed: Counter[Record] = Counter()
    for original, group in zip(originals, assignment, strict=False):
        labels = labels_of.get(group) if isinstance(group, str) else None
        if labels is None:
            return False
        record = tuple(sorted(set(labels)))
        if not generalizes(record, tuple(original), ancestors):
            return False
        claimed[record] += 1
    return claimed == Counter(tuple(sorted(set(r))) for r in published)


def generalizes(g: Record, o: Record, ancestors: dict[str, frozenset[str]]) -> bool:
    """See :func:`unmatched_generalizations`."""
    labels = set(g)
    used: set[str] = set()
    for item in o:
        above = ancestors.get(item)
        if above is None:
            return False
        hit = labels & above
        if not hit:
            return False
        # the deepest cover: the label with the most ancestors (they form a chain)
        used.add(max(hit, key=lambda label: len(ancestors[label])))
    return used == labels
