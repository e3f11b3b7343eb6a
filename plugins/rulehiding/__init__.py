"""Sensitive association-rule hiding (issue 6): the sanitizers ``mfi-relevance``,
``fhsar``, ``mdsrrc``, ``exact`` and the side-effect metric ``rule-side-effects``.

See docs/algorithms/rule-hiding.md for the methods and every choice the papers
leave open.
"""

from __future__ import annotations

from privtool.components import Metric, Sanitizer
from privtool.hookspecs import hookimpl

from .exact import Exact
from .fhsar import Fhsar
from .mdsrrc import Mdsrrc
from .mfi_relevance import MfiRelevance
from .side_effects import RuleSideEffects


@hookimpl
def privtool_sanitizers() -> list[Sanitizer]:
    return [MfiRelevance(), Fhsar(), Mdsrrc(), Exact()]


@hookimpl
def privtool_metrics() -> list[Metric]:
    return [RuleSideEffects()]
