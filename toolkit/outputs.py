"""Outputs never clobber inputs or each other (docs/design.md, "Error contract").

Every command that writes files calls :func:`check_outputs` before doing any
work, with its inputs and outputs named as the user typed them (``DATA``,
``-o``, ``--trail``...). Two paths are the same file when their resolved real
paths are equal (symbolic links, ``..`` and relative paths followed) or, for
files that exist, when they are the same inode (hard links). A clash is a
:class:`ParameterError` (exit 2) naming both options, and nothing is written.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .errors import ParameterError

PathLike = str | os.PathLike[str]


def same_file(a: PathLike, b: PathLike) -> bool:
    """Whether ``a`` and ``b`` name the same file (see the module docstring)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def inside(path: PathLike, directory: PathLike) -> bool:
    """Whether ``path`` lies in ``directory`` or below it (real paths)."""
    real, folder = Path(os.path.realpath(path)), Path(os.path.realpath(directory))
    return folder in real.parents


def check_outputs(outputs: Mapping[str, PathLike | None], inputs: Mapping[str, PathLike | None]) -> None:
    """Refuse an output that is an input or another output. Keys are how the
    user named each path (``"-o"``, ``"--trail"``, ``"DATA"``); ``None``
    values (options not given) are skipped."""
    given_outputs = [(name, path) for name, path in outputs.items() if path is not None]
    given_inputs = [(name, path) for name, path in inputs.items() if path is not None]
    for n, (name, path) in enumerate(given_outputs):
        for input_name, input_path in given_inputs:
            if same_file(path, input_path):
                raise ParameterError(
                    f"{name} {path} is the input {input_name}; writing it would destroy the input, "
                    "so choose another output file."
                )
        for other_name, other_path in given_outputs[:n]:
            if same_file(path, other_path):
                raise ParameterError(
                    f"{other_name} {other_path} and {name} {path} are the same file; give each output its own file."
                )
