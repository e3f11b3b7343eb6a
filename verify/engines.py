"""Engine selection and the per-unit work functions that run through ``ctx.map``.

``--engine`` is ``cpsat``, ``enum``, ``both`` or ``auto`` (the default). ``auto``
picks per unit by a size rule: the enumeration engine when the number of
itemsets of 1..m items over the chunk's distinct items is at most
:data:`AUTO_ENUM_LIMIT` (it then visits at most that many bitset intersections,
microseconds each), CP-SAT otherwise (a few milliseconds per model, growing
slowly with the chunk). ``both`` runs the two engines on every unit and records
any disagreement, which the certificate reports loudly.

The work functions are top-level and take one picklable tuple, so the process
and Dask executors can run them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .chunks import (
    ChunkBits,
    covered_items_all,
    covered_items_cpsat,
    covered_items_enum,
    enumeration_size,
    km_witness_enum,
    km_witnesses_cpsat,
)

ENGINES = ("auto", "cpsat", "enum", "both")
AUTO_ENUM_LIMIT = 20_000
"""``auto`` uses enumeration up to this many candidate itemsets per chunk."""


def pick_engine(requested: str, n_items: int, m: int) -> str:
    """The engine that checks one unit: ``requested`` unless it is ``auto``."""
    if requested != "auto":
        return requested
    return "enum" if enumeration_size(n_items, m) <= AUTO_ENUM_LIMIT else "cpsat"


@dataclass
class UnitResult:
    """What one unit (a chunk) yielded: its location, the engine that decided,
    the witness (None when the property holds), a disagreement between engines."""

    location: dict[str, Any]
    engine: str
    witness: dict[str, Any] | None
    seconds: float
    disagreement: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


KmBatch = tuple[tuple[dict[str, Any], ...], tuple[tuple[tuple[str, ...], ...], ...], int, int, str]
"""(locations, the chunks' sub-records, k, m, requested engine): chunks checked together."""

BATCH_SIZE = 64
"""Chunks per k^m work unit; the CP-SAT ones among them are certified by one solve."""


def check_km_batch(batch: KmBatch) -> list[UnitResult]:
    """k^m-anonymity of a batch of chunks; one :class:`UnitResult` per chunk."""
    locations, chunks, k, m, requested = batch
    start = time.perf_counter()
    engines = [pick_engine(requested, len(ChunkBits.of(rows).items), m) for rows in chunks]
    by_enum: dict[int, tuple[list[str], int] | None] = {}
    by_cpsat: dict[int, tuple[list[str], int] | None] = {}
    for n, engine in enumerate(engines):
        if engine in ("enum", "both"):
            by_enum[n] = km_witness_enum(chunks[n], k, m)
    solver_chunks = [n for n, engine in enumerate(engines) if engine in ("cpsat", "both")]
    if solver_chunks:
        found = km_witnesses_cpsat([chunks[n] for n in solver_chunks], k, m)
        by_cpsat.update(zip(solver_chunks, found, strict=False))
    share = (time.perf_counter() - start) / max(1, len(chunks))
    results = []
    for n, (location, engine) in enumerate(zip(locations, engines, strict=False)):
        answers = {name: table[n] for name, table in (("enum", by_enum), ("cpsat", by_cpsat)) if n in table}
        witness = next((w for w in answers.values() if w is not None), None)
        disagreement = None
        if len(answers) == 2 and (answers["enum"] is None) != (answers["cpsat"] is None):
            disagreement = {
                name: (None if w is None else {"itemset": w[0], "support": w[1]}) for name, w in answers.items()
            }
        results.append(
            UnitResult(
                location,
                engine,
                None if witness is None else {**location, "itemset": witness[0], "support": witness[1], "k": k},
                share,
                disagreement,
            )
        )
    return results


def check_km_unit(unit: tuple[dict[str, Any], tuple[tuple[str, ...], ...], int, int, str]) -> UnitResult:
    """k^m-anonymity of one chunk: (location, sub-records, k, m, requested engine)."""
    location, rows, k, m, requested = unit
    return check_km_batch(((location,), (rows,), k, m, requested))[0]


CoverUnit = tuple[dict[str, Any], tuple[tuple[str, ...], ...], str]
"""(location, sub-records, requested engine)."""


def cover_witness(
    location: dict[str, Any], rows: tuple[tuple[str, ...], ...], covered: list[str], s_all: int
) -> dict[str, Any] | None:
    """The witness of a chunk with covered items (None without)."""
    if not covered:
        return None
    everything = sorted({item for row in rows for item in row})
    return {
        **location,
        "covered_items": covered,
        "covering_items": [i for i in everything if i not in covered],
        "support": s_all,
    }


def check_cover_unit(unit: CoverUnit) -> UnitResult:
    """Cover-freedom of one chunk (no covered item). The verifier sends only
    ``cpsat`` and ``both`` units here; for ``enum`` and ``auto`` it checks every
    chunk at once (:func:`check_cover_all`)."""
    location, rows, requested = unit
    start = time.perf_counter()
    engine = "enum" if requested == "auto" else requested
    found: dict[str, tuple[list[str], int]] = {}
    if engine in ("enum", "both"):
        found["enum"] = covered_items_enum(rows)
    if engine in ("cpsat", "both"):
        found["cpsat"] = covered_items_cpsat(rows)
    answers = list(found.values())
    covered, s_all = answers[0]
    disagreement = None
    if len(found) == 2 and answers[0] != answers[1]:
        disagreement = {name: {"covered": c, "chunk_itemset_support": s} for name, (c, s) in found.items()}
    return UnitResult(
        location, engine, cover_witness(location, rows, covered, s_all), time.perf_counter() - start, disagreement
    )


def check_cover_all(units: list[tuple[dict[str, Any], tuple[tuple[str, ...], ...]]]) -> list[UnitResult]:
    """Cover-freedom of every chunk by the direct count, in one vectorised pass
    (:func:`covered_items_all`) in the calling process: it costs less than
    sending the chunks to workers."""
    start = time.perf_counter()
    found = covered_items_all([rows for _, rows in units])
    share = (time.perf_counter() - start) / max(1, len(units))
    return [
        UnitResult(location, "enum", cover_witness(location, rows, covered, s_all), share)
        for (location, rows), (covered, s_all) in zip(units, found, strict=False)
    ]
