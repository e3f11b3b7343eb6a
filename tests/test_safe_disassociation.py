"""The safe-disassociation sanitizer: the paper's Figure 2, preconditions,
termination and the properties of section 4 checked by brute force."""

from __future__ import annotations

import copy
from collections import Counter

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from safe_examples import as_multiset, brute_covered, disassociated_releases, figure1_release, km_violations
from safe_reference import reference_safe_disassociate

from privtool.attacks.preimage import HARDENED, Rules, invert
from privtool.components import Outcome
from privtool.context import Context
from privtool.errors import ParameterError
from privtool.executors import ProcessExecutor
from privtool.plugins.safe_disassociation.batches import CodedChunk, apply_changes
from privtool.plugins.safe_disassociation.hardened import hardened_variant
from privtool.plugins.safe_disassociation.metrics import rlm, rlm_between
from privtool.plugins.safe_disassociation.partial import Suppression, apply_suppression, failed_preconditions
from privtool.plugins.safe_disassociation.sanitizer import FAITHFUL, safe_disassociate, sanitize_chunks
from privtool.release import Cluster, Release
from privtool.trail import Trail, trail_from_json


def sanitize(
    release: Release, seed: int = 0, delta: int | None = None, ctx: Context | None = None, hardened: bool = False
) -> Outcome:
    p = release.params
    variant = (hardened_variant(p["k"]),) if hardened else ()
    return safe_disassociate(
        Outcome(release, Trail()), p["k"], p["m"], delta or p["max_cluster_size"], ctx or Context(seed=seed), *variant
    )


def test_figure2a_with_the_papers_pairing() -> None:
    chunk = figure1_release().clusters[0].record_chunks[0]
    suppression = Suppression.from_parts("abcd", [["a", "b"], ["d", "c"]])
    assert suppression.ghosts == (("a", "d"), ("b", "c"))
    after = apply_suppression(chunk, suppression)
    figure2a = [["a"], ["c", "d"], ["a", "b"], list("abcd"), list("abcd"), ["a", "b"], ["a", "d"], ["b", "c"]]
    assert as_multiset(after) == as_multiset(figure2a)


def test_figure1_release_becomes_cover_free_with_two_ghost_records() -> None:
    for seed in range(20):
        out = sanitize(figure1_release(), seed)
        (cluster,) = out.release.clusters
        assert cluster.size == 8
        first, second = cluster.record_chunks
        assert as_multiset(second) == as_multiset([["e"], ["e"]])
        assert brute_covered(first) == set()
        assert Counter(x for row in first for x in row) == Counter({"a": 6, "b": 5, "c": 4, "d": 4})
        assert sum(row == list("abcd") for row in first) == 2
        ghosts = [g["items"] for g in out.trail.ghost_records]
        assert len(ghosts) == 2 and sorted(x for g in ghosts for x in g) == list("abcd")
        assert all(len(g) == 2 for g in ghosts)
        assert out.release.stats["ghost_records"] == 2
        assert out.release.stats["partially_suppressed_chunks"] == 1


def test_pairing_is_seeded_and_reproducible() -> None:
    pairings = {
        tuple(map(tuple, sanitize(figure1_release(), s).trail.notes["safe-disassociation"][0]["chunks"][0]["parts"]))
        for s in range(30)
    }
    assert len(pairings) > 1
    a = sanitize(figure1_release(), 7)
    b = sanitize(figure1_release(), 7)
    assert a.release.dumps() == b.release.dumps()


@pytest.mark.parametrize(
    ("rows", "itemset_support", "width", "k", "m", "delta", "failed"),
    [
        (6, 4, 4, 2, 2, 8, []),
        (7, 4, 4, 2, 2, 8, ["3"]),
        (6, 3, 4, 2, 2, 30, ["4"]),
        (6, 5, 12, 2, 2, 30, ["R"]),  # card = 6 > s(I): (4) holds, not enough copies of I
        (6, 3, 2, 2, 1, 30, []),
        (6, 2, 2, 2, 1, 30, ["4"]),
    ],
)
def test_preconditions(rows, itemset_support, width, k, m, delta, failed) -> None:
    assert failed_preconditions(rows, itemset_support, width, k, m, delta) == failed


ADVERSARIAL = [
    # |I| = 2: the touched sub-record becomes empty and leaves the chunk
    [[["x", "y"]] * 4],
    # odd |I| (singleton part), s(I) = k + card exactly
    [[["p", "q", "r"]] * 4 + [["p"]] * 2],
    # precondition (R) fails: 12 items, 5 copies, k = m = 2 -> fallback
    [[[f"t{i}" for i in range(12)]] * 5],
    # several vulnerable chunks in one cluster, the cluster filling up to delta
    [[["a", "b"]] * 3, [["c", "d", "e"]] * 5, [["f", "g"]] * 3 + [["f"]] * 2],
    # a chunk whose ghosts would exceed delta -> fallback (3)
    [[["u", "v"]] * 9],
]


@pytest.mark.parametrize("chunks", ADVERSARIAL)
def test_loop_ends_after_one_repair_pass(chunks) -> None:
    size = max(len(c) for c in chunks)
    release = Release(
        "disassociated", params={"k": 2, "m": 2, "max_cluster_size": 10}, clusters=[Cluster("c0", size, chunks, [])]
    )
    out = sanitize(release)
    (run,) = out.trail.notes["safe-disassociation"]
    assert run["passes"] == 2  # one pass repairs, the second finds nothing
    (cluster,) = out.release.clusters
    assert cluster.size <= 10
    for rows in cluster.record_chunks:
        assert brute_covered(rows) == set()
        assert km_violations(rows, 2, 2) == []
        assert len(rows) <= cluster.size


def test_sanitize_chunks_refuses_a_third_pass(monkeypatch) -> None:
    """The loop's bound is checked: a repair that did nothing would be caught."""
    import privtool.plugins.safe_disassociation.sanitizer as module

    monkeypatch.setattr(module, "apply_suppression", lambda rows, suppression: [list(r) for r in rows])
    with pytest.raises(RuntimeError, match="after 1 repair pass"):
        sanitize_chunks("c0", "record", [[["x", "y"]] * 4], 28, 2, 2, Context().seeds)


def _occurrences(release: Release) -> int:
    rows = [r for c in release.clusters for ch in c.record_chunks for r in ch]
    rows += [r for j in release.joint_clusters for ch in j.shared_chunks for r in ch]
    return sum(len(r) for r in rows)


REMOVED_THEN_REPAIRED = Release(
    "disassociated",
    params={"k": 2, "m": 2, "max_cluster_size": 10},
    clusters=[Cluster("c0", 5, [[[f"t{i}" for i in range(12)]] * 5, [["x", "y"]] * 4], ["z"])],
)
"""A removed chunk (precondition R) before a repaired one: the ghosts' chunk index moves."""


@settings(max_examples=60, deadline=None)
@given(disassociated_releases(st, min_m=2), st.integers(0, 3), st.booleans())
@example(REMOVED_THEN_REPAIRED, 0, False)
def test_sanitized_release_properties(release: Release, seed: int, hardened: bool) -> None:
    k, m, delta = release.params["k"], release.params["m"], release.params["max_cluster_size"]
    out = sanitize(release, seed, hardened=hardened)
    name = HARDENED if hardened else "safe-disassociation"
    after = out.release
    # no chunk has a covered item, every chunk is still k^m-anonymous (brute force)
    for cluster in after.clusters:
        assert cluster.size <= delta
        for rows in cluster.record_chunks:
            assert brute_covered(rows) == set()
            assert km_violations(rows, k, m) == []
            assert len(rows) <= cluster.size
    for joint in after.joint_clusters:
        total = sum(c.size for c in after.clusters if c.id in joint.members)
        for rows in joint.shared_chunks:
            assert brute_covered(rows) == set()
            assert km_violations(rows, k, m) == []
            assert len(rows) <= total
    # lemma 2: item supports kept in every chunk that was partially suppressed
    # (the hardened variant lowers the items it made covered first, and only them)
    (run,) = out.trail.notes[name]
    assert run["passes"] == (2 if run["chunks"] else 1)  # one repair pass, one pass that finds nothing
    before_chunks = {f"{c.id}/record[{i}]": rows for c in release.clusters for i, rows in enumerate(c.record_chunks)}
    before_chunks |= {
        f"{j.id}/shared[{i}]": rows for j in release.joint_clusters for i, rows in enumerate(j.shared_chunks)
    }
    suppressed = set()
    for action in run["chunks"]:
        if action["action"] == "suppressed":
            suppressed.add(action["chunk"])
    index_after = {}
    for c_before, c_after in zip(release.clusters, after.clusters, strict=False):
        kept = [i for i in range(len(c_before.record_chunks)) if f"{c_before.id}/record[{i}]" not in suppressed]
        assert len(kept) == len(c_after.record_chunks)
        for new, old in enumerate(kept):
            index_after[f"{c_before.id}/record[{old}]"] = c_after.record_chunks[new]
    for action in run["chunks"]:
        if action["action"] == "partial" and "/record[" in action["chunk"]:
            old = before_chunks[action["chunk"]]
            new = index_after[action["chunk"]]
            lowered = Counter(x for r in old for x in r) - Counter(x for r in new for x in r)
            assert set(lowered) == set(action.get("made_covered", []))
            assert Counter(x for r in new for x in r) - Counter(x for r in old for x in r) == Counter()
            assert lowered.total() == action.get("made_covered_removed", 0)
            if hardened:
                rules = Rules(HARDENED, k, m, delta - 2, max(len(new), _size(after, action["chunk"])))
                inverted = invert(new, rules, cap=k)
                assert inverted.count >= k and inverted.covered_in_all == ()
    # every suppressed occurrence is counted by RLM
    lost = _occurrences(release) - _occurrences(after)
    removed_by_fallback = sum(sum(len(r) for r in before_chunks[c]) for c in suppressed)
    removed_by_step_a = sum(a.get("made_covered_removed", 0) for a in run["chunks"])
    assert lost == removed_by_fallback + removed_by_step_a
    figures = rlm(after)
    assert figures["chunk_item_occurrences_before"] == _occurrences(release)
    assert figures["rlm"] * _occurrences(release) == pytest.approx(lost)
    assert figures["rlm"] == pytest.approx(rlm_between(release, after))
    # ghost sub-records are in the trail, each in the chunk it names
    trail_from_json(out.trail.to_json())
    for ghost in out.trail.ghost_records:
        if ghost["kind"] == "record":
            cluster = next(c for c in after.clusters if c.id == ghost["cluster"])
            assert sorted(ghost["items"]) in [sorted(r) for r in cluster.record_chunks[ghost["chunk"]]]
    # the size grows exactly by the ghost records counted
    assert sum(c.size for c in after.clusters) - sum(c.size for c in release.clusters) == after.stats["ghost_records"]


def _size(release: Release, chunk: str) -> int:
    owner = chunk.split("/")[0]
    return next(c.size for c in release.clusters if c.id == owner)


@pytest.mark.parametrize("hardened", [False, True])
def test_m_below_2_is_refused(hardened: bool) -> None:
    """Lemma 1 needs an adversary who knows two items; at m = 1 there is no
    cover breach to repair, so the sanitizer refuses rather than suppress."""
    release = figure1_release()
    release.params["m"] = 1
    with pytest.raises(ParameterError, match="--m 1: safe disassociation"):
        sanitize(release, hardened=hardened)


def test_same_release_with_serial_and_process_executors() -> None:
    clusters = [Cluster(f"c{i}", 6, [[list("abcd")] * 4 + [["a"], ["a", "b"]], [["e"], ["e"]]], []) for i in range(12)]
    release = Release("disassociated", params={"k": 2, "m": 2, "max_cluster_size": 30}, clusters=clusters)
    serial = sanitize(release, 3)
    executor = ProcessExecutor(2)
    try:  # batches of a few clusters, so that the pool gets several
        process = sanitize(release, 3, ctx=Context(seed=3, executor=executor, unit_occurrences=40))
    finally:
        executor.close()
    assert serial.release.dumps() == process.release.dumps()
    assert serial.trail.dumps() == process.trail.dumps()


@settings(max_examples=80, deadline=None)
@given(disassociated_releases(st, min_m=2), st.integers(0, 3), st.booleans(), st.integers(1, 60))
@example(REMOVED_THEN_REPAIRED, 0, False, 1)
def test_array_path_matches_the_nested_reference(release: Release, seed: int, hardened: bool, unit: int) -> None:
    """Release, trail and stats as the nested-list sanitizer made them
    (tests/safe_reference.py), whatever the batches the owners are cut into."""
    k, m, delta = release.params["k"], release.params["m"], release.params["max_cluster_size"]
    variant = hardened_variant(k) if hardened else FAITHFUL
    expected = reference_safe_disassociate(
        Outcome(copy.deepcopy(release), Trail()), k, m, delta, Context(seed), variant
    )
    got = safe_disassociate(Outcome(release, Trail()), k, m, delta, Context(seed, unit_occurrences=unit), variant)
    assert got.release.dumps() == expected.release.dumps()
    assert got.release.stats == expected.release.stats
    assert got.trail.to_json() == expected.trail.to_json()


def test_stats_of_the_method_stay_consistent() -> None:
    release = figure1_release()
    release.clusters[0].record_chunks.append([["u", "v"]] * 6)  # (3) fails with delta = 7: suppressed
    release.stats = {"item_occurrences_published": 40, "record_chunks": 3, "item_occurrences_in_record_chunks": 33}
    out = sanitize(release, delta=8)
    stats = out.release.stats
    assert stats["suppressed_chunks"] == 0 and stats["partially_suppressed_chunks"] == 2
    out = sanitize(release, delta=7)
    stats = out.release.stats
    # both chunks fail (3) at delta = 7: 19 + 12 occurrences suppressed, none moved to ghosts
    assert stats["suppressed_chunks"] == 2 and stats["record_chunks"] == 1
    assert stats["item_occurrences_in_record_chunks"] == 2
    assert stats["item_occurrences_published"] == 40 - 31


@settings(max_examples=60, deadline=None)
@given(disassociated_releases(st), st.data())
def test_apply_changes_matches_the_nested_release(release: Release, data) -> None:
    """Chunks removed or replaced (by their rows with the last one dropped,
    or doubled) in the arrays, slab by slab or at once, give the arrays of
    the nested release changed alike."""
    arrays = release.canonical().arrays
    code = {label: i for i, label in enumerate(arrays.labels)}
    nested = release.canonical()
    owners = [c.record_chunks for c in nested.clusters] + [j.shared_chunks for j in nested.joint_clusters]
    changes: dict[int, CodedChunk | None] = {}
    position = 0
    for chunks in owners:
        for index, rows in enumerate(list(chunks)):
            action = data.draw(st.sampled_from(["keep", "remove", "shrink", "double"]))
            if action == "remove":
                changes[position] = None
                chunks[index] = None
            elif action != "keep" and (action == "double" or len(rows) > 1):
                rows = rows[:-1] if action == "shrink" else rows + rows
                changes[position] = CodedChunk.of(rows, code)
                chunks[index] = rows
            position += 1
        chunks[:] = [rows for rows in chunks if rows is not None]
    clusters = [
        Cluster(c.id, max([c.size, *map(len, c.record_chunks)]), c.record_chunks, c.term_chunk) for c in nested.clusters
    ]
    expected = Release("disassociated", clusters=clusters, joint_clusters=nested.joint_clusters).canonical().arrays
    for slab in (1, 7, 1 << 22):
        got = apply_changes(arrays, changes, slab=slab)
        assert got.labels == expected.labels
        for name in (
            "items",
            "row_offsets",
            "chunk_offsets",
            "owner_offsets",
            "term_items",
            "term_offsets",
            "cluster_sizes",
        ):
            assert getattr(got, name).tolist() == getattr(expected, name).tolist(), name
