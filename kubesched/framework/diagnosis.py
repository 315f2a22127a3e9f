"""Why a pod fits nowhere, and the FailedScheduling text kube-scheduler writes for it.

Shared by the scheduling cycle and preemption, which reports its own dry runs in the same form.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubesched.api.objects import Pod
from kubesched.framework.status import Code, Status


@dataclass(slots=True)
class Diagnosis:
    """Why a pod fits nowhere: per-node rejections, the plugins that rejected, and messages."""

    node_status: dict[str, Status]
    unschedulable_plugins: set[str]
    pending_plugins: set[str]
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
        return fit_error_message(self.num_all_nodes, self.diagnosis.node_status,
                                 self.diagnosis.pre_filter_msg, self.diagnosis.post_filter_msg)


def fit_error_message(num_all_nodes: int, node_status: Mapping[str, Status], pre_filter_msg: str = "",
                      post_filter_msg: str = "") -> str:
    """``0/N nodes are available: <sorted histogram of reasons>. <post filter message>.``"""
    msg = f"0/{num_all_nodes} nodes are available:"
    if pre_filter_msg:
        msg += f" {pre_filter_msg}."
    else:
        histogram: dict[str, int] = {}
        for status in node_status.values():
            for reason in status.reasons:
                histogram[reason] = histogram.get(reason, 0) + 1
        if histogram:
            msg += " " + ", ".join(sorted(f"{n} {reason}" for reason, n in histogram.items())) + "."
    if post_filter_msg:
        msg += f" {post_filter_msg}"
    return msg
