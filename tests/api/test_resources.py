"""Effective pod requests as kube-scheduler computes them (resourcehelper.PodRequests, and
calculateResource in v1.30 / PodInfo.CalculateResource in v1.34).

Each row is a pod (app containers, init containers, overhead) and the numbers the scheduler must see:
``requests`` (what NodeResourcesFit filters on and NodeInfo.Requested adds up) and the non-zero
cpu / memory (what scoring counts for a pod already on a node), which v1.30 and v1.34 add up
differently. Pod-level requests (PodLevelResources) and status resources (InPlacePodVerticalScaling)
follow the gates.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from kubesched.api.objects import Pod
from kubesched.api.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    V1_30_RULES,
    V1_34_RULES,
    ResourceRules,
    is_extended_resource_name,
    is_scalar_resource_name,
    scheduler_resources,
    to_scheduler_units,
)
from tests.factories import pod_dict

Mi = 1024 * 1024
Gi = 1024 * Mi
DEF_CPU = DEFAULT_MILLI_CPU_REQUEST
DEF_MEM = DEFAULT_MEMORY_REQUEST


def container(
    requests: dict[str, str] | None = None,
    *,
    limits: dict[str, str] | None = None,
    sidecar: bool = False,
    name: str = "c",
) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "image": "img"}
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    if resources:
        body["resources"] = resources
    if sidecar:
        body["restartPolicy"] = "Always"
    return body


def build(
    containers: list[dict[str, Any]],
    init: list[dict[str, Any]] | None = None,
    overhead: dict[str, str] | None = None,
    rules: ResourceRules = V1_34_RULES,
    *,
    pod_level: dict[str, str] | None = None,
    status: dict[str, Any] | None = None,
) -> Pod:
    spec: dict[str, Any] = {"containers": containers}
    if init:
        spec["initContainers"] = init
    if overhead:
        spec["overhead"] = overhead
    if pod_level is not None:
        spec["resources"] = {"requests": pod_level}
    raw = pod_dict("p", spec=spec)
    if status is not None:
        raw["status"] = status
    return Pod.from_dict(raw, rules)


@pytest.mark.parametrize(
    ("containers", "init", "overhead", "want"),
    [
        pytest.param(
            [container({"cpu": "500m", "memory": "1Gi"})], [], None, {"cpu": 500, "memory": Gi}, id="single container"
        ),
        pytest.param(
            [container({"cpu": "100m"}), container({"cpu": "200m", "memory": "1Gi"})],
            [],
            None,
            {"cpu": 300, "memory": Gi},
            id="app containers add up",
        ),
        pytest.param(
            [container({"cpu": "100m", "memory": "1Gi"})],
            [container({"cpu": "500m", "memory": "512Mi"})],
            None,
            {"cpu": 500, "memory": Gi},
            id="init container sets a floor per resource",
        ),
        pytest.param(
            [container({"cpu": "100m"})],
            [container({"cpu": "300m"}), container({"cpu": "700m"}), container({"cpu": "200m"})],
            None,
            {"cpu": 700},
            id="max over init containers, not their sum",
        ),
        pytest.param(
            [container({"cpu": "300m"})],
            [container({"cpu": "200m"}, sidecar=True)],
            None,
            {"cpu": 500},
            id="sidecar adds to the app containers",
        ),
        pytest.param(
            [container({"cpu": "100m"})],
            [container({"cpu": "200m"}, sidecar=True), container({"cpu": "400m"})],
            None,
            {"cpu": 600},
            id="sidecar raises the floor of a later init container",
        ),
        pytest.param(
            [container({"cpu": "100m"})],
            [container({"cpu": "400m"}), container({"cpu": "200m"}, sidecar=True)],
            None,
            {"cpu": 400},
            id="sidecar started later does not raise an earlier init container",
        ),
        pytest.param(
            [container({"cpu": "100m"})],
            [
                container({"cpu": "200m"}, sidecar=True),
                container({"cpu": "300m"}, sidecar=True),
                container({"cpu": "100m"}),
            ],
            None,
            {"cpu": 600},
            id="sidecars accumulate",
        ),
        pytest.param(
            [container({"cpu": "100m", "memory": "1Gi"})],
            [],
            {"cpu": "50m", "memory": "64Mi"},
            {"cpu": 150, "memory": Gi + 64 * Mi},
            id="overhead added",
        ),
        pytest.param(
            [container({"cpu": "100m"})],
            [container({"cpu": "500m"})],
            {"cpu": "50m"},
            {"cpu": 550},
            id="overhead added on top of the init floor",
        ),
        pytest.param(
            [container(limits={"cpu": "1", "memory": "1Gi"})],
            [],
            None,
            {"cpu": 1000, "memory": Gi},
            id="limits only: requests default to limits",
        ),
        pytest.param(
            [container({"cpu": "200m"}, limits={"cpu": "1", "memory": "2Gi"})],
            [],
            None,
            {"cpu": 200, "memory": 2 * Gi},
            id="limits default only the missing requests",
        ),
        pytest.param(
            [container({"cpu": "100m"})],
            [container(limits={"cpu": "2"})],
            None,
            {"cpu": 2000},
            id="limits defaulting applies to init containers",
        ),
        pytest.param(
            [container({"nvidia.com/gpu": "2", "hugepages-2Mi": "4Mi", "example.com/foo": "1"})],
            [],
            None,
            {"nvidia.com/gpu": 2, "hugepages-2Mi": 4 * Mi, "example.com/foo": 1},
            id="extended and hugepages resources kept",
        ),
        pytest.param(
            [container({"nvidia.com/gpu": "1"})],
            [container({"nvidia.com/gpu": "3"})],
            None,
            {"nvidia.com/gpu": 3},
            id="extended resources follow the init floor",
        ),
        pytest.param(
            [container({"foo": "1", "requests.example.com/x": "1", "cpu": "1"})],
            [],
            None,
            {"cpu": 1000},
            id="untracked names dropped",
        ),
        pytest.param([container({"cpu": "0.5m"})], [], None, {"cpu": 1}, id="milli cpu rounds up"),
        pytest.param(
            [container({"cpu": "0.5m"}), container({"cpu": "0.5m"})],
            [],
            None,
            {"cpu": 1},
            id="exact sum before rounding",
        ),
        pytest.param(
            [container({"cpu": "1.2m", "memory": "1.5"})], [], None, {"cpu": 2, "memory": 2}, id="every unit rounds up"
        ),
        pytest.param(
            [container({"ephemeral-storage": "1Gi", "pods": "1"})],
            [],
            None,
            {"ephemeral-storage": Gi, "pods": 1},
            id="ephemeral storage and pods",
        ),
        pytest.param([container()], [], None, {}, id="no requests at all"),
        pytest.param([], [], None, {}, id="no containers"),
    ],
)
@pytest.mark.parametrize("rules", [V1_30_RULES, V1_34_RULES], ids=["v1.30", "v1.34"])
def test_effective_requests(
    containers: list[dict[str, Any]],
    init: list[dict[str, Any]],
    overhead: dict[str, str] | None,
    want: dict[str, int],
    rules: ResourceRules,
) -> None:
    pod = build(containers, init, overhead, rules)
    assert {k: v for k, v in pod.requests.items() if v} == want
    assert pod.spec_requests == pod.requests


@pytest.mark.parametrize(
    ("containers", "init", "overhead", "want"),
    [
        pytest.param([container()], [], None, (DEF_CPU, DEF_MEM), id="missing requests get defaults"),
        pytest.param([container({"cpu": "0", "memory": "0"})], [], None, (0, 0), id="explicit zero stays zero"),
        pytest.param([container({"cpu": "0"})], [], None, (0, DEF_MEM), id="defaults per resource"),
        pytest.param([container({"cpu": "250m", "memory": "1Gi"})], [], None, (250, Gi), id="given requests"),
        pytest.param(
            [container(), container({"cpu": "50m"})],
            [],
            None,
            (DEF_CPU + 50, DEF_MEM + DEF_MEM),
            id="defaults per container, summed",
        ),
        pytest.param(
            [container({"cpu": "50m", "memory": "10Mi"})],
            [container()],
            None,
            (DEF_CPU, DEF_MEM),
            id="init container with defaults sets the floor",
        ),
        pytest.param(
            [container({"cpu": "50m", "memory": "10Mi"})],
            [container({"cpu": "500m", "memory": "0"})],
            None,
            (500, 10 * Mi),
            id="init max per resource",
        ),
        pytest.param(
            [container()],
            [],
            {"cpu": "10m", "memory": "1Mi"},
            (DEF_CPU + 10, DEF_MEM + Mi),
            id="overhead added to the defaults",
        ),
        pytest.param(
            [container({"cpu": "0"})],
            [],
            {"memory": "1Mi"},
            (0, DEF_MEM + Mi),
            id="overhead only for the resources it names",
        ),
        pytest.param(
            [container(limits={"cpu": "300m"})], [], None, (300, DEF_MEM), id="limit-defaulted request is not missing"
        ),
        # v1.30 calculateResource rounds each container (GetNonzeroRequests) before summing.
        pytest.param(
            [container({"cpu": "0.5m"}), container({"cpu": "0.5m"})],
            [],
            None,
            (2, 2 * DEF_MEM),
            id="rounded per container",
        ),
        # v1.30 calculateResource: a sidecar only enters the init floor of the non-zero sums.
        pytest.param(
            [container({"cpu": "100m", "memory": "1Mi"})],
            [container({"cpu": "50m", "memory": "1Mi"}, sidecar=True)],
            None,
            (100, Mi),
            id="sidecar only raises the init floor",
        ),
        pytest.param(
            [container({"cpu": "100m", "memory": "1Mi"})],
            [container({"cpu": "50m", "memory": "1Mi"}, sidecar=True), container({"cpu": "80m", "memory": "1Mi"})],
            None,
            (130, 2 * Mi),
            id="init container counted with the sidecars before it",
        ),
        pytest.param(
            [container()],
            [container({"cpu": "50m"}, sidecar=True)],
            None,
            (DEF_CPU, DEF_MEM),
            id="app container defaults against a sidecar",
        ),
        pytest.param(
            [container({"cpu": "200m"})],
            [container(sidecar=True)],
            None,
            (200, DEF_MEM),
            id="sidecar defaults only in the init floor",
        ),
    ],
)
def test_non_zero_requests_v1_30(
    containers: list[dict[str, Any]], init: list[dict[str, Any]], overhead: dict[str, str] | None, want: tuple[int, int]
) -> None:
    """v1.30: the larger of the app containers' sum and each init container's use, each rounded alone."""
    pod = build(containers, init, overhead, V1_30_RULES)
    assert (pod.non_zero_cpu, pod.non_zero_memory) == want


@pytest.mark.parametrize(
    ("containers", "init", "overhead", "want"),
    [
        pytest.param([container()], [], None, (DEF_CPU, DEF_MEM), id="missing requests get defaults"),
        pytest.param([container({"cpu": "0", "memory": "0"})], [], None, (0, 0), id="explicit zero stays zero"),
        pytest.param(
            [container(), container({"cpu": "50m"})],
            [],
            None,
            (DEF_CPU + 50, DEF_MEM + DEF_MEM),
            id="defaults per container, summed",
        ),
        pytest.param(
            [container()],
            [],
            {"cpu": "10m", "memory": "1Mi"},
            (DEF_CPU + 10, DEF_MEM + Mi),
            id="overhead added to the defaults",
        ),
        pytest.param(
            [container({"cpu": "0"})],
            [],
            {"memory": "1Mi"},
            (0, DEF_MEM + Mi),
            id="overhead only for the resources it names",
        ),
        # v1.34 takes MilliValue of the sum: two half-millicores make one.
        pytest.param(
            [container({"cpu": "0.5m"}), container({"cpu": "0.5m"})],
            [],
            None,
            (1, 2 * DEF_MEM),
            id="rounded once, after summing",
        ),
        pytest.param(
            [container()],
            [container({"cpu": "50m"}, sidecar=True)],
            None,
            (DEF_CPU + 50, DEF_MEM + DEF_MEM),
            id="sidecar adds to the defaulted app container",
        ),
        pytest.param(
            [container({"cpu": "200m"})],
            [container(sidecar=True)],
            None,
            (200 + DEF_CPU, DEF_MEM + DEF_MEM),
            id="sidecar's own defaults add up",
        ),
        pytest.param(
            [container({"cpu": "100m", "memory": "1Mi"})],
            [container({"cpu": "50m", "memory": "1Mi"}, sidecar=True), container({"cpu": "80m", "memory": "1Mi"})],
            None,
            (150, 2 * Mi),
            id="init container below the sum",
        ),
        pytest.param(
            [container({"cpu": "50m", "memory": "10Mi"})],
            [container()],
            None,
            (DEF_CPU, DEF_MEM),
            id="init container with defaults sets the floor",
        ),
    ],
)
def test_non_zero_requests_v1_34(
    containers: list[dict[str, Any]], init: list[dict[str, Any]], overhead: dict[str, str] | None, want: tuple[int, int]
) -> None:
    """v1.34: one PodRequests sum with the defaults filled in per container, sidecars in the sum."""
    pod = build(containers, init, overhead, V1_34_RULES)
    assert (pod.non_zero_cpu, pod.non_zero_memory) == want


@pytest.mark.parametrize(
    ("containers", "pod_level", "want_requests", "want_non_zero", "want_scoring"),
    [
        pytest.param(
            [container({"cpu": "100m", "memory": "64Mi"})],
            {"cpu": "1500m", "memory": "1Gi"},
            {"cpu": 1500, "memory": Gi},
            (1500, Gi),
            (100, 64 * Mi),
            id="pod level replaces the sums",
        ),
        pytest.param(
            [container({"cpu": "100m"}), container({"cpu": "100m"})],
            {"cpu": "1"},
            {"cpu": 1000},
            (1000, 2 * DEF_MEM),
            (200, 2 * DEF_MEM),
            id="memory nowhere: its default per container",
        ),
        pytest.param(
            [container({"cpu": "100m", "memory": "128Mi"})],
            {"cpu": "1"},
            {"cpu": 1000, "memory": 128 * Mi},
            (1000, 128 * Mi),
            (100, 128 * Mi),
            id="memory from the containers",
        ),
        pytest.param(
            [container({"cpu": "100m", "example.com/gpu": "1"})],
            {"cpu": "1", "example.com/gpu": "4"},
            {"cpu": 1000, "example.com/gpu": 1},
            (1000, DEF_MEM),
            (100, DEF_MEM),
            id="unsupported pod-level names ignored",
        ),
    ],
)
def test_pod_level_requests(
    containers: list[dict[str, Any]],
    pod_level: dict[str, str],
    want_requests: dict[str, int],
    want_non_zero: tuple[int, int],
    want_scoring: tuple[int, int],
) -> None:
    """PodLevelResources: spec.resources.requests replace the container sums in the requests and the
    non-zero requests; NodeResourcesFit's scoring requests (its scorer is built without the gate) keep
    the containers'."""
    pod = build(containers, rules=V1_34_RULES, pod_level=pod_level)
    assert {k: v for k, v in pod.requests.items() if v} == want_requests
    assert (pod.non_zero_cpu, pod.non_zero_memory) == want_non_zero
    assert (pod.scoring_requests["cpu"], pod.scoring_requests["memory"]) == want_scoring


@pytest.mark.parametrize(
    "rules", [V1_30_RULES, ResourceRules(pod_level_resources=False)], ids=["v1.30", "v1.34 gate off"]
)
def test_pod_level_requests_need_the_gate(rules: ResourceRules) -> None:
    pod = build([container({"cpu": "100m"})], rules=rules, pod_level={"cpu": "2"})
    assert pod.requests == {"cpu": 100}


def _status(
    reported: dict[str, str] | None,
    allocated: dict[str, str],
    *,
    infeasible: bool = False,
    name: str = "c",
    init: bool = False,
) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "allocatedResources": allocated}
    if reported is not None:
        entry["resources"] = {"requests": reported}
    status: dict[str, Any] = {"initContainerStatuses" if init else "containerStatuses": [entry]}
    if infeasible:
        status["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
        status["resize"] = "Infeasible"
    return status


@pytest.mark.parametrize(
    ("rules", "status", "want_cpu"),
    [
        pytest.param(
            V1_34_RULES, _status({"cpu": "300m"}, {"cpu": "200m"}), 300, id="v1.34 max of spec, status, allocated"
        ),
        pytest.param(V1_34_RULES, _status(None, {"cpu": "900m"}), 100, id="v1.34 needs a resources block"),
        pytest.param(
            V1_34_RULES,
            _status({"cpu": "50m"}, {"cpu": "80m"}, infeasible=True),
            80,
            id="v1.34 infeasible: status and allocated only",
        ),
        pytest.param(ResourceRules(in_place_resize=False), _status({"cpu": "300m"}, {}), 100, id="v1.34 gate off"),
        pytest.param(V1_30_RULES, _status({"cpu": "300m"}, {"cpu": "500m"}), 100, id="v1.30 gate off"),
        pytest.param(
            ResourceRules(v134=False, pod_level_resources=False),
            _status(None, {"cpu": "500m"}),
            500,
            id="v1.30 gate on: max of spec and allocated",
        ),
        pytest.param(
            ResourceRules(v134=False, pod_level_resources=False),
            _status(None, {"cpu": "50m"}, infeasible=True),
            50,
            id="v1.30 gate on infeasible: allocated",
        ),
    ],
)
def test_status_resources(rules: ResourceRules, status: dict[str, Any], want_cpu: int) -> None:
    """InPlacePodVerticalScaling: a running container counts for what its status reports; Fit checks
    the spec alone for a pod being scheduled."""
    pod = build([container({"cpu": "100m", "memory": "1Mi"})], rules=rules, status=status)
    assert pod.requests["cpu"] == want_cpu
    assert pod.spec_requests["cpu"] == 100
    assert pod.non_zero_cpu == want_cpu


@pytest.mark.parametrize(
    ("rules", "want_cpu"),
    [(V1_34_RULES, 300), (ResourceRules(v134=False), 150)],
    ids=["v1.34 reads sidecar statuses", "v1.30 reads containers only"],
)
def test_sidecar_status_resources(rules: ResourceRules, want_cpu: int) -> None:
    status = _status({"cpu": "200m"}, {"cpu": "200m"}, name="side", init=True)
    pod = build(
        [container({"cpu": "100m"})], [container({"cpu": "50m"}, sidecar=True, name="side")], rules=rules, status=status
    )
    assert pod.requests["cpu"] == want_cpu


@pytest.mark.parametrize(("rules", "want"), [(V1_30_RULES, [80]), (V1_34_RULES, [9000, 80])], ids=["v1.30", "v1.34"])
def test_host_ports_of_sidecars(rules: ResourceRules, want: list[int]) -> None:
    """v1.34 counts sidecars' host ports (first), v1.30 the containers' only; plain init containers never."""
    app = {**container(), "ports": [{"containerPort": 80, "hostPort": 80}]}
    side = {**container(sidecar=True, name="s"), "ports": [{"containerPort": 9000, "hostPort": 9000}]}
    plain = {**container(name="i"), "ports": [{"containerPort": 7000, "hostPort": 7000}]}
    pod = build([app], [plain, side], rules=rules)
    assert [p.host_port for p in pod.host_ports] == want


@pytest.mark.parametrize(
    ("containers", "init", "want_cpu", "want_mem"),
    [
        ([container()], [], Fraction(1, 10), Fraction(DEF_MEM)),
        ([container({"cpu": "0", "memory": "0"})], [], Fraction(0), Fraction(0)),
        ([container({"cpu": "1"}), container()], [], Fraction(11, 10), Fraction(2 * DEF_MEM)),
        # the sidecar's defaults add to the total and raise the later init container
        (
            [container({"cpu": "1", "memory": "1Gi"})],
            [container(sidecar=True), container({"cpu": "2"})],
            Fraction(21, 10),
            Fraction(Gi + DEF_MEM),
        ),
    ],
)
@pytest.mark.parametrize("rules", [V1_30_RULES, V1_34_RULES], ids=["v1.30", "v1.34"])
def test_requests_with_defaults(
    containers: list[dict[str, Any]],
    init: list[dict[str, Any]],
    want_cpu: Fraction,
    want_mem: Fraction,
    rules: ResourceRules,
) -> None:
    """Scoring's PodRequests with NonMissingContainerRequests: defaults fill missing requests per container."""
    pod = build(containers, init, rules=rules)
    reqs = pod.requests_with_defaults()
    assert (reqs["cpu"], reqs["memory"]) == (want_cpu, want_mem)
    # What the scores weigh: the same in scheduler units (milli-cpu rounded up, bytes).
    assert (pod.scoring_requests["cpu"], pod.scoring_requests["memory"]) == (
        -(-want_cpu * 1000 // 1),
        -(-want_mem // 1),
    )


@pytest.mark.parametrize(
    ("name", "extended", "scalar"),
    [
        ("nvidia.com/gpu", True, True),
        ("example.com/foo", True, True),
        ("cpu", False, False),
        ("memory", False, False),
        ("foo", False, False),
        ("kubernetes.io/bar", False, True),
        ("requests.example.com/foo", False, False),
        ("hugepages-1Gi", False, True),
        ("attachable-volumes-aws-ebs", False, True),
        ("/foo", False, False),
    ],
)
def test_resource_name_classes(name: str, extended: bool, scalar: bool) -> None:
    assert is_extended_resource_name(name) is extended
    assert is_scalar_resource_name(name) is scalar


@pytest.mark.parametrize(
    ("name", "quantity", "want"),
    [
        ("cpu", Fraction(1, 2000), 1),
        ("cpu", Fraction(1), 1000),
        ("cpu", Fraction(0), 0),
        ("memory", Fraction(3, 2), 2),
        ("memory", Fraction(1024), 1024),
        ("nvidia.com/gpu", Fraction(1, 3), 1),
    ],
)
def test_to_scheduler_units_rounds_up(name: str, quantity: Fraction, want: int) -> None:
    assert to_scheduler_units(name, quantity) == want


def test_scheduler_resources_keeps_tracked_names_only() -> None:
    got = scheduler_resources(
        {
            "cpu": Fraction(1, 2),
            "memory": Fraction(10),
            "pods": Fraction(110),
            "ephemeral-storage": Fraction(5),
            "foo": Fraction(1),
            "x.io/y": Fraction(2),
        }
    )
    assert got == {"cpu": 500, "memory": 10, "pods": 110, "ephemeral-storage": 5, "x.io/y": 2}
