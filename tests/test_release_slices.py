"""A disassociated release's content written and read back a slice at a time
(privtool.release_slices, issue 20) against the whole file.

Oracle: :func:`privtool.release_bytes.canonical_bytes` of the whole release
(itself tested against the nested writer in test_release_fast_io.py). The
content :func:`checked_content` assembles from slices is byte for byte the
content of the whole file, however small the slices; and it declines (returns
``None``, so that the caller reads the whole file back and names the problem)
exactly when the whole file does not read back the fast way."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_release_fast_io import releases

import privtool.release_slices as slices
from privtool.context import Context
from privtool.dataset import Dataset
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
    or None when the whole file does not read back the fast way."""
    if not arrays.is_canonical():
        return None
    text = canonical_bytes(ENVELOPE, "disassociated", arrays, None)
    if parse_canonical(text) is None:
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
    way (the caller then reads it back whole and names the problem)."""
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


def test_an_id_repeated_across_slices_is_declined(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each slice of one cluster reads back; the id they share is caught across slices."""
    release = Release("disassociated", clusters=[Cluster("c0", 2, [[["a"]]]), Cluster("c0", 2, [[["b"]]])])
    arrays = release.arrays
    assert whole_content(arrays) is None
    assert with_slices(1, arrays, monkeypatch) is None
    assert with_slices(1, Release("disassociated", clusters=[Cluster("c0", 2, [[["a"]]])]).arrays, monkeypatch)
