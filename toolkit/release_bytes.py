"""Canonical release JSON read and written with numpy, without a Python object
per item occurrence (issue 20 item 2).

:func:`parse_canonical` understands exactly the layout :func:`canonical_bytes`
writes (the layout of :meth:`privtool.release.Release.dumps`): the envelope
first (``format`` ... ``stats``: small, parsed with :mod:`json`), then the
content with no whitespace, no escapes and every order canonical. It tokenizes
the content at byte level (with nothing escaped, every ``"`` delimits a
string), checks the content's shape with one regular expression over a
*skeleton* in which every value string is ``@``, finds rows, chunks and
clusters by bracket depth, and de-duplicates the labels as fixed-width byte
strings with :func:`numpy.unique`. It returns ``None`` for anything it does not
fully understand or that is not valid; the caller then reads the file the
validating way (:func:`privtool.release.release_from_json`), which names the
problem. So nothing the validating path refuses gets through here.

:func:`canonical_bytes` assembles the file from canonical arrays: the text is a
sequence of *pieces* (a label's JSON string, a bracket, a cluster's opening...),
joined level by level (rows, chunks, clusters) as arrays of piece numbers and
copied out in one gather.
"""

from __future__ import annotations

import itertools
import json
import re
from json.encoder import encode_basestring
from typing import Any

import numpy as np
import numpy.typing as npt

from .dataset import label_sort_key
from .release_arrays import (
    Codes,
    Ints,
    ReleaseArrays,
    frozen,
    rows_in_order,
    strictly_increasing_rows,
)

ENVELOPE = ("format", "kind", "claims", "params", "provenance", "stats")
"""The keys before the content, in the order :meth:`privtool.release.Release.dumps` writes them."""

MAX_RECORDS = 2**31 - 1
"""Most records a release may hold (the sizes of its clusters add up to at most
this): far above any real release, low enough that record positions fit the
32-bit indexes of the attacks and metrics. Also :data:`privtool.release.MAX_RECORDS`."""

_ROW = rb"\[@(?:,@)*+\]"
_CHUNK = rb"\[(?:" + _ROW + rb"(?:," + _ROW + rb")*+)?\]"
_CHUNKS = rb"\[(?:" + _CHUNK + rb"(?:," + _CHUNK + rb")*+)?\]"
_LABELS = rb"\[(?:@(?:,@)*+)?\]"
_CLUSTER = rb'\{"id":@,"size":[1-9][0-9]{0,9},"record_chunks":' + _CHUNKS + rb',"term_chunk":' + _LABELS + rb"\}"
_JOINT = rb'\{"id":@,"members":' + _ROW + rb',"shared_chunks":' + _CHUNKS + rb"\}"
_DISASSOCIATED = re.compile(
    rb'"clusters":\[(?:' + _CLUSTER + rb"(?:," + _CLUSTER + rb")*+)?\]"
    rb',"joint_clusters":\[(?:' + _JOINT + rb"(?:," + _JOINT + rb")*+)?\]"
)
_RECORDS = re.compile(rb'"records":\[(?:' + _LABELS + rb"(?:," + _LABELS + rb")*+)?\]")
"""Skeletons of the content (possessive repeats: the grammar never backtracks)."""
_SIZE = re.compile(rb'"size":([0-9]+)')
_HIERARCHY = b'],"hierarchy":'

_AT, _QUOTE, _COLON = ord("@"), ord('"'), ord(":")


# ---------------------------------------------------------------- reading
def parse_canonical(data: bytes) -> tuple[dict[str, Any], ReleaseArrays, Any] | None:
    """``(envelope, content, hierarchy)`` of a release file in canonical layout:
    the JSON object of the :data:`ENVELOPE` keys (not validated here), the
    content's arrays (validated: everything :func:`privtool.release.release_from_json`
    checks of the content holds) and the parsed ``hierarchy`` of a generalized
    release (else ``None``). ``None`` when the bytes are not in canonical layout
    or anything in the content is invalid."""
    if b"\\" in data or not data.endswith(b"}\n") or np.any(np.frombuffer(data, dtype=np.uint8)[:-1] < 0x20):
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    cuts = [cut for cut in (data.find(b',"clusters":['), data.find(b',"records":[')) if cut >= 0]
    if not cuts:
        return None
    cut = min(cuts)
    try:
        envelope = json.loads(data[:cut] + b"}")
    except (
        ValueError,
        RecursionError,
    ):  # the cut was not at the top level, or the envelope is not JSON
        return None
    if not isinstance(envelope, dict) or tuple(envelope) != ENVELOPE:
        return None
    body = data[cut + 1 : -2]  # the content, without the object's closing "}\n"
    kind, hierarchy = envelope["kind"], None
    if kind == "disassociated":
        arrays = _disassociated(body)
    elif kind in ("generalized", "sanitized"):
        if kind == "generalized":
            at = body.find(_HIERARCHY)
            if at < 0:
                return None
            try:
                hierarchy = json.loads(body[at + len(_HIERARCHY) :])
            except (ValueError, RecursionError):
                return None
            body = body[: at + 1]
        arrays = _records(body)
    else:
        return None
    return None if arrays is None else (envelope, arrays, hierarchy)


class _Tokens:
    """The value strings of a content region (``start``/``end`` of their bytes,
    quotes excluded) and its skeleton: the region with every value string
    (every string not followed by ``:``) replaced by ``@``; ``level`` is the
    bracket depth after each skeleton byte, ``at`` where the ``@`` are."""

    def __init__(self, body: bytes, start: Ints, end: Ints, skeleton: bytes) -> None:
        self.body, self.start, self.end, self.skeleton = body, start, end, skeleton
        sk = np.frombuffer(skeleton, dtype=np.uint8)
        self.sk = sk
        is_open = (sk == ord("[")) | (sk == ord("{"))
        is_close = (sk == ord("]")) | (sk == ord("}"))
        self.level = np.cumsum(is_open.view(np.int8) - is_close.view(np.int8), dtype=np.int32)
        self.at = np.flatnonzero(sk == _AT)
        self.brackets: dict[str, Ints] = {}

    @classmethod
    def of(cls, body: bytes) -> _Tokens | None:
        region = np.frombuffer(body, dtype=np.uint8)
        quotes = np.flatnonzero(region == _QUOTE)
        if len(quotes) % 2:
            return None
        opening, closing = quotes[0::2], quotes[1::2]
        value = region[np.minimum(closing + 1, len(region) - 1)] != _COLON
        start, end = opening[value] + 1, closing[value]
        if np.any(end == start):  # an empty label or id: refused, let the validating path say where
            return None
        # the skeleton keeps runs of bytes outside value strings; a value string's
        # content and closing quote go, its opening quote becomes @
        runs = np.empty(2 * len(start) + 1, dtype=np.int64)
        runs[0::2] = np.r_[start, len(region)] - np.r_[0, end + 1]
        runs[1::2] = end + 1 - start
        kept = np.zeros(len(runs), dtype=bool)
        kept[0::2] = True
        marked = region.copy()
        marked[start - 1] = _AT
        skeleton = marked[np.repeat(kept, runs)].tobytes()
        tokens = cls(body, start, end, skeleton)
        return tokens if len(tokens.at) == len(start) else None  # an @ outside a string is not JSON

    def opens(self, level: int, byte: str = "[") -> Ints:
        """Skeleton positions of the brackets ``byte`` that open ``level``."""
        at = self.brackets.get(byte)
        if at is None:
            at = self.brackets[byte] = np.flatnonzero(self.sk == ord(byte))
        return at[self.level[at] == level]

    def strings(self, which: npt.NDArray[np.bool_]) -> list[str]:
        """The value strings selected (by ``@`` number), decoded (ids and
        members: a few per cluster), with one decode for all of them."""
        start, end = self.start[which], self.end[which]
        if len(start) == 0:
            return []
        lengths = end - start + 1  # each string and a '"' after it (no string holds one)
        at = np.cumsum(lengths) - lengths
        region = np.frombuffer(self.body, dtype=np.uint8)
        joined = region[np.repeat(start - at, lengths) + np.arange(int(lengths.sum()))]
        joined[at + lengths - 1] = _QUOTE
        return joined[:-1].tobytes().decode("utf-8").split('"')


def _offsets(positions: Ints, group_opens: Ints) -> Ints:
    """CSR offsets of sorted ``positions`` by the groups opening at ``group_opens``."""
    out = np.empty(len(group_opens) + 1, dtype=np.int64)
    out[:-1] = np.searchsorted(positions, group_opens)
    out[-1] = len(positions)
    out.flags.writeable = False
    return out


def _disassociated(body: bytes) -> ReleaseArrays | None:
    tokens = _Tokens.of(body)
    if tokens is None or _DISASSOCIATED.fullmatch(tokens.skeleton) is None:
        return None
    at, depth = tokens.at, tokens.level[tokens.at]
    joint = at > tokens.skeleton.find(b',"joint_clusters":')
    # depth of a value string: 2 a (joint) cluster's id, 3 a term or a member, 5 an item of a row
    in_rows, in_terms = depth == 5, (depth == 3) & ~joint
    owner_opens = tokens.opens(2, "{")
    cluster_opens = owner_opens[: np.count_nonzero((depth == 2) & ~joint)]
    row_opens, chunk_opens = tokens.opens(5), tokens.opens(4)
    distinct = _distinct(body, tokens.start[in_rows | in_terms], tokens.end[in_rows | in_terms])
    labels, codes = distinct
    coded = np.empty(len(at), dtype=np.int32)
    coded[in_rows | in_terms] = codes
    items, term_items = (
        frozen(coded[in_rows], np.int32),
        frozen(coded[in_terms], np.int32),
    )
    row_offsets = _offsets(at[in_rows], row_opens)
    chunk_offsets = _offsets(row_opens, chunk_opens)
    owner_offsets = _offsets(chunk_opens, owner_opens)
    term_offsets = _offsets(at[in_terms], cluster_opens)

    cluster_ids = tokens.strings((depth == 2) & ~joint)
    sizes = frozen([int(size) for size in _SIZE.findall(tokens.skeleton)], np.int64)
    joint_ids = tokens.strings((depth == 2) & joint)
    members = tokens.strings((depth == 3) & joint)
    member_offsets = _offsets(at[(depth == 3) & joint], owner_opens[len(cluster_ids) :]).tolist()
    joint_members = tuple(tuple(members[a:b]) for a, b in itertools.pairwise(member_offsets))
    known = set(cluster_ids)
    n_record_chunks = int(owner_offsets[len(cluster_ids)])
    chunk_rows = np.diff(chunk_offsets)[:n_record_chunks]
    cluster_of_chunk = np.repeat(np.arange(len(cluster_ids)), np.diff(owner_offsets[: len(cluster_ids) + 1]))
    if (
        len(known) != len(cluster_ids)
        or known.intersection(joint_ids)
        or any(len(set(ms)) != len(ms) or not known.issuperset(ms) for ms in joint_members)
        or int(sizes.sum()) > MAX_RECORDS
        or np.any(chunk_rows > sizes[cluster_of_chunk])
        or not strictly_increasing_rows(items, row_offsets)
        or not strictly_increasing_rows(term_items, term_offsets)
        or not rows_in_order(items, row_offsets, chunk_offsets)
    ):
        return None
    return ReleaseArrays(
        labels=labels,
        items=items,
        row_offsets=row_offsets,
        chunk_offsets=chunk_offsets,
        owner_offsets=owner_offsets,
        term_items=term_items,
        term_offsets=term_offsets,
        cluster_ids=tuple(cluster_ids),
        cluster_sizes=sizes,
        joint_ids=tuple(joint_ids),
        joint_members=joint_members,
        checked_canonical=True,
    )


def _records(body: bytes) -> ReleaseArrays | None:
    tokens = _Tokens.of(body)
    if tokens is None or _RECORDS.fullmatch(tokens.skeleton) is None:
        return None
    labels, codes = _distinct(body, tokens.start, tokens.end)
    items = frozen(codes, np.int32)
    row_offsets = _offsets(tokens.at, tokens.opens(2))
    everything = np.array([0, len(row_offsets) - 1], dtype=np.int64)
    if not strictly_increasing_rows(items, row_offsets) or not rows_in_order(items, row_offsets, everything):
        return None
    none = frozen([0], np.int64)
    return ReleaseArrays(
        labels=labels,
        items=items,
        row_offsets=row_offsets,
        chunk_offsets=none,
        owner_offsets=none,
        term_items=frozen([], np.int32),
        term_offsets=none,
        cluster_ids=(),
        cluster_sizes=frozen([], np.int64),
        joint_ids=(),
        joint_members=(),
        checked_canonical=True,
    )


def _distinct(body: bytes, start: Ints, end: Ints) -> tuple[tuple[str, ...], Codes]:
    """The distinct strings among ``body[start:end]`` in canonical order
    (:func:`privtool.dataset.label_sort_key`) and each occurrence's code (its
    rank). Each string is read as big-endian 8-byte words, zero-padded (labels
    hold no NUL: control bytes are refused), so strings compare as rows of
    unsigned integers."""
    if len(start) == 0:
        return (), np.empty(0, dtype=np.int32)
    padded = body + bytes(8)
    words = np.ndarray((len(body) + 1,), dtype=">u8", buffer=padded, strides=(1,))  # words[i]: bytes i..i+7
    lengths = end - start
    n_words = (lengths + 7) // 8
    if n_words.min() == n_words.max():  # the usual case: every label fits the same number of words
        by_words = np.arange(len(start))
    else:  # strings of different word counts differ: de-duplicate each count apart
        by_words = np.argsort(n_words, kind="stable")
    bounds = np.searchsorted(n_words[by_words], np.arange(int(n_words.max()) + 2))
    labels: list[str] = []
    inverse = np.empty(len(start), dtype=np.int64)
    for width in range(1, len(bounds) - 1):
        which = by_words[bounds[width] : bounds[width + 1]]
        if len(which) == 0:
            continue
        keys = np.empty((len(which), width), dtype=np.uint64)
        for j in range(width):
            left = np.clip(lengths[which] - 8 * j, 0, 8)
            keys[:, j] = words[np.minimum(start[which] + 8 * j, len(body))] & _PREFIX[left]
        unique, index = _unique_rows(keys)
        inverse[which] = index + len(labels)
        raw = np.ascontiguousarray(unique.astype(">u8")).view(f"S{8 * width}").ravel()
        labels.extend(label.decode("utf-8") for label in raw.tolist())
    order = sorted(range(len(labels)), key=list(map(label_sort_key, labels)).__getitem__)
    rank = np.empty(len(labels), dtype=np.int32)
    rank[order] = np.arange(len(labels), dtype=np.int32)
    return tuple(labels[i] for i in order), rank[inverse]


_PREFIX = np.array([((1 << (8 * n)) - 1) << (8 * (8 - n)) for n in range(9)], dtype=np.uint64)
"""``_PREFIX[n]`` keeps the first ``n`` bytes of a big-endian 8-byte word."""


def _unique_rows(words: npt.NDArray[np.uint64]) -> tuple[npt.NDArray[np.uint64], Ints]:
    """Distinct rows of a 2-d array of words in lexicographic order, and each
    row's index among them (integer sorts, much faster than sorting strings)."""
    if words.shape[1] == 1:
        unique, inverse = np.unique(words[:, 0], return_inverse=True)
        return unique[:, None], inverse
    order = np.lexsort(words.T[::-1])
    ordered = words[order]
    new = np.r_[True, np.any(ordered[1:] != ordered[:-1], axis=1)]
    inverse = np.empty(len(words), dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], inverse


# ---------------------------------------------------------------- writing
class _Pieces:
    """A table of byte strings (the *pieces*); a text is an array of piece numbers."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def add(self, *pieces: bytes) -> Ints:
        first = len(self.parts)
        self.parts.extend(pieces)
        return np.arange(first, len(self.parts), dtype=np.int64)

    def one(self, piece: bytes) -> int:
        return int(self.add(piece)[0])

    def text(self, ids: Ints) -> bytes:
        """The bytes of the pieces ``ids``, in order."""
        lengths = np.fromiter(map(len, self.parts), dtype=np.int64, count=len(self.parts))
        starts = np.cumsum(lengths) - lengths
        table = np.frombuffer(b"".join(self.parts), dtype=np.uint8)
        out = []
        for first in range(0, len(ids), 1 << 20):  # bounded index arrays on huge releases
            block = ids[first : first + (1 << 20)]
            n = lengths[block]
            to = np.cumsum(n) - n
            out.append(table[np.repeat(starts[block] - to, n) + np.arange(int(n.sum()))].tobytes())
        return b"".join(out)


def _join(
    ids: Ints,
    elements: Ints,
    groups: Ints,
    opening: int | Ints,
    separator: int,
    closing: int,
) -> tuple[Ints, Ints]:
    """Group consecutive elements: element ``e`` is ``ids[elements[e]:elements[e + 1]]``
    (the elements cover ``ids`` in order), group ``g`` holds the elements
    ``groups[g]:groups[g + 1]``. Returns the pieces of every group written as
    ``opening`` (one piece, or one per group), its elements separated by
    ``separator``, then ``closing``, and the groups' offsets into them."""
    n_groups = len(groups) - 1
    per_group = np.diff(groups)
    element_pieces = np.diff(elements)
    separated = np.ones(len(element_pieces), dtype=np.int64)  # 1 when a separator precedes the element
    separated[groups[:-1][per_group > 0]] = 0
    cum = np.zeros(len(element_pieces) + 1, dtype=np.int64)
    np.cumsum(element_pieces + separated, out=cum[1:])
    group_offsets = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(cum[groups[1:]] - cum[groups[:-1]] + 2, out=group_offsets[1:])
    out = np.empty(int(group_offsets[-1]), dtype=np.int64)
    out[group_offsets[:-1]] = opening
    out[group_offsets[1:] - 1] = closing
    group_of = np.repeat(np.arange(n_groups), per_group)
    element_at = group_offsets[group_of] + 1 + cum[:-1] - cum[groups[:-1]][group_of]
    out[element_at[separated == 1]] = separator
    out[np.repeat(element_at + separated - elements[:-1], element_pieces) + np.arange(len(ids))] = ids
    return out, group_offsets


def _take(ids: Ints, elements: Ints, order: Ints) -> tuple[Ints, Ints]:
    """The elements ``order`` (element ``e`` is ``ids[elements[e]:elements[e + 1]]``),
    one after another, and their offsets."""
    lengths = np.diff(elements)[order]
    offsets = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return ids[np.repeat(elements[order] - offsets[:-1], lengths) + np.arange(int(offsets[-1]))], offsets


def _json(value: Any) -> str:
    """``value`` as :func:`privtool.release.json_text` writes it."""
    if isinstance(value, str):
        return encode_basestring(value)  # what json.dumps(value, ensure_ascii=False) calls
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def canonical_bytes(envelope_text: str, kind: str, arrays: ReleaseArrays, hierarchy: Any) -> bytes:
    """The file of a release whose content ``arrays`` are canonical
    (:meth:`ReleaseArrays.is_canonical`): ``envelope_text`` is the file text of
    its :data:`ENVELOPE` object (:func:`privtool.release.json_text`), the
    content follows it, then the ``hierarchy`` of a generalized release."""
    pieces = _Pieces()
    pieces.add(*(_json(label).encode("utf-8") for label in arrays.labels))  # piece number = code
    bra, comma, ket, brace = (
        pieces.one(b"["),
        pieces.one(b","),
        pieces.one(b"]"),
        pieces.one(b"}"),
    )

    def singles(n: int) -> Ints:
        return np.arange(n + 1, dtype=np.int64)

    items = arrays.items.astype(np.int64)
    rows, row_at = _join(items, singles(len(items)), arrays.row_offsets, bra, comma, ket)
    if kind == "disassociated":
        chunks, chunk_at = _join(rows, row_at, arrays.chunk_offsets, bra, comma, ket)
        lists, list_at = _join(chunks, chunk_at, arrays.owner_offsets, bra, comma, ket)
        n, n_joint = arrays.n_clusters, arrays.n_joint_clusters
        terms, term_at = _join(
            arrays.term_items.astype(np.int64),
            singles(len(arrays.term_items)),
            arrays.term_offsets,
            bra,
            comma,
            ket,
        )
        # a cluster writes its chunk list (element c), then its term chunk (element n + n_joint + c)
        order = np.empty(2 * n, dtype=np.int64)
        order[0::2] = np.arange(n)
        order[1::2] = n + n_joint + np.arange(n)
        both, both_at = _take(
            np.concatenate([lists, terms]),
            np.concatenate([list_at, term_at[1:] + len(lists)]),
            order,
        )
        sizes = arrays.cluster_sizes.tolist()
        heads = pieces.add(  # every cluster but the first after a comma
            *(
                f'{"," if c else ""}{{"id":{_json(cid)},"size":{sizes[c]},"record_chunks":'.encode()
                for c, cid in enumerate(arrays.cluster_ids)
            )
        )
        clusters, _ = _join(
            both,
            both_at,
            np.arange(0, 2 * n + 1, 2),
            heads,
            pieces.one(b',"term_chunk":'),
            brace,
        )
        members = [",".join(map(_json, ms)) for ms in arrays.joint_members]
        joint_heads = pieces.add(
            *(
                f'{"," if j else ""}{{"id":{_json(jid)},"members":[{members[j]}],"shared_chunks":'.encode()
                for j, jid in enumerate(arrays.joint_ids)
            )
        )
        shared, shared_at = lists[list_at[n] :], list_at[n:] - list_at[n]
        joints, _ = _join(shared, shared_at, singles(n_joint), joint_heads, comma, brace)
        opening, middle = pieces.add(b'"clusters":[', b'],"joint_clusters":[')
        content = np.concatenate([[opening], clusters, [middle], joints, [ket]])
        tail = b""
    else:
        content, _ = _join(
            rows,
            row_at,
            np.array([0, arrays.n_rows]),
            pieces.one(b'"records":['),
            comma,
            ket,
        )
        tail = b',"hierarchy":' + _json(hierarchy).encode("utf-8") if kind == "generalized" else b""
    head = envelope_text.encode("utf-8")[: -len(b"}\n")]
    return b"".join((head, b",", pieces.text(content), tail, b"}\n"))
