"""Built-in dataset formats.

* ``fimi``: one record per line, items as space-separated tokens (the FIMI
  repository's ``.dat``). Any token without whitespace is a label.
"""

from __future__ import annotations

from typing import IO, Any

from privtool.components import Format
from privtool.dataset import Dataset
from privtool.errors import InputError
from privtool.hookspecs import hookimpl


class Fimi(Format):
    name = "fimi"
    summary = "one record per line, items separated by spaces (FIMI .dat)"
    extensions = ("dat", "fimi", "txt")

    def read(self, stream: IO[str], source: str, params: dict[str, Any]) -> Dataset:
        records = [line.split() for line in stream]
        return Dataset.from_records(records)

    def write(self, dataset: Dataset, stream: IO[str], params: dict[str, Any]) -> None:
        for record in dataset.to_label_records():
            stream.write(" ".join(record) + "\n")


@hookimpl
def privtool_formats() -> list[Format]:
    return [Fimi()]
