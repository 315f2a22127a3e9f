"""The KubeSchedulerConfiguration model (kubescheduler.config.k8s.io/v1).

These are the *defaulted* values: after loading, every optional field holds
what kube-scheduler would use, so consumers never re-implement defaulting.
Profiles and their plugin sets are modelled in :mod:`kubesched.config.profiles`
(re-exported here), below the defaults that this module builds on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from kubesched.config.defaults import default_profile
from kubesched.config.features import FeatureGates, feature_gates
from kubesched.config.profiles import (
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)

__all__ = [
    "API_VERSION",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "KIND",
    "KubeSchedulerConfiguration",
    "LeaderElectionConfig",
    "PluginRef",
    "PluginSet",
    "Plugins",
    "Profile",
    "default_client_connection",
]

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig:
    """Leader election of scheduler replicas (component-base defaults)."""

    leader_elect: bool = True
    lease_duration: timedelta = timedelta(seconds=15)
    renew_deadline: timedelta = timedelta(seconds=10)
    retry_period: timedelta = timedelta(seconds=2)
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


def default_client_connection() -> dict[str, Any]:
    """The scheduler's own client defaults (it asks for more QPS than most)."""
    return {
        "kubeconfig": "",
        "acceptContentTypes": "",
        "contentType": "application/vnd.kubernetes.protobuf",
        "qps": 50.0,
        "burst": 100,
    }


def _default_profiles() -> tuple[Profile, ...]:
    return (default_profile(),)


@dataclass(frozen=True, slots=True)
class KubeSchedulerConfiguration:
    """A fully defaulted scheduler configuration.

    ``percentage_of_nodes_to_score``: how many feasible nodes to find before
    scoring, as a percentage of all nodes.  0 (the kube-scheduler default,
    also what None is treated as) means adaptive: 50% minus 1% per 125 nodes,
    never below 5%; 100 means score every node.  Clusters under 100 nodes are
    always fully scored.
    """

    parallelism: int = 16
    percentage_of_nodes_to_score: int | None = 0
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    profiles: tuple[Profile, ...] = field(default_factory=_default_profiles)
    extenders: tuple[dict[str, Any], ...] = ()
    leader_election: LeaderElectionConfig = field(default_factory=LeaderElectionConfig)
    client_connection: dict[str, Any] = field(default_factory=default_client_connection)
    delay_cache_until_active: bool = False
    enable_profiling: bool = True
    enable_contention_profiling: bool = True
    #: The emulated kube-scheduler version and feature gates the defaults above were taken for, and that
    #: the scheduler runs with (as kube-scheduler's --emulated-version and --feature-gates, which live
    #: beside its configuration file rather than in it).
    features: FeatureGates = field(default_factory=feature_gates)

    def profile(self, scheduler_name: str) -> Profile | None:
        """The profile serving ``scheduler_name``, if any."""
        return next((p for p in self.profiles if p.scheduler_name == scheduler_name), None)
