"""Local generalisation through a hierarchy: the ``partition`` and ``lgr``
anonymizers and the ``ncp`` metric (issue 5)."""

from __future__ import annotations

from privtool.components import Anonymizer, Metric
from privtool.hookspecs import hookimpl

from .anonymizers import Lgr, Partition
from .ncp import Ncp


@hookimpl
def privtool_anonymizers() -> list[Anonymizer]:
    return [Partition(), Lgr()]


@hookimpl
def privtool_metrics() -> list[Metric]:
    return [Ncp()]
