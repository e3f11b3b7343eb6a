"""Plugin objects of the built-ins whose only module is their implementation
(``BUILTIN_PLUGINS`` names them as ``privtool.plugins.registration:NAME``): each
registers its components by name and factory
(:class:`~privtool.components.LazyComponent`), so the module is imported only
when one of them is used."""

from __future__ import annotations

from privtool.components import LazyComponent
from privtool.hookspecs import plugin_registering

_UTILITY = "privtool.plugins.utility_metrics"

utility_metrics = plugin_registering(
    "metric",
    LazyComponent("tkd", f"{_UTILITY}:TopKDeviation"),
    LazyComponent("re", f"{_UTILITY}:RelativeError"),
    LazyComponent("are", f"{_UTILITY}:AverageRelativeError"),
)
