"""The plugin manager and the component registry (DESIGN.md, "Hook specs and
the registry").

Plugins load in this order, each under its short name:

1. the built-ins (:data:`BUILTIN_PLUGINS`), exactly as third-party plugins are
   (each named as an entry point names its plugin);
2. the entry points of group ``privtool``, unless autoloading is switched off
   with ``PRIVTOOL_DISABLE_PLUGIN_AUTOLOAD=1``;
3. the plugins named by ``-p NAME`` (an entry point's name, or a module to
   import), loaded even when autoloading is off.

A name given to ``-p no:NAME`` is blocked before anything is imported, so a
disabled plugin is never imported and none of its components exists anywhere;
an essential plugin (:data:`ESSENTIAL_PLUGINS`: the dataset formats) cannot be
disabled. Any ``privtool_*`` function of a plugin is one of its hook
implementations, marked with ``@hookimpl`` or not, and ``check_pending`` refuses
one that no hook spec declares (a misspelt hook), naming the plugin.

Everything plugin code can do wrong while loading is a
:class:`~privtool.errors.PluginFault` naming the plugin: an entry point that does
not import, a hook that raises or returns anything but a list of components, a
component that breaks its declaration contract (:mod:`privtool.contracts`), or
two plugins registering one name. :class:`Registry` collects the components by
kind and name and hands them out as :class:`~privtool.isolation.Guarded` views;
a component registered as a :class:`~privtool.components.LazyComponent` is
built when it is first handed out, and a fault then (its module does not
import, it is not what was registered) is a :class:`PluginFault` too.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
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
    LazyComponent,
    Metric,
    Partitioner,
    Refiner,
    Sanitizer,
    Verifier,
    VerticalChunker,
)
from .contracts import check_component, check_lazy
from .errors import PluginError, PluginFault, UnknownComponent
from .isolation import Guarded, call_plugin, describe

BUILTIN_PLUGINS: dict[str, str] = {
    "claim-models": "privtool.plugins.claim_models",
    "formats": "privtool.plugins.formats",
    "generalization": "privtool.plugins.generalization",
    "aa": "privtool.plugins.aa",
    "disassociation": "privtool.plugins.disassociation",
    "linkage": "privtool.attacks.registration:linkage",
    "utility-metrics": "privtool.plugins.registration:utility_metrics",
    "verify": "privtool.verifiers.plugin",
    "safe-disassociation": "privtool.plugins.safe_disassociation",
    "cover-linkage": "privtool.attacks.registration:cover_linkage",
    "rulehiding": "privtool.plugins.rulehiding",
    "rule-remining": "privtool.attacks.registration:rule_remining",
    "preimage": "privtool.attacks.registration:preimage",
    "forced-cooccurrence": "privtool.attacks.registration:forced_cooccurrence",
    "minimality": "privtool.attacks.registration:minimality",
}
"""Short plugin name -> the built-in plugin, as an entry point names it: its
registration module, or ``module:attribute`` for a plugin object in one."""

ESSENTIAL_PLUGINS = frozenset({"formats"})
"""Plugins that ``-p no:NAME`` cannot disable: without them nothing can be read."""

ENTRY_POINT_GROUP = hookspecs.PROJECT
AUTOLOAD_ENV = "PRIVTOOL_DISABLE_PLUGIN_AUTOLOAD"
HOOK_PREFIX = f"{hookspecs.PROJECT}_"
BUILT_IN = "built-in"


def autoload_enabled() -> bool:
    """False when ``PRIVTOOL_DISABLE_PLUGIN_AUTOLOAD`` is set to anything but empty or 0."""
    return os.environ.get(AUTOLOAD_ENV, "") in ("", "0")


class PluginManager(pluggy.PluginManager):
    """pluggy's manager, taking every ``privtool_*`` function of a plugin as a
    hook implementation (as pytest does with ``pytest_*``), so that a misspelt
    or unmarked hook is never silently ignored."""

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name.startswith(HOOK_PREFIX) and inspect.isroutine(getattr(plugin, name, None)):
            return {
                "wrapper": False,
                "hookwrapper": False,
                "optionalhook": False,
                "tryfirst": False,
                "trylast": False,
                "specname": None,
            }
        return opts


@dataclass(frozen=True)
class PluginInfo:
    """One registered plugin: its name, version and where it came from."""

    name: str
    version: str
    source: str
    components: tuple[str, ...] = ()


@dataclass
class Plugins:
    """The loaded plugin manager and, by plugin name, its version and source."""

    pm: pluggy.PluginManager
    info: dict[str, PluginInfo] = field(default_factory=dict)


def _entry_point_label(ep: EntryPoint) -> str:
    return f"entry point {ep.name} = {ep.value}"


def _register(plugins: Plugins, name: str, obj: Any, version: str, source: str) -> None:
    try:
        plugins.pm.register(obj, name=name)
    except pluggy.PluginValidationError as exc:  # a hook whose arguments differ from its spec
        raise PluginFault(name, "its hooks", f"do not match the hook specs: {exc}") from exc
    plugins.info[name] = PluginInfo(name, version, source)


def _load_entry_point(plugins: Plugins, ep: EntryPoint) -> None:
    obj = call_plugin(ep.name, _entry_point_label(ep), ep.load, where="on import")
    dist = ep.dist
    version, source = (dist.version, f"entry point ({dist.metadata['Name']})") if dist else ("unknown", "entry point")
    _register(plugins, ep.name, obj, version, source)


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a missing parent package
        return False


def load_plugins(
    blocked: Iterable[str] = (),
    load: Iterable[str] = (),
    extra: Mapping[str, Any] | None = None,
    autoload: bool | None = None,
) -> Plugins:
    """Load the plugins (see the module docstring). ``load`` names plugins to
    load explicitly (``-p NAME``); ``extra`` registers plugin objects directly,
    by name (tests and :mod:`privtool.testing`), after everything else."""
    autoload = autoload_enabled() if autoload is None else autoload
    pm = PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    plugins = Plugins(pm)
    eps = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    known = set(BUILTIN_PLUGINS) | set(eps) | set(load) | set(extra or {})
    for name in blocked:
        if name in ESSENTIAL_PLUGINS:
            raise PluginError(f"-p no:{name}: the plugin {name!r} is essential and cannot be disabled.")
        if name not in known:
            raise PluginError(f"-p no:{name} names no installed plugin (known: {', '.join(sorted(known))}).")
        pm.set_blocked(name)
    for name, reference in BUILTIN_PLUGINS.items():
        if not pm.is_blocked(name):
            builtin = EntryPoint(name, reference, ENTRY_POINT_GROUP)
            obj = call_plugin(name, f"module {reference}", builtin.load, where="on import")
            _register(plugins, name, obj, __version__, BUILT_IN)
    for name, ep in eps.items():
        if (autoload or name in load) and not pm.is_blocked(name) and name not in plugins.info:
            _load_entry_point(plugins, ep)
    for name in load:
        if pm.is_blocked(name) or name in plugins.info:
            continue
        if name in eps:
            _load_entry_point(plugins, eps[name])
            continue
        if not _importable(name):
            raise PluginError(f"-p {name}: no entry point of group {ENTRY_POINT_GROUP!r} and no module of that name.")
        loaded = call_plugin(name, f"module {name}", importlib.import_module, name, where="on import")
        _register(plugins, name, loaded, "unknown", f"module {name}")
    for name, obj in (extra or {}).items():
        if not pm.is_blocked(name):
            _register(plugins, name, obj, "unknown", "registered by the caller")
    check_pending(pm)
    return plugins


def check_pending(pm: pluggy.PluginManager) -> None:
    """pluggy's ``check_pending``, with a message naming the plugin, the unknown
    hook and the closest hook name."""
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        plugin = pm.get_name(exc.plugin) or repr(exc.plugin)
        unknown = next(
            name
            for name, caller in vars(pm.hook).items()
            if not name.startswith("_")
            and not caller.has_spec()
            and any(impl.plugin is exc.plugin for impl in caller.get_hookimpls())
        )
        close = difflib.get_close_matches(unknown, hookspecs.HOOKS.values(), n=1)
        hint = f" (did you mean {close[0]}?)" if close else f" (the hooks are {', '.join(hookspecs.HOOKS.values())})"
        raise PluginFault(plugin, f"hook {unknown}", f"is not a privtool hook{hint}") from None


@dataclass(frozen=True)
class _Pending:
    """A component registered lazily by ``plugin`` through ``hook``, not built yet."""

    spec: LazyComponent
    plugin: str
    hook: str


class Registry:
    """Every component of every registered plugin, by kind and name. A
    component registered as a :class:`~privtool.components.LazyComponent` is
    built (its factory imported) the first time :meth:`get` or :meth:`all`
    hands it out; names, owners and listings need only its name."""

    def __init__(self, plugins: Plugins) -> None:
        self.pm = plugins.pm
        self._info = plugins.info
        self._components: dict[str, dict[str, Guarded | _Pending]] = {kind: {} for kind in KINDS}
        for kind, hook_name in hookspecs.HOOKS.items():
            for impl in getattr(self.pm.hook, hook_name).get_hookimpls():
                plugin_name = self.pm.get_name(impl.plugin) or repr(impl.plugin)
                hook = f"hook {hook_name}"
                returned = call_plugin(plugin_name, hook, impl.function, where="")
                if not isinstance(returned, (list, tuple)):
                    raise PluginFault(
                        plugin_name,
                        hook,
                        f"returned {type(returned).__name__}, not a list of {kind.replace('_', ' ')}s",
                    )
                for component in returned:
                    self._add(kind, component, plugin_name, hook)

    def _add(self, kind: str, component: Any, plugin_name: str, hook: str) -> None:
        lazy = isinstance(component, LazyComponent)
        problem = check_lazy(kind, component) if lazy else check_component(kind, component)
        if problem is not None:
            raise PluginFault(plugin_name, hook, f"registered {problem}")
        name = component.name
        earlier = self._components[kind].get(name)
        if earlier is not None:
            raise PluginFault(
                plugin_name,
                describe(kind, name),
                f"is also registered by plugin {earlier.plugin!r} (names are unique per kind)",
            )
        self._components[kind][name] = (
            _Pending(component, plugin_name, hook) if lazy else Guarded(component, plugin_name)
        )

    def _build(self, kind: str, pending: _Pending) -> Guarded:
        """The component ``pending`` names, built and checked as a registered one is."""
        name, plugin_name = pending.spec.name, pending.plugin
        component = call_plugin(plugin_name, describe(kind, name), pending.spec.build, where="on import")
        problem = check_component(kind, component)
        if problem is not None:
            raise PluginFault(plugin_name, pending.hook, f"registered {problem}")
        if component.name != name:
            raise PluginFault(plugin_name, describe(kind, name), f"was built as one named {component.name!r}")
        guarded = self._components[kind][name] = Guarded(component, plugin_name)
        return guarded

    def names(self, kind: str) -> list[str]:
        """Names of the components of ``kind``, sorted."""
        return sorted(self._components[kind])

    # One overload per kind, so that callers get the component base of the kind
    # they asked for (``registry.all("attack")`` is a ``list[Attack]``). What
    # comes back is the component's Guarded view, which reads the same
    # attributes and calls the same methods (behind the guard).
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
        """The (guarded) components of ``kind``, sorted by name."""
        return [self.get(kind, name) for name in self.names(kind)]

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
        """The (guarded) component of ``kind`` called ``name``; an
        :class:`UnknownComponent` error that lists the known names otherwise."""
        try:
            entry = self._components[kind][name]
        except KeyError:
            known = ", ".join(self.names(kind)) or "none installed"
            raise UnknownComponent(f"unknown {kind.replace('_', ' ')} {name!r} (known: {known}).") from None
        return self._build(kind, entry) if isinstance(entry, _Pending) else entry

    def owner(self, kind: str, name: str) -> str:
        return str(self._components[kind][name].plugin)

    def version(self, plugin: str) -> str:
        """The version of plugin ``plugin`` (privtool's for a built-in)."""
        return self._info[plugin].version

    def plugins(self) -> list[PluginInfo]:
        """Every registered plugin with its version, source and components."""
        owned: dict[str, list[str]] = {}
        for kind, components in self._components.items():
            for name, component in components.items():
                owned.setdefault(component.plugin, []).append(f"{kind.replace('_', ' ')}:{name}")
        infos = [
            PluginInfo(info.name, info.version, info.source, tuple(sorted(owned.get(name, []))))
            for name, info in self._info.items()
        ]
        return sorted(infos, key=lambda info: (info.source != BUILT_IN, info.name))


def load_registry(
    blocked: Iterable[str] = (),
    load: Iterable[str] = (),
    extra: Mapping[str, Any] | None = None,
    autoload: bool | None = None,
) -> Registry:
    """The registry of every plugin that is loaded and not blocked (see :func:`load_plugins`)."""
    return Registry(load_plugins(blocked, load, extra, autoload))
