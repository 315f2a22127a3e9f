"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): load, default, validate.

Typical use::

    cfg = load_config("scheduler-config.yaml")   # or a dict, or None
    for profile in cfg.profiles:
        fit_args = profile.plugin_config["NodeResourcesFit"]
"""

from kubesched.config.defaults import (
    DEFAULT_MULTI_POINT,
    default_plugin_config,
    default_plugins,
    default_profile,
    merge_plugin_set,
    merge_plugins,
)
from kubesched.config.errors import ConfigError
from kubesched.config.loader import default_config, load_config
from kubesched.config.pluginargs import (
    LEAST_ALLOCATED,
    LIST_DEFAULTING,
    MOST_ALLOCATED,
    PLUGIN_ARGS,
    REQUESTED_TO_CAPACITY_RATIO,
    SYSTEM_DEFAULTING,
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginArgsSpec,
    PodTopologySpreadArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    VolumeBindingArgs,
    default_args,
    parse_plugin_args,
)
from kubesched.config.types import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    KIND,
    KubeSchedulerConfiguration,
    LeaderElectionConfig,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)
from kubesched.config.validation import validate_config

__all__ = [
    "API_VERSION",
    "DEFAULT_MULTI_POINT",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "KIND",
    "LEAST_ALLOCATED",
    "LIST_DEFAULTING",
    "MOST_ALLOCATED",
    "PLUGIN_ARGS",
    "REQUESTED_TO_CAPACITY_RATIO",
    "SYSTEM_DEFAULTING",
    "ConfigError",
    "DefaultPreemptionArgs",
    "DynamicResourcesArgs",
    "InterPodAffinityArgs",
    "KubeSchedulerConfiguration",
    "LeaderElectionConfig",
    "NodeAffinityArgs",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "PluginArgsSpec",
    "PluginRef",
    "PluginSet",
    "Plugins",
    "PodTopologySpreadArgs",
    "Profile",
    "RequestedToCapacityRatioParam",
    "ResourceSpec",
    "ScoringStrategy",
    "UtilizationShapePoint",
    "VolumeBindingArgs",
    "default_args",
    "default_config",
    "default_plugin_config",
    "default_plugins",
    "default_profile",
    "load_config",
    "merge_plugin_set",
    "merge_plugins",
    "parse_plugin_args",
    "validate_config",
]
