"""Python and pandas input is never silently mangled (issue 18).

Oracles: the records themselves (round trips), brute-force Python construction
of the records a long or one-hot frame stands for, and the csv-long file reader,
an independent path to the same dataset. Every mangling example of the issue
raises one sentence.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import privtool.dataset as dataset_module
from privtool.dataset import Dataset, label_sort_key
from privtool.io import read_dataset
from privtool.registry import Registry

LABELS = st.sampled_from(["a", "b", "milk", "0", "7", "10", "007", "x y", "é"])
INTS = st.integers(min_value=-3, max_value=10**12)


def one_sentence(message: str) -> bool:
    """One line, ending with a full stop, without a second sentence inside."""
    return "\n" not in message and message.endswith(".") and re.search(r"[.;:]\s+[A-Z]", message) is None


def canonical(record: list[str]) -> list[str]:
    return sorted(set(record), key=label_sort_key)


# ------------------------------------------------------------ from_records


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(LABELS, max_size=6), max_size=12))
def test_string_records_round_trip(records: list[list[str]]) -> None:
    dataset = Dataset.from_records(records)
    assert dataset.to_label_records() == [canonical(r) for r in records]
    assert Dataset.from_records(dataset.to_label_records()) == dataset
    assert list(dataset.labels) == sorted({x for r in records for x in r}, key=label_sort_key)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(LABELS, max_size=6), max_size=12), st.booleans(), st.integers(1, 40))
def test_content_text_is_the_records_line_by_line(records: list[list[str]], own_order: bool, block_bytes: int) -> None:
    """The vectorised text behind ``content_sha256`` (and the trail's input hash)
    against the plain one: each record's labels in stored order, joined by
    spaces, one line per record; also over a vocabulary not in canonical order,
    and built in blocks of a few records."""
    vocabulary = sorted({x for r in records for x in r}, reverse=True) if own_order else None
    dataset = Dataset.from_records(records, labels=vocabulary)
    text = "".join(" ".join(record) + "\n" for record in dataset.to_label_records()).encode("utf-8")
    assert dataset.content_text() == text
    assert dataset.content_sha256() == hashlib.sha256(text).hexdigest()
    with mock.patch.object(dataset_module, "TEXT_BLOCK_BYTES", block_bytes):  # blocks of a few records each
        assert dataset.content_text() == text
        assert (
            Dataset(dataset.indptr, dataset.items, dataset.labels).content_sha256() == hashlib.sha256(text).hexdigest()
        )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(INTS, max_size=6), max_size=12), st.booleans())
def test_integer_items_are_their_decimal_text(records: list[list[int]], as_numpy: bool) -> None:
    given_records: list[Any] = [np.array(r, dtype=np.int64) for r in records] if as_numpy else records
    dataset = Dataset.from_records(given_records)
    as_text = [[str(x) for x in r] for r in records]
    assert dataset == Dataset.from_records(as_text)
    assert dataset.to_label_records() == [canonical(r) for r in as_text]
    assert all(isinstance(label, str) for label in dataset.labels)


def test_integer_items_sort_numerically_and_read_back_as_text() -> None:
    dataset = Dataset.from_records([[10, 9], [100, np.int32(9), 9]])
    assert dataset.labels == ("9", "10", "100")
    assert dataset.to_label_records() == [["9", "10"], ["9", "100"]]


def test_given_labels_fix_the_vocabulary_and_refuse_strangers() -> None:
    dataset = Dataset.from_records([[3], [1]], labels=["3", "2", "1"])
    assert dataset.labels == ("3", "2", "1") and dataset.to_label_records() == [["3"], ["1"]]
    with pytest.raises(ValueError, match=r"record 1 holds the item 'z', which is not in the given labels\."):
        Dataset.from_records([["a"], ["z"]], labels=["a"])


FRAME = pd.DataFrame({"basket": [1, 1, 2], "item": ["milk", "bread", "milk"]})

MANGLING = [
    # (what the issue saw or what would be mangled, input, exception, message fragment)
    ("a DataFrame (iterates its column names)", FRAME, TypeError, "from_pandas"),
    ("a string as the records", "milk bread", TypeError, "not the string 'milk bread'"),
    ("strings as records (characters)", ["milk", "bread"], TypeError, "record 0 is the string 'milk'"),
    ("a float item", [["a"], [1.5]], TypeError, "record 1 holds the float 1.5"),
    ("NaN, a missing value from pandas", [[float("nan")]], TypeError, "the float nan"),
    ("None", [["a", None]], TypeError, "None (a missing value)"),
    ("bytes", [[b"milk"]], TypeError, "decode them"),
    ("a nested list", [[["a", "b"]]], TypeError, "record 0 holds a list"),
    ("a bool", [[True]], TypeError, "the bool True"),
    ("a numpy float", [[np.float64(2.0)]], TypeError, "the float 2.0"),
    ("a record that is not iterable", [[1], 5], TypeError, "record 1 is 5 of type int"),
    ("a dict as a record", [{"a": 1}], TypeError, "record 0 is {'a': 1}"),
    ("integers mixed with strings (1 and '1' would merge)", [["1"], [1]], TypeError, "among string items"),
    ("bytes as the records", b"ab", TypeError, "bytes"),
    ("an empty label", [["a", ""]], ValueError, "empty item label"),
    ("a lone surrogate", [["\ud800"]], ValueError, "lone surrogate"),
]


@pytest.mark.parametrize(("what", "records", "error", "fragment"), MANGLING, ids=[m[0] for m in MANGLING])
def test_mangling_raises_one_sentence(what: str, records: Any, error: type[Exception], fragment: str) -> None:
    with pytest.raises(error) as caught:
        Dataset.from_records(records)
    assert type(caught.value) is error
    assert fragment in str(caught.value) and one_sentence(str(caught.value)), str(caught.value)


# ------------------------------------------------------------- long frames

KEYS = st.one_of(st.integers(min_value=0, max_value=5), st.sampled_from(["t1", "t2", "t3"]))


def brute_force_long(pairs: list[tuple[Any, str]]) -> list[list[str]]:
    """Records in order of first appearance of their transaction."""
    records: dict[Any, set[str]] = {}
    for transaction, item in pairs:
        records.setdefault(transaction, set()).add(item)
    return [canonical(list(items)) for items in records.values()]


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.lists(st.tuples(KEYS, LABELS), max_size=30), st.lists(st.tuples(KEYS, INTS), max_size=30)))
def test_long_frame_matches_brute_force(pairs: list[tuple[Any, Any]]) -> None:
    frame = pd.DataFrame(pairs, columns=["t", "i"])
    dataset = Dataset.from_pandas(frame, transaction="t", item="i")
    assert dataset.to_label_records() == brute_force_long([(t, str(i)) for t, i in pairs])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), LABELS), min_size=1, max_size=30))
def test_long_frame_matches_the_csv_long_reader(
    registry: Registry, tmp_path_factory: pytest.TempPathFactory, pairs: list[tuple[int, str]]
) -> None:
    path = tmp_path_factory.mktemp("long") / "data.long.csv"
    frame = pd.DataFrame(pairs, columns=["record_id", "item"])
    frame.to_csv(path, index=False)
    assert Dataset.from_pandas(frame, transaction="record_id", item="item") == read_dataset(registry, path)


def test_long_frame_columns_of_every_common_dtype() -> None:
    expected = [["10", "2"], ["2"]]
    for items in (
        pd.Series([10, 2, 2], dtype="int64"),
        pd.Series([10, 2, 2], dtype="Int64"),
        pd.Series([10, 2, 2], dtype="uint16"),
        pd.Series(["10", "2", "2"], dtype="string"),
        pd.Series(["10", "2", "2"], dtype=object),
        pd.Series(["10", "2", "2"], dtype="category"),
        pd.Series([10, 2, 2], dtype="category"),
    ):
        frame = pd.DataFrame({"t": ["x", "x", "y"], "i": items})
        dataset = Dataset.from_pandas(frame, transaction="t", item="i")
        assert dataset.to_label_records() == [canonical(r) for r in expected], items.dtype


# ---------------------------------------------------------- one-hot frames


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 8), st.lists(st.one_of(LABELS, st.integers(0, 50)), unique_by=str, max_size=6), st.data())
def test_onehot_frame_matches_brute_force(n_rows: int, names: list[Any], data: st.DataObject) -> None:
    if any(isinstance(n, int) for n in names) and any(isinstance(n, str) for n in names):
        names = [str(n) for n in names]
    matrix = np.array(
        data.draw(
            st.lists(
                st.lists(st.booleans(), min_size=len(names), max_size=len(names)), min_size=n_rows, max_size=n_rows
            )
        ),
        dtype=bool,
    ).reshape(n_rows, len(names))
    frame = pd.DataFrame(matrix, columns=names)
    expected = [canonical([str(names[j]) for j in range(len(names)) if row[j]]) for row in matrix]
    for variant in (frame, frame.astype("boolean"), frame.astype(pd.SparseDtype(bool, False))):
        dataset = Dataset.from_pandas(variant)
        assert dataset.to_label_records() == expected
        assert set(dataset.labels) == {label for record in expected for label in record}


FRAME_MANGLING = [
    ("no column arguments, not one-hot", FRAME, {}, TypeError, "must all be boolean, but column 'basket' is int64"),
    ("0/1 integers are not one-hot booleans", pd.DataFrame({"a": [1, 0]}), {}, TypeError, "column 'a' is int64"),
    ("one column argument only", FRAME, {"transaction": "basket"}, TypeError, "needs both"),
    ("an unknown column", FRAME, {"transaction": "basket", "item": "sku"}, ValueError, "no column 'sku'"),
    ("the same column twice", FRAME, {"transaction": "item", "item": "item"}, ValueError, "both name"),
    (
        "float items",
        pd.DataFrame({"t": [1, 2], "i": [1.0, 2.0]}),
        {"transaction": "t", "item": "i"},
        TypeError,
        "holds the float 1.0",
    ),
    (
        "missing items",
        pd.DataFrame({"t": [1, 2], "i": ["a", None]}),
        {"transaction": "t", "item": "i"},
        ValueError,
        "1 missing value(s), the first at row 1",
    ),
    (
        "missing transaction ids",
        pd.DataFrame({"t": [1, None], "i": ["a", "b"]}),
        {"transaction": "t", "item": "i"},
        ValueError,
        "column 't' (transaction) has 1 missing",
    ),
    (
        "integers mixed with strings",
        pd.DataFrame({"t": [1, 2], "i": [1, "1"]}),
        {"transaction": "t", "item": "i"},
        TypeError,
        "mixes integers and strings",
    ),
    (
        "bytes items",
        pd.DataFrame({"t": [1, 2], "i": [b"a", b"b"]}),
        {"transaction": "t", "item": "i"},
        TypeError,
        "bytes",
    ),
    (
        "nested lists",
        pd.DataFrame({"t": [1, 2], "i": [["a"], ["b"]]}),
        {"transaction": "t", "item": "i"},
        TypeError,
        "holds a list",
    ),
    ("empty labels", pd.DataFrame({"t": [1], "i": [""]}), {"transaction": "t", "item": "i"}, ValueError, "empty"),
    ("one-hot with missing values", pd.DataFrame({"a": [True, None]}, dtype="boolean"), {}, ValueError, "missing"),
    ("two columns labelled alike", pd.DataFrame({1: [True], "x": [False]}), {}, TypeError, "mixes integers"),
    ("not a DataFrame", [[1, 2]], {}, TypeError, "expects a pandas DataFrame, not a list"),
]


@pytest.mark.parametrize(
    ("what", "frame", "kwargs", "error", "fragment"), FRAME_MANGLING, ids=[m[0] for m in FRAME_MANGLING]
)
def test_frame_mangling_raises_one_sentence(
    what: str, frame: Any, kwargs: dict[str, str], error: type[Exception], fragment: str
) -> None:
    with pytest.raises(error) as caught:
        Dataset.from_pandas(frame, **kwargs)
    assert type(caught.value) is error
    assert fragment in str(caught.value) and one_sentence(str(caught.value)), str(caught.value)


def test_without_pandas_one_sentence_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # makes `import pandas` raise ImportError
    with pytest.raises(ImportError) as caught:
        Dataset.from_pandas(object())
    assert str(caught.value) == (
        "this needs pandas, which is not installed; install it with pip install 'privtool[pandas]'."
    )


def test_pandas_stays_off_the_import_path_of_the_package_and_the_cli() -> None:
    code = "import sys, privtool, privtool.cli, privtool.dataset; print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path.cwd())
    assert out.stdout.strip() == "False"
