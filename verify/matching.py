"""Exact assignment of published records to distinct original records.

Used when no trail says which input record became which published one: a
sanitized record must come from a distinct original superset, a generalized
record from a distinct original record it generalizes. Both are bipartite
b-matchings between *groups* of identical records (capacity = multiplicity),
solved as a maximum flow (networkx); a perfect matching of the published side
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


def _flow_unmatched(
    published: Counter[Record], originals: Counter[Record], candidates: Callable[[Record], Iterable[Record]]
) -> Counter[Record]:
    """Published records (with multiplicity) that a maximum flow leaves unmatched."""
    import networkx as nx

    if not published:
        return Counter()
    graph = nx.DiGraph()
    for p, count in published.items():
        graph.add_edge("source", ("p", p), capacity=count)
        for o in candidates(p):
            graph.add_edge(("p", p), ("o", o))  # no capacity attribute: unbounded
    for o, count in originals.items():
        graph.add_edge(("o", o), "sink", capacity=count)
    if "sink" not in graph:
        return Counter(published)
    _, flow = nx.maximum_flow(graph, "source", "sink")
    unmatched: Counter[Record] = Counter()
    for p, count in published.items():
        sent = flow["source"][("p", p)]
        if sent < count:
            unmatched[p] = count - sent
    return unmatched


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
    for original, group in zip(originals, assignment):
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
