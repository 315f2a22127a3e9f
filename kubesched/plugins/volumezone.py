"""VolumeZone: a pod's bound volumes pin it to their zone and region (v1.30).

A PersistentVolume labelled with a zone or region (GA or beta label; a value may list several zones
joined by ``__``) only fits nodes whose matching label (the GA key stands in for a beta one) has one
of those values. Nodes without any zone or region label pass. Unbound claims of WaitForFirstConsumer
classes are VolumeBinding's concern and ignored here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import Pod
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
from kubesched.framework.status import Status, unresolvable
from kubesched.plugins import names
from kubesched.plugins.helper import SKIP_STATUS
from kubesched.queue import events as qevents
from kubesched.queue.hints import object_meta

if TYPE_CHECKING:
    from kubesched.cache.snapshot import Snapshot

NAME = names.VOLUME_ZONE
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"

LABEL_ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
LABEL_REGION_BETA = "failure-domain.beta.kubernetes.io/region"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (LABEL_ZONE_BETA, LABEL_REGION_BETA, LABEL_ZONE, LABEL_REGION)
_GA = {LABEL_ZONE_BETA: LABEL_ZONE, LABEL_REGION_BETA: LABEL_REGION}


@dataclass(frozen=True, slots=True)
class PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """LabelZonesToSet: ``a__b`` -> {a, b}; None when a part is empty (the label is then ignored)."""
    if not value:
        return frozenset()
    parts = [p.strip() for p in value.split("__")]
    if any(not p for p in parts):
        return None
    return frozenset(parts)


class _State:
    __slots__ = ("topologies",)

    def __init__(self, topologies: list[PVTopology]) -> None:
        self.topologies = topologies

    def clone(self) -> _State:
        return self


class VolumeZone:
    name = NAME
    #: Filter reads the node's labels and the pod's volumes, never the pods on the node.
    filter_reads_node_only = True

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def _pv_topologies(self, pod: Pod) -> tuple[list[PVTopology], Status | None]:
        listers = self.handle.listers
        out: list[PVTopology] = []
        for vol in pod.volumes:
            ref = vol.get("persistentVolumeClaim")
            if ref is None:
                continue
            claim_name = str(ref.get("claimName") or "")
            if not claim_name:
                return [], unresolvable("PersistentVolumeClaim had no name")
            claim = listers.pvc(pod.namespace, claim_name)
            if claim is None:
                return [], unresolvable(f'persistentvolumeclaim "{claim_name}" not found')
            if not claim.volume_name:
                class_name = claim.storage_class
                if not class_name:
                    return [], unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
                sc = listers.storage_class(class_name)
                if sc is None:
                    return [], unresolvable(f'storageclass.storage.k8s.io "{class_name}" not found')
                if sc.volume_binding_mode is None:
                    return [], unresolvable(f'VolumeBindingMode not set for StorageClass "{class_name}"')
                if sc.wait_for_first_consumer:
                    continue
                return [], unresolvable("PersistentVolume had no name")
            pv = listers.pv(claim.volume_name)
            if pv is None:
                return [], unresolvable(f'persistentvolume "{claim.volume_name}" not found')
            for key in TOPOLOGY_LABELS:
                value = pv.labels.get(key)
                if value is None:
                    continue
                zones = label_zones_to_set(value)
                if zones is not None:
                    out.append(PVTopology(pv.name, key, zones))
        return out, None

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.volumes:  # no claim, so no topology: what the lookup below ends in
            return None, SKIP_STATUS
        topologies, status = self._pv_topologies(pod)
        if status is not None:
            return None, status
        if not topologies:
            return None, SKIP_STATUS
        state.write(PRE_FILTER_STATE_KEY, _State(topologies))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def _topologies(self, state: CycleState, pod: Pod) -> tuple[list[PVTopology], Status | None]:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is not None:
            return s.topologies, None
        return self._pv_topologies(pod)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        topologies, status = self._topologies(state, pod)
        if status is not None:
            return status
        node = node_info.node
        assert node is not None
        labels = node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None
        for topo in topologies:
            value = labels.get(topo.key)
            if value is None:
                value = labels.get(_GA.get(topo.key, topo.key))
            if value is None or value not in topo.values:
                return unresolvable(ERR_REASON_CONFLICT)
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, indices: np.ndarray) -> BatchFilterResult:
        rows = np.asarray(indices)
        if not pod.volumes:
            return BatchFilterResult.all_pass(len(rows))
        topologies, status = self._topologies(state, pod)
        if status is not None:
            return BatchFilterResult.all_fail(len(rows), status)
        unconstrained = np.ones(len(rows), dtype=bool)
        for key in TOPOLOGY_LABELS:
            unconstrained &= snapshot.label_column(key).codes[rows] < 0
        passed = np.ones(len(rows), dtype=bool)
        for topo in topologies:
            own = snapshot.label_column(topo.key)
            ga = snapshot.label_column(_GA.get(topo.key, topo.key))
            own_ok = own.mask(np.array([v in topo.values for v in own.values], dtype=bool), False)[rows]
            ga_ok = ga.mask(np.array([v in topo.values for v in ga.values], dtype=bool), False)[rows]
            has_own = own.codes[rows] >= 0
            passed &= np.where(has_own, own_ok, ga_ok)
        return BatchFilterResult.from_mask(passed | unconstrained, unresolvable(ERR_REASON_CONFLICT))

    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]:
        if not queueing_hints_enabled(self.handle):
            node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
            return (
                ClusterEvent(qevents.STORAGE_CLASS, ActionType.ADD),
                ClusterEvent(qevents.NODE, node_actions),
                ClusterEvent(qevents.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                ClusterEvent(qevents.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE),
            )
        return (
            ClusterEventWithHint(
                ClusterEvent(qevents.STORAGE_CLASS, ActionType.ADD), is_schedulable_after_storage_class_added
            ),
            ClusterEvent(qevents.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
            ClusterEventWithHint(
                ClusterEvent(qevents.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE),
                is_schedulable_after_pvc_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(qevents.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE),
                is_schedulable_after_pv_change,
            ),
        )


def is_schedulable_after_storage_class_added(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """A class that binds on first consumer (its claims get a zone from the node)."""
    mode = new_obj.get("volumeBindingMode")
    return QueueingHint.QUEUE if mode == "WaitForFirstConsumer" else QueueingHint.QUEUE_SKIP


def is_schedulable_after_pvc_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """A claim the pod names was created or changed (it may now name its volume)."""
    namespace, name = object_meta(new_obj)
    if namespace != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    for vol in pod.volumes:
        claim = vol.get("persistentVolumeClaim")
        if claim is not None and str(claim.get("claimName") or "") == name:
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pv_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """A new volume, or one whose zone or region labels changed."""
    if old_obj is None:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if _pv_topology(old_obj) != _pv_topology(new_obj) else QueueingHint.QUEUE_SKIP


def _pv_topology(pv: Any) -> list[tuple[str, frozenset[str]]]:
    """The zone and region labels of a volume, parsed (unparseable ones left out)."""
    labels = (pv.get("metadata") or {}).get("labels") or {}
    out: list[tuple[str, frozenset[str]]] = []
    for key in TOPOLOGY_LABELS:
        value = labels.get(key)
        if value is None:
            continue
        zones = label_zones_to_set(str(value))
        if zones is not None:
            out.append((key, zones))
    return out


def new(args: Any, handle: Handle) -> VolumeZone:
    return VolumeZone(handle)
