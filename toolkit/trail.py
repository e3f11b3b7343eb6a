"""The private audit trail, format ``privtool-trail/2`` (``/1`` is still read).

The trail holds what links a release back to its input and must never be
published: the cluster of each input record, the suppressed records, the ghost
records added by a sanitizer, the item occurrences removed, and every count
and provenance entry the release must not show (:mod:`privtool.publishable`).
``verify`` and ``audit`` read it to check faithfulness against the original.

Fields (all optional but ``format`` and ``release_sha256``):

* ``input_sha256``: content hash of the input dataset (:meth:`Dataset.content_sha256`);
* ``release_sha256``: SHA-256 of the release file this trail belongs to;
* ``seed``: the seed the release was made with (version 2);
* ``stats``: the method's counts that describe the original beyond what the
  release shows (term-chunk occurrences, what a sanitizer suppressed or
  invented...), version 2;
* ``cluster_of_record``: for each input record (by position), its cluster id or
  ``null`` when suppressed (held as arrays, :class:`~privtool.record_clusters.RecordClusters`;
  a list given to :class:`Trail` is converted);
* ``suppressed_records``: positions of input records not published;
* ``ghost_records``: ``{"cluster": id, "chunk": index, "items": [...]}`` for every
  sub-record a sanitizer invented;
* ``removed_items``: ``[record position, label]`` for every item occurrence removed;
* ``sensitive_rules``: ``[[antecedent labels], [consequent labels]]`` for every
  rule a rule-hiding sanitizer hid (a secret: the release's ``rule-hiding``
  claim states only the thresholds);
* ``notes``: free-form details a component wants to keep (a dict).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .atomic import write_text_atomic
from .errors import InputError
from .record_clusters import RecordClusters, parse_json_array
from .release import MAX_DEPTH, json_depth, parse_json_bytes, read_file_bytes

FORMAT = "privtool-trail/2"
READABLE_FORMATS = ("privtool-trail/1", FORMAT)
_LIST_FIELDS = ("cluster_of_record", "suppressed_records", "ghost_records", "removed_items", "sensitive_rules")


@dataclass
class Trail:
    """In-memory audit trail; see the module docstring for the fields."""

    release_sha256: str = ""
    input_sha256: str = ""
    cluster_of_record: RecordClusters = field(default_factory=lambda: RecordClusters.from_list(()))
    suppressed_records: list[int] = field(default_factory=list)
    ghost_records: list[dict[str, Any]] = field(default_factory=list)
    removed_items: list[list[Any]] = field(default_factory=list)
    sensitive_rules: list[list[list[str]]] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    stats: dict[str, Any] = field(default_factory=dict)

    def __setattr__(self, name: str, value: Any) -> None:
        """``cluster_of_record`` may be given as a list of ids and ``None``: it is coded."""
        if name == "cluster_of_record":
            value = RecordClusters.from_list(value)
        super().__setattr__(name, value)

    def to_json(self) -> dict[str, Any]:
        """The trail as a JSON object; ``cluster_of_record`` stays a
        :class:`RecordClusters` (a list for :func:`json.dumps`: :meth:`dumps` writes it)."""
        out: dict[str, Any] = {
            "format": FORMAT,
            "release_sha256": self.release_sha256,
            "input_sha256": self.input_sha256,
            "seed": self.seed,
            "stats": self.stats,
            "cluster_of_record": self.cluster_of_record,
            "suppressed_records": sorted(self.suppressed_records),
            "ghost_records": self.ghost_records,
            "removed_items": self.removed_items,
        }
        if self.sensitive_rules:
            out["sensitive_rules"] = self.sensitive_rules
        out["notes"] = self.notes
        return out

    def dumps(self) -> str:
        """The file's text: ``json.dumps`` of :meth:`to_json` (compact, UTF-8),
        with ``cluster_of_record`` written from its arrays."""
        obj = self.to_json()
        keys = list(obj)
        at = keys.index("cluster_of_record")
        head = _compact({key: obj[key] for key in keys[:at]})
        tail = _compact({key: obj[key] for key in keys[at + 1 :]})
        return f'{head[:-1]},"cluster_of_record":{self.cluster_of_record.json_text()},{tail[1:]}\n'


def _compact(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def rule_problem(value: Any) -> str | None:
    """What is wrong with one ``[[antecedent labels], [consequent labels]]`` rule, or None."""
    ok = (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(side, list) and side and all(isinstance(x, str) and x for x in side) for side in value)
    )
    if not ok:
        return "expected [[antecedent labels], [consequent labels]]"
    if set(value[0]) & set(value[1]):
        return "an item is on both sides of the rule"
    return None


GHOST_KEYS = {"cluster", "chunk", "items", "kind"}
"""The keys of a ghost entry; ``kind`` (``record`` or ``shared``) is optional."""


def _position(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _label(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _ghost_problem(ghost: Any) -> str | None:
    """What is wrong with one ghost entry's shape, or None. Whether its cluster
    and chunk exist is a question about the release (faithfulness checks it)."""
    if not isinstance(ghost, dict) or not {"cluster", "chunk", "items"} <= set(ghost) <= GHOST_KEYS:
        return "expected an object with cluster, chunk and items (and optionally kind)"
    if ghost.get("kind", "record") not in ("record", "shared"):
        return "expected record or shared at kind"
    if not _label(ghost["cluster"]):
        return "expected the id of a cluster or joint cluster at cluster"
    if not _position(ghost["chunk"]):
        return "expected a chunk index (a non-negative integer) at chunk"
    items = ghost["items"]
    if not isinstance(items, list) or not items or not all(map(_label, items)) or len(set(items)) != len(items):
        return "expected a non-empty list of distinct item labels at items"
    return None


def trail_from_json(obj: Any, source: object = "trail") -> Trail:
    """Validate a parsed trail object; the first problem names its JSON path."""

    def fail(path: str, problem: str) -> None:
        raise InputError(f"invalid trail at {path}: {problem}.", path=source)

    if not isinstance(obj, dict):
        fail("$", "expected an object")
    if obj.get("format") not in READABLE_FORMATS:
        fail("$.format", f"expected {FORMAT!r}, found {obj.get('format')!r}")
    known = {"format", "release_sha256", "input_sha256", "notes", "seed", "stats", *_LIST_FIELDS}
    for key in obj:
        if key not in known:
            fail(f"$.{key}", "unknown field")
    for key in _LIST_FIELDS:
        if key in obj and not isinstance(obj[key], list | RecordClusters):
            fail(f"$.{key}", "expected an array")
    for i, position in enumerate(obj.get("suppressed_records", [])):
        if not isinstance(position, int) or isinstance(position, bool) or position < 0:
            fail(f"$.suppressed_records[{i}]", "expected a record position (a non-negative integer)")
    clusters = obj.get("cluster_of_record", [])
    if isinstance(clusters, RecordClusters):
        bad = [n for n, name in enumerate(clusters.names) if not (isinstance(name, str) and name)]
        if bad:
            where = np.flatnonzero(np.isin(clusters.codes, bad))
            if len(where):
                fail(f"$.cluster_of_record[{where[0]}]", "expected a cluster id or null")
    else:
        for i, cid in enumerate(clusters):
            if cid is not None and not (isinstance(cid, str) and cid):
                fail(f"$.cluster_of_record[{i}]", "expected a cluster id or null")
    for i, ghost in enumerate(obj.get("ghost_records", [])):
        problem = _ghost_problem(ghost)
        if problem is not None:
            fail(f"$.ghost_records[{i}]", problem)
    for i, entry in enumerate(obj.get("removed_items", [])):
        if not (isinstance(entry, list) and len(entry) == 2 and _position(entry[0]) and _label(entry[1])):
            fail(f"$.removed_items[{i}]", "expected [record position, item label]")
    for i, rule in enumerate(obj.get("sensitive_rules", [])):
        problem = rule_problem(rule)
        if problem is not None:
            fail(f"$.sensitive_rules[{i}]", problem)
    for key in ("notes", "stats"):
        if key in obj and not isinstance(obj[key], dict):
            fail(f"$.{key}", "expected an object")
        if json_depth(obj.get(key, {}), MAX_DEPTH) > MAX_DEPTH:
            fail(f"$.{key}", f"nested more than {MAX_DEPTH} levels deep")
    seed = obj.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        fail("$.seed", "expected an integer or null")
    return Trail(
        release_sha256=str(obj.get("release_sha256", "")),
        input_sha256=str(obj.get("input_sha256", "")),
        cluster_of_record=RecordClusters.from_list(clusters),
        suppressed_records=list(obj.get("suppressed_records", [])),
        ghost_records=list(obj.get("ghost_records", [])),
        removed_items=list(obj.get("removed_items", [])),
        sensitive_rules=list(obj.get("sensitive_rules", [])),
        notes=dict(obj.get("notes", {})),
        seed=seed,
        stats=dict(obj.get("stats", {})),
    )


def read_trail(path: str | os.PathLike[str]) -> Trail:
    """Read and validate a trail file; ``cluster_of_record`` is read straight
    into arrays when the file is laid out as :meth:`Trail.dumps` writes it."""
    data = read_file_bytes(path, "trail")
    fast = _read_laid_out(data, path)
    return fast if fast is not None else trail_from_json(parse_json_bytes(data, Path(path), "trail"), source=path)


_KEY = b'"cluster_of_record":'


def _read_laid_out(data: bytes, path: str | os.PathLike[str]) -> Trail | None:
    """The trail in ``data`` when its ``cluster_of_record`` is a top-level key
    written once, holding only plain strings and nulls
    (:func:`~privtool.record_clusters.parse_json_array`), else ``None``. The rest of the
    file is parsed as JSON with that array left empty."""
    at = data.find(_KEY)
    if at < 1 or data.find(_KEY, at + 1) >= 0 or data[at - 1 : at] not in (b",", b"{"):
        return None
    parsed = parse_json_array(data, at + len(_KEY))
    if parsed is None:
        return None
    clusters, end = parsed
    head = data[:at]
    try:  # the key is at the top level iff the text before it closes as an object
        json.loads(head[:-1] + b"}" if head.endswith(b",") else head + b"}")
    except ValueError:
        return None
    obj = parse_json_bytes(head + _KEY + b"[]" + data[end:], Path(path), "trail")
    if not isinstance(obj, dict) or obj.get("cluster_of_record") != []:
        return None
    obj["cluster_of_record"] = clusters
    return trail_from_json(obj, source=path)


def write_trail(trail: Trail, path: str | os.PathLike[str]) -> None:
    write_text_atomic(path, trail.dumps())
