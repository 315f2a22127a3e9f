"""The controller manager: list-then-watch, garbage collection, errors kept, no cost without workloads."""

from __future__ import annotations

import itertools
import random

from kubesched.embedded.apiserver import EmbeddedCluster
from tests.embedded.workloads.conftest import node, pods_of, start_controllers, workload


def make() -> EmbeddedCluster:
    counter = itertools.count(1)
    return EmbeddedCluster(uid_factory=lambda: f"uid-{next(counter)}", synchronous=True)


def test_workloads_created_before_the_manager_started_are_synced() -> None:
    cluster = make()
    cluster.create(node("n1"))
    cluster.create(workload("ReplicaSet", "web", replicas=2))
    cluster.create(workload("DaemonSet", "agent"))
    manager = start_controllers(cluster, random.Random(1))
    assert len(pods_of(cluster, "web-")) == 2 and len(pods_of(cluster, "agent-")) == 1
    assert sorted(manager.created_pods) == sorted(f"default/{p['metadata']['name']}" for p in pods_of(cluster))
    assert sorted(set(manager.pod_workloads.values())) == ["DaemonSet default/agent", "ReplicaSet default/web"]


def test_pods_and_nodes_are_watched_only_once_a_workload_exists() -> None:
    cluster = make()
    manager = start_controllers(cluster)
    cluster.create(node("n1"))
    cluster.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "bare"},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        }
    )
    assert manager.objects["Pod"] == {} and manager.objects["Node"] == {}
    cluster.create(workload("DaemonSet", "agent"))
    assert set(manager.objects["Node"]) == {("", "n1")}
    assert ("default", "bare") in manager.objects["Pod"]
    assert len(pods_of(cluster, "agent-")) == 1  # the node listed before the watch started counts


def test_deleting_a_deployment_collects_its_replicasets_and_pods() -> None:
    cluster = make()
    start_controllers(cluster)
    cluster.create(workload("Deployment", "api", replicas=2))
    cluster.delete("Deployment", "default", "api")
    assert cluster.list("ReplicaSet", "default")[0] == [] and pods_of(cluster) == []


def test_refused_writes_are_kept_as_errors() -> None:
    cluster = make()
    manager = start_controllers(cluster)
    rs = workload("ReplicaSet", "web", replicas=1)
    rs["spec"]["template"]["spec"]["priorityClassName"] = "missing"
    cluster.create(rs)
    assert pods_of(cluster) == []
    assert any("no PriorityClass with name missing" in e for e in manager.errors)


def test_a_stale_write_is_retried_on_fresh_state_not_reported() -> None:
    cluster = EmbeddedCluster()  # events wait for deliver_pending: the manager's copy can go stale
    manager = start_controllers(cluster)
    cluster.create(workload("ReplicaSet", "web", replicas=1))
    cluster.deliver_pending()
    rs = cluster.get("ReplicaSet", "default", "web")
    rs["spec"]["replicas"] = 3
    cluster.update(rs)  # not delivered yet: the manager still has replicas=1 and the old version
    known = manager.get("ReplicaSet", "default", "web")
    assert known is not None
    manager.update({**known, "status": {"replicas": 7}})
    cluster.deliver_pending()
    assert manager.errors == []
    assert len(pods_of(cluster, "web-")) == 3
    assert cluster.get("ReplicaSet", "default", "web")["status"]["replicas"] == 3


def _bare(name: str, labels: dict[str, str], node_name: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "x"}]}
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": spec,
    }


def test_orphans_matching_the_selector_are_adopted() -> None:
    cluster = make()
    manager = start_controllers(cluster)
    cluster.create(node("n1"))
    cluster.create(_bare("old-web", {"app": "web"}, "n1"))
    cluster.create(_bare("other", {"app": "other"}, "n1"))
    cluster.create(_bare("db-0", {"app": "db"}, "n1"))
    cluster.create(_bare("db-x", {"app": "db"}, "n1"))
    rs = cluster.create(workload("ReplicaSet", "web", replicas=2))
    sts = cluster.create(workload("StatefulSet", "db", replicas=2))
    adopted = cluster.get("Pod", "default", "old-web")["metadata"]["ownerReferences"]
    assert [r["uid"] for r in adopted] == [rs["metadata"]["uid"]]
    assert len(pods_of(cluster, "web-")) == 1  # one more, not two
    assert cluster.get("Pod", "default", "db-0")["metadata"]["ownerReferences"][0]["uid"] == sts["metadata"]["uid"]
    assert "ownerReferences" not in cluster.get("Pod", "default", "db-x")["metadata"]  # not a member by name
    assert "ownerReferences" not in cluster.get("Pod", "default", "other")["metadata"]
    assert manager.pod_workloads["default/old-web"] == "ReplicaSet default/web"
    assert {p["metadata"]["name"] for p in pods_of(cluster, "db-")} == {"db-0", "db-1", "db-x"}


def test_a_later_orphan_is_adopted_and_the_surplus_removed() -> None:
    cluster = make()
    start_controllers(cluster)
    cluster.create(workload("ReplicaSet", "web", replicas=2))
    cluster.create(_bare("late", {"app": "web"}))
    web = [p for p in pods_of(cluster) if p["metadata"].get("labels", {}).get("app") == "web"]
    assert len(web) == 2
