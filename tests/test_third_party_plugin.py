"""The plugin-author guide's example package (docs/plugin-example) installed into
a fresh virtual environment, found through its entry point, listed, used,
disabled with ``-p no:``, refused when a second plugin claims a component name;
each of its components run through anonymize, verify, sanitize, attack, metrics,
audit, compare and the conformance kit; and its algorithms against brute-force
oracles in-process."""

from __future__ import annotations

import itertools
import json
import shutil
import sys
import textwrap
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from child_venv import ChildVenv, make_child_venv
from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.context import Context
from privtool.dataset import Dataset
from privtool.hierarchy import Hierarchy
from privtool.release import read_release

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "docs" / "plugin-example"

CLASHING_MODULE = """
from privtool.components import Anonymizer
from privtool.hookspecs import hookimpl


class Impostor(Anonymizer):
    name = "global-suppression"
    summary = "claims a name another plugin already has"


@hookimpl
def privtool_anonymizers():
    return [Impostor()]
"""

CLASHING_PYPROJECT = """
[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "privtool-impostor"
version = "2.0.0"

[project.entry-points.privtool]
impostor = "privtool_impostor"

[tool.setuptools]
py-modules = ["privtool_impostor"]
"""


def _installed_example(tmp_path: Path) -> tuple[ChildVenv, Path]:
    """A child venv with the example package built from a copy (nothing is
    written into the repository), and that copy."""
    child = make_child_venv(tmp_path / "venv")
    copy = tmp_path / "plugin-example"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    child.install(copy)
    return child, copy


def test_example_plugin_is_discovered_listed_used_disabled_and_clashes(tmp_path: Path) -> None:
    child, _ = _installed_example(tmp_path)
    listed = {p["name"]: p for p in json.loads(child.privtool("plugins", "--json").stdout)}
    plugin = listed["example"]
    assert plugin["version"] == "0.1.0"
    assert plugin["source"] == "entry point (privtool-example)"
    assert plugin["components"] == [
        "anonymizer:global-generalisation",
        "anonymizer:global-suppression",
        "metric:kept-items",
        "partitioner:balanced",
    ]
    assert listed["formats"]["source"] == "built-in"

    data = tmp_path / "baskets.dat"
    data.write_text("1 2 3\n1 2\n1 4\n5\n2 3\n")
    release_path = tmp_path / "release.json"
    made = ("anonymize", data, "--method", "global-suppression", "--k", "2", "-q", "-o", release_path)
    child.privtool(*made, "--trail", tmp_path / "trail.json")
    release = read_release(release_path)
    assert release.kind == "sanitized"
    assert release.records == [["1"], ["1", "2"], ["1", "2", "3"], ["2", "3"]]
    assert release.stats["suppressed_records"] == 1
    assert release.provenance["plugins"] == {"example": "0.1.0"}
    trail = json.loads((tmp_path / "trail.json").read_text())
    assert trail["removed_items"] == [[2, "4"], [3, "5"]]

    disabled = json.loads(child.privtool("-p", "no:example", "plugins", "--json").stdout)
    assert "example" not in {p["name"] for p in disabled}
    refused = child.privtool("-p", "no:example", *made, check=False)
    assert refused.returncode == 2
    assert "unknown anonymizer 'global-suppression'" in refused.stderr
    dis = ("anonymize", data, "--method", "disassociation", "--partitioner", "balanced", "-o", release_path)
    stage = child.privtool("-p", "no:example", *dis, check=False)
    assert stage.returncode == 2 and "--partitioner must be one of adding, adding-skip-sibling, horpart" in stage.stderr

    impostor = tmp_path / "impostor"
    impostor.mkdir()
    (impostor / "pyproject.toml").write_text(textwrap.dedent(CLASHING_PYPROJECT))
    (impostor / "privtool_impostor.py").write_text(textwrap.dedent(CLASHING_MODULE))
    child.install(impostor)
    clash = child.privtool("plugins", check=False)
    assert clash.returncode == 3  # a plugin error, not bad input
    either = [
        f"privtool: error: plugin '{b}': anonymizer 'global-suppression' is also registered by plugin '{a}'"
        for a, b in (("example", "impostor"), ("impostor", "example"))
    ]
    assert clash.stderr.startswith(tuple(either)), clash.stderr
    assert len(clash.stderr.strip().splitlines()) == 1 and "Traceback" not in clash.stderr
    # Disabling either plugin resolves the clash.
    assert child.privtool("-p", "no:impostor", "plugins").returncode == 0


def test_each_example_component_through_every_command_and_the_conformance_kit(tmp_path: Path) -> None:
    """The issue's promise to plugin authors: a partitioner gets VERPART, REFINE,
    the safe sanitizer, verify, attacks, metrics, audit and compare with nothing
    else written; so does an anonymizer; a metric is measured everywhere; and
    the package's own conformance tests pass. Every command exits 0."""
    child, copy = _installed_example(tmp_path)
    data = tmp_path / "baskets.dat"
    child.privtool("synth", "--records", "600", "--items", "60", "--max-size", "12", "--seed", "1", "-q", "-o", data)
    evidence = ("--original", data)
    quick = ("-q", "--executor", "serial")

    def run(*args: object) -> None:
        child.privtool(*args)  # raises, with both output streams, unless it exits 0

    fanout = ("--hierarchy", "4", "--hierarchy-format", "fanout")
    methods = {
        "dis": ("--method", "disassociation", "--partitioner", "balanced", "--cluster-size", "12", "--k", "3"),
        "gen": ("--method", "global-generalisation", *fanout, "--k", "3", "--m", "2"),
        "sup": ("--method", "global-suppression", "--k", "3"),
    }
    for name, method in methods.items():
        release, trail = tmp_path / f"{name}.json", tmp_path / f"{name}.trail.json"
        run("anonymize", data, *method, *quick, "-o", release, "--trail", trail)
        run("verify", release, *evidence, "--trail", trail, *quick)
        run("attack", release, *evidence, "--trail", trail, *quick)
        run("metrics", release, *evidence, "--trail", trail, "--metric", "kept-items", *quick)
        run("audit", release, *evidence, "--trail", trail, *quick)
    partitioned = read_release(tmp_path / "dis.json")
    assert partitioned.params["partitioner"] == "balanced" and partitioned.params["refiner"] == "refine"
    assert partitioned.joint_clusters  # REFINE ran on the plugin's clusters
    assert partitioned.provenance["plugins"] == {
        "disassociation": partitioned.provenance["privtool"],
        "example": "0.1.0",
    }

    safe, safe_trail = tmp_path / "safe.json", tmp_path / "safe.trail.json"
    plain = (tmp_path / "dis.json", "--trail", tmp_path / "dis.trail.json")
    run("sanitize", *plain, "--sanitizer", "safe-disassociation", "-o", safe, "--trail-out", safe_trail, *quick)
    run("verify", safe, *evidence, "--trail", safe_trail, *quick)
    run("audit", safe, *evidence, "--trail", safe_trail, *quick)

    compared = tmp_path / "compare"
    specs = (
        "disassociation:partitioner=balanced,cluster_size=12",
        "global-generalisation:hierarchy=4,hierarchy_format=fanout",
        "global-suppression",
    )
    methods_given = [word for spec in specs for word in ("--method", spec)]
    run("compare", data, *methods_given, "--k", "3", "--metric", "kept-items", "-o", compared, *quick)
    rows = json.loads((compared / "results.json").read_text())["rows"]
    assert [row["verdict"] for row in rows] == ["PASS"] * 3
    kept = {row["method"]: row["kept-items.kept_items"] for row in rows}
    assert kept[specs[0]] == 1.0  # disassociation publishes every item under its own label
    assert 0 <= kept[specs[1]] < 1 and 0 < kept[specs[2]] <= 1, kept

    kit = child.run("-m", "pytest", "-q", "-p", "no:cacheprovider", copy / "tests", timeout=900, check=False)
    assert kit.returncode == 0, kit.stdout + kit.stderr
    assert "failed" not in kit.stdout and " passed" in kit.stdout


# ------------------------------------------------------------------- oracles
@pytest.fixture(scope="module")
def example() -> object:
    """The example package imported from the repository (not installed)."""
    sys.path.insert(0, str(EXAMPLE))
    try:
        import privtool_example

        yield privtool_example
    finally:
        sys.path.remove(str(EXAMPLE))


records = st.lists(st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=5), min_size=1, max_size=25)


def test_global_suppression_against_a_brute_force_oracle(example) -> None:
    """An item survives exactly when at least k input records hold it; surviving
    items stay in every record that held them; empty records go."""
    anonymizer = example.GlobalSuppression()

    @settings(max_examples=60, deadline=None)
    @given(records, st.integers(2, 6))
    def check(rows: list[list[str]], k: int) -> None:
        support = Counter(item for row in rows for item in set(row))
        expected = [sorted(i for i in set(row) if support[i] >= k) for row in rows]
        outcome = anonymizer.anonymize(Dataset.from_records(rows), {"k": k}, Context())
        assert sorted(outcome.release.records) == sorted(r for r in expected if r)
        assert outcome.trail.suppressed_records == [i for i, r in enumerate(expected) if not r]
        assert len(outcome.trail.removed_items) == sum(len(set(row)) for row in rows) - sum(map(len, expected))
        assert outcome.release.stats["records_published"] + outcome.release.stats["suppressed_records"] == len(rows)

    check()


def test_global_generalisation_against_a_brute_force_oracle(example) -> None:
    """Oracle: for each depth from the leaves up, map every item to its ancestor
    at that depth with a plain dictionary walk and count every itemset of at
    most m mapped items; the method publishes the deepest k^m-anonymous depth."""
    anonymizer = example.GlobalGeneralisation()

    @settings(max_examples=60, deadline=None)
    @given(records, st.integers(2, 4), st.integers(1, 3), st.integers(2, 3))
    def check(rows: list[list[str]], k: int, m: int, fanout: int) -> None:
        dataset = Dataset.from_records(rows)
        hierarchy = Hierarchy.balanced(dataset.labels, fanout)
        parent = {child: up for child, up in hierarchy.edges()}

        def at_depth(label: str, depth: int) -> str:
            path = [label]
            while path[-1] in parent:
                path.append(parent[path[-1]])
            path.reverse()  # root first
            return path[min(depth, len(path) - 1)]

        def anonymous(published: list[set[str]]) -> bool:
            counts = Counter(
                s for row in published for n in range(1, m + 1) for s in itertools.combinations(sorted(row), n)
            )
            return all(count >= k for count in counts.values())

        params = {"k": k, "m": m, "hierarchy": str(fanout), "hierarchy_format": "fanout"}
        if len(rows) < k:
            with pytest.raises(Exception, match="no level makes it k\\^m-anonymous"):
                anonymizer.anonymize(dataset, params, Context())
            return
        depth = next(
            d
            for d in range(hierarchy.max_depth, -1, -1)
            if anonymous([{at_depth(label, d) for label in set(row)} for row in rows])
        )
        expected = sorted(sorted({at_depth(label, depth) for label in set(row)}) for row in rows)
        outcome = anonymizer.anonymize(dataset, params, Context())
        assert sorted(sorted(record) for record in outcome.release.records) == expected
        assert outcome.trail.notes["depth"] == depth

    check()


def test_balanced_partitioner_against_its_definition(example) -> None:
    """Every record in exactly one cluster, clusters of cluster_size..2*cluster_size-1
    records (one cluster when there are fewer), each a run of the records ordered by
    their first three items."""
    partitioner = example.Balanced()

    @settings(max_examples=60, deadline=None)
    @given(records, st.integers(2, 4), st.integers(0, 3))
    def check(rows: list[list[str]], k: int, extra: int) -> None:
        size = k + extra
        dataset = Dataset.from_records(rows)
        clusters = partitioner.partition(dataset, {"k": k, "cluster_size": size}, Context()).clusters
        placed = np.sort(np.concatenate(clusters))
        assert placed.tolist() == list(range(len(rows)))
        sizes = [len(c) for c in clusters]
        assert all(size <= s < 2 * size for s in sizes) if len(rows) >= size else sizes == [len(rows)]
        order = sorted(range(len(rows)), key=lambda r: (_key(dataset, r), r))
        assert [r for c in clusters for r in c.tolist()] == order

    check()


def _key(dataset: Dataset, row: int) -> tuple[int, ...]:
    items = dataset.record(row).tolist()[:3]
    return tuple(items + [-1] * (3 - len(items)))
