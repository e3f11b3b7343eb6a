"""The trail's ``cluster_of_record`` as arrays (issue 20: not one Python string
per input record).

:class:`RecordClusters` holds the distinct cluster names once and one int32
code per record (-1 for a suppressed record, ``null`` in the file). It is a
read-only sequence of ``str | None`` for the code that walks a small trail,
and consumers of large trails read :attr:`RecordClusters.names` and
:attr:`RecordClusters.codes`. :meth:`RecordClusters.json_text` writes the JSON
array exactly as ``json.dumps(list, ensure_ascii=False, separators=(",", ":"))``
does, and :func:`parse_json_array` reads such an array back from a file's
bytes without decoding a string per record (it declines, returning ``None``,
on anything but plain strings and nulls, so the caller parses the file the
ordinary way).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

import numpy as np

from .release_arrays import Codes


class RecordClusters(Sequence[str | None]):
    """Per input record, its cluster's name or ``None`` (see the module doc).
    ``codes[i]`` indexes ``names`` (-1: ``None``); names need not all be used."""

    __slots__ = ("codes", "names")

    def __init__(self, names: Sequence[str], codes: Codes) -> None:
        self.names = tuple(names)
        self.codes = np.asarray(codes, dtype=np.int32)
        self.codes.flags.writeable = False

    @classmethod
    def from_list(cls, values: Iterable[str | None]) -> RecordClusters:
        """Code a list of names and ``None`` (names in order of first appearance)."""
        if isinstance(values, RecordClusters):
            return values
        index: dict[str | None, int] = {None: -1}
        codes = np.fromiter((index.setdefault(v, len(index) - 1) for v in values), dtype=np.int32)
        return cls([n for n in index if n is not None], codes)

    def __len__(self) -> int:
        return len(self.codes)

    @overload
    def __getitem__(self, index: int) -> str | None: ...

    @overload
    def __getitem__(self, index: slice) -> list[str | None]: ...

    def __getitem__(self, index: int | slice) -> str | list[str | None] | None:
        if isinstance(index, slice):
            return self._decoded(self.codes[index])
        code = int(self.codes[index])
        return None if code < 0 else self.names[code]

    def __iter__(self) -> Iterator[str | None]:
        return iter(self.tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RecordClusters):
            return self.tolist() == other.tolist()
        if isinstance(other, Sequence) and not isinstance(other, str):
            return self.tolist() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RecordClusters({len(self.names)} names, {len(self)} records)"

    def _decoded(self, codes: Codes) -> list[str | None]:
        table = np.array([*self.names, None], dtype=object)  # code -1 is the last entry
        return table[codes].tolist() if len(codes) else []

    def tolist(self) -> list[str | None]:
        """The names as a list (one reference per record: for small trails)."""
        return self._decoded(self.codes)

    def json_text(self) -> str:
        """The JSON array, as ``json.dumps(self.tolist(), ensure_ascii=False, separators=(",", ":"))``."""
        if not len(self.codes):
            return "[]"
        pieces = np.array([json.dumps(n, ensure_ascii=False) for n in self.names] + ["null"], dtype=object)
        return "[" + ",".join(pieces[self.codes].tolist()) + "]"


def parse_json_array(data: bytes, start: int) -> tuple[RecordClusters, int] | None:
    """The array of plain strings and nulls opening at ``data[start]`` (``[``)
    and the position just after it, or ``None`` when it holds anything else
    (an escape, a control character, white space, another value, text that is
    not UTF-8), which the caller then parses as JSON."""
    if data[start : start + 1] != b"[":
        return None
    view = np.frombuffer(data, dtype=np.uint8)[start + 1 :]
    # The end: the first ] outside a string (the parity of the quotes before it
    # tells, as long as no backslash comes first).
    quotes = np.flatnonzero(view == ord('"'))
    closers = np.flatnonzero(view == ord("]"))
    outside = closers[np.searchsorted(quotes, closers) % 2 == 0]
    if not len(outside):
        return None
    end = int(outside[0])
    if end == 0:
        return RecordClusters((), np.zeros(0, dtype=np.int32)), start + 2
    escape = data.find(b"\\", start)
    if 0 <= escape < start + 1 + end:
        return None
    quotes = quotes[quotes < end]
    opens, closes = quotes[0::2], quotes[1::2]
    if np.any(closes[:-1] + 1 == opens[1:]):  # two strings without a comma between them
        return None
    marks = np.zeros(end + 1, dtype=np.int8)
    marks[opens], marks[closes + 1] = 1, -1
    # a string, its quotes included; the marks alternate, so the running sum is 0 or 1 (int8, not int64)
    quoted = np.cumsum(marks[:end], dtype=np.int8) > 0
    if np.any(view[:end][quoted] < 0x20):
        return None
    skeleton = view[:end].copy()
    skeleton[opens] = ord("S")
    quoted[opens] = False
    tokens = np.frombuffer(skeleton[~quoted].tobytes().replace(b"null", b"N"), dtype=np.uint8)
    values = tokens[0::2]
    if (
        len(tokens) % 2 == 0
        or np.any(tokens[1::2] != ord(","))
        or not np.all((values == ord("S")) | (values == ord("N")))
    ):
        return None
    names = _distinct_strings(view, opens + 1, closes)
    if names is None:
        return None
    codes = np.full(len(values), -1, dtype=np.int32)
    codes[values == ord("S")] = names[1]
    return RecordClusters(names[0], codes), start + 2 + end


def _distinct_strings(view: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[list[str], Codes] | None:
    """The distinct strings ``view[starts[i]:ends[i]]`` (no NUL byte in any),
    decoded from UTF-8 in byte order, and each string's index among them;
    ``None`` if one is not UTF-8."""
    lengths = ends - starts
    words = max(1, -(-int(lengths.max(initial=0)) // 8))
    padded = np.zeros((len(starts), words * 8), dtype=np.uint8)  # NUL-padded: no string holds one
    for column in range(int(lengths.max(initial=0))):
        has = np.flatnonzero(lengths > column)
        padded[has, column] = view[starts[has] + column]
    keys = padded.view(">u8")  # big-endian words sort like the bytes
    order = np.lexsort(keys.T[::-1])
    ranked = keys[order]
    new = np.r_[True, np.any(ranked[1:] != ranked[:-1], axis=1)] if len(order) else np.zeros(0, dtype=bool)
    codes = np.empty(len(order), dtype=np.int32)
    codes[order] = np.cumsum(new) - 1
    try:
        names = [view[starts[i] : ends[i]].tobytes().decode("utf-8") for i in order[new].tolist()]
    except UnicodeDecodeError:
        return None
    return names, codes
