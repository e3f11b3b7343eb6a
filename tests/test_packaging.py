"""The four top-level source folders install as one namespace, every package listed."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _packages_on_disk() -> set[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = set()
    for import_name, folder in config["package-dir"].items():
        root = REPO / folder
        for init in root.rglob("__init__.py"):
            rel = init.parent.relative_to(root)
            found.add(".".join([import_name, *rel.parts]))
    return found


def test_every_package_on_disk_is_listed() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert _packages_on_disk() == set(config["packages"])
