"""The plugin registry: entry-point loading, name-keyed registries per kind, and listing.

Built-ins are ordinary plugins registered through debate-core's own entry points. Every
entry point loads in its own ``try``: a broken third-party plugin becomes a warning and a
``failed`` row in ``debate plugins`` while everything else keeps working. Hooks are called
through pluggy (``plugin._manager``).

Environment variables:
    ``DEBATE_STRICT_PLUGINS=1``           a plugin that fails to load or register is fatal.
    ``DEBATE_DISABLE_PLUGIN_AUTOLOAD=1``  load debate-core's built-ins only.
    ``DEBATE_PLUGINS=dist1,dist2``        load the built-ins and only these distributions.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import os
import re
import sys
import types
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Literal

import attrs
import pluggy

from debate_core.config.choices import is_import_path, normalise_name
from debate_core.config.environment import env_flag
from debate_core.config.structuring import structure
from debate_core.errors import ConflictingPluginsError, PluginError, UnknownComponentError
from debate_core.plugin import _hookspecs as hookspecs
from debate_core.plugin._manager import call_alone, describe_failure, in_call_order, new_manager, register_checked
from debate_core.plugin._specs import KINDS, SPEC_TYPES, AnySpec, BuildContext, ComponentSpec
from debate_core.records.json_values import JsonMapping, JsonObject

__all__ = [
    "CORE_DISTRIBUTION",
    "DISABLE_AUTOLOAD_ENV",
    "ONLY_ENV",
    "STRICT_ENV",
    "ComponentEntry",
    "PluginLoadWarning",
    "PluginSource",
    "PluginStatus",
    "Registry",
    "get_registry",
    "installed_distributions",
    "kind_label",
    "load_registry",
    "normalise_distribution",
    "reset_registry",
]

CORE_DISTRIBUTION = "debate-core"
"""The distribution whose entry points are the built-ins (always loaded)."""
STRICT_ENV = "DEBATE_STRICT_PLUGINS"
"""Set to 1: a plugin that fails to load or register is fatal."""
DISABLE_AUTOLOAD_ENV = "DEBATE_DISABLE_PLUGIN_AUTOLOAD"
"""Set to 1: load debate-core's built-ins only."""
ONLY_ENV = "DEBATE_PLUGINS"
"""``dist1,dist2``: load the built-ins and only these distributions."""

PluginStatus = Literal["active", "failed", "disabled", "conflict"]
"""The status of a plugin or component in ``debate plugins``."""


class PluginLoadWarning(UserWarning):
    """A third-party plugin could not be loaded or registered; the rest keeps working."""


def normalise_distribution(name: str) -> str:
    """PEP 503 normalisation of a distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def kind_label(kind: str, plural: bool = False) -> str:
    """A kind as words: ``history_policy`` -> ``history policy`` (``history policies``)."""
    words = kind.replace("_", " ")
    if not plural:
        return words
    return words[:-1] + "ies" if words.endswith("y") else words + "s"


@attrs.frozen
class PluginSource:
    """One loaded (or not loaded) plugin: an entry point, or an object registered by hand."""

    plugin_name: str
    entry_point: str
    distribution: str
    version: str
    status: PluginStatus
    reason: str | None = None


@attrs.frozen
class ComponentEntry:
    """One component as listed by ``debate plugins``."""

    kind: str
    name: str
    description: str
    distribution: str
    version: str
    status: PluginStatus
    reason: str | None = None

    def as_json(self) -> JsonObject:
        """The JSON object ``debate plugins --json`` prints."""
        return attrs.asdict(self)


@attrs.frozen
class _Provided:
    spec: AnySpec
    source: PluginSource


class Registry:
    """Every component of every kind, resolved by name.

    Create one with :func:`load_registry` (or use :func:`get_registry`); hooks are
    called lazily on the first look-up, so loading stays cheap.
    """

    def __init__(self, manager: pluggy.PluginManager, sources: list[PluginSource], strict: bool) -> None:
        self._manager = manager
        self._sources: dict[str, PluginSource] = {s.plugin_name: s for s in sources}
        self._strict = strict
        self._collected: dict[str, dict[str, list[_Provided]]] | None = None
        self._imported: dict[tuple[str, str], AnySpec] = {}
        self._failed_kinds: dict[str, set[str]] = {}

    @property
    def plugin_manager(self) -> pluggy.PluginManager:
        """The pluggy manager every hook is called through: ``plugin_manager.trace`` and
        ``enable_tracing()`` show each hook call with its results (docs/plugin-guide.md)."""
        return self._manager

    # ---------------------------------------------------------------- collection
    def _collect(self) -> dict[str, dict[str, list[_Provided]]]:
        if self._collected is not None:
            return self._collected
        by_kind: dict[str, dict[str, list[_Provided]]] = {kind: {} for kind in KINDS}
        spec_type_of_kind = {t.kind: t for t in SPEC_TYPES}
        failed_plugins: set[str] = set()
        for hook_name, kind in hookspecs.HOOK_KINDS.items():
            for impl in in_call_order(getattr(self._manager.hook, hook_name)):
                source = self._sources.get(impl.plugin_name)
                if source is None or source.status != "active" or impl.plugin_name in failed_plugins:
                    continue
                try:
                    provided = call_alone(self._manager, hook_name, impl, spec_type_of_kind[kind])
                except Exception as exc:  # a plugin's own bug must not stop the others
                    failed_plugins.add(impl.plugin_name)
                    self._failed_kinds.setdefault(impl.plugin_name, set()).add(kind)
                    self._fail(source, f"hook {hook_name} raised {type(exc).__name__}: {exc}")
                    continue
                for item in provided:
                    by_kind[kind].setdefault(item.name, []).append(_Provided(item, source))
        if failed_plugins:
            for kind_map in by_kind.values():
                for name in list(kind_map):
                    kind_map[name] = [p for p in kind_map[name] if p.source.plugin_name not in failed_plugins]
                    if not kind_map[name]:
                        del kind_map[name]
        self._collected = by_kind
        return by_kind

    def _fail(self, source: PluginSource, reason: str) -> None:
        failed = attrs.evolve(source, status="failed", reason=reason)
        self._sources[source.plugin_name] = failed
        message = (
            f"debate plugin '{source.entry_point}' from distribution {source.distribution} "
            f"{source.version} failed: {reason}"
        )
        if self._strict:
            raise PluginError(message)
        warnings.warn(message, PluginLoadWarning, stacklevel=3)

    # ---------------------------------------------------------------- look-ups
    def _check_kind(self, kind: str) -> None:
        if kind not in KINDS:
            raise PluginError(f"unknown kind of component {kind!r}; kinds are: {', '.join(KINDS)}")

    def names(self, kind: str) -> list[str]:
        """The sorted names of every component of one kind."""
        self._check_kind(kind)
        return sorted(self._collect()[kind])

    def specs(self, kind: str) -> list[AnySpec]:
        """Every component of one kind, sorted by name (conflicting names are left out)."""
        self._check_kind(kind)
        found = self._collect()[kind]
        return [found[name][0].spec for name in sorted(found) if len(found[name]) == 1]

    def resolve(self, kind: str, name: str) -> AnySpec:
        """The component of ``kind`` called ``name``.

        Raises:
            UnknownComponentError: no plugin provides it; the message lists the available
                names and the closest match.
            ConflictingPluginsError: two plugins provide it; the message names both.
        """
        self._check_kind(kind)
        if is_import_path(name):
            return self._import_component(kind, name.strip())
        key = normalise_name(name)
        found = self._collect()[kind]
        providers = found.get(key)
        if not providers:
            failed = self._failed_source_for(kind, key)
            if failed is not None:
                raise UnknownComponentError(
                    f"{kind_label(kind)} '{name}' is not available: plugin '{failed.entry_point}' from "
                    f"{failed.distribution} {failed.version} failed to load: {failed.reason}"
                )
            available = sorted(found)
            close = difflib.get_close_matches(key, available, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            listing = ", ".join(available) if available else "none installed"
            broken = [s for s in self._sources.values() if s.status == "failed"]
            also = (
                f" {len(broken)} plugin(s) failed to load ({', '.join(s.entry_point for s in broken)}); "
                "see `debate plugins`."
                if broken
                else ""
            )
            plural = kind_label(kind, plural=True)
            raise UnknownComponentError(
                f"unknown {kind_label(kind)} '{name}'.{hint} Available {plural}: {listing}.{also}"
            )
        if len(providers) > 1:
            who = " and ".join(f"{p.source.distribution} (entry point '{p.source.entry_point}')" for p in providers)
            raise ConflictingPluginsError(
                f"conflicting plugins: {kind_label(kind)} '{key}' is provided by {who}; uninstall one, or choose which "
                f"distributions load with {ONLY_ENV}=dist1,dist2"
            )
        return providers[0].spec

    def _failed_source_for(self, kind: str, key: str) -> PluginSource | None:
        """The failed plugin that would most likely have provided ``key``: one whose hook for this
        kind raised, or one whose entry point or distribution carries the name."""
        for source in self._sources.values():
            if source.status != "failed":
                continue
            kinds = self._failed_kinds.get(source.plugin_name)
            named = key in (normalise_name(source.entry_point), normalise_name(source.distribution))
            if named and (kinds is None or kind in kinds):
                return source
            if kinds == {kind} and key in normalise_name(source.distribution):
                return source
        return None

    def _import_component(self, kind: str, path: str) -> AnySpec:
        """A component named by import path, ``module:attribute``: the attribute is a spec of this
        kind (validated like an entry point's), or the component itself (a reward function), which
        then takes no options. The current directory is importable, as for ``python -m``."""
        cached = self._imported.get((kind, path))
        if cached is not None:
            return cached
        label = f"{kind_label(kind)} '{path}'"
        module_name, _, attribute = path.partition(":")
        if not module_name or not attribute:
            raise UnknownComponentError(f"{label}: an import path is module:attribute, e.g. my_rewards:majority")
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.append(os.getcwd())
        try:
            target: object = importlib.import_module(module_name)
        except Exception as exc:
            raise PluginError(f"{label}: cannot import module '{module_name}': {describe_failure(exc)}") from exc
        for part in attribute.split("."):
            if not hasattr(target, part):
                raise PluginError(f"{label}: module '{module_name}' has no attribute '{attribute}'")
            target = getattr(target, part)
        expected = {t.kind: t for t in SPEC_TYPES}[kind]
        if isinstance(target, ComponentSpec):
            if not isinstance(target, expected):
                raise PluginError(f"{label} is a {type(target).__name__}, expected a {expected.__name__}")
            spec: AnySpec = target
        elif inspect.isclass(target) or not callable(target):
            raise PluginError(
                f"{label} is {'a class' if inspect.isclass(target) else type(target).__name__}: name a "
                f"{expected.__name__} (a component with options) or the {kind_label(kind)} itself (a function)"
            )
        else:
            name = normalise_name(re.sub(r"[^A-Za-z0-9_]", "_", attribute.rsplit(".", 1)[-1])).strip("_") or kind
            spec = expected(
                name=name if name[0].isalpha() else f"{kind}_{name}",
                description=_summary_of(target) or f"{path} (by import path)",
                build=_constant(target),
            )
        self._imported[(kind, path)] = spec
        return spec

    # Any: the component of kind ``kind`` (a string at run time), as ``ComponentBuilder.build``
    def build(self, kind: str, name: str, options: JsonMapping | None = None, path: str = "") -> Any:
        """Resolve a component, validate ``options`` with its own options class, and build it.

        ``path`` is the key path of the options in the run file (``reward.options``), used in
        error messages.
        """
        spec = self.resolve(kind, name)
        where = path or f"{spec.kind} '{spec.name}' options"
        context = BuildContext(kind=spec.kind, name=spec.name, path=where, builder=self)
        return spec.make(self.structure_options(spec, options, path), context)

    def structure_options(self, spec: AnySpec, options: JsonMapping | None, path: str = "") -> object:
        """The options instance of a component (defaults filled); errors name ``path``."""
        raw = dict(options or {})
        where = path or f"{spec.kind} '{spec.name}' options"
        if spec.options is None:
            if raw:
                raise PluginError(f"{where}: {spec.kind} '{spec.name}' takes no options, got {', '.join(sorted(raw))}")
            return None
        return structure(raw, spec.options, where)

    # ---------------------------------------------------------------- listing
    def sources(self) -> list[PluginSource]:
        """Every plugin source with its status."""
        self._collect()
        return sorted(self._sources.values(), key=lambda s: (s.distribution, s.entry_point))

    def listing(self, kind: str | None = None) -> list[ComponentEntry]:
        """Every component (and every failed or disabled plugin) for ``debate plugins``.

        With ``kind``, a failed plugin is listed too when its hook for that kind raised, or when it
        failed to load at all (it may have provided a component of any kind); its kind column then
        reads ``plugin``."""
        if kind is not None:
            self._check_kind(kind)
        rows: list[ComponentEntry] = []
        for k in KINDS if kind is None else (kind,):
            for name, providers in sorted(self._collect()[k].items()):
                status: PluginStatus = "active" if len(providers) == 1 else "conflict"
                for p in providers:
                    reason = None
                    if status == "conflict":
                        others = [o.source.distribution for o in providers if o is not p]
                        reason = f"name also provided by {', '.join(others)}"
                    rows.append(
                        ComponentEntry(
                            k, name, p.spec.description, p.source.distribution, p.source.version, status, reason
                        )
                    )
        for source in self.sources():
            if source.status == "disabled" and kind is not None:
                continue
            kinds = self._failed_kinds.get(source.plugin_name)
            if source.status == "failed" and kind is not None and kinds is not None and kind not in kinds:
                continue
            if source.status in ("failed", "disabled"):
                rows.append(
                    ComponentEntry(
                        "plugin",
                        source.entry_point,
                        "",
                        source.distribution,
                        source.version,
                        source.status,
                        source.reason,
                    )
                )
        return rows

    # ---------------------------------------------------------------- testing
    @contextmanager
    def temporary_plugin(
        self, plugin: object, name: str | None = None, distribution: str = "<test>"
    ) -> Iterator[object]:
        """Register a plugin object (a module, a class instance or a ``SimpleNamespace`` of hook
        implementations) for the duration of a ``with`` block; used by the pytest fixtures."""
        plugin_name = name or f"temporary-{id(plugin)}"
        if isinstance(plugin, types.SimpleNamespace):  # unhashable: pluggy gets a module of its attributes
            module = types.ModuleType(plugin_name)
            vars(module).update(vars(plugin))
            plugin = module
        register_checked(self._manager, plugin, plugin_name)
        self._sources[plugin_name] = PluginSource(plugin_name, plugin_name, distribution, "0", "active")
        self._collected = None
        try:
            yield plugin
        finally:
            self._manager.unregister(name=plugin_name)
            self._sources.pop(plugin_name, None)
            self._collected = None


def _summary_of(target: object) -> str:
    """The first line of an object's docstring."""
    doc = inspect.getdoc(target) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _constant(component: object) -> Callable[[None], object]:
    """A ``build`` that takes no options and returns ``component`` itself."""

    def build(options: None) -> object:
        return component

    return build


def _distribution_of(ep: EntryPoint) -> tuple[str, str]:
    dist = ep.dist
    if dist is None:
        return "<unknown>", "0"
    return dist.metadata["Name"] or dist.name, dist.version


def load_registry() -> Registry:
    """Load every enabled entry point of the ``debate`` group into a new registry."""
    strict = env_flag(STRICT_ENV)
    builtins_only = env_flag(DISABLE_AUTOLOAD_ENV)
    only = {normalise_distribution(d) for d in os.environ.get(ONLY_ENV, "").split(",") if d.strip()}
    manager = new_manager()
    sources: list[PluginSource] = []
    seen: set[tuple[str, str]] = set()
    for ep in sorted(entry_points(group=hookspecs.PROJECT_NAME), key=lambda e: (e.dist.name if e.dist else "", e.name)):
        distribution, version = _distribution_of(ep)
        key = (normalise_distribution(distribution), ep.name)
        if key in seen:  # the same distribution found twice on sys.path
            continue
        seen.add(key)
        plugin_name = f"{distribution}:{ep.name}"
        is_core = normalise_distribution(distribution) == CORE_DISTRIBUTION
        if not is_core and (builtins_only or (only and normalise_distribution(distribution) not in only)):
            why = f"{DISABLE_AUTOLOAD_ENV}=1" if builtins_only else f"not listed in {ONLY_ENV}"
            sources.append(PluginSource(plugin_name, ep.name, distribution, version, "disabled", why))
            continue
        try:
            module = ep.load()
            register_checked(manager, module, plugin_name)
        except Exception as exc:  # each entry point fails alone
            reason = f"could not be loaded ({ep.value}): {describe_failure(exc)}"
            message = f"debate plugin '{ep.name}' from distribution {distribution} {version} failed: {reason}"
            if strict:
                raise PluginError(message) from exc
            warnings.warn(message, PluginLoadWarning, stacklevel=2)
            sources.append(PluginSource(plugin_name, ep.name, distribution, version, "failed", reason))
            continue
        sources.append(PluginSource(plugin_name, ep.name, distribution, version, "active"))
    return Registry(manager, sources, strict)


_registry: Registry | None = None


def get_registry() -> Registry:
    """The process-wide registry, loaded on first use."""
    global _registry
    if _registry is None:
        _registry = load_registry()
    return _registry


def reset_registry() -> None:
    """Forget the process-wide registry (tests that change the environment call this)."""
    global _registry
    _registry = None


def installed_distributions() -> list[dict[str, str]]:
    """Every distribution that provides ``debate`` plugins, with its version and status."""
    rows: dict[str, dict[str, str]] = {}
    for source in get_registry().sources():
        row = rows.setdefault(source.distribution, {"distribution": source.distribution, "version": source.version})
        row["status"] = source.status if row.get("status") in (None, "active") else row["status"]
    return sorted(rows.values(), key=lambda r: r["distribution"])
