"""Defaulting and admission on create, one row per rule the scheduler depends on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kubesched.cluster.protocol import Forbidden, Invalid
from kubesched.config.features import feature_gates
from kubesched.embedded.apiserver import EmbeddedCluster
from tests.embedded.conftest import FakeClock, node, pod


def priority_class(name: str, value: int, **extra: Any) -> dict:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        **extra,
    }


def storage_class(name: str, default: bool = False, **extra: Any) -> dict:
    meta: dict = {"name": name}
    if default:
        meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": meta,
        "provisioner": "p",
        **extra,
    }


def pvc(name: str, **spec: Any) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"resources": {"requests": {"storage": "1Gi"}}, **spec},
    }


def get(obj: dict, path: str) -> Any:
    for part in path.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None  # type: ignore[assignment]
    return obj


Row = tuple[str, list[dict], dict, dict[str, Any]]

DEFAULTING: list[Row] = [
    (
        "node allocatable from capacity",
        [],
        node("n", capacity={"cpu": "4", "pods": "110"}),
        {"status.allocatable": {"cpu": "4", "pods": "110"}},
    ),
    (
        "node allocatable kept",
        [],
        node("n", capacity={"cpu": "4"}, allocatable={"cpu": "3"}),
        {"status.allocatable": {"cpu": "3"}},
    ),
    ("node without capacity", [], node("n"), {"status.allocatable": None}),
    (
        "pod defaults",
        [],
        pod("p"),
        {
            "spec.schedulerName": "default-scheduler",
            "spec.priority": 0,
            "spec.preemptionPolicy": "PreemptLowerPriority",
            "spec.restartPolicy": "Always",
            "status.phase": "Pending",
            "status.startTime": None,
        },
    ),
    ("scheduler name kept", [], pod("p", schedulerName="mine"), {"spec.schedulerName": "mine"}),
    (
        "bound pod is running since creation",
        [],
        pod("p", nodeName="n1"),
        {"status.phase": "Running", "status.startTime": "2024-01-01T00:00:00Z"},
    ),
    (
        "storage class binding mode",
        [],
        storage_class("sc"),
        {"volumeBindingMode": "Immediate"},
    ),
    (
        "storage class binding mode kept",
        [],
        storage_class("sc", volumeBindingMode="WaitForFirstConsumer"),
        {"volumeBindingMode": "WaitForFirstConsumer"},
    ),
    ("priority class policy", [], priority_class("pc", 5), {"preemptionPolicy": "PreemptLowerPriority"}),
    (
        "priority class policy kept",
        [],
        priority_class("pc", 5, preemptionPolicy="Never"),
        {"preemptionPolicy": "Never"},
    ),
    (
        "namespace label",
        [],
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": {"a": "b"}}},
        {"metadata.labels": {"a": "b", "kubernetes.io/metadata.name": "team"}},
    ),
    (
        "priority from class",
        [priority_class("high", 1000, preemptionPolicy="Never")],
        pod("p", priorityClassName="high"),
        {"spec.priority": 1000, "spec.preemptionPolicy": "Never"},
    ),
    (
        "matching priority given with class",
        [priority_class("high", 1000)],
        pod("p", priorityClassName="high", priority=1000),
        {"spec.priority": 1000},
    ),
    (
        "global default class",
        [
            priority_class("low", 10),
            priority_class("dflt", 100, globalDefault=True, preemptionPolicy="Never"),
        ],
        pod("p"),
        {"spec.priority": 100, "spec.priorityClassName": "dflt", "spec.preemptionPolicy": "Never"},
    ),
    (
        "system-node-critical is built in",
        [],
        pod("p", priorityClassName="system-node-critical"),
        {"spec.priority": 2000001000},
    ),
    (
        "system-cluster-critical is built in",
        [],
        pod("p", priorityClassName="system-cluster-critical"),
        {"spec.priority": 2000000000},
    ),
    (
        "default storage class",
        [storage_class("plain"), storage_class("fast", default=True)],
        pvc("c"),
        {"spec.storageClassName": "fast"},
    ),
    ("no default storage class", [storage_class("plain")], pvc("c"), {"spec.storageClassName": None}),
    (
        "explicit empty class stays",
        [storage_class("fast", default=True)],
        pvc("c", storageClassName=""),
        {"spec.storageClassName": ""},
    ),
    (
        "explicit class stays",
        [storage_class("fast", default=True)],
        pvc("c", storageClassName="slow"),
        {"spec.storageClassName": "slow"},
    ),
    ("claim phase", [], pvc("c"), {"status.phase": "Pending"}),
]


@pytest.mark.parametrize(("name", "existing", "obj", "want"), DEFAULTING, ids=[r[0] for r in DEFAULTING])
def test_admission(cluster: EmbeddedCluster, name: str, existing: list[dict], obj: dict, want: dict[str, Any]) -> None:
    for other in existing:
        cluster.create(other)
    created = cluster.create(obj)
    for path, value in want.items():
        assert get(created, path) == value, path


def test_requests_default_to_limits_per_resource(cluster: EmbeddedCluster) -> None:
    p = pod("p")
    p["spec"]["containers"] = [
        {"name": "a", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}}},
        {"name": "b", "resources": {"limits": {"nvidia.com/gpu": "1"}}},
        {"name": "c"},
    ]
    p["spec"]["initContainers"] = [{"name": "i", "resources": {"limits": {"cpu": "3"}}}]
    spec = cluster.create(p)["spec"]
    assert spec["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    assert spec["containers"][1]["resources"]["requests"] == {"nvidia.com/gpu": "1"}
    assert "resources" not in spec["containers"][2]
    assert spec["initContainers"][0]["resources"]["requests"] == {"cpu": "3"}


@pytest.mark.parametrize(
    ("host_network", "ports", "want"),
    [
        (True, [{"containerPort": 8080}], [{"containerPort": 8080, "hostPort": 8080}]),
        (True, [{"containerPort": 8080, "hostPort": 9090}], [{"containerPort": 8080, "hostPort": 9090}]),
        (False, [{"containerPort": 8080}], [{"containerPort": 8080}]),
    ],
    ids=["host-network-fills-host-port", "explicit-host-port-kept", "pod-network-untouched"],
)
def test_host_network_ports_become_host_ports(
    cluster: EmbeddedCluster, host_network: bool, ports: list[dict[str, int]], want: list[dict[str, int]]
) -> None:
    p = pod("p")
    p["spec"]["hostNetwork"] = host_network
    p["spec"]["containers"] = [{"name": "a", "ports": ports}]
    assert cluster.create(p)["spec"]["containers"][0]["ports"] == want


def test_namespaces_are_created_when_referenced(cluster: EmbeddedCluster) -> None:
    cluster.create(pod("p", "team"))
    cluster.create(pod("q", "team"))
    ns = cluster.get("Namespace", None, "team")
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team"}
    assert [n["metadata"]["name"] for n in cluster.list("Namespace")[0]] == ["team"]


def test_default_storage_class_newest_wins(cluster: EmbeddedCluster, clock: FakeClock) -> None:
    cluster.create(storage_class("old", default=True))
    clock.advance(1)
    cluster.create(storage_class("new", default=True))
    assert cluster.create(pvc("c"))["spec"]["storageClassName"] == "new"


def test_builtin_priority_classes_are_listed(cluster: EmbeddedCluster) -> None:
    classes = {pc["metadata"]["name"]: pc["value"] for pc in cluster.list("PriorityClass")[0]}
    assert classes == {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}


FORBIDDEN: list[tuple[str, list[dict], dict, str]] = [
    (
        "unknown class",
        [],
        pod("x", priorityClassName="foo"),
        'pods "x" is forbidden: no PriorityClass with name foo was found',
    ),
    (
        "priority differs from class",
        [priority_class("high", 1000)],
        pod("x", priorityClassName="high", priority=5),
        'pods "x" is forbidden: the integer value of priority (5) must not be provided in pod spec; '
        "priority admission controller computed 1000 from the given PriorityClass name",
    ),
    (
        "preemption policy differs from class",
        [priority_class("high", 1000)],
        pod("x", priorityClassName="high", preemptionPolicy="Never"),
        'pods "x" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; '
        "priority admission controller computed PreemptLowerPriority from the given PriorityClass name",
    ),
    (
        "second global default",
        [priority_class("a", 1, globalDefault=True)],
        priority_class("b", 2, globalDefault=True),
        'priorityclasses "b" is forbidden: PriorityClass a is already marked as default. Only one default can exist',
    ),
]


@pytest.mark.parametrize(("name", "existing", "obj", "message"), FORBIDDEN, ids=[r[0] for r in FORBIDDEN])
def test_admission_refuses(
    make_cluster: Callable[..., EmbeddedCluster], name: str, existing: list[dict], obj: dict, message: str
) -> None:
    cluster = make_cluster()
    for other in existing:
        cluster.create(other)
    with pytest.raises(Forbidden) as info:
        cluster.create(obj)
    assert info.value.code == 403
    assert info.value.message == message
    kind = obj["kind"]
    assert obj["metadata"]["name"] not in {o["metadata"]["name"] for o in cluster.list(kind)[0]}


def test_refused_pod_does_not_create_its_namespace(cluster: EmbeddedCluster) -> None:
    with pytest.raises(Forbidden):
        cluster.create(pod("x", "team", priorityClassName="nope"))
    assert cluster.list("Namespace")[0] == []


def test_update_keeps_admitted_priority(cluster: EmbeddedCluster) -> None:
    created = cluster.create(pod("p", priorityClassName="system-node-critical"))
    del created["spec"]["priority"]
    assert cluster.update(created)["spec"]["priority"] == 2000001000


# -- pod-level resources (PodLevelResources) ----------------------------------------------------------
def _pod_level(resources: dict[str, Any], *containers: dict[str, Any]) -> dict:
    p = pod("p")
    p["spec"]["containers"] = list(containers) or [{"name": "c", "resources": {"requests": {"cpu": "200m"}}}]
    p["spec"]["resources"] = resources
    return p


def test_pod_level_requests_defaulted_from_containers_and_limits(cluster: EmbeddedCluster) -> None:
    created = cluster.create(_pod_level({"limits": {"cpu": "1", "memory": "1Gi"}}))
    assert created["spec"]["resources"] == {
        "limits": {"cpu": "1", "memory": "1Gi"},
        "requests": {"cpu": "200m", "memory": "1Gi"},
    }


def test_pod_level_resources_refused_as_the_api_server_words_it(cluster: EmbeddedCluster) -> None:
    with pytest.raises(Invalid) as info:
        cluster.create(_pod_level({"requests": {"cpu": "100m"}}))
    assert info.value.code == 422
    assert info.value.message == (
        'Pod "p" is invalid: spec.resources.requests[cpu]: Invalid value: "100m": must be '
        "greater than or equal to aggregate container requests of 200m"
    )
    assert cluster.list("Pod")[0] == []


@pytest.mark.parametrize(
    ("version", "gates"), [("1.30", None), ("1.34", {"PodLevelResources": False})], ids=["v1.30", "v1.34 gate off"]
)
def test_pod_level_resources_dropped_without_the_gate(
    make_cluster: Callable[..., EmbeddedCluster], version: str, gates: dict[str, bool] | None
) -> None:
    cluster = make_cluster(features=feature_gates(version, gates))
    created = cluster.create(_pod_level({"requests": {"cpu": "100m"}}))  # not validated: not served
    assert "resources" not in created["spec"]
    created["spec"]["resources"] = {"requests": {"cpu": "5"}}
    assert "resources" not in cluster.update(created)["spec"]


def test_pod_level_resources_kept_on_update(cluster: EmbeddedCluster) -> None:
    created = cluster.create(_pod_level({"requests": {"cpu": "1"}}))
    created["metadata"]["labels"] = {"a": "b"}
    assert cluster.update(created)["spec"]["resources"] == {"requests": {"cpu": "1"}}


# The real API server (v1.34.4, PodLevelResources on) defaults and refuses the same way.
POD_LEVEL_CASES: list[tuple[str, dict[str, Any], list[dict[str, Any]]]] = [
    (
        "limits only",
        {"limits": {"cpu": "1", "memory": "1Gi"}},
        [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "200m"}}}],
    ),
    (
        "aggregate in binary",
        {"limits": {"memory": "1Gi"}},
        [
            {"name": "a", "image": "x", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}},
            {"name": "b", "image": "x", "resources": {"requests": {"cpu": "0.1", "memory": "128Mi"}}},
        ],
    ),
    (
        "below the containers",
        {"requests": {"cpu": "100m"}},
        [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "200m"}}}],
    ),
    ("unsupported", {"requests": {"ephemeral-storage": "1Gi", "cpu": "1"}}, [{"name": "c", "image": "x"}]),
    (
        "container limit above",
        {"limits": {"cpu": "1"}},
        [{"name": "c", "image": "x", "resources": {"limits": {"cpu": "2"}}}],
    ),
    (
        "container limit above, request within",
        {"limits": {"cpu": "1"}, "requests": {"cpu": "500m"}},
        [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "2"}}}],
    ),
    (
        "hugepages from the containers",
        {"requests": {"cpu": "1"}},
        [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}, "limits": {"hugepages-2Mi": "4Mi"}}}],
    ),
    (
        "request above limit",
        {"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}},
        [{"name": "c", "image": "x"}],
    ),
]


@pytest.mark.controlplane
@pytest.mark.parametrize(("case", "resources", "containers"), POD_LEVEL_CASES, ids=[c[0] for c in POD_LEVEL_CASES])
def test_pod_level_resources_as_the_real_api_server(
    control_plane: Any, cluster: EmbeddedCluster, case: str, resources: dict[str, Any], containers: list[dict]
) -> None:
    import json

    obj = pod("p", containers=containers, resources=resources)
    proc = control_plane.kubectl(
        "create", "--dry-run=server", "-o", "json", "-f", "-", input=json.dumps(obj), check=False
    )
    try:
        ours = cluster.create(obj)
    except Invalid as err:
        # kubectl: 'The Pod "p" is invalid: <error>', or one '* <error>' line per error; ours is the first.
        assert proc.returncode != 0
        head, _, errors = proc.stderr.strip().partition(": ")
        first = errors.split("\n* ")[1] if errors.startswith("\n* ") else errors
        assert f"The {err.message}" == f"{head}: {first}"
        return
    assert proc.returncode == 0, proc.stderr
    assert ours["spec"]["resources"] == json.loads(proc.stdout)["spec"]["resources"]
