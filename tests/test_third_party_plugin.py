"""The plugin-author guide's example plugin (docs/plugin-example) installed into a
fresh virtual environment, found through its entry point, listed, used, disabled
with ``-p no:``, and refused when a second plugin claims its component name."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

from child_venv import make_child_venv

from privtool.release import read_release

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "docs" / "plugin-example"

CLASHING_MODULE = """
from privtool.components import Anonymizer
from privtool.hookspecs import hookimpl


class Impostor(Anonymizer):
    name = "global-suppression"
    summary = "claims a name another plugin already has"


@hookimpl
def privtool_anonymizers():
    return [Impostor()]
"""

CLASHING_PYPROJECT = """
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "privtool-impostor"
version = "2.0.0"

[project.entry-points.privtool]
impostor = "privtool_impostor"

[tool.setuptools]
py-modules = ["privtool_impostor"]
"""


def test_example_plugin_is_discovered_listed_used_disabled_and_clashes(tmp_path: Path) -> None:
    child = make_child_venv(tmp_path / "venv")
    plugin_copy = tmp_path / "plugin-example"  # build in a copy: nothing written into the repository
    shutil.copytree(EXAMPLE, plugin_copy, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    child.install(plugin_copy)

    listed = {p["name"]: p for p in json.loads(child.privtool("plugins", "--json").stdout)}
    plugin = listed["global-suppression"]
    assert plugin["version"] == "0.1.0"
    assert plugin["source"] == "entry point (privtool-global-suppression)"
    assert plugin["components"] == ["anonymizer:global-suppression"]
    assert listed["formats"]["source"] == "built-in"

    data = tmp_path / "baskets.dat"
    data.write_text("1 2 3\n1 2\n1 4\n5\n2 3\n")
    release_path = tmp_path / "release.json"
    child.privtool(
        "anonymize",
        data,
        "--method",
        "global-suppression",
        "--k",
        "2",
        "-q",
        "-o",
        release_path,
        "--trail",
        tmp_path / "trail.json",
    )
    release = read_release(release_path)
    assert release.kind == "sanitized"
    assert release.records == [["1"], ["1", "2"], ["1", "2", "3"], ["2", "3"]]
    assert release.stats["suppressed_records"] == 1
    assert release.provenance["plugins"]["global-suppression"] == "0.1.0"
    trail = json.loads((tmp_path / "trail.json").read_text())
    assert trail["removed_items"] == [[2, "4"], [3, "5"]]

    disabled = json.loads(child.privtool("-p", "no:global-suppression", "plugins", "--json").stdout)
    assert "global-suppression" not in {p["name"] for p in disabled}
    refused = child.privtool(
        "-p",
        "no:global-suppression",
        "anonymize",
        data,
        "--method",
        "global-suppression",
        "-o",
        release_path,
        check=False,
    )
    assert refused.returncode == 2
    assert "unknown anonymizer 'global-suppression'" in refused.stderr

    impostor = tmp_path / "impostor"
    impostor.mkdir()
    (impostor / "pyproject.toml").write_text(textwrap.dedent(CLASHING_PYPROJECT))
    (impostor / "privtool_impostor.py").write_text(textwrap.dedent(CLASHING_MODULE))
    child.install(impostor)
    clash = child.privtool("plugins", check=False)
    assert clash.returncode == 3  # a plugin error, not bad input
    either = [
        f"privtool: error: plugin '{b}': anonymizer 'global-suppression' is also registered by plugin '{a}'"
        for a, b in (("global-suppression", "impostor"), ("impostor", "global-suppression"))
    ]
    assert clash.stderr.startswith(tuple(either)), clash.stderr
    assert len(clash.stderr.strip().splitlines()) == 1 and "Traceback" not in clash.stderr
    # Disabling either plugin resolves the clash.
    assert child.privtool("-p", "no:impostor", "plugins").returncode == 0


def _example_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "privtool_global_suppression", EXAMPLE / "privtool_global_suppression.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_anonymizer_against_a_brute_force_oracle() -> None:
    """Oracle: an item survives exactly when at least k input records hold it;
    surviving items stay in every record that held them; empty records go."""
    from collections import Counter

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from privtool.context import Context
    from privtool.dataset import Dataset

    anonymizer = _example_module().GlobalSuppression()

    @settings(max_examples=60, deadline=None)
    @given(
        st.lists(st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=5), min_size=1, max_size=25),
        st.integers(2, 6),
    )
    def check(rows: list[list[str]], k: int) -> None:
        support = Counter(item for row in rows for item in set(row))
        expected = [sorted(i for i in set(row) if support[i] >= k) for row in rows]
        outcome = anonymizer.anonymize(Dataset.from_records(rows), {"k": k}, Context())
        assert sorted(outcome.release.records) == sorted(r for r in expected if r)
        assert outcome.trail.suppressed_records == [i for i, r in enumerate(expected) if not r]
        assert len(outcome.trail.removed_items) == sum(len(set(row)) for row in rows) - sum(map(len, expected))
        assert outcome.release.stats["records_published"] + outcome.release.stats["suppressed_records"] == len(rows)

    check()
