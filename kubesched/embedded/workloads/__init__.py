"""Workload controllers of the embedded cluster: Deployment, ReplicaSet, StatefulSet, DaemonSet and Job.

They run as kube-controller-manager runs them: watch-driven, creating and deleting pods (and claims)
through the cluster API, one module per controller. :func:`start_workload_controllers` starts them all.
"""

from kubesched.embedded.workloads.manager import (
    WATCHED_KINDS,
    WORKLOAD_KINDS,
    ControllerManager,
    start_workload_controllers,
)

__all__ = ["WATCHED_KINDS", "WORKLOAD_KINDS", "ControllerManager", "start_workload_controllers"]
