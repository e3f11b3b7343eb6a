"""Decoys of the hardened safe disassociation (issue 17, item 3) and the
repair distinguisher of the ``preimage`` attack.

The oracle is the brute force of ``test_preimage``: a published chunk looks
repaired when some chunk of its universe is turned into it by the hardened
repair (every random choice tried). Against it: in every release made with
decoys at bound ``beta``, for every shape, repaired chunks are at most
``beta`` of the published chunks of that shape; every decoy looks repaired;
and the attack's distinguisher counts what the oracle counts."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from safe_examples import brute_covered, figure1_release, km_violations
from test_preimage import brute, key

import privtool
from privtool.attacks.preimage import HARDENED
from privtool.claims import Claim
from privtool.components import Evidence, Outcome
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.executors import ProcessExecutor
from privtool.plugins.safe_disassociation.decoys import decoys_needed, repairs_kept
from privtool.plugins.safe_disassociation.hardened import hardened_variant
from privtool.plugins.safe_disassociation.sanitizer import safe_disassociate
from privtool.registry import load_registry
from privtool.release import Cluster, Release
from privtool.trail import Trail

K, M, DELTA = 2, 2, 8
LETTERS = "abc"


def sanitize(release: Release, seed: int, bound: float | None) -> Outcome:
    out = safe_disassociate(Outcome(release, Trail()), K, M, DELTA, Context(seed=seed), hardened_variant(K, bound))
    out.release.params["sanitizers"] = [HARDENED]
    out.release.params["decoy_bound"] = bound
    return out


def attack(out: Outcome) -> dict:
    summary, *_ = load_registry().get("attack", "preimage").run(out.release, Evidence(trail=out.trail), {}, Context())
    return summary.evidence


def oracle_shape(rows: list[list[str]], size: int) -> tuple[str, int, int] | None:
    """Shape of a published record chunk by brute force (None: it does not look repaired)."""
    items = sorted({x for row in rows for x in row})
    if len(items) < 2:
        return None
    rename = dict(zip(items, LETTERS, strict=False))
    relabelled = key([[rename[x] for x in row] for row in rows])
    if relabelled not in brute(LETTERS[: len(items)], size, K, M, DELTA - 2, True):
        return None
    supports = Counter(x for row in rows for x in row)
    return ("record", len(items), sum(s == min(supports.values()) for s in supports.values()))


@st.composite
def small_releases(draw) -> Release:
    """Record chunks of 2-3 items and at most 7 rows (the brute force's universe)."""
    clusters, used = [], 0
    for c in range(draw(st.integers(1, 4))):
        chunks = []
        for _ in range(draw(st.integers(1, 2))):
            width = draw(st.integers(2, 3))
            items = [f"i{n:02d}" for n in range(used, used + width)]
            used += width
            rows = [list(items)] * draw(st.integers(2, 5))
            rows += [sorted(draw(st.sets(st.sampled_from(items), min_size=1))) for _ in range(draw(st.integers(0, 2)))]
            chunks.append(rows)
        size = max(len(rows) for rows in chunks) + draw(st.integers(0, 1))
        clusters.append(Cluster(f"c{c}", size, chunks, []))
    params = {"method": "disassociation", "k": K, "m": M, "max_cluster_size": DELTA}
    return Release("disassociated", params=params, claims=[Claim("km-anonymity", {"k": K, "m": M})], clusters=clusters)


@settings(max_examples=40, deadline=None)
@given(small_releases(), st.sampled_from([0.34, 0.5, 0.75]), st.integers(0, 3))
def test_repaired_share_per_shape_is_bounded_by_brute_force(release: Release, bound: float, seed: int) -> None:
    out = sanitize(release, seed, bound)
    (run,) = out.trail.notes[HARDENED]
    decoys = {(d["cluster"], d["chunk"]) for d in run["decoys"]}
    ghosts = {(g["cluster"], g["chunk"]) for g in out.trail.ghost_records}
    repaired = ghosts - decoys
    by_shape: dict[tuple, Counter] = {}
    flagged = Counter()
    chunks = 0
    for cluster in out.release.clusters:
        for index, rows in enumerate(cluster.record_chunks):
            chunks += 1
            assert brute_covered(rows) == set() and km_violations(rows, K, M) == []
            shape = oracle_shape(rows, cluster.size)
            where = (cluster.id, index)
            if where in decoys:
                assert shape is not None  # a decoy looks repaired
            if where in repaired:
                assert shape is not None  # theorem 2: a repaired chunk has pre-images
            if shape is not None:
                by_shape.setdefault(shape, Counter())["chunks"] += 1
                by_shape[shape]["repaired"] += where in repaired
                flagged["repaired" if where in repaired else "other"] += 1
    for counts in by_shape.values():
        assert counts["repaired"] <= Fraction(str(bound)) * counts["chunks"]
    # decoys come from chunks that had no covered item; removals name rule D
    vulnerable_in = {
        (c.id, i) for c in release.clusters for i, rows in enumerate(c.record_chunks) if brute_covered(rows)
    }
    for action in run["chunks"]:
        owner, index = action["chunk"].split("/")[0], int(action["chunk"].split("[")[1].rstrip("]"))
        assert ((owner, index) in vulnerable_in) == (action["action"] != "decoy")
    # the attack's distinguisher counts what the oracle counts
    d = attack(out)["distinguisher"]
    assert d["repaired"] == len(repaired) and d["decoys"] == len(decoys)
    assert sum(v["chunks"] for v in d["by_shape"].values()) == flagged.total()
    assert sum(v["repaired"] for v in d["by_shape"].values()) == flagged["repaired"]
    expected = max((Fraction(c["repaired"], c["chunks"]) for c in by_shape.values()), default=Fraction(0))
    assert d["largest_posterior_by_shape"] == pytest.approx(float(expected), abs=1e-4)
    if repaired:
        assert d["repaired_flagged"] == 1.0
        others = chunks - len(repaired)
        assert d["others_flagged"] == pytest.approx(flagged["other"] / others if others else 0.0, abs=1e-4)


@pytest.mark.parametrize(
    ("repaired", "lookalikes", "bound"), [(5, 6, "0.5"), (1, 0, "0.5"), (10, 2, "0.25"), (3, 0, "0.75")]
)
def test_decoy_counts_are_the_fewest_that_meet_the_bound(repaired: int, lookalikes: int, bound: str) -> None:
    beta = Fraction(bound)
    need = decoys_needed(repaired, lookalikes, beta)
    assert repaired <= beta * (repaired + lookalikes + need)
    assert need == 0 or repaired > beta * (repaired + lookalikes + need - 1)
    keep = repairs_kept(lookalikes, beta)
    assert keep <= beta * (keep + lookalikes) and keep + 1 > beta * (keep + 1 + lookalikes)


def test_figure1_repair_is_spotted_and_decoys_remove_it_when_nothing_can_hide_it() -> None:
    """Figure 1: faithful and hardened, the repaired chunk is the only chunk
    that looks repaired (posterior 1); with decoys at 0.5 the cluster has no
    chunk a decoy can be made of ({e, e} has one item), so the repair is
    removed (rule D) and nothing looks repaired."""
    faithful = safe_disassociate(Outcome(figure1_release(), Trail()), K, M, DELTA, Context(seed=0))
    faithful.release.params["sanitizers"] = ["safe-disassociation"]
    d = attack(faithful)["distinguisher"]
    assert d["repaired"] == 1 and d["posterior_repaired_if_flagged"] == 1.0
    assert d["by_shape"] == {"record chunk, 4 items, 2 at the smallest support": {"chunks": 1, "repaired": 1}}
    for bound in (None, 0.5):
        out = sanitize(figure1_release(), 0, bound)
        d = attack(out)["distinguisher"]
        if bound is None:
            assert d["repaired"] == 1 and d["repaired_flagged"] == 1.0
            assert d["posterior_repaired_if_flagged"] == 1.0 and d["largest_posterior_by_shape"] == 1.0
        else:
            (run,) = out.trail.notes[HARDENED]
            assert [a["failed_preconditions"] for a in run["chunks"]] == [["D"]]
            assert out.release.clusters[0].record_chunks == [[["e"], ["e"]]]
            assert d["repaired"] == 0 and d["shapes"] == {}


def test_a_decoy_hides_a_repair_of_the_same_shape() -> None:
    """A repaired chunk {xy x4, x} (y covered) and an untouched {uv x4, u, u,
    v} that does not look repaired: at bound 0.5 the untouched one becomes the
    decoy, both publish as two items at the smallest support, and each looks
    repaired with posterior 1/2."""
    clusters = [
        Cluster("c0", 6, [[["x", "y"]] * 4 + [["x"]]], []),
        Cluster("c1", 7, [[["u", "v"]] * 4 + [["u"], ["u"], ["v"]]], []),
    ]
    release = Release("disassociated", params={"k": K, "m": M, "max_cluster_size": DELTA}, clusters=clusters)
    for seed in range(3):
        out = sanitize(release, seed, 0.5)
        (run,) = out.trail.notes[HARDENED]
        assert run["decoys"] == [{"cluster": "c1", "kind": "record", "chunk": 0}]
        d = attack(out)["distinguisher"]
        assert d["by_shape"] == {"record chunk, 2 items, 2 at the smallest support": {"chunks": 2, "repaired": 1}}
        assert d["posterior_repaired_if_flagged"] == 0.5
        without = attack(sanitize(release, seed, None))["distinguisher"]
        assert without["posterior_repaired_if_flagged"] == 1.0


def test_a_release_with_decoys_is_verified_with_its_original() -> None:
    """Faithfulness accounts for the decoy's removed occurrences and ghosts as
    for a repair, and every claim (km-anonymity, cover-freedom against the
    algorithm-aware adversary) is certified."""
    clusters = [
        Cluster("c0", 5, [[["x", "y"]] * 4 + [["x"]]], []),
        Cluster("c1", 7, [[["u", "v"]] * 4 + [["u"], ["u"], ["v"]]], []),
    ]
    records = [row for c in clusters for row in c.record_chunks[0]]
    params = {"method": "disassociation", "k": K, "m": M, "max_cluster_size": DELTA}
    release = Release(
        "disassociated", params=params, claims=[Claim("km-anonymity", {"k": K, "m": M})], clusters=clusters
    )
    trail = Trail(cluster_of_record=["c0"] * 5 + ["c1"] * 7)
    out = safe_disassociate(Outcome(release, trail), K, M, DELTA, Context(seed=1), hardened_variant(K, 0.5))
    sanitizer = load_registry().get("sanitizer", HARDENED)
    out.release.params.update(sanitizers=[HARDENED], min_preimages=None, decoy_bound=0.5)
    out.release.claims = sanitizer.claims({"k": K, "m": M}, release.claims)
    assert out.release.stats["decoy_chunks"] == 1 and out.release.stats["partially_suppressed_chunks"] == 1
    verdict = privtool.verify(out.release, Dataset.from_records(records), out.trail)
    assert verdict.passed, verdict.rows()
    statuses = {(row["check"], row["status"]) for row in verdict.rows()}
    assert ("faithfulness", "proved") in statuses, statuses
    assert ("cover-freedom", "algorithm-aware") in {(c.model, c.adversary) for c in out.release.claims}


def test_same_release_with_serial_and_process_executors() -> None:
    """The survey runs in the workers and the selection after them: the same
    seed gives the same bytes on every executor."""
    clusters = [Cluster(f"c{i}", 6, [[["x", "y"]] * 4 + [["x"]]], []) for i in range(0, 8, 2)]
    clusters += [Cluster(f"c{i}", 7, [[["u", "v"]] * 4 + [["u"], ["u"], ["v"]]], []) for i in range(1, 8, 2)]
    release = Release("disassociated", params={"k": K, "m": M, "max_cluster_size": DELTA}, clusters=clusters)
    variant = hardened_variant(K, 0.5)
    serial = safe_disassociate(Outcome(release, Trail()), K, M, DELTA, Context(seed=3), variant)
    executor = ProcessExecutor(2)
    try:
        ctx = Context(seed=3, executor=executor)
        process = safe_disassociate(Outcome(release, Trail()), K, M, DELTA, ctx, variant)
    finally:
        executor.close()
    assert serial.release.stats["decoy_chunks"] == 4  # r = 4 repaired need d = 4 decoys at 0.5
    assert serial.release.dumps() == process.release.dumps()
    assert serial.trail.dumps() == process.trail.dumps()
