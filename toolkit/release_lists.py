"""The content of a parsed release object (``json.loads``) as
:class:`~privtool.release_arrays.ReleaseArrays`, checked in bulk.

A file that is not in canonical layout (written by another JSON writer, or with
an order changed) cannot go through :func:`privtool.release_bytes.parse_canonical`.
:func:`content_arrays` reads such a file's parsed content with a few C-level
passes over all rows and one numpy pass over all item codes, instead of a Python
call per item and a nested :class:`~privtool.release.Release` converted to
arrays afterwards. It is at least as strict as the validating walk
(:func:`privtool.release.release_from_json`): it returns ``None`` for anything
that walk could refuse, and the caller then runs the walk, which names the JSON
path of the first problem. When it returns arrays, they are those of the
release the walk builds (``ReleaseArrays.from_nested`` of its content).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np

from .arrays import concat_ranges, offsets_of
from .dataset import label_sort_key
from .release_arrays import Codes, Ints, ReleaseArrays, frozen, strictly_increasing_rows

CLUSTER_KEYS = frozenset({"id", "size", "record_chunks", "term_chunk"})
JOINT_KEYS = frozenset({"id", "members", "shared_chunks"})


def _lists(values: Sequence[Any]) -> bool:
    """Whether every value is a list."""
    return not set(map(type, values)) - {list}


def _labels(values: Sequence[Any]) -> bool:
    """Whether every value is a non-empty string."""
    return not set(map(type, values)) - {str} and "" not in values


def _label_set(groups: list[list[Any]]) -> set[str] | None:
    """Every value in the groups, when each is a non-empty string (checked on
    the distinct values: a value of another type is never equal to a string)."""
    try:
        found = set(chain.from_iterable(groups))
    except TypeError:  # an unhashable value: a list or an object
        return None
    return found if _labels(list(found)) else None


def _distinct_in_rows(items: Codes, offsets: np.ndarray, n_labels: int) -> bool:
    """Whether no code repeats inside a row (rows cut by ``offsets``). Only the
    rows whose codes do not strictly increase are sorted (a row changed by
    hand, not every row of the release)."""
    if strictly_increasing_rows(items, offsets):  # the usual case: rows in canonical order
        return True
    at = np.flatnonzero(items[1:] <= items[:-1])  # pairs (at, at + 1) out of order, or across two rows
    row = np.searchsorted(offsets, at, side="right") - 1
    rows = np.unique(row[at + 1 < offsets[row + 1]])
    lengths = offsets[rows + 1] - offsets[rows]
    keys = np.sort(np.repeat(rows, lengths) * max(1, n_labels) + items[concat_ranges(offsets[rows], lengths)])
    return not np.any(keys[1:] == keys[:-1])


def _arrays(
    rows: list[list[str]],
    chunk_lengths: list[int],
    owner_lengths: list[int],
    terms: list[list[str]],
    clusters: tuple[tuple[str, ...], list[int]],
    joints: tuple[tuple[str, ...], tuple[tuple[str, ...], ...]],
) -> ReleaseArrays | None:
    """The arrays of content whose rows and term chunks are lists, or ``None``
    when an item is not a non-empty string or repeats in its row or term chunk."""
    in_rows, in_terms = _label_set(rows), _label_set(terms)
    if in_rows is None or in_terms is None:
        return None
    labels = tuple(sorted(in_rows | in_terms, key=label_sort_key))
    code = dict(zip(labels, range(len(labels)), strict=True)).__getitem__

    def codes(groups: list[list[str]]) -> tuple[Codes, Ints]:
        offsets = offsets_of(np.fromiter(map(len, groups), dtype=np.int64, count=len(groups)))
        array = np.fromiter(map(code, chain.from_iterable(groups)), dtype=np.int32, count=int(offsets[-1]))
        array.flags.writeable = False
        return array, offsets

    (items, row_offsets), (term_items, term_offsets) = codes(rows), codes(terms)
    if not (
        _distinct_in_rows(items, row_offsets, len(labels)) and _distinct_in_rows(term_items, term_offsets, len(labels))
    ):
        return None
    return ReleaseArrays(
        labels=labels,
        items=items,
        row_offsets=row_offsets,
        chunk_offsets=offsets_of(chunk_lengths),
        owner_offsets=offsets_of(owner_lengths),
        term_items=term_items,
        term_offsets=term_offsets,
        cluster_ids=clusters[0],
        cluster_sizes=frozen(clusters[1], np.int64),
        joint_ids=joints[0],
        joint_members=joints[1],
    )


def _chunks_of(owners: list[Any]) -> tuple[list[list[Any]], list[list[str]]] | None:
    """The chunks of every owner's list of chunks, and all their rows (in
    order), when every chunk is a list of non-empty lists."""
    if not _lists(owners):
        return None
    chunks = list(chain.from_iterable(owners))
    if not _lists(chunks):
        return None
    rows = list(chain.from_iterable(chunks))
    if not _lists(rows) or not all(rows):
        return None
    return chunks, rows


def disassociated_arrays(top: dict[str, Any], max_records: int) -> ReleaseArrays | None:
    """The arrays of a disassociated release's ``clusters`` and
    ``joint_clusters`` (``top`` is the parsed object, its envelope valid), or
    ``None`` when anything could be wrong (see the module doc)."""
    clusters, joints = top.get("clusters"), top.get("joint_clusters", [])
    if "records" in top or type(clusters) is not list or type(joints) is not list:
        return None
    if any(type(c) is not dict or c.keys() != CLUSTER_KEYS for c in clusters):
        return None
    if any(type(j) is not dict or j.keys() != JOINT_KEYS for j in joints):
        return None
    ids = [c["id"] for c in clusters]
    sizes = [c["size"] for c in clusters]
    if not _labels(ids) or len(set(ids)) != len(ids) or set(map(type, sizes)) - {int}:
        return None
    if any(size < 1 for size in sizes) or sum(sizes) > max_records:
        return None
    joint_ids = [j["id"] for j in joints]
    members = [j["members"] for j in joints]
    known = set(ids)
    if not _labels(joint_ids) or not known.isdisjoint(joint_ids) or not _lists(members) or not all(members):
        return None
    if any(not _labels(ms) or len(set(ms)) != len(ms) or not known.issuperset(ms) for ms in members):
        return None
    terms = [c["term_chunk"] for c in clusters]
    record = _chunks_of([c["record_chunks"] for c in clusters])
    shared = _chunks_of([j["shared_chunks"] for j in joints])
    if record is None or shared is None or not _lists(terms):
        return None
    owner_lengths = [len(c["record_chunks"]) for c in clusters] + [len(j["shared_chunks"]) for j in joints]
    chunk_lengths = list(map(len, chain(record[0], shared[0])))
    if any(len(chunk) > size for c, size in zip(clusters, sizes, strict=True) for chunk in c["record_chunks"]):
        return None
    return _arrays(
        record[1] + shared[1],
        chunk_lengths,
        owner_lengths,
        terms,
        (tuple(ids), sizes),
        (tuple(joint_ids), tuple(map(tuple, members))),
    )


def records_arrays(top: dict[str, Any]) -> ReleaseArrays | None:
    """The arrays of a ``generalized`` or ``sanitized`` release's ``records``,
    or ``None`` when anything could be wrong (see the module doc)."""
    rows = top.get("records")
    if "clusters" in top or "joint_clusters" in top or type(rows) is not list or not _lists(rows):
        return None
    return _arrays(rows, [], [], [], ((), []), ((), ()))
