"""Unknown fields, as kube-apiserver's strict decoding finds them: one row per kind, with the path and
the did-you-mean hint; known fields anywhere (maps, lists, free-form objects) are never flagged."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.field_schema import field_schema, parse_schema
from kubesched.api.unknown_fields import field_path, object_type, unknown_fields, without_fields
from kubesched.cluster.kinds import KNOWN_KINDS
from tests.dra import claim_dict, device_class_dict, device_dict, opaque, request_dict, slice_dict, template_dict
from tests.factories import node_dict, pod_dict

TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}


def _obj(api_version: str, kind: str, **body: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": "default"}, **body}


#: A valid object of each kind, with fields at several depths (none of them unknown).
VALID: dict[str, dict[str, Any]] = {
    "Pod": pod_dict(
        "p",
        cpu="1",
        spec={
            "nodeSelector": {"disk": "ssd"},
            "tolerations": [{"key": "k", "operator": "Exists"}],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "z", "operator": "In", "values": ["a"]}]}]
                    }
                }
            },
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "web"}},
                }
            ],
            "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}],
        },
    ),
    "Node": node_dict("n", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
    "Namespace": _obj("v1", "Namespace", spec={"finalizers": ["kubernetes"]}),
    "PriorityClass": _obj("scheduling.k8s.io/v1", "PriorityClass", value=10, globalDefault=False),
    "PodDisruptionBudget": _obj(
        "policy/v1", "PodDisruptionBudget", spec={"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}
    ),
    "PersistentVolume": _obj(
        "v1",
        "PersistentVolume",
        spec={
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "csi": {"driver": "d", "volumeHandle": "h"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "z", "operator": "In", "values": ["a"]}]}]
                }
            },
        },
    ),
    "PersistentVolumeClaim": _obj(
        "v1",
        "PersistentVolumeClaim",
        spec={"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    ),
    "StorageClass": _obj(
        "storage.k8s.io/v1",
        "StorageClass",
        provisioner="p",
        volumeBindingMode="Immediate",
        allowedTopologies=[{"matchLabelExpressions": [{"key": "z", "values": ["a"]}]}],
    ),
    "CSINode": _obj(
        "storage.k8s.io/v1", "CSINode", spec={"drivers": [{"name": "d", "nodeID": "n", "allocatable": {"count": 3}}]}
    ),
    "CSIDriver": _obj("storage.k8s.io/v1", "CSIDriver", spec={"attachRequired": False}),
    "CSIStorageCapacity": _obj(
        "storage.k8s.io/v1",
        "CSIStorageCapacity",
        storageClassName="sc",
        capacity="10Gi",
        nodeTopology={"matchLabels": {"z": "a"}},
    ),
    "Deployment": _obj(
        "apps/v1",
        "Deployment",
        spec={
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": TEMPLATE,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"}},
        },
    ),
    "ReplicaSet": _obj(
        "apps/v1", "ReplicaSet", spec={"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}
    ),
    "StatefulSet": _obj(
        "apps/v1",
        "StatefulSet",
        spec={
            "selector": {"matchLabels": {"app": "web"}},
            "template": TEMPLATE,
            "serviceName": "s",
            "volumeClaimTemplates": [
                {"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "1Gi"}}}}
            ],
        },
    ),
    "DaemonSet": _obj("apps/v1", "DaemonSet", spec={"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}),
    "Job": _obj("batch/v1", "Job", spec={"completions": 3, "template": TEMPLATE}),
    "PodGroup": _obj(
        "scheduling.x-k8s.io/v1alpha1",
        "PodGroup",
        spec={"minMember": 3, "minResources": {"cpu": "3"}},
        status={"phase": "Pending"},
    ),
    "Lease": _obj("coordination.k8s.io/v1", "Lease", spec={"holderIdentity": "h", "leaseDurationSeconds": 15}),
    "ConfigMap": _obj("v1", "ConfigMap", data={"any-key": "v"}),
    "Secret": _obj("v1", "Secret", stringData={"k": "v"}, type="Opaque"),
    "Service": _obj("v1", "Service", spec={"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]}),
    "ReplicationController": _obj(
        "v1", "ReplicationController", spec={"selector": {"app": "web"}, "template": TEMPLATE}
    ),
    "Event": _obj("events.k8s.io/v1", "Event", reason="r", note="n", regarding={"kind": "Pod", "name": "p"}),
    "VolumeAttachment": _obj(
        "storage.k8s.io/v1",
        "VolumeAttachment",
        spec={"attacher": "a", "nodeName": "n", "source": {"persistentVolumeName": "pv"}},
    ),
    "DeviceClass": device_class_dict("gpu", 'device.driver == "gpu.example.com"', config=[opaque()]),
    "ResourceSlice": slice_dict("s", [device_dict("g0", {"model": "a100"}, {"memory": "80Gi"})], node="n"),
    "ResourceClaim": claim_dict(
        "c",
        request_dict("r", count=2),
        config=[{"requests": ["r"], **opaque()}],
        constraints=[{"matchAttribute": "gpu.example.com/model"}],
    ),
    "ResourceClaimTemplate": template_dict("t", request_dict("r")),
}


def test_every_kind_has_a_row() -> None:
    assert set(VALID) == set(KNOWN_KINDS)


@pytest.mark.parametrize("kind", sorted(VALID))
def test_valid_objects_have_no_unknown_field(kind: str) -> None:
    assert unknown_fields(VALID[kind]) == []


def _with(kind: str, path: str, value: Any) -> dict[str, Any]:
    """VALID[kind] with ``value`` set at ``path`` (dots; ``[i]`` steps into a list)."""
    obj = copy.deepcopy(VALID[kind])
    parent: Any = obj
    steps = path.replace("[", ".[").split(".")
    for step in steps[:-1]:
        parent = parent[int(step[1:-1])] if step.startswith("[") else parent.setdefault(step, {})
    parent[steps[-1]] = value
    return obj


UNKNOWN: list[tuple[str, str, str]] = [
    ("Pod", "spec.containers[0].resources.request", 'unknown field "request" (did you mean "requests"?)'),
    ("Pod", "spec.nodeSelectr", 'unknown field "nodeSelectr" (did you mean "nodeSelector"?)'),
    ("Pod", "metadata.lables", 'unknown field "lables" (did you mean "labels"?)'),
    (
        "Pod",
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].match",
        'unknown field "match" (did you mean "matchFields"?)',
    ),
    ("Pod", "spec.tolerations[0].efect", 'unknown field "efect" (did you mean "effect"?)'),
    (
        "Pod",
        "spec.topologySpreadConstraints[0].labelSelector.matchLabel",
        'unknown field "matchLabel" (did you mean "matchLabels"?)',
    ),
    ("Pod", "status.zzz", 'unknown field "zzz"'),
    ("Pod", "specification", 'unknown field "specification"'),
    ("Node", "spec.taints[0].efect", 'unknown field "efect" (did you mean "effect"?)'),
    ("Node", "status.allocatible", 'unknown field "allocatible" (did you mean "allocatable"?)'),
    ("Namespace", "spec.finalizer", 'unknown field "finalizer" (did you mean "finalizers"?)'),
    ("PriorityClass", "values", 'unknown field "values" (did you mean "value"?)'),
    ("PodDisruptionBudget", "spec.minAvailible", 'unknown field "minAvailible" (did you mean "minAvailable"?)'),
    (
        "PersistentVolume",
        "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].value",
        'unknown field "value" (did you mean "values"?)',
    ),
    ("PersistentVolumeClaim", "spec.resources.request", 'unknown field "request" (did you mean "requests"?)'),
    ("StorageClass", "volumeBindingMod", 'unknown field "volumeBindingMod" (did you mean "volumeBindingMode"?)'),
    ("CSINode", "spec.drivers[0].allocatable.counts", 'unknown field "counts" (did you mean "count"?)'),
    ("CSIDriver", "spec.attachRequire", 'unknown field "attachRequire" (did you mean "attachRequired"?)'),
    ("CSIStorageCapacity", "capacities", 'unknown field "capacities" (did you mean "capacity"?)'),
    (
        "Deployment",
        "spec.template.spec.containers[0].resources.request",
        'unknown field "request" (did you mean "requests"?)',
    ),
    ("Deployment", "spec.strategy.rollingUpdate.maxSurg", 'unknown field "maxSurg" (did you mean "maxSurge"?)'),
    ("ReplicaSet", "spec.replica", 'unknown field "replica" (did you mean "replicas"?)'),
    (
        "StatefulSet",
        "spec.volumeClaimTemplates[0].spec.storageClass",
        'unknown field "storageClass" (did you mean "storageClassName"?)',
    ),
    ("DaemonSet", "spec.template.metadata.label", 'unknown field "label" (did you mean "labels"?)'),
    ("Job", "spec.paralellism", 'unknown field "paralellism" (did you mean "parallelism"?)'),
    ("PodGroup", "spec.minMembers", 'unknown field "minMembers" (did you mean "minMember"?)'),
    ("Lease", "spec.holder", 'unknown field "holder" (did you mean "holderIdentity"?)'),
    ("ConfigMap", "datas", 'unknown field "datas" (did you mean "data"?)'),
    ("Service", "spec.ports[0].targetPorts", 'unknown field "targetPorts" (did you mean "targetPort"?)'),
    ("Event", "regarding.nam", 'unknown field "nam" (did you mean "name"?)'),
    (
        "VolumeAttachment",
        "spec.source.persistentVolume",
        'unknown field "persistentVolume" (did you mean "persistentVolumeName"?)',
    ),
]


@pytest.mark.parametrize(("kind", "path", "reason"), UNKNOWN, ids=[f"{k}-{p}" for k, p, _ in UNKNOWN])
def test_an_unknown_field_is_named_with_a_hint(kind: str, path: str, reason: str) -> None:
    (found,) = unknown_fields(_with(kind, path, {"cpu": "64"}))
    assert (found.path, found.reason) == (path, reason)


def test_all_unknown_fields_in_document_order() -> None:
    obj = _with("Pod", "spec.nodeSelectr", {})
    obj["spec"]["containers"][0]["resources"]["request"] = {}
    obj["metadata"]["lables"] = {}
    assert [u.path for u in unknown_fields(obj)] == [
        "metadata.lables",
        "spec.containers[0].resources.request",
        "spec.nodeSelectr",
    ]


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("metadata.labels", {"anything/at-all": "x"}),  # a map of strings: keys are data
        ("metadata.annotations", {"kubesched.io/arrival": "10s"}),
        ("spec.containers[0].resources.limits", {"example.com/foo": "1"}),
        ("spec.overhead", {"cpu": "1"}),
        ("metadata.managedFields", [{"manager": "m", "fieldsV1": {"f:spec": {"f:anything": {}}}}]),  # free-form
        ("spec.nodeSelector", "not a map"),  # a wrong type is validation's to report
        ("spec.containers", "not a list"),
    ],
)
def test_what_is_not_a_field_name_is_not_checked(path: str, value: Any) -> None:
    assert unknown_fields(_with("Pod", path, value)) == []


def test_objects_of_unknown_kinds_or_versions_are_not_walked() -> None:
    assert unknown_fields({"apiVersion": "v2", "kind": "Pod", "bogus": 1}) == []
    assert unknown_fields({"apiVersion": "v1", "kind": "Gadget", "bogus": 1}) == []
    assert unknown_fields({"apiVersion": ["v1"], "kind": {}, "bogus": 1}) == []
    assert object_type({"apiVersion": "apps/v1", "kind": "Deployment"}) is not None


def test_a_key_set_seen_clean_under_one_type_is_still_checked_under_another() -> None:
    # Plans are remembered per type: the same keys may be fields of one type and not of another.
    node = node_dict("n")
    assert unknown_fields(node) == []
    pod = pod_dict("p")
    pod["spec"]["containers"][0]["unschedulable"] = True  # a NodeSpec field, not a Container one
    assert [u.path for u in unknown_fields(pod)] == ["spec.containers[0].unschedulable"]


def test_without_fields_copies_only_the_way_to_what_it_drops() -> None:
    obj = _with("Pod", "spec.containers[0].resources.request", {"cpu": "64"})
    obj["spec"]["nodeSelectr"] = {"a": "b"}
    before = copy.deepcopy(obj)
    found = unknown_fields(obj)
    pruned = without_fields(obj, [u.location for u in found])
    assert obj == before  # the object given is left as it was
    assert unknown_fields(pruned) == []
    assert "request" not in pruned["spec"]["containers"][0]["resources"]
    assert pruned["metadata"] is obj["metadata"]  # untouched parts are shared
    assert pruned["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1"}


def test_field_path() -> None:
    assert field_path(("spec", "containers", 0, "resources")) == "spec.containers[0].resources"
    assert field_path(("items", 3, "kind")) == "items[3].kind"
    assert field_path(()) == ""


_keys = st.sampled_from(["name", "image", "resources", "requests", "request", "ports", "containerPort", "x"])
_values = st.recursive(
    st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_keys, _values, max_size=5))
def test_the_quick_answer_agrees_with_the_located_one(container: dict[str, Any]) -> None:
    """The first pass (yes or no, memoised) and the locating walk agree on any shape of container."""
    pod = pod_dict("p")
    pod["spec"]["containers"] = [container]
    found = unknown_fields(pod)
    container_type = field_schema().types["core.v1.Container"]
    expected = [k for k in container if k not in container_type.fields]
    assert [u.location[-1] for u in found if len(u.location) == 4] == expected
    assert unknown_fields(without_fields(pod, [u.location for u in found])) == []


# ---------------------------------------------------------------------------------------------------------
# The real API server agrees (strict decoding, as kubectl asks for it by default)


def _server_dry_run(control_plane: Any, obj: dict[str, Any]) -> str:
    proc = control_plane.kubectl(
        "create", "--dry-run=server", "--validate=strict", "-o", "name", "-f", "-", input=json.dumps(obj), check=False
    )
    return proc.stderr


@pytest.mark.controlplane
def test_the_api_server_finds_the_same_unknown_fields(control_plane: Any) -> None:
    for kind, path, _ in UNKNOWN:
        if kind == "PodGroup":  # a custom resource the plane does not have
            continue
        assert f'unknown field "{path}"' in _server_dry_run(control_plane, _with(kind, path, {"cpu": "64"})), path


@pytest.mark.controlplane
def test_the_api_server_finds_no_unknown_field_in_the_valid_objects(control_plane: Any) -> None:
    for kind, obj in VALID.items():
        if kind != "PodGroup":
            assert "unknown field" not in _server_dry_run(control_plane, obj), kind


def test_objects_in_maps_and_lists_of_lists_are_walked() -> None:
    schema = parse_schema(
        {
            "kinds": {"v1": {"Thing": "Thing"}},
            "types": {
                "Thing": {"kind": 0, "byName": "{}Part", "grid": "[][]Part", "main": "Part"},
                "Part": {"name": 0},
            },
        }
    )
    thing = schema.types["Thing"]
    clean = {"kind": "Thing", "byName": {"a": {"name": "x"}}, "grid": [[{"name": "y"}], []], "main": {"name": "z"}}
    assert unknown_fields(clean, thing) == []
    bad = {
        **clean,
        "byName": {"a": {"nam": "x"}},
        "grid": [[{"name": "y"}, {"size": 1}]],
        "main": {"name": "z", "x": 1},
    }
    assert [u.path for u in unknown_fields(bad, thing)] == ["byName.a.nam", "grid[0][1].size", "main.x"]
    wrong_types = {"kind": "Thing", "byName": [], "grid": {"a": 1}, "main": "z"}
    assert unknown_fields(wrong_types, thing) == []
