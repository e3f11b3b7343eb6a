"""``privtool stats`` streams its input: blocks of lines give the figures of the whole file.

Oracle: :func:`dataset_stats` of the whole file read at once (``read_dataset``),
on random files of every line-per-record format, compressed or not, cut into
blocks of a few bytes; errors name the line of the whole file.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.cli.stats import dataset_stats, stream_stats
from privtool.errors import InputError
from privtool.io import read_dataset, read_dataset_blocks
from privtool.registry import Registry

LINES = {
    "dat": lambda record: " ".join(str(item) for item in record),
    "basket": lambda record: " ".join(f"i{item}" for item in record),
    "jsonl": lambda record: json.dumps([f"i{item}" if item % 2 else item for item in record]),
}

records = st.lists(st.lists(st.integers(0, 40), max_size=9), min_size=1, max_size=60)


def write(path: Path, text: str, compress: bool) -> Path:
    if compress:
        path = path.with_name(path.name + ".gz")
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


@settings(max_examples=150, deadline=None)
@given(
    records,
    st.sampled_from(sorted(LINES)),
    st.booleans(),
    st.booleans(),
    st.integers(3, 40),
    st.integers(0, 12),
)
def test_streamed_stats_equal_the_whole_file(
    registry: Registry,
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[list[int]],
    ext: str,
    compress: bool,
    final_newline: bool,
    block_bytes: int,
    top: int,
) -> None:
    if not any(rows):
        rows[0].append(1)
    text = "\n".join(LINES[ext](record) for record in rows) + ("\n" if final_newline else "")
    path = write(tmp_path_factory.mktemp("stats") / f"data.{ext}", text, compress)
    whole = read_dataset(registry, path)
    blocks = list(read_dataset_blocks(registry, path, block_bytes=block_bytes))
    assert [r for block in blocks for r in block.to_label_records()] == whole.to_label_records()
    assert stream_stats(blocks, top) == dataset_stats(whole, top)


def test_blocks_are_many_on_a_real_file(registry: Registry, shared_data: Path) -> None:
    """The property on real data: bms-webview-1 (about 0.9 MB) in 64 KiB blocks."""
    path = shared_data / "bms-webview-1.dat.gz"
    blocks = list(read_dataset_blocks(registry, path, block_bytes=1 << 16))
    assert len(blocks) > 10
    assert stream_stats(blocks, 10) == dataset_stats(read_dataset(registry, path), 10)


def test_a_bad_line_is_named_by_its_line_in_the_whole_file(registry: Registry, tmp_path: Path) -> None:
    path = tmp_path / "data.dat"
    path.write_text("1 2\n" * 50 + "3 x\n" + "4\n" * 10)
    with pytest.raises(InputError) as whole:
        read_dataset(registry, path)
    with pytest.raises(InputError) as streamed:
        list(read_dataset_blocks(registry, path, block_bytes=16))
    assert str(streamed.value) == str(whole.value)
    assert streamed.value.line == 51


@pytest.mark.parametrize(("text", "problem"), [("\n \n", "the file is empty"), ("\n\n\n", "the file is empty")])
def test_an_empty_file_is_refused_as_when_read_whole(
    registry: Registry, tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "data.basket"
    path.write_text(text)
    with pytest.raises(InputError, match=problem):
        read_dataset(registry, path)
    with pytest.raises(InputError, match=problem):
        list(read_dataset_blocks(registry, path, block_bytes=3))


def test_records_without_items_are_refused_as_when_read_whole(registry: Registry, tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text("[]\n" * 20)
    with pytest.raises(InputError) as whole:
        read_dataset(registry, path)
    with pytest.raises(InputError) as streamed:
        list(read_dataset_blocks(registry, path, block_bytes=8))
    assert str(streamed.value) == str(whole.value) and "20 records" in str(whole.value)
