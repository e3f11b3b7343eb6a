"""The plugin manager and the component registry.

Built-in plugins (the modules in :data:`BUILTIN_PLUGINS`) are registered first,
one by one and under a short name, exactly as third-party plugins are; then the
entry points of group ``privtool`` are loaded. A name given to ``-p no:NAME``
is blocked before anything is registered, so a disabled plugin is never imported.

:class:`Registry` collects the components every plugin returns, by kind and
name, and refuses two components of one kind with one name.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Literal, overload

import pluggy

from . import __version__, hookspecs
from .components import (
    KINDS,
    Anonymizer,
    Attack,
    ClaimModel,
    Component,
    Format,
    Metric,
    Partitioner,
    Refiner,
    Sanitizer,
    Verifier,
    VerticalChunker,
)
from .errors import PluginError

BUILTIN_PLUGINS: dict[str, str] = {
    "claim-models": "privtool.plugins.claim_models",
    "formats": "privtool.plugins.formats",
    "generalization": "privtool.plugins.generalization",
    "aa": "privtool.plugins.aa",
    "disassociation": "privtool.plugins.disassociation",
    "linkage": "privtool.attacks.linkage",
    "utility-metrics": "privtool.plugins.utility_metrics",
    "verify": "privtool.verify.plugin",
    "safe-disassociation": "privtool.plugins.safe_disassociation",
    "cover-linkage": "privtool.attacks.cover_linkage",
    "rulehiding": "privtool.plugins.rulehiding",
    "rule-remining": "privtool.attacks.remining",
}
"""Short plugin name -> module of a built-in plugin."""

ENTRY_POINT_GROUP = hookspecs.PROJECT


@dataclass(frozen=True)
class PluginInfo:
    """One registered plugin: its name, version and where it came from."""

    name: str
    version: str
    source: str
    components: tuple[str, ...]


def plugin_manager(blocked: Iterable[str] = ()) -> pluggy.PluginManager:
    """A plugin manager with the built-ins and the installed third-party plugins,
    less the ``blocked`` plugin names."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    known = set(BUILTIN_PLUGINS) | {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}
    for name in blocked:
        if name not in known:
            raise PluginError(f"-p no:{name} names no installed plugin (known: {', '.join(sorted(known))}).")
        pm.set_blocked(name)
    for name, module in BUILTIN_PLUGINS.items():
        if not pm.is_blocked(name):
            pm.register(importlib.import_module(module), name=name)
    try:
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    except Exception as exc:  # a broken third-party package must not crash the CLI with a traceback
        raise PluginError(f"a plugin of entry-point group {ENTRY_POINT_GROUP!r} failed to load: {exc}.") from exc
    return pm


class Registry:
    """Every component of every registered plugin, by kind and name."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.pm = pm
        self._components: dict[str, dict[str, Component]] = {kind: {} for kind in KINDS}
        self._owner: dict[tuple[str, str], str] = {}
        for kind, hook_name in hookspecs.HOOKS.items():
            hook = getattr(pm.hook, hook_name)
            for impl in hook.get_hookimpls():
                plugin_name = pm.get_name(impl.plugin) or repr(impl.plugin)
                for component in impl.function() or ():
                    self._add(kind, component, plugin_name)

    def _add(self, kind: str, component: Component, plugin_name: str) -> None:
        base = KINDS[kind]
        if not isinstance(component, base):
            raise PluginError(
                f"plugin {plugin_name!r} registered {component!r} as a {kind}, but it is not a {base.__name__}."
            )
        name = component.name
        if not name:
            raise PluginError(f"plugin {plugin_name!r} registered a {kind} without a name.")
        earlier = self._owner.get((kind, name))
        if earlier is not None:
            label = kind.replace("_", " ")
            article = "an" if label[0] in "aeiou" else "a"
            raise PluginError(
                f"plugins {earlier!r} and {plugin_name!r} both register {article} {label} called {name!r}."
            )
        self._components[kind][name] = component
        self._owner[(kind, name)] = plugin_name

    def names(self, kind: str) -> list[str]:
        """Names of the components of ``kind``, sorted."""
        return sorted(self._components[kind])

    # One overload per kind, so that callers get the component base of the kind
    # they asked for (``registry.all("attack")`` is a ``list[Attack]``).
    @overload
    def all(self, kind: Literal["partitioner"]) -> list[Partitioner]: ...
    @overload
    def all(self, kind: Literal["vertical_chunker"]) -> list[VerticalChunker]: ...
    @overload
    def all(self, kind: Literal["refiner"]) -> list[Refiner]: ...
    @overload
    def all(self, kind: Literal["sanitizer"]) -> list[Sanitizer]: ...
    @overload
    def all(self, kind: Literal["anonymizer"]) -> list[Anonymizer]: ...
    @overload
    def all(self, kind: Literal["claim_model"]) -> list[ClaimModel]: ...
    @overload
    def all(self, kind: Literal["attack"]) -> list[Attack]: ...
    @overload
    def all(self, kind: Literal["verifier"]) -> list[Verifier]: ...
    @overload
    def all(self, kind: Literal["metric"]) -> list[Metric]: ...
    @overload
    def all(self, kind: Literal["format"]) -> list[Format]: ...
    @overload
    def all(self, kind: str) -> list[Component]: ...
    def all(self, kind: str) -> list[Any]:
        """The components of ``kind``, sorted by name."""
        return [self._components[kind][name] for name in self.names(kind)]

    @overload
    def get(self, kind: Literal["partitioner"], name: str) -> Partitioner: ...
    @overload
    def get(self, kind: Literal["vertical_chunker"], name: str) -> VerticalChunker: ...
    @overload
    def get(self, kind: Literal["refiner"], name: str) -> Refiner: ...
    @overload
    def get(self, kind: Literal["sanitizer"], name: str) -> Sanitizer: ...
    @overload
    def get(self, kind: Literal["anonymizer"], name: str) -> Anonymizer: ...
    @overload
    def get(self, kind: Literal["claim_model"], name: str) -> ClaimModel: ...
    @overload
    def get(self, kind: Literal["attack"], name: str) -> Attack: ...
    @overload
    def get(self, kind: Literal["verifier"], name: str) -> Verifier: ...
    @overload
    def get(self, kind: Literal["metric"], name: str) -> Metric: ...
    @overload
    def get(self, kind: Literal["format"], name: str) -> Format: ...
    @overload
    def get(self, kind: str, name: str) -> Component: ...
    def get(self, kind: str, name: str) -> Any:
        """The component of ``kind`` called ``name``; a :class:`PluginError` that
        lists the known names otherwise."""
        try:
            return self._components[kind][name]
        except KeyError:
            known = ", ".join(self.names(kind)) or "none installed"
            label = kind.replace("_", " ")
            raise PluginError(f"unknown {label} {name!r} (known: {known}).") from None

    def owner(self, kind: str, name: str) -> str:
        return self._owner[(kind, name)]

    def plugins(self) -> list[PluginInfo]:
        """Every registered plugin with its version, source and components."""
        dists = {id(plugin): dist for plugin, dist in self.pm.list_plugin_distinfo()}
        owned: dict[str, list[str]] = {}
        for (kind, name), plugin_name in self._owner.items():
            owned.setdefault(plugin_name, []).append(f"{kind.replace('_', ' ')}:{name}")
        infos = []
        for plugin_name, plugin in self.pm.list_name_plugin():
            if plugin is None:
                continue
            dist = dists.get(id(plugin))
            if dist is None:
                version, source = __version__, "built-in"
            else:
                version, source = dist.version, f"entry point ({dist.project_name})"
            infos.append(PluginInfo(plugin_name, version, source, tuple(sorted(owned.get(plugin_name, [])))))
        return sorted(infos, key=lambda info: (info.source != "built-in", info.name))

    def versions(self) -> dict[str, str]:
        """Plugin name -> version, for release provenance."""
        return {info.name: info.version for info in self.plugins()}


def load_registry(blocked: Iterable[str] = ()) -> Registry:
    """The registry of every plugin that is installed and not blocked."""
    return Registry(plugin_manager(blocked))
