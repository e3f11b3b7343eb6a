"""PEM, RLM and RAE (safe-disassociation paper, section 5.1)."""

from __future__ import annotations

from itertools import combinations, permutations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from safe_examples import FIGURE1_RECORDS, disassociated_releases, figure1_release, km_chunk

from privtool.components import Evidence, Outcome
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.plugins.safe_disassociation.metrics import pem, rae, rlm
from privtool.plugins.safe_disassociation.pairs import expected_pair_supports, original_pair_supports
from privtool.plugins.safe_disassociation.sanitizer import safe_disassociate
from privtool.release import Cluster, Release
from privtool.trail import Trail


def test_pem_of_figure1_before_and_after() -> None:
    assert pem(figure1_release())["pem"] == 0.5  # {a, abcd x4, ab} is vulnerable, {e, e} is not
    assert pem(figure1_release())["pem_literal"] == 1.0
    out = safe_disassociate(Outcome(figure1_release(), Trail()), 2, 2, 30, Context())
    assert pem(out.release)["pem"] == 0.0
    assert rlm(out.release)["rlm"] == 0.0  # partial suppression keeps every support (lemma 2)
    assert rlm(out.release)["rlm_real"] == pytest.approx(4 / 21)


def test_rlm_counts_a_suppressed_chunk() -> None:
    release = Release(
        "disassociated", params={"k": 2, "m": 2}, clusters=[Cluster("c0", 9, [[["u", "v"]] * 9, [["w"]] * 3], [])]
    )
    out = safe_disassociate(Outcome(release, Trail()), 2, 2, 10, Context())
    assert out.release.clusters[0].record_chunks == [[["w"]] * 3]
    assert rlm(out.release)["rlm"] == pytest.approx(18 / 21)


def test_rae_of_figure1_by_hand() -> None:
    original = Dataset.from_records(FIGURE1_RECORDS)
    figures = rae(figure1_release(), Evidence(original=original))
    # pairs with e are spread over the two chunks: expected s(xe) = s(x) * 2 / 6
    by_hand = abs(1 - 5 * 2 / 6) / ((1 + 5 * 2 / 6) / 2) + 2 * abs(1 - 4 * 2 / 6) / ((1 + 4 * 2 / 6) / 2)
    assert figures["rae_pairs"] == 10
    assert figures["rae_sum"] == pytest.approx(by_hand)
    assert figures["rae_mean"] == pytest.approx(by_hand / 10)


def test_rae_needs_the_original() -> None:
    from privtool.assess import run_metrics
    from privtool.context import Context
    from privtool.errors import MissingEvidence
    from privtool.plugins.safe_disassociation.metrics import Rae

    [skipped] = run_metrics([Rae()], figure1_release(), Evidence(), {}, Context())
    assert skipped.status == "skipped" and "needs the original data (--original DATA)" in skipped.reason
    with pytest.raises(MissingEvidence, match="original"):
        run_metrics([Rae()], figure1_release(), Evidence(), {}, Context(), named=True)


def test_original_pair_supports_by_brute_force() -> None:
    records = [["1", "2", "3"], ["2", "3"], ["1"], ["3", "1", "4", "2"], []]
    data = Dataset.from_records(records)
    keys, values = original_pair_supports(data, data.n_items)
    got = {(int(key) // data.n_items, int(key) % data.n_items): v for key, v in zip(keys, values, strict=False)}
    want = {}
    for r in records:
        for x, y in combinations(sorted(data.labels.index(i) for i in r), 2):
            want[(x, y)] = want.get((x, y), 0) + 1
    assert got == want


@st.composite
def small_clusters(draw):
    chunks = []
    for c in range(draw(st.integers(1, 2))):
        chunks.append(km_chunk(draw, st, list("abc" if c == 0 else "de"), 2))
    chunks = [ch[:4] for ch in chunks]
    terms = ["t"] if draw(st.booleans()) else []
    return Cluster("c0", max(len(ch) for ch in chunks) + draw(st.integers(0, 1)), chunks, terms)


@settings(max_examples=40, deadline=None)
@given(small_clusters())
def test_expected_pair_supports_average_every_permutation(cluster: Cluster) -> None:
    """Uniform model: the mean over every permutation of the padded chunks (the
    term item as one sub-record in a random row) is the closed form."""
    n = cluster.size
    chunks = list(cluster.record_chunks) + [[[t]] for t in cluster.term_chunk]
    padded = [[frozenset(r) for r in rows] + [frozenset()] * (n - len(rows)) for rows in chunks]
    totals: dict[tuple[str, str], float] = {}
    count = 0

    def walk(level: int, records: list[frozenset]) -> None:
        nonlocal count
        if level == len(padded):
            count += 1
            for r in records:
                for pair in combinations(sorted(r), 2):
                    totals[pair] = totals.get(pair, 0) + 1
            return
        # distinct arrangements: each stands for the same number of permutations
        for order in sorted(set(permutations(padded[level])), key=str) if level else [padded[0]]:
            walk(level + 1, [a | b for a, b in zip(records, order, strict=False)])

    walk(0, [frozenset()] * n)
    release = Release("disassociated", params={"k": 2}, clusters=[cluster])  # a term: 1 slot (k - 1)
    index = {x: i for i, x in enumerate("abcdet")}
    keys = np.array(sorted(x * 6 + y for x, y in combinations(range(6), 2)), dtype=np.int64)
    values = expected_pair_supports(release, index, keys)
    got = {("abcdet"[int(key) // 6], "abcdet"[int(key) % 6]): v for key, v in zip(keys, values, strict=False) if v}
    want = {pair: total / count for pair, total in totals.items()}
    assert got.keys() == want.keys()
    for pair in want:
        assert got[pair] == pytest.approx(want[pair])


def test_expected_pair_support_across_a_shared_chunk() -> None:
    """Joint cluster of 2 + 3 records, shared chunk {s, s}: a record of c0 gets one
    of the 5 padded rows of the shared chunk, so E s(sa) = 2 (records with a) * 2 / 5."""
    from privtool.release import JointCluster

    release = Release(
        "disassociated",
        params={"k": 2},
        clusters=[Cluster("c0", 2, [[["a"], ["a"]]], []), Cluster("c1", 3, [[["b"], ["b"], ["b"]]], ["t"])],
        joint_clusters=[JointCluster("j0", ["c0", "c1"], [[["s"], ["s"]]])],
    )
    index = {x: i for i, x in enumerate("abst")}
    keys = np.array(sorted(x * 4 + y for x, y in combinations(range(4), 2)), dtype=np.int64)
    got = dict(zip(keys.tolist(), expected_pair_supports(release, index, keys).tolist(), strict=False))
    assert got[0 * 4 + 2] == pytest.approx(2 * 2 / 5)  # a, s
    assert got[1 * 4 + 2] == pytest.approx(3 * 2 / 5)  # b, s
    assert got[2 * 4 + 3] == pytest.approx(1 * 2 / 5)  # s, t (t: one occurrence in c1)
    assert got[1 * 4 + 3] == pytest.approx(3 * 1 / 3)  # b, t inside c1
    assert got[0 * 4 + 1] == 0  # a and b are in different clusters


@settings(max_examples=40, deadline=None)
@given(disassociated_releases(st))
def test_expected_pair_supports_equal_the_reconstruction_model(release: Release) -> None:
    """The vectorised estimate equals the reconstruction module's exact
    expected support of every pair of published items."""
    from privtool.attacks.reconstruction import ReconstructionModel

    model = ReconstructionModel(release)
    labels = sorted(model.labels)
    index = {x: i for i, x in enumerate(labels)}
    v = len(labels)
    keys = np.array([x * v + y for x, y in combinations(range(v), 2)], dtype=np.int64)
    got = expected_pair_supports(release, index, keys)
    for key, value in zip(keys.tolist(), got.tolist(), strict=False):
        pair = (labels[key // v], labels[key % v])
        assert value == pytest.approx(model.expected_support(pair), abs=1e-9), pair


def test_rae_on_the_most_frequent_pairs_only() -> None:
    original = Dataset.from_records(FIGURE1_RECORDS)
    every = rae(figure1_release(), Evidence(original=original))
    top = rae(figure1_release(), Evidence(original=original), max_pairs=6)
    # the six pairs within {a, b, c, d} have support 4 or 5 and keep their exact
    # support in the chunk; the four pairs with e (support 1) carry all the error
    assert top["rae_pairs"] == 6 and top["rae_sum"] == 0.0
    assert every["rae_pairs"] == 10 and every["rae_sum"] > 0
