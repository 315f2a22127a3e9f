"""Pods being scheduled, and the cluster events that happened meanwhile (v1.34's in-flight events).

A pod is in flight from its pop until its attempt is over (put back after a failure, or allowed by
Permit). Any event of interest that arrives meanwhile is kept, so that a pod failing afterwards is
judged against what changed during its attempt, not only against what happens later. Events are kept
as long as some pod popped before them is still in flight, and dropped once none is.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.interfaces import ClusterEvent


@dataclass(frozen=True, slots=True)
class InFlightEvent:
    seq: int
    event: ClusterEvent
    old_obj: Any
    new_obj: Any


class InFlight:
    """In-flight pods (with when they were popped) and the events recorded since the oldest one."""

    __slots__ = ("_counter", "_events", "_pods", "record_events")

    def __init__(self, record_events: bool) -> None:
        #: Whether events are kept at all (QueueingHints on); pods are tracked either way.
        self.record_events = record_events
        self._pods: dict[str, tuple[int, Pod]] = {}
        self._events: deque[InFlightEvent] = deque()
        self._counter = itertools.count()

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def __len__(self) -> int:
        return len(self._pods)

    def pods(self) -> list[Pod]:
        return [pod for _, pod in self._pods.values()]

    def add_pod(self, pod: Pod) -> bool:
        """The pod was popped; False if it was in flight already."""
        if pod.uid in self._pods:
            return False
        self._pods[pod.uid] = (next(self._counter), pod)
        return True

    def add_event(self, event: ClusterEvent, old_obj: Any, new_obj: Any) -> bool:
        """Keep ``event`` if any pod is in flight."""
        if not self.record_events or not self._pods:
            return False
        self._events.append(InFlightEvent(next(self._counter), event, old_obj, new_obj))
        return True

    def add_pod_events(self, pod: Pod, old_pod: Pod | None, events: Iterable[ClusterEvent]) -> bool:
        """An update of ``pod`` while it is in flight: keep its events; False if it is not in flight."""
        if pod.uid not in self._pods:
            return False
        if self.record_events:
            for event in events:
                self._events.append(InFlightEvent(next(self._counter), event, old_pod, pod))
        return True

    def events_for(self, uid: str) -> list[InFlightEvent] | None:
        """The events recorded since the pod was popped (None: the pod is not in flight)."""
        entry = self._pods.get(uid)
        if entry is None:
            return None
        popped = entry[0]
        return [e for e in self._events if e.seq > popped]

    def done(self, uid: str) -> None:
        """The pod's attempt is over: forget it, and the events no pod in flight can need any more."""
        if self._pods.pop(uid, None) is None:
            return
        if not self._pods:
            self._events.clear()
            return
        oldest = min(seq for seq, _ in self._pods.values())
        events = self._events
        while events and events[0].seq < oldest:
            events.popleft()

    def event_count(self) -> int:
        return len(self._events)
