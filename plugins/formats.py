"""Built-in dataset formats (docs/formats.md has the user-facing description).

* ``fimi`` (.dat .fimi): one record per line, non-negative integer item ids
  separated by whitespace (the FIMI repository's ``.dat``). Parsed by the
  vectorised tokenizer of :mod:`privtool.plugins.int_tokens`. Labels are
  ``str(int(token))``: ``007`` and ``7`` are one item.
* ``basket`` (.basket .txt): one record per line, items are any labels without
  whitespace, separated by whitespace (FIMI's layout for named items).
* ``spmf`` (.spmf): SPMF's integer formats. A file that uses the markers is in
  the sequence style (``3 -1 7 -1 -2``: ``-1`` closes an itemset, ``-2`` ends
  the record); the record is the set of its items (docs/design.md: we publish sets, the
  order of the itemsets is not kept). A file without any marker is SPMF's plain
  itemset style, which is FIMI.
* ``csv`` (.csv): one record per line, items separated by ``--delimiter``, with
  RFC 4180 quoting, so labels may hold the delimiter, quotes and line breaks.
* ``csv-long`` (.long.csv): a header ``record_id,item``, then one row per item
  occurrence; records keep the order in which their id first appears.
* ``jsonl`` (.jsonl .ndjson): one JSON array of strings or integers per line.

In every format a blank line (``[]`` in JSON Lines) is a record with no items,
except in ``csv-long``, where blank lines are skipped and empty records cannot be
written. Repeated items within a record are merged (records are sets).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from typing import IO, Any

import numpy as np

from privtool.arrays import offsets_of
from privtool.components import Format
from privtool.dataset import Dataset
from privtool.errors import InputError, OutputError, ParameterError
from privtool.hookspecs import hookimpl
from privtool.params import Param
from privtool.plugins.int_tokens import MAX_DIGITS, IntTokens, tokenize

DELIMITER = Param("delimiter", str, ",", "Field delimiter: one character, or 'tab'.")
MARKERS = Param("markers", bool, True, "Write SPMF's sequence style (3 -1 7 -1 -2) instead of plain itemsets.")


def is_integer_id(label: str) -> bool:
    """Whether ``label`` is how FIMI/SPMF spell an item: a non-negative integer
    without leading zeros, of at most ``MAX_DIGITS`` digits."""
    return label.isascii() and label.isdigit() and len(label) <= MAX_DIGITS and (label == "0" or label[0] != "0")


def used_labels(dataset: Dataset) -> Iterable[str]:
    """Labels of the items that occur in at least one record."""
    return (dataset.labels[j] for j in np.flatnonzero(dataset.supports > 0))


def require_integer_ids(dataset: Dataset, format_name: str) -> None:
    """:class:`OutputError` for the first label an integer format cannot hold."""
    for label in used_labels(dataset):
        if not is_integer_id(label):
            raise OutputError(
                f"item {label!r} cannot be written as {format_name}, whose items are non-negative integers "
                f"without leading zeros (at most {MAX_DIGITS} digits); write csv or jsonl instead."
            )


def intern_integers(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, ids)`` with ``distinct`` ascending and ``distinct[ids] == values``.

    When the values span a range not much wider than their count (item ids
    usually do) a presence table replaces ``np.unique``'s sort: O(n + range)."""
    if len(values) == 0:
        return values, np.zeros(0, dtype=np.int32)
    low, high = int(values.min()), int(values.max())
    if high - low > 4 * len(values) + (1 << 20):
        distinct, ids = np.unique(values, return_inverse=True)
        return distinct, ids.reshape(-1).astype(np.int32)
    present = np.zeros(high - low + 1, dtype=bool)
    present[values - low] = True
    distinct = np.flatnonzero(present) + low
    rank = np.cumsum(present, dtype=np.int32) - 1
    return distinct, rank[values - low]


def write_lines(stream: IO[str], lines: Iterable[str], batch: int = 8192) -> None:
    """Write ``lines`` (each with its line end), joined ``batch`` at a time:
    one text-stream write per line costs more than the formatting."""
    pending: list[str] = []
    for line in lines:
        pending.append(line)
        if len(pending) == batch:
            stream.write("".join(pending))
            pending.clear()
    stream.write("".join(pending))


def dataset_from_tokens(values: np.ndarray, lines: np.ndarray, n_lines: int) -> Dataset:
    """Records = lines, items = the integer ``values`` on each line (ascending
    ``lines``). Interned by :func:`intern_integers`, so ids follow numeric order, which is
    :func:`~privtool.dataset.label_sort_key` order for integer labels."""
    indptr = offsets_of(np.bincount(lines, minlength=n_lines))
    distinct, ids = intern_integers(values)
    labels = tuple(map(str, distinct.tolist()))
    out_of_order = np.diff(ids) <= 0
    out_of_order &= lines[1:] == lines[:-1]
    if not out_of_order.any():
        return Dataset(indptr, ids, labels)
    return Dataset.from_csr(indptr, ids, labels, normalise=True)


def _token_error(tokens: IntTokens, mask: np.ndarray, source: str, problem: str) -> None:
    """Raise ``problem`` for the first token selected by ``mask``."""
    first = int(np.argmax(mask))
    raise InputError(problem.format(token=f"'{tokens.values[first]}'"), path=source, line=int(tokens.lines[first]) + 1)


class IntegerFormat(Format):
    """A format of integer tokens parsed from the raw bytes (``read_bytes``);
    ``read`` on a text stream re-encodes it and parses the same way."""

    def read(self, stream: IO[str], source: str, params: dict[str, Any]) -> Dataset:
        return self.read_bytes(stream.read().encode("utf-8"), source, params)


class Fimi(IntegerFormat):
    name = "fimi"
    summary = "one record per line, non-negative integer items separated by spaces (FIMI .dat)"
    extensions = ("dat", "fimi")
    line_per_record = True

    def read_bytes(self, data: bytes, source: str, params: dict[str, Any]) -> Dataset:
        tokens = tokenize(data, source, allow_negative=False)
        return dataset_from_tokens(tokens.values, tokens.lines, tokens.n_lines)

    def write(self, dataset: Dataset, stream: IO[str], params: dict[str, Any]) -> None:
        require_integer_ids(dataset, self.name)
        write_lines(stream, (" ".join(record) + "\n" for record in dataset.to_label_records()))


class Basket(Format):
    name = "basket"
    summary = "one record per line, items are any labels separated by whitespace (letters allowed)"
    extensions = ("basket", "txt")
    line_per_record = True

    def read(self, stream: IO[str], source: str, params: dict[str, Any]) -> Dataset:
        return Dataset.from_records(line.split() for line in stream)

    def write(self, dataset: Dataset, stream: IO[str], params: dict[str, Any]) -> None:
        for label in used_labels(dataset):
            if any(char.isspace() for char in label):
                raise OutputError(
                    f"item {label!r} cannot be written as {self.name}, whose items are separated by whitespace; "
                    "write csv or jsonl instead."
                )
        write_lines(stream, (" ".join(record) + "\n" for record in dataset.to_label_records()))


class Spmf(IntegerFormat):
    name = "spmf"
    summary = "SPMF integer sequences (3 -1 7 -1 -2, read as the set of their items) or plain itemsets"
    extensions = ("spmf",)
    params = (MARKERS,)

    def read_bytes(self, data: bytes, source: str, params: dict[str, Any]) -> Dataset:
        tokens = tokenize(data, source)
        self._check_markers(tokens, source)
        keep = tokens.values >= 0
        return dataset_from_tokens(tokens.values[keep], tokens.lines[keep], tokens.n_lines)

    @staticmethod
    def _check_markers(tokens: IntTokens, source: str) -> None:
        """Only -1 and -2 may be negative; if the file has any marker, a -1
        follows an item and a -2 ends every non-blank line. The first violation
        in file order is reported."""
        invalid = tokens.values < -2
        close_itemset, end_record = tokens.values == -1, tokens.values == -2
        problems = [(invalid, "{token} is neither an item id nor an SPMF marker (-1, -2)")]
        if close_itemset.any() or end_record.any():
            problems += Spmf._marker_problems(tokens.lines, close_itemset, end_record)
        firsts = [(int(np.argmax(mask)), mask, text) for mask, text in problems if mask.any()]
        if firsts:
            _, mask, text = min(firsts, key=lambda entry: entry[0])
            _token_error(tokens, mask, source, text)

    @staticmethod
    def _marker_problems(
        lines: np.ndarray, close_itemset: np.ndarray, end_record: np.ndarray
    ) -> list[tuple[np.ndarray, str]]:
        """Masks of the tokens that break the sequence style, with their message."""
        new_line = np.ones(len(lines), dtype=bool)
        new_line[1:] = lines[1:] != lines[:-1]
        last_on_line = np.ones(len(lines), dtype=bool)
        last_on_line[:-1] = new_line[1:]
        after_marker = np.zeros(len(lines), dtype=bool)
        after_marker[1:] = (close_itemset | end_record)[:-1]
        return [
            (
                close_itemset & (new_line | after_marker),
                "stray {token}: in SPMF a -1 closes an itemset, so it must follow an item",
            ),
            (end_record & ~last_on_line, "{token} ends the record, but more tokens follow it on the line"),
            (
                last_on_line & ~end_record,
                "the record does not end with -2, although the file uses SPMF's -1/-2 markers",
            ),
        ]

    def write(self, dataset: Dataset, stream: IO[str], params: dict[str, Any]) -> None:
        require_integer_ids(dataset, self.name)
        records = dataset.to_label_records()
        if params["markers"]:
            write_lines(stream, ("".join(label + " -1 " for label in record) + "-2\n" for record in records))
        else:
            write_lines(stream, (" ".join(record) + "\n" for record in records))


def delimiter_of(params: dict[str, Any]) -> str:
    """The ``--delimiter`` character (``tab`` or ``\\t`` mean a tab)."""
    delimiter = params["delimiter"]
    delimiter = "\t" if delimiter in ("tab", "\\t") else delimiter
    if len(delimiter) != 1 or delimiter in '"\r\n':
        raise ParameterError(
            f"--delimiter must be one character other than a quote or a line break, not {delimiter!r}."
        )
    return delimiter


def csv_rows(stream: IO[str], source: str, delimiter: str) -> Iterable[tuple[int, list[str]]]:
    """``(line, fields)`` for every CSV row; malformed quoting names the line."""
    reader = csv.reader(stream, delimiter=delimiter, strict=True)
    try:
        for row in reader:
            yield reader.line_num, row
    except csv.Error as exc:
        raise InputError(f"malformed CSV ({exc})", path=source, line=reader.line_num) from None


class CsvWriter:
    """Rows with minimal quoting and LF line ends. A row holding a CR is fully
    quoted, as Python's minimal quoting leaves a lone CR bare with LF line ends;
    so is a row with a field starting with U+FEFF, which a reader would take
    for a byte-order mark at the start of the file."""

    def __init__(self, stream: IO[str], delimiter: str) -> None:
        self.plain = csv.writer(stream, delimiter=delimiter, lineterminator="\n")
        self.quoted = csv.writer(stream, delimiter=delimiter, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def writerow(self, row: list[str]) -> None:
        risky = any("\r" in field or field.startswith("\ufeff") for field in row)
        (self.quoted if risky else self.plain).writerow(row)


class Csv(Format):
    name = "csv"
    summary = "one record per line, items separated by a delimiter, with CSV quoting"
    extensions = ("csv",)
    params = (DELIMITER,)

    def read(self, stream: IO[str], source: str, params: dict[str, Any]) -> Dataset:
        records = []
        for line, row in csv_rows(stream, source, delimiter_of(params)):
            if "" in row:
                raise InputError(
                    "empty item (two delimiters in a row, or one at an end of the line)", path=source, line=line
                )
            records.append(row)
        return Dataset.from_records(records)

    def write(self, dataset: Dataset, stream: IO[str], params: dict[str, Any]) -> None:
        writer = CsvWriter(stream, delimiter_of(params))
        for record in dataset.to_label_records():
            writer.writerow(record)


class CsvLong(Format):
    name = "csv-long"
    summary = "a header record_id,item then one row per item occurrence (long or 'tidy' CSV)"
    extensions = ("long.csv",)
    params = (DELIMITER,)
    header = ("record_id", "item")

    def read(self, stream: IO[str], source: str, params: dict[str, Any]) -> Dataset:
        delimiter = delimiter_of(params)
        records: dict[str, list[str]] = {}
        rows = iter(csv_rows(stream, source, delimiter))
        line, first = next(rows, (1, []))
        if tuple(first) != self.header:
            expected = delimiter.join(self.header)
            raise InputError(
                f"expected the header {expected!r}, found {delimiter.join(first)!r}", path=source, line=line
            )
        for line, row in rows:
            if not row:
                continue
            if len(row) != 2:
                raise InputError(f"expected 2 fields (record_id, item), found {len(row)}", path=source, line=line)
            record_id, item = row
            if not record_id or not item:
                raise InputError(f"empty {'record_id' if not record_id else 'item'}", path=source, line=line)
            records.setdefault(record_id, []).append(item)
        return Dataset.from_records(records.values())

    def write(self, dataset: Dataset, stream: IO[str], params: dict[str, Any]) -> None:
        self.write_blocks([dataset], stream, params)

    def write_blocks(self, blocks: Iterable[Dataset], stream: IO[str], params: dict[str, Any]) -> None:
        """One header, then the rows of every block; record ids run on across blocks."""
        writer = CsvWriter(stream, delimiter_of(params))
        writer.writerow(list(self.header))
        first = 0
        for block in blocks:
            empty = np.flatnonzero(block.sizes == 0)
            if len(empty):
                raise OutputError(
                    f"record {first + int(empty[0])} is empty and csv-long (one row per item) "
                    "cannot hold an empty record; "
                    "write csv or jsonl instead."
                )
            for position, record in enumerate(block.to_label_records(), start=first):
                record_id = str(position)
                for label in record:
                    writer.writerow([record_id, label])
            first += block.n_records


def json_kind(value: Any) -> str:
    """How JSON calls the type of a parsed ``value`` (for error messages)."""
    if isinstance(value, bool):
        return "true/false"
    kinds = {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number"}
    return "null" if value is None else kinds[type(value)]


class JsonLines(Format):
    name = "jsonl"
    summary = "one JSON array of item labels (strings or integers) per line"
    extensions = ("jsonl", "ndjson")
    line_per_record = True

    def read(self, stream: IO[str], source: str, params: dict[str, Any]) -> Dataset:
        records = []
        for line, text in enumerate(stream, start=1):
            text = text.strip(" \t\r\n")
            if not text:
                raise InputError("blank line (write [] for a record without items)", path=source, line=line)
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON ({exc.msg})", path=source, line=line) from None
            if not isinstance(value, list):
                raise InputError(f"expected a JSON array of items, found {json_kind(value)}", path=source, line=line)
            records.append([self._label(item, source, line) for item in value])
        return Dataset.from_records(records)

    @staticmethod
    def _label(item: Any, source: str, line: int) -> str:
        if isinstance(item, bool) or not isinstance(item, (str, int)):
            raise InputError(
                f"item {json.dumps(item)} is {json_kind(item)}, not a string or an integer", path=source, line=line
            )
        if item == "":
            raise InputError("empty item label", path=source, line=line)
        label = item if isinstance(item, str) else str(item)
        try:
            label.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(
                f"item {json.dumps(item)} is not valid Unicode text (a lone surrogate)", path=source, line=line
            ) from None
        return label

    def write(self, dataset: Dataset, stream: IO[str], params: dict[str, Any]) -> None:
        as_json = [int(label) if is_integer_id(label) else label for label in dataset.labels]
        bounds = dataset.indptr.tolist()
        ids = dataset.items.tolist()
        write_lines(
            stream,
            (
                json.dumps([as_json[j] for j in ids[bounds[i] : bounds[i + 1]]], ensure_ascii=False) + "\n"
                for i in range(dataset.n_records)
            ),
        )


@hookimpl
def privtool_formats() -> list[Format]:
    return [Fimi(), Basket(), Spmf(), Csv(), CsvLong(), JsonLines()]
