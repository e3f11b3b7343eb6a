"""The published release and its JSON format ``privtool-release/2``.

Three kinds share one envelope (docs/design.md, "Release format"), which states
the release's ``claims`` (:mod:`privtool.claims`):

* ``disassociated``: ``clusters`` (record chunks and a term chunk each) and
  ``joint_clusters`` (shared chunks over several clusters);
* ``generalized``: ``records`` of hierarchy labels plus the ``hierarchy``;
* ``sanitized``: ``records`` with some items removed.

Everything is published by item label. :meth:`Release.canonical` sorts every
order that could link rows back to the input (sub-records of a chunk, records,
term chunks); :func:`write_release` always writes the canonical form, atomically.
:func:`release_from_json` validates and names the JSON path of the first problem.
Version 1 files (no ``claims``) are still read: their claims are derived from
the kind and the parameters (:func:`privtool.claims.claims_of_version_1`) and
``Release.format`` keeps the version read, so that reports can say so.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar, overload

from .atomic import text_pieces, write_text_atomic
from .claims import Claim, claims_of_version_1
from .dataset import label_sort_key
from .errors import InputError, line_at
from .gcpause import paused_gc
from .release_arrays import ReleaseArrays
from .release_bytes import MAX_RECORDS, canonical_bytes, parse_canonical
from .release_lists import disassociated_arrays, records_arrays

FORMAT = "privtool-release/2"
FORMAT_V1 = "privtool-release/1"
FORMATS = (FORMAT, FORMAT_V1)
"""Versions :func:`release_from_json` reads; :data:`FORMAT` is the one written.
Version 2 publishes only what :mod:`privtool.publishable` allows; version 1
files (which may carry the input SHA-256, the seed and private counts) are read."""
KINDS = ("disassociated", "generalized", "sanitized")
_NESTED = ("clusters", "joint_clusters", "records")

Itemset = list[str]
Chunk = list[Itemset]
Content = TypeVar("Content")
"""A record chunk or shared chunk: its non-empty sub-records."""


def canonical_itemset(items: Sequence[str]) -> list[str]:
    """Items of one sub-record or record in canonical order, without repeats."""
    return sorted(set(items), key=label_sort_key)


class _LabelOrder:
    """The canonical order of every label of one release, as integer ranks, so
    that sorting millions of sub-records compares integers, not key tuples. The
    order is :func:`label_sort_key`'s; a sequence of ranks compares as the
    sequence of keys would (ranks are monotone in the key)."""

    def __init__(self, labels: Iterable[str]) -> None:
        self.rank = {label: i for i, label in enumerate(sorted(set(labels), key=label_sort_key))}

    def itemset(self, items: Sequence[str]) -> list[str]:
        return sorted(set(items), key=self.rank.__getitem__)

    def chunk(self, chunk: Sequence[Sequence[str]]) -> Chunk:
        """Sub-records in canonical order (each sorted, then sorted among themselves)."""
        rank = self.rank
        rows = [self.itemset(row) for row in chunk]
        return sorted(rows, key=lambda row: [rank[label] for label in row])


@dataclass
class Cluster:
    """One cluster of a disassociated release.

    ``size`` counts its records (ghost records included); each record chunk lists
    its non-empty sub-records; ``term_chunk`` lists the distinct terms whose
    support in the cluster is below k.
    """

    id: str
    size: int
    record_chunks: list[Chunk] = field(default_factory=list)
    term_chunk: list[str] = field(default_factory=list)


@dataclass
class JointCluster:
    """Clusters joined by REFINE, with the shared chunks they publish together."""

    id: str
    members: list[str]
    shared_chunks: list[Chunk] = field(default_factory=list)


class _NestedView(Generic[Content]):
    """One field of :class:`Release`'s nested view (``clusters``,
    ``joint_clusters``, ``records``). A release read from a file is backed by
    its :class:`~privtool.release_arrays.ReleaseArrays`; the nested lists are
    built from them the first time any of the three is read or assigned, and
    from then on the lists are the release's content (a consumer may change
    them), so the arrays are dropped."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = "_" + name

    @overload
    def __get__(self, release: None, owner: type | None = None) -> _Unset: ...

    @overload
    def __get__(self, release: Release, owner: type | None = None) -> Content: ...

    def __get__(self, release: Release | None, owner: type | None = None) -> Content | _Unset:
        if release is None:  # the dataclass asks for the default
            return _UNSET
        if self.slot not in release.__dict__:
            release._unpack()
        return release.__dict__[self.slot]

    def __set__(self, release: Release, value: Content | _Unset) -> None:
        if release.__dict__.get("_arrays") is not None:
            release._unpack()
        release.__dict__[self.slot] = [] if isinstance(value, _Unset) else value


class _Unset:
    """Default of a nested field (an empty list, made fresh per release)."""


_UNSET = _Unset()


@dataclass
class Release:
    """What is published. ``claims`` are the privacy models it claims;
    ``params`` every parameter used (``method``, ``k``, ``m``, ...);
    ``provenance`` the versions, input SHA-256 and seed; ``stats`` the counts a
    reader needs to see that nothing was lost (``records_in``,
    ``suppressed_records``, ...). ``format`` is the format version it was read
    from (always written as :data:`FORMAT`).

    The content is ``clusters`` and ``joint_clusters`` (``disassociated``) or
    ``records`` (the other kinds), as nested lists of labels; :attr:`arrays`
    gives the same content as numpy CSR arrays. A release read from a file
    holds only the arrays until a consumer reads the nested lists
    (:class:`_NestedView`)."""

    kind: str
    params: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    clusters: _NestedView[list[Cluster]] = _NestedView()
    joint_clusters: _NestedView[list[JointCluster]] = _NestedView()
    records: _NestedView[list[Itemset]] = _NestedView()
    hierarchy: dict[str, Any] | None = None
    claims: list[Claim] = field(default_factory=list)
    format: str = FORMAT
    source_sha256: str = field(default="", compare=False, repr=False)
    """SHA-256 of the file the release was read from ("" when made in memory);
    it equals :meth:`sha256` for a file privtool wrote."""
    _arrays: ReleaseArrays | None = field(default=None, init=False, compare=False, repr=False)

    @classmethod
    def from_arrays(cls, arrays: ReleaseArrays, kind: str, **envelope: Any) -> Release:
        """A release whose content is ``arrays`` (nested lists built on demand);
        ``envelope`` holds the other fields (``params``, ``claims``, ...)."""
        release = cls(kind=kind, **envelope)
        for name in _NESTED:
            del release.__dict__["_" + name]
        release._arrays = arrays
        return release

    def _unpack(self) -> None:
        """Build the nested lists from the arrays; the lists are the content from now on."""
        arrays = self.__dict__.pop("_arrays")
        self._arrays = None
        self.__dict__["_clusters"] = arrays.clusters()
        self.__dict__["_joint_clusters"] = arrays.joint_clusters()
        self.__dict__["_records"] = arrays.records()

    @property
    def arrays(self) -> ReleaseArrays:
        """The content as CSR arrays (:mod:`privtool.release_arrays`), in the
        release's own orders. Free for a release read from a file whose nested
        lists nobody asked for; otherwise converted from the nested lists on
        every access (they may have changed), so keep the result while you use it."""
        if self._arrays is not None:
            return self._arrays
        if self.kind == "disassociated":
            return ReleaseArrays.from_nested(self.clusters, self.joint_clusters, [])
        return ReleaseArrays.from_nested([], [], self.records)

    @property
    def backing_arrays(self) -> ReleaseArrays | None:
        """The arrays the content is held in, or ``None`` when it is held as
        nested lists (never converts: see :attr:`arrays`)."""
        return self._arrays

    @property
    def claims_derived(self) -> bool:
        """Whether the claims were derived from a version 1 file's kind and params."""
        return self.format == FORMAT_V1

    def envelope(self) -> dict[str, Any]:
        """Copies of every field but the content (``params``, ``claims``...)."""
        return {
            "params": dict(self.params),
            "provenance": dict(self.provenance),
            "stats": dict(self.stats),
            "hierarchy": self.hierarchy,
            "claims": list(self.claims),
            "format": self.format,
        }

    def canonical(self) -> Release:
        """A copy with every publishable order canonical (see module doc)."""
        if self._arrays is not None and self._arrays.is_canonical():
            return Release.from_arrays(self._arrays, self.kind, **self.envelope())
        order = _LabelOrder(self._labels())
        return Release(
            kind=self.kind,
            clusters=[
                Cluster(c.id, c.size, [order.chunk(ch) for ch in c.record_chunks], order.itemset(c.term_chunk))
                for c in self.clusters
            ],
            joint_clusters=[
                JointCluster(j.id, list(j.members), [order.chunk(ch) for ch in j.shared_chunks])
                for j in self.joint_clusters
            ],
            records=order.chunk(self.records),
            **self.envelope(),
        )

    def _labels(self) -> Iterator[str]:
        """Every item label the release publishes (with repeats)."""
        for c in self.clusters:
            yield from c.term_chunk
            for chunk in c.record_chunks:
                for row in chunk:
                    yield from row
        for j in self.joint_clusters:
            for chunk in j.shared_chunks:
                for row in chunk:
                    yield from row
        for row in self.records:
            yield from row

    def _envelope_json(self) -> dict[str, Any]:
        """The JSON object of everything before the content."""
        return {
            "format": FORMAT,
            "kind": self.kind,
            "claims": [claim.to_json() for claim in self.claims],
            "params": self.params,
            "provenance": self.provenance,
            "stats": self.stats,
        }

    def to_json(self) -> dict[str, Any]:
        """The JSON object of the canonical release (only the fields of its kind)."""
        release = self.canonical()
        out = release._envelope_json()
        if release.kind == "disassociated":
            out["clusters"] = [
                {"id": c.id, "size": c.size, "record_chunks": c.record_chunks, "term_chunk": c.term_chunk}
                for c in release.clusters
            ]
            out["joint_clusters"] = [
                {"id": j.id, "members": j.members, "shared_chunks": j.shared_chunks} for j in release.joint_clusters
            ]
        else:
            out["records"] = release.records
        if release.kind == "generalized":
            out["hierarchy"] = release.hierarchy
        return out

    def dumps(self) -> str:
        """Deterministic JSON text (same release, same bytes): assembled from the
        arrays (:func:`privtool.release_bytes.canonical_bytes`) when the release
        holds canonical arrays, else from the canonical nested lists."""
        arrays = self._arrays
        if arrays is not None and arrays.is_canonical():
            text = canonical_bytes(json_text(self._envelope_json()), self.kind, arrays, self.hierarchy)
            return text.decode("utf-8")
        return json_text(self.to_json())

    def sha256(self) -> str:
        return text_sha256(self.dumps())


def text_sha256(text: str) -> str:
    """SHA-256 of ``text`` in UTF-8, encoded in :func:`privtool.atomic.text_pieces`."""
    digest = hashlib.sha256()
    for piece in text_pieces(text):
        digest.update(piece.encode("utf-8"))
    return digest.hexdigest()


def json_text(obj: dict[str, Any]) -> str:
    """The file text of a release's JSON object (:meth:`Release.to_json`)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=False) + "\n"


# ---------------------------------------------------------------- validation
MAX_DEPTH = 16
"""How deep a free-form part of a release or trail (``params``, ``notes``...)
may nest: far more than any component writes, far less than what breaks a
JSON writer or a report."""


def json_depth(value: Any, limit: int) -> int:
    """The nesting depth of a parsed JSON value (a scalar is 0), counted
    without recursion and only up to ``limit + 1``."""
    depth, level = 0, [value]
    while level and depth <= limit:
        children: list[Any] = []
        for node in level:
            if isinstance(node, dict):
                children.extend(node.values())
            elif isinstance(node, list):
                children.extend(node)
        if not children and not any(isinstance(node, (dict, list)) for node in level):
            break
        depth += 1
        level = children
    return depth


class _Checker:
    """Walks a JSON object and raises at the first problem, naming its path."""

    def __init__(self, source: object) -> None:
        self.source = source

    def fail(self, path: str, problem: str) -> None:
        raise InputError(f"invalid release at {path}: {problem}.", path=self.source)

    def obj(self, value: Any, path: str, required: Sequence[str], optional: Sequence[str] = ()) -> dict:
        if not isinstance(value, dict):
            self.fail(path, "expected an object")
        for key in required:
            if key not in value:
                self.fail(f"{path}.{key}", "missing")
        for key in value:
            if key not in required and key not in optional:
                self.fail(f"{path}.{key}", "unknown field")
        return value

    def string(self, value: Any, path: str) -> str:
        if not isinstance(value, str):
            self.fail(path, f"expected a string, found {type(value).__name__}")
        if value == "":
            self.fail(path, "empty item label")
        return value

    def integer(self, value: Any, path: str, minimum: int = 0, maximum: int | None = None) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(path, f"expected an integer, found {type(value).__name__}")
        if value < minimum:
            self.fail(path, f"must be at least {minimum}, found {value}")
        if maximum is not None and value > maximum:
            self.fail(path, f"must be at most {maximum:,}, found {value:,}")
        return value

    def shallow(self, value: Any, path: str, limit: int = MAX_DEPTH) -> None:
        """Fail when ``value`` nests arrays or objects more than ``limit`` deep."""
        if json_depth(value, limit) > limit:
            self.fail(path, f"nested more than {limit} levels deep")

    def array(self, value: Any, path: str) -> list:
        if not isinstance(value, list):
            self.fail(path, f"expected an array, found {type(value).__name__}")
        return value

    def itemset(self, value: Any, path: str, allow_empty: bool = False) -> list[str]:
        items = self.array(value, path)
        if not items and not allow_empty:
            self.fail(path, "empty sub-record (a chunk lists only non-empty sub-records)")
        labels = [self.string(item, f"{path}[{i}]") for i, item in enumerate(items)]
        if len(set(labels)) != len(labels):
            self.fail(path, "an item is repeated")
        return labels

    def chunk(self, value: Any, path: str) -> Chunk:
        rows = self.array(value, path)
        if well_formed_itemsets(rows):
            return rows
        return [self.itemset(row, f"{path}[{i}]") for i, row in enumerate(rows)]


def well_formed_itemsets(rows: list) -> bool:
    """Whether every row is a non-empty array of distinct non-empty strings.

    The fast path of :meth:`_Checker.chunk`: a few C-level passes over the whole
    chunk instead of a Python call per item, so a large release validates in a
    fraction of the time. When it says no, the per-item walk runs and names the
    first offending JSON path."""
    if set(map(type, rows)) - {list} or not all(rows):
        return False
    flat = [item for row in rows for item in row]
    if set(map(type, flat)) - {str}:
        return False
    return "" not in set(flat) and sum(map(len, map(set, rows))) == len(flat)


def _release_envelope(obj: Any, check: _Checker) -> tuple[Release, dict[str, Any]]:
    """Validate everything but the content of a parsed release object: the
    release without content, and the object."""
    if isinstance(obj, dict) and obj.get("format") not in FORMATS:
        check.fail("$.format", f"expected {FORMAT!r} (or {FORMAT_V1!r}), found {obj.get('format')!r}")
    version = str(obj.get("format")) if isinstance(obj, dict) else FORMAT
    common = ("format", "kind", "params", "provenance", *(("claims",) if version == FORMAT else ()))
    top = check.obj(obj, "$", common, ("stats", "clusters", "joint_clusters", "records", "hierarchy"))
    kind = top["kind"]
    if kind not in KINDS:
        check.fail("$.kind", f"expected one of {', '.join(KINDS)}, found {kind!r}")
    for key in ("params", "provenance", "stats"):
        if key in top and not isinstance(top[key], dict):
            check.fail(f"$.{key}", "expected an object")
        check.shallow(top.get(key, {}), f"$.{key}")
    if version == FORMAT:
        claims = [
            Claim.from_json(raw, f"$.claims[{i}]", check.source)
            for i, raw in enumerate(check.array(top["claims"], "$.claims"))
        ]
    else:
        claims = claims_of_version_1(kind, top["params"])
    release = Release(
        kind=kind,
        params=top["params"],
        provenance=top["provenance"],
        stats=top.get("stats", {}),
        claims=claims,
        format=version,
    )
    return release, top


def _hierarchy(value: Any, check: _Checker) -> dict[str, Any]:
    """A generalized release's validated ``hierarchy``."""
    hierarchy = check.obj(value, "$.hierarchy", ("root", "edges"))
    check.string(hierarchy["root"], "$.hierarchy.root")
    for n, edge in enumerate(check.array(hierarchy["edges"], "$.hierarchy.edges")):
        pair = check.array(edge, f"$.hierarchy.edges[{n}]")
        if len(pair) != 2:
            check.fail(f"$.hierarchy.edges[{n}]", "expected [child, parent]")
        check.string(pair[0], f"$.hierarchy.edges[{n}][0]")
        check.string(pair[1], f"$.hierarchy.edges[{n}][1]")
    return hierarchy


def release_from_json(obj: Any, source: object = "release") -> Release:
    """Validate a parsed ``privtool-release/2`` (or ``/1``) object and build the
    :class:`Release`; a version 1 file's claims are derived from its kind and params."""
    check = _Checker(source)
    release, top = _release_envelope(obj, check)
    kind = release.kind
    if kind == "disassociated":
        if "records" in top:
            check.fail("$.records", "a disassociated release publishes clusters, not records")
        seen: set[str] = set()
        total = 0  # records of the clusters so far
        for i, raw in enumerate(check.array(top.get("clusters"), "$.clusters")):
            path = f"$.clusters[{i}]"
            c = check.obj(raw, path, ("id", "size", "record_chunks", "term_chunk"))
            cid = check.string(c["id"], f"{path}.id")
            if cid in seen:
                check.fail(f"{path}.id", f"duplicate cluster id {cid!r}")
            seen.add(cid)
            size = check.integer(c["size"], f"{path}.size", minimum=1, maximum=MAX_RECORDS - total)
            total += size
            chunks = [
                check.chunk(ch, f"{path}.record_chunks[{j}]")
                for j, ch in enumerate(check.array(c["record_chunks"], f"{path}.record_chunks"))
            ]
            for j, ch in enumerate(chunks):
                if len(ch) > size:
                    check.fail(f"{path}.record_chunks[{j}]", f"{len(ch)} sub-records in a cluster of size {size}")
            term = check.itemset(c["term_chunk"], f"{path}.term_chunk", allow_empty=True)
            release.clusters.append(Cluster(cid, size, chunks, term))
        for i, raw in enumerate(check.array(top.get("joint_clusters", []), "$.joint_clusters")):
            path = f"$.joint_clusters[{i}]"
            joint = check.obj(raw, path, ("id", "members", "shared_chunks"))
            jid = check.string(joint["id"], f"{path}.id")
            if jid in seen:
                check.fail(f"{path}.id", f"duplicate cluster id {jid!r}")
            members = check.itemset(joint["members"], f"{path}.members")
            for n, member in enumerate(members):
                if member not in seen:
                    check.fail(f"{path}.members[{n}]", f"no cluster with id {member!r}")
            shared = [
                check.chunk(ch, f"{path}.shared_chunks[{n}]")
                for n, ch in enumerate(check.array(joint["shared_chunks"], f"{path}.shared_chunks"))
            ]
            release.joint_clusters.append(JointCluster(jid, members, shared))
    else:
        for key in ("clusters", "joint_clusters"):
            if key in top:
                check.fail(f"$.{key}", f"a {kind} release publishes records, not clusters")
        rows = check.array(top.get("records"), "$.records")
        release.records = [check.itemset(row, f"$.records[{i}]", allow_empty=True) for i, row in enumerate(rows)]
        _records_hierarchy(release, top, check)
    return release


def _records_hierarchy(release: Release, top: dict[str, Any], check: _Checker) -> None:
    """Validate and set the hierarchy of a release of records (after its records)."""
    if release.kind == "generalized":
        release.hierarchy = _hierarchy(top.get("hierarchy"), check)
    elif "hierarchy" in top:
        check.fail("$.hierarchy", "only a generalized release publishes a hierarchy")


_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
"""A ``\\uXXXX`` escape of a surrogate that is not half of a pair (which
Python's JSON parser accepts and no UTF-8 file can hold)."""


def read_file_bytes(path: str | os.PathLike[str], what: str) -> bytes:
    """The bytes of a JSON input file, read once (a FIFO works), or one
    :class:`InputError` naming it."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"no such {what} file", path=p)
    if p.is_dir():
        raise InputError(f"expected a {what} file, found a directory", path=p)
    try:
        with open(p, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise InputError(f"cannot read the {what} ({exc.strerror or exc})", path=p) from None


def parse_json_bytes(data: bytes, path: object, what: str) -> Any:
    """Parse JSON text, turning every way it can fail (not UTF-8, not JSON,
    nested deeper than the parser goes, a lone surrogate) into one
    :class:`InputError` naming the line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = line_at(data, exc.start)
        raise InputError(f"the {what} is not UTF-8 text (byte 0x{data[exc.start]:02x})", path=path, line=line) from None
    try:
        with paused_gc():
            value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"the {what} is not valid JSON ({exc.msg})", path=path, line=exc.lineno) from None
    except RecursionError:
        raise InputError(f"the {what} nests arrays or objects too deeply to be a {what}", path=path) from None
    lone = _LONE_SURROGATE.search(text) if "\\u" in text else None  # the search costs more than the parse
    if lone is not None and not _encodable(value):
        raise InputError(
            f"the {what} escapes a lone surrogate ({lone.group(0)}), which is not Unicode text",
            path=path,
            line=text.count("\n", 0, lone.start()) + 1,
        )
    return value


def _encodable(value: Any) -> bool:
    """Whether every string in ``value`` is Unicode text (no lone surrogate)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def load_json_file(path: str | os.PathLike[str], what: str) -> Any:
    """Parse a JSON file, turning every way it can fail into one :class:`InputError`."""
    return parse_json_bytes(read_file_bytes(path, what), Path(path), what)


def _read_canonical(data: bytes, source: object) -> Release | None:
    """The release in ``data`` when they are in canonical layout and valid
    (:func:`privtool.release_bytes.parse_canonical`), else ``None``."""
    parsed = parse_canonical(data)
    if parsed is None:
        return None
    envelope, arrays, hierarchy = parsed
    check = _Checker(source)
    try:
        release, _ = _release_envelope(envelope, check)
        if release.kind == "generalized":
            release.hierarchy = _hierarchy(hierarchy, check)
    except InputError:
        return None
    return Release.from_arrays(arrays, release.kind, **release.envelope())


def release_from_bytes(data: bytes, source: str | os.PathLike[str]) -> Release:
    """The release in a file's bytes, validated, backed by its arrays: read the
    fast way when the bytes are in canonical layout (every file privtool
    writes), else (or when anything is invalid) the validating way, whose
    :class:`InputError` names the JSON path of the first problem."""
    release = _read_canonical(data, source)
    if release is None:
        with paused_gc():
            release = _release_from_parsed(parse_json_bytes(data, Path(source), "release"), source)
    return release


def _release_from_parsed(obj: Any, source: object) -> Release:
    """:func:`release_from_json` of ``obj``, backed by arrays: the content is
    checked and converted in bulk (:mod:`privtool.release_lists`) when it is
    valid, else walked by :func:`release_from_json`, which names the problem."""
    check = _Checker(source)
    release, top = _release_envelope(obj, check)
    if release.kind == "disassociated":
        arrays = disassociated_arrays(top, MAX_RECORDS)
    else:
        arrays = records_arrays(top)
    if arrays is None:
        nested = release_from_json(obj, source)
        return Release.from_arrays(nested.arrays, nested.kind, **nested.envelope())
    if release.kind != "disassociated":
        _records_hierarchy(release, top, check)
    return Release.from_arrays(arrays, release.kind, **release.envelope())


def read_release(path: str | os.PathLike[str]) -> Release:
    """Read and validate a release file (:func:`release_from_bytes`); its
    ``source_sha256`` is the SHA-256 of the bytes read (the file is read once,
    so a FIFO works). It leaves the garbage collector as it found it (a command
    that owns its process freezes afterwards: :mod:`privtool.gcpause`)."""
    data = read_file_bytes(path, "release")
    release = release_from_bytes(data, path)
    release.source_sha256 = hashlib.sha256(data).hexdigest()
    return release


def write_release(release: Release, path: str | os.PathLike[str]) -> None:
    """Write the canonical release to ``path`` atomically."""
    write_text_atomic(path, release.dumps())
