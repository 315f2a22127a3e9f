"""Why a pod fits nowhere, and the FailedScheduling text kube-scheduler writes for it.

Shared by the scheduling cycle and preemption, which reports its own dry runs in the same form.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kubesched.api.objects import Pod
from kubesched.framework.status import Code, Status


class NodeToStatus(dict[str, Status]):
    """The rejection of each node Filter (or PreFilter) looked at, and the status of every other node.

    kube-scheduler's NodeToStatus: nodes never evaluated (outside a PreFilterResult) are not listed,
    they all share ``absent``, which is UnschedulableAndUnresolvable (preemption cannot help there)
    with no reason unless the cycle names one. It is a plain dict to the PostFilter plugins that read
    it as one.
    """

    __slots__ = ("absent",)

    def __init__(
        self, statuses: Mapping[str, Status] | Iterable[tuple[str, Status]] = (), absent: Status | None = None
    ) -> None:
        super().__init__(statuses)
        self.absent = absent if absent is not None else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def status_of(self, node_name: str) -> Status:
        """The node's own status, else the status of the nodes not listed."""
        status = self.get(node_name)
        return self.absent if status is None else status


def absent_node_reasons(node_status: Mapping[str, Status]) -> tuple[str, ...]:
    """The reasons shared by the nodes ``node_status`` does not list (none for a plain mapping)."""
    return node_status.absent.reasons if isinstance(node_status, NodeToStatus) else ()


@dataclass(slots=True)
class Diagnosis:
    """Why a pod fits nowhere: per-node rejections, the plugins that rejected, and messages."""

    node_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, status: Status) -> None:
        if status.code is Code.PENDING:
            self.pending_plugins.add(status.plugin)
        elif status.is_rejected() and status.plugin:
            self.unschedulable_plugins.add(status.plugin)


class FitError(Exception):
    """No node fits the pod; ``str()`` is the FailedScheduling message kube-scheduler writes."""

    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        return fit_error_message(
            self.num_all_nodes,
            self.diagnosis.node_status,
            self.diagnosis.pre_filter_msg,
            self.diagnosis.post_filter_msg,
        )


def fit_error_message(
    num_all_nodes: int, node_status: Mapping[str, Status], pre_filter_msg: str = "", post_filter_msg: str = ""
) -> str:
    """``0/N nodes are available: <sorted histogram of reasons>. <post filter message>.``

    Nodes ``node_status`` does not list count under the reasons of its absent-node status (a
    :class:`NodeToStatus`), when it has any.
    """
    msg = f"0/{num_all_nodes} nodes are available:"
    if pre_filter_msg:
        msg += f" {pre_filter_msg}."
    else:
        histogram: dict[str, int] = {}
        # Nodes rejected alike share one Status: count the statuses, then their reasons.
        statuses = dict(zip(map(id, node_status.values()), node_status.values(), strict=True))
        for key, n in Counter(map(id, node_status.values())).items():
            for reason in statuses[key].reasons:
                histogram[reason] = histogram.get(reason, 0) + n
        absent = num_all_nodes - len(node_status)
        if absent > 0:
            for reason in absent_node_reasons(node_status):
                histogram[reason] = histogram.get(reason, 0) + absent
        if histogram:
            msg += " " + ", ".join(sorted(f"{n} {reason}" for reason, n in histogram.items())) + "."
    if post_filter_msg:
        msg += f" {post_filter_msg}"
    return msg
