"""The core machinery through the CLI: --config files, unknown options and plugins,
--help/--version, and byte-identical releases whatever the executor.

The test registers a tiny anonymizer (this module is the plugin) that maps over
units of records with ``ctx.map`` and draws with ``ctx.rng``: exactly what a real
method does, small enough to read in one glance.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from privtool import __version__
from privtool import registry as registry_module
from privtool.components import Anonymizer, Outcome
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.hookspecs import hookimpl
from privtool.params import K, Param
from privtool.release import Release
from privtool.trail import Trail

UNIT = Param("unit", int, 5, "records per unit of work", min=1)


def _drop_one_item(records: list[list[str]], rng: np.random.Generator) -> list[list[str]]:
    """Per unit: every record of two or more items loses one item chosen by ``rng``."""
    out = []
    for record in records:
        if len(record) > 1:
            record = [label for i, label in enumerate(record) if i != int(rng.integers(len(record)))]
        out.append(record)
    return out


class RandomDrop(Anonymizer):
    name = "test-random-drop"
    summary = "test only: drop one random item per record, unit by unit"
    params = (K, UNIT)

    def anonymize(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
        rows = dataset.to_label_records()
        starts = range(0, len(rows), params["unit"])
        units = [(rows[s : s + params["unit"]], ctx.rng("test-random-drop", s)) for s in starts]
        done = ctx.map(functools.partial(_apply), units, "dropping")
        records = [record for unit in done for record in unit]
        stats = {"records_in": len(rows), "records_published": len(records), "suppressed_records": 0}
        release = Release(kind="sanitized", records=records, stats=stats)
        return Outcome(release, Trail(notes={"k": params["k"]}))


def _apply(unit: tuple[list[list[str]], np.random.Generator]) -> list[list[str]]:
    return _drop_one_item(*unit)


@hookimpl
def privtool_anonymizers() -> list[Anonymizer]:
    return [RandomDrop()]


@pytest.fixture
def tiny_plugin(monkeypatch: pytest.MonkeyPatch) -> str:
    """Register this module as a plugin, as a built-in would be."""
    monkeypatch.setitem(registry_module.BUILTIN_PLUGINS, "test-random-drop", __name__)
    return "test-random-drop"


@pytest.fixture
def baskets(tmp_path: Path, run_cli) -> Path:
    path = tmp_path / "baskets.dat"
    assert (
        run_cli(
            "synth",
            "--records",
            "400",
            "--items",
            "60",
            "--avg-size",
            "4",
            "--max-size",
            "12",
            "--patterns",
            "50",
            "-q",
            "-o",
            path,
        ).code
        == 0
    )
    return path


def test_same_seed_same_bytes_whatever_the_executor(
    tmp_path: Path, baskets: Path, tiny_plugin: str, run_cli, pooled_maps: list[int]
) -> None:
    runs = {
        "serial": ["--executor", "serial"],
        "process-1": ["--executor", "process", "--workers", "1"],
        "process-2": ["--executor", "process", "--workers", "2"],
    }
    outputs, pools_used = {}, []
    for label, flags in runs.items():
        out, trail = tmp_path / f"{label}.json", tmp_path / f"{label}.trail.json"
        result = run_cli(
            "anonymize", baskets, "--method", tiny_plugin, "--seed", "11", *flags, "-q", "-o", out, "--trail", trail
        )
        assert result.code == 0, result.err
        outputs[label] = (out.read_bytes(), trail.read_bytes())
        pools_used.append(bool(pooled_maps))
        pooled_maps.clear()
    assert pools_used == [False, False, True]  # --workers 2 really ran in a process pool
    assert outputs["serial"] == outputs["process-1"] == outputs["process-2"]
    other = tmp_path / "other-seed.json"
    assert (
        run_cli(
            "anonymize", baskets, "--method", tiny_plugin, "--seed", "12", "--executor", "serial", "-q", "-o", other
        ).code
        == 0
    )
    assert other.read_bytes() != outputs["serial"][0]


def test_config_file_sets_parameters_and_the_command_line_wins(
    tmp_path: Path, baskets: Path, tiny_plugin: str, run_cli
) -> None:
    config = tmp_path / "run.toml"
    config.write_text(f'method = "{tiny_plugin}"\nk = 3\nunit = 7\n')
    out = tmp_path / "r.json"
    assert run_cli("anonymize", baskets, "--config", config, "--executor", "serial", "-q", "-o", out).code == 0
    from privtool.release import read_release

    assert {key: read_release(out).params[key] for key in ("method", "k", "unit")} == {
        "method": tiny_plugin,
        "k": 3,
        "unit": 7,
    }
    assert (
        run_cli("anonymize", baskets, "--config", config, "--k", "4", "--executor", "serial", "-q", "-o", out).code == 0
    )
    assert (read_release(out).params["k"], read_release(out).params["unit"]) == (4, 7)


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        (None, ["--zz", "1"], "method 'test-random-drop' has no option --zz"),
        (None, ["--k", "1"], "--k must be at least 2, not 1"),
        (None, ["--k", "two"], "--k must be an integer, not 'two'"),
        ('colour = "red"\n', [], "has no option --colour"),
        ("k = [\n", [], "not a valid TOML file"),
    ],
)
def test_bad_options_and_configs_exit_2(tmp_path, baskets, tiny_plugin, run_cli, setup, args, message) -> None:
    extra = []
    if setup is not None:
        config = tmp_path / "bad.toml"
        config.write_text(setup)
        extra = ["--config", config]
    result = run_cli("anonymize", baskets, "--method", tiny_plugin, *extra, *args, "-q", "-o", tmp_path / "r.json")
    assert result.code == 2
    assert message in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert not (tmp_path / "r.json").exists()


def test_missing_config_file_exit_2(tmp_path, baskets, tiny_plugin, run_cli) -> None:
    result = run_cli(
        "anonymize", baskets, "--method", tiny_plugin, "--config", tmp_path / "none.toml", "-o", tmp_path / "r.json"
    )
    assert result.code == 2 and "no such config file" in result.err


def test_disabling_an_unknown_plugin_exit_2(run_cli) -> None:
    result = run_cli("-p", "no:nonexistent", "plugins")
    assert result.code == 2
    assert "-p no:nonexistent names no installed plugin" in result.err
    malformed = run_cli("-p", "no:", "plugins")
    assert malformed.code == 2 and "expected NAME or no:NAME" in malformed.err
    unknown = run_cli("-p", "no_such_plugin_module", "plugins")
    assert unknown.code == 2 and "-p no_such_plugin_module: no entry point" in unknown.err


def test_disabled_builtin_plugin_is_gone(run_cli) -> None:
    assert '"linkage"' in run_cli("plugins", "--json").out
    assert '"linkage"' not in run_cli("-p", "no:linkage", "plugins", "--json").out


def test_essential_plugin_cannot_be_disabled(run_cli) -> None:
    result = run_cli("-p", "no:formats", "plugins")
    assert result.code == 2
    assert (
        result.err.strip()
        == "privtool: error: -p no:formats: the plugin 'formats' is essential and cannot be disabled."
    )


def test_help_and_version(run_cli) -> None:
    help_text = run_cli("--help")
    assert help_text.code == 0
    for command in ("plugins", "stats", "anonymize", "synth", "tour"):
        assert command in help_text.out
    version = run_cli("--version")
    assert version.code == 0 and version.out.strip() == f"privtool, version {__version__}"


def test_unknown_command_exit_2(run_cli) -> None:
    result = run_cli("frobnicate")
    assert result.code == 2 and "No such command 'frobnicate'" in result.err
