"""The batched largest support (:class:`MaxSupportIndex`) equals the per-itemset
:meth:`ReconstructionModel.max_support` on random releases with record chunks,
term chunks and nested (REFINE's tree) or crossing joint clusters, including
chunks wider than one 64-bit word; and equals the brute-force largest support
over every reconstruction of tiny releases."""

from __future__ import annotations

import itertools
from unittest.mock import patch

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from reconstruction_oracle import naive_reconstructions, tiny_releases

from privtool.attacks import reconstruction
from privtool.attacks.reconstruction import MaxSupportIndex, ReconstructionModel
from privtool.errors import InputError
from privtool.release import Cluster, JointCluster, Release


@st.composite
def releases(draw: st.DrawFn, nested: bool) -> Release:
    """1-6 clusters of 1-70 records with up to 3 record chunks (items a-h), a term
    chunk (p-r, h) and up to 4 joint clusters with 1-2 shared chunks (s-w, g, h):
    any clusters (they may cross), or with ``nested`` a tree as REFINE builds it
    (members are clusters or earlier joint clusters not yet in another one).
    Items g and h can live in record chunks, term chunks and shared chunks of
    different clusters, as in real releases."""
    clusters = []
    for i in range(draw(st.integers(1, 6))):
        size = draw(st.sampled_from([1, 2, 3, 5, 30, 64, 70]))
        pool = draw(st.permutations("abcdefgh"))
        chunks, used = [], 0
        for _ in range(draw(st.integers(0, 3))):
            width = draw(st.integers(1, 3))
            domain, used = pool[used : used + width], used + width
            rows = draw(st.lists(st.sets(st.sampled_from(domain), min_size=1), min_size=1, max_size=size))
            chunks.append([sorted(r) for r in rows])
        terms = draw(st.lists(st.sampled_from("pqrh"), unique=True, max_size=2))
        clusters.append(Cluster(f"c{i}", size, chunks, terms))
    size_of = {c.id: c.size for c in clusters}
    tops = [c.id for c in clusters]
    joints = []
    for j in range(draw(st.integers(0, 4))):
        members = draw(st.lists(st.sampled_from(tops if nested else [c.id for c in clusters]), min_size=1, unique=True))
        n = sum(size_of[m] for m in members)
        pool = draw(st.permutations("stuvwgh"))
        shared = []
        for c in range(draw(st.integers(1, 2))):
            domain = pool[2 * c : 2 * c + draw(st.integers(1, 2))]
            rows = draw(st.lists(st.sets(st.sampled_from(domain), min_size=1), min_size=1, max_size=min(n, 6)))
            shared.append([sorted(r) for r in rows])
        joints.append(JointCluster(f"j{j}", members, shared))
        if nested:
            size_of[f"j{j}"] = n
            tops = [t for t in tops if t not in members] + [f"j{j}"]
    return Release(
        kind="disassociated", params={"k": draw(st.integers(2, 6)), "m": 2}, clusters=clusters, joint_clusters=joints
    )


def model_or_reject(release: Release, term_max_support: int | None = None) -> ReconstructionModel:
    try:
        return ReconstructionModel(release, term_max_support)
    except InputError:  # an item in two homes over one cluster: not a release
        assume(False)
        raise


def queries_of(model: ReconstructionModel) -> list[frozenset[str]]:
    items = sorted(model.labels)
    queries = [frozenset(q) for n in (1, 2, 3) for q in itertools.combinations(items, n)]
    return [*queries, frozenset(), frozenset({"zz"}), frozenset({"a", "zz"})]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(st.booleans().flatmap(lambda nested: st.tuples(st.just(nested), releases(nested))))
def test_batched_max_support_equals_the_per_itemset_one(case: tuple[bool, Release]) -> None:
    nested, release = case
    model = model_or_reject(release)
    index = MaxSupportIndex(model)
    assert index.laminar or not nested  # a tree of joint clusters takes the interval path
    queries = queries_of(model)
    expected = [model.max_support(q) for q in queries]
    assert index.max_supports(queries) == expected
    assert index.max_supports(reversed(queries)) == expected[::-1]  # from the cache
    fresh = MaxSupportIndex(model)
    assert [fresh.max_supports([q])[0] for q in queries] == expected  # one query per batch
    with patch.object(reconstruction, "QUERIES_PER_PASS", 7):  # many passes in one batch
        assert MaxSupportIndex(model).max_supports(queries) == expected


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(tiny_releases(nested=True), st.booleans())
def test_batched_max_support_equals_the_largest_over_every_reconstruction(release: Release, any_count: bool) -> None:
    """Term-chunk terms capped at k - 1 (the model's default) or at the cluster
    size (as the linkage attack reads them)."""
    cap = max(c.size for c in release.clusters) if any_count else release.params["k"] - 1
    model = model_or_reject(release, cap)
    assume(model.count().total <= 3000)
    index = MaxSupportIndex(model)
    assert index.laminar
    naive = naive_reconstructions(release, cap)
    queries = [q for q in queries_of(model) if len(q) <= 2]
    expected = [max(sum(1 for r in recon if q <= r) for recon in naive) for q in queries]
    assert index.max_supports(queries) == expected


def test_pickled_index_answers_alike_and_rebuilds_its_model_only_when_needed() -> None:
    import pickle

    release = Release(
        kind="disassociated",
        params={"k": 2},
        clusters=[Cluster("c0", 2, [[["a"], ["a", "b"]]], ["t"]), Cluster("c1", 3, [[["a"]]], [])],
        joint_clusters=[JointCluster("j0", ["c0", "c1"], [[["s"], ["s"]]])],
    )
    index = MaxSupportIndex(ReconstructionModel(release))
    copy = pickle.loads(pickle.dumps(index))
    assert copy._model is None
    assert copy.max_supports([{"a", "s"}, {"t"}, {"a"}]) == [2, 1, 3] and copy._model is None
    assert copy.max_supports([{"a", "b", "s"}]) == index.max_supports([{"a", "b", "s"}]) == [1]
    assert copy._model is not None
