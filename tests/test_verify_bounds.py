"""Issue 16, "The verifier hangs or certifies the impossible": the bounded
search for disassociation-guarantee violations, m clamped, the auto engine's
cost rule and the time bound of every certificate."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from reconstruction_oracle import tiny_releases as nested_releases
from test_verify_disassociation_guarantee import brute_force_maxima, tiny_releases

from privtool.assess import _verify_once
from privtool.components import Evidence, Verifier
from privtool.context import Context
from privtool.errors import TimedOut
from privtool.publishable import content_stats
from privtool.registry import Registry
from privtool.release import Cluster, JointCluster, Release, release_from_json
from privtool.verifiers.certify import certificate_from_units
from privtool.verifiers.chunk_batches import release_arrays
from privtool.verifiers.chunks import effective_m, enumeration_size
from privtool.verifiers.engines import check_km_batch, pick_engine
from privtool.verifiers.reconstruction_bounds import (
    ClusterViews,
    _ReleaseMaximum,
    _score,
    _Sources,
    _weak_parts,
    check_disassociation_guarantee,
    chunk_weak_parts,
    joint_parents,
)


@settings(max_examples=80, deadline=None)
@given(release=tiny_releases(), m=st.integers(1, 3), k=st.integers(2, 7))
def test_the_bounded_search_agrees_with_brute_force(release, m, k) -> None:
    """Whatever stops the search (the first violation or nothing left),
    the verdict is the brute force's and every witness is a real violation with
    its exact maximum support."""
    expected = brute_force_maxima(release, m)
    violations = {itemset: s for itemset, s in expected.items() if s < k}
    certificate = check_disassociation_guarantee(release, k, m, Context())
    assert certificate.holds == (not violations)
    if violations:
        witness = certificate.witness
        assert violations[tuple(witness["itemset"])] == witness["max_support"]
        assert len(witness["itemset"]) == min(len(i) for i in violations)  # the fewest items first
        assert certificate.details["violations"] == 1
    else:
        assert certificate.witness is None and certificate.details["violations_complete"] is True


def _tampered(release: Release, how: str) -> Release:
    """``release`` with its first record chunk cut to its first sub-record
    (``cut``) or a term of the first cluster with a term chunk and a record
    chunk moved into that chunk's first sub-record (``move``), as
    benchmarks/verify_altered.py tampers with real releases."""
    clusters = []
    done = False
    for c in release.clusters:
        chunks, term = [[list(row) for row in chunk] for chunk in c.record_chunks], list(c.term_chunk)
        if not done and chunks and (how == "cut" or term):
            if how == "cut":
                chunks[0] = chunks[0][:1]
            else:
                chunks[0][0] = sorted({*chunks[0][0], term.pop(0)})
            done = True
        clusters.append(Cluster(c.id, c.size, chunks, term))
    return Release("disassociated", params=release.params, clusters=clusters, joint_clusters=release.joint_clusters)


@settings(max_examples=60, deadline=None)
@given(release=tiny_releases(), how=st.sampled_from(["cut", "move"]), m=st.integers(1, 2), k=st.integers(2, 4))
def test_a_tampered_release_is_refuted_exactly_when_brute_force_finds_a_violation(release, how, m, k) -> None:
    """The search stops at the first violation: on tampered releases its verdict
    is still the brute force's and its witness a real violation."""
    tampered = _tampered(release, how)
    violations = {i: s for i, s in brute_force_maxima(tampered, m).items() if s < k}
    certificate = check_disassociation_guarantee(tampered, k, m, Context())
    assert certificate.holds == (not violations)
    if violations:
        assert violations[tuple(certificate.witness["itemset"])] == certificate.witness["max_support"]


def _many_violations(n: int) -> Release:
    """n clusters of 2 records, each with one chunk {a_i}, {a_i}: at k = 3
    every a_i fails (maximum support 2)."""
    return Release("disassociated", clusters=[Cluster(f"c{i}", 2, [[[f"a{i}"], [f"a{i}"]]], []) for i in range(n)])


def test_a_release_that_fails_badly_stops_at_the_first_violation() -> None:
    """200 failing items: the first decides the verdict, the other 199 are not examined."""
    certificate = check_disassociation_guarantee(_many_violations(200), 3, 2, Context())
    assert certificate.holds is False
    assert certificate.details["violations"] == 1 and certificate.details["suspect_itemsets"] == 1
    assert certificate.details["violations_complete"] is False
    assert certificate.witness["max_support"] == 2


def test_the_time_limit_makes_the_guarantee_undecided_never_holding() -> None:
    """Weak clusters whose suspects all pass (each a_i reaches 3 over the
    release) but the deadline has passed: undecided, not holds."""
    clusters = [Cluster(f"c{i}", 2, [[["a"], ["a"]]], []) for i in range(3)]
    release = Release("disassociated", clusters=clusters)
    assert check_disassociation_guarantee(release, 3, 1, Context()).holds is True
    late = Context().with_time_limit(0)
    certificate = check_disassociation_guarantee(release, 3, 1, late)
    assert certificate.holds is None and certificate.details["timed_out"] is True
    # a release with no weak cluster needs no search: proved even after the deadline
    assert check_disassociation_guarantee(release, 2, 1, late).holds is True


def test_km_units_past_the_deadline_are_undecided_but_a_witness_still_refutes() -> None:
    rows = (("a", "b"), ("a", "b"), ("a",))
    ok, bad = ({"chunk": 0}, rows), ({"chunk": 1}, (("x",),))
    past = time.time() - 1
    undecided = check_km_batch(((ok[0],), (ok[1],), 2, 2, "enum", past))
    certificate = certificate_from_units("km-anonymity", "enum", undecided, 0.0)
    assert certificate.holds is None and certificate.details["timed_out"] is True
    decided = check_km_batch(((ok[0], bad[0]), (ok[1], bad[1]), 2, 2, "enum", None))
    assert certificate_from_units("km-anonymity", "enum", decided, 0.0).holds is False


class _Slow(Verifier):
    name = "slow"
    applies_to = ("disassociated",)

    def verify(self, release, evidence, params, ctx):
        while True:
            ctx.check_deadline()
            time.sleep(0.01)


def test_a_verifier_that_runs_out_of_time_reports_unknown(registry: Registry) -> None:
    run = _verify_once(registry, _Slow(), Release("disassociated"), Evidence(), {}, Context(), 0.05)
    assert [(c.guarantee, c.holds, c.details["timed_out"]) for c in run.certificates] == [("slow", None, True)]
    assert run.failure is None


def test_a_huge_m_is_clamped_not_looped_over() -> None:
    """`--m 1000000000000` summed C(n, size) up to m: now m stops at the items
    and at the chunk's longest sub-record."""
    started = time.process_time()
    assert enumeration_size(5, 10**12) == 31
    assert effective_m((("a", "b", "c"), ("a",)), 10**12) == 3
    assert pick_engine("auto", 40, 10**12, 10) == "cpsat"
    assert time.process_time() - started < 1.0


def test_auto_enumerates_a_wide_chunk_of_few_rows() -> None:
    """The 2,000-record release of 420-item records: a 30-row chunk of 437
    items has 95,703 itemsets of 1..2 items; enumeration proves it in 0.05 s,
    CP-SAT took 7.6 s (verify/engines.py), so auto enumerates."""
    assert pick_engine("auto", 437, 2, 30) == "enum"
    assert pick_engine("auto", 437, 3, 30) == "cpsat"  # 13.9 million itemsets
    assert pick_engine("auto", 20, 2, 1_000_000) == "enum"


def test_verify_m_huge_and_time_limit_on_the_command_line(run_cli, tmp_path: Path) -> None:
    data = tmp_path / "d.basket"
    data.write_text("a b\na b\na b\nb c\nb c\nb c\na c\na c\na c\n")
    release = tmp_path / "r.json"
    made = run_cli("anonymize", data, "--method", "disassociation", "--k", "3", "--m", "1000000000000", "-o", release)
    assert made.code == 0, made.err
    verified = run_cli("verify", release, "--executor", "serial", "-q", "--json")
    assert verified.code == 0, verified.out
    assert json.loads(verified.out)["verdict"] == "PASS"
    obj = json.loads(release.read_text())  # a weak cluster makes the guarantee search
    obj["clusters"].append({"id": "weak", "size": 2, "record_chunks": [[["a"], ["a"]]], "term_chunk": []})
    obj["joint_clusters"] = []
    obj["stats"] = content_stats(release_from_json(obj))  # recounted: else the structural checks refuse it
    weak = tmp_path / "weak.json"
    weak.write_text(json.dumps(obj))
    timed = run_cli("verify", weak, "--only", "disassociation-guarantee", "--time-limit", "0.000001", "--json")
    report = json.loads(timed.out)
    assert timed.code == 1 and report["verdict"] == "INCOMPLETE"
    assert report["claims"][0]["status"] == "unknown"
    assert report["certificates"][0]["holds"] is None and report["certificates"][0]["details"]["timed_out"]


def test_nested_shared_chunks_saturate_without_visiting_every_member() -> None:
    """An item of a joint cluster's shared chunk with 2 rows over 40 clusters:
    its maximum is the cap, 2, whatever the members; at k = 3 it fails."""
    clusters = [Cluster(f"c{i}", 3, [[["a"], ["a"], ["a"]]], []) for i in range(40)]
    joint = JointCluster("j0", [c.id for c in clusters], [[["s"], ["s"]]])
    certificate = check_disassociation_guarantee(
        Release("disassociated", clusters=clusters, joint_clusters=[joint]), 3, 2, Context()
    )
    assert certificate.holds is False and certificate.witness == {"itemset": ["s"], "max_support": 2, "k": 3}


def test_timed_out_is_an_exception_verifiers_can_raise() -> None:
    try:
        Context().with_time_limit(0).check_deadline()
    except TimedOut:
        return
    raise AssertionError("check_deadline did not raise past the deadline")


@settings(max_examples=80, deadline=None)
@given(release=tiny_releases(), k=st.integers(2, 5), size=st.integers(0, 2), pick=st.integers(0, 99))
def test_strong_extensions_are_the_items_with_which_one_cluster_reaches_k(release, k, size, pick) -> None:
    """What the search takes as certified without a walk: for a part a cluster
    holds, the items y with which the cluster alone scores k or more, exactly
    as :meth:`_Sources.best` scores each itemset part + y."""
    parent = joint_parents(release)
    views = ClusterViews(release_arrays(release), parent, 3, k)
    n = pick % len(views)
    sources = _Sources(views[n])
    held = sorted({tuple(sorted(p)) for p in itertools.combinations(sources.items, size)})
    held = [p for p in held if sources.best(p) is not None]
    if not held:
        return
    part = held[pick % len(held)]
    expected = set()
    for y in sources.items:
        if y not in part:
            found = sources.best(tuple(sorted((*part, y))))
            if found is not None and _score(*found) >= k:
                expected.add(y)
    assert sources.strong_extensions(part, k) == expected
    # the search's sources count the shared chunks' frequent items from the arrays
    assert _ReleaseMaximum(views, parent, k)._source(n).strong_extensions(part, k) == expected


def test_an_item_of_the_parts_own_chunk_counts_the_rows_holding_both() -> None:
    """a and b are each in 3 sub-records of the chunk but together in 2: at k = 3
    the cluster reaches k with the term t after a, not with b."""
    release = Release("disassociated", clusters=[Cluster("c0", 4, [[["a", "b"], ["a", "b"], ["a"], ["b"]]], ["t"])])
    views = ClusterViews(release_arrays(release), joint_parents(release), 2, 3)
    assert _Sources(views[0]).strong_extensions(("a",), 3) == {"t"}
    assert _Sources(views[0]).strong_extensions(("a",), 2) == {"b", "t"}


@settings(max_examples=100, deadline=None)
@given(release=nested_releases(nested=True), k=st.integers(2, 4), m=st.integers(1, 3))
def test_the_weak_parts_a_cluster_sees_are_those_of_its_chunks(release, k, m) -> None:
    """What the search reads of the weak parts (kept as codes, labelled on
    demand): per cluster, the parts of its record chunks and of the shared
    chunks of every joint cluster above it, and their fewest items; per size,
    the parts of every chunk."""
    views = ClusterViews(release_arrays(release), joint_parents(release), m, k)
    parts = _weak_parts(views, k, m, Context())
    shortest = parts.shortest()
    every: set[tuple[str, ...]] = set()
    for n in range(len(views)):
        _, size, record_chunks, _, chain, _, _ = views[n]
        chunks = [*record_chunks, *(chunk for _, shared in chain for chunk in shared)]
        seen = [part for rows in chunks for part in chunk_weak_parts((rows, k, m, None))]
        every.update(seen)
        if size < k:
            assert (parts.of(n), shortest[n]) == (((),), 0)
        else:
            assert sorted(parts.of(n)) == sorted(seen)
            assert shortest[n] == min(map(len, seen), default=None)
    for size in range(1, m + 1):
        assert parts.of_size(size) == {part for part in every if len(part) == size}
