"""The fast release reader and writer (privtool.release_bytes) against the
validating reader and the nested writer (issue 20 item 2).

Oracle: ``release_from_json`` on ``json.loads`` (the validating path, which
names the first problem) and ``json_text(release.to_json())`` (the canonical
writer from nested lists). On random releases and on byte-level mutations of
their files, reading the fast way gives the same release or the same error as
reading the validating way, and the fast writer gives the same bytes."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privtool import release_tokens
from privtool.claims import Claim
from privtool.errors import InputError
from privtool.release import (
    Cluster,
    JointCluster,
    Release,
    json_text,
    parse_json_bytes,
    read_release,
    release_from_bytes,
    release_from_json,
)
from privtool.release_arrays import ReleaseArrays
from privtool.release_bytes import _encoded, parse_canonical
from privtool.release_lists import _distinct_in_rows, disassociated_arrays, records_arrays

# labels: short digits (one 8-byte word), long text (several words), non-ASCII,
# JSON-significant characters inside strings, and what needs escaping
LABELS = st.one_of(
    st.integers(0, 30).map(str),
    st.sampled_from(["7", "007", "a", "@", "x:y", "[a]", '{"id":1}', ",", "é", "日本語", "a" * 9, "b" * 17]),
    st.text(min_size=1, max_size=20),
)
ROW = st.lists(LABELS, min_size=1, max_size=5)
CHUNK = st.lists(ROW, min_size=0, max_size=4)


@st.composite
def releases(draw: st.DrawFn) -> Release:
    kind = draw(st.sampled_from(["disassociated", "disassociated", "sanitized", "generalized"]))
    claims = [Claim("km-anonymity", {"k": 2, "m": 2})]
    params = {"method": "test", "k": draw(st.integers(1, 9)), "note": draw(st.text(max_size=5))}
    stats = {"records_in": draw(st.integers(0, 99))}
    if kind != "disassociated":
        records = draw(st.lists(st.lists(LABELS, max_size=5), max_size=8))
        hierarchy = {"root": "ALL", "edges": [["a", "ALL"]]} if kind == "generalized" else None
        return Release(kind, params, {"privtool": "t"}, stats, records=records, hierarchy=hierarchy, claims=claims)
    clusters = []
    for c in range(draw(st.integers(0, 4))):
        chunks = draw(st.lists(CHUNK, max_size=3))
        size = max([len(chunk) for chunk in chunks] + [1]) + draw(st.integers(0, 2))
        clusters.append(Cluster(draw(st.sampled_from([f"c{c}", f"cl{c}", f"é{c}"])), size, chunks, draw(ROW)))
    joints = []
    if len(clusters) >= 2:
        for j in range(draw(st.integers(0, 2))):
            members = draw(st.lists(st.sampled_from([c.id for c in clusters]), min_size=1, max_size=3, unique=True))
            joints.append(JointCluster(f"j{j}", members, draw(st.lists(CHUNK, max_size=2))))
    return Release(kind, params, {"privtool": "t"}, stats, clusters, joints, claims=claims)


def canonical_text(release: Release) -> bytes:
    """The file privtool writes, from the nested lists (the writer before issue 20)."""
    return json_text(release.to_json()).encode("utf-8")


def validating(data: bytes) -> Release:
    return release_from_json(parse_json_bytes(data, Path("r.json"), "release"), source="r.json")


def outcome(read: object, data: bytes) -> tuple[str, object]:
    try:
        return "release", read(data)  # type: ignore[operator]
    except InputError as exc:
        return "error", str(exc)


def read_bytes(data: bytes) -> Release:
    return release_from_bytes(data, "r.json")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(releases())
def test_a_canonical_file_reads_fast_to_the_same_release_and_writes_back_the_same_bytes(release: Release) -> None:
    data = canonical_text(release)
    escaped = b"\\" in data
    assert (parse_canonical(data) is None) == escaped  # the fast path takes every file without escapes
    fast = read_bytes(data)
    assert fast._arrays is not None and fast.dumps().encode("utf-8") == data  # written from the arrays
    assert fast == validating(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(releases(), st.booleans())
def test_canonical_arrays_write_what_the_nested_writer_writes(release: Release, stranger: bool) -> None:
    if stranger and release.joint_clusters:  # a member no cluster has: only an in-memory release holds one
        release.joint_clusters[0].members.append("zz")
    canonical = release.canonical()
    arrays = ReleaseArrays.from_nested(canonical.clusters, canonical.joint_clusters, canonical.records)
    assert arrays.is_canonical()
    held = Release.from_arrays(arrays, release.kind, **release.envelope())
    assert held.dumps().encode("utf-8") == canonical_text(release)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(LABELS, st.text(max_size=3), st.sampled_from(["", "\x00", "a\x00b", '"', "\\"])), max_size=8))
def test_json_strings_encoded_at_once_are_those_encoded_one_by_one(values: list[str]) -> None:
    """The writer's JSON strings (one join and split when no value needs an
    escape) are :func:`json.dumps` of each value, UTF-8 encoded, with their
    lengths: empty values, NUL (the separator) and escapes included."""
    oracle = [json.dumps(value, ensure_ascii=False).encode("utf-8") for value in values]
    encoded, lengths = _encoded(values)
    assert encoded == oracle
    assert lengths.tolist() == [len(text) for text in oracle]


MUTATIONS = b'[]{},:"@0 1a\\\n'


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(releases(), st.data())
def test_a_mutated_file_reads_fast_as_it_reads_validated(release: Release, data: st.DataObject) -> None:
    text = mutated(release, data)
    assert outcome(read_bytes, text) == outcome(validating, text)


def mutated(release: Release, data: st.DataObject) -> bytes:
    """The release's file with one to three bytes or short runs deleted, replaced, inserted or repeated."""
    text = bytearray(canonical_text(release))
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(text) - 1))
        how = data.draw(st.sampled_from(["delete", "replace", "insert", "duplicate"]))
        byte = data.draw(st.sampled_from(list(MUTATIONS)))
        if how == "delete":
            del text[at]
        elif how == "replace":
            text[at] = byte
        elif how == "insert":
            text.insert(at, byte)
        else:
            text[at:at] = text[at : at + data.draw(st.integers(1, 12))]
    return bytes(text)


@contextmanager
def blocks_of(size: int, merge_rows: int = release_tokens.MERGE_ROWS) -> Iterator[None]:
    """The fast reader tokenising blocks of ``size`` bytes (a string crossing a
    cut ends its block), numbering the blocks read across whenever they hold
    ``merge_rows`` distinct strings."""
    block, merge = release_tokens.BLOCK, release_tokens.MERGE_ROWS
    release_tokens.BLOCK, release_tokens.MERGE_ROWS = size, merge_rows
    try:
        yield
    finally:
        release_tokens.BLOCK, release_tokens.MERGE_ROWS = block, merge


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(releases(), st.booleans(), st.integers(1, 80), st.integers(1, 12), st.data())
def test_reading_in_small_blocks_gives_the_same_release_or_error(
    release: Release, mutate: bool, size: int, merge_rows: int, data: st.DataObject
) -> None:
    """Blocks cut anywhere (inside a run, a gap, a key; blocks of one string;
    strings read past the end of the file or not), numbered across in groups of
    blocks and then across the groups, number the strings and place the runs as
    one block does."""
    text = mutated(release, data) if mutate else canonical_text(release)
    with blocks_of(size, merge_rows):
        small = outcome(read_bytes, text)
        assert mutate or (parse_canonical(text) is None) == (b"\\" in text)  # read the fast way
    assert small == outcome(read_bytes, text) == outcome(validating, text)
    if small[0] == "release" and not mutate:
        assert small[1].dumps().encode("utf-8") == text


def test_a_release_with_more_strings_than_int32_numbers_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    release = Release("sanitized", {"k": 2}, {}, {}, records=[["a"], ["a", "b"], ["c"]])
    data = canonical_text(release)
    assert read_bytes(data) == release
    monkeypatch.setattr(release_tokens, "MAX_STRINGS", 3)
    with blocks_of(8), pytest.raises(InputError, match="more than 3 strings, more than privtool can number"):
        read_bytes(data)


def swapped_rows(release: Release) -> Release:
    chunk = next(ch for c in release.clusters for ch in c.record_chunks if len({tuple(r) for r in ch}) > 1)
    chunk.reverse()
    return release


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda obj: obj["clusters"][0].update(size=0), "invalid release at $.clusters[0].size: must be at least 1"),
        (lambda obj: obj["clusters"][1].update(id="c0"), "duplicate cluster id 'c0'"),
        (lambda obj: obj["joint_clusters"][0]["members"].append("zz"), "no cluster with id 'zz'"),
        (lambda obj: obj["joint_clusters"][0].update(id="c0"), "duplicate cluster id 'c0'"),
        (lambda obj: obj["joint_clusters"][0]["members"].append("c0"), "an item is repeated"),
        (lambda obj: obj["joint_clusters"][0].update(members=[]), "empty sub-record"),
        (lambda obj: obj["clusters"][0]["record_chunks"][0][0].append("b"), "an item is repeated"),
        (lambda obj: obj["clusters"][0]["record_chunks"][0].append([]), "empty sub-record"),
        (lambda obj: obj["clusters"][0]["term_chunk"].append(""), "empty item label"),
        (lambda obj: obj["clusters"][0].update(size=1), "2 sub-records in a cluster of size 1"),
        (lambda obj: obj["clusters"][0].update(size=2**31 - 1), "must be at most"),
        (lambda obj: obj["clusters"][0].update(extra=1), "unknown field"),
        (lambda obj: obj.update(records=[]), "publishes clusters, not records"),
        (lambda obj: obj["clusters"][1].update(size=True, record_chunks=[]), "expected an integer, found bool"),
        (lambda obj: obj["clusters"][1].update(size=0, record_chunks=[]), "must be at least 1, found 0"),
        (lambda obj: obj["joint_clusters"][0]["shared_chunks"][0].append("x"), "expected an array, found str"),
        (lambda obj: obj["clusters"][1]["term_chunk"].append(["t"]), "expected a string, found list"),
    ],
)
@pytest.mark.parametrize("layout", [json_text, json.dumps])
def test_what_the_validating_reader_refuses_the_fast_reader_refuses_with_its_message(
    tmp_path: Path, change: object, problem: str, layout: object
) -> None:
    release = Release(
        "disassociated",
        {"k": 2},
        {},
        {},
        [Cluster("c0", 2, [[["a", "b"], ["b"]]], ["t"]), Cluster("c1", 2, [[["a"], ["a"]]], [])],
        [JointCluster("j0", ["c0", "c1"], [[["x"], ["x"]]])],
    )
    obj = release.to_json()
    change(obj)  # type: ignore[operator]
    path = tmp_path / "r.json"
    path.write_text(layout(obj), encoding="utf-8")  # type: ignore[operator]
    with pytest.raises(InputError, match="invalid release at") as caught:
        read_release(path)
    assert problem in str(caught.value)


def test_a_valid_file_in_another_layout_reads_the_validating_way_and_writes_canonically(tmp_path: Path) -> None:
    release = Release(
        "disassociated", {"k": 2}, {}, {}, [Cluster("c0", 3, [[["b"], ["a", "b"], ["a"]]], ["t", "s"])], []
    )
    canonical = canonical_text(release)
    obj = json.loads(canonical)
    obj["clusters"][0]["record_chunks"][0].reverse()  # rows out of canonical order
    path = tmp_path / "r.json"
    for text in (json.dumps(obj, indent=1), json_text(obj)):
        path.write_text(text, encoding="utf-8")
        assert parse_canonical(path.read_bytes()) is None
        read = read_release(path)
        assert read.clusters[0].record_chunks[0] == obj["clusters"][0]["record_chunks"][0]  # as in the file
        assert read.dumps().encode("utf-8") == canonical


def test_version_1_files_read_the_validating_way(tmp_path: Path) -> None:
    release = Release("sanitized", {"k": 2}, {}, {}, records=[["a"]])
    obj = {key: value for key, value in release.to_json().items() if key != "claims"}
    obj["format"] = "privtool-release/1"
    data = json_text(obj).encode("utf-8")
    assert parse_canonical(data) is None  # the envelope is not version 2's
    read = read_bytes(data)
    assert read.format == "privtool-release/1" and read.records == [["a"]] and read.claims_derived


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(1, 5), min_size=2, max_size=2), max_size=60), st.booleans(), st.integers(1, 100))
def test_hashing_finds_the_distinct_keys(rows: list[list[int]], collide: bool, expected: int) -> None:
    """Whatever the number of distinct keys expected (the first table's size),
    the rows are numbered by the distinct keys."""
    keys = np.array(rows, dtype=np.uint64).reshape(-1, 2)[:, : 1 + collide]
    multipliers = release_tokens._HASHES
    if collide:  # one multiplier, 1, which sends every small key to slot 0: the rounds give up, np.unique ends
        release_tokens._HASHES = (1,)
    try:
        number, distinct = release_tokens._hash_distinct(keys, expected)
    finally:
        release_tokens._HASHES = multipliers
    assert number.dtype == np.int32
    assert np.array_equal(distinct[number], keys)
    assert len(distinct) == len(np.unique(keys, axis=0))


# ---------------------------------------------------------------- another layout, read in bulk
# A file not in canonical layout (another JSON writer, an order changed) is parsed
# with json and its content checked and converted in bulk (privtool.release_lists):
# the same release and arrays as the validating walk, or the walk's error.

ODD_VALUES = st.sampled_from(
    [
        *("", "a", "0", "c0", "c1", "j0", 0, 1, 2, -1, 2**31, 1.5, True, None),
        *([], [""], ["a", "a"], ["c0"], [[]], {}, {"a": 1}),
    ]
).map(copy.deepcopy)  # a fresh copy per draw: changed_object edits what it inserted (a shared {} once held itself)


def other_layout(obj: object, how: int) -> bytes:
    """The object as another writer would write it."""
    if how == 0:
        return json.dumps(obj).encode("utf-8")  # ", " and ": ", non-ASCII escaped
    if how == 1:
        return json.dumps(obj, indent=1, ensure_ascii=False).encode("utf-8")
    return json_text(obj).encode("utf-8")  # canonical separators, order as it is


def places(value: object, out: list[tuple[object, object]]) -> list[tuple[object, object]]:
    """Every (container, key or index) inside a parsed JSON value."""
    if isinstance(value, dict):
        for key in value:
            out.append((value, key))
            places(value[key], out)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            out.append((value, i))
            places(child, out)
    return out


def changed_object(release: Release, data: st.DataObject) -> dict:
    """The release's JSON object with rows shuffled and up to three values
    replaced, deleted, repeated or added anywhere in the content."""
    obj = json.loads(canonical_text(release))
    for _ in range(data.draw(st.integers(1, 3))):
        content = places({key: obj[key] for key in ("clusters", "joint_clusters", "records") if key in obj}, [])
        fields = [(container, key) for container, key in content if isinstance(container, dict)]
        pick = fields if fields and data.draw(st.booleans()) else content  # an id, a size, members... half the time
        container, key = data.draw(st.sampled_from(pick)) if pick else (obj, "clusters")
        how = data.draw(st.sampled_from(["replace", "delete", "repeat", "add", "reverse"]))
        if how == "replace":
            container[key] = data.draw(ODD_VALUES)  # type: ignore[index]
        elif how == "delete":
            del container[key]  # type: ignore[attr-defined]
        elif how == "repeat" and isinstance(container, list):
            container.insert(key, container[key])  # type: ignore[arg-type]
        elif how == "add" and isinstance(container, dict):
            container[data.draw(st.sampled_from(["id", "size", "extra", "records", "hierarchy"]))] = data.draw(
                ODD_VALUES
            )
        elif how == "reverse" and isinstance(container[key], list):  # type: ignore[index]
            container[key].reverse()  # type: ignore[index]
    return obj


def same_arrays(a: ReleaseArrays, b: ReleaseArrays) -> bool:
    return all(
        np.array_equal(getattr(a, name), getattr(b, name)) if isinstance(getattr(a, name), np.ndarray)
        else getattr(a, name) == getattr(b, name)
        for name in ("labels", "items", "row_offsets", "chunk_offsets", "owner_offsets", "term_items",
                     "term_offsets", "cluster_ids", "cluster_sizes", "joint_ids", "joint_members")
    )  # fmt: skip


@st.composite
def joined_releases(draw: st.DrawFn) -> Release:
    """Disassociated releases with two to four clusters and one or two joint clusters."""
    clusters = [
        Cluster(f"c{c}", draw(st.integers(1, 4)), draw(st.lists(CHUNK.filter(lambda ch: len(ch) <= 4), max_size=2)),
                draw(st.lists(LABELS, max_size=3, unique=True)))
        for c in range(draw(st.integers(2, 4)))
    ]  # fmt: skip
    for c in clusters:
        c.size = max([c.size, *map(len, c.record_chunks)])
    ids = [c.id for c in clusters]
    joints = [
        JointCluster(f"j{j}", draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3, unique=True)),
                     draw(st.lists(CHUNK, max_size=2)))
        for j in range(draw(st.integers(1, 2)))
    ]  # fmt: skip
    return Release("disassociated", {"k": 2}, {}, {"records_in": 9}, clusters, joints)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(releases(), joined_releases()), st.integers(0, 2), st.data())
def test_a_file_in_another_layout_reads_in_bulk_as_it_reads_validated(
    release: Release, layout: int, data: st.DataObject
) -> None:
    text = other_layout(changed_object(release, data), layout)
    bulk, walked = outcome(read_bytes, text), outcome(validating, text)
    assert bulk == walked
    if bulk[0] == "release":
        assert isinstance(bulk[1], Release) and isinstance(walked[1], Release)
        assert same_arrays(bulk[1].arrays, walked[1].arrays)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(releases(), st.data())
def test_a_mutated_file_in_another_layout_reads_as_it_reads_validated(release: Release, data: st.DataObject) -> None:
    text = mutated(release, data)
    spaced = text.replace(b",", b", ").replace(b":", b": ")  # no longer the canonical layout
    assert outcome(read_bytes, spaced) == outcome(validating, spaced)


def test_the_bulk_reader_reads_every_valid_file_in_another_layout() -> None:
    """It is the path taken, not the walk: valid content never falls back."""
    release = Release(
        "disassociated",
        {"k": 2},
        {},
        {},
        [Cluster("c0", 3, [[["b", "a"], ["a"]], [["é"]]], ["t"]), Cluster("c1", 2, [], ["t", "u"])],
        [JointCluster("j0", ["c1", "c0"], [[["x"], ["y", "x"]]])],
    )
    obj = json.loads(canonical_text(release))
    obj["clusters"][0]["record_chunks"][0].reverse()
    parsed = json.loads(json.dumps(obj))
    arrays = disassociated_arrays(parsed, 2**31 - 1)
    assert arrays is not None and same_arrays(arrays, validating(json.dumps(obj).encode()).arrays)
    assert records_arrays({"records": [["b", "a"], []]}) is not None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.integers(0, 5), max_size=5), max_size=8), st.data())
def test_repeats_are_found_in_the_rows_out_of_order_alone(rows: list[list[int]], data: st.DataObject) -> None:
    """Rows in increasing order, some changed by hand (shuffled, an item
    repeated or added): a code repeats inside a row exactly when some row holds
    it twice, though only the rows out of order are sorted."""
    rows = [sorted(set(row)) for row in rows]
    for row in rows:
        if row and data.draw(st.booleans()):
            row.append(data.draw(st.sampled_from([*row, 6])))  # repeated, or larger (still increasing)
            data.draw(st.randoms()).shuffle(row)
    items = np.array([x for row in rows for x in row], dtype=np.int32)
    offsets = np.cumsum([0, *map(len, rows)], dtype=np.int64)
    assert _distinct_in_rows(items, offsets, 7) == all(len(set(row)) == len(row) for row in rows)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=40), st.data())
def test_words_read_past_the_end_as_zero_bytes(data: bytes, draw: st.DataObject) -> None:
    """The word from any position (and shift) is the 8 bytes there, the bytes
    past the end zero: against a padded copy."""
    shift = draw.draw(st.integers(0, 9))
    inside = st.integers(0, len(data) - 1 - shift)  # every word starts within the data
    positions = sorted(draw.draw(st.lists(inside, max_size=12))) if len(data) > shift else []
    padded = data + bytes(8)
    expected = [int.from_bytes(padded[p + shift : p + shift + 8], "little") for p in positions]
    words = release_tokens._Words(data).at(np.array(positions, dtype=np.int64), shift)
    assert words.tolist() == expected
