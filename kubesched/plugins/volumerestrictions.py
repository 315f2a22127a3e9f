"""VolumeRestrictions: volumes that cannot be shared the way a pod wants to share them (v1.30).

Two rules. In-tree disks (GCE PD, AWS EBS, RBD, iSCSI) already mounted on a node conflict with the
pod's own mount of the same disk unless both are read-only (EBS never shares). A claim with the
ReadWriteOncePod access mode may be used by one pod in the whole cluster: if any scheduled pod uses
it, no node fits (the reason's wording changed in v1.34).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.api.storage import READ_WRITE_ONCE_POD
from kubesched.cache.node_info import NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import (
    ActionType,
    BatchFilterResult,
    ClusterEvent,
    ClusterEventWithHint,
    PreFilterExtensions,
    PreFilterResult,
    QueueingHint,
    queueing_hints_enabled,
)
from kubesched.framework.status import Code, Status, unresolvable, unschedulable
from kubesched.plugins import names
from kubesched.plugins.helper import SKIP_STATUS, features_of
from kubesched.queue import events as qevents
from kubesched.queue.hints import object_meta

if TYPE_CHECKING:
    from kubesched.cache.snapshot import Snapshot

NAME = names.VOLUME_RESTRICTIONS
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)
#: The ReadWriteOncePod reason from v1.34 on.
ERR_REASON_RWOP_IN_USE = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)

_RESTRICTED_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


class _State:
    """The pod's ReadWriteOncePod claims and how many scheduled pods use them."""

    __slots__ = ("conflicting_refs", "rwop_claims")

    def __init__(self, rwop_claims: frozenset[str], conflicting_refs: int) -> None:
        self.rwop_claims = rwop_claims
        self.conflicting_refs = conflicting_refs

    def clone(self) -> _State:
        return _State(self.rwop_claims, self.conflicting_refs)

    def update_with_pod(self, pod: Pod, sign: int) -> None:
        for vol in pod.volumes:
            claim = vol.get("persistentVolumeClaim")
            if claim is not None and claim.get("claimName") in self.rwop_claims:
                self.conflicting_refs += sign


def needs_restrictions_check(volume: Mapping[str, Any]) -> bool:
    return any(volume.get(key) is not None for key in _RESTRICTED_SOURCES)


def is_volume_conflict(volume: Mapping[str, Any], other: Pod) -> bool:
    """Whether ``volume`` conflicts with a volume of ``other`` (isVolumeConflict)."""
    for existing in other.volumes:
        disk, other_disk = volume.get("gcePersistentDisk"), existing.get("gcePersistentDisk")
        if (
            disk is not None
            and other_disk is not None
            and disk.get("pdName") == other_disk.get("pdName")
            and not (disk.get("readOnly") and other_disk.get("readOnly"))
        ):
            return True
        ebs, other_ebs = volume.get("awsElasticBlockStore"), existing.get("awsElasticBlockStore")
        if ebs is not None and other_ebs is not None and ebs.get("volumeID") == other_ebs.get("volumeID"):
            return True
        iscsi, other_iscsi = volume.get("iscsi"), existing.get("iscsi")
        if (
            iscsi is not None
            and other_iscsi is not None
            and iscsi.get("iqn") == other_iscsi.get("iqn")
            and not (iscsi.get("readOnly") and other_iscsi.get("readOnly"))
        ):
            return True
        rbd, other_rbd = volume.get("rbd"), existing.get("rbd")
        if (
            rbd is not None
            and other_rbd is not None
            and set(rbd.get("monitors") or ()) & set(other_rbd.get("monitors") or ())
            and rbd.get("pool", "rbd") == other_rbd.get("pool", "rbd")
            and rbd.get("image") == other_rbd.get("image")
            and not (rbd.get("readOnly") and other_rbd.get("readOnly"))
        ):
            return True
    return False


def satisfies_volume_conflicts(pod: Pod, node_info: NodeInfo) -> bool:
    for volume in pod.volumes:
        if not needs_restrictions_check(volume):
            continue
        if any(is_volume_conflict(volume, other) for other in node_info.pods):
            return False
    return True


class VolumeRestrictions:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.rwop_reason = ERR_REASON_RWOP_IN_USE if features_of(handle).at_least("1.34") else ERR_REASON_RWOP_CONFLICT

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.volumes:  # nothing to check and no claim to count: what the checks below end in
            return None, SKIP_STATUS
        needs_check = any(needs_restrictions_check(v) for v in pod.volumes)
        listers = self.handle.listers
        rwop: set[str] = set()
        for vol in pod.volumes:
            claim_ref = vol.get("persistentVolumeClaim")
            if claim_ref is None:
                continue
            claim_name = str(claim_ref.get("claimName") or "")
            claim = listers.pvc(pod.namespace, claim_name)
            if claim is None:
                return None, unresolvable(f'persistentvolumeclaim "{claim_name}" not found')
            if READ_WRITE_ONCE_POD in claim.access_modes:
                rwop.add(claim.name)
        used = self.handle.snapshot.used_pvcs
        conflicts = sum(1 for name in rwop if f"{pod.namespace}/{name}" in used)
        if not needs_check and conflicts == 0:
            return None, SKIP_STATUS
        state.write(PRE_FILTER_STATE_KEY, _State(frozenset(rwop), conflicts))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status | None:
        state.read(PRE_FILTER_STATE_KEY).update_with_pod(pod_to_add, 1)
        return None

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status | None:
        state.read(PRE_FILTER_STATE_KEY).update_with_pod(pod_to_remove, -1)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not satisfies_volume_conflicts(pod, node_info):
            return unschedulable(ERR_REASON_DISK_CONFLICT)
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status(Code.ERROR, (f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState',))
        if s.conflicting_refs > 0:
            return unschedulable(self.rwop_reason)
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, indices: np.ndarray) -> BatchFilterResult:
        """The claim rule is the same for every node; disks are checked only on nodes with pods."""
        rows = np.asarray(indices)
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return BatchFilterResult.all_fail(
                len(rows), Status(Code.ERROR, (f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState',))
            )
        passed = np.ones(len(rows), dtype=bool)
        if any(needs_restrictions_check(v) for v in pod.volumes):
            infos = snapshot.node_infos
            for k, row in enumerate(rows.tolist()):
                info = infos[row]
                if info.pods and not satisfies_volume_conflicts(pod, info):
                    passed[k] = False
        index = np.where(passed, -1, 0).astype(np.int32)
        statuses = [unschedulable(ERR_REASON_DISK_CONFLICT)]
        if s.conflicting_refs > 0:
            index[passed] = 1
            statuses.append(unschedulable(self.rwop_reason))
        return BatchFilterResult(index, statuses)

    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]:
        if not queueing_hints_enabled(self.handle):
            return (
                ClusterEvent(qevents.POD, ActionType.DELETE),
                ClusterEvent(qevents.NODE, ActionType.ADD),
                ClusterEvent(qevents.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE),
            )
        return (
            ClusterEventWithHint(ClusterEvent(qevents.POD, ActionType.DELETE), self.is_schedulable_after_pod_deleted),
            ClusterEvent(qevents.NODE, ActionType.ADD),
            ClusterEventWithHint(
                ClusterEvent(qevents.PERSISTENT_VOLUME_CLAIM, ActionType.ADD), self.is_schedulable_after_pvc_added
            ),
        )

    @staticmethod
    def is_schedulable_after_pod_deleted(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """A pod of the same namespace whose disks conflicted with the pod's, or that used one of its
        claims (it may have held a ReadWriteOncePod claim)."""
        deleted: Pod = old_obj
        if deleted.namespace != pod.namespace:
            return QueueingHint.QUEUE_SKIP
        if any(needs_restrictions_check(v) and is_volume_conflict(v, deleted) for v in pod.volumes):
            return QueueingHint.QUEUE
        claims = _claim_names(pod)
        if claims and not claims.isdisjoint(_claim_names(deleted)):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_pvc_added(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """A claim of the pod was created (its access modes can now be checked)."""
        namespace, name = object_meta(new_obj)
        if namespace == pod.namespace and name in _claim_names(pod):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def _claim_names(pod: Pod) -> frozenset[str]:
    """The claim names of the pod's persistentVolumeClaim volumes."""
    return frozenset(
        str(claim.get("claimName") or "") for v in pod.volumes if (claim := v.get("persistentVolumeClaim")) is not None
    )


def new(args: Any, handle: Handle) -> VolumeRestrictions:
    return VolumeRestrictions(handle)
