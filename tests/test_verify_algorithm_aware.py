"""The algorithm-aware cover-freedom verifier and the algorithm-aware rows of
the assessment: Figure 1 through both sanitizers, a planted violation, and
random releases through both."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from safe_examples import brute_covered, disassociated_releases, figure1_release

from privtool.assess import ATTACK, VERIFY, assess
from privtool.attacks.preimage import FAITHFUL, HARDENED, Rules, invert
from privtool.claims import Claim
from privtool.components import Evidence, Outcome
from privtool.context import Context
from privtool.pipeline import apply_sanitizers
from privtool.registry import load_registry
from privtool.release import Release
from privtool.trail import Trail

REGISTRY = load_registry()


def sanitized(release: Release, hardened: bool, seed: int = 0) -> Release:
    """``release`` through a safe-disassociation sanitizer, claims declared."""
    p = release.params
    release.claims = [Claim("km-anonymity", {"k": p["k"], "m": p["m"]})]
    chain = [REGISTRY.get("sanitizer", HARDENED if hardened else FAITHFUL)]
    values = {"k": p["k"], "m": p["m"], "max_cluster_size": p["max_cluster_size"], "min_preimages": None}
    values["decoy_bound"] = None
    return apply_sanitizers(REGISTRY, Outcome(release, Trail()), chain, values, Context(seed=seed)).release


def certify(release: Release):
    verifier = REGISTRY.get("verifier", "cover-freedom-algorithm-aware")
    (certificate,) = verifier.verify(release, Evidence(), {}, Context())
    return certificate


def criteria(result) -> dict[tuple[str, str], str]:
    return {(c.criterion, c.adversary): c.status for c in result.criteria()}


def test_figure1_faithful_claims_the_weaker_adversary_only() -> None:
    release = sanitized(figure1_release(), hardened=False)
    assert [c.adversary for c in release.claims if c.model == "cover-freedom"] == ["consistent-reconstruction"]
    cert = certify(release)  # what the verifier finds if asked: refuted
    assert cert.holds is False and cert.details["violations"] == 1
    assert cert.witness["chunk"] == "c0/record[0]"
    assert cert.witness["covered_in_every_preimage"] == ["c", "d"]
    assert cert.witness["preimages"] == "1"
    result = assess(REGISTRY, release, Evidence(), Context(), VERIFY)
    assert result.verdict == "PASS"  # every claim holds; the verifier does not run for a claim never made
    rows = criteria(result)
    assert rows[("inference", "consistent-reconstruction")] == "PASS"
    assert rows[("inference", "algorithm-aware")] == "NOT PROTECTED"
    assert rows[("singling-out", "algorithm-aware")] == "NOT PROTECTED"
    attacked = assess(REGISTRY, release, Evidence(), Context(), ATTACK, attacks=["preimage"])
    (run,) = attacked.attacks
    found = [f for f in run.findings if f.refutes == "cover-freedom"]
    assert len(found) == 1 and found[0].severity == "risk"
    assert "does not claim cover-freedom against the algorithm-aware adversary" in found[0].explanation
    assert attacked.verdict == "PASS"
    assert "1 of 2 chunks" in run.exposure


def test_figure1_hardened_holds_against_the_algorithm_aware_adversary() -> None:
    for seed in range(3):
        release = sanitized(figure1_release(), hardened=True, seed=seed)
        assert [c.adversary for c in release.claims if c.model == "cover-freedom"] == ["algorithm-aware"]
        cert = certify(release)
        assert cert.holds is True and cert.units == 2 and cert.details["rules"] == HARDENED
        result = assess(REGISTRY, release, Evidence(), Context(), ATTACK)
        assert result.verdict == "PASS", result.verdict_reason
        claim = next(c for c in result.claims if c.claim.model == "cover-freedom")
        assert claim.status == "holds" and [r.verifier for r in claim.runs] == ["cover-freedom-algorithm-aware"]
        rows = criteria(result)
        assert rows[("inference", "algorithm-aware")] == "PASS"
        assert rows[("inference", "consistent-reconstruction")] == "PASS"
        assert rows[("singling-out", "algorithm-aware")] == "NOT PROTECTED"


def test_a_covered_item_in_a_hardened_release_fails() -> None:
    release = sanitized(figure1_release(), hardened=True)
    release.clusters[0].record_chunks.append([["x", "y"], ["x", "y"]])
    cert = certify(release)
    assert cert.holds is False
    assert cert.witness == {"chunk": "c0/record[2]", "itemset": ["x", "y"], "covered_in_the_chunk": ["x", "y"]}
    result = assess(REGISTRY, release, Evidence(), Context(), VERIFY)
    assert result.verdict == "FAIL"
    assert criteria(result)[("inference", "algorithm-aware")] == "FAIL"


def test_an_algorithm_aware_claim_without_its_verifier_is_unverified() -> None:
    release = sanitized(figure1_release(), hardened=True)
    result = assess(REGISTRY, release, Evidence(), Context(), VERIFY, only=["cover-freedom"])
    claim = next(c for c in result.claims if c.claim.model == "cover-freedom")
    assert claim.status == "unverified"  # the consistent-reconstruction verifier cannot prove it
    assert result.verdict == "INCOMPLETE"


@settings(max_examples=20, deadline=None)
@given(disassociated_releases(st, min_m=2), st.integers(0, 2))
def test_random_releases(release: Release, seed: int) -> None:
    original = Release(
        release.kind, dict(release.params), clusters=release.clusters, joint_clusters=release.joint_clusters
    )
    hardened = sanitized(release, hardened=True, seed=seed)
    assert certify(hardened).holds is True
    faithful = sanitized(original, hardened=False, seed=seed)
    cert = certify(faithful)
    delta = faithful.params["max_cluster_size"]
    k, m = faithful.params["k"], faithful.params["m"]
    # the violations are exactly the chunks with a pre-image (whose covered items are fixed)
    expected = 0
    for cluster in faithful.clusters:
        for rows in cluster.record_chunks:
            inversion = invert(rows, Rules(FAITHFUL, k, m, delta - 2, cluster.size), 2)
            assert brute_covered(rows) == set()
            expected += bool(inversion.covered_in_all)
    shared = cert.details["violations"] - expected
    assert 0 <= shared <= sum(len(j.shared_chunks) for j in faithful.joint_clusters)
    assert cert.holds is (cert.details["violations"] == 0)


def test_audit_shows_the_algorithm_aware_column(run_cli, tmp_path) -> None:
    """The paper's release: the algorithm-aware inference row is NOT PROTECTED,
    with the preimage attack's exposure beside it; the hardened one: PASS."""
    from privtool.release import write_release

    for hardened, status in ((False, "NOT PROTECTED"), (True, "PASS")):
        path = tmp_path / f"release-{hardened}.json"
        write_release(sanitized(figure1_release(), hardened=hardened), path)
        report = tmp_path / f"audit-{hardened}.json"
        result = run_cli("audit", path, "--format", "json", "-o", report)
        assert result.code == 0, result.err
        rows = {(c["criterion"], c["adversary"]): c for c in json.loads(report.read_text())["criteria"]}
        row = rows[("inference", "algorithm-aware")]
        assert row["status"] == status
        exposure = " ".join(row["exposure"])
        assert ("1 of 2 chunks" if not hardened else "0 of 2 chunks") in exposure


def test_verify_and_audit_print_both_adversary_columns(run_cli, tmp_path) -> None:
    """A plain disassociated release (no sanitizer): the terminal reports of
    verify and audit both have the algorithm-aware column, NOT PROTECTED, so
    nothing reads PASS for the adversary no claim addresses."""
    from privtool.audit import ADVERSARY_TITLES
    from privtool.release import write_release

    path = tmp_path / "plain.json"
    write_release(figure1_release(), path)
    for command in (("verify", path), ("audit", path, "--format", "terminal")):
        result = run_cli(*command)
        assert result.code == 0, result.err
        text = " ".join(result.out.split())
        assert "Criteria (WP29)" in text, command
        for title in ADVERSARY_TITLES.values():
            assert " ".join(title.split()[:3]) in text, (command, title)
        assert "NOT PROTECTED" in text, command
