"""Typed, read-only views of the storage objects the volume plugins read.

PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver and VolumeAttachment, parsed once from the
plain dicts the cluster stores. Each keeps ``raw`` (the dict it came from) because the binder writes
objects back through the cluster (a PV's claimRef, a claim's selected-node annotation), and those
writes start from the stored object.

The helpers at the bottom are component-helpers/storage/volume's: which class a claim asks for,
whether a PV is bound to a claim, node affinity of a PV, access modes and volume modes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.errors import ObjectError
from kubesched.api.labels import LabelSelector, NodeSelector
from kubesched.api.objects import ObjectMeta, _list, _map, _parse
from kubesched.api.quantity import int_value

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_DYNAMICALLY_PROVISIONED = "pv.kubernetes.io/provisioned-by"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"

READ_WRITE_ONCE = "ReadWriteOnce"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
FILESYSTEM = "Filesystem"

VOLUME_AVAILABLE = "Available"
VOLUME_BOUND = "Bound"
VOLUME_RELEASED = "Released"
CLAIM_PENDING = "Pending"
CLAIM_BOUND = "Bound"
CLAIM_LOST = "Lost"

BINDING_IMMEDIATE = "Immediate"
BINDING_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

#: In-tree volume sources of a PV (or an inline pod volume) and the plugin names csi-translation uses.
IN_TREE_SOURCES: Mapping[str, str] = {
    "awsElasticBlockStore": "kubernetes.io/aws-ebs",
    "gcePersistentDisk": "kubernetes.io/gce-pd",
    "azureDisk": "kubernetes.io/azure-disk",
    "cinder": "kubernetes.io/cinder",
    "azureFile": "kubernetes.io/azure-file",
    "vsphereVolume": "kubernetes.io/vsphere-volume",
    "portworxVolume": "kubernetes.io/portworx-volume",
    "rbd": "kubernetes.io/rbd",
}


def _storage(resources: Mapping[str, Any], path: str) -> int:
    value = resources.get("storage")
    if value is None:
        return 0
    try:
        return int_value(value)
    except (ObjectError, ValueError) as err:
        raise ObjectError(path, f"invalid quantity {value!r}: {err}") from None


def _strings(raw: Any, path: str) -> tuple[str, ...]:
    return tuple(str(v) for v in _list(raw, path))


@dataclass(frozen=True, slots=True)
class ObjectReference:
    namespace: str
    name: str
    uid: str

    @classmethod
    def from_dict(cls, raw: Any) -> ObjectReference | None:
        if raw is None:
            return None
        ref = _map(raw, "")
        return cls(str(ref.get("namespace") or ""), str(ref.get("name") or ""), str(ref.get("uid") or ""))


@dataclass(frozen=True, slots=True, eq=False)
class PersistentVolume:
    raw: Mapping[str, Any]
    meta: ObjectMeta
    capacity: int
    access_modes: tuple[str, ...]
    volume_mode: str
    storage_class_name: str
    claim_ref: ObjectReference | None
    #: ``spec.nodeAffinity.required`` (None: the volume is reachable from every node).
    node_affinity: NodeSelector | None
    phase: str
    #: The volume source key (``csi``, ``local``, ``gcePersistentDisk``, ...) and its body.
    source: str
    source_spec: Mapping[str, Any]
    #: ``spec.volumeAttributesClassName`` ("" when unset).
    volume_attributes_class: str = ""

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def labels(self) -> Mapping[str, str]:
        return self.meta.labels

    @property
    def storage_class(self) -> str:
        """GetPersistentVolumeClass: the beta annotation wins over the field."""
        return self.meta.annotations.get(ANN_BETA_STORAGE_CLASS, self.storage_class_name)

    @property
    def csi_driver(self) -> str:
        return str(self.source_spec.get("driver") or "") if self.source == "csi" else ""

    def matches_node(self, labels: Mapping[str, str]) -> bool:
        """CheckNodeAffinity: the PV's required node selector against a node's labels."""
        return self.node_affinity is None or self.node_affinity.matches(labels, "")

    def local_node_names(self) -> list[str]:
        """GetLocalPersistentVolumeNodeNames: hostnames named by ``In`` expressions, per term ANDed,
        terms ORed (a term without such an expression adds none)."""
        if self.node_affinity is None:
            return []
        result: set[str] = set()
        for term in self.node_affinity.terms:
            nodes: set[str] | None = None
            for req in term.match_expressions:
                if req.key == "kubernetes.io/hostname" and req.operator == "In":
                    values = set(req.values)
                    nodes = values if nodes is None else nodes & values
            result |= nodes or set()
        return sorted(result)

    def is_bound_to(self, claim: PersistentVolumeClaim) -> bool:
        """IsVolumeBoundToClaim."""
        ref = self.claim_ref
        if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
            return False
        return not ref.uid or ref.uid == claim.meta.uid

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> PersistentVolume:
        meta = ObjectMeta.from_dict(raw.get("metadata"), namespaced=False)
        spec = _map(raw.get("spec"), "spec")
        affinity = _map(spec.get("nodeAffinity"), "spec.nodeAffinity")
        required = affinity.get("required")
        node_affinity = (
            _parse(NodeSelector.from_dict, required, "spec.nodeAffinity.required") if required is not None else None
        )
        source: str = ""
        body: Mapping[str, Any] = {}
        for key in ("csi", "local", "hostPath", "nfs", *IN_TREE_SOURCES):
            if spec.get(key) is not None:
                source, body = key, _map(spec.get(key), f"spec.{key}")
                break
        return cls(
            raw=raw,
            meta=meta,
            capacity=_storage(_map(spec.get("capacity"), "spec.capacity"), "spec.capacity.storage"),
            access_modes=_strings(spec.get("accessModes"), "spec.accessModes"),
            volume_mode=str(spec.get("volumeMode") or FILESYSTEM),
            storage_class_name=str(spec.get("storageClassName") or ""),
            claim_ref=_parse(ObjectReference.from_dict, spec.get("claimRef"), "spec.claimRef"),
            node_affinity=node_affinity,
            phase=str(_map(raw.get("status"), "status").get("phase") or ""),
            source=source,
            source_spec=body,
            volume_attributes_class=str(spec.get("volumeAttributesClassName") or ""),
        )


@dataclass(frozen=True, slots=True, eq=False)
class PersistentVolumeClaim:
    raw: Mapping[str, Any]
    meta: ObjectMeta
    access_modes: tuple[str, ...]
    volume_mode: str
    request: int
    #: None when the field is absent (only then does the beta annotation or a default class apply).
    storage_class_name: str | None
    volume_name: str
    selector: LabelSelector | None
    phase: str
    #: ``spec.volumeAttributesClassName`` ("" when unset).
    volume_attributes_class: str = ""

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def namespace(self) -> str:
        return self.meta.namespace

    @property
    def key(self) -> str:
        return self.meta.key

    @property
    def annotations(self) -> Mapping[str, str]:
        return self.meta.annotations

    @property
    def storage_class(self) -> str:
        """GetPersistentVolumeClaimClass: the beta annotation, else the field, else ""."""
        if ANN_BETA_STORAGE_CLASS in self.meta.annotations:
            return self.meta.annotations[ANN_BETA_STORAGE_CLASS]
        return self.storage_class_name or ""

    @property
    def fully_bound(self) -> bool:
        """A volume name and the bind-completed annotation, as the binder checks."""
        return bool(self.volume_name) and ANN_BIND_COMPLETED in self.meta.annotations

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> PersistentVolumeClaim:
        meta = ObjectMeta.from_dict(raw.get("metadata"), namespaced=True)
        spec = _map(raw.get("spec"), "spec")
        resources = _map(spec.get("resources"), "spec.resources")
        requests = _map(resources.get("requests"), "spec.resources.requests")
        class_name = spec.get("storageClassName")
        return cls(
            raw=raw,
            meta=meta,
            access_modes=_strings(spec.get("accessModes"), "spec.accessModes"),
            volume_mode=str(spec.get("volumeMode") or FILESYSTEM),
            request=_storage(requests, "spec.resources.requests.storage"),
            storage_class_name=None if class_name is None else str(class_name),
            volume_name=str(spec.get("volumeName") or ""),
            selector=_parse(LabelSelector.from_dict, spec.get("selector"), "spec.selector"),
            phase=str(_map(raw.get("status"), "status").get("phase") or ""),
            volume_attributes_class=str(spec.get("volumeAttributesClassName") or ""),
        )


@dataclass(frozen=True, slots=True, eq=False)
class StorageClass:
    raw: Mapping[str, Any]
    name: str
    provisioner: str
    #: None only when the object was never defaulted (the binder reports that as an error).
    volume_binding_mode: str | None
    allowed_topologies: tuple[Mapping[str, Any], ...]
    reclaim_policy: str

    @property
    def wait_for_first_consumer(self) -> bool:
        return self.volume_binding_mode == BINDING_WAIT_FOR_FIRST_CONSUMER

    def allows_topology(self, labels: Mapping[str, str]) -> bool:
        """MatchTopologySelectorTerms: no terms allow every node; otherwise any term whose every
        expression has the node's label value among its values."""
        if not self.allowed_topologies:
            return True
        for term in self.allowed_topologies:
            exprs = term.get("matchLabelExpressions") or []
            if all(labels.get(str(e.get("key"))) in set(e.get("values") or []) for e in exprs):
                return True
        return False

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> StorageClass:
        meta = ObjectMeta.from_dict(raw.get("metadata"), namespaced=False)
        mode = raw.get("volumeBindingMode")
        return cls(
            raw=raw,
            name=meta.name,
            provisioner=str(raw.get("provisioner") or ""),
            volume_binding_mode=None if mode is None else str(mode),
            allowed_topologies=tuple(
                _map(t, f"allowedTopologies[{i}]")
                for i, t in enumerate(_list(raw.get("allowedTopologies"), "allowedTopologies"))
            ),
            reclaim_policy=str(raw.get("reclaimPolicy") or "Delete"),
        )


@dataclass(frozen=True, slots=True)
class CSINodeDriver:
    name: str
    node_id: str
    #: ``allocatable.count``: None when the driver reports no limit.
    allocatable_count: int | None


@dataclass(frozen=True, slots=True, eq=False)
class CSINode:
    raw: Mapping[str, Any]
    name: str
    annotations: Mapping[str, str]
    drivers: tuple[CSINodeDriver, ...]

    def driver(self, name: str) -> CSINodeDriver | None:
        return next((d for d in self.drivers if d.name == name), None)

    def migrated_plugins(self) -> frozenset[str]:
        value = self.annotations.get(ANN_MIGRATED_PLUGINS, "")
        return frozenset(v for v in value.split(",") if v)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> CSINode:
        meta = ObjectMeta.from_dict(raw.get("metadata"), namespaced=False)
        spec = _map(raw.get("spec"), "spec")
        drivers = []
        for i, d in enumerate(_list(spec.get("drivers"), "spec.drivers")):
            body = _map(d, f"spec.drivers[{i}]")
            alloc = _map(body.get("allocatable"), f"spec.drivers[{i}].allocatable")
            count = alloc.get("count")
            if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
                raise ObjectError(f"spec.drivers[{i}].allocatable.count", f"expected an integer, got {count!r}")
            drivers.append(CSINodeDriver(str(body.get("name") or ""), str(body.get("nodeID") or ""), count))
        return cls(raw=raw, name=meta.name, annotations=meta.annotations, drivers=tuple(drivers))


@dataclass(frozen=True, slots=True, eq=False)
class CSIDriver:
    raw: Mapping[str, Any]
    name: str
    attach_required: bool
    storage_capacity: bool

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> CSIDriver:
        meta = ObjectMeta.from_dict(raw.get("metadata"), namespaced=False)
        spec = _map(raw.get("spec"), "spec")
        return cls(
            raw=raw,
            name=meta.name,
            attach_required=spec.get("attachRequired", True) is not False,
            storage_capacity=spec.get("storageCapacity") is True,
        )


@dataclass(frozen=True, slots=True, eq=False)
class VolumeAttachment:
    """A volume a CSI driver attached (or is attaching) to a node: v1.34's volume limits count it."""

    raw: Mapping[str, Any]
    name: str
    attacher: str
    node_name: str
    #: ``spec.source.persistentVolumeName`` (None for an inline volume spec).
    persistent_volume_name: str | None

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> VolumeAttachment:
        meta = ObjectMeta.from_dict(raw.get("metadata"), namespaced=False)
        spec = _map(raw.get("spec"), "spec")
        pv_name = _map(spec.get("source"), "spec.source").get("persistentVolumeName")
        return cls(
            raw=raw,
            name=meta.name,
            attacher=str(spec.get("attacher") or ""),
            node_name=str(spec.get("nodeName") or ""),
            persistent_volume_name=None if pv_name is None else str(pv_name),
        )


# -- helpers (component-helpers/storage/volume) ---------------------------------------------------------
def access_modes_satisfied(claim: PersistentVolumeClaim, volume: PersistentVolume) -> bool:
    """CheckAccessModes: every mode the claim asks for is offered by the volume."""
    offered = set(volume.access_modes)
    return all(mode in offered for mode in claim.access_modes)


def volume_mode_mismatch(claim: PersistentVolumeClaim, volume: PersistentVolume) -> bool:
    return claim.volume_mode != volume.volume_mode


def volume_attributes_class_mismatch(claim: PersistentVolumeClaim, volume: PersistentVolume) -> bool:
    """With VolumeAttributesClass on, a claim only takes a volume of the same class ("" for none)."""
    return claim.volume_attributes_class != volume.volume_attributes_class


def find_matching_volume(
    claim: PersistentVolumeClaim,
    volumes: list[PersistentVolume],
    node_labels: Mapping[str, str] | None,
    excluded: set[str] | frozenset[str],
    *,
    match_attributes_class: bool = False,
) -> PersistentVolume | None:
    """FindMatchingVolume (delayed binding): the volume pre-bound to the claim if it fits the node,
    else the smallest Available volume of the claim's class whose size, volume mode, selector, node
    affinity and access modes fit.

    ``match_attributes_class`` is the VolumeAttributesClass gate (on from v1.34): volumes must then
    have the claim's volumeAttributesClassName too. With the gate off the API server drops those
    fields, so they are not looked at.
    """
    smallest: PersistentVolume | None = None
    requested_class = claim.storage_class
    for volume in volumes:
        if volume.name in excluded:
            continue
        bound_here = volume.is_bound_to(claim)
        if volume.claim_ref is not None and not bound_here:
            continue
        if volume.capacity < claim.request or volume_mode_mismatch(claim, volume):
            continue
        if match_attributes_class and volume_attributes_class_mismatch(claim, volume):
            continue
        if volume.meta.deletion_timestamp is not None:
            continue
        affinity_ok = node_labels is None or volume.matches_node(node_labels)
        if bound_here:
            return volume if affinity_ok else None
        if node_labels is None:
            continue
        if volume.phase != VOLUME_AVAILABLE:
            continue
        if claim.selector is not None and not claim.selector.matches(volume.labels):
            continue
        if volume.storage_class != requested_class or not affinity_ok:
            continue
        if not access_modes_satisfied(claim, volume):
            continue
        if smallest is None or smallest.capacity > volume.capacity:
            smallest = volume
    return smallest


def claim_names_of(pod_volumes: tuple[Mapping[str, Any], ...], pod_name: str) -> list[tuple[str, bool]]:
    """(claim name, is generic ephemeral) for each PVC-backed volume of a pod, in order."""
    out = []
    for vol in pod_volumes:
        pvc = vol.get("persistentVolumeClaim")
        if pvc is not None:
            out.append((str(pvc.get("claimName") or ""), False))
        elif vol.get("ephemeral") is not None:
            out.append((f"{pod_name}-{vol.get('name')}", True))
    return out
