"""NodePorts: a pod's host ports must be free on the node.

A pod's host ports are those of its containers and, from v1.34, of its sidecars (restartable init
containers run as long as the pod): ``Pod.host_ports``, read by the emulated version's rules, for the
incoming pod and for the pods a node hosts alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import ContainerPort, Pod
from kubesched.cache.node_info import HostPortInfo, NodeInfo
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
from kubesched.framework.status import Status, unschedulable
from kubesched.plugins import names
from kubesched.plugins.helper import SKIP_STATUS

if TYPE_CHECKING:
    from kubesched.cache.snapshot import Snapshot

NAME = names.NODE_PORTS

PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


class _WantedPorts:
    """The pod's host ports; adding or removing other pods does not change them."""

    __slots__ = ("ports",)

    def __init__(self, ports: tuple[ContainerPort, ...]) -> None:
        self.ports = ports

    def clone(self) -> _WantedPorts:
        return self


def fits_ports(wanted: Sequence[ContainerPort], used: HostPortInfo) -> bool:
    return not any(used.conflicts(p.host_ip, p.protocol, p.host_port) for p in wanted)


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    return fits_ports(pod.host_ports, node_info.used_ports)


class NodePorts:
    name = NAME

    def __init__(self, queueing_hints: bool = True) -> None:
        self.queueing_hints = queueing_hints
        # Rows of the snapshot with any host port in use, per snapshot generation.
        self._rows_with_ports: tuple[Snapshot, int, np.ndarray] | None = None

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.host_ports:
            return None, SKIP_STATUS
        state.write(PRE_FILTER_STATE_KEY, _WantedPorts(pod.host_ports))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    @staticmethod
    def _wanted(state: CycleState, pod: Pod) -> tuple[ContainerPort, ...]:
        # Without PreFilter state (a direct call) the ports come from the pod, where kube-scheduler
        # would report an error instead.
        s = state.get(PRE_FILTER_STATE_KEY)
        return s.ports if isinstance(s, _WantedPorts) else pod.host_ports

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if fits_ports(self._wanted(state, pod), node_info.used_ports):
            return None
        return unschedulable(ERR_REASON)

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, indices: np.ndarray) -> BatchFilterResult:
        """Only nodes with some host port in use can conflict; check just those one by one."""
        wanted = self._wanted(state, pod)
        rows = np.asarray(indices)
        if not wanted or len(rows) == 0:
            return BatchFilterResult.all_pass(len(rows))
        busy = self._busy_rows(snapshot)
        candidates = busy[rows].nonzero()[0]
        passed = np.ones(len(rows), dtype=bool)
        infos = snapshot.node_infos
        for k in candidates.tolist():
            if not fits_ports(wanted, infos[int(rows[k])].used_ports):
                passed[k] = False
        return BatchFilterResult.from_mask(passed, unschedulable(ERR_REASON))

    def _busy_rows(self, snapshot: Snapshot) -> np.ndarray:
        cached = self._rows_with_ports
        if cached is not None and cached[0] is snapshot and cached[1] == snapshot.generation:
            return cached[2]
        busy = np.fromiter(
            (len(info.used_ports) > 0 for info in snapshot.node_infos), dtype=bool, count=len(snapshot.node_infos)
        )
        self._rows_with_ports = (snapshot, snapshot.generation, busy)
        return busy

    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]:
        if not self.queueing_hints:
            return (
                ClusterEvent("Pod", ActionType.DELETE),
                ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE),
            )
        return (
            ClusterEventWithHint(ClusterEvent("Pod", ActionType.DELETE), self.is_schedulable_after_pod_deleted),
            ClusterEvent("Node", ActionType.ADD),
        )

    @staticmethod
    def is_schedulable_after_pod_deleted(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """A pod that was bound (or nominated) and held a host port the rejected pod wants."""
        deleted: Pod = old_obj
        if not deleted.node_name and not deleted.nominated_node_name:
            return QueueingHint.QUEUE_SKIP
        if not deleted.host_ports:
            return QueueingHint.QUEUE_SKIP
        used = HostPortInfo()
        for port in deleted.host_ports:
            used.add(port.host_ip, port.protocol, port.host_port)
        return QueueingHint.QUEUE_SKIP if fits_ports(pod.host_ports, used) else QueueingHint.QUEUE


def new(args: Any, handle: Handle) -> NodePorts:
    return NodePorts(queueing_hints_enabled(handle))
