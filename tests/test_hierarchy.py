"""Hierarchy: builders, numpy tables against networkx brute force, serialisation,
and every validation error through the CLI (exit 2, one line)."""

from __future__ import annotations

import gzip
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.dataset import Dataset
from privtool.errors import InputError, ParameterError
from privtool.hierarchy import Hierarchy, read_hierarchy


@st.composite
def random_trees(draw: st.DrawFn) -> list[tuple[str, str, int]]:
    """Edges of a random rooted tree: internal nodes I0 (root) .. In, leaves L0 .. Lm."""
    n_internal = draw(st.integers(1, 6))
    n_leaves = draw(st.integers(1, 12))
    edges = [(f"I{i}", f"I{draw(st.integers(0, i - 1))}", 0) for i in range(1, n_internal)]
    edges += [(f"L{j}", f"I{draw(st.integers(0, n_internal - 1))}", 0) for j in range(n_leaves)]
    return edges


@settings(max_examples=60, deadline=None)
@given(random_trees(), st.data())
def test_tables_match_networkx(edges: list[tuple[str, str, int]], data: st.DataObject) -> None:
    hier = Hierarchy.from_edges(edges, nodes=["I0"])
    graph = nx.DiGraph([(p, c) for c, p, _ in edges])
    graph.add_node("I0")
    leaves = {n for n in graph.nodes if graph.out_degree(n) == 0}
    assert hier.root == "I0" and hier.n_leaves == len(leaves)
    for v, label in enumerate(hier.labels):
        below = nx.descendants(graph, label) | {label}
        n_below = len(below & leaves)
        assert hier.leaf_count[v] == n_below
        assert hier.ncp[v] == pytest.approx(0.0 if n_below <= 1 else n_below / len(leaves))
        assert hier.depth[v] == nx.shortest_path_length(graph, "I0", label)
        assert [hier.labels[a] for a in hier.ancestors(v)] == nx.shortest_path(graph, "I0", label)[::-1]
        for w, other in enumerate(hier.labels):
            assert bool(hier.is_ancestor_or_self(v, w)) == (other in below)
    picks = data.draw(st.lists(st.sampled_from(hier.labels), min_size=1, max_size=4))
    expected = picks[0]
    for label in picks[1:]:
        expected = nx.lowest_common_ancestor(graph, expected, label)
    assert hier.labels[hier.lca(hier.index[x] for x in picks)] == expected
    again = Hierarchy.from_json(hier.to_json())
    assert again.labels == hier.labels and np.array_equal(again.parent, hier.parent)


def test_paths_repeated_labels_are_one_node(tmp_path: Path) -> None:
    path = tmp_path / "h.csv.gz"
    path.write_bytes(gzip.compress(b"1,1-2,1-2,1-4,*\n2,1-2,1-2,1-4,*\n3,3-4,1-4,*\n4,3-4,1-4,*\n"))
    hier = read_hierarchy(path)
    assert hier.n_leaves == 4 and hier.n_nodes == 8 and hier.max_depth == 3
    assert hier.labels[hier.parent[hier.index["1-2"]]] == "1-4"
    for fmt in ("paths", "edges"):
        out = tmp_path / f"out-{fmt}.csv"
        hier.write(out, fmt)
        back = read_hierarchy(out, fmt)
        assert back.to_json() == hier.to_json()


def test_prefix_hierarchy() -> None:
    hier = Hierarchy.from_prefixes(["1402", "1403", "141", "15", "7", "71"], [1, 2, 3])
    assert hier.ancestors(hier.index["1402"]) == [hier.index[x] for x in ["1402", "140*", "14*", "1*", "*"]]
    assert hier.labels[hier.parent[hier.index["141"]]] == "14*"
    assert hier.labels[hier.parent[hier.index["7"]]] == "7*"  # 7 shares its prefix with 71
    assert hier.labels[hier.parent[hier.index["15"]]] == "1*"
    with pytest.raises(ParameterError):
        Hierarchy.from_prefixes(["1", "2"], [0])


def test_balanced_hierarchy() -> None:
    hier = Hierarchy.balanced([str(i) for i in range(10)], 3)
    assert hier.n_leaves == 10
    assert hier.labels[hier.parent[hier.index["4"]]] == "3-5"
    assert hier.labels[hier.parent[hier.index["3-5"]]] == "0-8"
    assert hier.labels[hier.parent[hier.index["9"]]] == "*"
    assert max(row["max_fanout"] for row in hier.levels()) <= 3
    with pytest.raises(ParameterError):
        Hierarchy.balanced(["a"], 1)


def test_leaf_ids_errors() -> None:
    hier = Hierarchy.from_edges([("a", "A", 0), ("A", "*", 0), ("b", "*", 0)])
    assert hier.labels[hier.leaf_ids(Dataset.from_records([["a", "b"]]))[0]] == "a"
    with pytest.raises(InputError, match="'c' of the data is not in the hierarchy"):
        hier.leaf_ids(Dataset.from_records([["a", "c"]]))
    with pytest.raises(InputError, match="internal node"):
        hier.leaf_ids(Dataset.from_records([["A"]]))


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "data.txt").write_text("a b\nb c\n")
    (tmp_path / "ok.csv").write_text("a,A,*\nb,A,*\nc,*\n")
    (tmp_path / "cycle.csv").write_text("child,parent\na,A\nA,B\nB,A\nb,*\n")
    (tmp_path / "roots.csv").write_text("a,A\nb,B\nc,B\n")
    (tmp_path / "twoparents.csv").write_text("a,A\na,B\nA,*\nB,*\n")
    (tmp_path / "leafinternal.csv").write_text("a,A,*\nA,*\nb,A,*\n")
    (tmp_path / "missing.csv").write_text("a,A,*\nb,A,*\n")
    (tmp_path / "threefields.csv").write_text("a,A,*\n")
    (tmp_path / "empty.csv").write_text("\n")
    (tmp_path / "self.csv").write_text("a,a\n")
    (tmp_path / "blank.csv").write_text("a,,*\n")
    return tmp_path


def test_check_accepts_valid(run_cli, files: Path) -> None:
    result = run_cli("hierarchy", "check", files / "ok.csv", files / "data.txt")
    assert result.code == 0 and "valid" in result.out


@pytest.mark.parametrize(
    ("name", "fmt", "message"),
    [
        ("cycle.csv", "auto", "cycle"),
        ("roots.csv", "auto", "2 roots ('A' and 'B')"),
        ("twoparents.csv", "auto", "node 'a' has two parents, 'A' (line 1) and 'B'"),
        ("leafinternal.csv", "paths", "line 2: item 'A' is a leaf here but an internal node"),
        ("missing.csv", "auto", "item 'c' of the data is not in the hierarchy"),
        ("threefields.csv", "edges", "line 1: expected child,parent"),
        ("empty.csv", "auto", "the hierarchy file is empty"),
        ("self.csv", "auto", "its own parent"),
        ("blank.csv", "auto", "line 1: empty node label"),
        ("nothere.csv", "auto", "no such hierarchy file"),
        (".", "auto", "found a directory"),
    ],
)
def test_check_errors_exit_2(run_cli, files: Path, name: str, fmt: str, message: str) -> None:
    result = run_cli("hierarchy", "check", files / name, files / "data.txt", "--hierarchy-format", fmt)
    assert result.code == 2
    assert message in result.err
    assert result.err.startswith("privtool: error:") and result.err.count("\n") == 1 and "Traceback" not in result.err


def test_leafinternal_in_paths_names_the_line(files: Path) -> None:
    (files / "li.csv").write_text("b,*\na,b,*\n")
    with pytest.raises(InputError, match=r"li\.csv, line 1: item 'b' is a leaf here but an internal node"):
        read_hierarchy(files / "li.csv", "paths")


def test_build_and_show(run_cli, files: Path) -> None:
    out = files / "built.csv"
    assert run_cli("hierarchy", "build", files / "data.txt", "--fanout", "2", "-o", out).code == 0
    assert run_cli("hierarchy", "check", out, files / "data.txt").code == 0
    shown = run_cli("hierarchy", "show", out, "--json")
    assert shown.code == 0 and '"leaves": 3' in shown.out
    assert run_cli("hierarchy", "show", out).code == 0
    converted = files / "edges.csv.gz"
    assert run_cli("hierarchy", "build", "--from-paths", out, "-o", converted, "--output-format", "edges").code == 0
    assert read_hierarchy(converted).to_json() == read_hierarchy(out).to_json()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--prefix", "x"], "--prefix must be comma-separated lengths"),
        (["--fanout", "1"], "--fanout must be at least 2"),
        ([], "exactly one of"),
        (["--fanout", "2", "--prefix", "1"], "exactly one of"),
    ],
)
def test_build_errors_exit_2(run_cli, files: Path, args: list[str], message: str) -> None:
    result = run_cli("hierarchy", "build", files / "data.txt", *args, "-o", files / "x.csv")
    assert result.code == 2 and message in result.err


def test_build_prefix_needs_data(run_cli, files: Path) -> None:
    result = run_cli("hierarchy", "build", "--prefix", "1", "-o", files / "x.csv")
    assert result.code == 2 and "needs a DATA file" in result.err


def test_staged_hierarchy_covers_bms_webview_2(shared_data: Path, registry) -> None:
    from privtool.io import read_dataset

    hier = read_hierarchy(shared_data / "hierarchies" / "bms-webview-2-ranges.csv.gz")
    dataset = read_dataset(registry, shared_data / "bms-webview-2.dat.gz")
    assert hier.n_leaves == 3340 and hier.root == "*"
    assert len(np.unique(hier.leaf_ids(dataset))) == dataset.n_items == 3340
