"""The Python API (docs/python-api.md): the command line and the façade share
one code path (byte-identical releases and trails, the same error sentences),
outputs are written as a unit, and ``import privtool`` stays cheap."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import privtool
from privtool.errors import InputError, ParameterError

TOOLKIT = Path(__file__).resolve().parent.parent / "toolkit"


@pytest.fixture(scope="module")
def baskets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small random FIMI file: 300 records over 40 items, skewed supports."""
    rng = np.random.default_rng(18)
    lines = []
    for _ in range(300):
        size = int(rng.integers(1, 7))
        items = sorted({int(x) for x in rng.zipf(1.6, size) % 40})
        lines.append(" ".join(map(str, items)))
    path = tmp_path_factory.mktemp("data") / "baskets.dat"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("method", "sanitizers", "params"),
    [
        ("disassociation", ("safe-disassociation",), {"k": 3, "m": 2}),
        ("disassociation", (), {"k": 4, "m": 2, "max_cluster_size": 20}),
    ],
)
def test_cli_and_facade_write_the_same_bytes(
    tmp_path: Path, baskets: Path, run_cli, method: str, sanitizers: tuple[str, ...], params: dict[str, int]
) -> None:
    options = [word for name, value in params.items() for word in (f"--{name.replace('_', '-')}", str(value))]
    sanitizer_options = [word for name in sanitizers for word in ("--sanitizer", name)]
    outputs = ["-o", tmp_path / "cli.json", "--trail", tmp_path / "cli-trail.json"]
    cli = run_cli(
        "anonymize", baskets, "--method", method, *sanitizer_options, *options, "--seed", "7", "--executor", "serial",
        "-q", *outputs,
    )  # fmt: skip
    assert cli.code == 0, cli.err
    result = privtool.anonymize(privtool.read(baskets), method, sanitizers=sanitizers, seed=7, **params)
    result.save(tmp_path / "api.json", tmp_path / "api-trail.json")
    assert (tmp_path / "api.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    assert (tmp_path / "api-trail.json").read_bytes() == (tmp_path / "cli-trail.json").read_bytes()
    assert result.release.dumps().encode() == (tmp_path / "cli.json").read_bytes()
    assert privtool.load_release(tmp_path / "cli.json").dumps() == result.release.dumps()


@pytest.mark.parametrize(
    ("cli_args", "call"),
    [
        (["--method", "disassoc"], lambda data: privtool.anonymize(data, "disassoc")),
        (["--method", "disassociation", "--kk", "3"], lambda data: privtool.anonymize(data, "disassociation", kk=3)),
        (["--method", "disassociation", "--k", "1"], lambda data: privtool.anonymize(data, "disassociation", k=1)),
        (
            ["--method", "disassociation", "--sanitizer", "nope"],
            lambda data: privtool.anonymize(data, "disassociation", sanitizers=["nope"]),
        ),
    ],
)
def test_the_same_one_sentence_errors_as_the_command_line(
    tmp_path: Path, baskets: Path, run_cli, cli_args, call
) -> None:
    cli = run_cli("anonymize", baskets, *cli_args, "-o", tmp_path / "r.json")
    assert cli.code == 2
    with pytest.raises(ParameterError) as caught:
        call(privtool.read(baskets))
    assert isinstance(caught.value, ValueError)
    assert cli.err.strip() == f"privtool: error: {caught.value}"


def test_a_sanitizer_name_is_one_name_not_its_characters(baskets: Path) -> None:
    data = privtool.read(baskets)
    one = privtool.anonymize(data, "disassociation", sanitizers="safe-disassociation", k=3)
    listed = privtool.anonymize(data, "disassociation", sanitizers=["safe-disassociation"], k=3)
    assert one.release.dumps() == listed.release.dumps()
    assert one.release.params["sanitizers"] == ["safe-disassociation"]


def test_anonymize_takes_a_dataset_or_a_path_and_nothing_ambiguous(baskets: Path) -> None:
    from_path = privtool.anonymize(baskets, "disassociation", k=3)
    from_str = privtool.anonymize(str(baskets), "disassociation", k=3)
    from_data = privtool.anonymize(privtool.read(baskets), "disassociation", k=3)
    assert from_path.release.dumps() == from_str.release.dumps() == from_data.release.dumps()
    with pytest.raises(TypeError, match=r"not a list; make one with Dataset\.from_records\.$"):
        privtool.anonymize([["a", "b"]], "disassociation")  # type: ignore[arg-type]
    import pandas as pd

    with pytest.raises(TypeError, match=r"not a pandas DataFrame; make one with Dataset\.from_pandas\.$"):
        privtool.anonymize(pd.DataFrame({"a": [True]}), "disassociation")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="seed must be an integer"):
        privtool.anonymize(baskets, "disassociation", seed=1.5)  # type: ignore[arg-type]


def test_the_executor_does_not_change_the_release(baskets: Path) -> None:
    serial = privtool.anonymize(baskets, "disassociation", sanitizers="safe-disassociation", k=3, seed=2)
    pooled = privtool.anonymize(
        baskets, "disassociation", sanitizers="safe-disassociation", k=3, seed=2, executor="process"
    )
    assert serial.release.dumps() == pooled.release.dumps()


def test_save_writes_both_files_or_neither(tmp_path: Path, baskets: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = privtool.anonymize(baskets, "disassociation", k=3)
    release, trail = tmp_path / "r.json", tmp_path / "t.json"
    with pytest.raises(InputError, match="the output directory does not exist"):
        result.save(release, tmp_path / "missing" / "t.json")
    assert sorted(os.listdir(tmp_path)) == []
    with pytest.raises(ParameterError, match="the same file"):
        result.save(release, tmp_path / "." / "r.json")
    assert sorted(os.listdir(tmp_path)) == []

    release.write_text("old release\n")
    renames = []
    real_replace = os.replace

    def second_rename_fails(src: str, dst: str) -> None:
        renames.append(dst)
        if Path(dst) == trail:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", second_rename_fails)
    with pytest.raises(InputError, match=r"cannot write the file \(No space left"):
        result.save(release, trail)
    monkeypatch.undo()
    assert release.read_text() == "old release\n"  # put back
    assert sorted(os.listdir(tmp_path)) == ["r.json"]  # no trail, no temporary left behind
    result.save(release, trail)
    assert release.read_text() == result.release.dumps()
    assert privtool.load_release(release).sha256() == result.trail.release_sha256


def test_result_shows_itself_in_a_notebook_with_data_escaped() -> None:
    data = privtool.Dataset.from_records([["<script>", "b"], ["<script>", "b"], ["b"]] * 4)
    result = privtool.anonymize(data, "disassociation", k=2)
    page = result._repr_html_()
    assert page.startswith("<p><strong>disassociated release by disassociation from 12 records")
    claims = "claims km-anonymity (k=2, m=2) against consistent-reconstruction; not verified yet"
    assert page.index(claims) < page.index("<table>")
    assert "<script>" not in page
    assert repr(result) == "<privtool.Result: disassociated release by disassociation from 12 records>"


def test_import_privtool_is_cheap_and_every_public_name_resolves() -> None:
    code = (
        "import sys, privtool; print(sorted(m for m in ('numpy', 'pluggy', 'pandas', 'rich', 'click') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    for name in privtool.__all__:
        assert getattr(privtool, name) is not None
    assert set(privtool.__all__) <= set(dir(privtool))
    with pytest.raises(AttributeError, match="no attribute 'anonymise'"):
        privtool.anonymise  # type: ignore[attr-defined]  # noqa: B018


def test_type_checkers_see_exactly_the_public_names() -> None:
    """The imports under TYPE_CHECKING (what mypy sees), the modules names are
    imported from at run time, and ``__all__`` agree."""
    tree = ast.parse((TOOLKIT / "__init__.py").read_text())
    seen: dict[str, tuple[str, ...]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.level == 1 and statement.module
                seen[statement.module] = tuple(sorted(alias.name for alias in statement.names))
    home = {module: tuple(sorted(names)) for module, names in privtool._HOME.items()}
    assert seen == home
    assert sorted(privtool.__all__) == sorted(["__version__", *(n for names in home.values() for n in names)])
