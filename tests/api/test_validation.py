"""What the API server would refuse, for every kind a scenario may hold: one row per case.

Each row is a valid object of its kind with one field made bad, and the field path and the start
of the reason the error must give.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api.errors import ObjectError
from kubesched.api.validation import validate_object
from tests.factories import node_dict, pod_dict


def _pod(**spec: Any) -> dict[str, Any]:
    return pod_dict("p", spec=spec)


def _container(**resources: Any) -> dict[str, Any]:
    return _pod(containers=[{"name": "c", "image": "x", "resources": resources}])


VALID: dict[str, dict[str, Any]] = {
    "Pod": pod_dict("p", cpu="100m", memory="1Gi"),
    "Node": node_dict("n", extra={"nvidia.com/gpu": "4", "hugepages-2Mi": "1Gi", "attachable-volumes-aws-ebs": "25"}),
    "PriorityClass": {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 1000,
        "globalDefault": False,
        "preemptionPolicy": "Never",
    },
    "Namespace": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "web", "labels": {"team": "a"}}},
    "Service": {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]},
    },
    "ReplicaSet": {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "rs"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
        },
    },
    "PodDisruptionBudget": {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b"},
        "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}},
        "status": {"disruptionsAllowed": 1},
    },
    "PersistentVolume": {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv"},
        "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"]},
    },
    "PersistentVolumeClaim": {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    },
    "StorageClass": {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "sc"},
        "provisioner": "x",
        "volumeBindingMode": "WaitForFirstConsumer",
    },
    "VolumeAttachment": {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": "va"},
        "spec": {"attacher": "ebs.csi.aws.com", "nodeName": "n", "source": {"persistentVolumeName": "pv"}},
    },
}


@pytest.mark.parametrize("kind", sorted(VALID))
def test_valid_objects_pass(kind: str) -> None:
    validate_object(VALID[kind])


def _with(kind: str, path: str, value: Any) -> dict[str, Any]:
    """VALID[kind] with the field at dotted ``path`` set to ``value`` (``...`` deletes it)."""
    obj = copy.deepcopy(VALID[kind])
    *parents, last = path.split(".")
    node = obj
    for part in parents:
        node = node.setdefault(part, {})
    if value is ...:
        node.pop(last, None)
    else:
        node[last] = value
    return obj


# (case, object, field path, reason starts with)
ROWS: list[tuple[str, dict[str, Any], str, str]] = [
    # spec and status must be mappings, for every kind
    *[
        (f"{kind} {part} not a mapping", _with(kind, part, value), part, "expected a mapping, got ")
        for kind in (
            "PodDisruptionBudget",
            "PersistentVolume",
            "PersistentVolumeClaim",
            "Service",
            "Namespace",
            "ReplicaSet",
            "Node",
            "Pod",
        )
        for part, value in (("spec", [1]), ("status", "Running"))
    ],
    ("Pod without spec", _with("Pod", "spec", ...), "spec", "Required value"),
    # VolumeAttachments: who attaches what where
    ("attachment without attacher", _with("VolumeAttachment", "spec.attacher", ""), "spec.attacher", "Required value"),
    ("attachment without node", _with("VolumeAttachment", "spec.nodeName", ...), "spec.nodeName", "Required value"),
    (
        "attachment of nothing",
        _with("VolumeAttachment", "spec.source", {}),
        "spec.source",
        "Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName",
    ),
    (
        "attachment of two things",
        _with("VolumeAttachment", "spec.source.inlineVolumeSpec", {}),
        "spec.source",
        "Forbidden: must specify exactly one",
    ),
    (
        "attachment of an empty PV name",
        _with("VolumeAttachment", "spec.source.persistentVolumeName", ""),
        "spec.source.persistentVolumeName",
        "Required value: must specify non empty persistentVolumeName",
    ),
    (
        "attachment PV name a number",
        _with("VolumeAttachment", "spec.source.persistentVolumeName", 3),
        "spec.source.persistentVolumeName",
        "expected a string",
    ),
    (
        "spread constraints repeating a key and action",
        _pod(
            containers=[{"name": "c"}],
            topologySpreadConstraints=[
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"},
                {"maxSkew": 3, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
            ],
        ),
        "spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}",
        'Duplicate value: "{zone, DoNotSchedule}"',
    ),
    (
        "PV attributes class a number",
        _with("PersistentVolume", "spec.volumeAttributesClassName", 1),
        "spec.volumeAttributesClassName",
        "expected a string",
    ),
    # strings where booleans are due, and the reverse
    (
        "unschedulable quoted",
        _with("Node", "spec.unschedulable", "false"),
        "spec.unschedulable",
        'expected a boolean (true or false), got string "false"',
    ),
    (
        "globalDefault quoted",
        _with("PriorityClass", "globalDefault", "true"),
        "globalDefault",
        'expected a boolean (true or false), got string "true"',
    ),
    (
        "nodeSelector boolean",
        _pod(nodeSelector={"ssd": True}),
        "spec.nodeSelector.ssd",
        "expected a string, got boolean true",
    ),
    (
        "nodeSelector number",
        _pod(nodeSelector={"rack": 7}),
        "spec.nodeSelector.rack",
        "expected a string, got integer 7",
    ),
    (
        "label number",
        _with("Namespace", "metadata.labels", {"tier": 1}),
        "metadata.labels.tier",
        "expected a string, got integer 1",
    ),
    (
        "matchLabels number",
        _with("PodDisruptionBudget", "spec.selector", {"matchLabels": {"app": 1}}),
        "spec.selector.matchLabels.app",
        "expected a string",
    ),
    (
        "service selector boolean",
        _with("Service", "spec.selector", {"canary": False}),
        "spec.selector.canary",
        "expected a string, got boolean false",
    ),
    (
        "priority class value quoted",
        _with("PriorityClass", "value", "1"),
        "value",
        'expected an integer, got string "1"',
    ),
    (
        "priority class value too high",
        _with("PriorityClass", "value", 2_000_000_000),
        "value",
        "Invalid value: 2000000000: must be less than or equal to 1000000000",
    ),
    ("pod priority beyond int32", _pod(priority=2**31), "spec.priority", "Invalid value: 2147483648"),
    ("replicas quoted", _with("ReplicaSet", "spec.replicas", "2"), "spec.replicas", "expected an integer"),
    (
        "replicas negative",
        _with("ReplicaSet", "spec.replicas", -1),
        "spec.replicas",
        "Invalid value: -1: must be greater than or equal to 0",
    ),
    ("template spec bad", _with("ReplicaSet", "spec.template.spec", "x"), "spec.template.spec", "expected a mapping"),
    (
        "pdb bad percent",
        _with("PodDisruptionBudget", "spec.minAvailable", "half"),
        "spec.minAvailable",
        'Invalid value: "half"',
    ),
    (
        "pdb both bounds",
        _with("PodDisruptionBudget", "spec.maxUnavailable", 1),
        "spec",
        "Invalid value: minAvailable and maxUnavailable cannot be both set",
    ),
    (
        "pdb status quoted",
        _with("PodDisruptionBudget", "status.disruptionsAllowed", "1"),
        "status.disruptionsAllowed",
        "expected an integer",
    ),
    (
        "pdb status negative",
        _with("PodDisruptionBudget", "status.disruptionsAllowed", -1),
        "status.disruptionsAllowed",
        "Invalid value: -1: must be greater than or equal to 0",
    ),
    (
        "pv access mode",
        _with("PersistentVolume", "spec.accessModes", ["ReadWriteSometimes"]),
        "spec.accessModes[0]",
        'Unsupported value: "ReadWriteSometimes"',
    ),
    (
        "pvc negative storage",
        _with("PersistentVolumeClaim", "spec.resources", {"requests": {"storage": "-1Gi"}}),
        "spec.resources.requests.storage",
        'Invalid value: "-1Gi": must be greater than or equal to 0',
    ),
    (
        "storage class binding mode",
        _with("StorageClass", "volumeBindingMode", "Later"),
        "volumeBindingMode",
        'Unsupported value: "Later"',
    ),
    # names
    (
        "pod name with a slash",
        _with("Pod", "metadata.name", "web/1"),
        "metadata.name",
        'Invalid value: "web/1": a lowercase RFC 1123 subdomain',
    ),
    (
        "node name upper case",
        _with("Node", "metadata.name", "Node_1"),
        "metadata.name",
        'Invalid value: "Node_1": a lowercase RFC 1123 subdomain',
    ),
    (
        "namespace name with a dot",
        _with("Namespace", "metadata.name", "a.b"),
        "metadata.name",
        'Invalid value: "a.b": a lowercase RFC 1123 label',
    ),
    (
        "pod namespace upper case",
        _with("Pod", "metadata.namespace", "Web"),
        "metadata.namespace",
        'Invalid value: "Web": a lowercase RFC 1123 label',
    ),
    # ports
    (
        "host port out of range",
        _pod(containers=[{"name": "c", "ports": [{"containerPort": 80, "hostPort": 70000}]}]),
        "spec.containers[0].ports[0].hostPort",
        "Invalid value: 70000: must be between 0 and 65535, inclusive",
    ),
    (
        "container port zero",
        _pod(containers=[{"name": "c", "ports": [{"containerPort": 0}]}]),
        "spec.containers[0].ports[0].containerPort",
        "Invalid value: 0: must be between 1 and 65535",
    ),
    (
        "port quoted",
        _pod(containers=[{"name": "c", "ports": [{"containerPort": "80"}]}]),
        "spec.containers[0].ports[0].containerPort",
        'expected an integer, got string "80"',
    ),
    (
        "service port out of range",
        _with("Service", "spec.ports", [{"port": 65536}]),
        "spec.ports[0].port",
        "Invalid value: 65536: must be between 1 and 65535",
    ),
    (
        "protocol",
        _pod(containers=[{"name": "c", "ports": [{"containerPort": 80, "protocol": "HTTP"}]}]),
        "spec.containers[0].ports[0].protocol",
        'Unsupported value: "HTTP"',
    ),
    # resource names and amounts
    (
        "request CPU",
        _container(requests={"CPU": "1"}),
        "spec.containers[0].resources.requests.CPU",
        'Invalid value: "CPU": must be a standard resource type or fully qualified',
    ),
    (
        "request gpu",
        _container(limits={"gpu": "1"}),
        "spec.containers[0].resources.limits.gpu",
        'Invalid value: "gpu": must be a standard resource type or fully qualified',
    ),
    (
        "node memroy",
        _with("Node", "status.allocatable", {"memroy": "1Gi"}),
        "status.allocatable.memroy",
        'Invalid value: "memroy": must be a standard resource type or fully qualified (did you mean "memory"?)',
    ),
    (
        "negative request",
        _container(requests={"memory": "-1Gi"}),
        "spec.containers[0].resources.requests.memory",
        'Invalid value: "-1Gi": must be greater than or equal to 0',
    ),
    (
        "negative limit",
        _container(limits={"cpu": "-1"}),
        "spec.containers[0].resources.limits.cpu",
        'Invalid value: "-1": must be greater than or equal to 0',
    ),
    (
        "negative overhead",
        _pod(overhead={"cpu": "-100m"}),
        "spec.overhead.cpu",
        'Invalid value: "-100m": must be greater than or equal to 0',
    ),
    (
        "negative allocatable",
        _with("Node", "status.allocatable", {"cpu": "-4"}),
        "status.allocatable.cpu",
        'Invalid value: "-4": must be greater than or equal to 0',
    ),
    (
        "fractional device",
        _container(limits={"nvidia.com/gpu": "0.5"}),
        "spec.containers[0].resources.limits.nvidia.com/gpu",
        'Invalid value: "0.5": must be an integer',
    ),
    (
        "fractional device on a node",
        _with("Node", "status.capacity", {"nvidia.com/gpu": 1.5}),
        "status.capacity.nvidia.com/gpu",
        'Invalid value: "1.5": must be an integer',
    ),
    (
        "request above limit",
        _container(requests={"cpu": "2"}, limits={"cpu": "1"}),
        "spec.containers[0].resources.requests.cpu",
        "must be less than or equal to cpu limit of 1",
    ),
    (
        "device request without limit",
        _container(requests={"nvidia.com/gpu": "1"}),
        "spec.containers[0].resources.limits",
        "Required value: Limit must be set for non overcommitable resources",
    ),
    (
        "device request below limit",
        _container(requests={"nvidia.com/gpu": "1"}, limits={"nvidia.com/gpu": "2"}),
        "spec.containers[0].resources.requests.nvidia.com/gpu",
        "must be equal to nvidia.com/gpu limit of 2",
    ),
    (
        "huge pages alone",
        _container(limits={"hugepages-2Mi": "4Mi"}),
        "spec.containers[0].resources",
        "Forbidden: HugePages require cpu or memory",
    ),
    (
        "allocatable beyond the columns",
        _with("Node", "status.allocatable", {"cpu": "1E"}),
        "status.allocatable.cpu",
        'Invalid value: "1E": must be less than or equal to',
    ),
    (
        "request beyond the columns",
        _container(requests={"memory": "100E"}),
        "spec.containers[0].resources.requests.memory",
        'Invalid value: "100E": must be less than or equal to',
    ),
    ("pod-level resources not a mapping", _pod(resources=["cpu"]), "spec.resources", "expected a mapping, got "),
    (
        "pod-level request not a quantity",
        _pod(resources={"requests": {"cpu": "lots"}}),
        "spec.resources.requests.cpu",
        'invalid quantity "lots"',
    ),
    (
        "pod total beyond the columns",
        _pod(containers=[{"name": f"c{i}", "resources": {"requests": {"memory": "8Pi"}}} for i in range(3)]),
        "spec.containers (total memory request of the pod)",
        "Invalid value: ",
    ),
]


@pytest.mark.parametrize(("case", "obj", "path", "reason"), ROWS, ids=[r[0] for r in ROWS])
def test_refused_with_the_field_and_what_was_expected(case: str, obj: dict[str, Any], path: str, reason: str) -> None:
    with pytest.raises(ObjectError) as info:
        validate_object(obj)
    assert info.value.path == path
    assert info.value.reason.startswith(reason), info.value.reason


def test_requests_default_to_limits_before_the_checks() -> None:
    validate_object(_container(limits={"nvidia.com/gpu": "2", "cpu": "1"}))
    validate_object(_container(requests={"cpu": "500m"}, limits={"cpu": "1"}))
    validate_object(_container(limits={"hugepages-2Mi": "4Mi", "memory": "1Gi"}))


def test_a_spec_found_valid_once_is_still_checked_when_it_changes() -> None:
    good = _container(requests={"cpu": "500m"}, limits={"cpu": "1"})
    validate_object(good)
    validate_object(copy.deepcopy(good))  # the same content again
    bad = copy.deepcopy(good)
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    for _ in range(2):
        with pytest.raises(ObjectError) as info:
            validate_object(bad)
        assert info.value.path == "spec.containers[0].resources.requests.cpu"


def test_a_node_shape_found_valid_once_is_still_checked_when_it_changes() -> None:
    validate_object(node_dict("a", cpu="8"))
    validate_object(node_dict("b", cpu="8"))  # the same shape again
    for _ in range(2):
        with pytest.raises(ObjectError) as info:
            validate_object(node_dict("c", cpu="-8"))
        assert info.value.path == "status.capacity.cpu"
