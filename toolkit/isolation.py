"""Plugin code runs behind a guard (DESIGN.md, "Error contract").

The registry never hands out a component itself but a :class:`Guarded` view of
it, which knows the plugin that registered it. Calling a method of the view
(``partition``, ``compute``, ``read_bytes``, ...) calls the component's method
and:

* turns any exception other than a :class:`~privtool.errors.UserError` (bad
  input, exit 2) or an earlier :class:`~privtool.errors.PluginFault` into a
  :class:`~privtool.errors.PluginFault` naming the plugin, the component, the
  method and the exception (exit 3);
* checks what the method returned against its contract
  (:mod:`privtool.contracts`) and raises a :class:`PluginFault` when it breaks
  it, before anything downstream sees the value.

So a fault in a partitioner that the disassociation method calls is reported
against the partitioner's plugin, not against disassociation's. Views pickle
(they travel to process and Dask workers with a ``ctx.map`` function), and a
fault raised in a worker comes back with its traceback as text.
"""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from .errors import PluginFault, TimedOut, UserError

T = TypeVar("T")


def describe(kind: str, name: str) -> str:
    """``metric 'tlost'``: how messages name a component."""
    return f"{kind.replace('_', ' ')} {name!r}"


def fault_from(plugin: str, component: str, exc: BaseException, where: str = "") -> PluginFault:
    """The :class:`PluginFault` for ``exc`` raised by ``component`` of ``plugin``
    (``where``: ``in compute()``), keeping the traceback as text."""
    text = " ".join(str(exc).split())
    problem = f"raised {type(exc).__name__}{' ' + where if where else ''}" + (f": {text}" if text else "")
    details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return PluginFault(plugin, component, problem, details)


def call_plugin(plugin: str, component: str, fn: Callable[..., T], *args: Any, where: str = "", **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` with every exception but a user error, an earlier
    fault or a time limit (:class:`TimedOut`) turned into a :class:`PluginFault`
    of ``plugin``."""
    try:
        return fn(*args, **kwargs)
    except (UserError, PluginFault, TimedOut):
        raise
    except Exception as exc:
        raise fault_from(plugin, component, exc, where) from exc


class GuardedMethod:
    """One method of a guarded component (picklable: it names the method rather
    than holding a bound method)."""

    __slots__ = ("component", "method", "plugin")

    def __init__(self, component: Any, plugin: str, method: str) -> None:
        self.component, self.plugin, self.method = component, plugin, method

    def __reduce__(self) -> tuple[type[GuardedMethod], tuple[Any, str, str]]:
        return (GuardedMethod, (self.component, self.plugin, self.method))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from .contracts import check_result

        label = describe(self.component.kind, self.component.name)
        fn = getattr(self.component, self.method)
        where = f"in {self.method}()"
        result = call_plugin(self.plugin, label, fn, *args, where=where, **kwargs)
        if isinstance(result, Iterator):  # a generator runs plugin code as it is consumed
            result = call_plugin(self.plugin, label, list, result, where=where)
        problem = check_result(self.component, self.method, result, args)
        if problem is not None:
            raise PluginFault(self.plugin, label, f"{where[3:]} returned {problem}")
        return result


class Guarded:
    """A registered component as the registry hands it out: attributes read
    through, methods guarded (see the module docstring). ``component`` is the
    plugin's own object, ``plugin`` the name of the plugin that registered it."""

    __slots__ = ("component", "plugin")

    def __init__(self, component: Any, plugin: str) -> None:
        self.component, self.plugin = component, plugin

    def __reduce__(self) -> tuple[type[Guarded], tuple[Any, str]]:
        return (Guarded, (self.component, self.plugin))

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.component, name)
        if not name.startswith("_") and inspect.ismethod(value):
            return GuardedMethod(self.component, self.plugin, name)
        return value

    def __repr__(self) -> str:
        return f"<{describe(self.component.kind, self.component.name)} of plugin {self.plugin!r}>"

    @property
    def label(self) -> str:
        """``metric 'tlost'``."""
        return describe(self.component.kind, self.component.name)


def plugin_of(component: object) -> str:
    """The plugin that registered ``component`` (a view the registry handed out)."""
    if not isinstance(component, Guarded):
        raise TypeError(f"{component!r} did not come from the registry")
    return component.plugin
