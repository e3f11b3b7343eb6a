"""The built-in verifiers, registered through ``privtool_verifiers`` like any plugin's."""

from __future__ import annotations

from privtool.components import Verifier
from privtool.hookspecs import hookimpl

from .algorithm_aware import AlgorithmAwareCoverFreedom
from .disassociated import CoverFreedom, DisassociationGuarantee, KmAnonymity
from .faithfulness import Faithfulness
from .generalized import HierarchyConsistency, KAnonymity
from .records_km import KmAnonymityOfRecords
from .sanitized import RemovalOnly, RuleHiding


@hookimpl
def privtool_verifiers() -> list[Verifier]:
    return [
        KmAnonymity(),
        DisassociationGuarantee(),
        CoverFreedom(),
        AlgorithmAwareCoverFreedom(),
        KAnonymity(),
        KmAnonymityOfRecords(),
        HierarchyConsistency(),
        RuleHiding(),
        RemovalOnly(),
        Faithfulness(),
    ]
