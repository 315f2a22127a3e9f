"""StatefulSet controller: ordinal names, claims per template, OrderedReady and Parallel."""

from __future__ import annotations

from kubesched.embedded.workloads.statefulset import POD_INDEX_LABEL, POD_NAME_LABEL
from tests.embedded.workloads.conftest import bind, pods_of, workload

CLAIMS = [
    {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
]


def names(cluster) -> list[str]:
    return sorted(p["metadata"]["name"] for p in pods_of(cluster, "db-"))


def test_ordered_ready_creates_the_next_pod_once_the_previous_is_bound(env) -> None:
    cluster, _, _ = env
    cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    cluster.create(workload("StatefulSet", "db", replicas=3, serviceName="db", volumeClaimTemplates=CLAIMS))
    assert names(cluster) == ["db-0"]
    pod = cluster.get("Pod", "default", "db-0")
    assert pod["metadata"]["labels"][POD_NAME_LABEL] == "db-0"
    assert pod["metadata"]["labels"][POD_INDEX_LABEL] == "0"
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("db-0", "db")
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}} in pod["spec"]["volumes"]
    claim = cluster.get("PersistentVolumeClaim", "default", "data-db-0")
    assert claim["metadata"]["labels"] == {"app": "db"}
    assert claim["spec"]["resources"]["requests"]["storage"] == "1Gi"
    bind(cluster, pod)
    assert names(cluster) == ["db-0", "db-1"]
    bind(cluster, cluster.get("Pod", "default", "db-1"))
    assert names(cluster) == ["db-0", "db-1", "db-2"]
    claims = sorted(c["metadata"]["name"] for c in cluster.list("PersistentVolumeClaim", "default")[0])
    assert claims == ["data-db-0", "data-db-1", "data-db-2"]


def test_parallel_creates_every_pod_at_once_from_the_start_ordinal(env) -> None:
    cluster, _, _ = env
    cluster.create(workload("StatefulSet", "db", replicas=3, podManagementPolicy="Parallel", ordinals={"start": 5}))
    assert names(cluster) == ["db-5", "db-6", "db-7"]


def test_scale_down_removes_the_highest_ordinal_and_keeps_claims(env) -> None:
    cluster, _, _ = env
    cluster.create(
        workload("StatefulSet", "db", replicas=2, podManagementPolicy="Parallel", volumeClaimTemplates=CLAIMS)
    )
    sts = cluster.get("StatefulSet", "default", "db")
    sts["spec"]["replicas"] = 1
    cluster.update(sts)
    assert names(cluster) == ["db-0"]
    assert len(cluster.list("PersistentVolumeClaim", "default")[0]) == 2


def test_template_change_replaces_pods_from_the_highest_ordinal_above_the_partition(env) -> None:
    cluster, _, _ = env
    cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    cluster.create(
        workload(
            "StatefulSet", "db", replicas=3, updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}
        )
    )
    for _ in range(3):
        for pod in pods_of(cluster, "db-"):
            if not pod["spec"].get("nodeName"):
                bind(cluster, pod)
    sts = cluster.get("StatefulSet", "default", "db")
    sts["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.k8s.io/pause:3.10"
    cluster.update(sts)
    replaced = []
    while pending := [p for p in pods_of(cluster, "db-") if not p["spec"].get("nodeName")]:
        assert len(pending) == 1
        replaced.append(pending[0]["metadata"]["name"])
        bind(cluster, pending[0])
    assert replaced == ["db-2", "db-1"]  # db-0 is below the partition
    images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in pods_of(cluster, "db-")}
    assert images == {
        "db-0": "registry.k8s.io/pause",
        "db-1": "registry.k8s.io/pause:3.10",
        "db-2": "registry.k8s.io/pause:3.10",
    }
