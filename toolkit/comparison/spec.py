"""Method specs of ``privtool compare``.

Grammar: ``[LABEL=]METHOD[:OPT=VALUE,...][+SANITIZER[:OPT=VALUE,...]]...``, e.g.
``disassociation:partitioner=adding``, ``safe=disassociation+safe-disassociation``
or ``lgr:hierarchy=tree.csv,hierarchy_format=paths``. Options of every stage go
into one parameter set (they are resolved together, as ``anonymize`` does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import ParameterError


@dataclass(frozen=True)
class MethodSpec:
    label: str
    method: str
    sanitizers: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)


def _stage(text: str, spec: str) -> tuple[str, dict[str, str]]:
    name, _, opts = text.partition(":")
    name = name.strip()
    if not name:
        raise ParameterError(f"--method {spec!r}: a stage has no name.")
    options: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in opts.split(","))):
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise ParameterError(f"--method {spec!r}: expected OPTION=VALUE, got {pair!r}.")
        options[key.strip().replace("-", "_")] = value.strip()
    return name, options


def parse_spec(spec: str) -> MethodSpec:
    """Parse one ``--method`` value (see the module docstring)."""
    label, eq, rest = spec.partition("=")
    if not eq or ":" in label or "+" in label:
        label, rest = spec, spec
    stages = [_stage(part, spec) for part in rest.split("+")]
    options: dict[str, Any] = {}
    for _, stage_options in stages:
        options.update(stage_options)
    return MethodSpec(
        label=label.strip(), method=stages[0][0], sanitizers=tuple(s for s, _ in stages[1:]), options=options
    )
