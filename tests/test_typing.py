"""Type information reaches users (CONTRIBUTING.md, "Type checkers and editable installs").

A copy of the package is installed into a fresh virtual environment in
``tmp_path``, once as a regular install (a wheel) and once as a strict editable
install (the developer install type checkers can follow: setuptools' default
editable mode maps the four source folders with an import hook that static
tools cannot run). mypy, run from the outside with that environment's
interpreter, must find privtool through its ``py.typed`` marker, pass a user
script in strict mode, and flag the mistakes in a second script (so the first
did not pass merely because everything was ``Any``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from child_venv import make_child_venv

REPO = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "toolkit", "plugins", "attacks", "verify")

USER_SCRIPT = """\
from pathlib import Path

import privtool


def release_of(records: list[list[int]], out: Path) -> str:
    data: privtool.Dataset = privtool.Dataset.from_records(records)
    result = privtool.anonymize(data, "disassociation", sanitizers=["safe-disassociation"], seed=3, k=2, m=2)
    result.save(out / "release.json", out / "trail.json")
    kept: int = result.original.n_records
    release: privtool.Release = privtool.load_release(out / "release.json")
    return f"{release.kind}: {kept}"


def assessed(result: privtool.Result, out: Path) -> bool:
    verdict: privtool.Verdict = result.verify()
    findings: privtool.Findings = result.attack("linkage", targets=10)
    figures: dict[str, object] = result.metrics("tkd")["tkd"]
    again = privtool.verify(out / "release.json", result.original, out / "trail.json")
    comparison: privtool.Comparison = privtool.compare(result.original, ["disassociation"], grid={"k": [2, 3]})
    runs: dict[str, int] = comparison.verdicts()
    return verdict.passed and again.passed and not findings.breaches and bool(figures) and bool(runs)


try:
    privtool.read("missing.dat")
except privtool.ParameterError as exc:
    message: str = exc.message
"""

MISTAKES = """\
import privtool

result = privtool.anonymize(privtool.read("data.dat"), "disassociation", sanitizers=[1], k=2)
kind: int = result.release.kind
privtool.anonymise
passed: str = result.verify().passed
"""
EXPECTED = [
    "mistakes.py:3: error: List item 0 has incompatible type",
    "mistakes.py:4: error: Incompatible types in assignment",
    "mistakes.py:5: error: Module has no attribute",
    "mistakes.py:6: error: Incompatible types in assignment",
]


def _install(tmp_path: Path, editable: bool) -> tuple[Path, Path]:
    """A child environment with privtool installed from a copy of the sources
    (its dependencies come from the running environment): ``(its python, the
    installed package folder)``."""
    source = tmp_path / "source"
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            source.mkdir(exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    child = make_child_venv(tmp_path / "env")
    if editable:
        child.install(source, "--config-settings", "editable_mode=strict", "-e")
        (link_tree,) = (source / "build").glob("__editable__.privtool-*")
        return child.python, link_tree / "privtool"
    child.install(source)
    purelib = child.run("-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip()
    return child.python, Path(purelib) / "privtool"


def _mypy(python: Path, tmp_path: Path, script: str, name: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / name).write_text(script)
    (tmp_path / "mypy.ini").write_text("[mypy]\n")
    return subprocess.run(
        [
            sys.executable, "-m", "mypy", "--strict", "--config-file", "mypy.ini", "--python-executable", str(python),
            "--cache-dir", str(tmp_path / "mypy-cache"), name,
        ],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip


@pytest.mark.parametrize("editable", [False, True], ids=["wheel", "strict-editable"])
def test_mypy_follows_the_installed_package(tmp_path: Path, editable: bool) -> None:
    python, package = _install(tmp_path, editable)
    assert (package / "py.typed").is_file()
    assert (package / "plugins" / "__init__.py").is_file()  # the four folders form one tree
    good = _mypy(python, tmp_path, USER_SCRIPT, "user.py")
    assert good.returncode == 0, good.stdout + good.stderr
    bad = _mypy(python, tmp_path, MISTAKES, "mistakes.py")
    assert bad.returncode == 1
    errors = [line for line in bad.stdout.splitlines() if ": error:" in line]
    assert [e[: len(x)] for e, x in zip(errors, EXPECTED, strict=True)] == EXPECTED, bad.stdout


def test_the_running_package_ships_its_marker() -> None:
    from importlib.resources import files

    assert files("privtool").joinpath("py.typed").is_file()
