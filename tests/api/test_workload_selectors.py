"""A workload's selector must select its template's pods: the API server's rules and messages, per kind."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.errors import ObjectError
from kubesched.api.workload_selectors import WORKLOAD_KINDS, check_workload_selector

MISMATCH = "`selector` does not match template `labels`"
_ABSENT = object()


def workload(kind: str, selector: Any = _ABSENT, labels: Any = _ABSENT, **spec: Any) -> dict[str, Any]:
    api = "batch/v1" if kind == "Job" else "v1" if kind == "ReplicationController" else "apps/v1"
    template: dict[str, Any] = {"spec": {"containers": [{"name": "c", "image": "x"}]}}
    if labels is not _ABSENT:
        template["metadata"] = {"labels": labels}
    body: dict[str, Any] = {"template": template, **spec}
    if selector is not _ABSENT:
        body["selector"] = selector
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "web"}, "spec": body}


WEB = {"matchLabels": {"app": "web"}}

VALID = [
    workload("Deployment", WEB, {"app": "web", "tier": "front"}),
    workload(
        "ReplicaSet", {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}, {"app": "api"}
    ),
    workload("StatefulSet", WEB, {"app": "web"}),
    workload("DaemonSet", WEB, {"app": "web"}),
    workload("Job", labels={"app": "web"}),  # selector generated
    workload("Job", {"matchLabels": {"job-name": "web"}}, {"app": "web"}),  # names what is generated
    workload("Job", WEB, {"app": "web"}, manualSelector=True),
    workload("ReplicationController", {"app": "web"}, {"app": "web", "v": "2"}),
    workload("ReplicationController", labels={"app": "web"}),  # defaults to the labels
]


@pytest.mark.parametrize("obj", VALID, ids=[f"{o['kind']}-{i}" for i, o in enumerate(VALID)])
def test_selectors_that_select_their_pods_pass(obj: dict[str, Any]) -> None:
    check_workload_selector(obj)


REFUSED: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "deployment-mismatch",
        workload("Deployment", WEB, {"app": "frontend"}),
        "spec.template.metadata.labels",
        'Invalid value: {"app":"frontend"}: ' + MISMATCH,
    ),
    (
        "deployment-no-labels",
        workload("Deployment", WEB),
        "spec.template.metadata.labels",
        "Invalid value: null: " + MISMATCH,
    ),
    ("deployment-no-selector", workload("Deployment", labels={"app": "web"}), "spec.selector", "Required value"),
    (
        "deployment-empty-selector",
        workload("Deployment", {}, {"app": "web"}),
        "spec.selector",
        "Invalid value: {}: empty selector is invalid for deployment",
    ),
    (
        "replicaset-mismatch",
        workload("ReplicaSet", {"matchLabels": {"b": "2", "a": "1"}}, {"b": "2", "a": "x"}),
        "spec.template.metadata.labels",
        'Invalid value: {"a":"x","b":"2"}: ' + MISMATCH,
    ),
    (
        "statefulset-empty-selector",
        workload("StatefulSet", {"matchLabels": {}}, {"app": "web"}),
        "spec.selector",
        "Invalid value: {}: empty selector is invalid for statefulset",
    ),
    (
        "daemonset-no-selector",
        workload("DaemonSet", labels={"app": "web"}),
        "spec.template.metadata.labels",
        'Invalid value: {"app":"web"}: ' + MISMATCH,
    ),
    (
        "daemonset-empty-selector",
        workload("DaemonSet", {}, {"app": "web"}),
        "spec.selector",
        "Invalid value: {}: empty selector is invalid for daemonset",
    ),
    (
        "job-manual-mismatch",
        workload("Job", WEB, {"y": "z"}, manualSelector=True),
        "spec.template.metadata.labels",
        'Invalid value: {"y":"z"}: ' + MISMATCH,
    ),
    (
        "job-manual-no-selector",
        workload("Job", labels={"app": "web"}, manualSelector=True),
        "spec.selector",
        "Required value",
    ),
    (
        "job-selector-not-generated",
        workload(
            "Job",
            {"matchLabels": {"app": "web"}, "matchExpressions": [{"operator": "Exists", "key": "k"}]},
            {"app": "web"},
        ),
        "spec.selector",
        'Invalid value: {"matchLabels":{"app":"web"},"matchExpressions":[{"key":"k",'
        '"operator":"Exists"}]}: `selector` not auto-generated',
    ),
    (
        "replicationcontroller-mismatch",
        workload("ReplicationController", {"app": "web"}, {"app": "db"}),
        "spec.template.metadata.labels",
        'Invalid value: {"app":"db"}: ' + MISMATCH,
    ),
]


@pytest.mark.parametrize(("obj", "path", "reason"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_selectors_that_miss_their_pods_are_refused_as_the_api_server_refuses_them(
    obj: dict[str, Any], path: str, reason: str
) -> None:
    with pytest.raises(ObjectError) as info:
        check_workload_selector(obj)
    assert (info.value.path, info.value.reason) == (path, reason)


def test_the_kinds_checked() -> None:
    assert {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController"} == WORKLOAD_KINDS
