"""The simulator's control plane: the embedded API server and every controller a real one runs beside the
scheduler.

kube-controller-manager's PV binder and provisioner, disruption controller, workload controllers
(Deployment, ReplicaSet, StatefulSet, DaemonSet, Job) and resourceclaim controller (where
DynamicResourceAllocation is on, as kube-controller-manager starts it only then), and
scheduler-plugins' PodGroup controller: each
writes status or objects the scheduler reads. One object owns the cluster and starts and stops them all,
so every simulation (simulate, capacity, plan, the tests and the benchmarks) runs the same set, started in
the same order (the order in which watchers see each event).
"""

from __future__ import annotations

import random

from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.embedded.disruption import DisruptionController
from kubesched.embedded.podgroups import PodGroupController
from kubesched.embedded.pv_controller import PVController
from kubesched.embedded.resourceclaims import ResourceClaimController
from kubesched.embedded.workloads import ControllerManager


class ControlPlane:
    """An :class:`EmbeddedCluster` (made here unless given) and its controllers, started by :meth:`start`.

    ``rng`` names the pods the workload controllers create, so that a seeded run replays exactly.
    """

    def __init__(self, cluster: EmbeddedCluster | None = None, *, rng: random.Random | None = None) -> None:
        self.cluster = cluster if cluster is not None else EmbeddedCluster()
        self.pv = PVController(self.cluster)
        self.disruption = DisruptionController(self.cluster)
        self.workloads = ControllerManager(self.cluster, rng)
        self.resource_claims = (
            ResourceClaimController(self.cluster)
            if self.cluster.features.enabled("DynamicResourceAllocation")
            else None
        )
        self.pod_groups = PodGroupController(self.cluster)
        self.started = False

    def start(self) -> None:
        """Start every controller: each watches its kinds, then brings what exists up to date."""
        if self.started:
            return
        self.started = True
        self.pv.start()
        self.disruption.start()
        self.workloads.start()
        if self.resource_claims is not None:
            self.resource_claims.start()
        self.pod_groups.start()

    def stop(self) -> None:
        """Stop every controller's watches; the cluster and what it stores stay."""
        if not self.started:
            return
        self.started = False
        self.pod_groups.stop()
        if self.resource_claims is not None:
            self.resource_claims.stop()
        self.workloads.stop()
        self.disruption.stop()
        self.pv.stop()

    @property
    def warnings(self) -> list[str]:
        """What the controllers could not do that a person should know (claims no volume can satisfy)."""
        return list(self.pv.warnings)

    @property
    def claims_not_made(self) -> dict[str, str]:
        """Pods whose ResourceClaims the resourceclaim controller could not make, with why: the pod waits
        (kube-controller-manager says so in a ``FailedResourceClaimCreation`` event, not a warning)."""
        return dict(self.resource_claims.not_made) if self.resource_claims is not None else {}
