"""Whether a disassociated release's arrays read back as themselves, decided on
the arrays (privtool.release_rules, issue 20).

Oracle: write the whole file (:func:`privtool.release_bytes.canonical_bytes`),
parse it (:func:`privtool.release_bytes.parse_canonical`) and compare what was
read with the arrays (the same ids, sizes and offsets; the same label at every
item occurrence, numbered in the same order: the reader numbers the labels the
release uses, so the arrays read back as themselves but for labels no
occurrence uses). On random arrays, broken ones included (unsorted and
repeated items, empty rows, rows out of order, out-of-range codes, offsets
that do not cut, sizes out of range, ids empty, repeated or needing escapes,
members unknown, repeated or missing, labels repeated, out of order, empty or
needing escapes), :func:`reads_back` says yes exactly when the oracle does; and
each of its rules is needed (dropping it lets a broken example through)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import privtool.release_rules as rules
from privtool.arrays import offsets_of
from privtool.dataset import label_sort_key
from privtool.release import Cluster, JointCluster, Release, json_text
from privtool.release_arrays import ReleaseArrays, frozen
from privtool.release_bytes import canonical_bytes, parse_canonical

ENVELOPE = json_text(
    {"format": "privtool-release/2", "kind": "disassociated", "claims": [], "params": {}, "provenance": {}, "stats": {}}
)
LABELS = st.one_of(
    st.integers(0, 12).map(str),
    st.sampled_from(["7", "007", "a", "b", "é", "日本", "a" * 9, "x y", "", 'q"', "a\\b", "t\tb", chr(0xD800)]),
    st.text(max_size=4),
)
BAD_IDS = ["", 'c"0', "c\\0", "c\x01", "c0", "c1", "j0", chr(0xD800), "é"]


def read_back_as_itself(arrays: ReleaseArrays) -> bool:
    """The oracle: the whole file written, parsed and compared with ``arrays``
    (a file the writer cannot make does not read back)."""
    try:
        text = canonical_bytes(ENVELOPE, "disassociated", arrays, None)
    except (IndexError, ValueError):  # offsets or codes the writer cannot follow; UnicodeEncodeError
        return False
    parsed = parse_canonical(text)
    if parsed is None:
        return False
    read = parsed[1]
    code = {label: i for i, label in enumerate(arrays.labels)}
    remap = np.array([code[label] for label in read.labels] or [0], dtype=np.int64)
    return (
        bool(np.all(np.diff(remap) > 0))  # the reader's numbering is the arrays' with unused labels left out
        and read.cluster_ids == arrays.cluster_ids
        and read.joint_ids == arrays.joint_ids
        and read.joint_members == arrays.joint_members
        and all(
            np.array_equal(getattr(read, name), getattr(arrays, name))
            for name in ("cluster_sizes", "row_offsets", "chunk_offsets", "owner_offsets", "term_offsets")
        )
        and np.array_equal(remap[read.items], arrays.items)
        and np.array_equal(remap[read.term_items], arrays.term_items)
    )


@st.composite
def contents(draw: st.DrawFn) -> ReleaseArrays:
    """Arrays of a disassociated release's content: canonical, or (half the
    time) with breakages, each drawn with a small chance."""
    intact = draw(st.booleans())

    def broken() -> bool:
        return not intact and draw(st.integers(0, 5)) == 0

    labels = draw(st.lists(LABELS, max_size=7))
    if not broken():
        labels = sorted(set(labels), key=label_sort_key)
    codes = st.integers(0, max(len(labels) - 1, 0))

    def chunk() -> list[list[int]]:
        if not labels:
            return []
        rows = draw(st.lists(st.lists(codes, max_size=4), max_size=4))
        if not broken():
            rows = [sorted(set(row)) for row in rows]
        if not broken():
            rows = [row for row in rows if row]
        return rows if broken() else sorted(rows)

    n = draw(st.integers(0, 4))
    record_chunks = [draw(st.lists(st.builds(chunk), max_size=3)) for _ in range(n)]
    sizes = [max([len(c) for c in chunks] + [1]) + draw(st.integers(0, 2)) for chunks in record_chunks]
    if n and broken():
        sizes[draw(st.integers(0, n - 1))] = draw(st.sampled_from([-1, 0, 2**31 - 1, 2**31, 10**10]))
    terms = [sorted(set(draw(st.lists(codes, max_size=3)))) if labels else [] for _ in range(n)]
    if n and labels and broken():
        terms[draw(st.integers(0, n - 1))] = draw(st.lists(codes, max_size=3))
    cluster_ids = [f"c{i}" for i in range(n)]
    joint_ids, members, shared = [], [], []
    for j in range(draw(st.integers(0, 2)) if n else 0):
        joint_ids.append(f"j{j}")
        named = draw(st.lists(st.sampled_from(cluster_ids), min_size=1, max_size=3, unique=True))
        if broken():
            named = draw(st.lists(st.sampled_from([*cluster_ids, "zz"]), max_size=3))
        members.append(tuple(named))
        shared.append(draw(st.lists(st.builds(chunk), max_size=2)))
    for ids in (cluster_ids, joint_ids):
        if ids and broken():
            ids[draw(st.integers(0, len(ids) - 1))] = draw(st.sampled_from(BAD_IDS))
    chunks = [c for chunks in (*record_chunks, *shared) for c in chunks]
    rows = [row for c in chunks for row in c]
    fields = {
        "items": [code for row in rows for code in row],
        "row_offsets": offsets_of(map(len, rows)),
        "chunk_offsets": offsets_of(map(len, chunks)),
        "owner_offsets": offsets_of(map(len, (*record_chunks, *shared))),
        "term_items": [code for row in terms for code in row],
        "term_offsets": offsets_of(map(len, terms)),
    }
    for name in ("items", "term_items"):
        if fields[name] and broken():
            fields[name][draw(st.integers(0, len(fields[name]) - 1))] = draw(st.sampled_from([-1, len(labels)]))
    if broken():
        name = draw(st.sampled_from(["row_offsets", "chunk_offsets", "owner_offsets", "term_offsets"]))
        offsets = np.array(fields[name])
        offsets[draw(st.integers(0, len(offsets) - 1))] += draw(st.sampled_from([-1, 1]))
        fields[name] = offsets
    return ReleaseArrays(
        labels=tuple(labels),
        items=frozen(fields["items"], np.int32),
        row_offsets=frozen(fields["row_offsets"], np.int64),
        chunk_offsets=frozen(fields["chunk_offsets"], np.int64),
        owner_offsets=frozen(fields["owner_offsets"], np.int64),
        term_items=frozen(fields["term_items"], np.int32),
        term_offsets=frozen(fields["term_offsets"], np.int64),
        cluster_ids=tuple(cluster_ids),
        cluster_sizes=frozen(sizes, np.int64),
        joint_ids=tuple(joint_ids),
        joint_members=tuple(members),
    )


# Labels used out of canonical order ('1' before '0'): the same texts read back,
# numbered the other way round, which an oracle comparing texts alone accepted.
_USED_OUT_OF_ORDER = ReleaseArrays(
    labels=("1", "0"),
    items=frozen([1], np.int32),
    row_offsets=frozen([0, 1], np.int64),
    chunk_offsets=frozen([0, 1], np.int64),
    owner_offsets=frozen([0, 0, 0, 1], np.int64),
    term_items=frozen([0], np.int32),
    term_offsets=frozen([0, 1], np.int64),
    cluster_ids=("c0",),
    cluster_sizes=frozen([1], np.int64),
    joint_ids=("j0", "j1"),
    joint_members=(("c0",), ("c0",)),
)


@settings(max_examples=1500, deadline=None)
@given(arrays=contents())
@example(arrays=_USED_OUT_OF_ORDER)
def test_the_rules_accept_exactly_what_reads_back(arrays: ReleaseArrays) -> None:
    """Random arrays, canonical and broken: the rules' verdict is the oracle's."""
    assert rules.reads_back(arrays) == read_back_as_itself(arrays)


def _arrays(clusters: list[Cluster], joints: list[JointCluster]) -> ReleaseArrays:
    return Release("disassociated", clusters=clusters, joint_clusters=joints).arrays


GOOD = _arrays(
    [Cluster("c0", 2, [[["a", "b"], ["b"]]], ["c"]), Cluster("c1", 1, [], [])],
    [JointCluster("j0", ["c0", "c1"], [[["a"]]])],
)
"""A release that reads back; each example below breaks one rule of it."""

BROKEN = {
    "offsets_fit": [
        dataclasses.replace(  # an empty row
            GOOD, items=frozen([0, 1, 0], np.int32), row_offsets=frozen([0, 0, 2, 3], np.int64)
        ),
        dataclasses.replace(GOOD, term_offsets=frozen([0, 1], np.int64)),  # a term chunk missing
        dataclasses.replace(GOOD, cluster_sizes=frozen([2], np.int64)),
        dataclasses.replace(GOOD, owner_offsets=frozen([0, 1, 1, 1], np.int64)),  # a chunk left out
    ],
    "rows_fit": [
        dataclasses.replace(GOOD, items=frozen([1, 0, 1, 0], np.int32)),  # a row decreasing
        dataclasses.replace(GOOD, items=frozen([1, 1, 1, 0], np.int32)),  # a row repeating
        dataclasses.replace(GOOD, items=frozen([1, 2, 0, 0], np.int32)),  # rows of a chunk out of order
    ],
    "sizes_fit": [
        dataclasses.replace(GOOD, cluster_sizes=frozen([1, 1], np.int64)),  # more rows than records
        dataclasses.replace(GOOD, cluster_sizes=frozen([2, 0], np.int64)),
        dataclasses.replace(GOOD, cluster_sizes=frozen([2, 2**31 - 2], np.int64)),
        dataclasses.replace(GOOD, cluster_sizes=frozen([2, 2**63 - 1], np.int64)),  # their sum wraps around
    ],
    "ids_fit": [
        dataclasses.replace(GOOD, cluster_ids=("c0", "c0"), joint_members=(("c0",),)),
        dataclasses.replace(GOOD, cluster_ids=("c0", chr(0xD800))),  # not UTF-8 text
        dataclasses.replace(GOOD, cluster_ids=("c0", "")),
        dataclasses.replace(GOOD, cluster_ids=("c0", 'c"1')),
        dataclasses.replace(GOOD, joint_ids=("c1",)),
        dataclasses.replace(GOOD, joint_members=(("c0", "c0"),)),
        dataclasses.replace(GOOD, joint_members=(("c0", "c9"),)),
        dataclasses.replace(GOOD, joint_members=((),)),
    ],
    "labels_fit": [
        dataclasses.replace(GOOD, items=frozen([0, 3, 1, 0], np.int32)),  # no such label
        dataclasses.replace(GOOD, term_items=frozen([-1], np.int32)),
        dataclasses.replace(GOOD, labels=("b", "a", "c")),  # out of canonical order
        dataclasses.replace(GOOD, labels=("a", "b", "")),
        dataclasses.replace(GOOD, labels=("a", "b", 'c"')),
        dataclasses.replace(GOOD, labels=("a", "b", "c", "a")),  # "a" is not the last of its text
        dataclasses.replace(GOOD, labels=("a", "b", "c", chr(0xD800))),
    ],
}


def test_the_good_example_reads_back() -> None:
    assert read_back_as_itself(GOOD) and rules.reads_back(GOOD)


@pytest.mark.parametrize(
    "arrays",
    [
        dataclasses.replace(GOOD, joint_members=(("c0", "c1"), ("c0",))),
        dataclasses.replace(GOOD, joint_ids=("j0", "j1")),
        dataclasses.replace(GOOD, cluster_sizes=frozen([2, 1, 1], np.int64)),
        dataclasses.replace(GOOD, term_offsets=frozen([0, 1, 1, 1], np.int64)),
    ],
)
def test_arrays_of_other_lengths_are_refused(arrays: ReleaseArrays) -> None:
    """One size, term chunk and owner per cluster, one member list per joint
    cluster: else the writer cannot follow the arrays."""
    assert not read_back_as_itself(arrays)
    assert not rules.offsets_fit(arrays) and not rules.reads_back(arrays)


@pytest.mark.parametrize(("rule", "arrays"), [(rule, a) for rule, examples in BROKEN.items() for a in examples])
def test_each_rule_is_needed(rule: str, arrays: ReleaseArrays, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each broken example does not read back, its rule refuses it, and
    without that rule the others would let it through."""
    assert not read_back_as_itself(arrays)
    assert not rules.reads_back(arrays)
    monkeypatch.setattr(rules, rule, lambda arrays: True)
    assert rules.reads_back(arrays)
