"""Registering a plugin imports only its registration module: a component
registered as a :class:`~privtool.components.LazyComponent` is built (its module
imported) when it is used, and what goes wrong then is still one sentence
naming the plugin, exit 3."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from privtool.components import LazyComponent
from privtool.errors import PluginFault
from privtool.hookspecs import plugin_registering
from privtool.registry import load_registry

HEAVY = {
    ("sanitizer", "safe-disassociation-hardened"): "privtool.plugins.safe_disassociation.hardened",
    ("verifier", "cover-freedom-algorithm-aware"): "privtool.verifiers.algorithm_aware",
    ("verifier", "faithfulness"): "privtool.verifiers.faithfulness",
    ("attack", "minimality"): "privtool.attacks.minimality",
    ("attack", "linkage"): "privtool.attacks.linkage",
    ("metric", "are"): "privtool.plugins.utility_metrics",
    ("sanitizer", "exact"): "privtool.plugins.rulehiding.exact",
    ("anonymizer", "lgr"): "privtool.plugins.generalization.anonymizers",
    ("anonymizer", "aa"): "privtool.plugins.aa.anonymizer",
}
"""A component of each lazily registered built-in -> the module that implements it."""

PROBE = """
import json, sys
from privtool.registry import load_registry
heavy = {tuple(key.split("/")): module for key, module in json.loads(sys.argv[1]).items()}
registry = load_registry(autoload=False)
listed = all(name in registry.names(kind) for kind, name in heavy)
before = sorted(m for m in heavy.values() if m in sys.modules)
method = registry.get("anonymizer", "disassociation")
for stage in method.stages:
    registry.get(stage.kind, stage.default)
registry.all("claim_model"), registry.all("format")
during = sorted(m for m in heavy.values() if m in sys.modules)
built = {f"{kind}/{name}": registry.get(kind, name).name for kind, name in heavy}
after = sorted(m for m in heavy.values() if m in sys.modules)
print(json.dumps({"listed": listed, "before": before, "during": during, "built": built, "after": after}))
"""


def test_loading_the_registry_imports_no_implementation_until_a_component_is_used() -> None:
    """In a fresh interpreter: every heavy component is listed after loading,
    none of their modules is imported, nor while disassociation's chain is
    looked up, and each is imported when its component is asked for."""
    heavy = {f"{kind}/{name}": module for (kind, name), module in HEAVY.items()}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(heavy)], capture_output=True, text=True, check=True
    ).stdout
    seen = json.loads(out)
    assert seen["listed"]
    assert seen["before"] == [] and seen["during"] == []
    assert seen["built"] == {key: key.split("/")[1] for key in heavy}
    assert seen["after"] == sorted(set(HEAVY.values()))


def _registry_with(*components: LazyComponent, kind: str = "metric"):
    return load_registry(autoload=False, extra={"lazy": plugin_registering(kind, *components)})


def test_a_lazy_component_that_does_not_import_is_a_fault_of_its_plugin_when_used() -> None:
    registry = _registry_with(LazyComponent("gone", "privtool_no_such_dependency:Gone"))
    assert "gone" in registry.names("metric") and registry.owner("metric", "gone") == "lazy"
    with pytest.raises(PluginFault) as fault:
        registry.get("metric", "gone")
    assert fault.value.plugin == "lazy"
    assert str(fault.value) == (
        "plugin 'lazy': metric 'gone' raised ModuleNotFoundError on import: "
        "No module named 'privtool_no_such_dependency'."
    )
    with pytest.raises(PluginFault, match=r"^plugin 'lazy': metric 'gone' raised ModuleNotFoundError"):
        registry.all("metric")


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        (
            LazyComponent("tkd-again", "privtool.plugins.utility_metrics:TopKDeviation"),
            "plugin 'lazy': metric 'tkd-again' was built as one named 'tkd'.",
        ),
        (
            LazyComponent("ncp-as-metric", "privtool.plugins.generalization.anonymizers:Lgr"),
            "plugin 'lazy': hook privtool_metrics registered <anonymizer 'lgr'> as a metric, but it is not a Metric.",
        ),
    ],
)
def test_a_lazy_component_built_unlike_its_registration_is_a_fault_of_its_plugin(
    spec: LazyComponent, problem: str
) -> None:
    registry = _registry_with(spec)
    with pytest.raises(PluginFault) as fault:
        registry.get("metric", spec.name)
    assert str(fault.value) == problem


@pytest.mark.parametrize("factory", ["privtool.plugins.utility_metrics", ":TopKDeviation", "a:"])
def test_a_lazy_component_without_module_and_attribute_is_refused_at_registration(factory: str) -> None:
    with pytest.raises(PluginFault, match=r"whose factory .* is not 'module:attribute'"):
        _registry_with(LazyComponent("odd", factory))


LAZY_PLUGIN = """
from privtool.components import LazyComponent
from privtool.hookspecs import hookimpl


@hookimpl
def privtool_partitioners():
    return [LazyComponent("lazy-blocks", "lazy_blocks_impl:Blocks")]


@hookimpl
def privtool_metrics():
    return [LazyComponent("lazy-gone", "privtool_no_such_dependency:Gone")]
"""

LAZY_IMPL = """
import numpy as np

from privtool.components import Partitioner, Partitioning
from privtool.params import K


class Blocks(Partitioner):
    name = "lazy-blocks"
    summary = "consecutive blocks of 2k records (the last one holds the rest)"
    params = (K,)

    def partition(self, dataset, params, ctx):
        n, size = dataset.n_records, 2 * params["k"]
        starts = list(range(0, max(n - size, 0) + 1, size)) if n >= size else [0]
        ends = [*starts[1:], n]
        clusters = [np.arange(a, b) for a, b in zip(starts, ends)]
        return Partitioning(clusters, np.zeros(0, dtype=np.int64))
"""


def test_a_third_party_lazy_component_runs_inside_disassociation_and_a_broken_one_is_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "lazy_plugin.py").write_text(textwrap.dedent(LAZY_PLUGIN))
    (site / "lazy_blocks_impl.py").write_text(textwrap.dedent(LAZY_IMPL))
    monkeypatch.syspath_prepend(str(site))
    data, out = tmp_path / "d.dat", tmp_path / "r.json"
    assert (
        run_cli("synth", "--records", "200", "--items", "30", "--max-size", "10", "--seed", "2", "-q", "-o", data).code
        == 0
    )
    listed = run_cli("-p", "lazy_plugin", "plugins", "--json")
    assert listed.code == 0, listed.err
    plugin = next(p for p in json.loads(listed.out) if p["name"] == "lazy_plugin")
    assert plugin["components"] == ["metric:lazy-gone", "partitioner:lazy-blocks"]
    args = ("anonymize", data, "--method", "disassociation", "--partitioner", "lazy-blocks", "--k", "3", "-q")
    made = run_cli("-p", "lazy_plugin", *args, "-o", out)
    assert made.code == 0, made.err
    assert json.loads(out.read_text())["provenance"]["plugins"].keys() >= {"disassociation", "lazy_plugin"}
    broken = run_cli("-p", "lazy_plugin", "metrics", out, "--metric", "lazy-gone")
    assert broken.code == 3
    lines = broken.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "privtool: error: plugin 'lazy_plugin': metric 'lazy-gone' raised ModuleNotFoundError on import: "
        "No module named 'privtool_no_such_dependency'."
    ), broken.err
