"""One comparison: check the method specs and the grid, then run every cell
(resuming finished ones) and write the results; shared by ``privtool compare``
and :func:`privtool.compare`, so the two produce the same rows and files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..context import Context, SilentProgress
from ..dataset import Dataset
from ..errors import InputError, ParameterError
from ..executors import Executor
from ..registry import Registry
from .methods import check, declared
from .report import write_outputs
from .runner import Cell, grid, load_cell, run_cell
from .spec import MethodSpec

AXIS_OPTIONS = {"k": "--k", "m": "--m"}
"""How messages name a grid axis the command line sweeps with its own option."""

OUTPUT_FOLDERS = ("cells", "releases", "trails", "plots")


def check_comparison(
    registry: Registry, specs: Sequence[MethodSpec], axes: Mapping[str, Sequence[Any]], metrics: Sequence[str]
) -> None:
    """Before anything runs: labels unique, metrics known, every spec and grid
    value valid, every axis taken by some method (one sentence otherwise)."""
    if not specs:
        raise ParameterError("compare needs at least one --method.")
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise ParameterError("two --method specs have the same label; name them LABEL=SPEC.")
    for name in metrics:
        registry.get("metric", name)
    for name, values in axes.items():
        if not values:
            raise ParameterError(f"{AXIS_OPTIONS.get(name, f'--grid {name}')} needs at least one value.")
    for spec in specs:
        check(registry, spec, axes)
    known = {p.name for spec in specs for p in declared(registry, spec)}
    for name in axes:
        if name not in known:
            raise ParameterError(f"{AXIS_OPTIONS.get(name, f'--grid {name}')}: no --method takes a parameter {name!r}.")


def prepare_folder(out_dir: Path) -> None:
    """Create the output folder and its subfolders (an existing one is reused)."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ParameterError(f"-o {out_dir} exists and is not a folder.")
    try:
        for sub in OUTPUT_FOLDERS:
            (out_dir / sub).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the output folder ({exc.strerror or exc})", path=out_dir) from None


def run_comparison(
    registry: Registry,
    dataset: Dataset,
    specs: Sequence[MethodSpec],
    axes: Mapping[str, Sequence[Any]],
    out_dir: Path,
    executor: Executor,
    *,
    repeat: int = 1,
    seed: int = 0,
    verify: bool = True,
    metrics: Sequence[str] = (),
    meta: Mapping[str, Any] | None = None,
    on_cell: Callable[[Cell, str, dict[str, Any] | None], None] | None = None,
) -> list[dict[str, Any]]:
    """Run every cell of the grid on ``dataset`` and write ``results.csv``,
    ``results.json``, the plots and ``index.html`` into ``out_dir`` (checked
    specs, an existing folder: see :func:`check_comparison` and
    :func:`prepare_folder`). A finished cell found in ``out_dir`` is reused.
    ``on_cell(cell, status, row)`` is told when a cell starts (``running``,
    no row) and ends (``done``, ``no solution`` or ``resumed``). Returns the
    rows, one per cell."""
    input_sha = dataset.content_sha256()
    rows: list[dict[str, Any]] = []
    for cell in grid(specs, axes, repeat, seed):
        if on_cell is not None:
            on_cell(cell, "running", None)
        row = load_cell(out_dir, cell.key(input_sha, (verify, *metrics)))
        if row is None:
            ctx = Context(seed=cell.seed, executor=executor, progress=SilentProgress())
            row = run_cell(registry, dataset, cell, out_dir, ctx, verify=verify, metrics=metrics)
            status = "no solution" if row.get("error") else "done"
        else:
            status = "resumed"
        if on_cell is not None:
            on_cell(cell, status, row)
        rows.append(row)
    full_meta = {
        "records": dataset.n_records,
        "input_sha256": input_sha,
        "verified": verify,
        "metrics": list(metrics) or "all that apply",
        **(meta or {}),
    }
    write_outputs(out_dir, full_meta, rows, list(axes))
    return rows
