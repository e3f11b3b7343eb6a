"""Verifiers of a ``disassociated`` release (docs/guarantees.md).

* ``km-anonymity``: every record chunk and shared chunk is k^m-anonymous (every
  itemset of 1..m items that occurs in a chunk occurs in at least k of its
  sub-records; Terrovitis et al. 2012, ALGORITHM-NOTES 1.1). One unit per chunk.
* ``cover-freedom``: no chunk has a covered item (Awad et al., Definition 3 and
  Definition 4 "safe disassociation"). Proves the ``cover-freedom`` claim, which
  the ``safe-disassociation`` sanitizer makes.
* ``disassociation-guarantee``: Awad et al., Definition 2 (after Terrovitis et
  al.): for every itemset I of 1..m items that some reconstruction contains, some
  reconstruction contains I in at least k records. Computed exactly from the
  maximum support of I over all reconstructions (:mod:`.reconstruction_bounds`).

A ``km-anonymity`` claim on a disassociated release is proved by ``km-anonymity``
(the chunks, what the release publishes) and ``disassociation-guarantee`` (what
an adversary can reconstruct, which also covers term chunks and clusters too
small for k) together: both must hold (docs/guarantees.md).
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any, ClassVar

from privtool.components import Evidence, Verifier
from privtool.context import Context
from privtool.params import Param
from privtool.release import Release
from privtool.results import Certificate

from .certify import certificate_from_units
from .chunk_batches import ChunkBatches, release_arrays
from .engines import BATCH_SIZE, ENGINES, UnitTally, check_cover_arrays, check_cover_chunks, check_km_chunks
from .levels import K_CHECKED, M_CHECKED, level
from .reconstruction_bounds import check_disassociation_guarantee

ENGINE = Param(
    "engine", str, "auto", "Engine per unit: cpsat, enum, both (cross-check) or auto (by size).", choices=ENGINES
)


class KmAnonymity(Verifier):
    name = "km-anonymity"
    summary = "Every record chunk and shared chunk is k^m-anonymous (CP-SAT / enumeration per chunk)."
    params = (K_CHECKED, M_CHECKED, ENGINE)
    applies_to: ClassVar[tuple[str, ...]] = ("disassociated",)
    proves: ClassVar[tuple[str, ...]] = ("km-anonymity",)

    def verify(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Certificate]:
        start = time.perf_counter()
        k, m = level(release, params, "k"), level(release, params, "m")
        batches = ChunkBatches.all_chunks(release_arrays(release), BATCH_SIZE)
        check = partial(check_km_chunks, k=k, m=m, requested=params["engine"], deadline=ctx.deadline)
        tally = UnitTally()
        for part in ctx.map(check, batches, "k^m-anonymity of chunks (batches)"):
            tally.add(part)
        return [
            certificate_from_units(self.name, params["engine"], tally, time.perf_counter() - start, {"k": k, "m": m})
        ]


class CoverFreedom(Verifier):
    name = "cover-freedom"
    summary = "No chunk has a covered item (safe disassociation, Awad et al. Definitions 3-4)."
    params = (ENGINE,)
    applies_to: ClassVar[tuple[str, ...]] = ("disassociated",)
    proves: ClassVar[tuple[str, ...]] = ("cover-freedom",)

    def verify(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Certificate]:
        start = time.perf_counter()
        engine = params["engine"]
        arrays = release_arrays(release)
        if engine in ("auto", "enum"):
            with ctx.stage("cover-freedom of chunks (direct count)"):
                tally = check_cover_arrays(arrays)
        else:
            check = partial(check_cover_chunks, requested=engine, deadline=ctx.deadline)
            tally = UnitTally()
            for part in ctx.map(check, ChunkBatches.all_chunks(arrays, BATCH_SIZE), "cover-freedom of chunks"):
                tally.add(part)
        return [certificate_from_units(self.name, params["engine"], tally, time.perf_counter() - start)]


class DisassociationGuarantee(Verifier):
    name = "disassociation-guarantee"
    summary = "Every itemset of up to m items that a reconstruction can hold reaches support k in some reconstruction."
    params = (K_CHECKED, M_CHECKED)
    applies_to: ClassVar[tuple[str, ...]] = ("disassociated",)
    proves: ClassVar[tuple[str, ...]] = ("km-anonymity",)

    def verify(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Certificate]:
        return [check_disassociation_guarantee(release, level(release, params, "k"), level(release, params, "m"), ctx)]


__all__ = ["CoverFreedom", "DisassociationGuarantee", "KmAnonymity"]
