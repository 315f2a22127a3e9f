"""The profiles' events (kubesched.profile.events): what is written, by whom, and when not at all."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubesched.api.objects import Pod
from kubesched.clock import VirtualClock
from kubesched.cluster.protocol import ApiError
from kubesched.profile.events import MAX_EVENT_MESSAGE, ClusterEventRecorder, truncate_message
from tests.factories import pod_dict

T0 = datetime(2024, 1, 1, 12, 30, tzinfo=UTC)


class Events:
    """A cluster that keeps the events written to it (or refuses them)."""

    def __init__(self, refuse: bool = False) -> None:
        self.written: list[dict[str, Any]] = []
        self.refuse = refuse

    def record_event(self, event: dict[str, Any]) -> None:
        if self.refuse:
            raise ApiError("unavailable")
        self.written.append(event)


def recorder(cluster: Events, gate: Any = None) -> ClusterEventRecorder:
    return ClusterEventRecorder(cluster, VirtualClock(T0), gate=gate)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("length", "kept"),
    [(0, 0), (MAX_EVENT_MESSAGE, MAX_EVENT_MESSAGE), (MAX_EVENT_MESSAGE + 1, MAX_EVENT_MESSAGE)],
)
def test_messages_are_cut_at_kube_schedulers_length(length: int, kept: int) -> None:
    cut = truncate_message("x" * length)
    assert len(cut) == kept
    assert cut.endswith(" ...") is (length > MAX_EVENT_MESSAGE)


def test_a_pod_event_is_reported_by_the_pods_profile() -> None:
    cluster = Events()
    pod = Pod.from_dict(pod_dict("p", namespace="team", spec={"schedulerName": "calm"}, uid="u1"))
    recorder(cluster).pod_event(pod, "Warning", "FailedScheduling", "no room")
    [event] = cluster.written
    assert event["involvedObject"] == {"kind": "Pod", "namespace": "team", "name": "p", "uid": "u1"}
    assert (event["type"], event["reason"], event["message"]) == ("Warning", "FailedScheduling", "no room")
    assert event["reportingController"] == "calm" and event["source"] == {"component": "kubesched"}
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2024-01-01T12:30:00Z"
    assert event["metadata"] == {"generateName": "p.", "namespace": "team"}


def test_a_closed_gate_silences_pod_events_but_not_the_schedulers_own() -> None:
    cluster = Events()
    events = recorder(cluster, gate=lambda: False)
    events.pod_event(Pod.from_dict(pod_dict("p")), "Normal", "Scheduled", "ok")
    events.event(
        {"kind": "PodGroup", "metadata": {"namespace": "team", "name": "g", "uid": "g1"}},
        "Warning",
        "Timeout",
        "gang timed out",
    )
    [event] = cluster.written
    assert event["involvedObject"] == {"kind": "PodGroup", "namespace": "team", "name": "g", "uid": "g1"}
    assert event["reportingController"] == "kubesched"


def test_a_refused_event_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="kubesched.profile.events")
    recorder(Events(refuse=True)).object_event("Node", "", "n1", "Warning", "FailedToParse", "bad")
    assert "recording event for /n1 failed" in caplog.text


def test_events_of_one_second_share_its_stamp_and_the_next_second_gets_its_own() -> None:
    cluster = Events()
    clock = VirtualClock(T0 + timedelta(microseconds=250_000))
    events = ClusterEventRecorder(cluster, clock)  # type: ignore[arg-type]
    for step in (0.5, 0.249999, 0.000001, 0.999999, 59.0):
        events.object_event("Node", "", "n1", "Normal", "Seen", "x")
        clock.advance_to(clock.now() + timedelta(seconds=step))
    assert [e["firstTimestamp"] for e in cluster.written] == [
        "2024-01-01T12:30:00Z",
        "2024-01-01T12:30:00Z",
        "2024-01-01T12:30:00Z",
        "2024-01-01T12:30:01Z",
        "2024-01-01T12:30:01Z",
    ]
