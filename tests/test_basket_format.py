"""The ``basket`` format: whitespace-separated labels of any kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.dataset import Dataset
from privtool.errors import OutputError
from privtool.io import read_dataset, write_dataset

label = st.text(st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")), min_size=1, max_size=5).filter(
    lambda s: not any(c.isspace() for c in s)
)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(label, max_size=5), min_size=1, max_size=8).filter(lambda rows: any(rows)))
def test_round_trip(registry, tmp_path_factory, rows) -> None:
    path = tmp_path_factory.mktemp("basket") / "data.txt.gz"
    dataset = Dataset.from_records(rows)
    write_dataset(registry, dataset, path)
    assert read_dataset(registry, path).to_label_records() == dataset.to_label_records()


def test_label_with_space_cannot_be_written(registry, tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="cannot be written as basket"):
        write_dataset(registry, Dataset.from_records([["a b"]]), tmp_path / "x.basket")
    assert not (tmp_path / "x.basket").exists()
