"""Scenario input: order-independent meaning, and simulate() checking what the command line checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubesched.config import ConfigError
from kubesched.scenario.manifests import Manifest, ManifestError
from kubesched.scenario.pipeline import SimulationError, bound_pod_warnings, creation_order, scenario_manifests
from kubesched.sim.simulate import simulate
from tests.factories import node_dict, pod_dict


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def priority_class(name: str, value: int, *, default: bool = False) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": default}


def classless_pod(name: str, **kw: Any) -> dict[str, Any]:
    pod = pod_dict(name, **kw)
    del pod["spec"]["priority"]  # given by priority admission
    return pod


# ---------------------------------------------------------------------------------------------------------
# Order does not change meaning


STORAGE_CLASS = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "provisioner": "x",
                 "metadata": {"name": "fast", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}}
CLAIM = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}


def test_namespaces_priority_classes_and_storage_classes_are_created_first() -> None:
    objs = [node_dict("n"), pod_dict("p"), STORAGE_CLASS, priority_class("high", 10), namespace("web"), pod_dict("q")]
    manifests = [Manifest("s.yaml", i + 1, o) for i, o in enumerate(objs)]
    ordered = creation_order(manifests)
    assert [(m.kind, m.doc_index) for m in ordered] == [
        ("Namespace", 5), ("PriorityClass", 4), ("StorageClass", 3), ("Node", 1), ("Pod", 2), ("Pod", 6)]


def test_a_claim_before_the_default_storage_class_gets_it() -> None:
    result = simulate([node_dict("n"), CLAIM, STORAGE_CLASS, pod_dict("p")])
    assert result.cluster is not None
    assert result.cluster.get("PersistentVolumeClaim", "default", "data")["spec"]["storageClassName"] == "fast"


def test_a_namespace_after_a_pod_in_it_keeps_its_labels() -> None:
    result = simulate([node_dict("n"), pod_dict("bound", namespace="web", node_name="n"), namespace("web", team="a")])
    assert result.cluster is not None
    labels = result.cluster.get("Namespace", None, "web")["metadata"]["labels"]
    assert labels == {"team": "a", "kubernetes.io/metadata.name": "web"}


def test_a_priority_class_after_the_pods_that_name_it_applies_to_them() -> None:
    bound = classless_pod("bound", node_name="n", spec={"priorityClassName": "high"})
    pending = classless_pod("pending")  # takes the global default
    result = simulate([node_dict("n"), bound, pending, priority_class("high", 1000),
                       priority_class("base", 5, default=True)])
    assert result.cluster is not None
    assert result.cluster.get("Pod", "default", "bound")["spec"]["priority"] == 1000
    assert result.cluster.get("Pod", "default", "pending")["spec"]["priority"] == 5
    assert result.final == {"default/pending": "n"}


def test_a_pod_bound_to_a_node_the_scenario_lacks_is_warned_about() -> None:
    objs = [node_dict("n"), pod_dict("ok", node_name="n"), pod_dict("lost", namespace="web", node_name="ghost")]
    manifests = [Manifest("s.yaml", i + 1, o) for i, o in enumerate(objs)]
    want = 'pod web/lost: bound to node "ghost", which the scenario does not define; its requests count on no node'
    assert bound_pod_warnings(manifests) == [want]
    assert want in simulate([*objs, pod_dict("p")]).warnings


# ---------------------------------------------------------------------------------------------------------
# The Python API checks what the command line checks


def test_object_dicts_pass_the_checks_files_pass() -> None:
    bad = pod_dict("p", cpu="-1")
    with pytest.raises(ManifestError, match=r"^<objects>: document 2 \(Pod default/p\): "
                                            r"spec.containers\[0\].resources.requests.cpu: Invalid value: \"-1\""):
        simulate([node_dict("n"), bad])


def test_list_objects_are_expanded_and_a_single_dict_is_a_scenario() -> None:
    listed = {"apiVersion": "v1", "kind": "List", "items": [node_dict("n"), pod_dict("p")]}
    assert simulate(listed).final == {"default/p": "n"}
    assert [m.kind for m in scenario_manifests([listed])] == ["Node", "Pod"]


def test_paths_and_dicts_mix(tmp_path: Path) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: '1', pods: '5'}}\n")
    assert simulate([path, pod_dict("p")]).final == {"default/p": "n"}


@pytest.mark.parametrize(("args", "message"), [
    pytest.param({"objects_or_paths": None}, "objects_or_paths: expected a path, an object dict or a list of them, "
                                             "got NoneType", id="no-scenario"),
    pytest.param({"objects_or_paths": 5}, "objects_or_paths: expected a path", id="number-scenario"),
    pytest.param({"objects_or_paths": b"s.yaml"}, "objects_or_paths: expected a path", id="bytes-scenario"),
    pytest.param({"objects_or_paths": [3]}, "objects_or_paths[0]: expected a manifest path or an object dict, got int",
                 id="number-in-list"),
    pytest.param({"objects_or_paths": []}, "the scenario holds no Kubernetes objects", id="empty-list"),
    pytest.param({"objects_or_paths": [{"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n"},
                                        "spec": {"x": {1, 2}}}]},
                 "objects_or_paths[0].spec.x: expected JSON-like data", id="set-in-dict"),
    pytest.param({"config": 3}, "config: expected a path, a mapping or a KubeSchedulerConfiguration, got int",
                 id="config-number"),
    pytest.param({"config": ""}, "config: an empty path names no file", id="config-empty"),
    pytest.param({"seed": "1"}, "seed: expected an integer, got str", id="seed-string"),
    pytest.param({"seed": 1.5}, "seed: expected an integer, got float", id="seed-float"),
    pytest.param({"seed": True}, "seed: expected an integer, got bool", id="seed-bool"),
    pytest.param({"burst": "yes"}, "burst: expected a boolean, got str", id="burst-string"),
    pytest.param({"tie_break": "first"}, "tie_break: expected one of 'random', 'name', got 'first'", id="tie-break"),
    pytest.param({"tie_break": ["name"]}, "tie_break: expected one of", id="tie-break-list"),
    pytest.param({"progress": "bar"}, "progress: expected a callable(done, total) or None, got str", id="progress"),
])
def test_wrong_arguments_are_simulation_errors(args: dict[str, Any], message: str) -> None:
    call: dict[str, Any] = {"objects_or_paths": [node_dict("n"), pod_dict("p")], **args}
    with pytest.raises(SimulationError) as info:
        simulate(**call)
    assert str(info.value).startswith(message)


def test_missing_config_file_is_a_simulation_error(tmp_path: Path) -> None:
    with pytest.raises(SimulationError, match=r"missing\.yaml"):
        simulate([node_dict("n")], config=tmp_path / "missing.yaml")


def test_config_dict_of_the_wrong_shape_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="profiles"):
        simulate([node_dict("n")], config={"apiVersion": "kubescheduler.config.k8s.io/v1",
                                           "kind": "KubeSchedulerConfiguration", "profiles": "all"})


# ---------------------------------------------------------------------------------------------------------
# What priority admission would refuse during the run is refused before it


@pytest.mark.parametrize(("pod", "want"), [
    pytest.param(classless_pod("p", spec={"priorityClassName": "gold"}),
                 'spec.priorityClassName: Not found: no PriorityClass with name "gold" in the scenario',
                 id="unknown-class"),
    pytest.param(pod_dict("p", priority=5, spec={"priorityClassName": "high"}),
                 "spec.priority: Forbidden: the integer value of priority (5) must not be provided in pod spec; "
                 "priority admission controller computed 1000", id="contradicting-priority"),
    pytest.param(pod_dict("p", priority=0, spec={"preemptionPolicy": "Never"}),
                 "spec.preemptionPolicy: Forbidden: the string value of PreemptionPolicy (Never)",
                 id="contradicting-policy"),
])
def test_pods_priority_admission_would_refuse_fail_before_the_run(pod: dict[str, Any], want: str) -> None:
    progress: list[int] = []
    with pytest.raises(ManifestError) as info:
        simulate([priority_class("high", 1000), node_dict("n"), pod_dict("first"), pod],
                 progress=lambda done, total: progress.append(done))
    assert str(info.value).startswith("<objects>: document 4 (Pod default/p): " + want)
    assert progress == []  # nothing was scheduled and then thrown away


def test_system_classes_and_the_global_default_are_known_before_the_run() -> None:
    critical = classless_pod("critical", spec={"priorityClassName": "system-cluster-critical"})
    given = pod_dict("given", priority=5)  # the global default gives 5
    result = simulate([node_dict("n"), critical, given, priority_class("base", 5, default=True)])
    assert result.final == {"default/critical": "n", "default/given": "n"}


def test_an_object_defined_twice_is_refused_before_the_run() -> None:
    with pytest.raises(ManifestError, match=r"^<objects>: document 4 \(Pod default/p\): metadata\.name: Duplicate "
                                            r"value: Pod default/p is already defined in <objects>: document 2"):
        simulate([node_dict("n"), pod_dict("p"), pod_dict("q"), pod_dict("p", namespace="default")])
    # The same name in another namespace, or of another kind, is another object.
    assert simulate([node_dict("p"), pod_dict("p"), pod_dict("p", namespace="other")]).final == {
        "default/p": "p", "other/p": "p"}
