"""Issue 16, "Secrets in published files": a release publishes nothing the
private trail should hold (docs/formats.md, "What a release publishes")."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.context import Context
from privtool.dataset import Dataset
from privtool.hierarchy import read_hierarchy
from privtool.pipeline import run_method
from privtool.publishable import ACCOUNTING_STATS, content_stats, private_fields
from privtool.registry import load_registry
from privtool.release import read_release
from privtool.trail import read_trail

ONE_CLUSTER = ["a b x", "a b y", "a b", "a b z", "a b w"]
"""Five records, one cluster at k=2: w, x, y, z are rare and go to the term chunk."""


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def _anonymize(run_cli, tmp_path: Path, data: Path, *options: str) -> tuple[Path, Path]:
    release, trail = tmp_path / "rel.json", tmp_path / "trail.json"
    result = run_cli(
        "anonymize", data, *options, "--executor", "serial", "-q", "-o", release, "--trail", trail
    )  # fmt: skip
    assert result.code == 0, result.err
    return release, trail


def test_term_chunk_totals_and_the_input_hash_stay_in_the_trail(run_cli, tmp_path: Path) -> None:
    """With one cluster, item_occurrences_in_term_chunks was the exact support
    of its term-chunk terms; the input SHA-256 let anyone confirm a guessed
    original; the seed let an algorithm-aware adversary replay random choices."""
    data = _write(tmp_path / "d.basket", ONE_CLUSTER)
    release_path, trail_path = _anonymize(
        run_cli, tmp_path, data, "--method", "disassociation", "--k", "2", "--m", "2", "--seed", "7"
    )
    text = release_path.read_text()
    published = json.loads(text)
    assert published["format"] == "privtool-release/2"
    release, trail = read_release(release_path), read_trail(trail_path)
    assert [sorted(c.term_chunk) for c in release.clusters] == [["w", "x", "y", "z"]]
    assert set(release.stats) == set(content_stats(release)) | set(ACCOUNTING_STATS)
    assert release.stats == {**content_stats(release), "records_in": 5, "suppressed_records": 0}
    assert published["provenance"].keys() == {"privtool", "plugins"}
    original = Dataset.from_records(line.split() for line in ONE_CLUSTER)
    assert original.content_sha256() not in text  # no hash of the input, under any field
    assert trail.input_sha256 == original.content_sha256() and trail.seed == 7
    assert trail.stats["item_occurrences_in_term_chunks"] == 4  # w, x, y, z once each: what the model leaves unknown
    assert trail.stats["item_occurrences_in"] == trail.stats["item_occurrences_published"] == 14
    assert private_fields(release) == []


def test_safe_disassociation_counts_and_accounting_stay_in_the_trail(run_cli, tmp_path: Path) -> None:
    """Figure 1 of the safe-disassociation paper: two ghost sub-records. Neither
    the sanitizer's counts nor records_in/suppressed_records (which with the
    published sizes would count the ghosts) are published."""
    from safe_examples import FIGURE1_RECORDS

    data = _write(tmp_path / "fig1.basket", [" ".join(r) for r in FIGURE1_RECORDS])
    release_path, trail_path = _anonymize(
        run_cli, tmp_path, data, "--method", "disassociation", "--k", "2", "--m", "2",
        "--sanitizer", "safe-disassociation",
    )  # fmt: skip
    release, trail = read_release(release_path), read_trail(trail_path)
    leaked = {
        "partially_suppressed_chunks", "ghost_records", "ghost_subrecords", "ghost_item_occurrences",
        "vulnerable_chunks", "suppressed_chunks", "suppressed_item_occurrences",
        "chunk_item_occurrences_before_safe", "records_in", "suppressed_records",
    }  # fmt: skip
    assert not leaked & set(release.stats), release.stats
    assert release.stats == content_stats(release)
    assert trail.stats["ghost_subrecords"] == len(trail.ghost_records) >= 1
    assert trail.stats["records_in"] == len(FIGURE1_RECORDS)
    assert private_fields(release) == []


def test_the_hierarchy_is_published_by_content_hash_not_path(run_cli, tmp_path: Path) -> None:
    data = _write(tmp_path / "d.dat", ["1 2 3", "1 2", "2 3", "1 3", "1 2 3", "4 5", "4 5 6", "5 6"])
    hierarchy = tmp_path / "private-folder" / "h.csv"
    hierarchy.parent.mkdir()
    assert run_cli("hierarchy", "build", data, "--fanout", "2", "-o", hierarchy).code == 0
    release_path, _ = _anonymize(run_cli, tmp_path, data, "--method", "partition", "--k", "2", "--hierarchy", hierarchy)
    text = release_path.read_text()
    assert "private-folder" not in text and str(tmp_path) not in text
    params = json.loads(text)["params"]
    assert params["hierarchy"] == f"sha256:{read_hierarchy(hierarchy).content_sha256()}"
    assert private_fields(read_release(release_path)) == []
    # the same tree written as edges has the same content hash
    edges = tmp_path / "h-edges.csv"
    assert run_cli("hierarchy", "build", "--from-paths", hierarchy, "--output-format", "edges", "-o", edges).code == 0
    assert read_hierarchy(edges).content_sha256() == read_hierarchy(hierarchy).content_sha256()


def test_rule_hiding_counts_stay_in_the_trail(run_cli, tmp_path: Path) -> None:
    data = _write(tmp_path / "d.basket", ["a b c", "a b", "a b c", "a c", "b c", "a b c", "a b"])
    release, trail = tmp_path / "hidden.json", tmp_path / "hidden.trail.json"
    result = run_cli(
        "hide", data, "--sensitive", "1", "--pick", "top", "--min-support", "2", "--min-confidence", "0.5",
        "-o", tmp_path / "hidden.basket", "--release", release, "--trail", trail, "-q",
    )  # fmt: skip
    assert result.code == 0, result.err
    stats = read_release(release).stats
    private = read_trail(trail).stats
    for key in ("removed_item_occurrences", "modified_records", "item_occurrences_in"):
        assert key not in stats and key in private
    assert private["removed_item_occurrences"] >= 1


def test_the_audit_warns_about_a_release_that_carries_private_fields(run_cli, tmp_path: Path) -> None:
    data = _write(tmp_path / "d.basket", ONE_CLUSTER)
    release_path, _ = _anonymize(run_cli, tmp_path, data, "--method", "disassociation", "--k", "2")
    clean = run_cli("audit", release_path, "--format", "json", "-o", tmp_path / "a.json", "-q")
    assert clean.code in (0, 1), clean.err
    assert json.loads((tmp_path / "a.json").read_text())["warnings"] == []
    old = json.loads(release_path.read_text())
    old["format"] = "privtool-release/1"
    del old["claims"]  # version 1 derives its claims from kind and params
    old["provenance"].update(input_sha256="0" * 64, seed=0)
    old["stats"]["item_occurrences_in_term_chunks"] = 4
    legacy = tmp_path / "legacy.json"
    legacy.write_text(json.dumps(old))
    run_cli("audit", legacy, "--format", "json", "-o", tmp_path / "b.json", "-q")
    warnings = json.loads((tmp_path / "b.json").read_text())["warnings"]
    assert [w.split()[3].rstrip(",") for w in warnings] == [
        "$.stats.item_occurrences_in_term_chunks",
        "$.provenance.input_sha256",
        "$.provenance.seed",
    ]
    terminal = run_cli("audit", legacy, "-q")
    assert "$.provenance.seed, which belongs in the private trail" in " ".join(terminal.out.split())


records = st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=5), min_size=4, max_size=25)


@settings(max_examples=40, deadline=None)
@given(records, st.integers(2, 3), st.sampled_from([(), ("safe-disassociation",)]))
def test_every_stamped_release_publishes_only_what_its_content_shows(
    rows: list[list[str]], k: int, sanitizers: tuple[str, ...]
) -> None:
    """Whatever the data: stats are exactly the recomputable counts (plus the
    accounting when no sanitizer ran), and nothing else is private."""
    dataset = Dataset.from_records(rows)
    options = {"k": k, "m": 2, "max_cluster_size": 6}
    outcome = run_method(load_registry(), dataset, "disassociation", options, Context(), sanitizers)
    release = outcome.release
    public = content_stats(release)
    if not sanitizers:
        public.update(records_in=dataset.n_records, suppressed_records=len(outcome.trail.suppressed_records))
    assert release.stats == public
    assert private_fields(release) == []
    assert "item_occurrences_in" in outcome.trail.stats
