"""EBSLimits, GCEPDLimits, AzureDiskLimits: in-tree cloud disks per node (deprecated, still in v1.30).

Each counts the unique disks of its kind (inline, through a bound PV, or an unbound claim whose class
uses the in-tree provisioner) against the node's limit: the ``attachable-volumes-<kind>`` allocatable
when the node reports one, else the cloud's default (EBS 39, or 25 on Nitro instance types; GCE PD
16; Azure Disk 16; ``KUBE_MAX_PD_VOLS`` overrides). A node with a CSINode object has migrated these
kinds to CSI, and NodeVolumeLimits counts them there instead.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.api.storage import PersistentVolume, StorageClass
from kubesched.cache.node_info import NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import (
    ActionType,
    BatchFilterResult,
    ClusterEvent,
    PreFilterExtensions,
    PreFilterResult,
)
from kubesched.framework.status import Status, unresolvable, unschedulable
from kubesched.plugins import names
from kubesched.plugins.helper import SKIP_STATUS
from kubesched.plugins.nodevolumelimits import translation
from kubesched.plugins.nodevolumelimits.csi import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, volume_limits
from kubesched.queue import events as qevents

if TYPE_CHECKING:
    from kubesched.cache.snapshot import Snapshot

KUBE_MAX_PD_VOLS = "KUBE_MAX_PD_VOLS"
DEFAULT_MAX_EBS_VOLUMES = 39
DEFAULT_MAX_EBS_NITRO_VOLUMES = 25
DEFAULT_MAX_GCE_PD_VOLUMES = 16
DEFAULT_MAX_AZURE_DISK_VOLUMES = 16
EBS_NITRO_LIMIT_REGEX = re.compile(r"^[cmr]5.*|t3|z1d")
LABEL_INSTANCE_TYPE = "beta.kubernetes.io/instance-type"
LABEL_INSTANCE_TYPE_STABLE = "node.kubernetes.io/instance-type"


@dataclass(frozen=True, slots=True)
class VolumeFilter:
    """One disk kind: where its id sits, its in-tree provisioner and limit resource, its default."""

    plugin_name: str
    source: str
    id_field: str
    provisioner: str
    limit_key: str
    default_max: Callable[[Node], int]

    def volume_id(self, volume: Mapping[str, Any]) -> str | None:
        body = volume.get(self.source)
        return None if body is None else str(body.get(self.id_field) or "")

    def pv_id(self, pv: PersistentVolume) -> str | None:
        return str(pv.source_spec.get(self.id_field) or "") if pv.source == self.source else None

    def matches_provisioner(self, sc: StorageClass) -> bool:
        return sc.provisioner == self.provisioner


def _ebs_default(node: Node) -> int:
    instance = node.labels.get(LABEL_INSTANCE_TYPE) or node.labels.get(LABEL_INSTANCE_TYPE_STABLE) or ""
    return DEFAULT_MAX_EBS_NITRO_VOLUMES if EBS_NITRO_LIMIT_REGEX.match(instance) else DEFAULT_MAX_EBS_VOLUMES


FILTERS = {
    names.EBS_LIMITS: VolumeFilter(
        names.EBS_LIMITS,
        "awsElasticBlockStore",
        "volumeID",
        translation.AWS_EBS,
        "attachable-volumes-aws-ebs",
        _ebs_default,
    ),
    names.GCE_PD_LIMITS: VolumeFilter(
        names.GCE_PD_LIMITS,
        "gcePersistentDisk",
        "pdName",
        translation.GCE_PD,
        "attachable-volumes-gce-pd",
        lambda node: DEFAULT_MAX_GCE_PD_VOLUMES,
    ),
    names.AZURE_DISK_LIMITS: VolumeFilter(
        names.AZURE_DISK_LIMITS,
        "azureDisk",
        "diskName",
        translation.AZURE_DISK,
        "attachable-volumes-azure-disk",
        lambda node: DEFAULT_MAX_AZURE_DISK_VOLUMES,
    ),
}


def _max_from_env() -> int:
    raw = os.environ.get(KUBE_MAX_PD_VOLS, "")
    try:
        value = int(raw)
    except ValueError:
        return -1
    return value if value > 0 else -1


class _Missing(Exception):
    pass


class NonCSILimits:
    def __init__(self, volume_filter: VolumeFilter, handle: Handle) -> None:
        self.name = volume_filter.plugin_name
        self.vf = volume_filter
        self.handle = handle
        self.random_volume_id_prefix = secrets.token_hex(16)
        self._key: tuple[Any, int, int] | None = None
        self._gen = np.zeros(0, dtype=np.int64)
        self._disks: list[set[str]] = []
        self._counts = np.zeros(0, dtype=np.int64)
        self._limits = np.zeros(0, dtype=np.int64)
        self._migrated = np.zeros(0, dtype=bool)
        self._where: dict[str, dict[int, int]] = {}

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        for vol in pod.volumes:
            if (
                self.vf.volume_id(vol) is not None
                or vol.get("persistentVolumeClaim") is not None
                or vol.get("ephemeral") is not None
            ):
                return None, None
        return None, SKIP_STATUS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def _volumes(self, pod: Pod, *, new_pod: bool) -> set[str]:
        listers = self.handle.listers
        out: set[str] = set()
        for vol in pod.volumes:
            disk = self.vf.volume_id(vol)
            if disk is not None:
                out.add(disk)
                continue
            if vol.get("persistentVolumeClaim") is not None:
                claim_name = str(vol["persistentVolumeClaim"].get("claimName") or "")
            elif vol.get("ephemeral") is not None:
                claim_name = f"{pod.name}-{vol.get('name')}"
            else:
                continue
            if not claim_name:
                raise ValueError("PersistentVolumeClaim had no name")
            pv_id = f"{self.random_volume_id_prefix}-{pod.namespace}/{claim_name}"
            claim = listers.pvc(pod.namespace, claim_name)
            if claim is None:
                if new_pod:
                    raise _Missing(
                        f'looking up PVC {pod.namespace}/{claim_name}: persistentvolumeclaim "{claim_name}" not found'
                    )
                continue
            pv = listers.pv(claim.volume_name) if claim.volume_name else None
            if pv is None:
                if claim.storage_class_name is not None:
                    sc = listers.storage_class(claim.storage_class_name)
                    if sc is not None and self.vf.matches_provisioner(sc):
                        out.add(pv_id)
                continue
            disk = self.vf.pv_id(pv)
            if disk is not None:
                out.add(disk)
        return out

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        try:
            new = self._volumes(pod, new_pod=True)
        except _Missing as err:
            return unresolvable(str(err))
        except ValueError as err:
            return Status.from_error(err)
        if not new:
            return None
        node = node_info.node
        assert node is not None
        csi_node = self.handle.listers.csi_node(node.name)
        if translation.migration_on(csi_node, self.vf.provisioner):
            return None
        existing: set[str] = set()
        for other in node_info.pods:
            if other.volumes:
                existing |= self._volumes(other, new_pod=False)
        limit = _max_from_env()
        if limit <= 0:
            limit = self.vf.default_max(node)
        from_allocatable = volume_limits(node_info, None).get(self.vf.limit_key)
        if from_allocatable is not None:
            limit = from_allocatable
        if len(existing) + len(new - existing) > limit:
            return unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, indices: np.ndarray) -> BatchFilterResult:
        """The same verdicts with disks counted per node once and refreshed only where pods changed."""
        rows = np.asarray(indices)
        if not pod.volumes:
            return BatchFilterResult.all_pass(len(rows))
        try:
            new = self._volumes(pod, new_pod=True)
        except _Missing as err:
            return BatchFilterResult.all_fail(len(rows), unresolvable(str(err)))
        except ValueError as err:
            return BatchFilterResult.all_fail(len(rows), Status.from_error(err))
        if not new:
            return BatchFilterResult.all_pass(len(rows))
        self._refresh(snapshot)
        need = np.full(len(rows), len(new), dtype=np.int64)
        row_list = rows.tolist()
        for disk in new:
            where = self._where.get(disk)
            if where:
                need -= np.fromiter((r in where for r in row_list), dtype=bool, count=len(rows))
        current = self._counts[rows]
        limits = self._limits[rows]
        passed = self._migrated[rows] | (current + need <= limits)
        return BatchFilterResult.from_mask(passed, unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED))

    def _refresh(self, snapshot: Snapshot) -> None:
        listers = self.handle.listers
        infos = snapshot.node_infos
        key = (snapshot.names, listers.storage_version, snapshot.node_objects_version)
        if self._key is None or self._key[0] is not key[0] or self._key[1:] != key[1:]:
            self._key = key
            n = len(infos)
            self._gen = np.full(n, -1, dtype=np.int64)
            self._disks = [set() for _ in infos]
            self._counts = np.zeros(n, dtype=np.int64)
            self._where = {}
            env = _max_from_env()
            self._limits = np.zeros(n, dtype=np.int64)
            self._migrated = np.zeros(n, dtype=bool)
            for row, info in enumerate(infos):
                node = info.node
                assert node is not None
                limit = env if env > 0 else self.vf.default_max(node)
                from_allocatable = volume_limits(info, None).get(self.vf.limit_key)
                self._limits[row] = from_allocatable if from_allocatable is not None else limit
                self._migrated[row] = translation.migration_on(listers.csi_node(info.name), self.vf.provisioner)
        seen = self._gen
        for row in np.flatnonzero(snapshot.row_generation != seen).tolist():
            seen[row] = snapshot.row_generation[row]
            info = infos[row]
            disks: set[str] = set()
            for other in info.pods:
                if other.volumes:
                    disks |= self._volumes(other, new_pod=False)
            old = self._disks[row]
            if disks == old:
                continue
            for disk in old - disks:
                self._where[disk].pop(row, None)
            for disk in disks - old:
                self._where.setdefault(disk, {})[row] = 1
            self._disks[row] = disks
            self._counts[row] = len(disks)

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (
            ClusterEvent(qevents.NODE, ActionType.ADD),
            ClusterEvent(qevents.POD, ActionType.DELETE),
            ClusterEvent(qevents.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
        )


def new_ebs(args: Any, handle: Handle) -> NonCSILimits:
    return NonCSILimits(FILTERS[names.EBS_LIMITS], handle)


def new_gce_pd(args: Any, handle: Handle) -> NonCSILimits:
    return NonCSILimits(FILTERS[names.GCE_PD_LIMITS], handle)


def new_azure_disk(args: Any, handle: Handle) -> NonCSILimits:
    return NonCSILimits(FILTERS[names.AZURE_DISK_LIMITS], handle)
