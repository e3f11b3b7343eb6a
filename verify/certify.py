"""Turning per-unit results into one :class:`~privtool.results.Certificate`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from privtool.results import Certificate

from .engines import KEPT_WITNESSES, UnitResult, UnitTally

MAX_WITNESSES = KEPT_WITNESSES - 1
"""Witnesses kept in ``details["witnesses"]`` besides the first one (``witness``)."""


def engine_label(requested: str, results: Sequence[UnitResult] | UnitTally) -> str:
    """``cpsat``/``enum``/``both``; for ``auto`` the engines actually used, e.g. ``auto(enum)``."""
    if requested != "auto":
        return requested
    tally = results if isinstance(results, UnitTally) else UnitTally.of(results)
    used = sorted(tally.engines)
    return f"auto({'+'.join(used)})" if used else "auto"


def certificate_from_units(
    guarantee: str,
    requested: str,
    results: Sequence[UnitResult] | UnitTally,
    seconds: float,
    details: dict[str, Any] | None = None,
) -> Certificate:
    """Holds iff no unit has a witness. Engine disagreements (``--engine both``)
    are listed under ``details["engine_disagreements"]``; a disagreement never
    lets the guarantee hold, since one engine is then wrong. Units that hit the
    time limit (``extra["timed_out"]``) leave it undecided (``holds`` None,
    ``details["timed_out"]``) unless another unit refutes it. ``results`` may
    be every unit's result or their :class:`~.engines.UnitTally`."""
    tally = results if isinstance(results, UnitTally) else UnitTally.of(results)
    failing = [r for r in tally.notable if r.witness is not None]
    unfinished = [r for r in tally.notable if r.extra.get("timed_out")]
    disagreements = [{"location": r.location, "answers": r.disagreement} for r in tally.notable if r.disagreement]
    info: dict[str, Any] = dict(details or {})
    info["units_by_engine"] = dict(tally.engines)
    info["violations"] = len(failing) + tally.unlisted
    if len(failing) > 1:
        info["witnesses"] = [r.witness for r in failing[1 : MAX_WITNESSES + 1]]
    if disagreements:
        info["engine_disagreements"] = disagreements
    holds: bool | None = not failing and not disagreements
    if holds and unfinished:
        holds = None
        info["timed_out"] = True
        info["reason"] = f"{len(unfinished):,} of {tally.units:,} units were not finished by the time limit"
    return Certificate(
        guarantee=guarantee,
        holds=holds,
        engine=engine_label(requested, tally),
        units=tally.units,
        seconds=round(seconds, 4),
        witness=failing[0].witness if failing else None,
        details=info,
    )
