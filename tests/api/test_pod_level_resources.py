"""Pod-level resources as kube-apiserver v1.34 defaults and validates them (PodLevelResources on).

Defaulting rows: a pod spec in, ``spec.resources`` out. Validation rows: a (defaulted) pod spec in,
the field path and the API server's words out.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.errors import ObjectError
from kubesched.api.pod_level_resources import (
    aggregate_containers,
    default_pod_level_resources,
    validate_pod_level_resources,
)
from kubesched.api.quantity import quantity_string


def _c(
    name: str = "c",
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    *,
    sidecar: bool = False,
) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "image": "img", "resources": {}}
    if requests is not None:
        body["resources"]["requests"] = requests
    if limits is not None:
        body["resources"]["limits"] = limits
    if sidecar:
        body["restartPolicy"] = "Always"
    return body


def _spec(
    containers: list[dict[str, Any]], resources: dict[str, Any] | None, init: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": containers}
    if init:
        spec["initContainers"] = init
    if resources is not None:
        spec["resources"] = resources
    return spec


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param(
            _spec([_c(requests={"cpu": "200m"})], {"limits": {"cpu": "1", "memory": "1Gi"}}),
            {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "200m", "memory": "1Gi"}},
            id="limits only: requests from the containers, else from the limits",
        ),
        pytest.param(
            _spec(
                [_c(requests={"cpu": "100m", "memory": "128Mi"}), _c("b", requests={"cpu": "100m", "memory": "128Mi"})],
                {"limits": {"memory": "1Gi"}},
            ),
            {"limits": {"memory": "1Gi"}, "requests": {"cpu": "200m", "memory": "256Mi"}},
            id="aggregates keep their format",
        ),
        pytest.param(
            _spec(
                [_c(requests={"cpu": "100m"})],
                {"limits": {"cpu": "1"}},
                init=[_c("s", requests={"cpu": "300m"}, sidecar=True), _c("i", requests={"cpu": "2"})],
            ),
            {"limits": {"cpu": "1"}, "requests": {"cpu": "2300m"}},
            id="sidecar rule: the init container runs beside the sidecar",
        ),
        pytest.param(
            _spec([_c(requests={"cpu": "100m"})], {"requests": {"cpu": "1"}}),
            {"requests": {"cpu": "1"}},
            id="requests only: nothing to default",
        ),
        pytest.param(_spec([_c(requests={"cpu": "100m"})], {}), {}, id="empty"),
        pytest.param(
            _spec([_c(requests={"example.com/gpu": "1"}, limits={"example.com/gpu": "1"})], {"limits": {"cpu": "1"}}),
            {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}},
            id="unsupported names not defaulted",
        ),
        pytest.param(
            _spec(
                [_c(requests={"hugepages-2Mi": "4Mi", "cpu": "1"}, limits={"hugepages-2Mi": "4Mi"})],
                {"requests": {"cpu": "2"}},
            ),
            {"requests": {"cpu": "2", "hugepages-2Mi": "4Mi"}, "limits": {"hugepages-2Mi": "4Mi"}},
            id="hugepages limit from the containers, then the request from that limit",
        ),
        pytest.param(
            _spec(
                [_c(requests={"hugepages-2Mi": "4Mi", "cpu": "1"}, limits={"hugepages-2Mi": "4Mi"})],
                {"limits": {"cpu": "2", "hugepages-2Mi": "8Mi"}},
            ),
            {"limits": {"cpu": "2", "hugepages-2Mi": "8Mi"}, "requests": {"cpu": "1", "hugepages-2Mi": "8Mi"}},
            id="hugepages requests follow the pod limit, not the containers",
        ),
        pytest.param(
            _spec([_c(requests={"cpu": "0.5"})], {"limits": {"cpu": "1.5"}}),
            {"limits": {"cpu": "1.5"}, "requests": {"cpu": "500m"}},
            id="written as the API server writes quantities",
        ),
    ],
)
def test_defaulting(spec: dict[str, Any], want: dict[str, Any]) -> None:
    default_pod_level_resources(spec)
    assert spec["resources"] == want


def test_defaulting_without_pod_level_resources_adds_nothing() -> None:
    spec = _spec([_c(requests={"cpu": "1"})], None)
    default_pod_level_resources(spec)
    assert "resources" not in spec


@pytest.mark.parametrize(
    ("spec", "path", "reason"),
    [
        pytest.param(
            _spec([_c(requests={"cpu": "300m"})], {"requests": {"cpu": "200m"}}),
            "spec.resources.requests[cpu]",
            'Invalid value: "200m": must be greater than or equal to aggregate container requests of 300m',
            id="below the containers",
        ),
        pytest.param(
            _spec(
                [_c(requests={"memory": "128Mi"}), _c("b", requests={"memory": "128Mi"})],
                {"requests": {"memory": "200Mi"}},
            ),
            "spec.resources.requests[memory]",
            'Invalid value: "200Mi": must be greater than or equal to aggregate container requests of 256Mi',
            id="below the containers' sum",
        ),
        pytest.param(
            _spec([_c()], {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}),
            "spec.resources.requests",
            'Invalid value: "2": must be less than or equal to cpu limit of 1',
            id="request above limit",
        ),
        pytest.param(
            _spec([_c()], {"requests": {"example.com/gpu": "1"}}),
            "spec.resources.requests[example.com/gpu]",
            'Unsupported value: "example.com/gpu": supported values: "cpu", "hugepages-", "memory"',
            id="unsupported name",
        ),
        pytest.param(
            _spec([_c()], {"limits": {"ephemeral-storage": "1Gi"}}),
            "spec.resources.limits[ephemeral-storage]",
            'Unsupported value: "ephemeral-storage": supported values: "cpu", "hugepages-", "memory"',
            id="ephemeral storage unsupported",
        ),
        pytest.param(
            _spec([_c(limits={"cpu": "2"})], {"limits": {"cpu": "1"}}),
            "spec.resources.containers[0][cpu].limits",
            'Invalid value: "2": must be less than or equal to pod limits of 1',
            id="container limit above pod",
        ),
        pytest.param(
            _spec(
                [_c(requests={"hugepages-2Mi": "4Mi"}, limits={"hugepages-2Mi": "4Mi"})],
                {"limits": {"cpu": "1", "hugepages-2Mi": "2Mi"}},
            ),
            "spec.resources.limits[hugepages-2Mi]",
            'Invalid value: "2Mi": must be greater than or equal to aggregate container limits of 4Mi',
            id="hugepages below the containers",
        ),
        pytest.param(
            _spec([_c()], {"requests": {"hugepages-2Mi": "2Mi", "cpu": "1"}}),
            "spec.resources.limits",
            "Required value: Limit must be set for non overcommitable resources",
            id="hugepages need a limit",
        ),
        pytest.param(
            _spec([_c()], {"requests": {"hugepages-2Mi": "2Mi", "cpu": "1"}, "limits": {"hugepages-2Mi": "4Mi"}}),
            "spec.resources.requests",
            'Invalid value: "2Mi": must be equal to hugepages-2Mi limit of 4Mi',
            id="hugepages equal to limit",
        ),
        pytest.param(
            _spec([_c()], {"limits": {"hugepages-2Mi": "2Mi"}, "requests": {"hugepages-2Mi": "2Mi"}}),
            "spec.resources",
            "Forbidden: HugePages require cpu or memory",
            id="hugepages alone",
        ),
        pytest.param(
            {**_spec([_c()], {"requests": {"cpu": "1"}}), "os": {"name": "windows"}},
            "spec.resources",
            "Forbidden: may not be set for a windows pod",
            id="windows",
        ),
        pytest.param(
            _spec([_c()], {"requests": {"cpu": "1"}, "claims": [{"name": "x"}]}),
            "spec.resources.claims",
            "Forbidden: claims may not be set for Resources at pod-level",
            id="claims",
        ),
        pytest.param(
            _spec([_c()], {"requests": {"cpu": "-1"}}),
            "spec.resources.requests[cpu]",
            'Invalid value: "-1": must be greater than or equal to 0',
            id="negative",
        ),
    ],
)
def test_validation(spec: dict[str, Any], path: str, reason: str) -> None:
    with pytest.raises(ObjectError) as info:
        validate_pod_level_resources(spec)
    assert (info.value.path, info.value.reason) == (path, reason)


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(_spec([_c(requests={"cpu": "100m"})], None), id="none"),
        pytest.param(
            _spec(
                [_c(requests={"cpu": "200m"})],
                {"requests": {"cpu": "200m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
            ),
            id="defaulted limits-only pod",
        ),
        pytest.param(
            _spec([_c(requests={"cpu": "1"}, limits={"cpu": "1"})], {"limits": {"cpu": "1"}}),
            id="container limit equal to the pod's",
        ),
    ],
)
def test_valid(spec: dict[str, Any]) -> None:
    validate_pod_level_resources(spec)


def test_aggregates_follow_the_sidecar_rule() -> None:
    spec = _spec(
        [_c(requests={"cpu": "100m"})],
        None,
        init=[_c("i", requests={"cpu": "1"}), _c("s", requests={"cpu": "50m"}, sidecar=True)],
    )
    value, fmt = aggregate_containers(spec, "requests")["cpu"]
    assert quantity_string(value, fmt) == "1"  # the first init container ran before the sidecar started
