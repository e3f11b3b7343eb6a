"""Sensitive association-rule hiding (issue 6): the sanitizers ``mfi-relevance``,
``fhsar``, ``mdsrrc``, ``exact`` and the side-effect metric ``rule-side-effects``.

See docs/algorithms/rule-hiding.md for the methods and every choice the papers
leave open.
"""

from __future__ import annotations

from privtool.components import LazyComponent, Metric, Sanitizer
from privtool.hookspecs import hookimpl


@hookimpl
def privtool_sanitizers() -> list[Sanitizer | LazyComponent]:
    return [
        LazyComponent("mfi-relevance", f"{__name__}.mfi_relevance:MfiRelevance"),
        LazyComponent("fhsar", f"{__name__}.fhsar:Fhsar"),
        LazyComponent("mdsrrc", f"{__name__}.mdsrrc:Mdsrrc"),
        LazyComponent("exact", f"{__name__}.exact:Exact"),
    ]


@hookimpl
def privtool_metrics() -> list[Metric | LazyComponent]:
    return [
        LazyComponent("rule-side-effects", f"{__name__}.side_effects:RuleSideEffects"),
    ]
