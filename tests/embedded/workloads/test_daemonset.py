"""DaemonSet controller: eligible nodes, the pinning affinity, default tolerations, new nodes."""

from __future__ import annotations

import pytest

from kubesched.api.objects import Node
from kubesched.embedded.workloads.daemonset import should_run, target_node
from tests.embedded.workloads.conftest import node, pods_of, template, workload


def daemon_nodes(cluster) -> list[str]:
    return sorted(target_node(p) or "" for p in pods_of(cluster, "agent-"))


def test_one_pod_per_node_pinned_by_node_affinity_with_default_tolerations(env) -> None:
    cluster, _, _ = env
    cluster.create(node("n1"))
    cluster.create(node("n2"))
    cluster.create(workload("DaemonSet", "agent"))
    assert daemon_nodes(cluster) == ["n1", "n2"]
    pod = next(p for p in pods_of(cluster, "agent-") if target_node(p) == "n1")
    assert "nodeName" not in pod["spec"]
    required = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert required == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
    }
    keys = {(t["key"], t["effect"]) for t in pod["spec"]["tolerations"]}
    assert ("node.kubernetes.io/unschedulable", "NoSchedule") in keys
    assert ("node.kubernetes.io/not-ready", "NoExecute") in keys
    assert ("node.kubernetes.io/network-unavailable", "NoSchedule") not in keys


def test_new_nodes_get_pods_and_deleted_nodes_lose_them(env) -> None:
    cluster, _, _ = env
    cluster.create(node("n1"))
    cluster.create(workload("DaemonSet", "agent"))
    cluster.create(node("n2"))
    assert daemon_nodes(cluster) == ["n1", "n2"]
    cluster.delete("Node", None, "n1")
    assert daemon_nodes(cluster) == ["n2"]


@pytest.mark.parametrize(
    ("node_kwargs", "pod_spec", "want"),
    [
        pytest.param({}, {}, (True, True), id="plain-node"),
        pytest.param({"unschedulable": True}, {}, (True, True), id="cordoned-node-tolerated-by-default"),
        pytest.param(
            {"taints": [{"key": "gpu", "effect": "NoSchedule"}]},
            {},
            (False, True),
            id="untolerated-noschedule-taint-keeps-running-pods",
        ),
        pytest.param(
            {"taints": [{"key": "gpu", "effect": "NoExecute"}]}, {}, (False, False), id="untolerated-noexecute-taint"
        ),
        pytest.param(
            {"taints": [{"key": "gpu", "effect": "NoSchedule"}]},
            {"tolerations": [{"key": "gpu", "operator": "Exists"}]},
            (True, True),
            id="tolerated-taint",
        ),
        pytest.param(
            {"taints": [{"key": "gpu", "effect": "PreferNoSchedule"}]},
            {},
            (True, True),
            id="prefer-no-schedule-ignored",
        ),
        pytest.param(
            {"labels": {"pool": "a"}}, {"nodeSelector": {"pool": "b"}}, (False, False), id="node-selector-mismatch"
        ),
        pytest.param(
            {"labels": {"pool": "b"}}, {"nodeSelector": {"pool": "b"}}, (True, True), id="node-selector-match"
        ),
        pytest.param(
            {},
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "Exists"}]}]
                        }
                    }
                }
            },
            (False, False),
            id="required-affinity-mismatch",
        ),
        pytest.param({}, {"nodeName": "other"}, (False, False), id="template-names-another-node"),
    ],
)
def test_should_run(node_kwargs, pod_spec, want) -> None:
    ds = {"spec": {"template": template("agent", **pod_spec)}}
    assert should_run(ds, Node.from_dict(node("n1", **node_kwargs))) == want


def test_network_unavailable_toleration_for_host_network_pods(env) -> None:
    cluster, _, _ = env
    cluster.create(node("n1"))
    ds = workload("DaemonSet", "agent")
    ds["spec"]["template"]["spec"]["hostNetwork"] = True
    cluster.create(ds)
    (pod,) = pods_of(cluster, "agent-")
    assert ("node.kubernetes.io/network-unavailable", "NoSchedule") in {
        (t["key"], t["effect"]) for t in pod["spec"]["tolerations"]
    }


def test_template_change_rolls_node_by_node(env) -> None:
    cluster, _, _ = env
    for name in ("n1", "n2", "n3"):
        cluster.create(node(name))
    cluster.create(workload("DaemonSet", "agent"))
    for pod in pods_of(cluster, "agent-"):
        cluster.bind("default", pod["metadata"]["name"], target_node(pod))
    ds = cluster.get("DaemonSet", "default", "agent")
    ds["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.k8s.io/pause:3.10"
    cluster.update(ds)
    rounds = 0
    while True:
        pending = [p for p in pods_of(cluster, "agent-") if not p["spec"].get("nodeName")]
        if not pending:
            break
        assert len(pending) == 1  # maxUnavailable 1: one node at a time
        cluster.bind("default", pending[0]["metadata"]["name"], target_node(pending[0]))
        rounds += 1
    assert rounds == 3
    images = {p["spec"]["containers"][0]["image"] for p in pods_of(cluster, "agent-")}
    assert images == {"registry.k8s.io/pause:3.10"} and daemon_nodes(cluster) == ["n1", "n2", "n3"]
