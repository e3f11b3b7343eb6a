"""A large text encoded a piece at a time (privtool.atomic.text_pieces): the
SHA-256 of the pieces and the file written from them are those of the whole
text encoded at once, whatever the piece size and the characters."""

from __future__ import annotations

import hashlib
from pathlib import Path
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from privtool import atomic
from privtool.atomic import write_texts_atomic
from privtool.release import text_sha256

TEXTS = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)


@given(TEXTS, st.integers(1, 8))
def test_pieces_hash_and_write_as_the_whole_text(text: str, piece: int) -> None:
    with mock.patch.object(atomic, "TEXT_PIECE_CHARS", piece):
        assert "".join(atomic.text_pieces(text)) == text
        assert text_sha256(text) == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_a_file_is_written_from_its_pieces(tmp_path: Path) -> None:
    text = "r\u00e9sum\u00e9 \U0001f600 line\n" * 50
    with mock.patch.object(atomic, "TEXT_PIECE_CHARS", 7):
        write_texts_atomic([(tmp_path / "out.json", text)])
    assert (tmp_path / "out.json").read_bytes() == text.encode("utf-8")
