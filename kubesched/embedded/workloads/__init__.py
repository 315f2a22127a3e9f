"""Workload controllers of the embedded cluster: Deployment, ReplicaSet, StatefulSet, DaemonSet and Job.

They run as kube-controller-manager runs them: watch-driven, creating and deleting pods (and claims)
through the cluster API, one module per controller. The :class:`ControllerManager` runs them all
(:class:`kubesched.embedded.controlplane.ControlPlane` starts it with the other controllers).
"""

from kubesched.embedded.workloads.manager import (
    WATCHED_KINDS,
    WORKLOAD_KINDS,
    ControllerManager,
)

__all__ = ["WATCHED_KINDS", "WORKLOAD_KINDS", "ControllerManager"]
