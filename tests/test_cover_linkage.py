"""The cover-linkage attack: the paper's Figure 1 breach, and certain links
checked against every reconstruction of tiny clusters."""

from __future__ import annotations

from itertools import permutations

from hypothesis import given, settings
from hypothesis import strategies as st
from safe_examples import disassociated_releases, figure1_release, km_chunk

from privtool.attacks.cover_linkage import CoverLinkage, certain_links, cluster_views, link_in_cluster
from privtool.components import Evidence, Outcome
from privtool.context import Context
from privtool.plugins.safe_disassociation.sanitizer import safe_disassociate
from privtool.release import Cluster, Release
from privtool.trail import Trail


def attack(release: Release, known: int | None = None):
    return CoverLinkage().run(release, Evidence(), {"known": known}, Context())


def safe(release: Release, seed: int = 0) -> Release:
    p = release.params
    return safe_disassociate(
        Outcome(release, Trail()), p["k"], p["m"], p["max_cluster_size"], Context(seed=seed)
    ).release


def test_figure1_links_d_e_to_a_b_c_with_certainty() -> None:
    linked, (link,) = certain_links(figure1_release(), ["d", "e"])
    assert linked == ["a", "b", "c"]
    assert link.candidates["c0/record[0]"] == [list("abcd")] * 4
    assert (link.min_records, link.max_records) == (0, 2)
    breaches = [f for f in attack(figure1_release()) if f.severity == "breach"]
    assert len(breaches) == 1
    evidence = breaches[0].evidence
    assert evidence["covered_items"] == ["c", "d"]
    assert all(row == list("abcd") for row in evidence["subrecords_with_known"])
    assert evidence["partner_chunk"] == "c0/record[1]"


def test_safe_release_leaves_no_certain_link() -> None:
    for seed in range(10):
        release = safe(figure1_release(), seed)
        assert certain_links(release, ["d", "e"])[0] == []
        assert [f for f in attack(release) if f.severity == "breach"] == []


def brute_links(cluster: Cluster, known: set[str]):
    """Over every reconstruction of ``cluster`` (record chunks only): the items
    in every record that holds ``known``, and the fewest / most such records."""
    n = cluster.size
    padded = [[frozenset(r) for r in rows] + [frozenset()] * (n - len(rows)) for rows in cluster.record_chunks]
    orders = [[tuple(padded[0])]] + [sorted(set(permutations(rows))) for rows in padded[1:]]
    common: set[str] | None = None
    counts = []

    def walk(level: int, records: list[frozenset]) -> None:
        nonlocal common
        if level == len(orders):
            holding = [r for r in records if known <= r]
            counts.append(len(holding))
            for r in holding:
                common = set(r) if common is None else common & r
            return
        for order in orders[level]:
            walk(level + 1, [a | b for a, b in zip(records, order, strict=False)])

    walk(0, [frozenset()] * n)
    return common, min(counts), max(counts)


@st.composite
def tiny_clusters(draw):
    k = 2
    chunks = []
    pool = list("abcdefgh")
    for c in range(draw(st.integers(1, 3))):
        items = pool[3 * c : 3 * c + draw(st.integers(1, 3))]
        chunks.append(km_chunk(draw, st, items, k))
    size = max(len(ch) for ch in chunks)
    if size > 5:
        chunks = [ch[:5] for ch in chunks]
        size = 5
    items = sorted({x for ch in chunks for r in ch for x in r})
    known = draw(st.sets(st.sampled_from(items), min_size=1, max_size=3))
    return Cluster("c0", size + draw(st.integers(0, 1)), chunks, []), known


@settings(max_examples=40, deadline=None)
@given(tiny_clusters())
def test_certain_links_match_every_reconstruction(case) -> None:
    cluster, known = case
    release = Release("disassociated", params={"k": 2, "m": 2}, clusters=[cluster])
    (view,) = cluster_views(release)
    link = link_in_cluster(view, sorted(known), 2)
    common, fewest, most = brute_links(cluster, set(known))
    if common is None:
        assert link is None or link.max_records == 0
        return
    assert link is not None
    assert set(link.linked) == common - known
    assert (link.min_records, link.max_records) == (fewest, most)


@settings(max_examples=40, deadline=None)
@given(disassociated_releases(st), st.integers(0, 2))
def test_no_lemma1_breach_after_the_sanitizer_for_two_known_items(release: Release, seed: int) -> None:
    release.params["m"] = 2
    after = safe(release, seed)
    assert [f for f in attack(after, known=2) if f.severity == "breach"] == []


@settings(max_examples=40, deadline=None)
@given(disassociated_releases(st), st.integers(2, 3))
def test_breach_evidence_checks_by_hand(release: Release, known: int) -> None:
    for finding in attack(release, known):
        if finding.severity != "breach":
            continue
        e = finding.evidence
        assert len(e["known"]) <= known
        _, links = certain_links(release, e["known"])
        link = next(link for link in links if link.cluster == e["cluster"])
        assert set(e["linked_with_certainty"]) <= set(link.linked)
        chunk_items = {x for row in e["subrecords_with_known"] for x in row}
        assert all(set(row) == chunk_items for row in e["subrecords_with_known"])
        assert len(e["subrecords_with_known"]) == e["chunk_itemset_support"]


def test_cover_findings_are_risks_unless_cover_freedom_is_claimed(run_cli, tmp_path) -> None:
    """A plain disassociated release claims k^m-anonymity, not cover-freedom: its
    certain links are risks (exit 0). The safe release claims cover-freedom and
    has none. A release that claims cover-freedom while a chunk has a covered
    item is breached (exit 1), in ``attack`` as in ``verify``."""
    import json

    from privtool.claims import Claim
    from privtool.release import write_release

    plain, safe_path, lying = tmp_path / "plain.json", tmp_path / "safe.json", tmp_path / "lying.json"
    write_release(figure1_release(), plain)
    safe_release = safe(figure1_release())
    safe_release.claims = [*safe_release.claims, Claim("cover-freedom", {"m": 2})]
    write_release(safe_release, safe_path)
    claiming = figure1_release()
    claiming.claims = [*claiming.claims, Claim("cover-freedom", {"m": 2})]
    write_release(claiming, lying)
    result = run_cli("attack", plain, "--attack", "cover-linkage", "--json", "-q")
    assert result.code == 0, result.out
    report = json.loads(result.out)
    [run] = report["attacks"]
    lemma = [f for f in run["findings"] if f["refutes"] == "cover-freedom"]
    assert lemma and all(f["severity"] == "risk" for f in lemma)
    assert all("does not claim cover-freedom" in f["explanation"] for f in lemma)
    assert report["verdict"] == "PASS"
    result = run_cli("attack", safe_path, "--attack", "cover-linkage", "--json", "-q")
    assert result.code == 0, result.err
    assert not [f for f in json.loads(result.out)["attacks"][0]["findings"] if f["refutes"] == "cover-freedom"]
    result = run_cli("attack", lying, "--attack", "cover-linkage", "--json", "-q")
    assert result.code == 1
    report = json.loads(result.out)
    claims = {c["claim"]["model"]: c["status"] for c in report["claims"]}
    assert claims == {"km-anonymity": "holds", "cover-freedom": "fails"}  # the verifier refutes it first
    assert report["breaches"] >= 1 and report["verdict"] == "FAIL"
    assert run_cli("verify", lying, "-q").code == 1
