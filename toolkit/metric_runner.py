"""Running metrics on a release (``privtool metrics``).

The metrics are chosen by :func:`privtool.assess.select` (the named ones, each of
which must apply to the release kind, or every one that applies) and each gets
the options it declares (:func:`privtool.assess.options_for`). A metric that
compares with the original (``needs_original``) is reported as *skipped* with
the reason when no original is given, or, when the user named it, fails with
that reason (exit 2).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .assess import options_for
from .components import Evidence, Metric
from .context import Context
from .errors import ParameterError
from .params import Param
from .release import Release


@dataclass
class MetricResult:
    """One metric's outcome: ``status`` ``ok`` with its ``values``, or ``skipped``
    with the ``reason``."""

    name: str
    status: str
    values: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def option_spec(metrics: Sequence[Metric]) -> list[Param]:
    """Every option any of ``metrics`` declares (a name shared by two metrics
    once; each metric checks the value against its own declaration)."""
    spec: dict[str, Param] = {}
    for metric in metrics:
        for param in metric.params:
            spec.setdefault(param.name, param)
    return list(spec.values())


def run_metrics(
    metrics: Sequence[Metric],
    release: Release,
    evidence: Evidence,
    options: Mapping[str, Any],
    ctx: Context,
    named: bool = False,
) -> list[MetricResult]:
    """Compute ``metrics``, each with the ``options`` it declares. Without an
    original, a metric that needs one is skipped, or, with ``named`` (the user
    asked for it), is an error."""
    results = []
    for metric in metrics:
        params = options_for(metric, options)
        if metric.needs_original and evidence.original is None:
            reason = f"metric {metric.name!r} needs the original data (--original DATA)."
            if named:
                raise ParameterError(reason)
            results.append(MetricResult(metric.name, "skipped", reason=reason))
            continue
        started = time.perf_counter()
        values = metric.compute(release, evidence, params, ctx)
        results.append(MetricResult(metric.name, "ok", values, seconds=round(time.perf_counter() - started, 3)))
    return results
