"""The assessment engine's rules on a toy claim model, verifier and attack
registered as a plugin: a claim's status from its certificates (0 units prove
nothing, a time bound makes it unknown, a raising verifier an error), the
verdict and exit code, breach or risk by adversary, and the criteria."""

from __future__ import annotations

import types
from typing import Any, ClassVar

import pytest

from privtool.assess import ATTACK, AUDIT, VERIFY, assess
from privtool.claims import ADVERSARIES, Claim
from privtool.components import Attack, ClaimModel, Evidence, Verifier
from privtool.context import Context
from privtool.hookspecs import hookimpl
from privtool.params import Param
from privtool.registry import load_registry
from privtool.release import Release
from privtool.results import Certificate, Finding


class Toy(ClaimModel):
    name = "toy"
    summary = "a toy model"
    params = (Param("k", int, required=True, min=2),)
    criteria: ClassVar[tuple[str, ...]] = ("singling-out",)
    carried_by: ClassVar[tuple[str, ...]] = ("sanitized",)

    def statement(self, claim: Claim) -> str:
        return f"toy at k = {claim.params['k']}."


class ToyProof(Verifier):
    """Answers as ``release.params["mode"]`` says, for claims against either
    adversary."""

    name = "toy-proof"
    summary = "proves toy as told"
    params = (Param("k", int, None, min=2),)
    applies_to: ClassVar[tuple[str, ...]] = ("sanitized",)
    proves: ClassVar[tuple[str, ...]] = ("toy",)
    adversaries: ClassVar[tuple[str, ...]] = ADVERSARIES

    def verify(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Certificate]:
        mode = release.params["mode"]
        if mode == "raise":
            raise RuntimeError("the toy verifier broke")
        answers = {
            "holds": (True, 1, None, {}),
            "empty": (True, 0, None, {}),
            "timeout": (None, 1, None, {"timed_out": True, "reason": "time bound"}),
            "refute": (False, 1, {"record": ["a"], "k": params["k"]}, {}),
        }
        holds, units, witness, details = answers[mode]
        return [Certificate(self.name, holds, "toy", units, 0.0, witness, dict(details))]


class ToyAttack(Attack):
    name = "toy-attack"
    summary = "refutes toy, as an algorithm-aware adversary"
    applies_to: ClassVar[tuple[str, ...]] = ("sanitized",)
    criteria: ClassVar[tuple[str, ...]] = ("singling-out",)
    refutes: ClassVar[tuple[str, ...]] = ("toy",)
    adversary: ClassVar[str] = "algorithm-aware"
    adversary_statement: ClassVar[str] = "The toy adversary knows the algorithm."

    def run(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Finding]:
        return [Finding(self.name, "breach", "the toy record is unique", {"record": ["a"]}, refutes="toy")]


@hookimpl
def privtool_claim_models() -> list[ClaimModel]:
    return [Toy()]


@hookimpl
def privtool_verifiers() -> list[Verifier]:
    return [ToyProof()]


@hookimpl
def privtool_attacks() -> list[Attack]:
    return [ToyAttack()]


@pytest.fixture(scope="module")
def registry():
    plugin = types.ModuleType("toy_plugin")
    for hook in (privtool_claim_models, privtool_verifiers, privtool_attacks):
        setattr(plugin, hook.__name__, hook)
    return load_registry(extra={"toy": plugin})


def toy_release(mode: str, adversary: str = "consistent-reconstruction") -> Release:
    return Release(
        "sanitized", params={"mode": mode}, records=[["a"], ["a"]], claims=[Claim("toy", {"k": 2}, adversary)]
    )


@pytest.mark.parametrize(
    ("mode", "status", "verdict", "code"),
    [
        ("holds", "holds", "PASS", 0),
        ("empty", "unverified", "INCOMPLETE", 1),
        ("timeout", "unknown", "INCOMPLETE", 1),
        ("refute", "fails", "FAIL", 1),
        ("raise", "error", "INCOMPLETE", 3),
    ],
)
def test_claim_status_from_certificates(registry, mode: str, status: str, verdict: str, code: int) -> None:
    result = assess(registry, toy_release(mode), Evidence(), Context(), VERIFY)
    [claim] = result.claims
    assert (claim.status, result.verdict, result.exit_code) == (status, verdict, code)
    if mode == "empty":
        assert "nothing to check" in claim.reason
    if mode == "raise":
        assert result.failures and "the toy verifier broke" in result.failures[0].error
        assert result.failures[0].plugin == "toy"


def test_stricter_and_weaker_overrides(registry) -> None:
    stricter = assess(registry, toy_release("holds"), Evidence(), Context(), VERIFY, overrides={"k": 5})
    assert stricter.claims[0].status == "holds" and stricter.claims[0].checked == {"k": 5}
    release = toy_release("holds")
    release.claims = [Claim("toy", {"k": 5})]
    weaker = assess(registry, release, Evidence(), Context(), VERIFY, overrides={"k": 2})
    assert weaker.claims[0].status == "unverified" and weaker.verdict == "INCOMPLETE"
    refuted = toy_release("refute")
    refuted.claims = [Claim("toy", {"k": 5})]
    assert assess(registry, refuted, Evidence(), Context(), VERIFY, overrides={"k": 2}).claims[0].status == "fails"


def test_a_breach_needs_a_claim_against_that_adversary(registry) -> None:
    """The toy attack plays the algorithm-aware adversary: against a claim that
    holds only for consistent reconstruction its finding is a risk, against a
    claim for the algorithm-aware adversary a breach."""
    weak = assess(registry, toy_release("holds"), Evidence(), Context(), ATTACK, attacks=["toy-attack"])
    [finding] = weak.attacks[0].findings
    assert finding.severity == "risk" and "does not claim toy against the algorithm-aware" in finding.explanation
    assert weak.verdict == "PASS" and weak.claims[0].status == "holds"
    strong = assess(
        registry, toy_release("holds", "algorithm-aware"), Evidence(), Context(), ATTACK, attacks=["toy-attack"]
    )
    [finding] = strong.attacks[0].findings
    assert finding.severity == "breach" and strong.claims[0].status == "breached"
    assert (strong.verdict, strong.exit_code) == ("FAIL", 1)


def test_criteria_pass_only_where_a_claim_covers_them(registry) -> None:
    def statuses(release: Release) -> dict[tuple[str, str], str]:
        result = assess(registry, release, Evidence(), Context(), AUDIT, attacks=["linkage"])
        return {(c.criterion, c.adversary): c.status for c in result.criteria()}

    weak = statuses(toy_release("holds"))
    assert weak[("singling-out", "consistent-reconstruction")] == "PASS"
    assert weak[("singling-out", "algorithm-aware")] == "NOT PROTECTED"
    assert weak[("inference", "consistent-reconstruction")] == "NOT PROTECTED"
    strong = statuses(toy_release("holds", "algorithm-aware"))
    assert strong[("singling-out", "algorithm-aware")] == "PASS"  # covers the weaker adversary too
    assert strong[("singling-out", "consistent-reconstruction")] == "PASS"
    assert statuses(toy_release("timeout"))[("singling-out", "consistent-reconstruction")] == "INCOMPLETE"
    assert statuses(toy_release("refute"))[("singling-out", "consistent-reconstruction")] == "FAIL"


def test_a_release_that_claims_nothing_is_incomplete(registry) -> None:
    result = assess(registry, Release("sanitized", records=[["a"]]), Evidence(), Context(), VERIFY)
    assert (result.verdict, result.exit_code) == ("INCOMPLETE", 1)
    assert "claims no privacy model" in result.verdict_reason


def test_structure_problems_stop_everything(registry) -> None:
    release = Release("sanitized", records=[["a"]], claims=[Claim("toy", {"k": 1}), Claim("nope", {})])
    result = assess(registry, release, Evidence(), Context(), AUDIT)
    assert [str(p) for p in result.structure] == [
        "$.claims[0].k: must be at least 2, not 1",
        "$.claims[1]: unknown privacy model 'nope' (known: cover-freedom, k-anonymity, km-anonymity, rule-hiding, toy)",
    ]
    assert result.claims == [] and result.attacks == [] and result.verdict == "FAIL"


def test_zero_units_prove_nothing_but_do_not_block_the_other_verifier(registry) -> None:
    """k^m-anonymity of a disassociated release whose clusters publish only term
    chunks: the chunk verifier has nothing to check, the disassociation
    guarantee proves the claim on the clusters; a release with no cluster at
    all has nothing to check anywhere, so its claim is unverified."""
    from privtool.assessment_tables import claim_evidence
    from privtool.release import Cluster

    claim = [Claim("km-anonymity", {"k": 2, "m": 2})]
    terms_only = Release("disassociated", claims=claim, clusters=[Cluster("c0", 3, [], ["t", "u"])])
    result = assess(registry, terms_only, Evidence(), Context(), VERIFY)
    [held] = result.claims
    assert {run.verifier: run.outcome for run in held.runs} == {
        "disassociation-guarantee": "proved",
        "km-anonymity": "nothing to check",
    }
    assert held.status == "holds" and result.verdict == "PASS"
    assert claim_evidence(held) == "proved by disassociation-guarantee (1 units); nothing to check for km-anonymity"
    empty = assess(registry, Release("disassociated", claims=claim), Evidence(), Context(), VERIFY)
    assert empty.claims[0].status == "unverified" and empty.verdict == "INCOMPLETE"


def test_a_verifier_proves_claims_only_against_the_adversaries_it_declares(registry, monkeypatch) -> None:
    """A verifier that models the consistent-reconstruction adversary only leaves
    a claim made against the algorithm-aware adversary unverified, never proved."""
    monkeypatch.setattr(ToyProof, "adversaries", ("consistent-reconstruction",))
    strong = assess(registry, toy_release("holds", "algorithm-aware"), Evidence(), Context(), VERIFY)
    assert strong.claims[0].status == "unverified" and strong.verdict == "INCOMPLETE"
    weak = assess(registry, toy_release("holds"), Evidence(), Context(), VERIFY)
    assert weak.claims[0].status == "holds" and weak.verdict == "PASS"
