"""Core model: CSR supports against naive counts, parameters, release validation."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from privtool.dataset import Dataset, label_sort_key
from privtool.errors import InputError, ParameterError
from privtool.params import Param, resolve
from privtool.release import Cluster, Release, _Checker, release_from_json, well_formed_itemsets

labels = st.text(min_size=1, max_size=6).filter(lambda s: s.strip() == s and s)
records = st.lists(st.lists(labels, max_size=6), min_size=1, max_size=30)


@given(records)
def test_supports_equal_naive_counts(rows: list[list[str]]) -> None:
    ds = Dataset.from_records(rows)
    naive = Counter(label for row in rows for label in set(row))
    assert {ds.labels[i]: int(s) for i, s in enumerate(ds.supports)} == dict(naive)
    assert ds.to_label_records() == [sorted(set(r), key=label_sort_key) for r in rows]


@given(records, st.lists(labels, min_size=1, max_size=3))
def test_itemset_support_equals_naive(rows: list[list[str]], itemset: list[str]) -> None:
    ds = Dataset.from_records(
        rows, labels=sorted({*itemset, *(label for r in rows for label in r)}, key=label_sort_key)
    )
    expected = sum(1 for r in rows if set(itemset) <= set(r))
    assert ds.support(ds.ids_of(itemset)) == expected


@given(records, st.data())
def test_subset_keeps_records(rows: list[list[str]], data: st.DataObject) -> None:
    ds = Dataset.from_records(rows)
    picks = data.draw(st.lists(st.integers(0, len(rows) - 1), max_size=10))
    sub = ds.subset(picks)
    assert sub.to_label_records() == [ds.record_labels(i) for i in picks]


def test_label_order_is_numeric_for_ids() -> None:
    assert sorted(["10", "9", "b", "a"], key=label_sort_key) == ["9", "10", "a", "b"]


def test_params_check_type_and_range() -> None:
    spec = [Param("k", int, 5, min=2), Param("mode", str, "a", choices=("a", "b"))]
    assert resolve(spec, {"k": "3"}, "x") == {"k": 3, "mode": "a"}
    with pytest.raises(ParameterError, match="--k must be at least 2"):
        resolve(spec, {"k": 1}, "x")
    with pytest.raises(ParameterError, match="--k must be an integer"):
        resolve(spec, {"k": "two"}, "x")
    with pytest.raises(ParameterError, match="--mode must be one of a, b"):
        resolve(spec, {"mode": "c"}, "x")
    with pytest.raises(ParameterError, match="has no option --zz"):
        resolve(spec, {"zz": 1}, "x")


def _valid() -> dict:
    release = Release(
        kind="disassociated",
        params={"k": 2, "m": 2},
        clusters=[Cluster("c0", 3, [[["b", "a"], ["a"]]], ["z"])],
    )
    return json.loads(release.dumps())


def test_release_round_trip_is_canonical() -> None:
    obj = _valid()
    assert obj["clusters"][0]["record_chunks"] == [[["a"], ["a", "b"]]]
    assert json.loads(release_from_json(obj).dumps()) == obj


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda o: o.update(format="x"), r"\$\.format"),
        (lambda o: o.update(kind="tabular"), r"\$\.kind"),
        (lambda o: o["clusters"][0].update(size=0), r"\$\.clusters\[0\]\.size"),
        (lambda o: o["clusters"][0].update(size="3"), r"\$\.clusters\[0\]\.size"),
        (lambda o: o["clusters"][0]["record_chunks"][0].append([]), r"\$\.clusters\[0\]\.record_chunks\[0\]\[2\]"),
        (lambda o: o["clusters"][0]["record_chunks"][0][0].append(7), r"record_chunks\[0\]\[0\]\[1\]"),
        (lambda o: o["clusters"][0]["term_chunk"].append("z"), r"term_chunk: an item is repeated"),
        (lambda o: o["clusters"][0].pop("term_chunk"), r"\$\.clusters\[0\]\.term_chunk: missing"),
        (lambda o: o.update(records=[]), r"\$\.records"),
        (lambda o: o.update(joint_clusters=[{"id": "j0", "members": ["c9"], "shared_chunks": []}]), r"members\[0\]"),
        (lambda o: o["clusters"][0].update(colour=1), r"colour: unknown field"),
    ],
)
def test_release_validation_names_the_path(mutate, path: str) -> None:
    obj = _valid()
    mutate(obj)
    with pytest.raises(InputError, match=path):
        release_from_json(obj)


_JSON_VALUES = st.one_of(
    st.sampled_from(["a", "b", "c", ""]),
    st.integers(0, 2),
    st.none(),
    st.booleans(),
    st.lists(st.sampled_from(["a", "b"]), max_size=2),
)


@given(st.lists(st.one_of(st.lists(_JSON_VALUES, max_size=4), _JSON_VALUES), max_size=5))
def test_fast_chunk_validation_accepts_exactly_what_the_item_walk_accepts(rows) -> None:
    """The fast path of release validation agrees with the per-item walk on
    every chunk, valid or not (repeats, empty labels and rows, wrong types)."""
    try:
        [_Checker("r").itemset(row, f"$[{i}]") for i, row in enumerate(_Checker("r").array(rows, "$"))]
        walk_accepts = True
    except InputError:
        walk_accepts = False
    assert well_formed_itemsets(rows) == walk_accepts
