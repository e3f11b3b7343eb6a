"""Engine selection and the per-unit work functions that run through ``ctx.map``.

``--engine`` is ``cpsat``, ``enum``, ``both`` or ``auto`` (the default). ``auto``
picks per unit by the cost of enumeration, :func:`enumeration_cost`: the
itemsets of 1..m items over the chunk's distinct items (m clamped to the
longest sub-record), each an intersection of row bitsets whose cost grows with
the rows; enumeration when that is at most :data:`AUTO_ENUM_BUDGET`, CP-SAT
otherwise. Measured on the 2,000-record release of 420-item records
(``synth --records 2000 --items 1000 --avg-size 500``, k = 5, m = 2): a chunk
of 30 rows and 437 items has 95,703 such itemsets and enumeration proves it in
0.05 s, CP-SAT in 7.6 s; at m = 3 (13.9 million itemsets) CP-SAT finds the
witness in 0.05 s; chunks of 5-6 rows and 186 items take enumeration 0.009 s
(m = 2) and 0.6 s (m = 3, 1.1 million itemsets) against CP-SAT's 0.004 s. The
rule used to be 20,000 itemsets regardless of the rows, which sent the first
chunk to CP-SAT and made the default engine not finish in 590 s where
``--engine enum`` took 12.8 s. ``both`` runs the two engines on every unit and
records any disagreement, which the certificate reports loudly.

The work functions are top-level and picklable (bound by :func:`functools.partial`
where they take options), so the process and Dask executors can run them; the
release's chunks travel as CSR batches (:mod:`.chunk_batches`) and come back as
a :class:`UnitTally`.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from itertools import groupby
from operator import itemgetter
from typing import Any

import numpy as np

from privtool.arrays import SLAB_OCCURRENCES
from privtool.context import past
from privtool.errors import TimedOut
from privtool.release_arrays import ReleaseArrays

from .chunk_batches import ChunkBatch, chunk_location, chunk_slabs, label_rows
from .chunks import (
    SCREEN_M,
    ChunkBits,
    SolverGaveUp,
    covered_in_csr,
    covered_items_cpsat,
    covered_items_enum,
    effective_m,
    enumeration_size,
    km_witness_enum,
    km_witnesses_cpsat,
)

ENGINES = ("auto", "cpsat", "enum", "both")
AUTO_ENUM_BUDGET = 200_000
"""``auto`` enumerates a chunk whose :func:`enumeration_cost` is at most this
(about 0.1 s of bitset intersections), and gives it to CP-SAT above."""


def enumeration_cost(n_items: int, n_rows: int, m: int) -> float:
    """The itemsets enumeration may visit, weighted by the width of a row
    bitset (an intersection of 10,000 rows costs about twice one of a few)."""
    return enumeration_size(n_items, m) * (1 + n_rows / 10_000)


def pick_engine(requested: str, n_items: int, m: int, n_rows: int = 0) -> str:
    """The engine that checks one unit: ``requested`` unless it is ``auto``."""
    if requested != "auto":
        return requested
    return "enum" if enumeration_cost(n_items, n_rows, m) <= AUTO_ENUM_BUDGET else "cpsat"


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


@dataclass
class UnitTally:
    """Per-unit results reduced to what a certificate needs
    (:func:`privtool.verifiers.certify.certificate_from_units`): how many units,
    how many each engine decided (in the order the engines first occur), and only
    the notable results (a witness, an engine disagreement or a time-out), in
    unit order. Workers send these back instead of one result per chunk.
    ``unlisted`` counts the units refuted with a witness that :meth:`witness`
    did not keep."""

    units: int = 0
    engines: Counter[str] = field(default_factory=Counter)
    notable: list[UnitResult] = field(default_factory=list)
    unlisted: int = 0
    kept: int = 0  # notable results with a witness

    @classmethod
    def of(cls, results: Iterable[UnitResult]) -> UnitTally:
        tally = cls()
        for r in results:
            tally.units += 1
            tally.engines[r.engine] += 1
            tally.note(r)
        return tally

    def note(self, result: UnitResult) -> None:
        """Keep ``result`` if it is notable (units and engines are not counted here)."""
        if result.witness is not None or result.disagreement or result.extra.get("timed_out"):
            self.notable.append(result)
            self.kept += result.witness is not None

    def witness(self, make: Callable[[], UnitResult]) -> None:
        """A unit refuted with a witness and nothing else notable, after the
        units noted so far: its result (built by ``make``) is kept while fewer
        than :data:`KEPT_WITNESSES` kept results have a witness, else it is only
        counted (a certificate shows that many; every batch keeps its first
        ones, so the release's first ones are all kept)."""
        if self.kept < KEPT_WITNESSES:
            self.note(make())
        else:
            self.unlisted += 1

    def add(self, other: UnitTally) -> None:
        """Append ``other``'s units after this tally's."""
        self.units += other.units
        self.engines.update(other.engines)
        self.notable.extend(other.notable)
        self.unlisted += other.unlisted
        self.kept += other.kept


KEPT_WITNESSES = 21
"""Results with a witness a tally keeps: the certificate's witness and its 20
more (:data:`~.certify.MAX_WITNESSES`); further ones are counted."""


KmBatch = tuple[tuple[dict[str, Any], ...], tuple[tuple[tuple[str, ...], ...], ...], int, int, str, float | None]
"""(locations, the chunks' sub-records, k, m, requested engine, wall-clock
deadline or None): chunks checked together."""

BATCH_SIZE = 64
"""Chunks per k^m work unit; the CP-SAT ones among them are certified by one solve."""


def check_km_batch(batch: KmBatch) -> list[UnitResult]:
    """k^m-anonymity of a batch of chunks; one :class:`UnitResult` per chunk. A
    chunk that no engine finished by the deadline is marked
    ``extra["timed_out"]`` (a witness found before it still counts)."""
    locations, chunks, k, m, requested, deadline = batch
    start = time.perf_counter()
    levels = [effective_m(rows, m) for rows in chunks]
    engines = [
        pick_engine(requested, len(ChunkBits.of(rows).items), level, len(rows))
        for rows, level in zip(chunks, levels, strict=True)
    ]
    by_enum: dict[int, tuple[list[str], int] | None] = {}
    by_cpsat: dict[int, tuple[list[str], int] | None] = {}
    unfinished: set[int] = set()
    for n, engine in enumerate(engines):
        if past(deadline):
            unfinished.add(n)
        elif engine in ("enum", "both"):
            try:
                by_enum[n] = km_witness_enum(chunks[n], k, levels[n], deadline)
            except TimedOut:
                unfinished.add(n)
    solver_chunks = [n for n, engine in enumerate(engines) if engine in ("cpsat", "both") and n not in unfinished]
    if solver_chunks:
        limit = None if deadline is None else max(0.01, deadline - time.time())
        try:
            found = km_witnesses_cpsat(
                [chunks[n] for n in solver_chunks], k, max(levels[n] for n in solver_chunks), limit
            )
            by_cpsat.update(zip(solver_chunks, found, strict=False))
        except SolverGaveUp:
            unfinished.update(solver_chunks)
    share = (time.perf_counter() - start) / max(1, len(chunks))
    results = []
    for n, (location, engine) in enumerate(zip(locations, engines, strict=False)):
        answers = {name: table[n] for name, table in (("enum", by_enum), ("cpsat", by_cpsat)) if n in table}
        witness = next((w for w in answers.values() if w is not None), None)
        timed_out = witness is None and n in unfinished
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
                None if timed_out else disagreement,
                {"timed_out": True} if timed_out else {},
            )
        )
    return results


def check_km_chunks(batch: ChunkBatch, k: int, m: int, requested: str, deadline: float | None) -> UnitTally:
    """:func:`check_km_batch` of a batch of a release's chunks in CSR form,
    reduced to a tally. For m at most :data:`SCREEN_M`, the batch's vectorised
    count (:meth:`ChunkBatch.shapes`) decides every chunk whose engine is
    ``enum`` as enumeration would: no witness when it holds no itemset of
    support in [1, k-1], else the witness :func:`km_witness_enum` returns
    first, so a release refuted everywhere costs no more than one certified.
    The other chunks (another engine, or too many pairs to count), and every
    chunk once the deadline has passed, go to :func:`check_km_batch`."""
    if m > SCREEN_M or past(deadline):
        return UnitTally.of(
            check_km_batch((tuple(batch.locations()), tuple(batch.chunks()), k, m, requested, deadline))
        )
    start = time.perf_counter()
    shapes = batch.shapes(k, m)
    levels = np.maximum(1, np.minimum(m, shapes.longest)).tolist()
    engines = [
        pick_engine(requested, n_items, level, n_rows)
        for n_items, level, n_rows in zip(shapes.items.tolist(), levels, shapes.rows.tolist(), strict=True)
    ]
    maybe_weak, witnesses = shapes.maybe_weak.tolist(), shapes.witnesses()
    counted = [n for n, engine in enumerate(engines) if engine == "enum" and n in witnesses]
    rest = [n for n, engine in enumerate(engines) if engine != "enum" or (maybe_weak[n] and n not in witnesses)]
    share = (time.perf_counter() - start) / max(1, len(batch))
    checked: dict[int, UnitResult] = {}
    if rest:
        unit = (tuple(batch.location(n) for n in rest), tuple(batch.chunks_at(rest)), k, m, requested, deadline)
        checked = dict(zip(rest, check_km_batch(unit), strict=True))
    tally = UnitTally()
    for n in sorted([*counted, *checked]):
        if n in checked:
            tally.note(checked[n])
        else:
            tally.witness(partial(_counted_witness, batch, n, witnesses[n], k, share))
    tally.units, tally.engines = len(batch), Counter(engines)
    return tally


def _counted_witness(batch: ChunkBatch, n: int, found: tuple[list[int], int], k: int, share: float) -> UnitResult:
    """The result of chunk ``n`` of ``batch`` refuted by the count with ``found`` (codes, support)."""
    location, (codes, support) = batch.location(n), found
    itemset = [batch.labels[code] for code in codes]
    return UnitResult(location, "enum", {**location, "itemset": itemset, "support": support, "k": k}, share)


def check_km_unit(
    unit: tuple[dict[str, Any], tuple[tuple[str, ...], ...], int, int, str], deadline: float | None = None
) -> UnitResult:
    """k^m-anonymity of one chunk: (location, sub-records, k, m, requested engine)."""
    location, rows, k, m, requested = unit
    return check_km_batch(((location,), (rows,), k, m, requested, deadline))[0]


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


def check_cover_unit(unit: CoverUnit, deadline: float | None = None) -> UnitResult:
    """Cover-freedom of one chunk (no covered item). The verifier sends only
    ``cpsat`` and ``both`` units here; for ``enum`` and ``auto`` it checks every
    chunk at once (:func:`check_cover_arrays`). A unit reached after the wall-clock
    ``deadline``, or whose solve it stops, is marked ``extra["timed_out"]``."""
    location, rows, requested = unit
    start = time.perf_counter()
    engine = "enum" if requested == "auto" else requested
    found: dict[str, tuple[list[str], int]] = {}
    if past(deadline):
        return UnitResult(location, engine, None, 0.0, extra={"timed_out": True})
    if engine in ("enum", "both"):
        found["enum"] = covered_items_enum(rows)
    if engine in ("cpsat", "both"):
        try:
            found["cpsat"] = covered_items_cpsat(rows, None if deadline is None else max(0.01, deadline - time.time()))
        except SolverGaveUp:
            return UnitResult(location, engine, None, time.perf_counter() - start, extra={"timed_out": True})
    answers = list(found.values())
    covered, s_all = answers[0]
    disagreement = None
    if len(found) == 2 and answers[0] != answers[1]:
        disagreement = {name: {"covered": c, "chunk_itemset_support": s} for name, (c, s) in found.items()}
    return UnitResult(
        location, engine, cover_witness(location, rows, covered, s_all), time.perf_counter() - start, disagreement
    )


def check_cover_chunks(batch: ChunkBatch, requested: str, deadline: float | None) -> UnitTally:
    """:func:`check_cover_unit` of every chunk of a batch in CSR form, reduced to a tally."""
    return UnitTally.of(
        check_cover_unit((location, rows, requested), deadline)
        for location, rows in zip(batch.locations(), batch.chunks(), strict=True)
    )


def check_cover_arrays(arrays: ReleaseArrays, slab: int = SLAB_OCCURRENCES) -> UnitTally:
    """Cover-freedom of every chunk of a release by the direct count
    (:func:`covered_in_csr`), ``slab`` item occurrences at a time (whole chunks)
    of its arrays in the calling process:
    it costs less than sending the chunks to workers. Witnesses are those of
    :func:`check_cover_unit` (labels in string order)."""
    tally = UnitTally(units=arrays.n_chunks)
    if arrays.n_chunks:
        tally.engines["enum"] = arrays.n_chunks
    for first, last in chunk_slabs(arrays, slab):
        rows = arrays.chunk_offsets[first : last + 1]
        cut = arrays.row_offsets[rows[0] : rows[-1] + 1]
        items = arrays.items[cut[0] : cut[-1]]
        s_all, chunks, codes = covered_in_csr(items, cut - cut[0], rows - rows[0])
        for chunk, pairs in groupby(zip(chunks.tolist(), codes.tolist(), strict=True), key=itemgetter(0)):
            covered = sorted(arrays.labels[code] for _, code in pairs)
            begin, end = rows[chunk] - rows[0], rows[chunk + 1] - rows[0]
            own = cut[begin : end + 1]
            chunk_rows = tuple(label_rows(arrays.labels, items[own[0] - cut[0] : own[-1] - cut[0]], own - own[0]))
            location = chunk_location(arrays, first + chunk)
            witness = cover_witness(location, chunk_rows, covered, int(s_all[chunk]))
            tally.notable.append(UnitResult(location, "enum", witness, 0.0))
    return tally
