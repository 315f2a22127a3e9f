"""TimeSeries rows: the most pods pending between samples, and merging that keeps peaks and the end."""

from __future__ import annotations

from typing import Any

from kubesched.cluster.protocol import WatchEvent
from kubesched.sim.timeseries import TimeSeries
from tests.sim.scenarios import node, pod


def _pod(name: str, node_name: str | None = None) -> dict[str, Any]:
    obj = pod(name, cpu="1", node_name=node_name)
    obj["metadata"]["uid"] = f"uid-{name}"
    return obj


def _created(series: TimeSeries, name: str, now: float) -> None:
    series.pod_event(WatchEvent("ADDED", "Pod", _pod(name)), now)


def _bound(series: TimeSeries, name: str, now: float) -> None:
    series.pod_event(WatchEvent("MODIFIED", "Pod", _pod(name, "n1"), _pod(name)), now)


def test_a_row_keeps_the_most_pods_pending_until_the_next_one() -> None:
    series = TimeSeries(interval=1.0)
    series.node_event(WatchEvent("ADDED", "Node", node("n1", cpu="8")))
    series.sample(0.0)
    for i in range(3):
        _created(series, f"p{i}", 0.2)
    for i in range(3):
        _bound(series, f"p{i}", 0.5)
    series.maybe_sample(1.0)
    assert series.pending == [3, 0]  # the burst between the samples shows
    assert series.requested["cpu"] == [0, 3000]  # totals are as they were at each row's time
    assert series.allocatable["cpu"] == [8000, 8000]


def test_merging_rows_keeps_the_peak_and_the_last_row() -> None:
    series = TimeSeries(interval=1.0, max_points=4)
    series.node_event(WatchEvent("ADDED", "Node", node("n1", cpu="8")))
    series.sample(0.0)
    _created(series, "p0", 0.5)  # row 0: one pending
    series.sample(1.0)
    _bound(series, "p0", 1.5)  # row 1: the pod still pending at the row's time
    series.sample(2.0)
    series.sample(3.0)
    _created(series, "p1", 3.5)
    series.sample(4.0)  # a fifth row: rows merge in pairs, the last one kept as it was
    assert series.interval == 2.0
    assert series.times == [0.0, 2.0, 4.0]
    assert series.pending == [1, 1, 1]
    assert series.requested["cpu"] == [0, 1000, 1000]


def test_allocatable_totals_follow_nodes_of_one_machine_type_and_of_others() -> None:
    series = TimeSeries(interval=1.0)
    for name in ("n1", "n2", "n3"):
        series.node_event(WatchEvent("ADDED", "Node", node(name, cpu="8")))
    series.node_event(WatchEvent("ADDED", "Node", node("n4", cpu="2")))
    series.node_event(WatchEvent("MODIFIED", "Node", node("n2", cpu="4"), node("n2", cpu="8")))
    series.node_event(WatchEvent("DELETED", "Node", node("n3", cpu="8")))
    series.sample(0.0)
    assert series.allocatable["cpu"] == [8000 + 4000 + 2000]


def test_requested_totals_follow_pods_of_one_shape_and_of_others() -> None:
    series = TimeSeries(interval=1.0)
    shapes = {"a": "1", "b": "1", "c": "500m"}
    for name, cpu in shapes.items():
        obj = pod(name, cpu=cpu, node_name="n1")
        obj["metadata"]["uid"] = f"uid-{name}"
        series.pod_event(WatchEvent("ADDED", "Pod", obj), 0.0)
    sidecar = pod("d", cpu="1", node_name="n1")
    sidecar["metadata"]["uid"] = "uid-d"
    # A restartable init container counts beside the containers: not the same shape as "a".
    sidecar["spec"]["initContainers"] = [
        {"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "250m"}}}
    ]
    series.pod_event(WatchEvent("ADDED", "Pod", sidecar), 0.0)
    odd = pod("e", cpu="1", node_name="n1")
    odd["metadata"]["uid"] = "uid-e"
    odd["spec"]["containers"][0]["resources"]["requests"]["cpu"] = 2  # not a string: read, not kept
    series.pod_event(WatchEvent("ADDED", "Pod", odd), 0.0)
    gone = pod("b", cpu="1", node_name="n1")
    gone["metadata"]["uid"] = "uid-b"
    series.pod_event(WatchEvent("DELETED", "Pod", gone), 0.0)
    series.sample(0.0)
    assert series.requested["cpu"] == [1000 + 500 + 1250 + 2000]


def test_pods_of_one_shape_share_a_request_and_other_shapes_never_do() -> None:
    """The per-shape memo answers what parsing each pod afresh answers, whatever the spec looks like."""
    from kubesched.sim.timeseries import _parse_requests, _requests

    def spec(*containers: Any, **extra: Any) -> dict[str, Any]:
        return {"spec": {"containers": list(containers), **extra}}

    def c(requests: Any = None, **extra: Any) -> dict[str, Any]:
        return {"name": "app", **({"resources": {"requests": requests}} if requests is not None else {}), **extra}

    pods = [
        spec(c({"cpu": "1", "memory": "2Gi"})),
        spec(c({"cpu": "1", "memory": "2Gi"})),
        spec(c({"cpu": "2", "memory": "2Gi"})),
        spec(c({"cpu": 1})),  # not a string: never kept
        spec(c({"cpu": "1"}), initContainers=[c({"cpu": "3"})]),
        spec(c({"cpu": "1"}), initContainers=[c({"cpu": "3"}, restartPolicy="Always")]),
        spec(c({"cpu": "1"}), overhead={"cpu": "250m"}),
        spec(c()),
        spec({"name": "app", "resources": None}),
        spec({"name": "app", "resources": "bad"}),
        {"spec": {"containers": "bad"}},
        {"spec": None},
    ]
    memo: dict[Any, dict[str, int]] = {}
    for _ in range(2):
        for obj in pods:
            assert _requests(obj.get("spec") or {}, memo) == _parse_requests(obj.get("spec") or {})
    assert _requests(pods[4]["spec"], memo) != _requests(pods[5]["spec"], memo)
