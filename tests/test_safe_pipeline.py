"""Safe disassociation through the generic pipeline, after the real
disassociation method: the paper's example end to end and random datasets."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from safe_examples import FIGURE1_RECORDS, as_multiset, brute_covered, km_violations

from privtool.attacks.cover import vulnerable_chunks
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.pipeline import run_method
from privtool.release import read_release
from privtool.trail import read_trail


def test_figure1_disassociates_as_in_the_paper_then_becomes_safe(run_cli, tmp_path) -> None:
    data = tmp_path / "figure1.txt"
    data.write_text("".join(" ".join(r) + "\n" for r in FIGURE1_RECORDS))
    plain, safe, trail = tmp_path / "plain.json", tmp_path / "safe.json", tmp_path / "safe.trail.json"
    common = ("--method", "disassociation", "--k", "2", "--m", "2", "--executor", "serial", "-q")
    assert run_cli("anonymize", data, *common, "-o", plain).code == 0
    (cluster,) = read_release(plain).clusters
    assert cluster.size == 6
    assert [as_multiset(c) for c in cluster.record_chunks] == [
        as_multiset([["a"], list("abcd"), list("abcd"), list("abcd"), list("abcd"), ["a", "b"]]),
        as_multiset([["e"], ["e"]]),
    ]
    result = run_cli("anonymize", data, *common, "--sanitizer", "safe-disassociation", "-o", safe, "--trail", trail)
    assert result.code == 0, result.err
    release = read_release(safe)
    assert release.params["sanitizers"] == ["safe-disassociation"]
    assert vulnerable_chunks(release) == []
    assert release.clusters[0].size == 8
    written = read_trail(trail)
    assert written.release_sha256 == release.sha256()
    assert len(written.ghost_records) == 2
    assert written.cluster_of_record == ["c0"] * 6


@settings(max_examples=15, deadline=None)
@given(
    st.lists(st.sets(st.sampled_from([str(i) for i in range(8)]), min_size=1, max_size=5), min_size=4, max_size=40),
    st.integers(2, 3),
    st.integers(2, 3),
    st.integers(4, 12),
    st.sampled_from(["safe-disassociation", "safe-disassociation-hardened"]),
)
def test_random_data_through_the_method_and_the_sanitizer(records, k, m, delta, sanitizer) -> None:
    from privtool.registry import load_registry

    registry = load_registry()
    data = Dataset.from_records([sorted(r) for r in records])
    options = {"k": k, "m": m, "max_cluster_size": delta}
    outcome = run_method(registry, data, "disassociation", options, Context(seed=1), [sanitizer])
    release = outcome.release
    assert vulnerable_chunks(release) == []
    for cluster in release.clusters:
        for rows in cluster.record_chunks:
            assert brute_covered(rows) == set()
            assert km_violations(rows, k, m) == []
    for joint in release.joint_clusters:
        for rows in joint.shared_chunks:
            assert brute_covered(rows) == set()
            assert km_violations(rows, k, m) == []
