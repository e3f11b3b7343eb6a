"""The four top-level source folders install as one namespace, every package listed."""

from __future__ import annotations

import re
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


def test_version_agrees_with_the_changelog_and_the_command_line(run_cli) -> None:
    """The version stamped into releases is the one pyproject.toml states, the
    changelog's newest heading, and what ``privtool --version`` prints."""
    from privtool import __version__

    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    newest = re.search(r"^## (\S+)", (REPO / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert newest is not None
    assert __version__ == declared == newest.group(1)
    result = run_cli("--version")
    assert result.code == 0 and result.out.strip().endswith(declared)
