"""The pluggy side of the plugin registry: a manager that knows every hook specification,
registration that rejects hooks the specifications do not define, and one plugin's hook called
alone.

Every hook is called through pluggy (so its tracing, hook-call monitoring and wrappers apply);
the registry (``plugin._registry``) keeps what each plugin provided, by kind and name.
"""

from __future__ import annotations

import difflib

import pluggy

from debate_core.plugin import _hookspecs as hookspecs
from debate_core.plugin._specs import AnySpec

__all__ = ["call_alone", "describe_failure", "in_call_order", "new_manager", "register_checked"]


def new_manager() -> pluggy.PluginManager:
    """A plugin manager of the ``debate`` project with every hook specification added."""
    manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    return manager


def register_checked(manager: pluggy.PluginManager, plugin: object, plugin_name: str) -> None:
    """Register a plugin, rejecting hooks the specs do not define (misspelt hook names) and
    objects pluggy cannot tell apart when it calls one plugin's hook alone (unhashable ones)."""
    try:
        hash(plugin)
    except TypeError:
        kind = type(plugin).__name__
        message = f"plugin '{plugin_name}' is a {kind}, which cannot be hashed: use a module or a class instance"
        raise pluggy.PluginValidationError(plugin, message) from None
    manager.register(plugin, name=plugin_name)
    unknown = [caller.name for caller in manager.get_hookcallers(plugin) or [] if not caller.has_spec()]
    if unknown:
        manager.unregister(name=plugin_name)
        hints = []
        for hook_name in unknown:
            close = difflib.get_close_matches(hook_name, list(hookspecs.HOOK_KINDS), n=1)
            hints.append(f"'{hook_name}'" + (f" (did you mean '{close[0]}'?)" if close else ""))
        raise pluggy.PluginValidationError(plugin, f"implements unknown hook {', '.join(hints)}")


def in_call_order(hook: pluggy.HookCaller) -> list[pluggy.HookImpl]:
    """A hook's implementations (wrappers left out) in the order pluggy calls them: ``tryfirst``
    ones first, ``trylast`` ones last, later registrations before earlier ones otherwise."""
    return [impl for impl in reversed(hook.get_hookimpls()) if not (impl.wrapper or impl.hookwrapper)]


def call_alone(
    manager: pluggy.PluginManager, hook_name: str, impl: pluggy.HookImpl, expected: type[AnySpec]
) -> list[AnySpec]:
    """The specs one plugin's hook returns, called through pluggy (so tracing, hook-call
    monitoring and wrappers apply) with every other plugin's implementation left out: each
    plugin's specs keep their source, and one plugin's exception stops only that plugin."""
    hook = getattr(manager.hook, hook_name)
    others = [i.plugin for i in hook.get_hookimpls() if i is not impl and not (i.wrapper or i.hookwrapper)]
    results = manager.subset_hook_caller(hook_name, remove_plugins=others)()
    if not results:
        raise TypeError(f"hook {hook_name} returned None, expected an iterable of {expected.__name__}")
    provided = [item for result in results for item in result]
    for item in provided:
        if not isinstance(item, expected):
            raise TypeError(f"hook {hook_name} returned {type(item).__name__}, expected {expected.__name__}")
    return provided


def describe_failure(exc: BaseException) -> str:
    """One line for a plugin that failed to load or import: pluggy's validation message with its
    line breaks folded, or the exception's type and message."""
    if isinstance(exc, pluggy.PluginValidationError):
        text = " ".join(str(exc).split())
        return text
    return f"{type(exc).__name__}: {exc}"
