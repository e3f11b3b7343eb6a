"""The privacy level a verifier checks: the explicit ``k``/``m`` option, else the
release's stated one. Verifiers default to the release so that ``audit`` and
``compare``, which pass no options, check each release at its own level."""

from __future__ import annotations

from typing import Any

from privtool.errors import ParameterError
from privtool.params import Param
from privtool.release import Release

K_CHECKED = Param("k", int, None, "k to check (default: the release's stated k).", min=2)
M_CHECKED = Param("m", int, None, "m to check (default: the release's stated m).", min=1)


def level(release: Release, params: dict[str, Any], name: str) -> int:
    """``params[name]`` when given, else the release's ``params[name]``, validated."""
    value = params.get(name)
    if value is not None:
        return int(value)
    stated = release.params.get(name)
    if stated is None:
        raise ParameterError(f"the release states no {name}; pass --{name}.")
    minimum = 2 if name == "k" else 1
    if not isinstance(stated, int) or isinstance(stated, bool) or stated < minimum:
        raise ParameterError(
            f"the release's params.{name} must be an integer of at least {minimum}, not {stated!r}; pass --{name}."
        )
    return stated
