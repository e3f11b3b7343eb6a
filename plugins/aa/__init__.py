"""The ``aa`` anonymizer: k^m-anonymity by Apriori-based global generalisation
through a hierarchy (Terrovitis, Mamoulis, Kalnis, PVLDB 2008), registered
through ``privtool_anonymizers`` like any third-party plugin and built on the
public modules only (``privtool.hierarchy``, ``privtool.dataset``, numpy)."""

from __future__ import annotations

from privtool.components import Anonymizer, LazyComponent
from privtool.hookspecs import hookimpl


@hookimpl
def privtool_anonymizers() -> list[Anonymizer | LazyComponent]:
    return [
        LazyComponent("aa", f"{__name__}.anonymizer:Aa"),
    ]
