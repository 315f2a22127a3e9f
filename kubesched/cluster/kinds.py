"""The object kinds the cluster knows, with what the API server knows about each.

Scope matters everywhere (keys, defaulting, error texts), so it is written down once here rather than
guessed by each caller. Error texts name the plural resource (``pods "web-1" not found``) as the API
server does, hence ``resource``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kubesched.cluster.protocol import Invalid


@dataclass(frozen=True, slots=True)
class KindInfo:
    """What the API server knows about one kind: its group/versions, plural name and scope."""

    kind: str
    resource: str
    namespaced: bool
    api_versions: tuple[str, ...]

    @property
    def preferred_api_version(self) -> str:
        return self.api_versions[0]

    @property
    def group(self) -> str:
        """The API group ("" for the core group)."""
        return self.preferred_api_version.rpartition("/")[0]

    @property
    def qualified_resource(self) -> str:
        """The resource as the API server names it in errors: ``resourceclaims.resource.k8s.io``, and
        the bare plural for the core group (``pods``)."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    @property
    def qualified_kind(self) -> str:
        """The kind as the API server names it in validation errors: ``ResourceClaim.resource.k8s.io``."""
        return f"{self.kind}.{self.group}" if self.group else self.kind


def _k(kind: str, resource: str, namespaced: bool, *api_versions: str) -> tuple[str, KindInfo]:
    return kind, KindInfo(kind, resource, namespaced, api_versions)


KNOWN_KINDS: Mapping[str, KindInfo] = MappingProxyType(
    dict(
        [
            # cluster-scoped
            _k("Node", "nodes", False, "v1"),
            _k("Namespace", "namespaces", False, "v1"),
            _k("PersistentVolume", "persistentvolumes", False, "v1"),
            _k("PriorityClass", "priorityclasses", False, "scheduling.k8s.io/v1"),
            _k("StorageClass", "storageclasses", False, "storage.k8s.io/v1"),
            _k("CSINode", "csinodes", False, "storage.k8s.io/v1"),
            _k("CSIDriver", "csidrivers", False, "storage.k8s.io/v1"),
            _k("VolumeAttachment", "volumeattachments", False, "storage.k8s.io/v1"),
            _k("DeviceClass", "deviceclasses", False, "resource.k8s.io/v1"),
            _k("ResourceSlice", "resourceslices", False, "resource.k8s.io/v1"),
            # namespaced
            _k("Pod", "pods", True, "v1"),
            _k("PersistentVolumeClaim", "persistentvolumeclaims", True, "v1"),
            _k("Service", "services", True, "v1"),
            _k("ReplicationController", "replicationcontrollers", True, "v1"),
            _k("ConfigMap", "configmaps", True, "v1"),
            _k("Secret", "secrets", True, "v1"),
            _k("Event", "events", True, "v1", "events.k8s.io/v1"),
            _k("ReplicaSet", "replicasets", True, "apps/v1"),
            _k("StatefulSet", "statefulsets", True, "apps/v1"),
            _k("Deployment", "deployments", True, "apps/v1"),
            _k("DaemonSet", "daemonsets", True, "apps/v1"),
            _k("Job", "jobs", True, "batch/v1"),
            _k("PodDisruptionBudget", "poddisruptionbudgets", True, "policy/v1"),
            _k("CSIStorageCapacity", "csistoragecapacities", True, "storage.k8s.io/v1"),
            _k("Lease", "leases", True, "coordination.k8s.io/v1"),
            _k("ResourceClaim", "resourceclaims", True, "resource.k8s.io/v1"),
            _k("ResourceClaimTemplate", "resourceclaimtemplates", True, "resource.k8s.io/v1"),
            # scheduler-plugins' custom resource (Coscheduling)
            _k("PodGroup", "podgroups", True, "scheduling.x-k8s.io/v1alpha1"),
        ]
    )
)


def kind_info(kind: str) -> KindInfo:
    """The KindInfo for ``kind``; an ``Invalid`` error naming the kind when the cluster does not know it."""
    info = KNOWN_KINDS.get(kind)
    if info is None:
        raise Invalid(f"unknown kind {kind!r}: the cluster knows {', '.join(sorted(KNOWN_KINDS))}")
    return info
