"""Whether a disassociated release's arrays read back as themselves, decided on
the arrays (issue 20: the release check without writing and parsing the file
twice over).

:func:`reads_back` says whether :func:`privtool.release_bytes.parse_canonical`
reads the file :func:`privtool.release_bytes.canonical_bytes` writes of the
arrays back as the same arrays (the same ids, sizes and offsets; the same
labels at every item occurrence, numbered in the same order, though labels no
occurrence uses drop out), without writing or parsing anything. What
the writer writes follows from the arrays piece by piece, so the reader's
verdict does too; the rules below are every condition the reader enforces
(its prelude, its tokenizer, its grammar and :func:`privtool.release_bytes._disassociated`'s
checks), each written against the arrays, plus the rules that make a written
value read back as itself. ``tests/test_release_rules.py`` holds the oracle:
on random arrays, broken ones included, :func:`reads_back` says yes exactly
when writing and parsing the whole file gives the arrays back, and every rule
is needed. The rules:

* offsets: each CSR offsets array starts at 0, never decreases and ends at
  the length of what it cuts, and no row is empty (the grammar has no ``[]``
  inside a chunk); one term chunk per cluster, one owner per cluster and
  joint cluster, one size per cluster, one member list per joint cluster
  (the text is cut by them);
* rows: each row strictly increasing, the rows of each chunk in
  lexicographic order (:func:`privtool.release_arrays.rows_in_order`); term
  chunks strictly increasing;
* sizes: each from 1 (the grammar's ``[1-9][0-9]{0,9}``), together at most
  :data:`privtool.release_bytes.MAX_RECORDS`; a cluster's record chunk has
  at most as many rows as the cluster has records;
* ids: each non-empty (an empty string ends the tokenizer), needing no JSON
  escape (the reader refuses a backslash and a control byte) and UTF-8
  text (else the writer fails); cluster ids distinct; no joint cluster
  id is a cluster's; every joint cluster names one member at least, each a
  cluster, none twice;
* labels: every item code (in rows and term chunks) a label's; every label
  UTF-8 text (the writer encodes them all); each label an item occurrence
  uses is non-empty, needs no escape, is the last label of its text (the
  reader numbers texts, not positions) and comes after the previous used one
  in canonical order (:func:`privtool.dataset.label_sort_key`: the reader
  numbers the labels it met in that order).

Each rule looks at :data:`privtool.release_arrays.SLICE` elements at a time,
so that its temporaries stay small however large the release.
"""

from __future__ import annotations

import itertools

import numpy as np

from .arrays import sort_int
from .dataset import label_sort_key
from .release_arrays import SLICE, Ints, ReleaseArrays, rows_in_order, strictly_increasing_rows
from .release_bytes import ESCAPED, MAX_RECORDS


def reads_back(arrays: ReleaseArrays) -> bool:
    """Whether the canonical file of ``arrays`` (a disassociated release's
    content) reads back the fast way as ``arrays`` (see the module doc)."""
    return offsets_fit(arrays) and rows_fit(arrays) and sizes_fit(arrays) and ids_fit(arrays) and labels_fit(arrays)


def _cuts(offsets: Ints, groups: int, total: int, strict: bool = False) -> bool:
    """Whether ``offsets`` cut ``total`` elements into ``groups`` groups (from
    0, never decreasing; ``strict``: no group empty)."""
    if len(offsets) != groups + 1 or offsets[0] != 0 or offsets[-1] != total:
        return False
    return all(
        bool(np.all(np.diff(offsets[a : a + SLICE + 1]) > (0 if strict else -1)))
        for a in range(0, len(offsets) - 1, SLICE)
    )


def _codes_fit(codes: np.ndarray, n_labels: int) -> bool:
    """Whether every code is a label's."""
    return len(codes) == 0 or (int(codes.min()) >= 0 and int(codes.max()) < n_labels)


def offsets_fit(arrays: ReleaseArrays) -> bool:
    """The offsets rule (module doc)."""
    n, n_joint = arrays.n_clusters, arrays.n_joint_clusters
    return (
        _cuts(arrays.owner_offsets, n + n_joint, arrays.n_chunks)
        and _cuts(arrays.chunk_offsets, arrays.n_chunks, arrays.n_rows)
        and _cuts(arrays.row_offsets, arrays.n_rows, len(arrays.items), strict=True)
        and _cuts(arrays.term_offsets, n, len(arrays.term_items))
        and len(arrays.cluster_sizes) == n
        and len(arrays.joint_members) == n_joint
    )


def rows_fit(arrays: ReleaseArrays) -> bool:
    """The rows rule (module doc); the offsets fit."""
    return (
        strictly_increasing_rows(arrays.items, arrays.row_offsets)
        and strictly_increasing_rows(arrays.term_items, arrays.term_offsets)
        and rows_in_order(arrays.items, arrays.row_offsets, arrays.chunk_offsets)
    )


def sizes_fit(arrays: ReleaseArrays) -> bool:
    """The sizes rule (module doc); the offsets fit."""
    sizes, owners = arrays.cluster_sizes, arrays.owner_offsets
    if len(sizes) and (int(sizes.min()) < 1 or int(sizes.max()) > MAX_RECORDS or int(sizes.sum()) > MAX_RECORDS):
        return False
    record_chunks = int(owners[arrays.n_clusters])
    for a in range(0, record_chunks, SLICE):
        b = min(a + SLICE, record_chunks)
        cluster = np.searchsorted(owners, np.arange(a, b), side="right") - 1
        if np.any(np.diff(arrays.chunk_offsets[a : b + 1]) > sizes[cluster]):
            return False
    return True


def ids_fit(arrays: ReleaseArrays) -> bool:
    """The ids rule (module doc); the offsets fit."""
    ids = "".join(itertools.chain(arrays.cluster_ids, arrays.joint_ids))
    if not all(arrays.cluster_ids) or not all(arrays.joint_ids) or ESCAPED.search(ids) or not utf8_text(ids):
        return False
    clusters = set(arrays.cluster_ids)
    if len(clusters) != arrays.n_clusters or not clusters.isdisjoint(arrays.joint_ids):
        return False
    members, offsets = arrays.member_index
    if len(members) == 0:
        return arrays.n_joint_clusters == 0
    if not np.all(np.diff(offsets) > 0) or int(members.min()) < 0:
        return False
    joint = np.repeat(np.arange(arrays.n_joint_clusters, dtype=np.int64), np.diff(offsets))
    pairs = sort_int(joint * arrays.n_clusters + members)
    return not np.any(pairs[1:] == pairs[:-1])


def labels_fit(arrays: ReleaseArrays) -> bool:
    """The labels rule (module doc), and every code a label's."""
    labels = arrays.labels
    if not _codes_fit(arrays.items, len(labels)) or not _codes_fit(arrays.term_items, len(labels)):
        return False
    used = np.zeros(len(labels), dtype=bool)
    for codes in (arrays.items, arrays.term_items):
        for a in range(0, len(codes), SLICE):
            used[codes[a : a + SLICE]] = True
    which = np.flatnonzero(used).tolist()
    texts = [labels[code] for code in which]
    if not utf8_text("".join(labels)) or not all(texts) or ESCAPED.search("".join(texts)):
        return False
    last = {label: code for code, label in enumerate(labels)}
    keys = [label_sort_key(text) for text in texts]
    return all(last[text] == code for text, code in zip(texts, which, strict=True)) and all(
        a < b for a, b in itertools.pairwise(keys)
    )


def utf8_text(text: str) -> bool:
    """Whether ``text`` encodes to UTF-8 (no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
