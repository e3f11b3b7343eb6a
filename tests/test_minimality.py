"""The ``minimality`` attack against brute force: every dataset of a few records
over a few items is run through VERPART, datasets are grouped by the release
they give, and the largest support of each itemset over a group is what an
adversary who knows VERPART can say."""

from __future__ import annotations

import functools
import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.attacks.minimality import Minimality, attack_cluster
from privtool.components import Evidence
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.io import read_dataset
from privtool.pipeline import run_method
from privtool.plugins.disassociation.verpart import ClusterTerms, greedy_chunks, random_order, verpart
from privtool.registry import load_registry
from privtool.release import Cluster, Release

Records = tuple[frozenset[str], ...]


def chunked(records: Records, items: str, k: int, m: int, order: str, seed: int) -> tuple[list[str], list[str]]:
    """VERPART's term domains (as strings of labels) and term chunk: its greedy
    and shuffle on per-term bitsets (``verpart()`` itself is checked equal in
    :func:`test_the_fast_path_is_verpart`)."""
    bits = {x: sum(1 << r for r, rec in enumerate(records) if x in rec) for x in items}
    frequent = [x for x in items if bits[x].bit_count() >= k]
    terms = ClusterTerms(
        ids=np.array([items.index(x) for x in frequent]),
        bits=[bits[x] for x in frequent],
        supports=np.array([bits[x].bit_count() for x in frequent]),
        rare=np.zeros(0, dtype=int),
    )
    shuffle = random_order(seed, terms).tolist() if order == "random" else None
    domains = ["".join(items[i] for i in d) for d in greedy_chunks(terms, k, m, shuffle)]
    return domains, [x for x in items if 0 < bits[x].bit_count() < k]


def release_of(records: Records, items: str, k: int, m: int, order: str = "support", seed: int = 0) -> Release:
    """One cluster: VERPART of ``records`` published as chunks and a term chunk."""
    domains, terms = chunked(records, items, k, m, order, seed)
    chunks = []
    for domain in domains:
        rows = [sorted(r & set(domain)) for r in records if r & set(domain)]
        chunks.append(sorted(rows))
    cluster = Cluster("c0", len(records), sorted(chunks), terms)
    return Release("disassociated", params={"k": k, "m": m, "verpart_order": order}, clusters=[cluster])


def key(release: Release) -> tuple:
    c = release.clusters[0]
    return (tuple(tuple(map(tuple, ch)) for ch in c.record_chunks), tuple(c.term_chunk))


@functools.cache
def groups(items: str, n: int, k: int, m: int, order: str = "support", seed: int = 0) -> dict[tuple, list[Records]]:
    """Every dataset of ``n`` records over ``items``, by release. Records may be
    empty, as in the reconstructions of a release (a record can hold items
    published nowhere in these chunks)."""
    subsets = [frozenset(c) for size in range(len(items) + 1) for c in itertools.combinations(items, size)]
    out: dict[tuple, list[Records]] = {}
    for records in itertools.combinations_with_replacement(subsets, n):
        out.setdefault(key(release_of(records, items, k, m, order, seed)), []).append(records)
    return out


def test_the_fast_path_is_verpart() -> None:
    """The oracle's VERPART (greedy and shuffle on bitsets) is the anonymizer's."""
    rng = np.random.default_rng(5)
    items = "abcd"
    subsets = [frozenset(c) for size in range(1, 5) for c in itertools.combinations(items, size)]
    for trial in range(40):
        records = tuple(subsets[i] for i in rng.integers(len(subsets), size=int(rng.integers(3, 8))))
        order = ("support", "random")[trial % 2]
        ds = Dataset.from_records([sorted(r) for r in records], labels=list(items))
        out = verpart(ds.sizes, ds.items, 2, 2, order, trial)
        domains, terms = chunked(records, items, 2, 2, order, trial)
        assert sorted("".join(items[i] for i in d) for d in out.record_chunks) == sorted(domains)
        assert [items[i] for i in out.term_chunk] == terms


def largest(group: list[Records], itemset: tuple[str, ...]) -> int:
    return max(sum(set(itemset) <= r for r in records) for records in group)


CONFIGS = st.sampled_from([("abc", 4), ("abc", 5), ("abcd", 4)])


@settings(max_examples=30, deadline=None)
@given(CONFIGS, st.integers(2, 3), st.integers(2, 3), st.data())
def test_exact_and_bound_against_every_dataset(config, k, m, data) -> None:
    items, n = config
    all_groups = groups(items, n, k, m)
    chosen = data.draw(st.sampled_from(sorted(all_groups)))
    group = all_groups[chosen]
    release = release_of(group[0], items, k, m)
    cluster = release.clusters[0]
    chunk_of = {x: i for i, ch in enumerate(cluster.record_chunks) for row in ch for x in row}
    cross = [
        s
        for size in range(2, m + 1)
        for s in itertools.combinations(sorted(chunk_of), size)
        if len({chunk_of[x] for x in s}) > 1
    ]
    truth = {s: largest(group, s) for s in cross}
    exact = attack_cluster(release, cluster, k, m, exact_limit=10**6)
    assert exact.method == ("exact" if len(cluster.record_chunks) > 1 else "bound")
    assert {p.itemset: p.high for p in exact.pins} == {s: v for s, v in truth.items() if 1 <= v <= k - 1}
    bound = attack_cluster(release, cluster, k, m, exact_limit=0)
    assert bound.method == "bound" and bound.consistent
    for pin in bound.pins:  # sound: really held by 1..k-1 records in every dataset of the group
        assert 1 <= truth[pin.itemset] <= k - 1
        assert all(pin.low <= sum(set(pin.itemset) <= r for r in records) <= pin.high for records in group)


def test_the_issues_example() -> None:
    """Records {2}, {1,2,3}, {1}, {3}, {3}, k = 2, m = 2, horpart, no REFINE:
    three one-item chunks; every pair has support 2 = k in some reconstruction,
    but exactly 1 in every reconstruction VERPART maps to this release."""
    registry = load_registry()
    data = Dataset.from_records([["2"], ["1", "2", "3"], ["1"], ["3"], ["3"]])
    params = {"k": 2, "m": 2, "partitioner": "horpart", "refiner": "none"}
    out = run_method(registry, data, "disassociation", params, Context())
    (cluster,) = out.release.clusters
    assert sorted(map(sorted, cluster.record_chunks)) == [[["1"], ["1"]], [["2"], ["2"]], [["3"], ["3"], ["3"]]]
    attack = registry.get("attack", "minimality")
    for limit in (10**6, 0):  # exact, then the sound bound
        summary, finding = attack.run(
            out.release, Evidence(original=data, trail=out.trail), {"exact_limit": limit}, Context()
        )
        pins = {tuple(p["itemset"]): p["records"] for p in finding.evidence["pinned"]}
        assert set(pins) == {("1", "2"), ("1", "3"), ("2", "3")}
        assert all(high == 1 for _, high in pins.values())
        assert summary.evidence["records_pinned"] == 1  # only {1,2,3} holds a pair
        assert ("exact" if limit else "sound bound") in finding.evidence["method"]
        assert "algorithm-aware" in finding.evidence["adversary"]


@settings(max_examples=12, deadline=None)
@given(st.sampled_from([("abc", 4), ("abcd", 4)]), st.integers(0, 1), st.data())
def test_random_order_against_every_dataset(config, seed, data) -> None:
    """With verpart_order=random the exact mode matches brute force (each
    dataset shuffled as the anonymizer does), and the bound stays sound."""
    items, n = config
    k, m = 2, 2
    all_groups = groups(items, n, k, m, "random", seed)
    group = all_groups[data.draw(st.sampled_from(sorted(all_groups)))]
    release = release_of(group[0], items, k, m, "random", seed)
    release.provenance = {"seed": seed}
    cluster = release.clusters[0]
    exact = attack_cluster(release, cluster, k, m, exact_limit=10**6)
    for pin in exact.pins:
        assert largest(group, pin.itemset) == pin.high
    truth_pinned = {
        s
        for s in itertools.combinations(sorted({x for ch in cluster.record_chunks for r in ch for x in r}), 2)
        if 1 <= largest(group, s) <= k - 1
        and len({i for i, ch in enumerate(cluster.record_chunks) for r in ch for x in r if x in s}) > 1
    }
    assert {p.itemset for p in exact.pins} == truth_pinned
    for pin in attack_cluster(release, cluster, k, m, exact_limit=0).pins:
        assert pin.itemset in truth_pinned


def test_minimality_runs_on_real_data(shared_data) -> None:
    registry = load_registry()
    data = read_dataset(registry, str(shared_data / "bms-webview-1.dat.gz"), None)
    small = Dataset.from_records([data.record_labels(i) for i in range(3000)])
    out = run_method(registry, small, "disassociation", {"k": 5, "m": 2}, Context())
    summary, *findings = Minimality().run(
        out.release, Evidence(original=small, trail=out.trail), {"exact_limit": 2000}, Context()
    )
    assert summary.evidence["clusters_bound"] + summary.evidence["clusters_exact"] == len(out.release.clusters)
    assert summary.evidence["records_pinned"] <= small.n_records
    assert all(f.refutes == "km-anonymity" for f in findings if f.severity != "info")


def test_verpart_order_goes_through_the_method_and_keeps_the_claim() -> None:
    """--verpart-order random reaches the chunker through the method's chain, is
    recorded in the release, and the release still verifies."""
    from privtool.assess import VERIFY, assess

    rng = np.random.default_rng(0)
    records = [
        sorted({str(x) for x in rng.zipf(1.6, size=int(rng.integers(1, 6))) if x < 40}) or ["0"] for _ in range(300)
    ]
    data = Dataset.from_records(records)
    registry = load_registry()
    out = run_method(registry, data, "disassociation", {"k": 3, "m": 2, "verpart_order": "random"}, Context(seed=2))
    assert out.release.params["verpart_order"] == "random"
    again = run_method(registry, data, "disassociation", {"k": 3, "m": 2, "verpart_order": "random"}, Context(seed=2))
    assert again.release.dumps() == out.release.dumps()  # seeded
    assert assess(registry, out.release, Evidence(), Context(), VERIFY).verdict == "PASS"


def test_random_order_without_a_published_seed_tries_every_order() -> None:
    """Without the seed, the exact mode cannot redo the shuffle: an admissible
    layout is one some order maps to the release, so it pins no more than with
    the seed."""
    items, n, k, m = "abc", 4, 2, 2
    for seed in (0, 1):
        all_groups = groups(items, n, k, m, "random", seed)
        for chosen in sorted(all_groups)[:40]:
            group = all_groups[chosen]
            release = release_of(group[0], items, k, m, "random", seed)
            cluster = release.clusters[0]
            unseeded = attack_cluster(release, cluster, k, m, exact_limit=10**6)
            release.provenance = {"seed": seed}
            seeded = attack_cluster(release, cluster, k, m, exact_limit=10**6)
            assert unseeded.method == seeded.method
            assert {p.itemset for p in unseeded.pins} <= {p.itemset for p in seeded.pins}
            for pin in unseeded.pins:  # sound: true in every dataset with this release
                assert largest(group, pin.itemset) <= pin.high
