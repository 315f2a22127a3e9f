"""Which plugin names the scheduler can build, and how out-of-tree plugins are found.

In-tree plugins are modules under :mod:`kubesched.plugins` with a ``new(args, handle)`` factory (or
another factory named after a colon, where one module builds several plugins); every factory is a
:data:`~kubesched.framework.handle.PluginFactory`, taking the typed
:class:`~kubesched.framework.handle.Handle`.
Out-of-tree plugins are plain Python classes, found either through the ``kubesched.plugins`` entry
point group (name -> class or factory) or named directly in the configuration as
``package.module:ClassName``. A class is built as ``Class(args, handle)``, or through its ``new``
classmethod when it has one.
"""

from __future__ import annotations

import dataclasses
import importlib
from importlib import metadata
from typing import Any

from kubesched.config.profiles import Plugins, PluginSet, Profile
from kubesched.framework.extension_points import FrameworkError
from kubesched.framework.handle import Handle, PluginFactory
from kubesched.plugins import names
from kubesched.util.suggest import did_you_mean

ENTRY_POINT_GROUP = "kubesched.plugins"

_IN_TREE_MODULES: dict[str, str] = {
    names.PRIORITY_SORT: "kubesched.plugins.queuesort",
    names.SCHEDULING_GATES: "kubesched.plugins.schedulinggates",
    names.NODE_UNSCHEDULABLE: "kubesched.plugins.nodeunschedulable",
    names.NODE_NAME: "kubesched.plugins.nodename",
    names.TAINT_TOLERATION: "kubesched.plugins.tainttoleration",
    names.NODE_AFFINITY: "kubesched.plugins.nodeaffinity",
    names.NODE_PORTS: "kubesched.plugins.nodeports",
    names.NODE_RESOURCES_FIT: "kubesched.plugins.noderesources.fit",
    names.NODE_RESOURCES_BALANCED_ALLOCATION: "kubesched.plugins.noderesources.balanced_allocation",
    names.IMAGE_LOCALITY: "kubesched.plugins.imagelocality",
    names.DEFAULT_PREEMPTION: "kubesched.plugins.defaultpreemption",
    names.DEFAULT_BINDER: "kubesched.plugins.defaultbinder",
    names.POD_TOPOLOGY_SPREAD: "kubesched.plugins.podtopologyspread",
    names.INTER_POD_AFFINITY: "kubesched.plugins.interpodaffinity",
    names.VOLUME_RESTRICTIONS: "kubesched.plugins.volumerestrictions",
    names.VOLUME_ZONE: "kubesched.plugins.volumezone",
    names.VOLUME_BINDING: "kubesched.plugins.volumebinding",
    names.NODE_VOLUME_LIMITS: "kubesched.plugins.nodevolumelimits.csi",
    names.DYNAMIC_RESOURCES: "kubesched.plugins.dynamicresources",
    names.EBS_LIMITS: "kubesched.plugins.nodevolumelimits.non_csi:new_ebs",
    names.GCE_PD_LIMITS: "kubesched.plugins.nodevolumelimits.non_csi:new_gce_pd",
    names.AZURE_DISK_LIMITS: "kubesched.plugins.nodevolumelimits.non_csi:new_azure_disk",
}

#: Out-of-tree plugins shipped with kubesched (scheduler-plugins'), registered by name like in-tree ones.
_BUNDLED_OUT_OF_TREE: dict[str, str] = {
    "Coscheduling": "kubesched.plugins.coscheduling",
}

#: kube-scheduler plugins kubesched does not build yet: a profile that enables one gets a warning
#: naming it and runs without it (never a silent pass-through).
NOT_YET_BUILT: frozenset[str] = frozenset()


class PluginLoadError(FrameworkError):
    """A plugin name that resolves to nothing buildable (or a plugin that fails to build)."""


def in_tree_registry() -> dict[str, PluginFactory]:
    """Name -> factory for every built in-tree plugin, plus entry-point plugins."""
    registry: dict[str, PluginFactory] = {}
    for name, target in (*_IN_TREE_MODULES.items(), *_BUNDLED_OUT_OF_TREE.items()):
        module, _, factory = target.partition(":")
        registry[name] = getattr(importlib.import_module(module), factory or "new")
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        registry.setdefault(ep.name, _as_factory(ep.load(), ep.name))
    return registry


def _as_factory(obj: Any, name: str) -> PluginFactory:
    """Turn a class or callable into ``factory(args, handle)``; the plugin's ``name`` is enforced."""
    builder = getattr(obj, "new", None) if isinstance(obj, type) else None
    make = builder if callable(builder) else obj
    if not callable(make):
        raise PluginLoadError(f'plugin "{name}" is neither a class nor a factory')

    def factory(args: Any, handle: Handle) -> Any:
        try:
            plugin = make(args, handle)
        except PluginLoadError:
            raise
        except Exception as err:  # the plugin's own __init__ failed: bad input, not a crash
            raise PluginLoadError(f'plugin "{name}": building it failed: {_describe(err)}') from err
        if not getattr(plugin, "name", None):
            try:
                plugin.name = name
            except AttributeError:
                raise PluginLoadError(f'plugin "{name}" has no name attribute') from None
        return plugin

    return factory


def load_import_path(path: str) -> PluginFactory:
    """Import ``package.module:ClassName`` and wrap it as a factory."""
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise PluginLoadError(f'plugin "{path}" does not exist (expected a registered name or "module:Class")')
    try:
        module = importlib.import_module(module_name)
    except Exception as err:  # ImportError, SyntaxError, or whatever the module raises at import
        raise PluginLoadError(f'plugin "{path}": importing {module_name} failed: {_describe(err)}') from err
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise PluginLoadError(f'plugin "{path}": module {module_name} has no attribute {attr}') from None
    return _as_factory(obj, path)


def _describe(err: BaseException) -> str:
    """``ValueError: message`` (with the place, for a syntax error)."""
    if isinstance(err, SyntaxError):
        return f"SyntaxError: {err.msg} ({err.filename}, line {err.lineno})"
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__


def resolve_profile(profile: Profile, registry: dict[str, PluginFactory]) -> tuple[Profile, list[str]]:
    """The profile kubesched will actually run, and a warning per kube-scheduler plugin left out.

    Import-path plugins are added to ``registry``; names that are neither registered, importable
    nor known-but-unbuilt raise :class:`PluginLoadError`, at the field that names them and with the
    closest known name. Names kube-scheduler lets pass unused (a disabled plugin, args for a plugin)
    that match no plugin get a warning with the same hint: a misspelling there silently does nothing.
    """
    dropped: set[str] = set()
    unknown: list[str] = []
    for name in _in_file_order(profile, profile.plugins.enabled_names()):
        if name in registry:
            continue
        if name in NOT_YET_BUILT:
            dropped.add(name)
        elif ":" in name:
            registry[name] = load_import_path(name)
        else:
            unknown.append(name)
    if unknown:
        problems = [
            f'{_where(profile, name, ".enabled[")}: plugin "{name}" does not exist'
            f"{did_you_mean(name, _known_names(registry))}"
            for name in unknown
        ]
        raise PluginLoadError(problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")
    warnings = _unused_names(profile, registry)
    for name in sorted(dropped):
        warnings.append(
            f'profile "{profile.scheduler_name}": plugin {name} is not implemented in kubesched yet; '
            "it is left out of the effective plugin set"
        )
    if not dropped:
        return profile, warnings

    def strip(ps: PluginSet) -> PluginSet:
        return PluginSet(enabled=tuple(r for r in ps.enabled if r.name not in dropped), disabled=ps.disabled)

    plugins = Plugins(**{f.name: strip(getattr(profile.plugins, f.name)) for f in dataclasses.fields(Plugins)})
    config = {k: v for k, v in profile.plugin_config.items() if k not in dropped}
    return dataclasses.replace(profile, plugins=plugins, plugin_config=config), warnings


def _known_names(registry: dict[str, PluginFactory]) -> list[str]:
    """The names a misspelt one may have meant: registered and known-but-unbuilt (not import paths)."""
    return sorted({*(n for n in registry if ":" not in n), *NOT_YET_BUILT})


def _in_file_order(profile: Profile, names: set[str]) -> list[str]:
    """``names``, those the configuration file wrote first and in its order, then the rest sorted."""
    written = [name for _, name in profile.plugin_name_paths if name in names]
    return list(dict.fromkeys([*written, *sorted(names)]))


def _where(profile: Profile, name: str, kind: str) -> str:
    """The field that names ``name`` (the first of that ``kind``: ".enabled[", ".disabled[",
    "pluginConfig["), or the profile for profiles built in code."""
    path = next((p for p, n in profile.plugin_name_paths if n == name and kind in p), None)
    return path or f"profiles[{profile.scheduler_name}]"


def _unused_names(profile: Profile, registry: dict[str, PluginFactory]) -> list[str]:
    """Warnings for disabled plugins and plugin args whose name is no plugin at all."""
    enabled = profile.plugins.enabled_names()
    warnings = []
    for path, name in profile.plugin_name_paths:
        if name == "*" or name in registry or name in NOT_YET_BUILT or name in enabled:
            continue
        if ".disabled[" in path:
            effect = "disabling it changes nothing"
        elif "pluginConfig[" in path:
            effect = "its args are not used"
        else:
            continue
        warnings.append(f'{path}: plugin "{name}" does not exist; {effect}{did_you_mean(name, _known_names(registry))}')
    return warnings
