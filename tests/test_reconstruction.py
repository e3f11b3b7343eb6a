"""The inverse transformation against an independent brute force, the papers'
worked examples, and a chi-square test of the sampler's uniformity."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from reconstruction_oracle import naive_reconstructions, tiny_releases

from privtool.attacks import reconstruction
from privtool.attacks.reconstruction import (
    EnumerationLimitError,
    ReconstructionModel,
    component_of,
)
from privtool.errors import InputError, ParameterError
from privtool.release import Cluster, JointCluster, Release


def model_or_reject(release: Release) -> ReconstructionModel:
    try:
        model = ReconstructionModel(release)
    except InputError:  # an item in two homes over one cluster: not a release
        assume(False)
    assume(model.count().total <= 1500)
    return model


def itemsets_of(release: Release) -> list[frozenset[str]]:
    items = sorted(
        {i for c in release.clusters for ch in c.record_chunks for r in ch for i in r}
        | {t for c in release.clusters for t in c.term_chunk}
        | {i for j in release.joint_clusters for ch in j.shared_chunks for r in ch for i in r}
    )
    sets = [frozenset(s) for n in (1, 2, 3) for s in itertools.combinations(items, n)]
    return [*sets, frozenset(), frozenset({"zz"}), frozenset({items[0], "zz"})] if items else [frozenset()]


# --------------------------------------------------------------- properties
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(st.one_of(tiny_releases(), tiny_releases(nested=True)))
def test_enumeration_count_bounds_and_expectation_match_brute_force(release: Release) -> None:
    model = model_or_reject(release)
    naive = naive_reconstructions(release, release.params["k"] - 1)
    count = model.count()
    assert len(naive) == len(set(naive)) == count.total
    assert set(naive) == {tuple(r) for r in model.enumerate()}
    for itemset in itemsets_of(release):
        supports = [sum(1 for r in recon if itemset <= r) for recon in naive]
        assert model.min_support(itemset) == min(supports), itemset
        assert model.max_support(itemset) == max(supports), itemset
        assert model.expected_support(itemset, exact=True) == Fraction(sum(supports), len(supports)), itemset


@pytest.fixture(params=["dense", "sparse"])
def sampler_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a sampler test through both ways of placing entries: whole
    permutations, and distinct draws (forced by lowering the size threshold)."""
    if request.param == "sparse":
        monkeypatch.setattr(reconstruction, "DENSE_SLOTS", 0)
    return request.param


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(release=tiny_releases(), seed=st.integers(0, 2**32 - 1))
def test_every_sample_is_a_reconstruction(sampler_path: str, release: Release, seed: int) -> None:
    model = model_or_reject(release)
    everything = {tuple(r) for r in model.enumerate()}
    rng = np.random.default_rng(seed)
    for _ in range(5):
        sample = model.sample(rng)
        assert tuple(frozenset(r) for r in sample.to_label_records()) in everything


def test_sampler_is_uniform_chi_square(sampler_path: str) -> None:
    from scipy.stats import chisquare

    release = Release(
        kind="disassociated",
        params={"k": 3},
        clusters=[Cluster("c0", 3, [[["a"], ["a"]]], ["t"]), Cluster("c1", 1, [], [])],
        joint_clusters=[JointCluster("j0", ["c0", "c1"], [[["s"], ["s", "u"]]])],
    )
    if sampler_path == "sparse":  # the shared chunk (2 entries, 4 slots) takes the distinct-draws path
        assert len(ReconstructionModel(release).sampler.sparse[0]) == 1
    model = ReconstructionModel(release)
    # 3 layouts of [a, a, -]; t on 1 or 2 of 3 slots: 6; 4!/(1! 1! 2!) = 12 layouts of the shared chunk
    assert model.count().total == 3 * 6 * 12
    index = {tuple(r): i for i, r in enumerate(model.enumerate())}
    rng = np.random.default_rng(20261121)
    draws = 10 * len(index)
    seen = Counter(index[tuple(frozenset(r) for r in model.sample(rng).to_label_records())] for _ in range(draws))
    observed = [seen.get(i, 0) for i in range(len(index))]
    assert chisquare(observed).pvalue > 0.001


# ------------------------------------------------------------------ golden
def figure1() -> Release:
    """Safe-disassociation paper, Figure 1(b): one cluster of 6 records, k=2, m=2."""
    chunk1 = [["a"], ["a", "b", "c", "d"], ["a", "b", "c", "d"], ["a", "b", "c", "d"], ["a", "b", "c", "d"], ["a", "b"]]
    return Release(
        kind="disassociated", params={"k": 2, "m": 2}, clusters=[Cluster("c0", 6, [chunk1, [["e"], ["e"]]], [])]
    )


def test_figure1_of_the_safe_disassociation_paper() -> None:
    model = ReconstructionModel(figure1())
    # 6!/(1! 4! 1!) layouts of chunk 1 times 6!/(2! 4!) of chunk 2
    assert model.count().total == 30 * 15
    datasets = model.distinct_datasets()

    def records(*rows: set[str]) -> tuple[frozenset[str], ...]:
        return tuple(sorted((frozenset(r) for r in rows), key=lambda r: sorted(r)))

    paper = [
        records("ae", "abcde", "abcd", "abcd", "abcd", "ab"),
        records("ae", "abcd", "abcd", "abcd", "abcd", "abe"),
        records("a", "abcde", "abcd", "abcd", "abcd", "abe"),
    ]
    normalised = {records(*r) for r in datasets}
    assert set(paper) <= normalised
    # the paper draws three of them; a fourth puts e on two abcd sub-records
    assert len(normalised) == 4
    assert records("a", "abcde", "abcde", "abcd", "abcd", "ab") in normalised
    # {d, e}: c(d) = 4 of 6, c(e) = 2 of 6
    assert model.support_bounds({"d", "e"}) == (0, 2)
    assert model.expected_support({"d", "e"}, exact=True) == Fraction(4, 3)
    # a is in every record: {a, e} is linked with certainty
    assert model.support_bounds({"a", "e"}) == (2, 2)


def test_running_example_of_the_disassociation_paper() -> None:
    """Cluster P1 of the thesis' Figure 6 (k=3): C1 has 5 sub-records with one
    repeated twice, C2 three equal ones, and three terms."""
    itunes_flu_madonna = ["itunes", "flu", "madonna"]
    release = Release(
        kind="disassociated",
        params={"k": 3, "m": 2},
        clusters=[
            Cluster(
                "P1",
                5,
                [
                    [
                        itunes_flu_madonna,
                        ["madonna", "flu"],
                        ["itunes", "madonna"],
                        ["itunes", "flu"],
                        itunes_flu_madonna,
                    ],
                    [["audi a4", "sony tv"]] * 3,
                ],
                ["ikea", "viagra", "ruby"],
            )
        ],
    )
    model = ReconstructionModel(release)
    # 5!/2! = 60 layouts of C1; 5!/(3! 2!) = 10 of C2; each term on 1 or 2 of 5 records: 5 + 10 = 15
    assert model.count().total == 60 * 10 * 15**3
    # madonna in 4 of C1's sub-records, audi a4 in 3 of C2's: overlap 4 + 3 - 5 = 2 .. min(4, 3) = 3
    assert model.support_bounds({"madonna", "audi a4"}) == (2, 3)
    assert model.support_bounds({"ikea", "ruby"}) == (0, 2)
    assert model.support_bounds({"flu", "itunes"}) == (3, 3)  # inside one chunk: exact


# ------------------------------------------------------------------- errors
def test_enumeration_limit_is_a_clear_error() -> None:
    model = ReconstructionModel(figure1())
    with pytest.raises(EnumerationLimitError, match="has 450 reconstructions, more than the enumeration limit of 100"):
        list(model.enumerate(limit=100))
    huge = Release(
        kind="disassociated", params={"k": 2}, clusters=[Cluster(f"c{i}", 30, [[["a"]] * 15], []) for i in range(200)]
    )
    with pytest.raises(EnumerationLimitError, match=r"about 10\^1638\.1 reconstructions"):
        next(ReconstructionModel(huge).enumerate())


def test_item_in_two_chunks_of_one_cluster_is_rejected() -> None:
    release = Release(kind="disassociated", params={"k": 2}, clusters=[Cluster("c0", 2, [[["a"], ["a"]], [["a"]]], [])])
    with pytest.raises(InputError, match="item 'a' is in record chunk 0 of 'c0' and in record chunk 1 of 'c0'"):
        ReconstructionModel(release)


def test_term_chunk_without_k_needs_a_bound() -> None:
    release = Release(kind="disassociated", params={}, clusters=[Cluster("c0", 3, [], ["t"])])
    with pytest.raises(ParameterError, match="claims no k"):
        ReconstructionModel(release)
    assert ReconstructionModel(release, term_max_support=2).max_support({"t"}) == 2


def test_other_release_kinds_have_no_reconstructions() -> None:
    with pytest.raises(InputError, match="not sanitized"):
        ReconstructionModel(Release(kind="sanitized", records=[["a"]]))


@pytest.mark.parametrize("shared_s", [[["s"]], [["s"], ["s"]], [["s"], ["s"], ["s"]]])
@pytest.mark.parametrize("shared_t", [[["t"]], [["t"], ["t"], ["t"]]])
def test_crossing_joint_clusters_match_brute_force(shared_s: list, shared_t: list) -> None:
    """Joint clusters {c0, c1} and {c1, c2} that cross, with s and t each also in a
    record chunk of the third cluster: the maximum is a packing over crossing
    sets (solved by CP-SAT), checked against every reconstruction."""
    release = Release(
        kind="disassociated",
        params={"k": 2},
        clusters=[Cluster("c0", 2, [[["t"], ["t"]]], []), Cluster("c1", 1, [], []), Cluster("c2", 2, [[["s"]]], [])],
        joint_clusters=[JointCluster("j0", ["c0", "c1"], [shared_s]), JointCluster("j1", ["c1", "c2"], [shared_t])],
    )
    model = ReconstructionModel(release)
    naive = naive_reconstructions(release, 1)
    assert len(naive) == model.count().total
    for itemset in ({"s", "t"}, {"s"}, {"t"}):
        supports = [sum(1 for r in recon if itemset <= r) for recon in naive]
        assert model.support_bounds(itemset) == (min(supports), max(supports)), itemset
        assert model.expected_support(itemset, exact=True) == Fraction(sum(supports), len(supports))


# ----------------------------------------------------- real disassociations
@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=5), min_size=4, max_size=24),
    st.sampled_from(["horpart", "suppression", "adding", "remaining-list"]),
    st.integers(2, 3),
    st.booleans(),
)
def test_original_supports_lie_within_the_bounds_of_its_disassociation(registry, rows, partitioner, k, refine) -> None:
    """The original is one of its release's reconstructions, so the true support
    of every itemset (over the published records) lies between the computed
    minimum and maximum, and the exact count is at least 1."""
    from privtool.context import Context
    from privtool.dataset import Dataset
    from privtool.pipeline import run_method

    dataset = Dataset.from_records(rows)
    options = {
        "k": k,
        "m": 2,
        "max_cluster_size": 6,
        "partitioner": partitioner,
        "refiner": "refine" if refine else "none",
    }
    outcome = run_method(registry, dataset, "disassociation", options, Context())
    suppressed = set(outcome.trail.suppressed_records)
    published = [frozenset(r) for i, r in enumerate(rows) if i not in suppressed]
    model = ReconstructionModel(outcome.release)
    assert model.n_slots == len(published) and model.count().total >= 1
    items = sorted({i for r in published for i in r})
    for itemset in [frozenset(s) for n in (1, 2) for s in itertools.combinations(items, n)]:
        low, high = model.support_bounds(itemset)
        assert low <= sum(1 for r in published if itemset <= r) <= high, itemset


def test_components_enumerate_alone_and_multiply() -> None:
    """A large release whose small cluster c1 is tied to c2 by a joint cluster:
    the component {c1, c2} enumerates alone, and counts multiply over components."""
    release = Release(
        kind="disassociated",
        params={"k": 2},
        clusters=[Cluster("c0", 30, [[["a"]] * 15], []), Cluster("c1", 2, [[["b"]]], ["t"]), Cluster("c2", 1, [], [])],
        joint_clusters=[JointCluster("j0", ["c1", "c2"], [[["s"]]])],
    )
    whole = ReconstructionModel(release).count()
    part = component_of(release, "c2")
    assert [c.id for c in part.clusters] == ["c1", "c2"] and [j.id for j in part.joint_clusters] == ["j0"]
    model = ReconstructionModel(part)
    assert whole.total == ReconstructionModel(component_of(release, "c0")).count().total * model.count().total
    assert len(list(model.enumerate())) == model.count().total == 2 * 2 * 3  # b on 1 of 2, t on 1 of 2, s on 1 of 3
    with pytest.raises(ParameterError, match="no cluster 'c9'"):
        component_of(release, "c9")


def test_joint_cluster_of_joint_clusters_spans_their_clusters() -> None:
    """REFINE builds a tree: j1's members are the joint cluster j0 and c2, so its
    shared chunk spreads over c0, c1 and c2 (4 records)."""
    release = Release(
        kind="disassociated",
        params={"k": 2},
        clusters=[Cluster("c0", 1, [], []), Cluster("c1", 1, [], []), Cluster("c2", 2, [], [])],
        joint_clusters=[
            JointCluster("j0", ["c0", "c1"], [[["s"]]]),
            JointCluster("j1", ["j0", "c2"], [[["t"], ["t"]]]),
        ],
    )
    model = ReconstructionModel(release)
    assert model.count().per_unit == {"c0": 1, "c1": 1, "c2": 1, "j0": 2, "j1": 6}
    flat = Release(
        kind="disassociated",
        params={"k": 2},
        clusters=release.clusters,
        joint_clusters=[release.joint_clusters[0], JointCluster("j1", ["c0", "c1", "c2"], [[["t"], ["t"]]])],
    )
    naive = naive_reconstructions(flat, 1)
    assert {tuple(r) for r in model.enumerate()} == set(naive)
    for itemset in ({"s", "t"}, {"t"}):
        supports = [sum(1 for r in recon if itemset <= r) for recon in naive]
        assert model.support_bounds(itemset) == (min(supports), max(supports))
    assert [c.id for c in component_of(release, "c2").clusters] == ["c0", "c1", "c2"]
