"""Generalisation hierarchies: a validated tree of item labels with numpy tables.

A :class:`Hierarchy` is a networkx ``DiGraph`` whose edges point from a node to
its children (root -> ... -> leaves); the leaves are the items a dataset may
hold. It can be built from a CSV of ``child,parent`` edges, from per-item paths
(``item,level1,...,root``; a label repeated on consecutive levels is one node),
from code prefixes (``1402`` -> ``140*`` -> ``14*`` -> ``1*`` -> root) and as a
balanced tree of a given fan-out over the sorted item labels.

Validation (every failure a :class:`~privtool.errors.InputError` of one sentence
naming the file, line or node): a node with two parents, a cycle, two roots, an
empty hierarchy, a leaf of a paths file that is also an internal node, and (in
:meth:`Hierarchy.leaf_ids`) a dataset item that is missing or not a leaf.

Nodes are numbered in preorder (children in :func:`~privtool.dataset.label_sort_key`
order), so node ``a`` is an ancestor-or-self of ``b`` exactly when
``a <= b <= last[a]`` (an Euler-tour interval). The tables used by the
generalisation algorithms (He & Naughton 2009, §3; LGR, Kim 2023, §3) are
precomputed as numpy arrays: ``parent``, ``depth``, ``leaf_count``, ``last``,
``ancestor_at[d, v]`` (the ancestor of ``v`` at depth ``d``, ``-1`` below
``v``'s depth), children in CSR form, and ``ncp`` (NCP of a node: its leaves
over all leaves, 0 when it covers a single leaf).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import itertools
import os
from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .arrays import lookup_sorted, offsets_of, pair_key, unique_int
from .atomic import write_bytes_atomic
from .dataset import Dataset, label_sort_key
from .errors import InputError, ParameterError, line_at
from .io import read_bytes
from .params import Param

if TYPE_CHECKING:
    import networkx as nx

DEFAULT_ROOT = "*"
FORMATS = ("auto", "edges", "paths")
"""File formats of a hierarchy: ``edges`` (``child,parent`` rows, optional header),
``paths`` (``item,level1,...,root`` rows) and ``auto`` (edges when every row has
two fields, which means the same in both formats, paths otherwise)."""

Edge = tuple[str, str, int]
"""``(child, parent, line)``; ``line`` is 1-based, 0 when there is no file."""


class Hierarchy:
    """A validated generalisation tree; see the module docstring."""

    def __init__(self, graph: nx.DiGraph, source: str = "hierarchy") -> None:
        self.source = source
        if graph.number_of_nodes() == 0:
            raise InputError("the hierarchy has no nodes", path=source)
        for node in graph.nodes:
            if graph.in_degree(node) > 1:
                parents = sorted(graph.predecessors(node), key=label_sort_key)
                raise InputError(f"node {node!r} has two parents, {parents[0]!r} and {parents[1]!r}", path=source)
        roots = sorted((n for n in graph.nodes if graph.in_degree(n) == 0), key=label_sort_key)
        if not roots:
            self._fail_cycle(graph, next(iter(graph.nodes)))
        if len(roots) > 1:
            raise InputError(
                f"the hierarchy has {len(roots)} roots ({roots[0]!r} and {roots[1]!r}); it needs one", path=source
            )
        self.graph = graph
        self.root: str = roots[0]
        self._number_nodes()
        if self.n_nodes < graph.number_of_nodes():
            self._fail_cycle(graph, next(n for n in graph.nodes if n not in self.index))

    def _fail_cycle(self, graph: nx.DiGraph, start: str) -> None:
        """Every node has at most one parent, so following parents from a node
        the root cannot reach must loop: report that loop."""
        seen: list[str] = []
        node = start
        while node not in seen:
            seen.append(node)
            node = next(iter(graph.predecessors(node)))
        loop = seen[seen.index(node) :]
        path = " -> ".join(reversed([*loop, node]))
        raise InputError(f"the hierarchy has a cycle (parent -> child): {path}", path=self.source)

    # ----------------------------------------------------------- tables
    def _number_nodes(self) -> None:
        graph = self.graph
        order: list[str] = []
        parent: list[int] = []
        depth: list[int] = []
        stack: list[tuple[str, int, int]] = [(self.root, -1, 0)]
        while stack:
            node, up, d = stack.pop()
            order.append(node)
            parent.append(up)
            depth.append(d)
            me = len(order) - 1
            children = sorted(graph.successors(node), key=label_sort_key, reverse=True)
            stack.extend((child, me, d + 1) for child in children)
        n = len(order)
        self.labels: tuple[str, ...] = tuple(order)
        self.index: dict[str, int] = {label: i for i, label in enumerate(order)}
        self.parent = np.array(parent, dtype=np.int32)
        self.depth = np.array(depth, dtype=np.int32)
        n_children = np.bincount(self.parent[1:], minlength=n).astype(np.int64)
        self.is_leaf = n_children == 0
        # subtree sizes and leaf counts, children before parents (reverse preorder)
        size = np.ones(n, dtype=np.int64)
        leaf_count = self.is_leaf.astype(np.int64)
        for v in range(n - 1, 0, -1):
            p = parent[v]
            size[p] += size[v]
            leaf_count[p] += leaf_count[v]
        self.last = np.arange(n, dtype=np.int64) + size - 1
        self.leaf_count = leaf_count
        self.n_leaves = int(leaf_count[0])
        self.max_depth = int(self.depth.max())
        # children in CSR form; preorder ids make each node's children ascending
        self.child_ptr = offsets_of(n_children)
        self.children = np.argsort(self.parent[1:], kind="stable").astype(np.int32) + 1
        self.child_rank = np.zeros(n, dtype=np.int32)
        self.child_rank[self.children] = np.arange(n - 1, dtype=np.int64) - self.child_ptr[self.parent[self.children]]
        self.n_children = n_children
        # ancestor_at[d, v]: ancestor of v at depth d (v itself at its own depth)
        table = np.full((self.max_depth + 1, n), -1, dtype=np.int32)
        table[self.depth, np.arange(n)] = np.arange(n, dtype=np.int32)
        for d in range(self.max_depth, 0, -1):
            below = table[d] >= 0
            table[d - 1, below] = self.parent[table[d, below]]
        self.ancestor_at = table
        # NCP in units of 1 / n_leaves: exact integers, for sums and ties
        self.ncp_units = np.where(leaf_count > 1, leaf_count, 0).astype(np.int64)
        self.ncp = self.ncp_units / max(self.n_leaves, 1)

    @property
    def n_nodes(self) -> int:
        return len(self.labels)

    @cached_property
    def leaf_labels(self) -> list[str]:
        return [self.labels[v] for v in np.flatnonzero(self.is_leaf)]

    @cached_property
    def label_rank(self) -> np.ndarray:
        """Position of each node's label in :func:`label_sort_key` order."""
        order = sorted(range(self.n_nodes), key=lambda v: label_sort_key(self.labels[v]))
        rank = np.empty(self.n_nodes, dtype=np.int64)
        rank[order] = np.arange(self.n_nodes)
        return rank

    def node_id(self, label: str) -> int:
        try:
            return self.index[label]
        except KeyError:
            raise InputError(f"node {label!r} is not in the hierarchy", path=self.source) from None

    def children_of(self, v: int) -> np.ndarray:
        return self.children[self.child_ptr[v] : self.child_ptr[v + 1]]

    def is_ancestor_or_self(self, a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray | bool:
        """Whether node ``a`` is ``b`` or one of its ancestors (vectorised)."""
        return (np.asarray(a) <= b) & (np.asarray(b) <= self.last[a])

    def ancestors(self, v: int) -> list[int]:
        """``v`` and its ancestors, from ``v`` up to the root."""
        return [int(a) for a in self.ancestor_at[: self.depth[v] + 1, v][::-1]]

    def raise_steps(self, nodes: np.ndarray, steps: int) -> np.ndarray:
        """The ancestor ``steps`` levels above each node (the root when above it)."""
        target = np.maximum(self.depth[nodes] - steps, 0)
        return self.ancestor_at[target, nodes]

    def lca(self, nodes: Iterable[int]) -> int:
        """Lowest common ancestor of a non-empty set of nodes."""
        ids = np.unique(np.fromiter(nodes, dtype=np.int32))
        if len(ids) == 0:
            raise ValueError("lca of an empty set")
        for d in range(int(self.depth[ids].min()), -1, -1):
            at = self.ancestor_at[d, ids]
            if np.all(at == at[0]):
                return int(at[0])
        return 0  # unreachable: depth 0 is the root for every node

    def covering(
        self, query_sets: np.ndarray, query_nodes: np.ndarray, set_ids: np.ndarray, set_nodes: np.ndarray
    ) -> np.ndarray:
        """For each query ``(set id, node)``, the deepest ancestor-or-self of
        the node among the nodes of that set (given as ``(set_ids, set_nodes)``
        pairs), or -1 when no node of the set covers it: the node an item is
        published as when a record holds nested labels (deepest-cover reading,
        docs/formats.md). Vectorised: one sorted probe per depth."""
        present = unique_int(pair_key(set_ids, set_nodes))
        cover = np.full(len(query_nodes), -1, dtype=np.int64)
        if not len(present):
            return cover
        for d in range(self.max_depth, -1, -1):
            anc = self.ancestor_at[d, query_nodes]
            _, found = lookup_sorted(present, pair_key(query_sets, np.maximum(anc, 0)))
            hit = (anc >= 0) & (cover < 0) & found
            cover[hit] = anc[hit]
        return cover

    def leaf_ids(self, dataset: Dataset) -> np.ndarray:
        """Node id of every item id of ``dataset``; an :class:`InputError` names
        the first item that is missing from the hierarchy or is not a leaf."""
        out = np.empty(dataset.n_items, dtype=np.int32)
        for item, label in enumerate(dataset.labels):
            node = self.index.get(label)
            if node is None:
                raise InputError(f"item {label!r} of the data is not in the hierarchy", path=self.source)
            if not self.is_leaf[node]:
                raise InputError(
                    f"item {label!r} of the data is an internal node of the hierarchy, not a leaf", path=self.source
                )
            out[item] = node
        return out

    def levels(self) -> list[dict[str, int]]:
        """Per depth: how many nodes, leaves and internal nodes, and the largest fan-out."""
        rows = []
        for d in range(self.max_depth + 1):
            at = self.depth == d
            rows.append(
                {
                    "depth": d,
                    "nodes": int(at.sum()),
                    "leaves": int((at & self.is_leaf).sum()),
                    "internal": int((at & ~self.is_leaf).sum()),
                    "max_fanout": int(self.n_children[at].max()),
                }
            )
        return rows

    # ------------------------------------------------------ serialisation
    def edges(self) -> list[list[str]]:
        """``[child, parent]`` pairs in preorder of the child."""
        return [[self.labels[v], self.labels[self.parent[v]]] for v in range(1, self.n_nodes)]

    def content_sha256(self) -> str:
        """SHA-256 of the canonical edges CSV (:meth:`to_csv` ``"edges"``): the
        same for the same tree whatever file or builder it came from."""
        return hashlib.sha256(self.to_csv("edges").encode("utf-8")).hexdigest()

    def to_json(self) -> dict[str, Any]:
        """The release's ``{"root": ..., "edges": [[child, parent], ...]}``."""
        return {"root": self.root, "edges": self.edges()}

    @classmethod
    def from_json(cls, obj: dict[str, Any], source: str = "release hierarchy") -> Hierarchy:
        edges = [(str(child), str(parent), 0) for child, parent in obj["edges"]]
        hierarchy = cls.from_edges(edges, source, nodes=[obj["root"]])
        if hierarchy.root != obj["root"]:
            raise InputError(f"the root is {hierarchy.root!r}, not {obj['root']!r} as declared", path=source)
        return hierarchy

    def to_csv(self, fmt: str = "paths") -> str:
        """CSV text: ``paths`` (one leaf a line, bottom-up to the root) or ``edges``."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        if fmt == "edges":
            writer.writerow(["child", "parent"])
            writer.writerows(self.edges())
        elif fmt == "paths":
            for v in np.flatnonzero(self.is_leaf):
                writer.writerow([self.labels[a] for a in self.ancestors(int(v))])
        else:
            raise ParameterError(f"--output-format must be edges or paths, not {fmt!r}.")
        return buffer.getvalue()

    def write(self, path: str | os.PathLike[str], fmt: str = "paths") -> None:
        """Write the CSV atomically; gzip-compressed (mtime 0) when the name ends in ``.gz``."""
        data = self.to_csv(fmt).encode("utf-8")
        if str(path).endswith(".gz"):
            data = gzip.compress(data, mtime=0)
        write_bytes_atomic(path, data)

    # ------------------------------------------------------------ builders
    @classmethod
    def from_edges(cls, edges: Iterable[Edge], source: str = "hierarchy", nodes: Sequence[str] = ()) -> Hierarchy:
        """A hierarchy from ``(child, parent, line)`` triples."""
        parent_of: dict[str, tuple[str, int]] = {}
        for child, parent, line in edges:
            earlier = parent_of.get(child)
            if earlier is not None:
                if earlier[0] == parent:
                    continue
                at = f" (line {earlier[1]})" if earlier[1] else ""
                raise InputError(
                    f"node {child!r} has two parents, {earlier[0]!r}{at} and {parent!r}", path=source, line=line or None
                )
            if child == parent:
                raise InputError(f"node {child!r} is its own parent", path=source, line=line or None)
            parent_of[child] = (parent, line)
        import networkx as nx  # lazily: privtool --help must stay fast

        graph = nx.DiGraph()
        graph.add_nodes_from(nodes)
        graph.add_edges_from((parent, child) for child, (parent, _) in parent_of.items())
        return cls(graph, source)

    @classmethod
    def from_paths(cls, rows: Iterable[tuple[Sequence[str], int]], source: str = "hierarchy") -> Hierarchy:
        """A hierarchy from ``(item, level1, ..., root)`` rows with their line numbers.

        A label repeated on consecutive levels is one node. The first field of
        every row is a leaf: a leaf that is an internal node elsewhere is an error.
        """
        edges: list[Edge] = []
        leaves: dict[str, int] = {}
        for fields, line in rows:
            path = [label for i, label in enumerate(fields) if i == 0 or label != fields[i - 1]]
            leaves.setdefault(path[0], line)
            edges.extend((child, parent, line) for child, parent in itertools.pairwise(path))
        hierarchy = cls.from_edges(edges, source, nodes=list(leaves))
        for label, line in leaves.items():
            if not hierarchy.is_leaf[hierarchy.index[label]]:
                raise InputError(
                    f"item {label!r} is a leaf here but an internal node on another line", path=source, line=line
                )
        return hierarchy

    @classmethod
    def from_prefixes(cls, labels: Iterable[str], lengths: Sequence[int], root: str = DEFAULT_ROOT) -> Hierarchy:
        """Code prefixes: the node of prefix ``p`` is called ``p*``; an item's
        ancestors are its prefixes of the given ``lengths`` shorter than it (and of
        its own length when a longer item shares that prefix), then ``root``."""
        lengths = sorted(set(int(n) for n in lengths))
        if not lengths or lengths[0] < 1:
            raise ParameterError(f"--prefix needs positive prefix lengths, not {lengths!r}.")
        items = sorted(set(labels), key=label_sort_key)
        strict = {item[:n] for item in items for n in lengths if n < len(item)}
        edges: list[Edge] = []
        for item in items:
            chain = [item] + [
                item[:n] + "*" for n in reversed(lengths) if n < len(item) or (n == len(item) and item in strict)
            ]
            chain.append(root)
            edges.extend((child, parent, 0) for child, parent in itertools.pairwise(chain))
        hierarchy = cls.from_edges(edges, "prefix hierarchy", nodes=[root])
        _check_leaves(hierarchy, items)
        return hierarchy

    @classmethod
    def balanced(cls, labels: Iterable[str], fanout: int, root: str = DEFAULT_ROOT) -> Hierarchy:
        """A balanced tree: the sorted items grouped ``fanout`` at a time, level by
        level, each group named ``first-last`` by the items it covers. A lone last
        member of a level moves up unchanged."""
        if fanout < 2:
            raise ParameterError(f"--fanout must be at least 2, not {fanout}.")
        items = sorted(set(labels), key=label_sort_key)
        level: list[tuple[str, str, str]] = [(item, item, item) for item in items]  # (node, first, last)
        edges: list[Edge] = []
        while len(level) > fanout:
            upper = []
            for start in range(0, len(level), fanout):
                group = level[start : start + fanout]
                if len(group) == 1:
                    upper.append(group[0])
                    continue
                name = f"{group[0][1]}-{group[-1][2]}"
                edges.extend((node, name, 0) for node, _, _ in group)
                upper.append((name, group[0][1], group[-1][2]))
            level = upper
        edges.extend((node, root, 0) for node, _, _ in level)
        hierarchy = cls.from_edges(edges, "balanced hierarchy", nodes=[root])
        _check_leaves(hierarchy, items)
        return hierarchy


def _check_leaves(hierarchy: Hierarchy, items: Sequence[str]) -> None:
    """A generated name must not collide with an item label."""
    for item in items:
        if not hierarchy.is_leaf[hierarchy.index[item]]:
            raise ParameterError(
                f"item {item!r} collides with a generated node name; choose other prefix lengths or fan-out."
            )


# ------------------------------------------------------------------ files
def _read_rows(path: Path) -> list[tuple[list[str], int]]:
    if not path.exists():
        raise InputError("no such hierarchy file", path=path)
    if path.is_dir():
        raise InputError("expected a hierarchy file, found a directory", path=path)
    raw = read_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"the hierarchy is not UTF-8 text (byte 0x{raw[exc.start]:02x})", path=path, line=line_at(raw, exc.start)
        ) from None
    rows = []
    for line, fields in enumerate(csv.reader(io.StringIO(text, newline="")), start=1):
        if not fields or all(not f.strip() for f in fields):
            continue
        fields = [f.strip() for f in fields]
        if any(not f for f in fields):
            raise InputError("empty node label", path=path, line=line)
        rows.append((fields, line))
    if not rows:
        raise InputError("the hierarchy file is empty", path=path)
    return rows


def read_hierarchy(path: str | os.PathLike[str], fmt: str = "auto") -> Hierarchy:
    """Read a hierarchy CSV (``.gz`` transparently) in ``fmt`` (see :data:`FORMATS`)."""
    if fmt not in FORMATS:
        raise ParameterError(f"--hierarchy-format must be one of {', '.join(FORMATS)}, not {fmt!r}.")
    p = Path(path)
    rows = _read_rows(p)
    if fmt == "auto":
        fmt = "edges" if all(len(fields) == 2 for fields, _ in rows) else "paths"
    if fmt == "edges":
        if [f.lower() for f in rows[0][0]] == ["child", "parent"]:
            rows = rows[1:]
        for fields, line in rows:
            if len(fields) != 2:
                raise InputError(f"expected child,parent but found {len(fields)} fields", path=p, line=line)
        return Hierarchy.from_edges(((f[0], f[1], line) for f, line in rows), str(p))
    return Hierarchy.from_paths(rows, str(p))


def parse_lengths(text: str) -> list[int]:
    """``"1,2,3"`` -> ``[1, 2, 3]``, naming ``--prefix`` when it is not that."""
    try:
        lengths = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ParameterError(f"--prefix must be comma-separated lengths such as 1,2,3, not {text!r}.") from None
    if not lengths:
        raise ParameterError(f"--prefix must be comma-separated lengths such as 1,2,3, not {text!r}.")
    return lengths


# ---------------------------------------------------- anonymizer parameters
HIERARCHY = Param(
    "hierarchy",
    str,
    help="the hierarchy: a CSV file (edges or paths), or prefix lengths such as 1,2,3 "
    "with --hierarchy-format prefix, or a fan-out with --hierarchy-format fanout",
    required=True,
)
HIERARCHY_FORMAT = Param(
    "hierarchy_format",
    str,
    "auto",
    "how to read --hierarchy: auto (edges when every row has two fields, else paths), edges, paths, prefix, fanout",
    choices=("auto", "edges", "paths", "prefix", "fanout"),
)
"""The hierarchy input of every anonymizer that generalises through a tree
(``partition``, ``lgr``, ``aa``, or a plugin's): declare both and call
:func:`load_hierarchy`."""


def load_hierarchy(spec: str, fmt: str, dataset: Dataset) -> Hierarchy:
    """The hierarchy named by the ``hierarchy`` and ``hierarchy_format`` parameters."""
    if fmt == "prefix":
        return Hierarchy.from_prefixes(dataset.labels, parse_lengths(spec))
    if fmt == "fanout":
        try:
            fanout = int(spec)
        except ValueError:
            raise ParameterError(
                f"--hierarchy must be a fan-out (an integer) with --hierarchy-format fanout, not {spec!r}."
            ) from None
        return Hierarchy.balanced(dataset.labels, fanout)
    return read_hierarchy(spec, fmt)
