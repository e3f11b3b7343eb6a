"""Vectorised tokenizer for text made of integers separated by whitespace.

FIMI and SPMF files are lines of integer tokens. Splitting them in Python costs
one object per token; here the raw bytes are viewed as a ``uint8`` array and
the tokens are found and evaluated with numpy: digit runs are located from the
positions of digit bytes, each digit is weighted by the power of ten of its
place in the run, and ``np.add.reduceat`` sums each run. The file is cut at line
ends into blocks of about :data:`BLOCK_BYTES`, so temporary arrays stay a small
multiple of one block whatever the file size.

Whitespace is space, tab, CR and LF; lines end at LF, CRLF or a lone CR, as in
every text format (:func:`unify_line_ends` turns the last two into LF first). A
token is ``-?[0-9]{1,18}`` (but not ``-0``); anything else raises an :class:`InputError` naming
the line and the offending token.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privtool.errors import InputError

BLOCK_BYTES = 1 << 18
_INT32_LIMIT = 2**31
MAX_DIGITS = 18
_POW10 = 10 ** np.arange(MAX_DIGITS, dtype=np.int64)
_NEWLINE, _SPACE, _TAB, _CR, _MINUS, _ZERO = 10, 32, 9, 13, 45, 48


@dataclass(frozen=True)
class IntTokens:
    """Every token of a file in order: its ``value`` and 0-based ``line``
    (``int32`` arrays unless a value or line number needs ``int64``);
    ``n_lines`` counts the lines (a last line without LF included)."""

    values: np.ndarray
    lines: np.ndarray
    n_lines: int


def count_lines(data: bytes) -> int:
    """Lines of ``data``: LF count, plus one for a last line without LF."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def unify_line_ends(data: bytes) -> bytes:
    """``data`` with every CRLF and lone CR turned into LF (a copy only when the
    data holds a CR)."""
    if b"\r" not in data:
        return data
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def tokenize(data: bytes, source: str, allow_negative: bool = True) -> IntTokens:
    """All integer tokens of ``data``; see the module docstring for the grammar.
    Without ``allow_negative`` a ``-`` sign is an error too. The error names the
    first offending token of the file."""
    data = unify_line_ends(data)
    values: list[np.ndarray] = []
    lines: list[np.ndarray] = []
    start, first_line = 0, 0
    while start < len(data):
        end = data.find(b"\n", min(start + BLOCK_BYTES, len(data)) - 1)
        end = len(data) if end < 0 else end + 1
        block = np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start)
        block_values, block_lines, block_newlines = _tokenize_block(block, data, start, source, allow_negative)
        values.append(_narrow(block_values))
        line_type = np.int32 if first_line + block_newlines < _INT32_LIMIT else np.int64
        lines.append(block_lines.astype(line_type) + first_line)  # a Python int keeps the dtype (NEP 50)
        first_line += block_newlines
        start = end
    if not values:
        return IntTokens(np.zeros(0, np.int64), np.zeros(0, np.int64), 0)
    all_values = np.concatenate(values)
    values.clear()  # free the per-block arrays before the second concatenation
    return IntTokens(all_values, np.concatenate(lines), count_lines(data))


def _narrow(values: np.ndarray) -> np.ndarray:
    """``values`` as ``int32`` when they fit (halves the token arrays)."""
    if len(values) == 0 or (values.min() > -_INT32_LIMIT and values.max() < _INT32_LIMIT):
        return values.astype(np.int32)
    return values


def _tokenize_block(
    block: np.ndarray, data: bytes, offset: int, source: str, allow_negative: bool
) -> tuple[np.ndarray, np.ndarray, int]:
    """Values and block-relative lines of the tokens of one block of whole
    lines, and the number of line ends in the block."""
    newline = block == _NEWLINE
    space = newline | (block == _SPACE) | (block == _TAB) | (block == _CR)
    digit = (block - _ZERO) < 10  # uint8 arithmetic wraps bytes below '0' to >= 208
    minus = block == _MINUS
    problems: list[tuple[int, str]] = []
    bad = ~(space | digit | minus)
    if bad.any():
        problems.append((int(np.argmax(bad)), "is not an integer item id"))
    minus_at = np.flatnonzero(minus)
    if len(minus_at) and not allow_negative:
        problems.append((int(minus_at[0]), "is not an item id: item ids are non-negative integers"))
    elif len(minus_at):
        after = minus_at + 1
        followed = after < len(block)
        followed[followed] = digit[after[followed]]
        preceded = minus_at == 0
        preceded[~preceded] = space[minus_at[~preceded] - 1]
        wrong = ~(followed & preceded)
        if wrong.any():
            problems.append((int(minus_at[np.argmax(wrong)]), "is not an integer item id"))
    digit_at = np.flatnonzero(digit)
    run_start = np.ones(len(digit_at), dtype=bool)
    run_start[1:] = digit_at[1:] != digit_at[:-1] + 1
    starts = np.flatnonzero(run_start)
    lengths = np.diff(np.append(starts, len(digit_at)))
    too_long = lengths > MAX_DIGITS
    if too_long.any():
        problems.append((int(digit_at[starts[np.argmax(too_long)]]), f"has more than {MAX_DIGITS} digits"))
    if problems:
        position, problem = min(problems)
        _fail_at(data, offset + position, source, problem)
    newline_at = np.flatnonzero(newline)
    if len(digit_at) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), len(newline_at)
    place = np.repeat(starts + lengths, lengths) - np.arange(1, len(digit_at) + 1)
    weighted = (block[digit_at].astype(np.int64) - _ZERO) * _POW10[place]
    values = np.add.reduceat(weighted, starts)
    first = digit_at[starts]
    negative = first > 0
    negative[negative] = minus[first[negative] - 1]
    if np.any(values[negative] == 0):
        _fail_at(
            data, offset + int(first[np.argmax(negative & (values == 0))]) - 1, source, "is not an integer item id"
        )
    values[negative] = -values[negative]
    return values, np.searchsorted(newline_at, first), len(newline_at)


def _fail_at(data: bytes, position: int, source: str, problem: str) -> None:
    """Raise the error for the token around byte ``position``."""
    line_start = data.rfind(b"\n", 0, position) + 1
    line_end = data.find(b"\n", position)
    line_bytes = data[line_start : None if line_end < 0 else line_end]
    line = data.count(b"\n", 0, position) + 1
    try:
        line_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"byte 0x{line_bytes[exc.start]:02x} is not UTF-8 text", path=source, line=line) from None
    left = position
    while left > line_start and data[left - 1 : left] not in (b" ", b"\t", b"\r"):
        left -= 1
    right = position
    while right < len(data) and data[right : right + 1] not in (b" ", b"\t", b"\r", b"\n"):
        right += 1
    token = data[left:right].decode("utf-8")
    raise InputError(f"{token!r} {problem}", path=source, line=line)
