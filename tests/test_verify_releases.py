"""Release-level verifiers on hand-rolled releases, valid by construction or with
one planted violation, with brute-force oracles written here."""

from __future__ import annotations

import copy
from collections import Counter
from itertools import combinations, permutations, product

from assessing import certificates, failed, verifier_certificates
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from privtool.claims import Claim
from privtool.dataset import Dataset
from privtool.release import Cluster, Release
from privtool.trail import Trail
from privtool.verifiers.matching import (
    _augmenting_unmatched,
    _scipy_unmatched,
    generalizes,
    unmatched_generalizations,
    unmatched_subsets,
)

ALPHABET = "abcdefg"


# ------------------------------------------------------------- disassociated
@st.composite
def disassociated_cases(draw):
    """(original, release, trail): k copies of each distinct record, clusters made
    of whole blocks of copies, random disjoint chunk domains per cluster; every
    chunk is then k^m-anonymous and the release is faithful by construction."""
    k = draw(st.integers(2, 3))
    distinct = draw(
        st.lists(st.sets(st.sampled_from(ALPHABET), min_size=1, max_size=4).map(sorted), min_size=1, max_size=5)
    )
    blocks = [[record] * k for record in distinct]
    cut = draw(st.lists(st.booleans(), min_size=len(blocks) - 1, max_size=len(blocks) - 1))
    groups, current = [], [blocks[0]]
    for block, new in zip(blocks[1:], cut, strict=False):
        if new:
            groups.append(current)
            current = []
        current.append(block)
    groups.append(current)
    records, cluster_of, clusters = [], [], []
    for g, group in enumerate(groups):
        rows = [set(r) for block in group for r in block]
        items = sorted(set().union(*rows))
        slots = draw(st.lists(st.integers(0, 2), min_size=len(items), max_size=len(items)))
        chunks = []
        for d in range(2):
            domain = {x for x, s in zip(items, slots, strict=False) if s == d}
            projected = [sorted(r & domain) for r in rows if r & domain]
            if projected:
                chunks.append(projected)
        term = sorted(x for x, s in zip(items, slots, strict=False) if s == 2)
        clusters.append(Cluster(f"c{g}", len(rows), chunks, term))
        for r in rows:
            records.append(sorted(r))
            cluster_of.append(f"c{g}")
    original = Dataset.from_records(records)
    release = Release(
        "disassociated",
        params={"method": "hand-rolled", "k": k, "m": 2},
        claims=[Claim("km-anonymity", {"k": k, "m": 2})],
        provenance={"input_sha256": original.content_sha256()},
        stats={"records_in": len(records), "suppressed_records": 0},
        clusters=clusters,
    )
    trail = Trail(release_sha256=release.sha256(), input_sha256=original.content_sha256(), cluster_of_record=cluster_of)
    return original, release, trail


def run(registry, release, original=None, trail=None, engine="auto"):
    return certificates(registry, release, original, trail, options={"engine": engine})


def retie(release, trail):
    """The trail of a tampered release, so only the planted change is wrong."""
    return Trail(
        release_sha256=release.sha256(),
        input_sha256=trail.input_sha256,
        cluster_of_record=list(trail.cluster_of_record),
        suppressed_records=list(trail.suppressed_records),
    )


@settings(max_examples=40, deadline=None)
@given(case=disassociated_cases())
def test_valid_disassociated_release_is_certified(registry, case):
    original, release, trail = case
    certs = run(registry, release, original, trail, engine="both")
    for name in ("km-anonymity", "disassociation-guarantee", "faithfulness"):
        assert certs[name].holds is True, (name, certs[name])
    assert not failed(certs.values())


@settings(max_examples=40, deadline=None)
@given(case=disassociated_cases(), pick=st.integers(0, 1000))
def test_altered_sub_record_is_caught(registry, case, pick):
    original, release, trail = case
    tampered = copy.deepcopy(release)
    chunks = [(c, i) for c in tampered.clusters for i in range(len(c.record_chunks))]
    assume(chunks)
    cluster, index = chunks[pick % len(chunks)]
    row = cluster.record_chunks[index][0]
    cluster.record_chunks[index][0] = sorted({*row[:-1], "zz"})  # one item replaced by an invented one
    # "zz" is in no original record, which the structural check refutes first; the verifiers must refute it too
    certs = verifier_certificates(registry, tampered, original, retie(tampered, trail))
    assert certs["faithfulness"].holds is False
    witness = certs["faithfulness"].witness
    assert witness["cluster"] == cluster.id and witness["record_chunk"] == index
    assert any("zz" in r for r in witness["published_not_in_input"])
    km = certs["km-anonymity"]
    assert km.holds is False  # "zz" has support 1 < k
    assert (km.witness["cluster"], km.witness["record_chunk"]) == (cluster.id, index)
    rows = cluster.record_chunks[index]
    assert sum(1 for r in rows if set(km.witness["itemset"]) <= set(r)) == km.witness["support"] < km.witness["k"]


@settings(max_examples=40, deadline=None)
@given(case=disassociated_cases(), pick=st.integers(0, 1000))
def test_dropped_record_is_caught(registry, case, pick):
    original, release, trail = case
    position = pick % original.n_records
    unlisted = retie(release, trail)
    names = unlisted.cluster_of_record.tolist()
    names[position] = None  # neither published nor suppressed
    unlisted.cluster_of_record = names
    certs = run(registry, release, original, unlisted)
    assert certs["faithfulness"].holds is False
    assert certs["faithfulness"].witness == {
        "problem": "an original record is neither published nor counted as suppressed",
        "record": position,
    }


def test_merged_chunks_are_caught(registry):
    original = Dataset.from_records([["a", "x"], ["a", "x"], ["b", "y"], ["b", "y"]])
    chunks = [[["a"], ["a"], ["b"], ["b"]], [["x"], ["x"], ["y"], ["y"]]]
    release = Release(
        "disassociated",
        params={"k": 2, "m": 2},
        claims=[Claim("km-anonymity", {"k": 2, "m": 2})],
        provenance={"input_sha256": original.content_sha256()},
        clusters=[Cluster("c0", 4, chunks, [])],
    )
    trail = Trail(release_sha256=release.sha256(), input_sha256=original.content_sha256(), cluster_of_record=["c0"] * 4)
    assert not failed(run(registry, release, original, trail).values())
    merged = Release(
        "disassociated",
        params={"k": 2, "m": 2},
        claims=[Claim("km-anonymity", {"k": 2, "m": 2})],
        provenance=release.provenance,
        clusters=[Cluster("c0", 4, [chunks[0] + chunks[1]], [])],
    )
    certs = run(registry, merged, original, retie(merged, trail))
    assert certs["faithfulness"].holds is False
    assert certs["faithfulness"].witness["problem"] == "a chunk holds sub-records that its records do not explain"


# ------------------------------------------------------------- generalized
HIERARCHY = {"root": "ALL", "edges": [["A", "ALL"], ["B", "ALL"], ["a1", "A"], ["a2", "A"], ["b1", "B"], ["b2", "B"]]}
ANCESTORS = {
    "ALL": frozenset({"ALL"}),
    "A": frozenset({"A", "ALL"}),
    "B": frozenset({"B", "ALL"}),
    "a1": frozenset({"a1", "A", "ALL"}),
    "a2": frozenset({"a2", "A", "ALL"}),
    "b1": frozenset({"b1", "B", "ALL"}),
    "b2": frozenset({"b2", "B", "ALL"}),
}
HN_ORIGINAL = [
    ["a1"],
    ["a1", "a2"],
    ["b1", "b2"],
    ["b1", "b2"],
    ["a1", "a2", "b2"],
    ["a1", "a2", "b2"],
    ["a1", "a2", "b1", "b2"],
]
K2 = [Claim("k-anonymity", {"k": 2})]
HN_PUBLISHED = [["A"], ["A"], ["b1", "b2"], ["b1", "b2"], ["B", "a1", "a2"], ["B", "a1", "a2"], ["B", "a1", "a2"]]


def test_he_naughton_example_golden(registry):
    """He & Naughton 2009 Table 2 (ALGORITHM-NOTES 3.4), k = 2: Partition's output
    is 2-anonymous and generalizes the original through the hierarchy."""
    original = Dataset.from_records(HN_ORIGINAL)
    release = Release(
        "generalized",
        params={"k": 2},
        claims=K2,
        provenance={"input_sha256": original.content_sha256()},
        records=HN_PUBLISHED,
        hierarchy=HIERARCHY,
    )
    certs = run(registry, release, original)
    assert certs["k-anonymity"].holds and certs["hierarchy"].holds and certs["faithfulness"].holds
    assert certs["k-anonymity"].units == 3
    unique = Release(
        "generalized", params={"k": 2}, claims=K2, records=[["a1"], *HN_PUBLISHED[1:]], hierarchy=HIERARCHY
    )
    certs = run(registry, unique, original)
    assert certs["k-anonymity"].holds is False
    assert certs["k-anonymity"].details["violations"] == 2  # {a1} and the remaining {A} are unique
    assert certs["k-anonymity"].witness == {"record": ["A"], "occurrences": 1, "k": 2}
    assert certs["hierarchy"].holds is True  # {a1} does generalize T1
    wrong = Release(
        "generalized",
        params={"k": 2},
        claims=K2,
        records=[*HN_PUBLISHED[:2], ["b1"], ["b1"], *HN_PUBLISHED[4:]],
        hierarchy=HIERARCHY,
    )
    certs = run(registry, wrong, original)
    assert certs["k-anonymity"].holds is True and certs["hierarchy"].holds is False
    assert certs["hierarchy"].witness["record"] == ["b1"]
    stray = Release("generalized", params={"k": 2}, claims=K2, records=[["Z"], ["Z"]], hierarchy=HIERARCHY)
    assert run(registry, stray)["hierarchy"].witness == {
        "problem": "a published label is not a node of the hierarchy",
        "label": "Z",
    }
    cyclic = Release(
        "generalized",
        params={"k": 2},
        claims=K2,
        records=[],
        hierarchy={"root": "ALL", "edges": [["A", "B"], ["B", "A"]]},
    )
    assert run(registry, cyclic)["hierarchy"].holds is False


def brute_force_matchable(published, originals, ok):
    if len(published) > len(originals):
        return False
    return any(
        all(ok(p, o) for p, o in zip(published, perm, strict=False)) for perm in permutations(originals, len(published))
    )


records_strategy = st.lists(
    st.sets(st.sampled_from(["a1", "a2", "b1", "b2"]), min_size=1).map(lambda s: tuple(sorted(s))),
    min_size=1,
    max_size=5,
)
labels_strategy = st.lists(
    st.sets(st.sampled_from(sorted(ANCESTORS)), min_size=1, max_size=3).map(lambda s: tuple(sorted(s))),
    min_size=1,
    max_size=5,
)


@settings(max_examples=50, deadline=None)
@given(published=labels_strategy, originals=records_strategy)
def test_generalization_matching_equals_brute_force(published, originals):
    expected = brute_force_matchable(published, originals, lambda g, o: generalizes(g, o, ANCESTORS))
    assert (not unmatched_generalizations(published, originals, ANCESTORS)) == expected


def brute_force_generalizes(g, o) -> bool:
    """Some map of o's items onto g's labels sends every item to an
    ancestor-or-self with no label of g strictly between them, and uses every label."""
    options = [[label for label in g if label in ANCESTORS[item]] for item in o]
    for choice in product(*options):
        skips = any(
            other != label and label in ANCESTORS[other] and other in ANCESTORS[item]
            for item, label in zip(o, choice, strict=False)
            for other in g
        )
        if not skips and set(choice) == set(g):
            return True
    return False


@settings(max_examples=150, deadline=None)
@given(g=labels_strategy.map(lambda gs: gs[0]), o=records_strategy.map(lambda rs: rs[0]))
def test_generalizes_is_the_deepest_cover_reading(g, o):
    """Nested labels ({B, b1} for {b1, b2}) are read deepest-cover (docs/formats.md)."""
    assert generalizes(g, o, ANCESTORS) == brute_force_generalizes(g, o)


def test_nested_labels_golden():
    assert generalizes(("B", "b1"), ("b1", "b2"), ANCESTORS)
    assert not generalizes(("B", "b1"), ("b1",), ANCESTORS)  # B would stand for no item
    assert generalizes(("B",), ("b1", "b2"), ANCESTORS) and not generalizes(("B", "b2"), ("a1", "b2"), ANCESTORS)


@settings(max_examples=80, deadline=None)
@given(
    published=st.lists(st.sets(st.sampled_from("abcd")).map(lambda s: tuple(sorted(s))), min_size=1, max_size=5),
    originals=st.lists(
        st.sets(st.sampled_from("abcd"), min_size=1).map(lambda s: tuple(sorted(s))), min_size=1, max_size=5
    ),
)
def test_subset_matching_equals_brute_force(published, originals):
    expected = brute_force_matchable(published, originals, lambda p, o: set(p) <= set(o))
    assert (not unmatched_subsets(published, originals)) == expected


def brute_force_max_matching(published, originals, ok):
    """The size of a maximum matching, by trying every injective assignment of a subset."""
    for size in range(min(len(published), len(originals)), 0, -1):
        for chosen in combinations(range(len(published)), size):
            if brute_force_matchable([published[i] for i in chosen], originals, ok):
                return size
    return 0


@settings(max_examples=80, deadline=None)
@given(
    published=st.lists(st.sets(st.sampled_from("abcd")).map(lambda s: tuple(sorted(s))), min_size=1, max_size=5),
    originals=st.lists(
        st.sets(st.sampled_from("abcd"), min_size=1).map(lambda s: tuple(sorted(s))), min_size=1, max_size=5
    ),
)
def test_both_matching_engines_find_a_maximum_matching(published, originals):
    """Augmenting paths (small cases) and scipy's maximum flow (large ones) each
    leave exactly as many published records unmatched as a brute-force maximum
    matching does, with multiplicities."""
    pub, orig = Counter(published), Counter(originals)
    lists = {p: [o for o in orig if set(p) <= set(o)] for p in pub}
    best = brute_force_max_matching(published, originals, lambda p, o: set(p) <= set(o))
    for engine in (_augmenting_unmatched, _scipy_unmatched):
        left = engine(pub, orig, lists)
        assert sum(left.values()) == len(published) - best, engine.__name__
        assert not left - pub


# ------------------------------------------------------------- sanitized
def oracle_rule(records, antecedent, consequent, min_support, min_confidence):
    s_x = sum(1 for r in records if set(antecedent) <= set(r))
    s_xy = sum(1 for r in records if set(antecedent) | set(consequent) <= set(r))
    return s_xy, s_x, (s_xy < min_support or s_x == 0 or s_xy / s_x < min_confidence)


@st.composite
def sanitized_cases(draw):
    originals = draw(st.lists(st.sets(st.sampled_from("abcde"), min_size=1).map(sorted), min_size=2, max_size=8))
    removed = []
    published = []
    for position, record in enumerate(originals):
        drop = draw(st.sets(st.sampled_from(record), max_size=len(record)))
        removed.extend([position, label] for label in sorted(drop))
        published.append(sorted(set(record) - drop))
    rule = draw(
        st.tuples(
            st.sets(st.sampled_from("abc"), min_size=1, max_size=2),
            st.sets(st.sampled_from("de"), min_size=1, max_size=1),
        )
    )
    return (
        originals,
        published,
        removed,
        [sorted(rule[0]), sorted(rule[1])],
        draw(st.integers(1, 4)),
        draw(st.sampled_from([0.3, 0.5, 0.8])),
    )


def hiding(min_support, min_confidence):
    return [Claim("rule-hiding", {"min_support": min_support, "min_confidence": min_confidence})]


@settings(max_examples=40, deadline=None)
@given(case=sanitized_cases(), planted=st.booleans())
def test_sanitized_release_against_oracles(registry, case, planted):
    """The rules are in the trail: with it, rule-hiding is checked against the
    oracle; without it, the claim cannot be checked (no certificate)."""
    originals, published, removed, rule, min_support, min_confidence = case
    if planted:  # an item that the original record did not hold
        published[0] = sorted(set(published[0]) | {"zz"})
    original = Dataset.from_records(originals)
    release = Release(
        "sanitized",
        params={"min_support": min_support, "min_confidence": min_confidence},
        claims=hiding(min_support, min_confidence),
        provenance={"input_sha256": original.content_sha256()},
        records=published,
    )
    trail = Trail(
        release_sha256=release.sha256(),
        input_sha256=original.content_sha256(),
        removed_items=removed,
        sensitive_rules=[rule],
    )
    s_xy, s_x, hidden = oracle_rule(published, *rule, min_support, min_confidence)
    for evidence_trail in (trail, None):  # the verifiers alone: a planted item is refuted by the structure first
        certs = verifier_certificates(registry, release, original, evidence_trail)
        if evidence_trail is None:
            assert "rule-hiding" not in certs
        else:
            assert certs["rule-hiding"].holds is hidden
            assert certs["rule-hiding"].details["rules"][0]["support"] == s_xy
            assert certs["rule-hiding"].details["rules"][0]["antecedent_support"] == s_x
        assert certs["removal-only"].holds is (not planted)
        if planted and evidence_trail is None:
            assert "zz" in certs["removal-only"].witness["record"]


def test_rule_left_above_threshold_is_reported_with_counts(registry):
    records = [["a", "b"], ["a", "b"], ["a", "b"], ["a"], ["b"]]
    release = Release("sanitized", params={}, claims=hiding(3, 0.7), records=records)
    trail = Trail(release_sha256=release.sha256(), sensitive_rules=[[["a"], ["b"]]])
    cert = run(registry, release, trail=trail)["rule-hiding"]
    assert cert.holds is False
    assert cert.witness == {
        "antecedent": ["a"],
        "consequent": ["b"],
        "support": 3,
        "antecedent_support": 4,
        "confidence": 0.75,
        "min_support": 3,
        "min_confidence": 0.7,
    }
    release.claims = hiding(3, 0.8)
    assert run(registry, release, trail=Trail(sensitive_rules=[[["a"], ["b"]]]))["rule-hiding"].holds is True


def test_version_1_rule_hiding_release_states_its_rules_in_params(registry):
    """A privtool-release/1 file published its rules: its claim is derived from
    kind and params and checked without a trail."""
    from privtool.release import release_from_json

    obj = {
        "format": "privtool-release/1",
        "kind": "sanitized",
        "params": {"sensitive_rules": [[["a"], ["b"]]], "min_support": 3, "min_confidence": 0.7},
        "provenance": {},
        "records": [["a", "b"], ["a", "b"], ["a", "b"], ["a"], ["b"]],
    }
    release = release_from_json(obj)
    assert release.claims == hiding(3, 0.7) and release.claims_derived
    assert run(registry, release)["rule-hiding"].holds is False
