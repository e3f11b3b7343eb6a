"""A disassociated release's content written and read back a slice at a time
(privtool.release_slices, issue 20) against the whole file.

Oracle: :func:`privtool.release_bytes.canonical_bytes` of the whole release
(itself tested against the nested writer in test_release_fast_io.py). The
content :func:`checked_content` assembles from slices is byte for byte the
content of the whole file, however small the slices; and it declines (returns
``None``, so that the caller reads the whole file back and names the problem)
exactly when the whole file does not read back the fast way."""

from __future__ import annotations

import dataclasses
import json
from contextlib import closing
from functools import partial

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_release_fast_io import releases, validating

import privtool.release as release_module
import privtool.release_slices as slices
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.errors import InputError
from privtool.executors import ProcessExecutor
from privtool.pipeline import run_method
from privtool.registry import load_registry
from privtool.release import Cluster, Release, json_text
from privtool.release_arrays import ReleaseArrays
from privtool.release_bytes import canonical_bytes, parse_canonical

ENVELOPE = json_text(
    {"format": "privtool-release/2", "kind": "disassociated", "claims": [], "params": {}, "provenance": {}, "stats": {}}
)


def whole_content(arrays: ReleaseArrays) -> str | None:
    """The content part of the whole file (``"clusters":[...],"joint_clusters":[...]``),
    or None when the whole file does not read back the fast way; when a label
    needs a JSON escape (which the fast reader does not read), when the file
    does not read back the validating way as the same release or the release
    with its labels renamed in order to plain ones does not read back the fast way."""
    if not arrays.is_canonical():
        return None
    text = canonical_bytes(ENVELOPE, "disassociated", arrays, None)
    if parse_canonical(text) is None:
        if not any(json.dumps(label, ensure_ascii=False)[1:-1] != label for label in arrays.labels):
            return None
        try:
            back = validating(text)
        except InputError:
            return None
        assert back.to_json()["clusters"] == Release.from_arrays(arrays, "disassociated").to_json()["clusters"]
        plain = tuple(f"p{code:06d}" for code in range(len(arrays.labels)))  # text labels sort as text
        renamed = canonical_bytes(ENVELOPE, "disassociated", dataclasses.replace(arrays, labels=plain), None)
        if parse_canonical(renamed) is None:
            return None
    return text[len(ENVELOPE.encode("utf-8")) - 1 : -2].decode("utf-8")


def with_slices(limit: int, arrays: ReleaseArrays, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """:func:`checked_content` with slices of at most ``limit`` item occurrences."""
    with monkeypatch.context() as patch:
        patch.setattr(slices, "SLICE_OCCURRENCES", limit)
        return slices.checked_content(arrays)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(release=releases().filter(lambda r: r.kind == "disassociated"), limit=st.sampled_from([1, 2, 3, 5, 1_000_000]))
def test_slices_give_the_whole_files_content(release: Release, limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random releases (labels that need escaping, members that are no
    cluster, empty chunks and clusters included): the same content as the
    whole file, or None exactly when the whole file is not read back the fast
    way, or for labels that need escapes not the validating way (the caller
    then reads it back whole and names the problem)."""
    arrays = release.canonical().arrays
    assert with_slices(limit, arrays, monkeypatch) == whole_content(arrays)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(st.lists(st.integers(0, 12), min_size=1, max_size=6), min_size=4, max_size=60),
    limit=st.sampled_from([1, 4, 40]),
)
def test_disassociation_releases_slice_to_the_same_content(
    records: list[list[int]], limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Releases disassociation makes (joint clusters included: REFINE is on)
    are read back the fast way, and their slices give the whole file's content."""
    options = {"k": 2, "m": 2, "max_cluster_size": 4}
    outcome = run_method(load_registry(), Dataset.from_records(records), "disassociation", options, Context())
    arrays = outcome.release.arrays
    got = with_slices(limit, arrays, monkeypatch)
    assert got is not None
    assert got == whole_content(arrays)
    assert outcome.release_text.endswith("," + got + "}\n")


def test_slices_through_a_process_pool_give_the_serial_content(monkeypatch: pytest.MonkeyPatch) -> None:
    """The slices are built as the map asks for them (:class:`~privtool.release_slices.Slices`)
    and checked in worker processes: the same content as serially."""
    records = [[(7 * r + i) % 13 for i in range(1 + r % 5)] for r in range(80)]
    options = {"k": 2, "m": 2, "max_cluster_size": 4}
    arrays = run_method(
        load_registry(), Dataset.from_records(records), "disassociation", options, Context()
    ).release.arrays
    monkeypatch.setattr(slices, "SLICE_OCCURRENCES", 8)
    assert len(slices.Slices(arrays)) >= 4
    with closing(ProcessExecutor(2)) as pool:
        got = slices.checked_content(arrays, partial(Context(executor=pool).map, description="checking"))
    assert got is not None and got == slices.checked_content(arrays)


def test_an_id_repeated_across_slices_is_declined(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each slice of one cluster reads back; the id they share is caught across slices."""
    release = Release("disassociated", clusters=[Cluster("c0", 2, [[["a"]]]), Cluster("c0", 2, [[["b"]]])])
    arrays = release.arrays
    assert whole_content(arrays) is None
    assert with_slices(1, arrays, monkeypatch) is None
    assert with_slices(1, Release("disassociated", clusters=[Cluster("c0", 2, [[["a"]]])]).arrays, monkeypatch)


def test_labels_that_need_escapes_are_checked_without_the_validating_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """Disassociation of records whose labels hold ``"``, ``\\`` and a tab is
    stamped without reading anything back the validating way (before: the
    whole release went through it), and the release text is what the nested
    writer makes and reads back as the same release."""
    records = [['q"1', "a\\b", "t\tab", "x"], ['q"1', "a\\b", "y"], ['q"1', "t\tab", "x"], ['q"1', "a\\b", "x"]] * 3

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the validating reader was used")

    with monkeypatch.context() as patch:
        patch.setattr(release_module, "release_from_json", refused)
        patch.setattr("privtool.pipeline.release_from_json", refused)
        options = {"k": 2, "m": 2, "max_cluster_size": 4}
        outcome = run_method(load_registry(), Dataset.from_records(records), "disassociation", options, Context())
    text = outcome.release_text
    assert text is not None and '"q\\"1"' in text
    back = validating(text.encode("utf-8"))
    assert back.to_json() == outcome.release.to_json()
    assert json_text(back.to_json()) == text


def test_stand_in_labels_keep_what_the_reader_checks_of_labels() -> None:
    """Labels that need escapes get stand-ins only when they are what the
    reader accepts: in canonical order, non-empty, Unicode text."""
    arrays = Release("disassociated", clusters=[Cluster("c0", 2, [[['a"', "b"]]])]).arrays
    plain = slices.without_escapes(arrays)
    assert plain is not None and plain.labels == ("0", "1")
    assert slices.without_escapes(dataclasses.replace(arrays, labels=("b", 'a"'))) is None  # out of order
    assert slices.without_escapes(dataclasses.replace(arrays, labels=("", 'a"'))) is None  # empty
    assert slices.without_escapes(dataclasses.replace(arrays, labels=('a"', "b\\ud800"))) is not None  # text
    assert slices.without_escapes(dataclasses.replace(arrays, labels=('a"', "b" + chr(0xD800)))) is None  # lone
    plain_labels = Release("disassociated", clusters=[Cluster("c0", 2, [[["a", "b"]]])]).arrays
    assert slices.without_escapes(plain_labels) is plain_labels
