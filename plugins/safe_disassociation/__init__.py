"""Built-in plugin ``safe-disassociation``: the sanitizer of the
safe-disassociation paper (Awad et al.), its hardened variant
``safe-disassociation-hardened`` (:mod:`.hardened`) and the metrics PEM, RLM
and RAE.

The cover-problem detection it relies on lives in :mod:`privtool.attacks.cover`
(shared with the ``cover-linkage`` attack and the verifiers).
"""

from __future__ import annotations

from privtool.components import LazyComponent, Metric, Sanitizer
from privtool.hookspecs import hookimpl


@hookimpl
def privtool_sanitizers() -> list[Sanitizer | LazyComponent]:
    return [
        LazyComponent("safe-disassociation", f"{__name__}.sanitizer:SafeDisassociation"),
        LazyComponent("safe-disassociation-hardened", f"{__name__}.hardened:HardenedSafeDisassociation"),
    ]


@hookimpl
def privtool_metrics() -> list[Metric | LazyComponent]:
    return [
        LazyComponent("pem", f"{__name__}.metrics:Pem"),
        LazyComponent("rlm", f"{__name__}.metrics:Rlm"),
        LazyComponent("rae", f"{__name__}.metrics:Rae"),
    ]
