"""VolumeBinding: a pod's PersistentVolumeClaims must be bindable on the node.

PreFilter sorts the pod's claims (bound, delayed, immediate); in v1.30 it also restricts the
candidate nodes to the hosts of bound claims' local PVs (a PreFilterResult), while v1.34 lets every
node through to Filter, which then names the PV's node affinity as the reason. Filter asks the
binder whether each node can satisfy the claims. Reserve assumes the chosen bindings, Unreserve
forgets them, PreBind writes them through the cluster and waits for the PV controller without
blocking (see :mod:`.binder`).

Score ranks nodes by storage capacity only under a feature gate (VolumeCapacityPriority in v1.30,
StorageCapacityScoring in v1.34), off by default and not implemented, so PreScore answers Skip.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
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
    queueing_hints_enabled,
)
from kubesched.framework.pending import PendingStatus
from kubesched.framework.status import Code, Status, unresolvable
from kubesched.plugins import names
from kubesched.plugins.helper import SKIP_STATUS, features_of
from kubesched.plugins.volumebinding import hints
from kubesched.plugins.volumebinding.binder import (
    ERR_REASON_NODE_AFFINITY_MISMATCH,
    ERR_REASON_NODE_CONFLICT,
    BinderError,
    PodVolumeClaims,
    PodVolumes,
    VolumeBinder,
    pod_has_pvcs,
)
from kubesched.queue import events as qevents

if TYPE_CHECKING:
    from kubesched.cache.snapshot import NodeInfoList, Snapshot

NAME = names.VOLUME_BINDING
STATE_KEY = NAME
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
DEFAULT_BIND_TIMEOUT_SECONDS = 600


class _State:
    """Shared by clones, as kube-scheduler's stateData (Filter runs on clones during preemption)."""

    __slots__ = ("all_bound", "claims", "has_static_bindings", "lock", "pod_volumes_by_node")

    def __init__(self, claims: PodVolumeClaims | None) -> None:
        self.claims = claims
        self.pod_volumes_by_node: dict[str, PodVolumes] = {}
        self.has_static_bindings = False
        self.all_bound = False
        self.lock = threading.Lock()

    def clone(self) -> _State:
        return self


class VolumeBinding:
    name = NAME
    #: Filter reads the node, the claims and the volumes, never the pods on the node.
    filter_reads_node_only = True

    def __init__(self, args: Any, handle: Handle) -> None:
        self.handle = handle
        timeout = getattr(args, "bind_timeout_seconds", None)
        if timeout is None and isinstance(args, dict):
            timeout = args.get("bindTimeoutSeconds")
        features = features_of(handle)
        #: v1.30 narrows the nodes to local PVs' hosts in PreFilter; v1.34 does not.
        self.eligible_nodes_result = not features.at_least("1.34")
        self.binder = VolumeBinder(
            handle,
            float(DEFAULT_BIND_TIMEOUT_SECONDS if timeout is None else timeout),
            node_conflict_reason=(
                ERR_REASON_NODE_AFFINITY_MISMATCH if features.at_least("1.34") else ERR_REASON_NODE_CONFLICT
            ),
            match_attributes_class=features.enabled("VolumeAttributesClass"),
        )

    # -- PreFilter ----------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        has, problem = pod_has_pvcs(pod, self.handle.listers) if pod.volumes else (False, None)
        if problem is not None:
            return None, unresolvable(problem)
        if not has:
            state.write(STATE_KEY, _State(None))
            return None, SKIP_STATUS
        try:
            claims = self.binder.get_pod_volume_claims(pod)
        except BinderError as err:
            return None, Status.from_error(err)
        if claims.unbound_immediate:
            return None, unresolvable(ERR_UNBOUND_IMMEDIATE)
        state.write(
            STATE_KEY,
            _State(
                PodVolumeClaims(claims.bound, claims.unbound_delay_binding, [], claims.unbound_volumes_delay_binding)
            ),
        )
        if not self.eligible_nodes_result:
            return None, None
        eligible = self.binder.get_eligible_nodes(claims.bound)
        return (PreFilterResult(frozenset(eligible)) if eligible is not None else None), None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    # -- Filter -------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(STATE_KEY)
        if s is None:
            return Status(Code.ERROR, (f'reading "{STATE_KEY}" from cycleState: not found',))
        if s.claims is None:
            return None
        node = node_info.node
        assert node is not None
        try:
            volumes, reasons = self.binder.find_pod_volumes(pod, s.claims, node)
        except BinderError as err:
            return Status.from_error(err)
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, tuple(reasons))
        with s.lock:
            s.pod_volumes_by_node[node.name] = volumes
            s.has_static_bindings = s.has_static_bindings or bool(volumes.static_bindings)
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, indices: np.ndarray) -> BatchFilterResult:
        """Pods whose claims are all bound only need their PVs' node affinity checked, once per
        distinct label set; delayed claims are matched node by node."""
        rows = np.asarray(indices)
        s = state.get(STATE_KEY)
        if s is None or s.claims is None or s.claims.unbound_delay_binding:
            return self._per_node(state, pod, snapshot, rows)
        pvs = []
        for pvc in s.claims.bound:
            pv = self.binder.pv_cache.get(pvc.volume_name)
            if pv is None:
                return self._per_node(state, pod, snapshot, rows)  # which claim fails first varies
            if pv.node_affinity is not None:
                pvs.append(pv)
        if not pvs:
            return BatchFilterResult.all_pass(len(rows))
        infos = snapshot.node_infos
        passed = np.fromiter(
            (all(pv.matches_node(infos[row].node.labels) for pv in pvs) for row in rows.tolist()),
            dtype=bool,
            count=len(rows),
        )
        return BatchFilterResult.from_mask(
            passed, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (self.binder.node_conflict_reason,))
        )

    def _per_node(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: np.ndarray) -> BatchFilterResult:
        infos = snapshot.node_infos
        return BatchFilterResult.from_node_statuses([self.filter(state, pod, infos[row]) for row in rows.tolist()])

    # -- Score (its feature gate is off by default in both versions) --------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> Status | None:
        return SKIP_STATUS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return 0, None

    def score_extensions(self) -> None:
        return None

    # -- Reserve / Unreserve ------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.get(STATE_KEY)
        if s is None:
            return Status(Code.ERROR, (f'reading "{STATE_KEY}" from cycleState: not found',))
        volumes = s.pod_volumes_by_node.get(node_name)
        if volumes is None:
            s.all_bound = True
            return None
        try:
            s.all_bound = self.binder.assume_pod_volumes(pod, node_name, volumes)
        except BinderError as err:
            return Status.from_error(err)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = state.get(STATE_KEY)
        if s is None:
            return
        volumes = s.pod_volumes_by_node.get(node_name)
        if volumes is not None:
            self.binder.revert_assumed_pod_volumes(volumes)

    # -- PreBind ------------------------------------------------------------------------------------
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | PendingStatus | None:
        s = state.get(STATE_KEY)
        if s is None:
            return Status(Code.ERROR, (f'reading "{STATE_KEY}" from cycleState: not found',))
        if s.all_bound:
            return None
        volumes = s.pod_volumes_by_node.get(node_name)
        if volumes is None:
            return Status(Code.ERROR, (f'no pod volumes found for node "{node_name}"',))
        return self.binder.bind_pod_volumes(pod, volumes, self.handle.call_later)

    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]:
        add_update = ActionType.ADD | ActionType.UPDATE
        if queueing_hints_enabled(self.handle):
            return (
                ClusterEventWithHint(
                    ClusterEvent(qevents.STORAGE_CLASS, add_update), hints.is_schedulable_after_storage_class_change
                ),
                ClusterEventWithHint(
                    ClusterEvent(qevents.PERSISTENT_VOLUME_CLAIM, add_update), hints.is_schedulable_after_pvc_change
                ),
                ClusterEvent(qevents.PERSISTENT_VOLUME, add_update),
                ClusterEvent(qevents.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                ClusterEventWithHint(
                    ClusterEvent(qevents.CSI_NODE, add_update), hints.is_schedulable_after_csi_node_change
                ),
                ClusterEventWithHint(
                    ClusterEvent(qevents.CSI_DRIVER, ActionType.UPDATE), hints.is_schedulable_after_csi_driver_change
                ),
                ClusterEventWithHint(
                    ClusterEvent(qevents.CSI_STORAGE_CAPACITY, add_update),
                    hints.is_schedulable_after_csi_storage_capacity_change,
                ),
            )
        return (
            ClusterEvent(qevents.STORAGE_CLASS, add_update),
            ClusterEvent(qevents.PERSISTENT_VOLUME_CLAIM, add_update),
            ClusterEvent(qevents.PERSISTENT_VOLUME, add_update),
            ClusterEvent(qevents.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT),
            ClusterEvent(qevents.CSI_NODE, add_update),
            ClusterEvent(qevents.CSI_DRIVER, add_update),
            ClusterEvent(qevents.CSI_STORAGE_CAPACITY, add_update),
        )


def new(args: Any, handle: Handle) -> VolumeBinding:
    return VolumeBinding(args, handle)
