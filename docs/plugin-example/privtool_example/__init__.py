"""The example privtool plugin of the plugin guide (docs/plugin-guide.md).

One installable package, one entry point (``example``), four components, each
in a module of its own:

* the partitioner ``balanced`` (:mod:`.balanced`): a stage of
  ``privtool anonymize --method disassociation --partitioner balanced``, which
  then gets VERPART, REFINE, the sanitizers, verify, attacks, metrics, audit and
  compare without anything else written;
* the anonymizer ``global-suppression`` (:mod:`.suppression`): k^1-anonymity by
  removing rare items;
* the anonymizer ``global-generalisation`` (:mod:`.generalisation`):
  k^m-anonymity by generalising every item to one level of a hierarchy;
* the metric ``kept-items`` (:mod:`.kept_items`).

The hooks below hand privtool one instance of each.
"""

from __future__ import annotations

from privtool.components import Anonymizer, Metric, Partitioner
from privtool.hookspecs import hookimpl

from .balanced import Balanced
from .generalisation import GlobalGeneralisation
from .kept_items import KeptItems
from .suppression import GlobalSuppression

__all__ = ["Balanced", "GlobalGeneralisation", "GlobalSuppression", "KeptItems"]


@hookimpl
def privtool_partitioners() -> list[Partitioner]:
    return [Balanced()]


@hookimpl
def privtool_anonymizers() -> list[Anonymizer]:
    return [GlobalSuppression(), GlobalGeneralisation()]


@hookimpl
def privtool_metrics() -> list[Metric]:
    return [KeptItems()]
