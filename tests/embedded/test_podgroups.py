"""The PodGroup controller: a group's status follows the pods its label gathers, and only those."""

from __future__ import annotations

from typing import Any

from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.embedded.podgroups import POD_GROUP_LABEL, PodGroupController
from tests.embedded.conftest import pod


def group(name: str, min_member: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": {"minMember": min_member},
    }


def member(name: str, group_name: str) -> dict[str, Any]:
    obj = pod(name)
    obj["metadata"]["labels"] = {POD_GROUP_LABEL: group_name}
    return obj


def status(cluster: EmbeddedCluster, name: str) -> dict[str, Any]:
    return cluster.get("PodGroup", "default", name).get("status") or {}


def started(cluster: EmbeddedCluster) -> PodGroupController:
    controller = PodGroupController(cluster)
    controller.start()
    return controller


def test_members_coming_binding_and_going_move_the_phase(cluster: EmbeddedCluster) -> None:
    started(cluster)
    cluster.create(group("gang", 2))
    cluster.create(member("a", "gang"))
    cluster.deliver_pending()
    assert status(cluster, "gang")["phase"] == "Pending"
    cluster.create(member("b", "gang"))
    cluster.deliver_pending()
    assert status(cluster, "gang")["phase"] == "Scheduling"
    cluster.bind("default", "a", "n1")
    cluster.bind("default", "b", "n1")
    cluster.deliver_pending()
    assert status(cluster, "gang")["phase"] == "Scheduled" and status(cluster, "gang")["scheduled"] == 2
    cluster.delete("Pod", "default", "b")
    cluster.deliver_pending()
    assert status(cluster, "gang")["scheduled"] == 1


def test_a_pod_whose_label_goes_leaves_its_group(cluster: EmbeddedCluster) -> None:
    started(cluster)
    cluster.create(group("gang", 1))
    cluster.create(member("a", "gang"))
    cluster.deliver_pending()
    assert status(cluster, "gang")["phase"] == "Scheduling"
    relabelled = cluster.get("Pod", "default", "a")
    relabelled["metadata"]["labels"] = {}
    cluster.update(relabelled)
    cluster.deliver_pending()
    assert status(cluster, "gang")["phase"] == "Pending"


def test_pods_of_no_group_touch_no_group(cluster: EmbeddedCluster) -> None:
    started(cluster)
    cluster.create(group("gang", 1))
    cluster.deliver_pending()
    version = cluster.get("PodGroup", "default", "gang")["metadata"]["resourceVersion"]
    cluster.create(pod("loner"))
    cluster.bind("default", "loner", "n1")
    cluster.delete("Pod", "default", "loner")
    cluster.deliver_pending()
    assert cluster.get("PodGroup", "default", "gang")["metadata"]["resourceVersion"] == version
