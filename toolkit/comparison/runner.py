"""The grid of ``privtool compare`` and the run of one cell.

A cell is one method spec at one point of the grid with one seed. Its result (a
flat row of numbers) is written to ``DIR/cells/<id>.json`` as soon as it is
done; the id is a hash of everything that defines the cell and of the input, so
a re-run skips finished cells and a changed input or spec never reuses a stale one
(an option or grid value naming a file, a hierarchy or a rule file, brings the
file's content hash into the id).

A method that finds no solution within its budget (:class:`~privtool.errors.NoSolution`,
e.g. ``exact`` at its time limit) is a result: the row holds the ``error`` and no
measures, and the cell counts as finished.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..assess import COMPARE, METRICS, assess
from ..atomic import write_text_atomic
from ..components import Evidence
from ..context import Context
from ..dataset import Dataset
from ..errors import NoSolution, PluginFault
from ..io import file_sha256
from ..pipeline import write_outcome
from ..registry import Registry
from . import methods
from .spec import MethodSpec


@dataclass(frozen=True)
class Cell:
    spec: MethodSpec
    point: tuple[tuple[str, Any], ...]
    repeat: int
    seed: int

    def key(self, input_sha256: str, measured: Sequence[Any] = ()) -> str:
        """A file-name-safe id: readable prefix plus a hash of the cell, the input
        and what is measured (verification, chosen metrics)."""
        files = [
            _content_sha256(v) for v in (*self.spec.options.values(), *(v for _, v in self.point)) if isinstance(v, str)
        ]
        blob = json.dumps(
            [
                self.spec.label,
                self.spec.method,
                self.spec.sanitizers,
                sorted(self.spec.options.items()),
                self.point,
                self.seed,
                input_sha256,
                list(measured),
            ]
            + ([[f for f in files if f]] if any(files) else []),
            default=str,
        )
        slug = re.sub(
            r"[^A-Za-z0-9]+", "-", f"{self.spec.label}-{'-'.join(f'{k}{v}' for k, v in self.point)}-r{self.repeat}"
        ).strip("-")
        return f"{slug[:60]}-{hashlib.sha256(blob.encode()).hexdigest()[:10]}"


def _content_sha256(value: str) -> str | None:
    """The content hash of the file ``value`` names, or None when it names none."""
    try:
        stat = os.stat(value)
    except (OSError, ValueError):
        return None
    return _file_digest(value, stat.st_size, stat.st_mtime_ns) if os.path.isfile(value) else None


@functools.lru_cache(maxsize=64)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    return file_sha256(path)


def grid(specs: Sequence[MethodSpec], axes: Mapping[str, Sequence[Any]], repeat: int, seed: int) -> list[Cell]:
    """Every (spec, grid point, repeat) in a stable order."""
    names = list(axes)
    points = [tuple(zip(names, values, strict=False)) for values in itertools.product(*(axes[n] for n in names))]
    return [Cell(spec, point, r, seed + r) for spec in specs for point in points for r in range(repeat)]


def _flat_numbers(prefix: str, values: Mapping[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in values.items():
        if key.endswith("_detail"):
            continue
        if isinstance(value, bool):
            out[f"{prefix}.{key}"] = float(value)
        elif isinstance(value, (int, float)):
            out[f"{prefix}.{key}"] = value
    return out


def run_cell(
    registry: Registry,
    dataset: Dataset,
    cell: Cell,
    out_dir: Path,
    ctx: Context,
    verify: bool = True,
    metrics: Sequence[str] = (),
) -> dict[str, Any]:
    """Anonymize, verify and measure one cell (``metrics``: only these, default
    every one that applies); write its release, trail and row."""
    declared = {p.name for p in methods.declared(registry, cell.spec)}
    point = {k: v for k, v in cell.point if k in declared}
    options = {**cell.spec.options, **point}
    key = cell.key(dataset.content_sha256(), (verify, *metrics))
    row: dict[str, Any] = {
        "cell": key,
        "method": cell.spec.label,
        **{k: (v if k in declared else None) for k, v in cell.point},
        "repeat": cell.repeat,
        "seed": cell.seed,
    }
    start = time.perf_counter()
    try:
        outcome = methods.run(registry, dataset, cell.spec, options, ctx)
    except NoSolution as exc:
        row.update(seconds=round(time.perf_counter() - start, 4), error=exc.message)
        write_text_atomic(out_dir / "cells" / f"{key}.json", json.dumps(row, default=str) + "\n")
        return row
    except PluginFault as fault:  # reported, not stored: a resumed run tries the cell again
        row.update(seconds=round(time.perf_counter() - start, 4), error=fault.message, failures=fault.message)
        return row
    row["seconds"] = round(time.perf_counter() - start, 4)
    write_outcome(outcome, out_dir / "releases" / f"{key}.json", out_dir / "trails" / f"{key}.json")
    row.update(_flat_numbers("notes", outcome.trail.notes))
    evidence = Evidence(original=dataset, trail=outcome.trail)
    release = outcome.release
    result = assess(registry, release, evidence, ctx, COMPARE if verify else METRICS, metrics=list(metrics) or None)
    if verify:
        row["verdict"] = result.verdict
        row["verified"] = result.verdict == "PASS"
        row["certified"] = "; ".join(
            [c.claim.label for c in result.claims if c.status == "holds"]
            + [r.verifier for r in result.integrity if r.outcome == "proved"]
        )
        row["refuted"] = "; ".join(
            [f"{c.claim.label} ({c.status})" for c in result.claims if c.status != "holds"]
            + [r.verifier for r in result.integrity if r.outcome == "refuted"]
            + [str(p) for p in result.structure]
        )
        runs = [*(run for claim in result.claims for run in claim.runs), *result.integrity]
        row["verify_seconds"] = round(sum(run.seconds for run in runs), 4)
    for metric in result.metrics:
        row.update(_flat_numbers(metric.name, metric.values))
    if result.failures:  # the rest of the cell is measured and reported, not stored; the run ends with exit 3
        row["failures"] = " ".join(failure.sentence for failure in result.failures)
        return row
    write_text_atomic(out_dir / "cells" / f"{key}.json", json.dumps(row, default=str) + "\n")
    return row


def load_cell(out_dir: Path, key: str) -> dict[str, Any] | None:
    """The stored row of a finished cell, or None."""
    path = out_dir / "cells" / f"{key}.json"
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
