"""The two kinds of method a ``compare`` spec can name, behind one interface.

* An **anonymizer chain**: ``METHOD`` is a registered anonymizer, followed by
  ``+SANITIZER`` stages that work on its release (:func:`privtool.pipeline.run_method`).
* A **dataset sanitizer**: ``METHOD`` is a registered sanitizer that works on
  raw data (rule hiding: ``mfi-relevance``, ``fhsar``, ``mdsrrc``, ``exact`` or a
  plugin's), run alone by :func:`privtool.hiding.hide`, the code path of
  ``privtool hide``; its parameters include the rule choice (``rules``,
  ``sensitive``, ``pick``) and the mining thresholds.

An anonymizer and a dataset sanitizer of the same name: the anonymizer wins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..components import Outcome
from ..context import Context
from ..dataset import Dataset
from ..errors import ParameterError, PluginError
from ..hiding import choice_given, dataset_sanitizer, hide, hiding_params, is_dataset_sanitizer
from ..params import Param, resolve
from ..pipeline import method_chain, run_method
from ..registry import Registry
from .spec import MethodSpec


def _is_anonymizer(registry: Registry, spec: MethodSpec) -> bool:
    return spec.method in registry.names("anonymizer")


def check(registry: Registry, spec: MethodSpec, axes: Mapping[str, Sequence[Any]]) -> None:
    """Before anything runs: every stage of ``spec`` exists and fits, and its
    options and every grid value it declares are valid (one sentence otherwise)."""
    _known(registry, spec)
    params = declared(registry, spec)
    owner = f"--method {spec.label!r}"
    by_name = {p.name: p for p in params}
    for name, grid_values in axes.items():
        for value in grid_values if name in by_name else ():
            by_name[name].coerce(value)
    values = resolve(params, {**spec.options, **{n: v[0] for n, v in axes.items() if n in by_name}}, owner)
    if not _is_anonymizer(registry, spec) and "sensitive_rules" in by_name:
        choice_given(values)


def _known(registry: Registry, spec: MethodSpec) -> None:
    if _is_anonymizer(registry, spec):
        return
    if spec.method in registry.names("sanitizer"):
        dataset_sanitizer(registry, spec.method)
        if spec.sanitizers:
            raise ParameterError(
                f"--method {spec.label!r}: the rule-hiding sanitizer {spec.method!r} works on raw data "
                "and takes no further +stage."
            )
        return
    hiders = [c.name for c in registry.all("sanitizer") if is_dataset_sanitizer(c)]
    raise PluginError(
        f"unknown method {spec.method!r}: not an anonymizer ({', '.join(registry.names('anonymizer'))}) "
        f"nor a rule-hiding sanitizer ({', '.join(hiders)})."
    )


def declared(registry: Registry, spec: MethodSpec) -> list[Param]:
    """The parameters ``spec``'s method accepts (grid values outside them are left out)."""
    if _is_anonymizer(registry, spec):
        return method_chain(registry, spec.method, spec.sanitizers, spec.options).spec
    return hiding_params(dataset_sanitizer(registry, spec.method))


def run(registry: Registry, dataset: Dataset, spec: MethodSpec, options: Mapping[str, Any], ctx: Context) -> Outcome:
    """The stamped outcome of ``spec`` on ``dataset`` with raw ``options``."""
    if _is_anonymizer(registry, spec):
        return run_method(registry, dataset, spec.method, options, ctx, spec.sanitizers)
    return hide(registry, dataset, spec.method, options, ctx)
