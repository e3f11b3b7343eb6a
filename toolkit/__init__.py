"""privtool: publish transactional (set-valued) data without letting anyone
single out a person from a few known items, and prove it.

The public Python API is what :data:`__all__` lists, documented in
``docs/python-api.md``: reading data (:func:`read`, :class:`Dataset`),
anonymizing it (:func:`anonymize`, :class:`Result`), assessing releases
(:func:`verify`, :func:`load_release`, :class:`Verdict`, :class:`Findings`,
:class:`Metrics`), comparing methods (:func:`compare`, :class:`Comparison`),
and the surface plugin authors build on (the component bases,
:data:`hookimpl`, :class:`Param`, :class:`Claim`, :class:`Outcome`,
:class:`Context` and the errors). Every other module is internal, whatever its name: it may change
without notice. The ``privtool`` command line calls the same code.

``import privtool`` is cheap: each name is imported from its module on first
use (PEP 562), so importing the package loads neither numpy nor any plugin.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version
from typing import TYPE_CHECKING, Any

try:
    __version__ = _version("privtool")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use (_HOME)
    from .api import Result, anonymize, compare, load_release, read, verify
    from .claims import Claim
    from .components import (
        Anonymizer,
        Attack,
        Bound,
        ClaimModel,
        Component,
        Evidence,
        Format,
        Metric,
        Outcome,
        Partitioner,
        Partitioning,
        Refiner,
        Sanitizer,
        Stage,
        Verifier,
        VerticalChunker,
    )
    from .context import Context
    from .dataset import Dataset
    from .errors import (
        InputError,
        MissingEvidence,
        NoSolution,
        OutputError,
        ParameterError,
        PluginError,
        PluginFault,
        UnknownComponent,
        UserError,
    )
    from .hookspecs import hookimpl
    from .params import Param
    from .release import Release
    from .results import Certificate, Finding
    from .trail import Trail
    from .views import Comparison, Findings, Metrics, Verdict

# the Python API
__all__ = [
    "Comparison",
    "Dataset",
    "Findings",
    "Metrics",
    "Release",
    "Result",
    "Trail",
    "Verdict",
    "__version__",
    "anonymize",
    "compare",
    "load_release",
    "read",
    "verify",
]
# what plugin authors build on
__all__ += [
    "Anonymizer",
    "Attack",
    "Bound",
    "Certificate",
    "Claim",
    "ClaimModel",
    "Component",
    "Context",
    "Evidence",
    "Finding",
    "Format",
    "Metric",
    "Outcome",
    "Param",
    "Partitioner",
    "Partitioning",
    "Refiner",
    "Sanitizer",
    "Stage",
    "Verifier",
    "VerticalChunker",
    "hookimpl",
]
# errors
__all__ += [
    "InputError",
    "MissingEvidence",
    "NoSolution",
    "OutputError",
    "ParameterError",
    "PluginError",
    "PluginFault",
    "UnknownComponent",
    "UserError",
]

_HOME: dict[str, tuple[str, ...]] = {
    "api": ("Result", "anonymize", "compare", "load_release", "read", "verify"),
    "claims": ("Claim",),
    "components": (
        "Anonymizer",
        "Attack",
        "Bound",
        "ClaimModel",
        "Component",
        "Evidence",
        "Format",
        "Metric",
        "Outcome",
        "Partitioner",
        "Partitioning",
        "Refiner",
        "Sanitizer",
        "Stage",
        "Verifier",
        "VerticalChunker",
    ),
    "context": ("Context",),
    "dataset": ("Dataset",),
    "errors": (
        "InputError",
        "MissingEvidence",
        "NoSolution",
        "OutputError",
        "ParameterError",
        "PluginError",
        "PluginFault",
        "UnknownComponent",
        "UserError",
    ),
    "hookspecs": ("hookimpl",),
    "params": ("Param",),
    "release": ("Release",),
    "results": ("Certificate", "Finding"),
    "trail": ("Trail",),
    "views": ("Comparison", "Findings", "Metrics", "Verdict"),
}
"""Module (under ``privtool``) -> the public names it holds: the same as the
imports above that type checkers see (``tests/test_api.py`` checks both
against ``__all__``)."""

_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}

if not TYPE_CHECKING:  # hidden from type checkers, so that a misspelt name is an error for them

    def __getattr__(name: str) -> Any:
        home = _MODULE_OF.get(name)
        if home is None:
            raise AttributeError(f"module 'privtool' has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
        globals()[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
