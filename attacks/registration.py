"""The built-in attack plugins, one plugin object per attack (``BUILTIN_PLUGINS``
names each as ``privtool.attacks.registration:NAME``). Each registers its attack
by name and factory (:class:`~privtool.components.LazyComponent`), so the attack's
module is imported only when the attack is used."""

from __future__ import annotations

from privtool.components import LazyComponent
from privtool.hookspecs import plugin_registering

linkage = plugin_registering("attack", LazyComponent("linkage", "privtool.attacks.linkage:BackgroundLinkage"))
cover_linkage = plugin_registering(
    "attack", LazyComponent("cover-linkage", "privtool.attacks.cover_linkage:CoverLinkage")
)
rule_remining = plugin_registering("attack", LazyComponent("rule-remining", "privtool.attacks.remining:RuleRemining"))
preimage = plugin_registering("attack", LazyComponent("preimage", "privtool.attacks.preimage_attack:PreimageAttack"))
forced_cooccurrence = plugin_registering(
    "attack", LazyComponent("forced-cooccurrence", "privtool.attacks.forced_cooccurrence:ForcedCooccurrence")
)
minimality = plugin_registering("attack", LazyComponent("minimality", "privtool.attacks.minimality:Minimality"))
