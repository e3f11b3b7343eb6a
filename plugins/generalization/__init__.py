"""Local generalisation through a hierarchy: the ``partition`` and ``lgr``
anonymizers and the ``ncp`` metric (issue 5)."""

from __future__ import annotations

from privtool.components import Anonymizer, LazyComponent, Metric
from privtool.hookspecs import hookimpl


@hookimpl
def privtool_anonymizers() -> list[Anonymizer | LazyComponent]:
    return [
        LazyComponent("partition", f"{__name__}.anonymizers:Partition"),
        LazyComponent("lgr", f"{__name__}.anonymizers:Lgr"),
    ]


@hookimpl
def privtool_metrics() -> list[Metric | LazyComponent]:
    return [
        LazyComponent("ncp", f"{__name__}.ncp:Ncp"),
    ]
