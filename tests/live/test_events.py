"""The asynchronous event recorder: events.k8s.io/v1 when served, repeats aggregated, storms filtered."""

from __future__ import annotations

from typing import Any

from kubesched.cluster.protocol import NotFound
from kubesched.live import events as events_module
from kubesched.live.events import EventRecorder


class FakeRest:
    def __init__(self, serves_events_v1: bool = True) -> None:
        self.serves_events_v1 = serves_events_v1
        self.calls: list[tuple[str, str, Any]] = []

    def request(self, method: str, path: str, body: Any = None, **_: Any) -> Any:
        if path == "/apis/events.k8s.io/v1":
            if not self.serves_events_v1:
                raise NotFound("the server could not find the requested resource")
            return {}
        self.calls.append((method, path, body))
        return body


def failed(name: str, message: str = "0/3 nodes are available") -> dict:
    return {
        "involvedObject": {"kind": "Pod", "namespace": "ns", "name": name, "uid": f"uid-{name}"},
        "type": "Warning",
        "reason": "FailedScheduling",
        "message": message,
        "reportingController": "default-scheduler",
    }


def test_events_v1_with_kube_schedulers_action_and_aggregated_repeats() -> None:
    rest = FakeRest()
    recorder = EventRecorder(rest, controller="kubesched", instance="host_1")  # type: ignore[arg-type]
    for _ in range(3):
        recorder.record(failed("p"))
    recorder.record(failed("p", "another message"))
    assert recorder.flush()
    recorder.stop()
    methods = [(m, p.rsplit("/", 1)[0] if m == "PATCH" else p) for m, p, _ in rest.calls]
    assert methods == [
        ("POST", "/apis/events.k8s.io/v1/namespaces/ns/events"),
        ("PATCH", "/apis/events.k8s.io/v1/namespaces/ns/events"),
        ("PATCH", "/apis/events.k8s.io/v1/namespaces/ns/events"),
        ("POST", "/apis/events.k8s.io/v1/namespaces/ns/events"),
    ]
    first = rest.calls[0][2]
    assert (first["action"], first["reason"], first["note"], first["type"]) == (
        "Scheduling",
        "FailedScheduling",
        "0/3 nodes are available",
        "Warning",
    )
    assert first["regarding"]["uid"] == "uid-p"
    assert first["reportingController"] == "default-scheduler"
    assert first["reportingInstance"] == "host_1"
    assert [c[2]["series"]["count"] for c in rest.calls[1:3]] == [2, 3]


def test_core_v1_when_events_k8s_io_is_not_served() -> None:
    rest = FakeRest(serves_events_v1=False)
    recorder = EventRecorder(rest)  # type: ignore[arg-type]
    recorder.record(failed("p"))
    recorder.record(failed("p"))
    recorder.stop()
    (m1, p1, b1), (m2, _, b2) = rest.calls
    assert (m1, p1) == ("POST", "/api/v1/namespaces/ns/events")
    assert (b1["message"], b1["count"], b1["involvedObject"]["name"]) == ("0/3 nodes are available", 1, "p")
    assert (m2, b2["count"]) == ("PATCH", 2)


def test_events_about_many_objects_are_written_by_several_workers() -> None:
    rest = FakeRest()
    recorder = EventRecorder(rest, workers=4)  # type: ignore[arg-type]
    for i in range(40):
        recorder.record(failed(f"p{i}"))
        recorder.record(failed(f"p{i}"))  # one object's repeat goes to the same worker: aggregated
    recorder.stop()
    posts = [c for c in rest.calls if c[0] == "POST"]
    patches = [c for c in rest.calls if c[0] == "PATCH"]
    assert sorted(c[2]["regarding"]["name"] for c in posts) == sorted(f"p{i}" for i in range(40))
    assert len(patches) == 40 and recorder.written == 40 and recorder.dropped == 0


def test_a_storm_about_one_object_is_cut_off_and_others_still_get_through(monkeypatch: Any) -> None:
    monkeypatch.setattr(events_module, "SPAM_BURST", 5)
    rest = FakeRest()
    recorder = EventRecorder(rest)  # type: ignore[arg-type]
    for i in range(20):
        recorder.record(failed("noisy", f"message {i}"))
    recorder.record(failed("quiet"))
    recorder.stop()
    noisy = [c for c in rest.calls if c[2]["regarding"]["name"] == "noisy"]
    assert len(noisy) == 5
    assert recorder.dropped == 15
    assert [c[2]["regarding"]["name"] for c in rest.calls].count("quiet") == 1


def test_record_never_blocks_when_the_queue_is_full(monkeypatch: Any) -> None:
    monkeypatch.setattr(events_module, "QUEUE_SIZE", 2)

    class Stuck(FakeRest):
        def request(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
            import time

            time.sleep(0.5)
            return super().request(method, path, body, **kw)

    recorder = EventRecorder(Stuck(), workers=1)  # type: ignore[arg-type]
    for i in range(10):
        recorder.record(failed(f"p{i}"))  # returns at once even though the writer is stuck
    assert recorder.dropped >= 7


def test_per_object_state_is_bounded_as_client_gos_lru(monkeypatch) -> None:
    """A scheduler that runs for weeks sees millions of pods: spam-filter buckets and aggregation keys
    of old objects are forgotten, oldest first, beyond CACHE_SIZE objects."""
    monkeypatch.setattr(events_module, "CACHE_SIZE", 8)
    rest = FakeRest()
    recorder = EventRecorder(rest)  # type: ignore[arg-type]
    for i in range(50):
        recorder.record(failed(f"p{i}"))
    assert recorder.flush()
    recorder.stop()
    (worker,) = recorder._workers
    assert len(worker._buckets) <= 8 and len(worker._series) <= 8
    assert ("Pod", "ns", "p49", "uid-p49") in worker._buckets
    assert len(rest.calls) == 50
