"""What a failed scheduling attempt writes on the pod: PodScheduled=False and the nomination.

kube-scheduler's updatePod: the condition (and the nominated node, when it changes) is patched only
when the write would change something; a condition equal but for ``observedGeneration`` is no change.
"""

from __future__ import annotations

from typing import Any

from kubesched.api.objects import Pod
from kubesched.api.pod_conditions import condition_changes, with_observed_generation
from kubesched.cluster.protocol import ApiError, Cluster
from kubesched.klog import Logger, kobj

logger = Logger(__name__)

POD_SCHEDULED = "PodScheduled"


def pod_scheduled_false(pod: Pod, reason: str, message: str, *, tracking: bool) -> dict[str, Any]:
    """The PodScheduled=False condition for ``pod`` (observedGeneration from v1.34's generation tracking)."""
    condition: dict[str, Any] = {"type": POD_SCHEDULED, "status": "False", "reason": reason, "message": message}
    return with_observed_generation(pod, condition, tracking=tracking)


def update_pod(
    cluster: Cluster, pod: Pod, current: Pod | None, condition: dict[str, Any], nominated_node: str | None
) -> None:
    """Patch ``condition`` and the nomination onto the pod unless that changes nothing on ``current``
    (the pod as last seen). ``nominated_node``: "" leave it, None clear it, a name set it."""
    if v := logger.v(3):
        # A nomination to set or clear is kube-scheduler's ModeOverride (1).
        nominating = () if nominated_node == "" else ("nominatedNodeName", nominated_node or "", "nominatingMode", 1)
        v.info(
            "Updating pod condition and nominated node name",
            "pod",
            kobj(pod),
            "conditionType",
            condition["type"],
            "conditionStatus",
            condition["status"],
            "conditionReason",
            condition["reason"],
            *nominating,
        )
    nnn: Any = ...
    if nominated_node is None and pod.nominated_node_name:
        nnn = None
    elif nominated_node and nominated_node != pod.nominated_node_name:
        nnn = nominated_node
    if current is not None and nnn is ... and not condition_changes(current, condition):
        return
    try:
        cluster.patch_pod_status(pod.namespace, pod.name, conditions=[condition], nominated_node_name=nnn, reply=False)
    except ApiError as err:
        logger.error(err, "Error updating pod", "pod", kobj(pod))
