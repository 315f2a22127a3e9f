"""kube-scheduler's v1 defaults for profiles: plugin sets and plugin args, per emulated version.

The default plugins are listed once, under multiPoint; a user's plugin sets
are merged into them point by point (``merge_plugin_set``), and every enabled
in-tree plugin that takes args gets defaulted args. v1.34 dropped the in-tree
cloud volume limits (EBS, GCE PD, Azure Disk) and, with DynamicResourceAllocation
on (its default there), runs DynamicResources just before DefaultPreemption.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubesched.config.features import V1_34, FeatureGates, feature_gates
from kubesched.config.pluginargs import PLUGIN_ARGS, default_args
from kubesched.config.profiles import (
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)

# v1.30's default multiPoint set, in order.  Weights only matter for plugins
# that score.  Feature-gated plugins (DynamicResources, which would sit just
# before DefaultPreemption) are off by default there and therefore absent.
DEFAULT_MULTI_POINT: tuple[PluginRef, ...] = (
    PluginRef("SchedulingGates"),
    PluginRef("PrioritySort"),
    PluginRef("NodeUnschedulable"),
    PluginRef("NodeName"),
    PluginRef("TaintToleration", 3),
    PluginRef("NodeAffinity", 2),
    PluginRef("NodePorts"),
    PluginRef("NodeResourcesFit", 1),
    PluginRef("VolumeRestrictions"),
    PluginRef("EBSLimits"),
    PluginRef("GCEPDLimits"),
    PluginRef("NodeVolumeLimits"),
    PluginRef("AzureDiskLimits"),
    PluginRef("VolumeBinding"),
    PluginRef("VolumeZone"),
    PluginRef("PodTopologySpread", 2),
    PluginRef("InterPodAffinity", 2),
    PluginRef("DefaultPreemption"),
    PluginRef("NodeResourcesBalancedAllocation", 1),
    PluginRef("ImageLocality", 1),
    PluginRef("DefaultBinder"),
)


#: The in-tree cloud volume-limit plugins v1.34 removed (naming one in a v1.34 configuration is an error).
REMOVED_IN_V1_34: frozenset[str] = frozenset({"EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits"})
DYNAMIC_RESOURCES = "DynamicResources"


def default_multi_point(features: FeatureGates | None = None) -> tuple[PluginRef, ...]:
    """The default multiPoint set of the emulated version, in order."""
    features = features or feature_gates()
    plugins = list(DEFAULT_MULTI_POINT)
    if features.at_least(V1_34):
        plugins = [p for p in plugins if p.name not in REMOVED_IN_V1_34]
    if features.enabled("DynamicResourceAllocation"):
        at = next(i for i, p in enumerate(plugins) if p.name == "DefaultPreemption")
        plugins.insert(at, PluginRef(DYNAMIC_RESOURCES))
    return tuple(plugins)


def default_plugins(features: FeatureGates | None = None) -> Plugins:
    """Plugins of a profile that configures none."""
    return Plugins(multi_point=PluginSet(enabled=default_multi_point(features)))


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """Combine a user's plugin set with the default one for the same point.

    - Disabled names (user's, then the default's own) are kept in the result;
      ``"*"`` drops every default plugin.
    - A default plugin that the user enables again is replaced *in place*
      (order preserved, the user's weight wins); if the user lists it more
      than once, the last entry is the one used in place.
    - Every other user plugin is appended in the user's order, duplicates
      included (validation reports those).
    """
    disabled = tuple(custom.disabled) + tuple(default.disabled)
    off = set(disabled)
    last_index = {p.name: i for i, p in enumerate(custom.enabled)}
    used: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in off:
        for plugin in default.enabled:
            if plugin.name in off:
                continue
            i = last_index.get(plugin.name)
            if i is not None:
                plugin = custom.enabled[i]
                used.add(i)
            enabled.append(plugin)
    enabled.extend(p for i, p in enumerate(custom.enabled) if i not in used)
    return PluginSet(enabled=tuple(enabled), disabled=disabled)


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    """Merge every extension point of ``custom`` into ``default``."""
    if custom is None:
        return default
    merged = {attr: merge_plugin_set(getattr(default, attr), getattr(custom, attr)) for _, attr in EXTENSION_POINTS}
    return Plugins(**merged)


def default_plugin_config(plugins: Plugins, given: Mapping[str, object]) -> dict[str, object]:
    """User-given args followed by defaulted args of the other enabled in-tree plugins."""
    config = dict(given)
    for name in sorted(plugins.enabled_names()):
        if name not in config and name in PLUGIN_ARGS:
            config[name] = default_args(name)
    return config


def default_profile(scheduler_name: str = DEFAULT_SCHEDULER_NAME, features: FeatureGates | None = None) -> Profile:
    """A profile as kube-scheduler builds it when the config names nothing."""
    plugins = default_plugins(features)
    return Profile(
        scheduler_name=scheduler_name,
        percentage_of_nodes_to_score=None,
        plugins=plugins,
        plugin_config=default_plugin_config(plugins, {}),
    )
