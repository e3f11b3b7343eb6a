"""The trail's ``cluster_of_record`` as arrays (toolkit/record_clusters.py) and
the trail's fast reader and writer, against ``json.dumps`` / ``json.loads``."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.record_clusters import RecordClusters, parse_json_array
from privtool.trail import Trail, read_trail, trail_from_json

NAMES = st.one_of(
    st.sampled_from(["c0", "c1", "c12", "g3", "", "null", "a,b", "x]y", '"', "\\", "é", "\u2028", "\x01", "long" * 9]),
    st.text(max_size=12),
)
VALUES = st.lists(st.one_of(st.none(), NAMES), max_size=40)


def compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_json_text_is_json_dumps(values) -> None:
    clusters = RecordClusters.from_list(values)
    assert clusters.tolist() == values
    assert list(clusters) == values and len(clusters) == len(values)
    assert clusters.json_text() == compact(values)


@settings(max_examples=300, deadline=None)
@given(VALUES, st.sampled_from(["", ',"rest":[1,"]"]']))
def test_the_array_reads_back_as_json_loads_reads_it(values, after) -> None:
    data = ('{"a":' + compact(values) + after + "}").encode()
    parsed = parse_json_array(data, 5)
    if parsed is None:  # declined: escapes, control characters
        assert "\\" in compact(values)
        return
    clusters, end = parsed
    assert clusters.tolist() == json.loads(data)["a"]
    assert data[end:] == (after + "}").encode()


@given(
    st.sampled_from(
        [
            "[1]",
            '["a" ]',
            "[nul]",
            '["a",]',
            "[,]",
            '["a"',
            "[true]",
            '[null,"a"',
            "[{}]",
            '["a""b"]',
            "[" + '"a"' * 300 + "]",
        ]
    )
)
def test_anything_but_strings_and_nulls_is_declined(text) -> None:
    assert parse_json_array(text.encode(), 0) is None


@settings(max_examples=150, deadline=None)
@given(VALUES, st.lists(st.integers(0, 50), max_size=5, unique=True), st.dictionaries(NAMES, st.integers(), max_size=3))
def test_a_trail_file_reads_back_as_the_json_parser_reads_it(tmp_path_factory, values, suppressed, notes) -> None:
    trail = Trail(
        release_sha256="r", input_sha256="i", cluster_of_record=values, suppressed_records=suppressed, notes=notes
    )
    text = trail.dumps()
    assert text == compact({**trail.to_json(), "cluster_of_record": values}) + "\n"
    path = tmp_path_factory.mktemp("trail") / "t.json"
    path.write_text(text, encoding="utf-8")
    if all(v is None or v for v in values):
        got = read_trail(path)
        assert got == trail_from_json(json.loads(text))
        assert got.cluster_of_record.tolist() == values
        assert got.dumps() == text


def test_the_key_inside_notes_does_not_fool_the_reader(tmp_path) -> None:
    trail = Trail(cluster_of_record=["c0", None], notes={"x": {"cluster_of_record": ["c9"]}})
    path = tmp_path / "t.json"
    path.write_text(trail.dumps())
    assert read_trail(path).cluster_of_record.tolist() == ["c0", None]
    assert read_trail(path).notes == {"x": {"cluster_of_record": ["c9"]}}


def test_an_empty_id_is_refused_at_its_position(tmp_path) -> None:
    from privtool.errors import InputError

    path = tmp_path / "t.json"
    path.write_text(Trail(cluster_of_record=["c0", None, ""]).dumps())
    try:
        read_trail(path)
    except InputError as exc:
        assert "$.cluster_of_record[2]" in str(exc)
    else:
        raise AssertionError("an empty cluster id was accepted")


def test_codes_are_int32_and_read_only() -> None:
    clusters = RecordClusters(["a", "b"], np.array([1, -1, 0]))
    assert clusters.codes.dtype == np.int32 and not clusters.codes.flags.writeable
    assert clusters.tolist() == ["b", None, "a"] and clusters[1] is None and clusters[-1] == "a"
