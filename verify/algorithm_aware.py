"""Cover-freedom against the algorithm-aware adversary (issue 17).

**Statement**: for every record and shared chunk of the release, no item is
covered in the chunk itself, nor in every chunk the release's
safe-disassociation rules could have turned into it (its pre-images). An
adversary who knows the published sanitizer can then not tell, for any item,
that every sub-record holding it held the whole itemset in the original.

**Unit**: one chunk. **Engine**: enumeration, by the same code as the
``preimage`` attack (:mod:`privtool.attacks.preimage`; one implementation, two
components): the chunk's own covered items by one counting pass, then the
inversion of the rules. **Witness**: the chunk, its itemset, the items covered
in every pre-image, how many pre-images were found and one of them.

It proves ``cover-freedom`` claims against the ``algorithm-aware`` adversary
(the engine runs it for those claims only). A release made with the paper's
rules fails on every chunk that has a pre-image (theorem 1 of docs/algorithms/safe-disassociation.md: the covered
items of a repaired chunk are a function of its published supports); one made
with ``safe-disassociation-hardened`` holds by construction (theorem 2), which
this verifier re-checks chunk by chunk. A release with no safe-disassociation
sanitizer has no rules to invert; its chunks are only checked for covered items.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from privtool.attacks.cover import analyse_chunk
from privtool.attacks.preimage import invert
from privtool.attacks.preimage_attack import chunk_rules, release_chunks, release_rules
from privtool.components import Evidence, Verifier
from privtool.context import Context
from privtool.release import Release
from privtool.results import Certificate

from .certify import certificate_from_units
from .engines import UnitResult

NAME = "cover-freedom-algorithm-aware"


def check_release(release: Release) -> list[UnitResult]:
    """One unit result per chunk (see the module docstring)."""
    rules = release_rules(release)
    cap = max(2, int(release.params.get("k", 2)))
    results = []
    for _, chunk in release_chunks(release):
        started = time.perf_counter()
        location = {"chunk": str(chunk.ref)}
        cover = analyse_chunk(chunk.rows, chunk.ref)
        witness: dict[str, Any] | None = None
        if cover.covered:
            witness = {**location, "itemset": list(cover.itemset), "covered_in_the_chunk": list(cover.covered)}
        elif rules is not None:
            inversion = invert(chunk.rows, chunk_rules(release, rules, chunk), cap)
            if inversion.covered_in_all:
                witness = {
                    **location,
                    "rules": rules,
                    "itemset": list(inversion.items),
                    "covered_in_every_preimage": list(inversion.covered_in_all),
                    "preimages": f"{inversion.count}{'' if inversion.exhausted else '+'}",
                    "a_preimage": inversion.example,
                }
        results.append(UnitResult(location, "enum", witness, time.perf_counter() - started))
    return results


class AlgorithmAwareCoverFreedom(Verifier):
    """See the module docstring."""

    name = NAME
    summary = "No chunk has a covered item, nor one covered in every pre-image under the release's published rules."
    applies_to: ClassVar[tuple[str, ...]] = ("disassociated",)
    proves: ClassVar[tuple[str, ...]] = ("cover-freedom",)
    adversaries: ClassVar[tuple[str, ...]] = ("algorithm-aware",)

    def verify(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Certificate]:
        start = time.perf_counter()
        with ctx.stage("cover-freedom against the algorithm-aware adversary (pre-images)"):
            results = check_release(release)
        details = {"rules": release_rules(release) or "none", "adversary": "algorithm-aware"}
        return [certificate_from_units(self.name, "enum", results, time.perf_counter() - start, details)]
