"""ReplicaSet and Deployment controllers: replicas kept, names, owner references, the pod-template-hash."""

from __future__ import annotations

from kubesched.embedded.workloads.common import NAME_ALPHABET, POD_TEMPLATE_HASH_LABEL, compute_hash
from tests.embedded.workloads.conftest import bind, pods_of, template, workload


def test_replicaset_creates_missing_pods_owned_by_it(env) -> None:
    cluster, _, _ = env
    rs = cluster.create(workload("ReplicaSet", "web", replicas=3))
    pods = pods_of(cluster, "web-")
    assert len(pods) == 3
    for pod in pods:
        suffix = pod["metadata"]["name"][len("web-") :]
        assert len(suffix) == 5 and set(suffix) <= set(NAME_ALPHABET)
        assert pod["metadata"]["generateName"] == "web-"
        assert pod["metadata"]["labels"] == {"app": "web"}
        (ref,) = pod["metadata"]["ownerReferences"]
        assert ref == {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "web",
            "uid": rs["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
        assert pod["spec"]["priority"] == 0  # went through admission like any pod
    status = cluster.get("ReplicaSet", "default", "web")["status"]
    assert (status["replicas"], status["readyReplicas"]) == (3, 0)


def test_replicaset_scales_down_unassigned_pods_first_and_replaces_deleted_ones(env) -> None:
    cluster, _, _ = env
    cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    cluster.create(workload("ReplicaSet", "web", replicas=3))
    first = pods_of(cluster, "web-")
    bind(cluster, first[0])
    bind(cluster, first[1])
    rs = cluster.get("ReplicaSet", "default", "web")
    assert rs["status"]["readyReplicas"] == 2
    rs["spec"]["replicas"] = 2
    cluster.update(rs)
    left = {p["metadata"]["name"] for p in pods_of(cluster, "web-")}
    assert left == {first[0]["metadata"]["name"], first[1]["metadata"]["name"]}
    cluster.delete("Pod", "default", first[0]["metadata"]["name"])
    assert len(pods_of(cluster, "web-")) == 2


def test_deleting_a_replicaset_deletes_its_pods(env) -> None:
    cluster, _, _ = env
    cluster.create(workload("ReplicaSet", "web", replicas=2))
    cluster.delete("ReplicaSet", "default", "web")
    assert pods_of(cluster, "web-") == []


def test_deployment_creates_a_replicaset_named_by_the_template_hash(env) -> None:
    cluster, _, _ = env
    dep = cluster.create(workload("Deployment", "api", replicas=2))
    pod_hash = compute_hash(template("api"))
    (rs,) = cluster.list("ReplicaSet", "default")[0]
    assert rs["metadata"]["name"] == f"api-{pod_hash}"
    assert rs["metadata"]["ownerReferences"][0]["uid"] == dep["metadata"]["uid"]
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "api", POD_TEMPLATE_HASH_LABEL: pod_hash}
    assert rs["spec"]["template"]["metadata"]["labels"][POD_TEMPLATE_HASH_LABEL] == pod_hash
    pods = pods_of(cluster, f"api-{pod_hash}-")
    assert len(pods) == 2
    assert all(p["metadata"]["labels"] == {"app": "api", POD_TEMPLATE_HASH_LABEL: pod_hash} for p in pods)
    assert cluster.get("Deployment", "default", "api")["status"]["replicas"] == 2


def _bind_pending(cluster) -> int:
    pending = [p for p in pods_of(cluster, "api-") if not p["spec"].get("nodeName")]
    for pod in pending:
        bind(cluster, pod)
    return len(pending)


def _replica_sets(cluster) -> dict[str, int]:
    return {rs["metadata"]["name"]: rs["spec"]["replicas"] for rs in cluster.list("ReplicaSet", "default")[0]}


def test_rolling_update_surges_and_waits_for_new_pods_to_be_available(env) -> None:
    cluster, _, _ = env
    cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    cluster.create(workload("Deployment", "api", replicas=4))  # maxSurge 25% -> 1, maxUnavailable 25% -> 1
    _bind_pending(cluster)
    old = f"api-{compute_hash(template('api'))}"
    dep = cluster.get("Deployment", "default", "api")
    dep["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.k8s.io/pause:3.10"
    cluster.update(dep)
    new = f"api-{compute_hash(dep['spec']['template'])}"
    # One surge pod, and one old pod may go (3 of 4 stay available).
    assert _replica_sets(cluster) == {old: 3, new: 2}
    steps = 0
    while _bind_pending(cluster):
        steps += 1
        sets = _replica_sets(cluster)
        assert sum(sets.values()) <= 5
        bound = [p for p in pods_of(cluster, "api-") if p["spec"].get("nodeName")]
        assert len(bound) >= 3
    assert _replica_sets(cluster) == {old: 0, new: 4}
    assert steps >= 2  # it took more than one step
    assert len(pods_of(cluster, new + "-")) == 4 and len(pods_of(cluster, old + "-")) == 0


def test_recreate_removes_old_pods_before_creating_new_ones(env) -> None:
    cluster, _, _ = env
    cluster.create(workload("Deployment", "api", replicas=2, strategy={"type": "Recreate"}))
    dep = cluster.get("Deployment", "default", "api")
    dep["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.k8s.io/pause:3.10"
    cluster.update(dep)
    new = f"api-{compute_hash(dep['spec']['template'])}"
    assert sorted(_replica_sets(cluster).values()) == [0, 2]
    assert {p["metadata"]["name"].rsplit("-", 1)[0] for p in pods_of(cluster, "api-")} == {new}


def test_scaling_a_deployment_scales_its_replicaset(env) -> None:
    cluster, _, _ = env
    cluster.create(workload("Deployment", "api", replicas=2))
    dep = cluster.get("Deployment", "default", "api")
    dep["spec"]["replicas"] = 5
    cluster.update(dep)
    assert list(_replica_sets(cluster).values()) == [5] and len(pods_of(cluster, "api-")) == 5


def test_deployment_hash_collision_bumps_the_collision_count(env) -> None:
    cluster, _, _ = env
    taken = f"api-{compute_hash(template('api'))}"
    cluster.create({**workload("ReplicaSet", taken, app="other", replicas=0)})
    cluster.create(workload("Deployment", "api", replicas=1))
    assert cluster.get("Deployment", "default", "api")["status"]["collisionCount"] == 1
    assert cluster.get("ReplicaSet", "default", f"api-{compute_hash(template('api'), 1)}")


def test_a_paused_deployment_scales_but_does_not_roll_out(env) -> None:
    cluster, _, _ = env
    cluster.create(workload("Deployment", "api", replicas=2))
    dep = cluster.get("Deployment", "default", "api")
    dep["spec"]["paused"] = True
    dep["spec"]["replicas"] = 3
    dep["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.k8s.io/pause:3.10"
    cluster.update(dep)
    assert list(_replica_sets(cluster).values()) == [3]
    assert {p["spec"]["containers"][0]["image"] for p in pods_of(cluster, "api-")} == {"registry.k8s.io/pause"}
