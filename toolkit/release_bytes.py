"""Canonical release JSON read and written with numpy, without a Python object
per item occurrence (issue 20 item 2).

:func:`parse_canonical` understands exactly the layout :func:`canonical_bytes`
writes (the layout of :meth:`privtool.release.Release.dumps`): the envelope
first (``format`` ... ``stats``: small, parsed with :mod:`json`), then the
content with no whitespace, no escapes and every order canonical.
:class:`privtool.release_tokens.Content` cuts the content, block by block,
into value strings (each with its distinct number and the class of the gap
before it), *runs* of them (rows, chunks, flat lists) whose inside needs no
more checking, and a small *skeleton* (keys, brackets, sizes, one marker byte
per run), checked here by one regular expression, whose bracket depth places
every run (an id, a term chunk, members, rows). Only the distinct strings are
decoded and sorted. It returns ``None`` for anything it does not fully
understand or that is not valid; the caller then reads the file the
validating way (:func:`privtool.release.release_from_json`), which names the
problem. So nothing the validating path refuses gets through here.

:func:`canonical_bytes` assembles the file from canonical arrays as an array
of *pieces* (:class:`_Pieces`): one per item occurrence (its label with the
brackets and comma around it, pre-encoded per label), a few per chunk and
cluster, each placed by arithmetic on the CSR offsets, then copied out with
one fixed-width gather and scatter per piece length.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from json.encoder import encode_basestring
from typing import Any

import numpy as np
import numpy.typing as npt

from .arrays import concat_ranges, offsets_of, run_starts, unique_int
from .release_arrays import (
    SLICE,
    Ints,
    ReleaseArrays,
    frozen,
    rows_in_order,
    strictly_increasing_rows,
)
from .release_tokens import Content

ENVELOPE = ("format", "kind", "claims", "params", "provenance", "stats")
"""The keys before the content, in the order :meth:`privtool.release.Release.dumps` writes them."""

MAX_RECORDS = 2**31 - 1
"""Most records a release may hold (the sizes of its clusters add up to at most
this): far above any real release, low enough that record positions fit the
32-bit indexes of the attacks and metrics. Also :data:`privtool.release.MAX_RECORDS`."""

_CHUNK = rb"\[(?:\[[!@#%]\])?\]"
_CHUNKS = rb"\[(?:" + _CHUNK + rb"(?:," + _CHUNK + rb")*+)?\]"
_TERMS = rb"\[[!@]?\]"
_CLUSTER = rb'\{"id":!,"size":[1-9][0-9]{0,9},"record_chunks":' + _CHUNKS + rb',"term_chunk":' + _TERMS + rb"\}"
_JOINT = rb'\{"id":!,"members":\[[!@]\],"shared_chunks":' + _CHUNKS + rb"\}"
_DISASSOCIATED = re.compile(
    rb'"clusters":\[(?:' + _CLUSTER + rb"(?:," + _CLUSTER + rb")*+)?\]"
    rb',"joint_clusters":\[(?:' + _JOINT + rb"(?:," + _JOINT + rb")*+)?\]"
)
_RECORD = rb"\[[!@#]?\]"
_RECORDS = re.compile(rb'"records":\[(?:' + _RECORD + rb"(?:," + _RECORD + rb")*+)?\]")
"""Skeletons of the content (possessive repeats: the grammar never backtracks).
A run stands for what its marker allows where it stands: a cluster's id one
string, a term chunk or a member list a flat list, a chunk's content
``[[run]]`` one or more non-empty chunks of non-empty rows, a record's content
one or more non-empty records."""
_JOINTS = b'],"joint_clusters":['
_SIZE_AT = len(b'{"id":!,"size":')
"""Where a cluster's size starts in the skeleton, from its ``{``."""
_HIERARCHY = b'],"hierarchy":'


# ---------------------------------------------------------------- reading
def parse_canonical(data: bytes) -> tuple[dict[str, Any], ReleaseArrays, Any] | None:
    """``(envelope, content, hierarchy)`` of a release file in canonical layout:
    the JSON object of the :data:`ENVELOPE` keys (not validated here), the
    content's arrays (validated: everything :func:`privtool.release.release_from_json`
    checks of the content holds) and the parsed ``hierarchy`` of a generalized
    release (else ``None``). ``None`` when the bytes are not in canonical layout
    or anything in the content is invalid."""
    if b"\\" in data or not data.endswith(b"}\n") or np.frombuffer(data, dtype=np.uint8)[:-1].min() < 0x20:
        return None
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    clusters = data.find(b',"clusters":[')
    records = data.find(b',"records":[', 0, len(data) if clusters < 0 else clusters)  # the first of the two
    cut = clusters if records < 0 else records
    if cut < 0:
        return None
    try:
        envelope = json.loads(data[:cut] + b"}")
    except (
        ValueError,
        RecursionError,
    ):  # the cut was not at the top level, or the envelope is not JSON
        return None
    if not isinstance(envelope, dict) or tuple(envelope) != ENVELOPE:
        return None
    stop = len(data) - 2  # the content ends before the object's closing "}\n"
    kind, hierarchy = envelope["kind"], None
    if kind == "disassociated":
        arrays = _disassociated(Content.of(data, cut + 1, stop))
    elif kind in ("generalized", "sanitized"):
        if kind == "generalized":
            at = data.find(_HIERARCHY, cut, stop)
            if at < 0:
                return None
            try:
                hierarchy = json.loads(data[at + len(_HIERARCHY) : stop])
            except (ValueError, RecursionError):
                return None
            stop = at + 1
        arrays = _records(Content.of(data, cut + 1, stop))
    else:
        return None
    return None if arrays is None else (envelope, arrays, hierarchy)


def _offsets(counts_before: Ints, total: int) -> Ints:
    """CSR offsets: how many elements come before each group's opening, then ``total``."""
    out = np.empty(len(counts_before) + 1, dtype=np.int64)
    out[:-1] = counts_before
    out[-1] = total
    out.flags.writeable = False
    return out


def _opening_offsets(opens: npt.NDArray[np.bool_]) -> Ints:
    """CSR offsets of groups opened where ``opens`` is set (the first element
    opens one): the positions set, then ``len(opens)``, found a slice at a time
    (no int64 temporary as long as the offsets)."""
    out = np.empty(int(np.count_nonzero(opens)) + 1, dtype=np.int64)
    at = 0
    for a in range(0, len(opens), SLICE):
        found = np.flatnonzero(opens[a : a + SLICE])
        out[at : at + len(found)] = found + a
        at += len(found)
    out[-1] = len(opens)
    out.flags.writeable = False
    return out


def _per_run(flags: npt.NDArray[np.bool_], run_first: Ints) -> Ints:
    """How many ``flags`` are set in each run (runs start at ``run_first``, cover
    everything): counted by where the flags set fall, not by a sum in int64 over
    every flag."""
    at = np.flatnonzero(flags)
    return np.diff(np.searchsorted(at, run_first), append=len(at))


def _sizes(content: Content, opens: Ints) -> Ints:
    """The clusters' sizes, read from the skeleton after each ``{`` (the grammar
    checked: 1 to 10 digits, then ``,``)."""
    window = np.zeros((len(opens), 11), dtype=np.int64)
    skeleton = np.append(content.skeleton_bytes, np.zeros(11, dtype=np.uint8))
    window[:] = skeleton[(opens + _SIZE_AT)[:, None] + np.arange(11)]
    digit = (window >= ord("0")) & (window <= ord("9"))
    n_digits = np.argmin(digit, axis=1)
    power = n_digits[:, None] - 1 - np.arange(11)
    scale = np.where(power >= 0, 10 ** np.maximum(power, 0), 0)
    return frozen(((window - ord("0")) * scale).sum(axis=1), np.int64)


# what a run holds, by the depth of its marker (and whether it is in a joint cluster)
_ID, _JOINT_ID, _MEMBERS, _TERMS_RUN, _ROWS = 0, 1, 2, 3, 4


def _disassociated(content: Content | None) -> ReleaseArrays | None:
    if content is None or _DISASSOCIATED.fullmatch(content.skeleton) is None:
        return None
    joints_at = content.skeleton.find(_JOINTS)
    run_depth = content.level[content.marker_at]
    in_joint = content.marker_at > joints_at
    run_role = np.select(
        [run_depth == 2, run_depth == 3, run_depth == 5],
        [_ID + in_joint, np.where(in_joint, _MEMBERS, _TERMS_RUN), _ROWS],
    ).astype(np.uint8)
    role = np.repeat(run_role, content.run_length)  # of every value string
    in_rows = role == _ROWS
    item_numbers, item_gap = content.number[in_rows], content.gap[in_rows]
    del in_rows  # a release of millions of records: every array per string counts
    term_numbers = content.number[role == _TERMS_RUN]
    id_numbers, member_numbers = content.number[role <= _JOINT_ID], content.number[role == _MEMBERS]
    del role
    is_rows_run, first = run_role == _ROWS, content.run_first
    rows_per_run = np.where(is_rows_run, 1 + _per_run(content.gap >= 2, first), 0)
    breaks_per_run = np.where(is_rows_run, _per_run(content.gap == 3, first), 0)
    content.drop_strings()  # all that is needed of them is out
    labels, rank = content.labels(item_numbers, term_numbers)
    items, term_items = rank[item_numbers], rank[term_numbers]
    del item_numbers
    items.flags.writeable = term_items.flags.writeable = False

    # rows: every item after a gap other than ',' opens one (rows are never empty)
    row_offsets = _opening_offsets(item_gap != 1)
    row_starts = row_offsets[:-1]
    # chunks: opened in the skeleton (at depth 4) or by a ']],[[' inside a run
    chunk_opens = content.opens("[", 4)
    rows_before_chunk = np.concatenate(
        [
            offsets_of(rows_per_run)[content.runs_before(chunk_opens)],
            np.searchsorted(row_starts, np.flatnonzero(item_gap == 3)),
        ]
    )
    del row_starts, item_gap
    rows_before_chunk.sort(kind="stable")
    chunk_offsets = _offsets(rows_before_chunk, len(row_offsets) - 1)
    owner_opens = content.opens("{", 2)
    n_clusters = int(np.count_nonzero(owner_opens < joints_at))
    owner_runs = content.runs_before(owner_opens)
    owner_offsets = _offsets(
        np.searchsorted(chunk_opens, owner_opens) + offsets_of(breaks_per_run)[owner_runs], len(rows_before_chunk)
    )
    cluster_opens = owner_opens[:n_clusters]
    terms_per_run = np.where(run_role == _TERMS_RUN, content.run_length, 0)
    term_offsets = _offsets(offsets_of(terms_per_run)[owner_runs[:n_clusters]], len(term_items))

    # ids and members: by their distinct numbers; each decoded once
    names = content.names
    member_counts = content.run_length[run_role == _MEMBERS]
    is_cluster = np.zeros(len(names), dtype=bool)
    is_cluster[id_numbers[:n_clusters]] = True
    pairs = np.sort(np.repeat(np.arange(len(member_counts)), member_counts) * len(names) + member_numbers)
    cluster_ids, joint_ids, members = (
        names[part].tolist() for part in (id_numbers[:n_clusters], id_numbers[n_clusters:], member_numbers)
    )
    joint_members = tuple(tuple(members[a:b]) for a, b in itertools.pairwise(offsets_of(member_counts).tolist()))
    sizes = _sizes(content, cluster_opens)
    n_record_chunks = int(owner_offsets[n_clusters])
    chunk_rows = np.diff(chunk_offsets)[:n_record_chunks]
    cluster_of_chunk = np.repeat(np.arange(n_clusters), np.diff(owner_offsets[: n_clusters + 1]))
    if (
        np.count_nonzero(is_cluster) != n_clusters  # a cluster id repeated
        or np.any(is_cluster[id_numbers[n_clusters:]])  # a joint cluster's id is a cluster's
        or not np.all(is_cluster[member_numbers])  # a member is no cluster
        or np.any(pairs[1:] == pairs[:-1])  # a member repeated in a joint cluster
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


def _records(content: Content | None) -> ReleaseArrays | None:
    if content is None or _RECORDS.fullmatch(content.skeleton) is None:
        return None
    labels, rank = content.labels(content.number)
    items = rank[content.number]
    items.flags.writeable = False
    # records: a non-empty one opens at each item after a gap other than ','; an
    # empty one is a '[]' of the skeleton (at depth 2), after the runs before it
    row_offsets = _opening_offsets(content.gap != 1)
    content.drop_strings()
    opens = content.opens("[", 2)
    empty = opens[content.skeleton_bytes[opens + 1] == ord("]")]
    if len(empty):
        starts = np.concatenate([row_offsets[:-1], offsets_of(content.run_length)[content.runs_before(empty)]])
        row_offsets = _offsets(np.sort(starts), len(items))
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


# ---------------------------------------------------------------- writing
class _Pieces:
    """A table of byte strings (the *pieces*), added in batches joined at once;
    a text is an array of piece numbers (:meth:`text`)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.lengths: list[Ints] = []
        self.count = 0

    def joined(self, prefix: bytes, items: list[bytes], lengths: Ints, suffix: bytes = b"") -> int:
        """Add ``prefix + item + suffix`` for every item (``lengths``: the
        items' lengths) with one join; the number of the first."""
        first = self.count
        if items:
            self.parts.append(prefix + (suffix + prefix).join(items) + suffix)
            self.lengths.append(lengths + (len(prefix) + len(suffix)))
            self.count += len(items)
        return first

    def add(self, *pieces: bytes) -> int:
        """Add ``pieces``; the number of the first."""
        return self.joined(b"", list(pieces), np.array([len(piece) for piece in pieces], dtype=np.int64))

    def text(self, ids: Ints) -> bytes:
        """The bytes of the pieces ``ids``, in order: the pieces of each length
        are copied with one gather and one scatter of fixed-width elements."""
        table = b"".join(self.parts)
        lengths = np.concatenate(self.lengths)
        size = lengths[ids]
        source = offsets_of(lengths)[ids]
        end = np.cumsum(size)
        to = end - size
        out = np.empty(int(end[-1]), dtype=np.uint8)
        by_size = np.argsort(size.astype(np.uint16) if size.max() < 1 << 16 else size, kind="stable")  # radix
        cuts = np.append(run_starts(size[by_size]), len(size)).tolist()
        for a, b in itertools.pairwise(cuts):
            which = by_size[a:b]
            width = int(size[which[0]])
            into = np.ndarray((len(out) - width + 1,), dtype=f"V{width}", buffer=out, strides=(1,))
            come = np.ndarray((len(table) - width + 1,), dtype=f"V{width}", buffer=table, strides=(1,))
            into[to[which]] = come[source[which]]
        return out.tobytes()


ESCAPED = re.compile(r'[\x00-\x1f"\\]')
"""A character JSON escapes (:func:`json.encoder.encode_basestring`)."""


def _encoded(values: Sequence[str]) -> tuple[list[bytes], Ints]:
    """JSON strings of ``values`` as :func:`privtool.release.json_text` writes
    them, UTF-8 encoded, and their lengths. When no value needs an escape (the
    usual case) all are quoted and encoded at once and cut apart at a separator
    (``\\x00``, which no such value holds): no Python call per value."""
    if values and not ESCAPED.search("".join(values)):
        encoded = ('"' + '"\x00"'.join(values) + '"').encode("utf-8").split(b"\x00")
    else:
        encoded = [encode_basestring(value).encode("utf-8") for value in values]
    return encoded, np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))


def _firsts(offsets: Ints, n: int) -> npt.NDArray[np.bool_]:
    """Per element, whether it is the first of its group (``n`` elements cut by ``offsets``)."""
    first = np.zeros(n + 1, dtype=bool)
    first[offsets[:-1]] = True
    return first[:n]


def _listed(out: Ints, at: Ints, codes: npt.NDArray[np.integer], offsets: Ints, first: int, others: int) -> None:
    """Write lists of pieces into ``out``: list ``g`` (``codes`` cut by
    ``offsets``) from ``at[g]``, its first element piece ``first + code``, the
    others ``others + code`` (the code after a comma)."""
    codes = codes.astype(np.int64)
    codes += np.where(_firsts(offsets, len(codes)), first, others)
    out[concat_ranges(at, np.diff(offsets))] = codes


def _rows(
    out: Ints, pieces: _Pieces, arrays: ReleaseArrays, labels: tuple[list[bytes], Ints], row_at: Ints, group: Ints
) -> None:
    """Write the rows into ``out``: row ``r`` from ``row_at[r]``, one piece
    per item (its label, ``[`` before the first item of the first row of its
    group of rows, cut by ``group``, ``,[`` before the first item of the
    others, ``,`` before the others, ``]`` after the last); an empty row one
    piece (``[]`` or ``,[]``)."""
    n_labels = len(labels[0])
    first = pieces.joined(b"[", *labels)
    for prefix, suffix in ((b"[", b"]"), (b",[", b""), (b",[", b"]"), (b",", b""), (b",", b"]")):
        pieces.joined(prefix, *labels, suffix)  # kind k = 2 x (prefix) + (suffix): pieces first + k x n_labels
    counts = np.diff(arrays.row_offsets)
    starts, ends = arrays.row_offsets[:-1][counts > 0], arrays.row_offsets[1:][counts > 0]
    first_row = _firsts(group, arrays.n_rows)
    kind = np.full(len(arrays.items), 4, dtype=np.int64)
    kind[starts] = np.where(first_row[counts > 0], 0, 2)
    kind[ends - 1] += 1
    kind *= n_labels
    kind += arrays.items
    kind += first
    out[concat_ranges(row_at, counts)] = kind
    empty = np.flatnonzero(counts == 0)
    if len(empty):
        out[row_at[empty]] = pieces.add(b"[]", b",[]") + ~first_row[empty]


def _json(value: Any) -> str:
    """``value`` as :func:`privtool.release.json_text` writes it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def canonical_bytes(envelope_text: str, kind: str, arrays: ReleaseArrays, hierarchy: Any) -> bytes:
    """The file of a release whose content ``arrays`` are canonical
    (:meth:`ReleaseArrays.is_canonical`): ``envelope_text`` is the file text of
    its :data:`ENVELOPE` object (:func:`privtool.release.json_text`), the
    content follows it, then the ``hierarchy`` of a generalized release.

    The content is an array of piece numbers (:class:`_Pieces`): one piece per
    item occurrence (its label with the brackets and comma around it), a few
    per chunk and cluster; where each goes follows from the CSR offsets (how
    many pieces every row, chunk and cluster takes)."""
    pieces = _Pieces()
    labels = _encoded(arrays.labels)
    row_pieces = np.maximum(np.diff(arrays.row_offsets), 1)
    head = envelope_text.encode("utf-8")[: -len(b"}\n")]
    if kind != "disassociated":
        out = np.empty(2 + int(row_pieces.sum()), dtype=np.int64)
        out[0] = pieces.add(b'"records":[', b"]")
        out[-1] = out[0] + 1
        _rows(out, pieces, arrays, labels, 1 + offsets_of(row_pieces)[:-1], np.array([0, arrays.n_rows]))
        tail = b',"hierarchy":' + _json(hierarchy).encode("utf-8") if kind == "generalized" else b""
        return b"".join((head, b",", pieces.text(out), tail, b"}\n"))

    n, n_joint = arrays.n_clusters, arrays.n_joint_clusters
    chunks, owners = arrays.chunk_offsets, arrays.owner_offsets
    row_total = offsets_of(row_pieces)
    chunk_pieces = 2 + row_total[chunks[1:]] - row_total[chunks[:-1]]  # '[', its rows, ']'
    chunk_total = offsets_of(chunk_pieces)
    terms = np.diff(arrays.term_offsets)
    members, member_offsets = arrays.member_index
    # a cluster: its id, its size, its chunks, '],"term_chunk":[', its terms, ']}';
    # a joint cluster: its id, its members, '],"shared_chunks":[', its chunks, ']}'
    before = np.concatenate([np.full(n, 2), 2 + np.diff(member_offsets)])
    after = np.concatenate([2 + terms, np.ones(n_joint, dtype=np.int64)])
    owner_pieces = before + chunk_total[owners[1:]] - chunk_total[owners[:-1]] + after
    owner_at = (
        1 + offsets_of(owner_pieces)[:-1] + (np.arange(n + n_joint) >= n)
    )  # after '"clusters":[' (and '],"joint..')
    out = np.empty(3 + int(owner_pieces.sum()), dtype=np.int64)
    out[0] = pieces.add(b'"clusters":[', b'],"joint_clusters":[', b"]", b"[", b",[", b"]}")
    out[1 + owner_pieces[:n].sum()], out[-1] = out[0] + 1, out[0] + 2
    chunk_at = np.repeat(owner_at + before - chunk_total[owners[:-1]], np.diff(owners)) + chunk_total[:-1]
    row_at = np.repeat(chunk_at + 1 - row_total[chunks[:-1]], np.diff(chunks)) + row_total[:-1]
    _rows(out, pieces, arrays, labels, row_at, chunks)
    out[chunk_at] = out[0] + 3 + ~_firsts(owners, arrays.n_chunks)  # '[' or ',['
    out[chunk_at + chunk_pieces - 1] = out[0] + 2  # ']'
    out[owner_at + owner_pieces - 1] = out[0] + 5  # ']}'

    ids = _encoded(arrays.cluster_ids)
    cluster_at, joint_at = owner_at[:n], owner_at[n:]
    if n:
        out[cluster_at] = pieces.joined(b',{"id":', *ids, b',"size":') + np.arange(n)
        out[cluster_at[0]] = pieces.add(b'{"id":' + ids[0][0] + b',"size":')
        sizes = unique_int(arrays.cluster_sizes)
        size_of = np.searchsorted(sizes, arrays.cluster_sizes)
        size_text = [str(size).encode() for size in sizes.tolist()]
        lengths = np.array([len(text) for text in size_text], dtype=np.int64)
        out[cluster_at + 1] = pieces.joined(b"", size_text, lengths, b',"record_chunks":[') + size_of.reshape(-1)
        middle = cluster_at + owner_pieces[:n] - terms - 2
        out[middle] = pieces.add(b'],"term_chunk":[')
        _listed(
            out,
            middle + 1,
            arrays.term_items,
            arrays.term_offsets,
            pieces.joined(b"", *labels),
            pieces.joined(b",", *labels),
        )
    if n_joint:
        jids = _encoded(arrays.joint_ids)
        out[joint_at] = pieces.joined(b',{"id":', *jids, b',"members":[') + np.arange(n_joint)
        out[joint_at[0]] = pieces.add(b'{"id":' + jids[0][0] + b',"members":[')
        out[joint_at + 1 + np.diff(member_offsets)] = pieces.add(b'],"shared_chunks":[')
        names, lengths = ids
        unknown = np.flatnonzero(members < 0)  # only an in-memory release can name a cluster it does not have
        if len(unknown):
            flat = [name for ms in arrays.joint_members for name in ms]
            extra, extra_lengths = _encoded([flat[i] for i in unknown.tolist()])
            names, lengths = names + extra, np.concatenate([lengths, extra_lengths])
            members = members.copy()
            members[unknown] = n + np.arange(len(unknown))
        first, others = pieces.joined(b"", names, lengths), pieces.joined(b",", names, lengths)
        _listed(out, joint_at + 1, members, member_offsets, first, others)
    return b"".join((head, b",", pieces.text(out), b"}\n"))
