"""Semantic validation of a defaulted KubeSchedulerConfiguration.

All problems are collected and raised together as one aggregate
``ConfigError``, so a user fixes a broken config in one pass.  Whether plugin
names exist is not checked here: the framework registry knows that.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from kubesched.config.defaults import REMOVED_IN_V1_34
from kubesched.config.errors import (
    ConfigError,
    ErrorList,
    child,
    duplicate,
    index,
    invalid,
    required,
)
from kubesched.config.features import V1_34
from kubesched.config.pluginargs import qualified_name_problems, validate_plugin_args
from kubesched.config.types import API_VERSION, EXTENSION_POINTS, KubeSchedulerConfiguration, Profile


def validate_config(cfg: KubeSchedulerConfiguration, *, check_duplicate_plugins: bool = True) -> None:
    """Raise an aggregate ConfigError if ``cfg`` is not a valid configuration.

    ``check_duplicate_plugins`` lets the loader skip the check on merged
    plugin sets because it already reported duplicates against the indices
    the user wrote (merging shifts multiPoint indices).
    """
    errs = ErrorList()
    _validate_leader_election(cfg, errs)
    burst = cfg.client_connection.get("burst", 0)
    if isinstance(burst, int) and burst < 0:
        errs.add(invalid("clientConnection.burst", burst, "must be non-negative"))
    if cfg.parallelism <= 0:
        errs.add(invalid("parallelism", cfg.parallelism, "should be an integer value greater than zero"))

    if not cfg.profiles:
        errs.add(required("profiles"))
    else:
        first_seen: dict[str, int] = {}
        for i, prof in enumerate(cfg.profiles):
            path = index("profiles", i)
            _validate_profile(prof, path, errs, check_duplicate_plugins)
            if prof.scheduler_name in first_seen:
                errs.add(duplicate(child(path, "schedulerName"), prof.scheduler_name))
            else:
                first_seen[prof.scheduler_name] = i
        _validate_common_queue_sort(cfg.profiles, errs)

    errs.add(_validate_percentage("percentageOfNodesToScore", cfg.percentage_of_nodes_to_score))
    if cfg.pod_initial_backoff_seconds <= 0:
        errs.add(invalid("podInitialBackoffSeconds", cfg.pod_initial_backoff_seconds, "must be greater than 0"))
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        errs.add(
            invalid(
                "podMaxBackoffSeconds",
                cfg.pod_max_backoff_seconds,
                "must be greater than or equal to PodInitialBackoffSeconds",
            )
        )
    _validate_extenders(cfg.extenders, errs)
    if cfg.features.at_least(V1_34):
        _validate_removed_plugins(cfg.profiles, errs)
    errs.raise_if_any()


def _validate_removed_plugins(profiles: Sequence[Profile], errs: ErrorList) -> None:
    """Plugins v1.34 removed are an error wherever a profile enables or configures one (as upstream's
    invalid plugins by version)."""
    detail = f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version "{API_VERSION}")'
    for prof in profiles:
        for path, name in prof.plugin_name_paths:
            if name in REMOVED_IN_V1_34 and (".enabled[" in path or ".pluginConfig[" in path):
                errs.add(invalid(path.removesuffix(".name"), name, detail))


def _validate_leader_election(cfg: KubeSchedulerConfiguration, errs: ErrorList) -> None:
    le = cfg.leader_election
    if not le.leader_elect:
        return
    p = "leaderElection"
    for key, value in (
        ("leaseDuration", le.lease_duration),
        ("renewDeadline", le.renew_deadline),
        ("retryPeriod", le.retry_period),
    ):
        if value.total_seconds() <= 0:
            errs.add(invalid(child(p, key), f"{value.total_seconds():g}s", "must be greater than zero"))
    if le.lease_duration <= le.renew_deadline:
        errs.add(
            invalid(
                child(p, "leaseDuration"),
                f"{le.lease_duration.total_seconds():g}s",
                "LeaseDuration must be greater than RenewDeadline",
            )
        )
    if not le.resource_lock:
        errs.add(invalid(child(p, "resourceLock"), le.resource_lock, "resourceLock is required"))
    elif le.resource_lock != "leases":
        errs.add(invalid(child(p, "resourceLock"), le.resource_lock, 'resourceLock value must be "leases"'))
    if not le.resource_name:
        errs.add(invalid(child(p, "resourceName"), le.resource_name, "resourceName is required"))


def _validate_percentage(path: str, value: int | None) -> ConfigError | None:
    if value is not None and not 0 <= value <= 100:
        return invalid(path, value, "not in valid range [0-100]")
    return None


def _validate_profile(prof: Profile, path: str, errs: ErrorList, check_duplicate_plugins: bool) -> None:
    if not prof.scheduler_name:
        errs.add(required(child(path, "schedulerName")))
    errs.add(_validate_percentage(child(path, "percentageOfNodesToScore"), prof.percentage_of_nodes_to_score))
    if check_duplicate_plugins:
        for yaml_name, attr in EXTENSION_POINTS:
            names = [p.name for p in getattr(prof.plugins, attr).enabled]
            errs.extend(duplicate_plugin_errors(names, child(child(path, "plugins"), yaml_name)))
    # Dict order is the pluginConfig order (user entries first), so the index
    # matches the user's file for every entry the user wrote.
    for j, (name, args) in enumerate(prof.plugin_config.items()):
        entry = index(child(path, "pluginConfig"), j)
        if not name:
            errs.add(required(child(entry, "name")))
        errs.extend(validate_plugin_args(args, child(entry, "args")))


def duplicate_plugin_errors(names: Sequence[str], set_path: str) -> list[ConfigError]:
    """A plugin may be enabled only once per extension point."""
    seen: set[str] = set()
    errs: list[ConfigError] = []
    for i, name in enumerate(names):
        if name in seen:
            errs.append(invalid(index(child(set_path, "enabled"), i), name, "plugin enabled more than once"))
        seen.add(name)
    return errs


def _validate_common_queue_sort(profiles: Sequence[Profile], errs: ErrorList) -> None:
    """Pods of every profile share one queue, so one ordering must serve all."""
    canon = profiles[0].plugins.queue_sort
    if len(canon.enabled) > 1:
        errs.add(
            invalid(
                "profiles[0].plugins.queueSort.enabled",
                len(canon.enabled),
                "only one queue sort plugin can be enabled",
            )
        )
    sort_name = canon.enabled[0].name if canon.enabled else None
    canon_args = profiles[0].plugin_config.get(sort_name) if sort_name else None
    for i in range(1, len(profiles)):
        prof = profiles[i]
        path = index("profiles", i)
        current = prof.plugins.queue_sort
        if current != canon:
            errs.add(
                invalid(
                    child(path, "plugins.queueSort"),
                    {"enabled": [p.name for p in current.enabled], "disabled": list(current.disabled)},
                    "queueSort must be the same for all profiles",
                )
            )
        if sort_name and sort_name in prof.plugin_config and prof.plugin_config[sort_name] != canon_args:
            j = list(prof.plugin_config).index(sort_name)
            errs.add(
                invalid(
                    child(index(child(path, "pluginConfig"), j), "args"),
                    sort_name,
                    "queueSort must be the same for all profiles",
                )
            )


_NATIVE_PREFIX = re.compile(r"^([^/]*\.)?kubernetes\.io/")


def _extended_resource_problems(name: str) -> list[str]:
    problems = qualified_name_problems(name)
    if problems:
        return problems
    # Extended resources live outside the kubernetes.io domain and carry a
    # domain prefix; quota also needs "requests.<name>" to stay a valid name.
    if "/" not in name or _NATIVE_PREFIX.match(name) or qualified_name_problems("requests." + name):
        return ["is an invalid extended resource name"]
    return []


def _validate_extenders(extenders: Sequence[dict[str, Any]], errs: ErrorList) -> None:
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(extenders):
        path = index("extenders", i)
        weight = ext.get("weight") or 0
        if ext.get("prioritizeVerb") and weight <= 0:
            errs.add(invalid(child(path, "weight"), weight, "must have a positive weight applied to it"))
        if ext.get("bindVerb"):
            binders += 1
        for j, res in enumerate(ext.get("managedResources") or ()):
            rp = child(index(child(path, "managedResources"), j), "name")
            name = res.get("name", "")
            for msg in _extended_resource_problems(name):
                errs.add(invalid(rp, name, msg))
            if name in managed:
                errs.add(invalid(rp, name, "duplicate extender managed resource name"))
            managed.add(name)
    if binders > 1:
        errs.add(
            invalid(
                "extenders",
                f"found {binders} extenders implementing bind",
                "only one extender can implement bind",
            )
        )
