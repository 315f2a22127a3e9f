"""Pod and Node views: what is precomputed from the manifest, and where a malformed field is reported."""

from __future__ import annotations

import copy
import types
from typing import Any

import pytest

from kubesched.api.disruption_budget import PodDisruptionBudget
from kubesched.api.errors import ObjectError
from kubesched.api.objects import ContainerPort, ImageState, Node, Pod, PriorityClass
from kubesched.api.taints import Taint
from tests.factories import node_dict, pod_dict

Gi = 1024**3


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        (
            {"containers": [{"name": "c", "resources": {"requests": {"cpu": "abc"}}}]},
            "spec.containers[0].resources.requests.cpu",
        ),
        (
            {"containers": [{"name": "a"}, {"name": "b", "resources": {"limits": {"memory": "1Xi"}}}]},
            "spec.containers[1].resources.limits.memory",
        ),
        ({"containers": [{"name": "c", "resources": {"requests": ["cpu"]}}]}, "spec.containers[0].resources.requests"),
        ({"containers": [{"name": "c", "resources": "big"}]}, "spec.containers[0].resources"),
        (
            {"initContainers": [{"name": "i", "resources": {"requests": {"memory": "-"}}}]},
            "spec.initContainers[0].resources.requests.memory",
        ),
        (
            {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": "80"}]}]},
            "spec.containers[0].ports[0].hostPort",
        ),
        ({"containers": [{"name": "c", "ports": "80"}]}, "spec.containers[0].ports"),
        ({"containers": {"name": "c"}}, "spec.containers"),
        ({"overhead": {"cpu": "1q"}}, "spec.overhead.cpu"),
        ({"tolerations": [{"operator": "Exists"}, {"key": "k", "operator": "Foo"}]}, "spec.tolerations[1].operator"),
        ({"tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]}, "spec.tolerations[0].value"),
        ({"tolerations": "all"}, "spec.tolerations"),
        (
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Bad"}]}]
                        }
                    }
                }
            },
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
            ".nodeSelectorTerms[0].matchExpressions[0].operator",
        ),
        (
            {
                "affinity": {
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {}}]
                    }
                }
            },
            "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
        ),
        ({"affinity": "x"}, "spec.affinity"),
        ({"priority": "high"}, "spec.priority"),
        ({"priority": True}, "spec.priority"),
        ({"nodeSelector": ["a"]}, "spec.nodeSelector"),
        ({"schedulingGates": ["gate"]}, "spec.schedulingGates[0]"),
    ],
)
def test_pod_malformed_field_names_its_path(spec: dict[str, Any], path: str) -> None:
    with pytest.raises(ObjectError) as info:
        Pod.from_dict(pod_dict("p", spec=spec))
    assert info.value.path == path
    assert str(info.value).startswith(f"{path}: ")


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda d: d["metadata"].pop("name"), "metadata.name"),
        (lambda d: d["metadata"].update(labels=["a"]), "metadata.labels"),
        (lambda d: d["metadata"].update(creationTimestamp="yesterday"), "metadata.creationTimestamp"),
        (lambda d: d["status"].update(startTime="soon"), "status.startTime"),
        (lambda d: d.update(spec=[]), "spec"),
    ],
)
def test_pod_malformed_metadata_and_status(mutate: Any, path: str) -> None:
    raw = pod_dict("p")
    mutate(raw)
    with pytest.raises(ObjectError) as info:
        Pod.from_dict(raw)
    assert info.value.path == path


def test_pod_defaults() -> None:
    raw = pod_dict("p", spec={"schedulerName": None, "priority": None})
    raw["metadata"].pop("namespace")
    pod = Pod.from_dict(raw)
    assert (pod.namespace, pod.key, pod.scheduler_name, pod.priority, pod.preemption_policy, pod.phase) == (
        "default",
        "default/p",
        "default-scheduler",
        0,
        "PreemptLowerPriority",
        "Pending",
    )
    assert pod.node_affinity is None and pod.tolerations == () and pod.scheduling_gates == ()


def test_pod_host_ports_from_app_containers_only() -> None:
    pod = Pod.from_dict(
        pod_dict(
            "p",
            spec={
                "containers": [
                    {
                        "name": "a",
                        "ports": [
                            {"containerPort": 80},
                            {"containerPort": 80, "hostPort": 8080},
                            {"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"},
                        ],
                    },
                    {"name": "b", "ports": [{"containerPort": 9, "hostPort": 0}]},
                ],
                # kube-scheduler v1.30 (NodePorts, NodeInfo.updateUsedPorts) reads spec.containers only
                "initContainers": [{"name": "i", "ports": [{"containerPort": 1, "hostPort": 1000}]}],
            },
        )
    )
    assert pod.host_ports == (ContainerPort(8080, "TCP", ""), ContainerPort(53, "UDP", "10.0.0.1"))


def test_pod_images_init_then_app() -> None:
    pod = Pod.from_dict(
        pod_dict(
            "p",
            spec={
                "containers": [{"name": "a", "image": "nginx:1"}, {"name": "b", "image": "redis"}],
                "initContainers": [{"name": "i", "image": "busybox"}],
            },
        )
    )
    assert pod.images() == ("busybox", "nginx:1", "redis")


def test_pod_sidecar_flag_only_on_init_containers() -> None:
    pod = Pod.from_dict(
        pod_dict(
            "p",
            spec={
                "containers": [{"name": "a", "restartPolicy": "Always"}],
                "initContainers": [
                    {"name": "s", "restartPolicy": "Always"},
                    {"name": "i", "restartPolicy": "OnFailure"},
                ],
            },
        )
    )
    assert [c.is_sidecar for c in pod.containers] == [False]
    assert [c.is_sidecar for c in pod.init_containers] == [True, False]


def test_pod_keeps_raw_and_parses_tolerations_gates_affinity() -> None:
    raw = pod_dict(
        "p",
        spec={
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
            "schedulingGates": [{"name": "g1"}, {"name": "g2"}],
            "affinity": {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 5, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}
                    ]
                }
            },
            "nodeSelector": {"disk": "ssd"},
            "nodeName": "n1",
        },
    )
    pod = Pod.from_dict(raw)
    assert pod.raw is raw
    assert pod.tolerations[0].key == "k" and pod.tolerations[0].operator == "Exists"
    assert pod.scheduling_gates == ("g1", "g2")
    assert pod.node_affinity is not None and pod.node_affinity.required is None
    assert [p.weight for p in pod.node_affinity.preferred] == [5]
    assert dict(pod.node_selector) == {"disk": "ssd"}
    assert pod.node_name == "n1"


@pytest.mark.parametrize(
    ("status", "want_alloc", "want_cap"),
    [
        pytest.param(
            {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
            {"cpu": 4000, "memory": 8 * Gi, "pods": 110},
            {"cpu": 4000, "memory": 8 * Gi, "pods": 110},
            id="allocatable defaults to capacity",
        ),
        pytest.param(
            {"capacity": {"cpu": "4", "pods": "110"}, "allocatable": {"cpu": "3500m"}},
            {"cpu": 3500},
            {"cpu": 4000, "pods": 110},
            id="allocatable given",
        ),
        pytest.param(
            {"capacity": {"cpu": "4"}, "allocatable": {}},
            {},
            {"cpu": 4000},
            id="explicit empty allocatable is not defaulted",
        ),
        pytest.param(
            {"allocatable": {"nvidia.com/gpu": "8", "hugepages-2Mi": "0", "foo": "3"}},
            {"nvidia.com/gpu": 8, "hugepages-2Mi": 0},
            {},
            id="extended kept, untracked dropped",
        ),
        pytest.param({}, {}, {}, id="no status"),
    ],
)
def test_node_allocatable(status: dict[str, Any], want_alloc: dict[str, int], want_cap: dict[str, int]) -> None:
    node = Node.from_dict({"metadata": {"name": "n"}, "status": status})
    assert dict(node.allocatable) == want_alloc
    assert dict(node.capacity) == want_cap


def test_node_taints_images_and_flags() -> None:
    raw = node_dict(
        "n1",
        taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}, {"key": "spot", "effect": "PreferNoSchedule"}],
        unschedulable=True,
        images=[{"names": ["nginx:1", "docker.io/nginx:1"], "sizeBytes": 1000}, {"names": ["redis"]}],
        labels={"zone": "a"},
    )
    node = Node.from_dict(raw)
    assert node.name == "n1" and node.labels["zone"] == "a" and node.meta.namespace == ""
    assert node.unschedulable is True
    assert node.taints == (Taint("gpu", "true", "NoSchedule"), Taint("spot", "", "PreferNoSchedule"))
    assert node.images == (ImageState(("nginx:1", "docker.io/nginx:1"), 1000), ImageState(("redis",), 0))


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (
            lambda d: d["spec"].update(taints=[{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "Never"}]),
            "spec.taints[1].effect",
        ),
        (lambda d: d["spec"].update(taints=[{"key": "bad key!", "effect": "NoSchedule"}]), "spec.taints[0].key"),
        (lambda d: d["status"].update(images=[{"names": ["a"], "sizeBytes": "big"}]), "status.images[0].sizeBytes"),
        (lambda d: d["status"].update(images=[{"names": "a"}]), "status.images[0].names"),
        (lambda d: d["status"]["allocatable"].update(cpu="lots"), "status.allocatable.cpu"),
        (lambda d: d["status"]["capacity"].update(memory="1Gb"), "status.capacity.memory"),
    ],
)
def test_node_malformed_field_names_its_path(mutate: Any, path: str) -> None:
    raw = node_dict("n1")
    mutate(raw)
    with pytest.raises(ObjectError) as info:
        Node.from_dict(raw)
    assert info.value.path == path


@pytest.mark.parametrize(
    ("parse", "raw", "path", "reason"),
    [
        pytest.param(
            Node.from_dict,
            {**node_dict("n"), "spec": {"unschedulable": "false"}},
            "spec.unschedulable",
            'expected a boolean (true or false), got string "false"',
            id="node-unschedulable-quoted",
        ),
        pytest.param(
            Pod.from_dict,
            pod_dict("p", spec={"nodeSelector": {"ssd": True}}),
            "spec.nodeSelector.ssd",
            "expected a string, got boolean true",
            id="pod-node-selector-boolean",
        ),
        pytest.param(
            Pod.from_dict,
            pod_dict("p", spec={"containers": [{"name": "c", "ports": [{"hostPort": 70000}]}]}),
            "spec.containers[0].ports[0].hostPort",
            "Invalid value: 70000",
            id="pod-host-port-range",
        ),
        pytest.param(
            Pod.from_dict,
            pod_dict("p", spec={"nodeName": 5}),
            "spec.nodeName",
            "expected a string",
            id="pod-node-name-number",
        ),
    ],
)
def test_views_check_the_types_they_read(parse: Any, raw: dict[str, Any], path: str, reason: str) -> None:
    with pytest.raises(ObjectError) as info:
        parse(raw)
    assert info.value.path == path
    assert info.value.reason.startswith(reason)


def test_priority_class_global_default_must_be_a_boolean() -> None:
    raw = {"metadata": {"name": "high"}, "value": 1, "globalDefault": "true"}
    with pytest.raises(ObjectError, match="globalDefault: expected a boolean"):
        PriorityClass.from_dict(raw)


def test_disruption_budget_fields_are_typed_but_a_bad_selector_protects_nothing() -> None:
    base = {"metadata": {"name": "b", "namespace": "web"}, "spec": {"selector": {"matchLabels": {"app": "x"}}}}
    with pytest.raises(ObjectError, match=r'status\.disruptionsAllowed: expected an integer, got string "1"'):
        PodDisruptionBudget.from_dict({**base, "status": {"disruptionsAllowed": "1"}})
    with pytest.raises(ObjectError, match="spec: expected a mapping"):
        PodDisruptionBudget.from_dict({**base, "spec": ["x"]})
    bad_selector = {**base, "spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Bogus"}]}}}
    assert PodDisruptionBudget.from_dict(bad_selector).selector is None


def test_amounts_beyond_the_snapshot_columns_are_refused_by_the_views() -> None:
    # A real API server accepts these; the scheduler must refuse them rather than overflow.
    with pytest.raises(ObjectError, match=r"^status\.allocatable\.cpu: Invalid value: \"1E\""):
        Node.from_dict(node_dict("n", cpu="1E"))
    containers = [{"name": f"c{i}", "resources": {"requests": {"memory": "8Pi"}}} for i in range(3)]
    with pytest.raises(ObjectError, match=r"total request of the pod\)\.memory: Invalid value"):
        Pod.from_dict(pod_dict("p", spec={"containers": containers}))


def test_pods_sharing_a_spec_share_its_parse_but_not_their_own_fields() -> None:
    spec = {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "250m", "memory": "1Gi"}}}],
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "zone"}
                ]
            }
        },
    }
    a = Pod.from_dict(pod_dict("a", spec=copy.deepcopy(spec), namespace="one"))
    b = Pod.from_dict(
        {
            **pod_dict("b", spec=copy.deepcopy(spec), namespace="one"),
            "status": {"phase": "Running", "nominatedNodeName": "n1"},
        }
    )
    assert (a.name, b.name, a.phase, b.phase, b.nominated_node_name) == ("a", "b", "Pending", "Running", "n1")
    assert a.requests == b.requests == {"cpu": 250, "memory": 1 << 30}
    assert a.containers is b.containers  # one parse for both
    bound = Pod.from_dict(pod_dict("bound", spec={**copy.deepcopy(spec), "nodeName": "n1"}, namespace="one"))
    assert (bound.node_name, a.node_name, bound.containers is a.containers) == ("n1", "", True)
    # The namespace is part of what a spec means: affinity terms default to the pod's own namespace.
    c = Pod.from_dict(pod_dict("c", spec=copy.deepcopy(spec), namespace="two"))
    assert c.pod_affinity != a.pod_affinity
    # A different spec is parsed for itself, and a bad one is refused every time it is seen.
    d = Pod.from_dict(pod_dict("d", spec={**copy.deepcopy(spec), "priority": 7}, namespace="one"))
    assert (d.priority, a.priority) == (7, 0)
    for _ in range(2):
        with pytest.raises(ObjectError) as info:
            Pod.from_dict(pod_dict("e", spec={**copy.deepcopy(spec), "priority": "high"}))
        assert info.value.path == "spec.priority"


def test_nodes_of_one_shape_share_its_parse_but_keep_their_own_names() -> None:
    taint = [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]
    a = Node.from_dict(node_dict("a", cpu="8", labels={"zone": "x"}, taints=taint))
    b = Node.from_dict(node_dict("b", cpu="8", labels={"zone": "y"}, taints=taint))
    assert (a.name, b.name, a.labels["zone"], b.labels["zone"]) == ("a", "b", "x", "y")
    assert a.allocatable is b.allocatable and a.taints == b.taints
    c = Node.from_dict(node_dict("c", cpu="16", taints=taint))
    assert (c.allocatable["cpu"], a.allocatable["cpu"]) == (16000, 8000)
    bad = node_dict("d", cpu="8", taints=taint)
    bad["spec"]["unschedulable"] = "yes"
    for _ in range(2):
        with pytest.raises(ObjectError) as info:
            Node.from_dict(bad)
        assert info.value.path == "spec.unschedulable"


def test_a_pod_copied_from_its_spec_template_is_the_pod_its_fields_make() -> None:
    import dataclasses

    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}], "priority": 3}
    first = Pod.from_dict(pod_dict("a", spec=copy.deepcopy(spec), labels={"app": "x"}))
    raw = {
        **pod_dict("b", spec={**copy.deepcopy(spec), "nodeName": "n1"}, labels={"app": "y"}),
        "status": {"phase": "Running", "nominatedNodeName": "n2", "startTime": "2024-01-01T00:00:05Z"},
    }
    second = Pod.from_dict(raw)  # a copy of the template the first parse made
    names = [f.name for f in dataclasses.fields(Pod)]
    expected = Pod(**{**{n: getattr(first, n) for n in names}, **{n: getattr(second, n) for n in _OWN}})
    assert [getattr(second, n) for n in names] == [getattr(expected, n) for n in names]
    assert (second.raw, second.node_name, second.phase, second.nominated_node_name) == (raw, "n1", "Running", "n2")
    assert (second.labels, second.start_time.second if second.start_time else None) == ({"app": "y"}, 5)
    assert (first.node_name, first.phase, first.start_time, first.labels) == ("", "Pending", None, {"app": "x"})
    # A spec that is a mapping but no dict is parsed whole, its node name with it.
    proxied = Pod.from_dict({**pod_dict("c"), "spec": types.MappingProxyType({**spec, "nodeName": "n3"})})
    assert (proxied.node_name, proxied.priority) == ("n3", 3)


_OWN = ("raw", "meta", "node_name", "phase", "nominated_node_name", "start_time")
