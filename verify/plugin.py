"""The built-in verifiers, registered through ``privtool_verifiers`` like any
plugin's: by name and factory (:class:`~privtool.components.LazyComponent`), so
a verifier's module is imported only when the verifier is used."""

from __future__ import annotations

from privtool.components import LazyComponent, Verifier
from privtool.hookspecs import hookimpl

_VERIFIERS = (
    ("km-anonymity", "disassociated:KmAnonymity"),
    ("disassociation-guarantee", "disassociated:DisassociationGuarantee"),
    ("cover-freedom", "disassociated:CoverFreedom"),
    ("cover-freedom-algorithm-aware", "algorithm_aware:AlgorithmAwareCoverFreedom"),
    ("k-anonymity", "generalized:KAnonymity"),
    ("km-anonymity-records", "records_km:KmAnonymityOfRecords"),
    ("hierarchy", "generalized:HierarchyConsistency"),
    ("rule-hiding", "sanitized:RuleHiding"),
    ("removal-only", "sanitized:RemovalOnly"),
    ("faithfulness", "faithfulness:Faithfulness"),
)
"""Name -> ``module:class`` of each verifier, the module within this package."""


@hookimpl
def privtool_verifiers() -> list[Verifier | LazyComponent]:
    return [LazyComponent(name, f"{__package__}.{factory}") for name, factory in _VERIFIERS]
