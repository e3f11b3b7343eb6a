"""The privacy level a verifier checks: the explicit ``k``/``m`` option (the
assessment engine passes the claim's), else the level the release's claims
state (:func:`privtool.claims.claimed_level`), never its ``params``."""

from __future__ import annotations

from typing import Any

from privtool.claims import claimed_level
from privtool.errors import ParameterError
from privtool.params import Param
from privtool.release import Release

K_CHECKED = Param("k", int, None, "k to check (default: the release's stated k).", min=2)
M_CHECKED = Param("m", int, None, "m to check (default: the release's stated m).", min=1)


def level(release: Release, params: dict[str, Any], name: str) -> int:
    """``params[name]`` when given, else the value the release's claims state, validated."""
    value = params.get(name)
    if value is not None:
        return int(value)
    stated = claimed_level(release.claims, name, 2 if name == "k" else 1)
    if stated is None:
        raise ParameterError(f"the release claims no {name}; pass --{name}.")
    return stated
