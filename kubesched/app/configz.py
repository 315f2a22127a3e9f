"""/configz: the configuration the scheduler runs with, in the shape kube-scheduler serves it.

kube-scheduler registers its component config under the name ``componentconfig`` and /configz answers
``{"componentconfig": {...}}`` with the *internal* configuration type marshalled as JSON: Go field names
(``Parallelism``, ``LeaderElection.LeaseDuration``, ``Profiles[].Plugins.MultiPoint.Enabled[].Weight``,
``PluginConfig[].Args.ScoringStrategy``), durations as Go writes them (``15s``, ``1m30s``), an empty
plugin list as ``null``, and the v1 ``apiVersion`` it was loaded from. :func:`componentconfig` builds the
same document from a :class:`~kubesched.config.types.KubeSchedulerConfiguration`; after a reload it is the
new configuration's. Args of out-of-tree plugins, and Kubernetes objects inside args (a default spread
constraint, an added node affinity), are shown as written (the API's own JSON names).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from kubesched.config.types import API_VERSION, EXTENSION_POINTS, KubeSchedulerConfiguration, PluginSet, Profile

#: Go's spelling of names whose v1 (or snake_case) spelling does not just capitalise.
_GO_NAMES = {
    "qps": "QPS",
    "url_prefix": "URLPrefix",
    "urlPrefix": "URLPrefix",
    "enableHTTPS": "EnableHTTPS",
    "tlsConfig": "TLSConfig",
    "httpTimeout": "HTTPTimeout",
    "caFile": "CAFile",
    "caData": "CAData",
}
#: Never served: a private key an extender's TLS configuration may hold.
_SECRET = "keyData"


def componentconfig(config: KubeSchedulerConfiguration) -> dict[str, Any]:
    """The body of /configz for ``config``."""
    le = config.leader_election
    return {
        "componentconfig": {
            "apiVersion": API_VERSION,
            "Parallelism": config.parallelism,
            "LeaderElection": {
                "LeaderElect": le.leader_elect,
                "LeaseDuration": go_duration(le.lease_duration),
                "RenewDeadline": go_duration(le.renew_deadline),
                "RetryPeriod": go_duration(le.retry_period),
                "ResourceLock": le.resource_lock,
                "ResourceName": le.resource_name,
                "ResourceNamespace": le.resource_namespace,
            },
            "ClientConnection": _go_keys(config.client_connection),
            "EnableProfiling": config.enable_profiling,
            "EnableContentionProfiling": config.enable_contention_profiling,
            "PercentageOfNodesToScore": config.percentage_of_nodes_to_score,
            "PodInitialBackoffSeconds": config.pod_initial_backoff_seconds,
            "PodMaxBackoffSeconds": config.pod_max_backoff_seconds,
            "Profiles": [_profile(p) for p in config.profiles],
            "Extenders": [_go_keys(e) for e in config.extenders] or None,
            "DelayCacheUntilActive": config.delay_cache_until_active,
        }
    }


def _profile(profile: Profile) -> dict[str, Any]:
    return {
        "SchedulerName": profile.scheduler_name,
        "PercentageOfNodesToScore": profile.percentage_of_nodes_to_score,
        "Plugins": {_go_name(point): _plugin_set(getattr(profile.plugins, attr)) for point, attr in EXTENSION_POINTS},
        "PluginConfig": [{"Name": name, "Args": _value(args)} for name, args in sorted(profile.plugin_config.items())],
    }


def _plugin_set(plugins: PluginSet) -> dict[str, Any]:
    return {
        "Enabled": [{"Name": p.name, "Weight": p.weight} for p in plugins.enabled] or None,
        "Disabled": [{"Name": name, "Weight": 0} for name in plugins.disabled] or None,
    }


def _value(value: Any) -> Any:
    """Typed args (dataclasses) with Go's field names; raw mappings and objects as written."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {_go_name(f.name): _value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, timedelta):
        return go_duration(value)
    if isinstance(value, Mapping):
        return {str(k): _value(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_value(v) for v in value] or None
    return value


def _go_keys(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """A v1 mapping (camelCase keys) with Go's field names, nested mappings too; a private key withheld."""
    out: dict[str, Any] = {}
    for key, value in mapping.items():
        if key == _SECRET:
            value = "<redacted>" if value else value
        elif isinstance(value, Mapping):
            value = _go_keys(value)
        elif isinstance(value, list):
            value = [_go_keys(v) if isinstance(v, Mapping) else v for v in value]
        out[_go_name(key)] = value
    return out


def _go_name(name: str) -> str:
    known = _GO_NAMES.get(name)
    if known is not None:
        return known
    if "_" in name:
        return "".join(word[:1].upper() + word[1:] for word in name.split("_"))
    return name[:1].upper() + name[1:]


def go_duration(value: timedelta) -> str:
    """A duration as Go's time.Duration.String() writes it: ``0s``, ``500ms``, ``15s``, ``1m30s``, ``1h0m0s``."""
    nanos = round(value.total_seconds() * 1e9)
    if nanos == 0:
        return "0s"
    sign, nanos = ("-", -nanos) if nanos < 0 else ("", nanos)
    if nanos < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if nanos >= size:
                return f"{sign}{_decimal(nanos, size)}{unit}"
    hours, rest = divmod(nanos, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    seconds = _decimal(rest, 1_000_000_000) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{seconds}"
    if minutes:
        return f"{sign}{minutes}m{seconds}"
    return sign + seconds


def _decimal(amount: int, unit: int) -> str:
    whole, fraction = divmod(amount, unit)
    if not fraction:
        return str(whole)
    digits = str(fraction).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"
