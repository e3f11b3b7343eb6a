"""Evidence (witnesses, finding details) as short readable text for tables.

JSON cut at a character limit ends mid-token (``{"itemset": ["a", "b``) and
reads badly; :func:`evidence_text` writes ``itemset {a, b}; support 1; k 2``
and, when it must shorten, drops whole parts and says how many it left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

ELLIPSIS = "…"


def _scalar(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "-" if value is None else str(value)


def _parts(value: Any) -> tuple[Iterable[str], int]:
    """The top-level parts of ``value``, each one readable phrase (made as they
    are read), and how many there are."""
    if isinstance(value, dict):
        return (f"{key.replace('_', ' ')} {_inline(item)}" for key, item in value.items()), len(value)
    if isinstance(value, (list, tuple)):
        return (_inline(item) for item in value), len(value)
    return iter([_scalar(value)]), 1


def _inline(value: Any, budget: int = 60) -> str:
    """A nested value on one line, shortened to about ``budget`` characters by
    whole elements."""
    if isinstance(value, dict):
        inner = (f"{key.replace('_', ' ')} {_inline(item, budget // 2)}" for key, item in value.items())
        return "(" + _join(inner, len(value), "; ", budget) + ")"
    if isinstance(value, (list, tuple)):
        elements = (_inline(item, budget // 2) for item in value)
        scalars = all(not isinstance(item, (dict, list, tuple)) for item in value)
        opening, closing = ("{", "}") if scalars and all(isinstance(item, str) for item in value) else ("[", "]")
        return opening + _join(elements, len(value), ", ", budget) + closing
    return _scalar(value)


def _join(parts: Iterable[str], count: int, separator: str, limit: int) -> str:
    """The ``count`` ``parts`` joined, keeping whole parts only, with a count of
    those left out (the parts after the cut are never made)."""
    kept: list[str] = []
    used = 0
    for n, part in enumerate(parts):
        cost = len(part) + (len(separator) if kept else 0)
        if kept and used + cost > limit:
            return separator.join(kept) + f"{separator}{ELLIPSIS} ({count - n} more)"
        kept.append(part)
        used += cost
    return separator.join(kept)


def evidence_text(value: Any, limit: int = 160) -> str:
    """``value`` (a JSON-ready dict, list or scalar) as readable text of about
    ``limit`` characters at most, cut only between whole parts."""
    if value is None or value == {} or value == []:
        return ""
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - 1].rsplit(" ", 1)[0] + " " + ELLIPSIS
    parts, count = _parts(value)
    return _join(parts, count, "; ", limit)
