"""The built-in claim vocabulary (hook ``privtool_claim_models``; docs/guarantees.md).

* ``km-anonymity`` (k, m): an adversary who knows up to m items of a person
  cannot narrow them down to fewer than k records (Terrovitis et al. 2012).
  Carried by every kind: disassociated releases (proved by the chunk verifier
  and the disassociation-guarantee verifier together), generalized and sanitized
  releases (the record-level k^m verifier).
* ``k-anonymity`` (k): every published record occurs at least k times (He &
  Naughton 2009, section 3.1); generalized and sanitized releases.
* ``cover-freedom`` (m): no chunk of a disassociated release has a covered item
  (Awad et al., Definitions 3 and 4).
* ``rule-hiding`` (min_support, min_confidence): every sensitive rule is below
  one of the thresholds in the published records. The rules themselves are a
  secret kept in the private trail; the claim states the thresholds only.
"""

from __future__ import annotations

from typing import ClassVar

from privtool.claims import Claim
from privtool.components import ClaimModel
from privtool.hookspecs import hookimpl
from privtool.params import Param

K = Param("k", int, required=True, help="every itemset an adversary can know is shared by at least k records", min=2)
M = Param("m", int, required=True, help="the largest number of items an adversary knows", min=1)


class KmAnonymity(ClaimModel):
    name = "km-anonymity"
    summary = "no m known items narrow a person down to fewer than k records (k^m-anonymity)"
    params = (K, M)
    criteria: ClassVar[tuple[str, ...]] = ("singling-out", "linkability")
    carried_by: ClassVar[tuple[str, ...]] = ("disassociated", "generalized", "sanitized")

    def statement(self, claim: Claim) -> str:
        k, m = claim.params["k"], claim.params["m"]
        return (
            f"Anyone who knows up to {m} item(s) of a person finds them in at least {k} records, "
            "so cannot single the person out (k^m-anonymity)."
        )


class KAnonymity(ClaimModel):
    name = "k-anonymity"
    summary = "every published record occurs at least k times"
    params = (K,)
    criteria: ClassVar[tuple[str, ...]] = ("singling-out", "linkability")
    carried_by: ClassVar[tuple[str, ...]] = ("generalized", "sanitized")

    def statement(self, claim: Claim) -> str:
        k = claim.params["k"]
        return (
            f"Every published record occurs at least {k} times, so no combination of known items "
            f"narrows a person down to fewer than {k} records."
        )


class CoverFreedom(ClaimModel):
    name = "cover-freedom"
    summary = "no chunk has a covered item (safe disassociation)"
    params = (M,)
    criteria: ClassVar[tuple[str, ...]] = ("inference",)
    carried_by: ClassVar[tuple[str, ...]] = ("disassociated",)

    def statement(self, claim: Claim) -> str:
        return (
            f"No chunk has a covered item: knowing up to {claim.params['m']} item(s) of a person never links "
            "the rest of a chunk's items to them with certainty (Awad et al., Definitions 3-4)."
        )


class RuleHiding(ClaimModel):
    name = "rule-hiding"
    summary = "every sensitive association rule is below the support or the confidence threshold"
    params = (
        Param("min_support", int, required=True, help="minimum support, as an absolute record count", min=1),
        Param("min_confidence", float, required=True, help="minimum confidence, a fraction", min=0.0, max=1.0),
    )
    criteria: ClassVar[tuple[str, ...]] = ("inference",)
    carried_by: ClassVar[tuple[str, ...]] = ("sanitized",)
    stricter_when_lower: ClassVar[tuple[str, ...]] = ("min_support", "min_confidence")

    def statement(self, claim: Claim) -> str:
        return (
            f"Mining the published records at support {claim.params['min_support']} and confidence "
            f"{claim.params['min_confidence']} finds none of the sensitive rules (the rules themselves stay private)."
        )


@hookimpl
def privtool_claim_models() -> list[ClaimModel]:
    return [KmAnonymity(), KAnonymity(), CoverFreedom(), RuleHiding()]
