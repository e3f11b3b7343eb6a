"""Running a rule-hiding sanitizer on raw data: the one code path of ``privtool
hide``, ``privtool compare`` (a spec whose method is a dataset sanitizer) and
``benchmarks/rule_hiding.py``.

A dataset sanitizer (``applies_to`` holds ``"dataset"``; the built-ins are
``mfi-relevance``, ``fhsar``, ``mdsrrc`` and ``exact``) takes the sensitive rules
as its ``sensitive_rules`` parameter. Callers may instead say how to *choose*
them (:data:`RULE_CHOICE`), exactly one of:

* ``rules``: a rule file (``a b => c`` lines or rule ids, docs/commands/hide.md);
* ``sensitive=N``: N of the strong rules of the data at the thresholds, taken
  ``pick=random`` (uniformly without replacement from the canonical rule order,
  with ``ctx.rng("sensitive-rules", N)``, so the same seed and N give the same
  rules) or ``pick=top`` (the first N in the order ``privtool rules`` lists:
  confidence, then support, descending);
* ``sensitive_rules``: the rules themselves, ``a b => c`` separated by ``;``.

:func:`hide` resolves the choice and a relative ``min_support`` (into the
absolute count the ``rule-hiding`` claim states; the fraction is kept as
``params.min_support_relative``), runs the sanitizer, writes the claims it
declares and stamps the release.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .components import Component, Outcome, Sanitizer
from .context import Context
from .dataset import Dataset
from .errors import ParameterError
from .mining import Rule, Thresholds, association_rules, strongest_first
from .params import Param, merge_specs, resolve
from .pipeline import declare_claims, stamp, taking_part
from .registry import Registry
from .rulefile import read_rule_file, resolve_rules, rules_from_param, rules_text

RULE_CHOICE: tuple[Param, ...] = (
    Param("rules", str, None, "a rule file: `a b => c` lines or rule ids from `privtool rules`"),
    Param("sensitive", int, None, "choose this many of the strong rules of the data as the sensitive ones", min=1),
    Param(
        "pick",
        str,
        "random",
        "how `sensitive` rules are chosen: random (seeded) or top (highest confidence first)",
        choices=("random", "top"),
    ),
)
THRESHOLDS = ("min_support", "min_confidence")


def is_dataset_sanitizer(component: Component) -> bool:
    return component.kind == "sanitizer" and "dataset" in getattr(component, "applies_to", ())


def dataset_sanitizer(registry: Registry, name: str) -> Sanitizer:
    """The sanitizer ``name``, which must work on raw data."""
    component = registry.get("sanitizer", name)
    if not is_dataset_sanitizer(component):
        raise ParameterError(f"sanitizer {name!r} does not work on raw data; a rule-hiding sanitizer is needed here.")
    return component


def hiding_params(component: Component) -> list[Param]:
    """What a caller may give: the sanitizer's parameters and, when it takes
    ``sensitive_rules``, that one optional plus :data:`RULE_CHOICE`."""
    if not _takes_rules(component):
        return list(component.params)
    own = [Param(p.name, p.type, p.default, p.help) if p.name == "sensitive_rules" else p for p in component.params]
    return merge_specs([own, RULE_CHOICE])


def _takes_rules(component: Component) -> bool:
    return {"sensitive_rules", *THRESHOLDS} <= {p.name for p in component.params}


def choice_given(choice: Mapping[str, Any]) -> str:
    """Which one of ``rules``, ``sensitive``, ``sensitive_rules`` ``choice`` gives
    (exactly one must be given)."""
    given = [name for name in ("rules", "sensitive", "sensitive_rules") if choice.get(name) is not None]
    if len(given) != 1:
        raise ParameterError(
            "give the sensitive rules one way: rules (a rule file), "
            "sensitive (a count, with pick random or top) or sensitive_rules"
            + (f", not {' and '.join(given)}." if given else ".")
        )
    return given[0]


def choose_rules(dataset: Dataset, thresholds: Thresholds, choice: Mapping[str, Any], ctx: Context) -> list[Rule]:
    """The sensitive rules named by ``choice`` (resolved :func:`hiding_params`
    values; exactly one of ``rules``, ``sensitive``, ``sensitive_rules``)."""
    way = choice_given(choice)
    if way == "rules":
        return resolve_rules(read_rule_file(choice["rules"]), dataset, thresholds, choice["rules"])
    if way == "sensitive_rules":
        return rules_from_param(choice["sensitive_rules"], dataset, thresholds)
    count = int(choice["sensitive"])
    mined = association_rules(dataset, thresholds)
    if count > len(mined):
        raise ParameterError(f"--sensitive {count}: the data has only {len(mined)} strong rules at these thresholds.")
    if choice.get("pick", "random") == "top":
        return [m.rule for m in strongest_first(mined)[:count]]
    picked = ctx.rng("sensitive-rules", count).choice(len(mined), size=count, replace=False)
    return [mined[i].rule for i in sorted(picked.tolist())]


def hide(registry: Registry, dataset: Dataset, sanitizer: str, options: Mapping[str, Any], ctx: Context) -> Outcome:
    """Choose the sensitive rules, run the rule-hiding ``sanitizer`` on ``dataset``
    and stamp the release. ``options`` are raw values of :func:`hiding_params`."""
    component = dataset_sanitizer(registry, sanitizer)
    values = resolve(hiding_params(component), options, f"sanitizer {sanitizer!r}")
    params = {p.name: values[p.name] for p in component.params}
    if _takes_rules(component):
        thresholds = Thresholds.of(values["min_support"], values["min_confidence"], dataset.n_records)
        params["sensitive_rules"] = rules_text(choose_rules(dataset, thresholds, values, ctx))
        params["min_support"] = thresholds.min_support  # the absolute count the rule-hiding claim states
    outcome = component.sanitize(dataset, params, ctx)
    outcome.release.claims = declare_claims(registry, component, component.claims(params, []), outcome.release.kind)
    if _takes_rules(component) and values["min_support"] < 1:
        outcome.release.params["min_support_relative"] = float(values["min_support"])
    plugins = taking_part(registry, [component])
    return stamp(registry, outcome, plugins, dataset.content_sha256(), ctx.seed, component, dataset)
