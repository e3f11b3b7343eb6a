"""Choosing and running metrics on a release (``privtool metrics``, reports).

:func:`select_metrics` picks the registered metrics that apply to a release kind
(or checks the named ones); :func:`run_metrics` gives each the options it
declares, and reports a metric whose evidence is missing as *skipped* with the
reason, or, when the user named it, raises the :class:`MissingEvidence` sentence.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .components import Evidence, Metric
from .context import Context
from .errors import MissingEvidence, ParameterError
from .params import Param, resolve
from .registry import Registry
from .release import Release

EVIDENCE_OPTIONS = {"original": "--original DATA", "trail": "--trail TRAIL"}


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


def select_metrics(registry: Registry, kind: str, names: Sequence[str] = ()) -> list[Metric]:
    """The named metrics (each must apply to ``kind``), or every metric that does."""
    if not names:
        return [m for m in registry.all("metric") if kind in m.applies_to]
    chosen = []
    for name in dict.fromkeys(names):
        metric = registry.get("metric", name)
        if kind not in metric.applies_to:
            raise ParameterError(f"metric {name!r} applies to {', '.join(metric.applies_to) or 'no'} releases, not {kind} ones.")
        chosen.append(metric)
    return chosen


def option_spec(metrics: Sequence[Metric]) -> list[Param]:
    """Every option any of ``metrics`` declares (a name shared by two metrics
    once; each metric checks the value against its own declaration)."""
    spec: dict[str, Param] = {}
    for metric in metrics:
        for param in metric.params:
            spec.setdefault(param.name, param)
    return list(spec.values())


def _missing(metric: Metric, evidence: Evidence) -> str | None:
    for need in metric.needs:
        if getattr(evidence, need, None) is None:
            option = EVIDENCE_OPTIONS.get(need, need)
            return f"metric {metric.name!r} needs the {'original data' if need == 'original' else need} ({option})."
    return None


def run_metrics(
    metrics: Sequence[Metric],
    release: Release,
    evidence: Evidence,
    options: Mapping[str, Any],
    ctx: Context,
    named: bool = False,
) -> list[MetricResult]:
    """Compute ``metrics``; each gets the ``options`` it declares. With ``named``
    (the user asked for these metrics) missing evidence is an error, otherwise
    the metric is skipped with the reason."""
    results = []
    for metric in metrics:
        declared = {p.name for p in metric.params}
        params = resolve(metric.params, {k: v for k, v in options.items() if k in declared}, f"metric {metric.name!r}")
        started = time.perf_counter()
        try:
            reason = _missing(metric, evidence)
            if reason is not None:
                raise MissingEvidence(reason)
            values = metric.compute(release, evidence, params, ctx)
        except MissingEvidence as exc:
            if named:
                raise
            results.append(MetricResult(metric.name, "skipped", reason=exc.message))
            continue
        results.append(MetricResult(metric.name, "ok", values, seconds=round(time.perf_counter() - started, 3)))
    return results
