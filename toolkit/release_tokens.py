"""The content of a canonical release file cut into value strings, *runs* and a
*skeleton*, block by block (issue 20: a 5,000,000-record release read within
about 4x its size).

With nothing escaped every ``"`` delimits a string, so the strings are the
pairs of quote positions. The 8 bytes after each string's closing quote, read
as one word, say whether a *value* string (one not followed by ``:``) follows
behind ``,``, ``],[`` or ``]],[[``: value strings joined that way form runs
(rows, chunks, flat lists) whose inside needs no more checking; everything else
(keys, brackets, sizes, with one marker byte per run) forms the skeleton, which
the caller checks with a regular expression.

The bytes are tokenised in blocks of about :data:`BLOCK` bytes, each cut just
after a closing quote, so that quote positions (int64, any file size) only
exist for one block at a time, and the temporaries of a block are small enough
to stay in the cache and in the allocator's heap (fresh pages cost a fault
each). What is kept per value string is one byte (the class of the gap before
it) and one int32 (its *distinct number*: equal strings get equal numbers,
found by hashing their 8-byte words per block, :func:`_hash_distinct`, then
across blocks, :func:`_joined`); per run, its first string and where its
marker stands. A release with more than 2**31 - 1 value strings cannot be
numbered in int32 and is refused (:class:`privtool.errors.InputError`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from .arrays import concat_ranges, run_starts
from .dataset import label_sort_key
from .errors import InputError
from .release_arrays import Codes, Ints

BLOCK = 1 << 19
"""Bytes tokenised at a time (512 KiB: about 57,000 strings of a bms release)."""

MERGE_ROWS = 1 << 18
"""Distinct strings (counted per block) that the blocks read since the last
merge may hold before they are numbered across as one (:func:`_joined`): the
strings repeated from block to block are kept once, not once per block."""

MAX_STRINGS = 2**31 - 1
"""Most value strings a release file may hold: their distinct numbers are int32."""

_MARKERS = np.frombuffer(b"!@#%", dtype=np.uint8)
"""Skeleton byte of a *run* (value strings joined by common gaps), by the
deepest gap inside it: one string; strings joined by ``,`` only (one flat
list); by ``],[`` too (rows of one chunk, or records); by ``]],[[`` too (rows
of several chunks)."""
_COMMA, _NEXT_ROW, _NEXT_CHUNK = (int.from_bytes(gap, "little") for gap in (b',"', b'],["', b"]],["))
_NEXT_CHUNK_END = int.from_bytes(b'["', "little")
"""The gaps between two value strings that a run may hold, followed by the
next string's opening quote, as little-endian words: ``,`` (class 1), ``],[``
(class 2), ``]],[[`` (class 3, in two parts); any other gap is class 0, ends
the run and stays in the skeleton."""

_QUOTE, _COLON = ord('"'), ord(":")
_DEPTH = np.zeros(256, dtype=np.int8)
_DEPTH[[ord("["), ord("{")]] = 1
_DEPTH[[ord("]"), ord("}")]] = -1

_LOW = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)
"""``_LOW[n]`` keeps the first ``n`` bytes of a little-endian 8-byte word."""

_HASHES = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93, 0xFF51AFD7ED558CCD)
"""Odd multipliers of the rounds of :func:`_hash_distinct`, one per round."""

Words = npt.NDArray[np.uint64]
Groups = list[tuple[int, Words]]
"""Distinct strings as rows of little-endian words (NUL-padded), one array per
word count, ascending: their numbers run group after group."""


class _Block(NamedTuple):
    """What one block of strings (or consecutive blocks numbered as one) leaves
    behind besides each value string's gap and number (numbered within the
    block): ``n_values`` value strings, the distinct ones as ``groups``; per run
    starting in it, its first value string (``run_first``) and the position of
    its opening quote (``first_at``); the value strings that may end a run
    (``last_candidates``) and the positions of their closing quotes (``last_at``)."""

    n_values: int
    groups: Groups
    run_first: Ints
    first_at: Ints
    last_candidates: Ints
    last_at: Ints

    @property
    def n_distinct(self) -> int:
        """How many distinct strings the block holds."""
        return sum(len(rows) for _, rows in self.groups)


class _Words:
    """The little-endian 8-byte words of a buffer from any of its positions, the
    bytes past its end read as 0 (a padded copy of its last 7 bytes, not of the
    buffer)."""

    def __init__(self, data: bytes) -> None:
        self.inside = max(len(data) - 7, 0)
        self.main: Words = np.ndarray((self.inside,), dtype="<u8", buffer=data, strides=(1,))
        tail = data[self.inside :] + bytes(8)
        self.tail: Words = np.ndarray((len(tail) - 7,), dtype="<u8", buffer=tail, strides=(1,))

    def at(self, positions: Ints, shift: int = 0) -> Words:
        """The words from ``positions + shift`` (``positions`` ascending, every
        ``positions + shift`` within the buffer), a fresh array."""
        inside = self.inside - shift
        if len(positions) == 0 or positions[-1] < inside:
            return self.main[shift:][positions]
        cut = int(np.searchsorted(positions, inside))
        out = np.empty(len(positions), dtype=np.uint64)
        out[:cut] = self.main[shift:][positions[:cut]]
        out[cut:] = self.tail[positions[cut:] - inside]
        return out


class Content:
    """A content region as value strings, runs and a skeleton.

    Per value string, in order: ``gap`` (the class of the gap before it, 0 when
    it opens a run) and ``number`` (its distinct number; ``names[number]`` is
    the string, ``names`` an array of str objects, ``groups`` the distinct
    strings as words). Per run:
    ``run_first`` (its first value string), ``run_length``, ``marker_at`` (where
    its marker is in the skeleton). ``skeleton`` (bytes and ``skeleton_bytes``)
    and ``level``, the bracket depth after each skeleton byte."""

    def __init__(
        self, data: bytes, first: int, stop: int, gap: npt.NDArray[np.uint8], number: Codes, block: _Block
    ) -> None:
        """The content ``data[first:stop]`` as one block (its blocks joined,
        :func:`_joined`) and the value strings' ``gap`` and ``number``."""
        self.gap, self.number = gap, number
        self.groups = block.groups
        # the distinct strings hold no NUL (control bytes are refused): one decode
        encoded = [
            name
            for _, rows in self.groups
            for name in np.ascontiguousarray(rows).view(f"S{8 * rows.shape[1]}").ravel().tolist()
        ]
        self.names: npt.NDArray[np.object_] = np.array(
            b"\0".join(encoded).decode("utf-8").split("\0") if encoded else [], dtype=object
        )
        self.run_first, first_at = block.run_first, block.first_at
        candidates, last_at = block.last_candidates, block.last_at
        run_last = np.append(self.run_first[1:], len(self.gap))[: len(self.run_first)] - 1
        self.run_length = run_last - self.run_first + 1
        # a run's first gap is 0, the others 1 to 3: its deepest picks its marker
        deepest = np.maximum.reduceat(self.gap, self.run_first) if len(self.run_first) else self.gap[:0]
        kept_from = np.empty(len(self.run_first) + 1, dtype=np.int64)
        kept_to = np.empty(len(self.run_first) + 1, dtype=np.int64)
        kept_from[0], kept_from[1:] = first, last_at[np.searchsorted(candidates, run_last)] + 1
        kept_to[:-1], kept_to[-1] = first_at + 1, stop  # up to and with a run's opening quote
        lengths = kept_to - kept_from
        skeleton = np.frombuffer(data, dtype=np.uint8)[concat_ranges(kept_from, lengths)]
        self.marker_at = np.cumsum(lengths[:-1]) - 1
        skeleton[self.marker_at] = _MARKERS[deepest]
        self.skeleton_bytes, self.skeleton = skeleton, skeleton.tobytes()
        self.level = np.cumsum(_DEPTH[skeleton], dtype=np.int32)

    @classmethod
    def of(cls, data: bytes, first: int, stop: int) -> Content | None:
        """The content ``data[first:stop]``, or ``None`` when its strings cannot be
        those of a canonical file (odd quotes, an empty value string)."""
        raw, words = np.frombuffer(data, dtype=np.uint8), _Words(data)
        carry, n_values = 0, 0
        # room for every value string (each takes 3 bytes at least); pages never
        # written take no memory, and no block's arrays stay behind in the heap
        bound = (stop - first) // 3 + 1
        gap, number = np.empty(bound, dtype=np.uint8), np.empty(bound, dtype=np.int32)
        joined: list[_Block] = []  # blocks numbered across, since the first
        pending: list[_Block] = []  # blocks read since, from value string ``since``
        since = 0
        at = first
        while not (joined or pending) or at < stop:  # one block at least, perhaps empty
            end = min(at + BLOCK, stop)
            quotes = np.flatnonzero(raw[at:end] == _QUOTE)
            if len(quotes) % 2:  # a string crosses the cut: the block ends after its closing quote
                closing = data.find(b'"', end, stop)
                if closing < 0:
                    return None
                quotes, end = np.append(quotes, closing - at), closing + 1
            quotes += at
            tokens = _tokens(words, quotes, carry, pending[-1].n_distinct if pending else MAX_STRINGS)
            if tokens is None:
                return None
            block, gap_of, number_of, carry = tokens
            if n_values + block.n_values > MAX_STRINGS:
                raise InputError(f"the release holds more than {MAX_STRINGS:,} strings, more than privtool can number")
            gap[n_values : n_values + block.n_values], number[n_values : n_values + block.n_values] = gap_of, number_of
            n_values += block.n_values
            pending.append(block)
            if sum(block.n_distinct for block in pending) >= MERGE_ROWS:
                joined.append(_joined(pending, number[since:n_values]))
                pending, since = [], n_values
            at = end
        return cls(data, first, stop, gap[:n_values], number[:n_values], _joined(joined + pending, number[:n_values]))

    def drop_strings(self) -> None:
        """Let go of the per value string arrays (``gap``, ``number``: on a
        release of millions of records, hundreds of MB) once the caller has
        taken what it needs of them."""
        self.gap, self.number = self.gap[:0], self.number[:0]

    def runs_before(self, at: Ints) -> Ints:
        """Number of runs whose marker is before each skeleton position ``at``."""
        return np.searchsorted(self.marker_at, at)

    def opens(self, byte: str, level: int) -> Ints:
        """Skeleton positions of the brackets ``byte`` that open ``level``."""
        at = np.flatnonzero(self.skeleton_bytes == ord(byte))
        return at[self.level[at] == level]

    def labels(self, *numbers: Codes) -> tuple[tuple[str, ...], Codes]:
        """The distinct strings among ``numbers`` (distinct numbers of value
        strings) as labels in canonical order (:func:`privtool.dataset.label_sort_key`),
        and per distinct number its label's rank (meaningless for the numbers
        not given): ``rank[numbers]`` are the item codes."""
        used = np.zeros(len(self.names), dtype=bool)
        for some in numbers:
            used[some] = True
        groups, cut = [], 0
        for _, rows in self.groups:
            groups.append(rows[used[cut : cut + len(rows)]])
            cut += len(rows)
        which = np.flatnonzero(used)
        order = _canonical_order(groups)
        if order is None:
            keys = [label_sort_key(name) for name in self.names[which].tolist()]
            order = np.array(sorted(range(len(which)), key=keys.__getitem__), dtype=np.int64)
        rank = np.zeros(len(self.names), dtype=np.int32)
        rank[which[order]] = np.arange(len(which), dtype=np.int32)
        return tuple(self.names[which[order]].tolist()), rank


def _tokens(
    words: _Words, quotes: Ints, carry: int, expected: int
) -> tuple[_Block, npt.NDArray[np.uint8], Codes, int] | None:
    """The strings of one block: ``quotes`` (an even number) are the positions
    of their quotes in the buffer of ``words``, ``carry`` the class of the gap
    after the previous block's last string, ``expected`` about how many distinct
    strings it holds (:func:`_hash_distinct`). The block, its value strings'
    gaps and numbers, and the class of the gap after its last string; ``None``
    when a value string is empty."""
    opening, closing = quotes[0::2], quotes[1::2]
    after = words.at(closing, 1)  # the 8 bytes after each string (little-endian: the first is the lowest)
    two, four = after.view(np.uint16), after.view(np.uint32)
    value = after.view(np.uint8)[0::8] != _COLON
    # the class of the gap after each string, when another string follows it: the
    # gap and the next quote are the lowest bytes (after a key, ':': class 0)
    gap = np.empty(len(after) + 1, dtype=np.uint8)
    gap[0] = carry
    gap[1:] = (two[0::4] == _COMMA).view(np.uint8)
    gap[1:] |= (four[0::2] == _NEXT_ROW).view(np.uint8) << 1
    gap[1:] |= ((four[0::2] == _NEXT_CHUNK) & (two[2::4] == _NEXT_CHUNK_END)).view(np.uint8) * np.uint8(3)
    carry = int(gap[-1])
    gap = gap[:-1][value]  # per value string, the gap before it: a key's class is 0
    opening, closing = opening[value], closing[value]
    del after, two, four, value
    run_first = np.flatnonzero(gap == 0)
    # a run ends before the next one starts (the first may have started in an
    # earlier block); the block's last value string may end one too
    ends = np.append(run_first, len(gap)) - 1
    last_candidates = ends[ends >= 0]
    first_at, last_at = opening[run_first], closing[last_candidates]
    lengths = np.subtract(closing, opening, out=closing)
    lengths -= 1
    local = _local_distinct(words, opening, lengths, expected)
    if local is None:
        return None
    numbers, groups = local
    return _Block(len(gap), groups, run_first, first_at, last_candidates, last_at), gap, numbers, carry


def _local_distinct(words: _Words, opening: Ints, lengths: Ints, expected: int) -> tuple[Codes, Groups] | None:
    """The distinct strings among those after the quotes at ``opening`` with
    ``lengths`` (positions in the buffer of ``words``, ascending): each string's
    number (int32) and the distinct strings by word count. Each string is read
    as words, the bytes past its end zeroed (strings hold no NUL: control bytes
    are refused); strings of each word count are de-duplicated apart
    (:func:`_hash_distinct`, ``expected`` distinct strings). ``None`` when a
    string is empty."""
    if len(opening) == 0:
        return np.zeros(0, dtype=np.int32), []
    if int(lengths.min()) == 0:  # an empty label or id: refused, let the validating path say where
        return None
    widths = (int(lengths.min()) + 7) >> 3, (int(lengths.max()) + 7) >> 3
    if widths[0] == widths[1]:  # the usual case: every string fits the same number of words
        parts: list[tuple[int, Ints | None]] = [(widths[0], None)]
    else:
        n_words = (lengths + 7) >> 3
        by_words = np.argsort(n_words.astype(np.uint16) if widths[1] < 1 << 16 else n_words, kind="stable")
        cuts = np.append(run_starts(n_words[by_words]), len(opening)).tolist()
        parts = [(int(n_words[by_words[a]]), by_words[a:b]) for a, b in itertools.pairwise(cuts)]
    if len(parts) == 1:  # every string one width: numbered in place, no copies
        width, _ = parts[0]
        number, distinct = _hash_distinct(_keys(words, opening, lengths, width), expected)
        return number, [(width, distinct)]
    number = np.empty(len(opening), dtype=np.int32)
    groups: Groups = []
    n_found = 0
    for width, which in parts:
        numbers, distinct = _hash_distinct(_keys(words, opening[which], lengths[which], width), expected)
        numbers += n_found
        number[which] = numbers
        groups.append((width, distinct))
        n_found += len(distinct)
    return number, groups


def _keys(words: _Words, opening: Ints, lengths: Ints, width: int) -> Words:
    """The strings after the quotes at ``opening`` with ``lengths`` (all of
    ``width`` words) as rows of ``width`` words, the bytes past each string's
    end zeroed."""
    last = words.at(opening, 1 + 8 * (width - 1))
    last &= _LOW[lengths - 8 * (width - 1) if width > 1 else lengths]
    if width == 1:
        return last.reshape(-1, 1)
    keys = np.empty((len(opening), width), dtype=np.uint64)
    for j in range(width - 1):
        keys[:, j] = words.at(opening, 1 + 8 * j)
    keys[:, -1] = last
    return keys


def _joined(blocks: list[_Block], number: Codes) -> _Block:
    """Consecutive blocks (one at least) as one: ``number`` (the numbers of their
    value strings, block after block, each numbered within its block) is
    renumbered across them in place (the distinct strings of each word count
    de-duplicated again), and their runs follow one another."""
    if len(blocks) == 1:
        return blocks[0]
    counts = np.cumsum([0] + [block.n_values for block in blocks])
    return _Block(
        int(counts[-1]),
        _merged(number, blocks),
        np.concatenate([block.run_first + at for block, at in zip(blocks, counts, strict=False)]),
        np.concatenate([block.first_at for block in blocks]),
        np.concatenate([block.last_candidates + at for block, at in zip(blocks, counts, strict=False)]),
        np.concatenate([block.last_at for block in blocks]),
    )


def _merged(number: Codes, blocks: list[_Block]) -> Groups:
    """Renumber the value strings of every block (``number``, block after block,
    each numbered within its block) across blocks, in place: the distinct
    strings of each word count are de-duplicated again. The distinct strings by
    word count."""
    by_width: dict[int, list[Words]] = {}
    for block in blocks:
        for width, rows in block.groups:
            by_width.setdefault(width, []).append(rows)
    base, groups = 0, []
    merged: dict[int, Iterator[Ints]] = {}
    for width in sorted(by_width):
        numbers, distinct = _hash_distinct(np.concatenate(by_width[width]))
        merged[width] = iter(np.split(numbers + base, np.cumsum([len(rows) for rows in by_width[width]])[:-1]))
        groups.append((width, distinct))
        base += len(distinct)
    at = 0
    for block in blocks:
        renumber = np.concatenate([next(merged[width]) for width, _ in block.groups] or [np.zeros(0, np.int32)])
        number[at : at + block.n_values] = renumber[number[at : at + block.n_values]]
        at += block.n_values
    return groups


def _hash_distinct(keys: Words, expected: int = MAX_STRINGS) -> tuple[Codes, Words]:
    """The distinct rows of ``keys`` (a 2-d array of words, the first word of
    every row non-zero), without sorting: each row's distinct number, and the
    distinct rows by number.

    Each round hashes the rows still unresolved into a table of rows
    (multiplicative hashing, one multiplier per round): one of the rows written
    to a slot stays there, and every row equal to its slot's is resolved (numbered by its slot among the slots filled);
    the rows that met another key in their slot go to the next round. Rows left
    after the rounds (adversarial keys) go through :func:`numpy.unique`. The
    first table has 4x to 8x as many slots as ``expected`` distinct rows (or as
    rows), 2**16 at most; each next one 8x as many as the one before, or, when
    that is fewer, as many as the first table would have for the rows left;
    never more than 8x the rows left. Numbers are int32 (at most
    :data:`MAX_STRINGS` rows)."""
    n, width = keys.shape
    hashed = keys[:, 0]
    for j in range(1, width):
        hashed = (hashed * np.uint64(_HASHES[-1])) ^ keys[:, j]
    flat = keys[:, 0] if width == 1 else keys  # one word a row: 1-d gathers and scatters, much faster
    number = np.empty(n, dtype=np.int32)
    found: list[Words] = []
    n_found = 0
    left: Ints | None = None  # the rows not resolved yet; None: every row (the first round, no gathers)
    bits = min(16, 2 + min(expected, n).bit_length())
    for multiplier in _HASHES:
        rows = flat if left is None else flat[left]
        bits = min(bits, 2 + len(rows).bit_length())
        slot = (hashed if left is None else hashed[left]) * np.uint64(multiplier)
        slot >>= np.uint64(64 - bits)
        slots = slot.view(np.int64)  # below 2**bits
        table = np.zeros((1 << bits, *rows.shape[1:]), dtype=np.uint64)
        table[slots] = rows
        filled = np.flatnonzero(table if width == 1 else table[:, 0])
        numbering = np.empty(1 << bits, dtype=np.int32)  # read only at the slots filled
        numbering[filled] = np.arange(n_found, n_found + len(filled), dtype=np.int32)
        if left is None:  # right for the rows resolved, rewritten later for the others
            np.take(numbering, slots, out=number)
        else:
            number[left] = numbering[slots]
        same = table[slots] == rows
        unresolved = np.flatnonzero(~same if width == 1 else ~same.all(axis=1))
        found.append(table[filled].reshape(-1, width))
        n_found += len(filled)
        left = unresolved if left is None else left[unresolved]
        bits = max(bits + 3, min(16, 2 + len(left).bit_length()))
        if len(left) == 0:
            return number, np.concatenate(found)
    assert left is not None
    distinct, inverse = np.unique(keys[left], axis=0, return_inverse=True)
    number[left] = n_found + inverse.reshape(-1)
    return number, np.concatenate([*found, distinct])


def _canonical_order(groups: list[Words]) -> Ints | None:
    """The canonical order (:func:`privtool.dataset.label_sort_key`) of distinct
    labels given as rows of little-endian words, NUL-padded, group after group,
    found with integer sorts: ASCII digit strings first, by value then as text,
    then the others as text (UTF-8 byte order is code point order). ``None``
    (sort them in Python) when a label is longer than 32 bytes or a digit
    string longer than 18."""
    width = max((group.shape[1] for group in groups), default=1)
    if width > 4:
        return None
    words = np.zeros((sum(map(len, groups)), width), dtype=np.uint64)
    at = 0
    for group in groups:
        words[at : at + len(group), : group.shape[1]] = group
        at += len(group)
    raw = words.view(np.uint8)  # the labels' bytes, each row NUL-padded
    present = raw != 0
    numeric = np.all(((raw >= ord("0")) & (raw <= ord("9"))) | ~present, axis=1)
    if raw.shape[1] > 18 and np.any(numeric & present[:, 18]):
        return None
    value = np.zeros(len(raw), dtype=np.int64)
    for column in range(min(raw.shape[1], 18)):
        value = np.where(present[:, column], value * 10 + raw[:, column] - ord("0"), value)
    value[~numeric] = 0
    big = words.byteswap()  # as big-endian words, integer order is byte order
    return np.lexsort([*(big[:, j] for j in reversed(range(width))), value, ~numeric])
