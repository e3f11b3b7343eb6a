"""``privtool.memo``: what components share within one assessment is built once
per release there, and afresh outside (a changed release is never served an old index)."""

from __future__ import annotations

from privtool.memo import shared, sharing


class _Subject:
    pass


def test_built_once_per_subject_inside_a_sharing_block() -> None:
    built: list[int] = []

    def build() -> int:
        built.append(1)
        return len(built)

    a, b = _Subject(), _Subject()
    with sharing():
        assert shared(a, "views", build) == shared(a, "views", build) == 1
        assert shared(b, "views", build) == 2  # another subject
        assert shared(a, "other", build) == 3  # another key
    assert shared(a, "views", build) == 4  # outside: afresh every time
    assert shared(a, "views", build) == 5
    with sharing():
        assert shared(a, "views", build) == 6  # a new block forgets the last one's work


def test_blocks_nest_without_leaking() -> None:
    subject = _Subject()
    with sharing():
        outer = shared(subject, "k", object)
        with sharing():
            assert shared(subject, "k", object) is not outer
        assert shared(subject, "k", object) is outer
