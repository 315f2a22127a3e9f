"""Handle: what the framework gives a plugin to reach the rest of the scheduler.

Plugins receive it in their factory (``new(args, handle)``). It is a protocol so that tests can hand
plugins a small fake.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Status

if TYPE_CHECKING:
    from kubesched.cache.snapshot import Snapshot
    from kubesched.cluster.listers import Listers
    from kubesched.cluster.protocol import Cluster


class PodNominator(Protocol):
    """Pods that preemption nominated to nodes and that are not bound yet."""

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]: ...

    def nominated_node_names(self) -> list[str]:
        """Nodes with at least one nominated pod (so a cycle only checks those)."""
        ...


class Handle(Protocol):
    @property
    def snapshot(self) -> Snapshot:
        """The snapshot of the cycle in progress."""
        ...

    @property
    def cluster(self) -> Cluster: ...

    @property
    def listers(self) -> Listers:
        """Watched namespaces, services, replication controllers, replica sets and stateful sets."""
        ...

    @property
    def nominator(self) -> PodNominator: ...

    @property
    def clock(self) -> Callable[[], datetime]: ...

    @property
    def parallelism(self) -> int: ...

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod,
                                         node_info: NodeInfo) -> Status | None:
        """Tell every PreFilter plugin with extensions that ``pod_to_add`` now sits on ``node_info``."""
        ...

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod,
                                            node_info: NodeInfo) -> Status | None: ...

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod,
                                               node_info: NodeInfo) -> Status | None:
        """All Filter plugins on one node, counting higher-or-equal-priority nominated pods there."""
        ...
