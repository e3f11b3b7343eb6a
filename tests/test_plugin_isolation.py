"""Faults in plugin code end in one sentence naming the plugin and exit 3
(DESIGN.md, "Error contract"), and ``-p no:NAME`` recovers.

The plugin under test is installed as a real entry point: a ``.dist-info``
folder on ``sys.path`` declares it, so privtool discovers, loads, lists and
blocks it exactly as a pip-installed one. ``broken_plugin.py`` registers a
working component of every kind; ``PRIVTOOL_TEST_FAULT`` makes one method (or
hook) raise, or return what its contract forbids. Load-time faults (import
errors, misspelt hooks, malformed parameters) are small modules written here.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from broken_plugin import FAULT_ENV

from privtool import __version__
from privtool.hookspecs import HOOKS

Install = Callable[..., None]


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Install:
    """``install(name, module, source=None)``: an entry point ``name = module``
    of group ``privtool`` in a distribution of its own, with the module's source
    written beside it when given."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))

    def install_one(name: str, module: str, source: str | None = None) -> None:
        dist = site / f"privtool_test_{name.replace('-', '_')}-0.3.0.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: privtool-test-{name}\nVersion: 0.3.0\n")
        (dist / "entry_points.txt").write_text(f"[privtool]\n{name} = {module}\n")
        if source is not None:
            (site / f"{module}.py").write_text(textwrap.dedent(source))

    return install_one


@pytest.fixture
def broken(install: Install, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FAULT_ENV, raising=False)
    install("broken", "broken_plugin")


@pytest.fixture
def data(tmp_path: Path, run_cli) -> Path:
    path = tmp_path / "d.dat"
    assert (
        run_cli("synth", "--records", "300", "--items", "40", "--max-size", "10", "--seed", "3", "-q", "-o", path).code
        == 0
    )
    return path


@pytest.fixture
def release(tmp_path: Path, data: Path, run_cli) -> Path:
    path = tmp_path / "r.json"
    args = ("anonymize", data, "--method", "disassociation", "--k", "3", "-q", "--executor", "serial", "-o", path)
    assert run_cli(*args).code == 0
    return path


def _one_sentence(result, *parts: str) -> None:
    """Exit 3, one line on stderr naming every part, no traceback."""
    assert result.code == 3, result.err
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("privtool: error: plugin 'broken': ")
    for part in parts:
        assert part in lines[0], lines[0]
    assert "Traceback" not in result.err


ANONYMIZE = ("anonymize", "{data}", "--k", "3", "-q", "--executor", "serial", "-o", "{out}")
COMPONENT_FAULTS = [
    # (fault, command, what the sentence says, the command with the built-in instead)
    (
        "partitioner.partition",
        (*ANONYMIZE, "--method", "disassociation", "--partitioner", "broken-partitioner"),
        "partitioner 'broken-partitioner' raised RuntimeError in partition(): injected fault",
        "--partitioner=adding",
    ),
    (
        "partitioner.partition:return",
        (*ANONYMIZE, "--method", "disassociation", "--partitioner", "broken-partitioner"),
        "partitioner 'broken-partitioner' partition() returned a str, not a Partitioning",
        "--partitioner=adding",
    ),
    (
        "vertical_chunker.chunk",
        (*ANONYMIZE, "--method", "disassociation", "--chunker", "broken-chunker"),
        "vertical chunker 'broken-chunker' raised RuntimeError in chunk_batch(): injected fault",
        "--chunker=verpart",
    ),
    (
        "vertical_chunker.chunk:return",
        (*ANONYMIZE, "--method", "disassociation", "--chunker", "broken-chunker"),
        "vertical chunker 'broken-chunker' chunk_batch() returned a str for cluster 0, not a ChunkedCluster",
        "--chunker=verpart",
    ),
    (
        "refiner.refine",
        (*ANONYMIZE, "--method", "disassociation", "--refiner", "broken-refiner"),
        "refiner 'broken-refiner' raised RuntimeError in refine(): injected fault",
        "--refiner=refine",
    ),
    (
        "anonymizer.anonymize",
        (*ANONYMIZE, "--method", "broken-anonymizer"),
        "anonymizer 'broken-anonymizer' raised RuntimeError in anonymize(): injected fault",
        None,
    ),
    (
        "anonymizer.anonymize:return",
        (*ANONYMIZE, "--method", "broken-anonymizer"),
        "anonymizer 'broken-anonymizer' anonymize() returned a str, not an Outcome",
        None,
    ),
    (
        "anonymizer.claims",
        (*ANONYMIZE, "--method", "broken-anonymizer"),
        "anonymizer 'broken-anonymizer' raised RuntimeError in claims(): injected fault",
        None,
    ),
    (
        "claim_model.problems",
        (*ANONYMIZE, "--method", "broken-anonymizer"),
        "claim model 'broken-model' raised RuntimeError in problems(): injected fault",
        None,
    ),
    (
        "sanitizer.claims",
        (*ANONYMIZE, "--method", "disassociation", "--sanitizer", "broken-sanitizer"),
        "sanitizer 'broken-sanitizer' raised RuntimeError in claims(): injected fault",
        None,
    ),
    (
        "sanitizer.sanitize",
        (*ANONYMIZE, "--method", "disassociation", "--sanitizer", "broken-sanitizer"),
        "sanitizer 'broken-sanitizer' raised RuntimeError in sanitize(): injected fault",
        None,
    ),
    (
        "format.read",
        ("stats", "{data_brk}"),
        "format 'broken-format' raised RuntimeError in read_bytes(): injected fault",
        None,
    ),
    (
        "format.write",
        ("convert", "{data}", "{out_brk}", "-q"),
        "format 'broken-format' raised RuntimeError in write_blocks(): injected fault",
        None,
    ),
    (
        "metric.compute",
        ("metrics", "{release}", "--metric", "broken-metric"),
        "metric 'broken-metric' raised RuntimeError in compute(): injected fault",
        None,
    ),
    (
        "attack.run",
        ("attack", "{release}", "--attack", "broken-attack", "-q"),
        "attack 'broken-attack' raised RuntimeError in run(): injected fault",
        None,
    ),
    (
        "verifier.verify",
        ("verify", "{release}", "-q"),
        "verifier 'broken-verifier' raised RuntimeError in verify(): injected fault",
        None,
    ),
    (
        "refiner.refine:return",
        (*ANONYMIZE, "--method", "disassociation", "--refiner", "broken-refiner"),
        "refiner 'broken-refiner' refine() returned a str, not a list of JointPlan",
        "--refiner=refine",
    ),
    (
        "sanitizer.sanitize:return",
        (*ANONYMIZE, "--method", "disassociation", "--sanitizer", "broken-sanitizer"),
        "sanitizer 'broken-sanitizer' sanitize() returned a str, not an Outcome",
        None,
    ),
    (
        "format.read:return",
        ("stats", "{data_brk}"),
        "format 'broken-format' read_bytes() returned a str, not a Dataset",
        None,
    ),
    (
        "claim_model.statement",
        ("verify", "{release_broken}", "-q"),
        "claim model 'broken-model' raised RuntimeError in statement(): injected fault",
        None,
    ),
    (
        "claim_model.is_stricter",
        ("verify", "{release_broken}", "--k", "4", "-q"),
        "claim model 'broken-model' raised RuntimeError in is_stricter(): injected fault",
        None,
    ),
    (
        "metric.compute:return",
        ("metrics", "{release}", "--metric", "broken-metric"),
        "metric 'broken-metric' compute() returned a str, not a dict of figures",
        None,
    ),
    (
        "attack.run:return",
        ("attack", "{release}", "--attack", "broken-attack", "-q"),
        "attack 'broken-attack' run() returned a str, not a list of Finding",
        None,
    ),
    (
        "attack.exposure",
        ("attack", "{release}", "--attack", "broken-attack", "-q"),
        "attack 'broken-attack' raised RuntimeError in exposure(): injected fault",
        None,
    ),
    (
        "verifier.verify:return",
        ("verify", "{release}", "-q"),
        "verifier 'broken-verifier' verify() returned a str, not a list of Certificate",
        None,
    ),
]


@pytest.mark.parametrize(
    ("fault", "command", "sentence", "builtin"), COMPONENT_FAULTS, ids=[f[0] for f in COMPONENT_FAULTS]
)
def test_a_fault_in_each_component_method_is_one_sentence_and_exit_3(
    fault: str,
    command: tuple[str, ...],
    sentence: str,
    builtin: str | None,
    broken: None,
    data: Path,
    release: Path,
    tmp_path: Path,
    run_cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "d.brk").write_text(data.read_text())
    paths = {
        "data": data,
        "data_brk": tmp_path / "d.brk",
        "out": tmp_path / "out.json",
        "out_brk": tmp_path / "out.brk",
        "release": release,
        "release_broken": tmp_path / "broken.json",  # claims the plugin's own model
    }
    if "{release_broken}" in command:
        made = [word.format(**{**paths, "out": paths["release_broken"]}) for word in ANONYMIZE]
        assert run_cli(*made, "--method", "broken-anonymizer").code == 0
    args = [word.format(**paths) for word in command]
    assert run_cli(*args).code in (0, 1)  # the component works without the fault
    for output in (paths["out"], paths["out_brk"]):
        output.unlink(missing_ok=True)
    monkeypatch.setenv(FAULT_ENV, fault)
    _one_sentence(run_cli(*args), sentence, "(run with --traceback")
    assert not paths["out"].exists() and not paths["out_brk"].exists()  # nothing written
    if builtin is not None:  # the same method with the built-in stage, and the plugin disabled
        option = builtin.split("=")[0]
        index = args.index(option)
        fixed = [*args[:index], *builtin.split("="), *args[index + 2 :]]
        assert run_cli("-p", "no:broken", *fixed).code == 0


def test_a_fault_in_a_worker_process_names_the_plugin(
    broken: None, data: Path, monkeypatch: pytest.MonkeyPatch, pooled_maps: list[int]
) -> None:
    """The chunker runs in a process pool (small units, so the pool really runs);
    its fault comes back across the process boundary as the same fault, with the
    worker's traceback as text."""
    from privtool.context import Context
    from privtool.errors import PluginFault
    from privtool.executors import ProcessExecutor
    from privtool.io import read_dataset
    from privtool.pipeline import run_method
    from privtool.registry import load_registry

    monkeypatch.setenv(FAULT_ENV, "vertical_chunker.chunk")
    registry = load_registry()
    dataset = read_dataset(registry, data)
    executor = ProcessExecutor(2)
    options = {"chunker": "broken-chunker", "k": 3}
    try:
        with pytest.raises(PluginFault) as raised:
            run_method(registry, dataset, "disassociation", options, Context(executor=executor, unit_occurrences=100))
        assert pooled_maps  # the chunker ran in the pool's workers
    finally:
        executor.close()
    assert raised.value.plugin == "broken"
    assert raised.value.message == (
        "plugin 'broken': vertical chunker 'broken-chunker' raised RuntimeError in chunk_batch(): injected fault."
    )
    assert 'raise RuntimeError("injected fault")' in raised.value.details


@pytest.mark.parametrize("hook", sorted(HOOKS.values()))
def test_a_hook_that_raises_or_returns_no_list_is_one_sentence_and_p_no_recovers(
    hook: str, broken: None, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FAULT_ENV, f"hook.{hook}")
    _one_sentence(run_cli("plugins"), f"hook {hook} raised RuntimeError: injected fault")
    monkeypatch.setenv(FAULT_ENV, f"hook.{hook}:return")
    _one_sentence(run_cli("plugins"), f"hook {hook} returned str, not a list of")
    listed = run_cli("-p", "no:broken", "plugins", "--json")
    assert listed.code == 0 and "broken" not in {p["name"] for p in json.loads(listed.out)}


def test_traceback_only_when_asked(broken: None, release: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULT_ENV, "metric.compute")
    shown = run_cli("--traceback", "metrics", release, "--metric", "broken-metric")
    assert shown.code == 3
    assert "Traceback (most recent call last)" in shown.err and 'raise RuntimeError("injected fault")' in shown.err
    assert shown.err.strip().splitlines()[-1].startswith("privtool: error: plugin 'broken': metric 'broken-metric'")
    monkeypatch.setenv("PRIVTOOL_TRACEBACK", "1")
    assert "Traceback" in run_cli("metrics", release, "--metric", "broken-metric").err


LOAD_FAULTS = {
    "import": (
        "import privtool_no_such_dependency\n",
        "entry point bad = bad_import raised ModuleNotFoundError on import: "
        "No module named 'privtool_no_such_dependency'",
    ),
    "misspelt": (
        """
        from privtool.hookspecs import hookimpl

        @hookimpl
        def privtool_anonymiser():
            return []
        """,
        "hook privtool_anonymiser is not a privtool hook (did you mean privtool_anonymizers?)",
    ),
    "single": (
        """
        from privtool.components import Metric

        class One(Metric):
            name = "one"

        def privtool_metrics():
            return One()
        """,
        "hook privtool_metrics returned One, not a list of metrics",
    ),
    "param-type": (
        """
        from privtool.components import Metric
        from privtool.params import Param

        class Listy(Metric):
            name = "listy"
            params = (Param("terms", list),)

        def privtool_metrics():
            return [Listy()]
        """,
        "raised TypeError on import: parameter terms: unsupported type <class 'list'>",
    ),
    "default": (
        """
        from privtool.components import Metric
        from privtool.params import Param

        class Low(Metric):
            name = "low"
            params = (Param("size", int, 0, min=1),)

        def privtool_metrics():
            return [Low()]
        """,
        "registered metric 'low', whose parameter --size has an invalid default 0 (--size must be at least 1, not 0)",
    ),
    "reserved": (
        """
        from privtool.components import Attack
        from privtool.params import Param

        class Seeded(Attack):
            name = "seeded"
            params = (Param("seed", int, 1),)

        def privtool_attacks():
            return [Seeded()]
        """,
        "registered attack 'seeded', whose parameter --seed is an option privtool's commands own",
    ),
    "clash": (
        """
        from privtool.components import Metric

        class Impostor(Metric):
            name = "tlost"

        def privtool_metrics():
            return [Impostor()]
        """,
        "metric 'tlost' is also registered by plugin 'disassociation'",
    ),
}


@pytest.mark.parametrize("case", sorted(LOAD_FAULTS))
def test_a_fault_while_loading_names_the_plugin_and_p_no_recovers(case: str, install: Install, run_cli) -> None:
    source, sentence = LOAD_FAULTS[case]
    module = f"bad_{case.replace('-', '_')}"
    install("bad", module, source)
    result = run_cli("plugins")
    assert result.code == 3, result.err
    line = result.err.strip()
    assert line.startswith("privtool: error: plugin 'bad': ") and sentence in line, line
    assert len(line.splitlines()) == 1 and "Traceback" not in line
    assert run_cli("-p", "no:bad", "plugins").code == 0


def test_autoload_off_loads_only_the_plugins_named(broken: None, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    def names(*args: str) -> set[str]:
        result = run_cli(*args, "plugins", "--json")
        assert result.code == 0, result.err
        return {p["name"] for p in json.loads(result.out)}

    assert "broken" in names()
    monkeypatch.setenv("PRIVTOOL_DISABLE_PLUGIN_AUTOLOAD", "1")
    without = names()
    assert "broken" not in without and "disassociation" in without  # built-ins always load
    assert "broken" in names("-p", "broken")
    monkeypatch.setenv("PRIVTOOL_DISABLE_PLUGIN_AUTOLOAD", "0")
    assert "broken" in names()


def test_a_release_records_only_the_plugins_that_took_part(broken: None, data: Path, tmp_path: Path, run_cli) -> None:
    """The same disassociation run gives the same bytes whether an unrelated
    plugin is installed, disabled or uninstalled; a third-party stage that takes
    part is recorded with its version."""
    base = ("anonymize", data, "--method", "disassociation", "--k", "3", "-q", "--executor", "serial", "-o")
    assert run_cli(*base, tmp_path / "with.json").code == 0
    assert run_cli("-p", "no:broken", *base, tmp_path / "disabled.json").code == 0
    with_bytes = (tmp_path / "with.json").read_bytes()
    assert with_bytes == (tmp_path / "disabled.json").read_bytes()
    assert json.loads(with_bytes)["provenance"]["plugins"] == {"disassociation": __version__}
    assert run_cli(*base, tmp_path / "third.json", "--partitioner", "broken-partitioner").code == 0
    provenance = json.loads((tmp_path / "third.json").read_text())["provenance"]
    assert provenance["plugins"] == {"broken": "0.3.0", "disassociation": __version__}

    (dist,) = (tmp_path / "site").glob("*.dist-info")
    shutil.rmtree(dist)  # uninstalled: its entry point is gone
    assert "broken" not in {p["name"] for p in json.loads(run_cli("plugins", "--json").out)}
    assert run_cli(*base, tmp_path / "uninstalled.json").code == 0
    assert (tmp_path / "uninstalled.json").read_bytes() == with_bytes


def test_a_failing_metric_or_attack_is_an_error_and_the_rest_still_run(
    broken: None, data: Path, tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """metrics, attack, audit and compare report the failing component with
    status error, run everything else, and end with exit 3 and one line naming
    the plugin; ``-p no:broken`` gives the same run without it."""
    release, trail = tmp_path / "r.json", tmp_path / "t.json"
    made = ("anonymize", data, "--method", "disassociation", "--k", "3", "-q", "--executor", "serial")
    assert run_cli(*made, "-o", release, "--trail", trail).code == 0
    evidence = ("--original", data, "--trail", trail)

    monkeypatch.setenv(FAULT_ENV, "metric.compute")
    measured = run_cli("metrics", release, *evidence, "--json", "-q", "--executor", "serial")
    _one_sentence(measured, "metric 'broken-metric' raised RuntimeError in compute(): injected fault")
    statuses = {m["name"]: m["status"] for m in json.loads(measured.out)["metrics"]}
    assert statuses["broken-metric"] == "error" and statuses["tlost"] == "ok" and statuses["tkd"] == "ok"
    clean = run_cli("-p", "no:broken", "metrics", release, *evidence, "--json", "-q", "--executor", "serial")
    assert clean.code == 0 and "broken-metric" not in clean.out

    monkeypatch.setenv(FAULT_ENV, "attack.run")
    report = tmp_path / "audit.json"
    audited = run_cli("audit", release, *evidence, "--format", "json", "-o", report, "-q", "--executor", "serial")
    _one_sentence(audited, "attack 'broken-attack' raised RuntimeError in run(): injected fault")
    content = json.loads(report.read_text())
    assert content["verdict"] == "INCOMPLETE"
    ran = {run["attack"] for run in content["attacks"]}
    assert {"broken-attack", "linkage"} <= ran

    monkeypatch.setenv(FAULT_ENV, "metric.compute")
    out = tmp_path / "cmp"
    compared = run_cli(
        "compare", data, "--method", "disassociation", "--k", "3", "-o", out, "-q", "--executor", "serial"
    )
    _one_sentence(compared, "metric 'broken-metric' raised RuntimeError in compute(): injected fault")
    rows = json.loads((out / "results.json").read_text())["rows"]
    assert len(rows) == 1 and rows[0]["verdict"] == "INCOMPLETE" and "tlost.tlost_terms" in rows[0]
    assert not list((out / "cells").glob("*.json"))  # not stored: a resumed run tries the cell again
    monkeypatch.delenv(FAULT_ENV)
    assert run_cli("compare", data, "--method", "disassociation", "--k", "3", "-o", out, "-q").code == 0
