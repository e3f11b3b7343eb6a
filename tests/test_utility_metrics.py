"""tKd and re, the mining helpers under them, and the ``privtool metrics`` command
(ARE and the reconstructions of generalized releases: test_are.py)."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.components import Evidence
from privtool.context import Context
from privtool.dataset import Dataset, label_sort_key
from privtool.itemset_mining import pair_supports, top_itemsets
from privtool.plugins.utility_metrics import RelativeError, TopKDeviation
from privtool.release import Cluster, Release, write_release

small_records = st.lists(st.lists(st.sampled_from("abcdefg"), max_size=5), min_size=1, max_size=25)


def naive_supports(rows: list[list[str]], low: int, high: int) -> Counter:
    counts: Counter = Counter()
    for row in rows:
        items = sorted(set(row), key=label_sort_key)
        for size in range(low, min(high, len(items)) + 1):
            counts.update(itertools.combinations(items, size))
    return counts


@settings(max_examples=60, deadline=None)
@given(small_records, st.integers(1, 12), st.integers(1, 2), st.integers(1, 3))
def test_top_itemsets_equal_naive_ranking(rows: list[list[str]], count: int, low: int, extra: int) -> None:
    high = low + extra - 1
    counts = naive_supports(rows, low, high)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], [label_sort_key(x) for x in kv[0]]))[:count]
    assert top_itemsets(Dataset.from_records(rows), count, low, high) == ranked


@settings(max_examples=40, deadline=None)
@given(small_records)
def test_pair_supports_equal_naive_counts(rows: list[list[str]]) -> None:
    labels = ["a", "c", "e", "zz"]
    got = pair_supports(Dataset.from_records(rows), labels)
    for (i, x), (j, y) in itertools.product(enumerate(labels), repeat=2):
        assert got[i, j] == sum(1 for r in rows if x in r and y in r)


ORIGINAL = [["a", "b"], ["a", "b"], ["a", "b", "c"], ["c", "d"], ["c", "d"], ["a", "c"]]


def sanitized(records: list[list[str]]) -> Release:
    return Release(kind="sanitized", params={}, records=records)


def test_identical_release_has_no_deviation_or_error() -> None:
    evidence = Evidence(original=Dataset.from_records(ORIGINAL))
    ctx = Context(seed=1)
    params = {"samples": 3, "top_k": 3, "itemset_min_size": 2, "itemset_max_size": 3}
    assert TopKDeviation().compute(sanitized(ORIGINAL), evidence, params, ctx)["tkd"] == 0.0
    re = RelativeError().compute(
        sanitized(ORIGINAL), evidence, {"samples": 3, "re_terms": 4, "re_denominator": "average"}, ctx
    )
    assert re["re"] == 0.0 and re["re_samples"] == 1  # a sanitized release is its own reconstruction


def test_hand_computed_tkd_and_re() -> None:
    """Remove b from one record and c from another. Original pairs: ab 3, ac 2,
    cd 2, bc 1. Published: ab 2, ac 1, cd 2, bc 1."""
    published = [["a", "b"], ["a"], ["a", "b", "c"], ["c", "d"], ["c", "d"], ["a"]]
    evidence = Evidence(original=Dataset.from_records(ORIGINAL))
    ctx = Context()
    # top-2 pairs of the original: ab (3), then ac and cd tie at 2 -> ac first in label order.
    # Published: ab 2, cd 2 are the top two; ac has 1 < 2, so 1 of 2 is preserved.
    params = {"samples": 1, "top_k": 2, "itemset_min_size": 2, "itemset_max_size": 2}
    assert TopKDeviation().compute(sanitized(published), evidence, params, ctx)["tkd"] == pytest.approx(0.5)
    # workload: pairs of a, b, c, d occurring in the original: ab, ac, bc, cd
    average = (1 / 2.5 + 1 / 1.5 + 0 + 0) / 4
    original = (1 / 3 + 1 / 2 + 0 + 0) / 4
    base = {"samples": 1, "re_terms": 4}
    got = RelativeError().compute(sanitized(published), evidence, {**base, "re_denominator": "average"}, ctx)
    assert got["re"] == pytest.approx(average) and got["re_pairs"] == 4
    got = RelativeError().compute(sanitized(published), evidence, {**base, "re_denominator": "original"}, ctx)
    assert got["re"] == pytest.approx(original)


def test_single_chunk_clusters_reconstruct_exactly() -> None:
    """A cluster published as one record chunk has one reconstruction up to order:
    every sample has the original's supports."""
    release = Release(kind="disassociated", params={"k": 2}, clusters=[Cluster("c0", 6, [ORIGINAL], [])])
    evidence = Evidence(original=Dataset.from_records(ORIGINAL))
    got = TopKDeviation().compute(
        release, evidence, {"samples": 4, "top_k": 3, "itemset_min_size": 1, "itemset_max_size": 3}, Context()
    )
    assert got["tkd"] == 0.0 and got["tkd_detail"]["per_sample"] == [0.0] * 4
    got = RelativeError().compute(
        release, evidence, {"samples": 4, "re_terms": 4, "re_denominator": "average"}, Context()
    )
    assert got["re"] == 0.0


# ---------------------------------------------------------------------- CLI
@pytest.fixture
def figure1(tmp_path: Path) -> tuple[Path, Path]:
    chunk1 = [["a"], *[["a", "b", "c", "d"]] * 4, ["a", "b"]]
    release = Release(
        kind="disassociated", params={"k": 2, "m": 2}, clusters=[Cluster("c0", 6, [chunk1, [["e"], ["e"]]], [])]
    )
    write_release(release, tmp_path / "fig1.json")
    rows = ["a e", "a b c d e", "a b c d", "a b c d", "a b c d", "a b"]
    (tmp_path / "fig1.jsonl").write_text("".join(json.dumps(r.split()) + "\n" for r in rows))
    return tmp_path / "fig1.json", tmp_path / "fig1.jsonl"


def test_metrics_without_original_are_skipped_with_the_reason(run_cli, figure1) -> None:
    release, _ = figure1
    result = run_cli("metrics", release, "--json")
    assert result.code == 0
    metrics = {m["name"]: m for m in json.loads(result.out)["metrics"]}
    assert metrics["tkd"]["status"] == "skipped" and "--original DATA" in metrics["tkd"]["reason"]
    named = run_cli("metrics", release, "--metric", "tkd")
    assert named.code == 2 and "metric 'tkd' needs the original data" in named.err and "Traceback" not in named.err


def test_metrics_json_is_reproducible_across_executors(run_cli, figure1) -> None:
    release, data = figure1
    args = ("metrics", release, "--original", data, "--json", "--samples", "6", "--top-k", "4", "--seed", "7")
    serial = json.loads(run_cli(*args, "--executor", "serial").out)
    process = json.loads(run_cli(*args, "--executor", "process", "--workers", "2").out)

    def strip(out: dict) -> list[dict]:
        return [{k: v for k, v in m.items() if k != "seconds"} for m in out["metrics"]]

    assert strip(serial) == strip(process)
    tkd = next(m for m in serial["metrics"] if m["name"] == "tkd")
    assert tkd["values"]["tkd_samples"] == 6 and 0.0 <= tkd["values"]["tkd"] <= 1.0


def test_metrics_table_and_bad_input(run_cli, figure1, tmp_path: Path) -> None:
    release, data = figure1
    table = run_cli("metrics", release, "--original", data, "--metric", "re", "--samples", "2", "-q")
    assert table.code == 0 and "re_pairs" in table.out
    assert run_cli("metrics", release, "--metric", "nope").code == 2
    bad_option = run_cli("metrics", release, "--tops", "3")
    assert bad_option.code == 2 and "has no option --tops" in bad_option.err
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "privtool-release/1", "kind": "disassociated"}')
    invalid = run_cli("metrics", broken)
    assert invalid.code == 2 and "invalid release at $.params" in invalid.err
    generalized = tmp_path / "gen.json"
    generalized.write_text(
        json.dumps(
            {
                "format": "privtool-release/1",
                "kind": "generalized",
                "params": {},
                "provenance": {},
                "records": [["A"]],
                "hierarchy": {"root": "A", "edges": []},
            }
        )
    )
    wrong_kind = run_cli("metrics", generalized, "--metric", "tlost")
    assert wrong_kind.code == 2 and "not to this generalized release" in wrong_kind.err
