"""Built-in plugin ``safe-disassociation``: the sanitizer of the
safe-disassociation paper (Awad et al.), its hardened variant
``safe-disassociation-hardened`` (:mod:`.hardened`) and the metrics PEM, RLM
and RAE.

The cover-problem detection it relies on lives in :mod:`privtool.attacks.cover`
(shared with the ``cover-linkage`` attack and the verifiers).
"""

from __future__ import annotations

from privtool.components import Metric, Sanitizer
from privtool.hookspecs import hookimpl

from .hardened import HardenedSafeDisassociation
from .metrics import Pem, Rae, Rlm
from .sanitizer import SafeDisassociation


@hookimpl
def privtool_sanitizers() -> list[Sanitizer]:
    return [SafeDisassociation(), HardenedSafeDisassociation()]


@hookimpl
def privtool_metrics() -> list[Metric]:
    return [Pem(), Rlm(), Rae()]
