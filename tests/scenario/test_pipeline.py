"""Scenario input: order-independent meaning, simulate() checking what the command line checks, and one path
for simulate, capacity and plan."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from kubesched.config import ConfigError
from kubesched.scenario.manifests import Manifest, ManifestError
from kubesched.scenario.pipeline import SimulationError, bound_pod_warnings, creation_order, scenario_manifests
from kubesched.sim.capacity import capacity
from kubesched.sim.plan import plan
from kubesched.sim.simulate import simulate
from tests.factories import node_dict, pod_dict
from tests.scenario.builders import classless_pod, namespace, priority_class

# ---------------------------------------------------------------------------------------------------------
# Order does not change meaning


STORAGE_CLASS = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "provisioner": "x",
    "metadata": {"name": "fast", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
}
CLAIM = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data"},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
}


def test_namespaces_priority_classes_and_storage_classes_are_created_first() -> None:
    objs = [node_dict("n"), pod_dict("p"), STORAGE_CLASS, priority_class("high", 10), namespace("web"), pod_dict("q")]
    manifests = [Manifest("s.yaml", i + 1, o) for i, o in enumerate(objs)]
    ordered = creation_order(manifests)
    assert [(m.kind, m.doc_index) for m in ordered] == [
        ("Namespace", 5),
        ("PriorityClass", 4),
        ("StorageClass", 3),
        ("Node", 1),
        ("Pod", 2),
        ("Pod", 6),
    ]


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
    result = simulate(
        [node_dict("n"), bound, pending, priority_class("high", 1000), priority_class("base", 5, default=True)]
    )
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
    with pytest.raises(
        ManifestError,
        match=r"^<objects>: document 2 \(Pod default/p\): "
        r"spec.containers\[0\].resources.requests.cpu: Invalid value: \"-1\"",
    ):
        simulate([node_dict("n"), bad])


def test_list_objects_are_expanded_and_a_single_dict_is_a_scenario() -> None:
    listed = {"apiVersion": "v1", "kind": "List", "items": [node_dict("n"), pod_dict("p")]}
    assert simulate(listed).final == {"default/p": "n"}
    assert [m.kind for m in scenario_manifests([listed])] == ["Node", "Pod"]


def test_paths_and_dicts_mix(tmp_path: Path) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: '1', pods: '5'}}\n")
    assert simulate([path, pod_dict("p")]).final == {"default/p": "n"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {"objects_or_paths": None},
            "objects_or_paths: expected a path, an object dict or a list of them, got NoneType",
            id="no-scenario",
        ),
        pytest.param({"objects_or_paths": 5}, "objects_or_paths: expected a path", id="number-scenario"),
        pytest.param({"objects_or_paths": b"s.yaml"}, "objects_or_paths: expected a path", id="bytes-scenario"),
        pytest.param(
            {"objects_or_paths": [3]},
            "objects_or_paths[0]: expected a manifest path or an object dict, got int",
            id="number-in-list",
        ),
        pytest.param({"objects_or_paths": []}, "the scenario holds no Kubernetes objects", id="empty-list"),
        pytest.param(
            {
                "objects_or_paths": [
                    {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n"}, "spec": {"x": {1, 2}}}
                ]
            },
            "objects_or_paths[0].spec.x: expected JSON-like data",
            id="set-in-dict",
        ),
        pytest.param(
            {"config": 3},
            "config: expected a path, a mapping or a KubeSchedulerConfiguration, got int",
            id="config-number",
        ),
        pytest.param({"config": ""}, "config: an empty path names no file", id="config-empty"),
        pytest.param({"seed": "1"}, "seed: expected an integer, got str", id="seed-string"),
        pytest.param({"seed": 1.5}, "seed: expected an integer, got float", id="seed-float"),
        pytest.param({"seed": True}, "seed: expected an integer, got bool", id="seed-bool"),
        pytest.param({"burst": "yes"}, "burst: expected a boolean, got str", id="burst-string"),
        pytest.param(
            {"tie_break": "first"}, "tie_break: expected one of 'random', 'name', got 'first'", id="tie-break"
        ),
        pytest.param({"tie_break": ["name"]}, "tie_break: expected one of", id="tie-break-list"),
        pytest.param({"progress": "bar"}, "progress: expected a callable(done, total) or None, got str", id="progress"),
    ],
)
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
        simulate(
            [node_dict("n")],
            config={
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": "all",
            },
        )


# ---------------------------------------------------------------------------------------------------------
# One path: what simulates also runs under capacity and plan, from code and from the command line

REPO = Path(__file__).resolve().parents[2]
PODS_FIRST = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "1", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: shop}
spec:
  nodeName: n1
  priorityClassName: high
  containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  priorityClassName: high
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""
CLASSES_LAST = """\
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {team: a}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""
PROBE = """\
apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: shop}
spec:
  priorityClassName: high
  containers: [{name: c, image: x, resources: {requests: {cpu: 250m}}}]
"""
BIG_NODE = """\
apiVersion: v1
kind: Node
metadata: {name: big, labels: {kubernetes.io/hostname: big}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
"""


def sorted_after(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A folder whose pods (a-pods.yaml) come before the Namespace and PriorityClass they use (z-setup.yaml)."""
    folder = tmp_path / "scenario"
    folder.mkdir()
    (folder / "a-pods.yaml").write_text(PODS_FIRST)
    (folder / "z-setup.yaml").write_text(CLASSES_LAST)
    (tmp_path / "probe.yaml").write_text(PROBE)
    (tmp_path / "node.yaml").write_text(BIG_NODE)
    return folder, tmp_path / "probe.yaml", tmp_path / "node.yaml"


def examples_cluster(tmp_path: Path) -> tuple[Path, Path, Path]:
    capacity_dir = REPO / "examples" / "capacity"
    return REPO / "examples" / "cluster", capacity_dir / "web-replica.yaml", capacity_dir / "gpu-node.yaml"


#: Per scenario: how many pending pods simulate schedules, capacity's replicas, plan's nodes to add.
ONE_PATH_CASES = [
    pytest.param(sorted_after, (0, 2, 1), id="classes-sorted-after-pods"),
    pytest.param(examples_cluster, (52, 26, 1), id="examples-cluster"),
]


@pytest.mark.parametrize(("make", "want"), ONE_PATH_CASES)
def test_what_simulates_runs_under_capacity_and_plan_from_code(
    make: Any, want: tuple[int, int, int], tmp_path: Path
) -> None:
    from kubesched import capacity, plan

    scenario, probe, node = make(tmp_path)
    result = simulate(scenario, tie_break="name")
    assert sum(1 for n in result.final.values() if n) == want[0]
    assert capacity(scenario, probe, tie_break="name").replicas == want[1]
    assert plan(scenario, node, max_nodes=3, tie_break="name").nodes_to_add == want[2]


@pytest.mark.parametrize(("make", "want"), ONE_PATH_CASES)
def test_what_simulates_runs_under_capacity_and_plan_from_the_command_line(
    make: Any, want: tuple[int, int, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from kubesched.app.cli import main

    scenario, probe, node = make(tmp_path)
    assert main(["simulate", str(scenario), "--tie-break", "name"]) == 0
    assert capsys.readouterr().out.startswith(f"Scheduled {want[0]}/")
    assert main(["capacity", str(scenario), "--pod", str(probe), "-o", "json", "--tie-break", "name"]) == 0
    assert json.loads(capsys.readouterr().out)["replicas"] == want[1]
    assert (
        main(
            [
                "plan",
                str(scenario),
                "--node-template",
                str(node),
                "--max-nodes",
                "3",
                "-o",
                "json",
                "--tie-break",
                "name",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["nodesToAdd"] == want[2]


# ---------------------------------------------------------------------------------------------------------
# Strict field validation, as kubectl's --validate: the first day's three surprises


def four_cpu_node() -> dict[str, Any]:
    return node_dict("n", cpu="4")


def asks_64_cpus_with_request() -> dict[str, Any]:
    pod = pod_dict("big")
    pod["spec"]["containers"][0]["resources"] = {"request": {"cpu": "64"}}
    return pod


def misspelt_node_selector() -> dict[str, Any]:
    pod = pod_dict("picky")
    pod["spec"]["nodeSelectr"] = {"disk": "ssd"}
    return pod


def mismatched_deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "frontend"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        },
    }


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        pytest.param(
            asks_64_cpus_with_request,
            r"^<objects>: document 2 \(Pod default/big\): "
            r'spec.containers\[0\].resources.request: unknown field "request" \(did you mean "requests"\?\)$',
            id="requests-misspelt",
        ),
        pytest.param(
            misspelt_node_selector,
            r"^<objects>: document 2 \(Pod default/picky\): spec.nodeSelectr: "
            r'unknown field "nodeSelectr" \(did you mean "nodeSelector"\?\)$',
            id="node-selector-misspelt",
        ),
        pytest.param(
            mismatched_deployment,
            r"^<objects>: document 2 \(Deployment default/web\): "
            r'spec.template.metadata.labels: Invalid value: \{"app":"frontend"\}: '
            r"`selector` does not match template `labels`$",
            id="selector-misses-the-template",
        ),
    ],
)
def test_the_first_days_three_surprises_are_refused(obj: Any, message: str) -> None:
    # Before, the first pod was bound to the 4-CPU node, the second ran anywhere and the
    # Deployment's controller created pods its selector never saw.
    with pytest.raises(ManifestError, match=message):
        simulate([four_cpu_node(), obj()])


def test_warn_drops_the_fields_reports_each_once_and_leaves_the_dicts_given_alone() -> None:
    pods = [asks_64_cpus_with_request(), misspelt_node_selector()]
    pods.append({**asks_64_cpus_with_request(), "metadata": {"name": "big-2", "namespace": "default"}})
    given = [four_cpu_node(), *pods]
    before = copy.deepcopy(given)
    result = simulate(given, validate="warn")
    assert result.final == {"default/big": "n", "default/picky": "n", "default/big-2": "n"}
    assert result.warnings[:2] == [
        '<objects>: document 2 (Pod default/big): spec.containers[0].resources.request: unknown field "request" '
        '(did you mean "requests"?) (also in 1 more object)',
        '<objects>: document 3 (Pod default/picky): spec.nodeSelectr: unknown field "nodeSelectr" '
        '(did you mean "nodeSelector"?)',
    ]
    assert given == before
    assert result.cluster is not None
    assert "nodeSelectr" not in result.cluster.get("Pod", "default", "picky")["spec"]


def test_ignore_drops_the_fields_silently_but_validation_still_refuses() -> None:
    result = simulate([four_cpu_node(), asks_64_cpus_with_request()], validate="ignore")
    assert result.final == {"default/big": "n"} and result.warnings == []
    with pytest.raises(ManifestError, match="`selector` does not match template `labels`"):
        simulate([four_cpu_node(), mismatched_deployment()], validate="ignore")


def test_a_bad_validate_value_is_a_simulation_error() -> None:
    with pytest.raises(SimulationError, match=r"^validate: expected one of 'strict', 'warn', 'ignore'"):
        simulate([four_cpu_node()], validate="lenient")


def test_templates_of_capacity_and_plan_are_checked_and_their_warnings_kept() -> None:
    template = asks_64_cpus_with_request()
    with pytest.raises(
        ManifestError,
        match=r"^template \(Pod default/big\): spec.containers\[0\].resources.request: "
        'unknown field "request"',
    ):
        capacity([four_cpu_node()], template, max_replicas=2)
    result = capacity([four_cpu_node()], template, max_replicas=2, validate="warn")
    assert result.replicas == 2
    assert result.simulation is not None
    assert result.simulation.warnings[0].startswith("template (Pod default/big): spec.containers[0].resources.request")
    node = {**node_dict("extra"), "spec": {"unschedulabel": True}}
    with pytest.raises(ManifestError, match=r"^template \(Node extra\): spec.unschedulabel: unknown field"):
        plan([four_cpu_node(), pod_dict("p")], node)
    planned = plan([four_cpu_node(), pod_dict("p")], node, validate="warn", max_nodes=2)
    assert planned.simulation is not None
    assert planned.simulation.warnings[0].startswith("template (Node extra): spec.unschedulabel: unknown field")


def test_dra_objects_load_and_a_bad_one_names_file_document_and_field(tmp_path: Path) -> None:
    import yaml

    from kubesched.scenario.pipeline import load_scenario
    from tests.dra import claim_dict, device_class_dict, request_dict, slice_dict

    good = [
        device_class_dict("gpu", 'device.driver == "gpu.example.com"'),
        slice_dict("s", ["g0"], node="n1"),
        claim_dict("c", request_dict("r")),
    ]
    path = tmp_path / "dra.yaml"
    path.write_text(yaml.safe_dump_all(good))
    assert [m.kind for m in load_scenario(path).manifests] == ["DeviceClass", "ResourceSlice", "ResourceClaim"]
    path.write_text(yaml.safe_dump_all([*good, device_class_dict("bad", "device.attributes[")]))
    with pytest.raises(ManifestError) as err:
        load_scenario(path)
    assert str(err.value).startswith(
        f"{path}: document 4 (DeviceClass bad): spec.selectors[0].cel.expression: "
        'Invalid value: "device.attributes[": compilation failed: ERROR: <input>:'
    )
    path.write_text(yaml.safe_dump_all([claim_dict("c", request_dict("r", mode="Some"))]))
    with pytest.raises(
        ManifestError,
        match=r"document 1 \(ResourceClaim default/c\): "
        r"spec.devices.requests\[0\].exactly.allocationMode: Unsupported value",
    ):
        load_scenario(path)
    path.write_text(yaml.safe_dump_all([{**claim_dict("c", request_dict("r")), "spec": {"device": {}}}]))
    with pytest.raises(ManifestError, match=r'spec.device: unknown field "device" \(did you mean "devices"\?\)'):
        load_scenario(path)
