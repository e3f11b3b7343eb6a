"""The algorithm-aware cover-freedom verifier: Figure 1 faithful and hardened,
a planted violation, and random releases through both sanitizers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from safe_examples import brute_covered, disassociated_releases, figure1_release

from privtool.attacks.preimage import FAITHFUL, HARDENED, Rules, invert
from privtool.components import Evidence, Outcome
from privtool.context import Context
from privtool.plugins.safe_disassociation.hardened import hardened_variant
from privtool.plugins.safe_disassociation.sanitizer import safe_disassociate
from privtool.registry import load_registry
from privtool.release import Release
from privtool.trail import Trail


def sanitized(release: Release, hardened: bool, seed: int = 0) -> Release:
    p = release.params
    variant = (hardened_variant(p["k"]),) if hardened else ()
    out = safe_disassociate(
        Outcome(release, Trail()), p["k"], p["m"], p["max_cluster_size"], Context(seed=seed), *variant
    )
    out.release.params["sanitizers"] = [HARDENED if hardened else FAITHFUL]
    return out.release


def certify(release: Release):
    verifier = load_registry().get("verifier", "cover-freedom-algorithm-aware")
    (certificate,) = verifier.verify(release, Evidence(), {}, Context())
    return certificate


def test_figure1_faithful_is_refuted_but_not_claimed() -> None:
    cert = certify(sanitized(figure1_release(), hardened=False))
    assert cert.holds is None and "not claimed" in cert.details["reason"]
    assert cert.details["violations"] == 1
    assert cert.witness["chunk"] == "c0/record[0]"
    assert cert.witness["covered_in_every_preimage"] == ["c", "d"]
    assert cert.witness["preimages"] == "1"


def test_figure1_hardened_holds() -> None:
    for seed in range(5):
        cert = certify(sanitized(figure1_release(), hardened=True, seed=seed))
        assert cert.holds is True and cert.units == 2 and cert.details["rules"] == HARDENED


def test_a_covered_item_in_a_hardened_release_fails() -> None:
    release = sanitized(figure1_release(), hardened=True)
    release.clusters[0].record_chunks.append([["x", "y"], ["x", "y"]])
    cert = certify(release)
    assert cert.holds is False
    assert cert.witness == {"chunk": "c0/record[2]", "itemset": ["x", "y"], "covered_in_the_chunk": ["x", "y"]}


@settings(max_examples=40, deadline=None)
@given(disassociated_releases(st, min_m=2), st.integers(0, 2))
def test_random_releases(release: Release, seed: int) -> None:
    hardened = sanitized(release, hardened=True, seed=seed)
    assert certify(hardened).holds is True
    faithful = sanitized(release, hardened=False, seed=seed)
    cert = certify(faithful)
    delta = faithful.params["max_cluster_size"]
    k, m = faithful.params["k"], faithful.params["m"]
    # the violations are exactly the record chunks with a pre-image (whose covered items are fixed)
    expected = 0
    for cluster in faithful.clusters:
        for rows in cluster.record_chunks:
            inversion = invert(rows, Rules(FAITHFUL, k, m, delta - 2, cluster.size), 2)
            assert brute_covered(rows) == set()
            expected += bool(inversion.covered_in_all)
    shared = cert.details["violations"] - expected
    assert 0 <= shared <= sum(len(j.shared_chunks) for j in faithful.joint_clusters)
    assert cert.holds is (None if cert.details["violations"] else True)
