"""A disassociated release's content checked and written a slice at a time
(issue 20: the driver's memory stays bounded however large the release).

Writing a release file (:func:`privtool.release_bytes.canonical_bytes`) needs
temporaries of many times the file's size. It works cluster by cluster: a
cluster's text (``{"id":...,"size":...,"record_chunks":...,"term_chunk":...}``)
and a joint cluster's depend only on their own content and labels. So
:func:`checked_content` cuts the content into slices of about
:data:`SLICE_OCCURRENCES` item occurrences: consecutive clusters, then
consecutive joint clusters (written with *stubs*, empty clusters of the same
ids and sizes, for the members they name, so that the slice is a release of its
own). The content text of the whole release is the slices' cluster texts, then
their joint cluster texts, which is byte for byte what ``canonical_bytes``
writes for the whole release.

Before anything is written, :func:`privtool.release_rules.reads_back` checks
on the arrays that the whole file reads back the fast way
(:func:`privtool.release_bytes.parse_canonical`) as these very arrays: every
rule the reader enforces, tested against writing and parsing
(``tests/test_release_rules.py``). (Until session 12 each slice was written as
a file, parsed and compared with its arrays, about half the check's time.)

The fast reader understands no JSON escape, so a release one of whose labels
JSON escapes (``"``, ``\\``, a control character) is checked with *stand-in*
labels: the label codes as zero-padded decimals, which need no escape and
sort as the labels do when these are in canonical order, which is checked,
with what else the reader checks of a label (not empty, Unicode text); the
text is written with the labels themselves, each escaped by
:func:`json.encoder.encode_basestring` as for any release.

A release whose arrays would not read back as themselves makes
:func:`checked_content` return ``None``; so do ids repeated (joint cluster
ids included). The caller then writes and reads the whole release, which
names the problem.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence

import numpy as np

from .arrays import unique_int
from .dataset import label_sort_key
from .lazy_sequence import LazySequence
from .release import FORMAT, json_text
from .release_arrays import ReleaseArrays, frozen
from .release_bytes import ESCAPED, canonical_bytes
from .release_rules import reads_back, utf8_text

SLICE_OCCURRENCES = 1 << 18
"""Item occurrences (published in chunks and term chunks) per slice; a larger
cluster or joint cluster is a slice of its own. Fewer than a release of
100,000 records holds (about 370,000 for bms-pos-like data), so that every
release past that size needs the same bounded memory for its slice
(docs/results/scale.md, "Session 11: sanitize at the small end")."""

_SLICE_ENVELOPE = json_text(
    {"format": FORMAT, "kind": "disassociated", "claims": [], "params": {}, "provenance": {}, "stats": {}}
)
_HEAD = len(_SLICE_ENVELOPE.encode("utf-8")) - 1
"""Where a slice file's content starts (after its envelope's ``}`` turned into ``,``)."""
_OPEN_CLUSTERS = '"clusters":['
_OPEN_JOINTS = '],"joint_clusters":['


def slice_bounds(occurrences: np.ndarray, limit: int) -> list[tuple[int, int]]:
    """Consecutive ranges ``[a, b)`` of owners (``occurrences[i]`` published
    item occurrences each) covering them all, each holding at most ``limit``
    occurrences or a single owner."""
    ends = np.cumsum(occurrences, dtype=np.int64)
    bounds: list[tuple[int, int]] = []
    a = 0
    while a < len(occurrences):
        before = int(ends[a - 1]) if a else 0
        b = max(int(np.searchsorted(ends, before + limit, side="right")), a + 1)
        bounds.append((a, b))
        a = b
    return bounds


def _chunks_of(arrays: ReleaseArrays, first_owner: int, last_owner: int) -> tuple[np.ndarray, ...]:
    """``(items, row_offsets, chunk_offsets, owner_offsets)`` of the chunks of
    owners ``first_owner .. last_owner - 1`` (clusters, then joint clusters),
    each offsets array starting at 0."""
    owners = arrays.owner_offsets[first_owner : last_owner + 1]
    chunks = arrays.chunk_offsets[owners[0] : owners[-1] + 1]
    rows = arrays.row_offsets[chunks[0] : chunks[-1] + 1]
    return arrays.items[rows[0] : rows[-1]], rows - rows[0], chunks - chunks[0], owners - owners[0]


def cluster_slice(arrays: ReleaseArrays, a: int, b: int) -> ReleaseArrays:
    """Clusters ``a .. b - 1`` of ``arrays`` as a release of their own (no joint clusters)."""
    items, rows, chunks, owners = _chunks_of(arrays, a, b)
    terms = arrays.term_offsets[a : b + 1]
    return ReleaseArrays(
        labels=arrays.labels,
        items=items,
        row_offsets=rows,
        chunk_offsets=chunks,
        owner_offsets=owners,
        term_items=arrays.term_items[terms[0] : terms[-1]],
        term_offsets=terms - terms[0],
        cluster_ids=arrays.cluster_ids[a:b],
        cluster_sizes=arrays.cluster_sizes[a:b],
        joint_ids=(),
        joint_members=(),
    )


def joint_slice(arrays: ReleaseArrays, a: int, b: int) -> ReleaseArrays:
    """Joint clusters ``a .. b - 1`` of ``arrays`` (every member a cluster of
    ``arrays``) as a release of their own: their members as stubs (same ids
    and sizes, nothing published), then the joint clusters."""
    members, member_offsets = arrays.member_index
    stubs = unique_int(members[member_offsets[a] : member_offsets[b]])
    n = arrays.n_clusters
    items, rows, chunks, owners = _chunks_of(arrays, n + a, n + b)
    return ReleaseArrays(
        labels=arrays.labels,
        items=items,
        row_offsets=rows,
        chunk_offsets=chunks,
        owner_offsets=frozen(np.r_[np.zeros(len(stubs), dtype=np.int64), owners], np.int64),
        term_items=frozen([], np.int32),
        term_offsets=frozen(np.zeros(len(stubs) + 1), np.int64),
        cluster_ids=tuple(map(arrays.cluster_ids.__getitem__, stubs.tolist())),
        cluster_sizes=arrays.cluster_sizes[stubs],
        joint_ids=arrays.joint_ids[a:b],
        joint_members=arrays.joint_members[a:b],
    )


def without_escapes(arrays: ReleaseArrays) -> ReleaseArrays | None:
    """``arrays`` when no label needs a JSON escape; else the same content over
    stand-in labels (each label's code, zero-padded: no escape, and the same
    canonical order), or ``None`` when the labels are not what the reader
    accepts (each non-empty, Unicode text, in strictly increasing canonical
    order), so that the caller reads the whole file back and names the problem."""
    labels = arrays.labels
    if not ESCAPED.search("".join(labels)):
        return arrays
    keys = [label_sort_key(label) for label in labels]
    if not all(labels) or any(a >= b for a, b in itertools.pairwise(keys)) or not utf8_text("".join(labels)):
        return None
    width = len(str(len(labels)))
    return dataclasses.replace(arrays, labels=tuple(f"{code:0{width}d}" for code in range(len(labels))))


Slice = tuple[bool, ReleaseArrays]
"""``(is_joint, arrays)``: a slice of clusters or of joint clusters."""


class Slices(LazySequence[Slice]):
    """Every slice of a release's arrays, clusters first, then joint clusters,
    each built when asked for: a map holds only the slices in flight, not a
    copy of every slice's offsets at once."""

    def __init__(self, arrays: ReleaseArrays) -> None:
        n = arrays.n_clusters
        owner_rows = np.diff(arrays.row_offsets[arrays.chunk_offsets[arrays.owner_offsets]])
        occurrences = owner_rows[:n] + np.diff(arrays.term_offsets)
        self._arrays = arrays
        self.bounds = [(False, a, b) for a, b in slice_bounds(occurrences, SLICE_OCCURRENCES)]
        self.bounds += [(True, a, b) for a, b in slice_bounds(owner_rows[n:], SLICE_OCCURRENCES)]

    def __len__(self) -> int:
        return len(self.bounds)

    def _build(self, index: int) -> Slice:
        is_joint, a, b = self.bounds[index]
        return is_joint, (joint_slice if is_joint else cluster_slice)(self._arrays, a, b)


Mapper = Callable[[Callable[[Slice], bytes], Sequence[Slice]], list[bytes]]
"""How :func:`checked_content` runs its slices: ``(fn, slices) -> results``
in order (a :meth:`privtool.context.Context.map`, or :func:`serially`)."""


def serially(fn: Callable[[Slice], bytes], items: Sequence[Slice]) -> list[bytes]:
    """The slices one after the other, in this process."""
    return [fn(item) for item in items]


def slice_text(piece: Slice) -> bytes:
    """One slice written (top level, so that executors can pickle it): its
    clusters' or joint clusters' text as in the whole file (comma-separated
    objects)."""
    is_joint, arrays = piece
    content = canonical_bytes(_SLICE_ENVELOPE, "disassociated", arrays, None)[_HEAD:-2]
    # "clusters":[...],"joint_clusters":[...], where a key is the only string followed by ':'
    middle = content.index(_OPEN_JOINTS.encode()) if is_joint else content.rindex(_OPEN_JOINTS.encode())
    return content[middle + len(_OPEN_JOINTS) : -1] if is_joint else content[len(_OPEN_CLUSTERS) : middle]


def checked_content(arrays: ReleaseArrays, run: Mapper = serially) -> str | None:
    """The content text of the disassociated release held in ``arrays``
    (``"clusters":[...],"joint_clusters":[...]``, as in its file), once the
    arrays are found to read back as themselves
    (:func:`privtool.release_rules.reads_back`, with stand-in labels when a
    label needs an escape) and every id to be distinct; written a slice at a
    time (:func:`slice_text`, run through ``run``). ``None`` when the check
    fails (see the module doc)."""
    n_ids = len(set(arrays.cluster_ids) | set(arrays.joint_ids))
    plain = without_escapes(arrays)
    if n_ids != arrays.n_clusters + arrays.n_joint_clusters or plain is None or not reads_back(plain):
        return None
    pieces = Slices(arrays)
    texts = run(slice_text, pieces)
    listed: dict[bool, list[str]] = {False: [], True: []}  # the cluster texts, the joint cluster texts
    for at, (is_joint, _, _) in enumerate(pieces.bounds):
        listed[is_joint].append(texts[at].decode("utf-8"))
        texts[at] = b""  # each slice's bytes go as its text is decoded: one full-size copy, the joined text
    return "".join([_OPEN_CLUSTERS, *_separated(listed[False]), _OPEN_JOINTS, *_separated(listed[True]), "]"])


def _separated(parts: list[str]) -> list[str]:
    """``parts`` with a comma between consecutive ones."""
    out = [","] * max(2 * len(parts) - 1, 0)
    out[0::2] = parts
    return out
