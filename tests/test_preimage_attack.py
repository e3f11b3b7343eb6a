"""The ``preimage`` attack: the safe-disassociation paper's Figure 1, faithful
and hardened, through the registry."""

from __future__ import annotations

from safe_examples import as_multiset, figure1_release

from privtool.components import Evidence, Outcome
from privtool.context import Context
from privtool.plugins.safe_disassociation.hardened import hardened_variant
from privtool.plugins.safe_disassociation.sanitizer import safe_disassociate
from privtool.registry import load_registry
from privtool.release import Release
from privtool.trail import Trail


def safe_figure1(seed: int, hardened: bool) -> Outcome:
    variant = (hardened_variant(2),) if hardened else ()
    out = safe_disassociate(Outcome(figure1_release(), Trail()), 2, 2, 30, Context(seed=seed), *variant)
    out.release.params["sanitizers"] = ["safe-disassociation-hardened" if hardened else "safe-disassociation"]
    return out


def run(release: Release, trail: Trail | None = None):
    attack = load_registry().get("attack", "preimage")
    return attack.run(release, Evidence(trail=trail), {}, Context())


def test_figure1_faithful_release_is_inverted() -> None:
    """The issue's example: the repaired chunk has one pre-image, the original
    chunk, where c and d are covered again; an adversary who knows the
    algorithm and {c, e} links a, b and d."""
    for seed in range(5):
        out = safe_figure1(seed, hardened=False)
        summary, *findings = run(out.release, out.trail)
        assert summary.severity == "info"
        assert summary.evidence["chunks_with_one_preimage"] == 1
        assert summary.evidence["repaired_with_preimages"] == 1
        (finding,) = findings
        e = finding.evidence
        assert e["chunk"] == "c0/record[0]" and e["covered_in_every_preimage"] == ["c", "d"]
        assert as_multiset(e["only_preimage"]) == as_multiset(figure1_release().clusters[0].record_chunks[0])
        assert e["known"] == ["c", "e"] and e["linked_if_repaired"] == ["a", "b", "d"]
        assert e["repaired_per_trail"] is True
        assert "algorithm-aware" in e["adversary"]


def test_figure1_hardened_release_is_not_inverted() -> None:
    for seed in range(5):
        out = safe_figure1(seed, hardened=True)
        summary, *findings = run(out.release, out.trail)
        assert findings == []
        assert summary.evidence["chunks_with_preimages"] == 1
        assert summary.evidence["chunks_covered_in_every_preimage"] == 0
        assert summary.evidence["fewest_preimages"] >= 2


def test_nothing_to_invert_without_a_safe_sanitizer() -> None:
    assert run(figure1_release()) == []
