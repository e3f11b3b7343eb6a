"""The ``forced-cooccurrence`` attack against every reconstruction of tiny
releases (tests/reconstruction_oracle.py, written from the definition)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from reconstruction_oracle import flat_members, naive_reconstructions, tiny_releases
from safe_examples import figure1_release

from privtool.attacks.forced_cooccurrence import forced_pairs
from privtool.components import Evidence
from privtool.context import Context
from privtool.registry import load_registry
from privtool.release import Release


def slots_of(release: Release) -> dict[str, list[int]]:
    """Record positions of each cluster and each joint cluster in the oracle's datasets."""
    out, start = {}, 0
    for c in release.clusters:
        out[c.id] = list(range(start, start + c.size))
        start += c.size
    for joint, members in zip(release.joint_clusters, flat_members(release), strict=True):
        out[joint.id] = [s for m in members for s in out[m]]
    return out


def places(release: Release, scope: str, label: str) -> int:
    """In how many chunks (or term chunks) around ``scope`` the label is published."""
    count = 0
    for c in release.clusters:
        if c.id == scope:
            count += sum(any(label in r for r in ch) for ch in c.record_chunks) + (label in c.term_chunk)
    for j in release.joint_clusters:
        count += sum(any(label in r for r in ch) for ch in j.shared_chunks)
    return count


@settings(max_examples=30, deadline=None)
@given(st.booleans().flatmap(lambda nested: tiny_releases(nested=nested)))
def test_forced_pairs_are_the_minimum_over_every_reconstruction(release: Release) -> None:
    # a term on one record co-occurs least, so the minimum needs no larger term cap
    datasets = naive_reconstructions(release, term_cap=1)
    slots = slots_of(release)

    def fewest(scope: str, a: str, b: str) -> int:
        return min(sum({a, b} <= d[s] for s in slots[scope]) for d in datasets)

    found = forced_pairs(release)
    pairs = found.pairs
    assert found.total == len(pairs)
    for p in pairs:  # sound: every reconstruction has at least that many
        assert p.forced >= 1 and fewest(p.scope, p.a, p.b) >= p.forced, p
    # exact for two record chunks of one cluster (items published nowhere else there)
    found = {(p.scope, p.a, p.b): p.forced for p in pairs}
    for c in release.clusters:
        for i, first in enumerate(c.record_chunks):
            for second in c.record_chunks[i + 1 :]:
                for a in {x for r in first for x in r}:
                    for b in {x for r in second for x in r}:
                        if a == b or places(release, c.id, a) > 1 or places(release, c.id, b) > 1:
                            continue
                        key = (c.id, *sorted((a, b)))
                        least = fewest(c.id, a, b)
                        assert found.get(key, 0) == least, (key, least)


def test_figure1_forces_a_with_e() -> None:
    """a is in all 6 records and e in 2: every reconstruction pairs them twice
    (a pair with an item in every record); b (5) and e (2) share at least 1."""
    pairs = {(p.a, p.b): p for p in forced_pairs(figure1_release()).pairs}
    assert pairs[("a", "e")].forced == 2 and pairs[("a", "e")].universal
    assert pairs[("b", "e")].forced == 1 and not pairs[("b", "e")].universal
    assert ("c", "e") not in pairs  # 4 + 2 - 6 = 0
    attack = load_registry().get("attack", "forced-cooccurrence")
    summary, finding = attack.run(figure1_release(), Evidence(), {}, Context())
    assert summary.evidence["forced_pairs"] == 2
    assert summary.evidence["forced_pairs_partial"] == 1
    assert finding.severity == "risk" and finding.evidence["pairs"][0]["items"] == ["b", "e"]
    assert "consistent-reconstruction" in finding.evidence["adversary"]
