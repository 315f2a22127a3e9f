"""Coscheduling with ``kubesched run`` against a real kube-apiserver, the PodGroup kind served by a CRD."""

from __future__ import annotations

import pytest

from tests.live.conftest import Live, node, pod

pytestmark = pytest.mark.controlplane

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "podgroups.scheduling.x-k8s.io"},
    "spec": {
        "group": "scheduling.x-k8s.io",
        "scope": "Namespaced",
        "names": {"plural": "podgroups", "singular": "podgroup", "kind": "PodGroup", "shortNames": ["pg"]},
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }
        ],
    },
}
# What scheduler-plugins' RBAC adds for the scheduler: reading PodGroups.
RBAC = [
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "kubesched-podgroups"},
        "rules": [
            {"apiGroups": ["scheduling.x-k8s.io"], "resources": ["podgroups"], "verbs": ["get", "list", "watch"]}
        ],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "kubesched-podgroups"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kubesched-podgroups"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:kube-scheduler"}],
    },
]
CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "leaderElection": {"leaderElect": False},
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
            },
            "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}}],
        }
    ],
}


def _install_crd(live: Live) -> None:
    import yaml

    live.kubectl("apply", "-f", "-", input=yaml.safe_dump_all([CRD, *RBAC]))
    live.kubectl("wait", "--for=condition=Established", "crd/podgroups.scheduling.x-k8s.io", "--timeout=60s")


def test_a_gang_is_bound_whole_from_a_live_podgroup(live: Live) -> None:
    _install_crd(live)
    members = []
    for i in range(3):
        p = pod(f"train-{i}", cpu="1")
        p["metadata"]["labels"] = {"scheduling.x-k8s.io/pod-group": "train"}
        members.append(p)
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "train", "namespace": "default"},
        "spec": {"minMember": 3},
    }
    live.apply(node("n-a", cpu="2"), node("n-b", cpu="2"), group)
    live.start_scheduler(config=CONFIG)
    live.apply(*members[:2])
    # Two of three members: PreFilter turns them away, reading the live PodGroup.
    events = live.wait(
        lambda: [e for e in live.events("train-0") if e["reason"] == "FailedScheduling"], 60, "FailedScheduling"
    )
    assert "cannot find enough sibling pods, current pods number: 2, minMember of group: 3" in events[0]["note"]
    assert not any(p["spec"].get("nodeName") for p in live.pods().values())
    live.apply(members[2])
    bound = live.wait_bound("train-0", "train-1", "train-2", timeout=90)
    assert set(bound.values()) <= {"n-a", "n-b"}
    live.kubectl("delete", "podgroup", "train", "-n", "default")
