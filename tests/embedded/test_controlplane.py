"""The control plane: one object starts (and stops) every controller the simulator's cluster runs."""

from __future__ import annotations

import random
from typing import Any

from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.embedded.controlplane import ControlPlane
from tests.embedded.workloads.conftest import node, pods_of, workload
from tests.plugins.storage import pv_dict, pvc_dict, sc_dict

BUDGET = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "budget"},
    "spec": {"minAvailable": 0, "selector": {"matchLabels": {"app": "web"}}},
}
GROUP = {
    "apiVersion": "scheduling.x-k8s.io/v1alpha1",
    "kind": "PodGroup",
    "metadata": {"name": "gang"},
    "spec": {"minMember": 2},
}


def fresh(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` without the server-set fields the storage builders fill in."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("resourceVersion", "uid")}
    return {**obj, "metadata": meta}


def objects() -> list[dict[str, Any]]:
    """One object for each controller to act on."""
    return [
        node("n1"),
        fresh(sc_dict("manual", provisioner="kubernetes.io/no-provisioner", mode="Immediate")),
        fresh(pv_dict("pv", sc="manual")),
        fresh(pvc_dict("claim", sc="manual")),
        BUDGET,
        GROUP,
        workload("ReplicaSet", "web", replicas=2),
    ]


def effects(cluster: EmbeddedCluster) -> dict[str, Any]:
    """What each controller writes: claim binding, budget status, workload pods, group status."""
    return {
        "claim": cluster.get("PersistentVolumeClaim", "default", "claim")["status"].get("phase"),
        "budget": (cluster.get("PodDisruptionBudget", "default", "budget").get("status") or {}).get("expectedPods"),
        "pods": len(pods_of(cluster, "web-")),
        "group": (cluster.get("PodGroup", "default", "gang").get("status") or {}).get("phase"),
    }


NOTHING = {"claim": "Pending", "budget": None, "pods": 0, "group": None}
EVERYTHING = {"claim": "Bound", "budget": 0, "pods": 2, "group": "Pending"}


def test_start_runs_every_controller_on_what_exists_and_what_comes() -> None:
    plane = ControlPlane(rng=random.Random(1))
    for obj in objects()[:4]:
        plane.cluster.create(obj)
    plane.start()  # existing objects are listed and brought up to date
    for obj in objects()[4:]:
        plane.cluster.create(obj)
    plane.cluster.deliver_pending()
    assert effects(plane.cluster) == EVERYTHING
    assert plane.started


def test_nothing_runs_before_start_or_after_stop() -> None:
    idle = ControlPlane()
    for obj in objects():
        idle.cluster.create(obj)
    idle.cluster.deliver_pending()
    assert effects(idle.cluster) == NOTHING

    plane = ControlPlane()
    plane.start()
    plane.stop()
    for obj in objects():
        plane.cluster.create(obj)
    plane.cluster.deliver_pending()
    assert effects(plane.cluster) == NOTHING


def test_a_given_cluster_is_the_one_owned_and_starting_twice_starts_once() -> None:
    cluster = EmbeddedCluster()
    watched: list[frozenset[str]] = []
    watch = cluster.watch

    def counting(kinds: Any, handler: Any, **kw: Any) -> Any:
        watched.append(frozenset(kinds))
        return watch(kinds, handler, **kw)

    cluster.watch = counting  # type: ignore[method-assign]
    plane = ControlPlane(cluster)
    plane.start()
    once = list(watched)
    plane.start()
    assert plane.cluster is cluster
    assert watched == once
    # PV binder, disruption controller, workload controllers, resourceclaim controller, pod groups: in that order.
    assert [sorted(kinds)[0] for kinds in once] == ["PersistentVolume", "Pod", "DaemonSet", "Pod", "Pod"]
    assert once[3] == {"Pod", "ResourceClaim", "ResourceClaimTemplate"}


def test_warnings_are_what_the_controllers_could_not_do() -> None:
    plane = ControlPlane()
    plane.start()
    plane.cluster.create(fresh(sc_dict("manual", provisioner="kubernetes.io/no-provisioner", mode="Immediate")))
    plane.cluster.create(fresh(pvc_dict("c", sc="manual")))
    plane.cluster.deliver_pending()
    assert plane.warnings == ["pvc default/c: Immediate claim with no matching PV and no provisioner; it stays unbound"]
