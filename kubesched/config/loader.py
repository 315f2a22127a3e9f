"""Loading a KubeSchedulerConfiguration: decode strictly, default, validate.

The three phases follow kube-scheduler's own pipeline.  Decoding problems
(unknown fields, wrong types) stop at the first one, as a strict decoder
does; semantic problems are all reported together.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from kubesched.config.decode import Fields, as_duration
from kubesched.config.defaults import default_plugin_config, default_plugins, default_profile, merge_plugins
from kubesched.config.errors import ConfigError, ErrorList, child, duplicate, index, invalid, required
from kubesched.config.features import FeatureGates, feature_gates
from kubesched.config.pluginargs import parse_plugin_args
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
    default_client_connection,
)
from kubesched.config.validation import duplicate_plugin_errors, validate_config
from kubesched.util.yaml_limits import YamlStructureError, check_yaml_structure


def default_config(features: FeatureGates | None = None) -> KubeSchedulerConfiguration:
    """What kube-scheduler runs with when given no configuration file."""
    features = features or feature_gates()
    return KubeSchedulerConfiguration(profiles=(default_profile(features=features),), features=features)


def load_config(
    source: str | Path | Mapping[str, Any] | None, *, features: FeatureGates | None = None
) -> KubeSchedulerConfiguration:
    """Load, default and validate a configuration.

    ``source`` is a path to a YAML or JSON file, an already parsed mapping,
    or None for pure defaults; ``features`` the emulated version and gates to default it for (the
    newest version's defaults when None).  Raises ConfigError (naming the offending
    field) for invalid content; I/O errors propagate unchanged.
    """
    features = features or feature_gates()
    if source is None:
        return default_config(features)
    if isinstance(source, Mapping):
        return _load(source, features)
    path = Path(source)
    return load_config_text(path.read_text(encoding="utf-8"), origin=str(path), features=features)


def load_config_text(text: str, *, origin: str, features: FeatureGates | None = None) -> KubeSchedulerConfiguration:
    """Load, default and validate a configuration from a file's text (``origin`` names the file in errors);
    for callers that must know exactly which bytes they loaded (a reload hashes them)."""
    return _load(_parse_text(text, origin), features or feature_gates())


def _load(data: object, features: FeatureGates) -> KubeSchedulerConfiguration:
    if data is None:
        data = {}
    semantic = ErrorList()
    cfg = _decode_configuration(data, semantic, features)
    semantic.raise_if_any()
    validate_config(cfg, check_duplicate_plugins=False)
    return cfg


class _StrictSafeLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys (as strict decoding does)."""


def _construct_mapping(loader: _StrictSafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    result: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in result:
            raise ConfigError(str(key), f"duplicate key at line {key_node.start_mark.line + 1}")
        result[key] = loader.construct_object(value_node, deep=True)
    return result


_StrictSafeLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _parse_text(text: str, path: str) -> object:
    try:
        check_yaml_structure(text)
    except YamlStructureError as exc:
        raise ConfigError("", f"{path}: could not parse configuration: {exc.reason}") from exc
    try:
        # JSON is a subset of YAML, so one parser serves both formats.
        return yaml.load(text, Loader=_StrictSafeLoader)
    except yaml.YAMLError as exc:
        raise ConfigError("", f"{path}: could not parse configuration: {exc}") from exc
    except RecursionError:  # the structure check bounds depth; this is the net under it
        raise ConfigError("", f"{path}: could not parse configuration: too deeply nested") from None


# --------------------------------------------------------------------------
# Decoding.


def _decode_configuration(data: object, semantic: ErrorList, features: FeatureGates) -> KubeSchedulerConfiguration:
    f = Fields(data, "")
    api_version = f.get_str("apiVersion")
    if api_version != API_VERSION:
        if not api_version:
            raise required("apiVersion", f"must be {API_VERSION!r}")
        raise invalid("apiVersion", api_version, f"only {API_VERSION} is supported")
    kind = f.get_str("kind")
    if kind != KIND:
        if not kind:
            raise required("kind", f"must be {KIND!r}")
        raise invalid("kind", kind, f"must be {KIND}")

    defaults = KubeSchedulerConfiguration(profiles=())
    parallelism = f.get_int("parallelism", defaults.parallelism)
    percentage = f.get_int("percentageOfNodesToScore", 0)
    initial_backoff = f.get_int("podInitialBackoffSeconds", defaults.pod_initial_backoff_seconds, bits=64)
    max_backoff = f.get_int("podMaxBackoffSeconds", defaults.pod_max_backoff_seconds, bits=64)
    delay_cache = f.get_bool("delayCacheUntilActive", False)
    enable_profiling = f.get_bool("enableProfiling", True)
    # Contention profiling follows profiling unless set explicitly.
    enable_contention = f.get_bool("enableContentionProfiling", enable_profiling)

    leader_election = _decode_leader_election(f.raw("leaderElection"), f.at("leaderElection"))
    client_connection = _decode_client_connection(f.raw("clientConnection"), f.at("clientConnection"))

    raw_profiles = f.get_list("profiles")
    profiles_path = f.at("profiles")
    if not raw_profiles:
        raw_profiles = [{}]
    profiles = tuple(
        _decode_profile(raw, index(profiles_path, i), semantic, features, sole=len(raw_profiles) == 1)
        for i, raw in enumerate(raw_profiles)
    )
    extenders = tuple(
        _decode_extender(raw, index(f.at("extenders"), i)) for i, raw in enumerate(f.get_list("extenders"))
    )
    f.done()
    return KubeSchedulerConfiguration(
        parallelism=parallelism,
        percentage_of_nodes_to_score=percentage,
        pod_initial_backoff_seconds=initial_backoff,
        pod_max_backoff_seconds=max_backoff,
        profiles=profiles,
        extenders=extenders,
        leader_election=leader_election,
        client_connection=client_connection,
        delay_cache_until_active=delay_cache,
        enable_profiling=enable_profiling,
        enable_contention_profiling=enable_contention,
        features=features,
    )


def _decode_leader_election(raw: object, path: str) -> LeaderElectionConfig:
    base = LeaderElectionConfig()
    if raw is None:
        return base
    f = Fields(raw, path)

    def duration(key: str, default: Any) -> Any:
        value = f.raw(key)
        return default if value is None else as_duration(value, f.at(key))

    cfg = LeaderElectionConfig(
        leader_elect=f.get_bool("leaderElect", base.leader_elect),
        lease_duration=duration("leaseDuration", base.lease_duration),
        renew_deadline=duration("renewDeadline", base.renew_deadline),
        retry_period=duration("retryPeriod", base.retry_period),
        # Empty strings get the defaults too, like upstream's len()==0 checks.
        resource_lock=f.get_str("resourceLock") or base.resource_lock,
        resource_name=f.get_str("resourceName") or base.resource_name,
        resource_namespace=f.get_str("resourceNamespace") or base.resource_namespace,
    )
    f.done()
    return cfg


def _decode_client_connection(raw: object, path: str) -> dict[str, Any]:
    conn = default_client_connection()
    if raw is None:
        return conn
    f = Fields(raw, path)
    conn["kubeconfig"] = f.get_str("kubeconfig")
    conn["acceptContentTypes"] = f.get_str("acceptContentTypes")
    conn["contentType"] = f.get_str("contentType") or conn["contentType"]
    # Zero means "unset" for both, as in kube-scheduler's defaulting.
    conn["qps"] = f.get_float("qps", 0.0) or conn["qps"]
    conn["burst"] = f.get_int("burst", 0) or conn["burst"]
    f.done()
    return conn


_EXTENDER_STR_KEYS = ("urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "bindVerb", "httpTimeout")
_EXTENDER_BOOL_KEYS = ("enableHTTPS", "nodeCacheCapable", "ignorable")
_TLS_KEYS = ("insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")


def _decode_extender(raw: object, path: str) -> dict[str, Any]:
    """Extenders stay plain dicts; only their shape is checked here."""
    f = Fields(raw, path)
    for key in _EXTENDER_STR_KEYS:
        f.opt_str(key)
    for key in _EXTENDER_BOOL_KEYS:
        f.get_bool(key, False)
    f.get_int("weight", 0, bits=64)
    if f.has("httpTimeout"):
        as_duration(f.data["httpTimeout"], f.at("httpTimeout"))
    tls = f.get_mapping("tlsConfig")
    if tls is not None:
        tf = Fields(tls, f.at("tlsConfig"))
        for key in _TLS_KEYS:
            tf.raw(key)
        tf.done()
    for i, res in enumerate(f.get_list("managedResources")):
        rf = Fields(res, index(f.at("managedResources"), i))
        rf.get_str("name")
        rf.get_bool("ignoredByScheduler", False)
        rf.done()
    f.done()
    return dict(f.data)


def _decode_profile(raw: object, path: str, semantic: ErrorList, features: FeatureGates, *, sole: bool) -> Profile:
    f = Fields(raw, path)
    name = f.opt_str("schedulerName")
    if name is None:
        # Only a lone profile is named implicitly; validation requires the rest.
        name = DEFAULT_SCHEDULER_NAME if sole else ""
    percentage = f.opt_int("percentageOfNodesToScore")
    raw_plugins = f.raw("plugins")
    user_plugins = None if raw_plugins is None else _decode_plugins(raw_plugins, f.at("plugins"), semantic)
    plugins = merge_plugins(default_plugins(features), user_plugins)

    given: dict[str, object] = {}
    name_paths = _plugin_name_paths(user_plugins, f.at("plugins"))
    pc_path = f.at("pluginConfig")
    for j, entry in enumerate(f.get_list("pluginConfig")):
        ep = index(pc_path, j)
        ef = Fields(entry, ep)
        plugin_name = ef.get_str("name")
        raw_args = ef.raw("args")
        ef.done()
        if not plugin_name:
            raise required(child(ep, "name"))
        name_paths.append((child(ep, "name"), plugin_name))
        args = parse_plugin_args(plugin_name, raw_args, child(ep, "args"))
        if plugin_name in given:
            # A dict cannot hold both entries, so report it now.
            semantic.add(duplicate(ep, plugin_name))
            continue
        given[plugin_name] = args
    f.done()
    return Profile(
        scheduler_name=name,
        percentage_of_nodes_to_score=percentage,
        plugins=plugins,
        plugin_config=default_plugin_config(plugins, given),
        plugin_name_paths=tuple(name_paths),
    )


def _plugin_name_paths(user_plugins: Plugins | None, path: str) -> list[tuple[str, str]]:
    """(field path, name) of every plugin the user's plugin sets name, in file order."""
    found: list[tuple[str, str]] = []
    for yaml_name, attr in EXTENSION_POINTS if user_plugins is not None else ():
        plugin_set: PluginSet = getattr(user_plugins, attr)
        point = child(path, yaml_name)
        found.extend(
            (child(index(child(point, "enabled"), i), "name"), ref.name) for i, ref in enumerate(plugin_set.enabled)
        )
        found.extend(
            (child(index(child(point, "disabled"), i), "name"), name) for i, name in enumerate(plugin_set.disabled)
        )
    return found


def _decode_plugins(raw: object, path: str, semantic: ErrorList) -> Plugins:
    f = Fields(raw, path)
    sets = {
        attr: _decode_plugin_set(f.raw(yaml_name), f.at(yaml_name), semantic) for yaml_name, attr in EXTENSION_POINTS
    }
    f.done()
    return Plugins(**sets)


def _decode_plugin_set(raw: object, path: str, semantic: ErrorList) -> PluginSet:
    if raw is None:
        return PluginSet()
    f = Fields(raw, path)
    enabled = tuple(_decode_plugin(p, index(f.at("enabled"), i)) for i, p in enumerate(f.get_list("enabled")))
    disabled = tuple(_decode_plugin(p, index(f.at("disabled"), i)).name for i, p in enumerate(f.get_list("disabled")))
    f.done()
    # Checked on the user's own list so the index points into their file.
    semantic.extend(duplicate_plugin_errors([p.name for p in enabled], path))
    return PluginSet(enabled=enabled, disabled=disabled)


def _decode_plugin(raw: object, path: str) -> PluginRef:
    f = Fields(raw, path)
    name = f.get_str("name")
    weight = f.get_int("weight", 0)
    f.done()
    if not name:
        raise required(child(path, "name"))
    return PluginRef(name=name, weight=weight)
