"""The papers' worked examples, shipped with the package.

Each example is a JSON file beside this module (package data): ``name``,
``title``, ``source`` (paper and table), ``notes`` (every transcription choice),
``records`` (lists of item labels), and where the paper gives them ``params``,
``hierarchy`` (``root`` and ``[child, parent]`` edges) and ``paper_results`` (the
published outputs, for golden tests).

>>> from privtool import examples
>>> examples.load("he-naughton").n_records
7
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from ..dataset import Dataset
from ..errors import ParameterError


@dataclass(frozen=True)
class Example:
    """One worked example; :meth:`dataset` builds its :class:`Dataset`."""

    name: str
    title: str
    source: str
    records: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    hierarchy_root: str | None = None
    hierarchy_edges: tuple[tuple[str, str], ...] = ()
    paper_results: dict[str, Any] = field(default_factory=dict)

    def dataset(self) -> Dataset:
        return Dataset.from_records(self.records)


def names() -> list[str]:
    """Names of the shipped examples, sorted."""
    folder = resources.files(__name__)
    return sorted(entry.name[: -len(".json")] for entry in folder.iterdir() if entry.name.endswith(".json"))


@cache
def get(name: str) -> Example:
    """The example called ``name``; a :class:`ParameterError` listing the names otherwise."""
    if name not in names():
        raise ParameterError(f"unknown example {name!r} (known: {', '.join(names())}).")
    obj = json.loads(resources.files(__name__).joinpath(f"{name}.json").read_text(encoding="utf-8"))
    hierarchy = obj.get("hierarchy") or {}
    return Example(
        name=obj["name"],
        title=obj["title"],
        source=obj["source"],
        records=tuple(tuple(record) for record in obj["records"]),
        notes=tuple(obj.get("notes", ())),
        params=dict(obj.get("params", {})),
        hierarchy_root=hierarchy.get("root"),
        hierarchy_edges=tuple((child, parent) for child, parent in hierarchy.get("edges", ())),
        paper_results=dict(obj.get("paper_results", {})),
    )


def load(name: str) -> Dataset:
    """The records of example ``name`` as a :class:`Dataset`."""
    return get(name).dataset()
