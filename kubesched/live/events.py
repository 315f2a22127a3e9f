"""An asynchronous event recorder, as client-go's event broadcaster: the scheduler never waits on events.

``record`` only enqueues. Writer threads (each owns the objects whose events hash to it, so one
object's events stay in order and its aggregation state has one owner) write each event as
events.k8s.io/v1 (when the server serves that group; core/v1 otherwise), aggregate repeats (same object,
type, reason, action and note: the existing event's count / series goes up instead of a new object) and
drop what exceeds a per-object token bucket (client-go's spam filter: a burst of 25, then one per five
minutes). A full queue drops the event with a log line: a storm of failures never stalls the loop.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from datetime import UTC, datetime
from typing import Any

from kubesched.api.timestamps import format_time
from kubesched.cluster.protocol import ApiError, NotFound
from kubesched.live.connection import RestClient

log = logging.getLogger(__name__)

#: Events waiting for the writer: a burst of thousands of bindings queues its Scheduled events rather
#: than dropping them (a full queue drops, with a log line, as client-go's broadcaster does).
QUEUE_SIZE = 10_000
#: Writer threads. One, as client-go's broadcaster writes to its sink from one goroutine: every further
#: writer is one more request the API server and etcd serve beside the bindings, and one more thread
#: taking the interpreter lock from the scheduling loop (eight writers made the live benchmark's bursts
#: 10-20 % slower than one); the queue absorbs what the writer has not caught up with.
WORKERS = 1
SPAM_BURST = 25
SPAM_REFILL_SECONDS = 300.0
#: Objects whose spam-filter bucket and aggregation state are remembered (client-go's LRU caches).
CACHE_SIZE = 4096
#: How long an event may be aggregated into (client-go: isomorphic events within 6 minutes form a series).
AGGREGATION_WINDOW = 360.0
#: The action recorded for each reason kube-scheduler emits (events.k8s.io needs one).
ACTIONS = {
    "Scheduled": "Binding",
    "FailedScheduling": "Scheduling",
    "Preempted": "Preempting",
    "LeaderElection": "LeaderElection",
}
_STOP = object()


def _micro_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _now() -> str:
    return format_time(datetime.now(UTC))


class EventRecorder:
    """``record(event)`` takes a core/v1 or events.k8s.io/v1 shaped dict; see the module docstring."""

    def __init__(
        self, rest: RestClient, *, controller: str = "kubesched", instance: str = "kubesched", workers: int = WORKERS
    ) -> None:
        self.rest = rest
        self.controller = controller
        self.instance = instance
        self.dropped = 0
        self.written = 0
        self._events_v1: bool | None = None
        self._discovery = threading.Lock()
        self._workers = [_Worker(self, i) for i in range(max(workers, 1))]

    def record(self, event: dict[str, Any]) -> None:
        regarding = event.get("regarding") or event.get("involvedObject") or {}
        worker = self._workers[hash((regarding.get("namespace"), regarding.get("name"))) % len(self._workers)]
        try:
            worker.queue.put_nowait(event)
        except queue.Full:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:  # a storm must not turn into a log storm
                log.warning(
                    "event queue full: %d events dropped so far (latest: %s)", self.dropped, event.get("reason")
                )

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every recorded event was written (or given up on)."""
        deadline = time.monotonic() + timeout
        while self._pending() and time.monotonic() < deadline:
            time.sleep(0.02)
        return not self._pending()

    def _pending(self) -> bool:
        return any(w.queue.unfinished_tasks for w in self._workers)

    def stop(self, timeout: float = 5.0) -> None:
        self.flush(timeout)
        for worker in self._workers:
            worker.queue.put(_STOP)
        for worker in self._workers:
            worker.thread.join(timeout)

    def serves_events_v1(self) -> bool:
        """Whether the API server serves events.k8s.io/v1 (asked once)."""
        with self._discovery:
            if self._events_v1 is None:
                try:
                    self.rest.request("GET", "/apis/events.k8s.io/v1")
                    self._events_v1 = True
                except NotFound:
                    self._events_v1 = False
            return self._events_v1


def _forget_oldest(state: dict[tuple[Any, ...], Any]) -> None:
    """Keep per-object state to about CACHE_SIZE objects, as client-go's LRU caches do: past it, the
    oldest quarter (insertion order) is forgotten."""
    if len(state) > CACHE_SIZE:
        for key in list(state)[: CACHE_SIZE // 4]:
            del state[key]


class _Worker:
    """One writer thread, its queue, and the aggregation and spam-filter state of the objects it owns."""

    def __init__(self, recorder: EventRecorder, index: int) -> None:
        self.recorder = recorder
        self.rest = recorder.rest
        self.queue: queue.Queue[Any] = queue.Queue(QUEUE_SIZE)
        self._series: dict[tuple[Any, ...], tuple[str, str, int, float, bool]] = {}
        self._buckets: dict[tuple[Any, ...], tuple[float, float]] = {}
        self.thread = threading.Thread(target=self._run, name=f"event-recorder-{index}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            item = self.queue.get()
            try:
                if item is _STOP:
                    return
                self._write(item)
            except ApiError as err:
                log.warning("could not record event %s: %s", item.get("reason"), err)
            except Exception:
                log.exception("could not record event")
            finally:
                self.queue.task_done()

    def _allowed(self, ref_key: tuple[Any, ...]) -> bool:
        """The per-object token bucket (burst 25, one token back every five minutes)."""
        now = time.monotonic()
        tokens, last = self._buckets.get(ref_key, (float(SPAM_BURST), now))
        tokens = min(float(SPAM_BURST), tokens + (now - last) / SPAM_REFILL_SECONDS)
        if tokens < 1:
            self._buckets[ref_key] = (tokens, now)
            return False
        self._buckets[ref_key] = (tokens - 1, now)
        _forget_oldest(self._buckets)
        return True

    def _write(self, event: dict[str, Any]) -> None:
        regarding = event.get("regarding") or event.get("involvedObject") or {}
        type_ = event.get("type") or "Normal"
        reason = event.get("reason") or ""
        note = event.get("note") or event.get("message") or ""
        action = event.get("action") or ACTIONS.get(reason, reason)
        controller = event.get("reportingController") or self.recorder.controller
        namespace = regarding.get("namespace") or (event.get("metadata") or {}).get("namespace") or "default"
        ref_key = (regarding.get("kind"), namespace, regarding.get("name"), regarding.get("uid"))
        key = (*ref_key, type_, reason, action, note)
        now = time.monotonic()
        existing = self._series.get(key)
        if existing is not None and now - existing[3] < AGGREGATION_WINDOW:
            name, ns, count, _, v1 = existing
            if not self._allowed(ref_key):
                self.recorder.dropped += 1
                return
            self._bump(name, ns, count + 1, v1)
            self._series[key] = (name, ns, count + 1, now, v1)
            return
        if not self._allowed(ref_key):
            self.recorder.dropped += 1
            return
        name = f"{regarding.get('name') or 'event'}.{time.time_ns():x}"
        v1 = self._create(
            event,
            name,
            namespace,
            regarding,
            type_=type_,
            reason=reason,
            note=note,
            action=action,
            controller=controller,
        )
        self.recorder.written += 1
        self._series[key] = (name, namespace, 1, now, v1)
        _forget_oldest(self._series)

    def _create(
        self,
        event: dict[str, Any],
        name: str,
        namespace: str,
        regarding: dict[str, Any],
        *,
        type_: str,
        reason: str,
        note: str,
        action: str,
        controller: str,
    ) -> bool:
        """POST a new event, in events.k8s.io/v1 when the API server serves it, else in core/v1; whether it
        was events.k8s.io/v1 (a repeat is then bumped in the same group)."""
        related = event.get("related")
        v1 = self.recorder.serves_events_v1()
        if v1:
            path = f"/apis/events.k8s.io/v1/namespaces/{namespace}/events"
            body: dict[str, Any] = {
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "eventTime": _micro_now(),
                "reportingController": controller,
                "reportingInstance": event.get("reportingInstance") or self.recorder.instance,
                "action": action,
                "reason": reason,
                "note": note[:1024],
                "type": type_,
                "regarding": regarding,
            }
        else:
            path = f"/api/v1/namespaces/{namespace}/events"
            stamp = _now()
            body = {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "involvedObject": regarding,
                "reason": reason,
                "message": note,
                "type": type_,
                "source": {"component": controller},
                "firstTimestamp": stamp,
                "lastTimestamp": stamp,
                "count": 1,
                "reportingComponent": controller,
                "reportingInstance": self.recorder.instance,
            }
        if related:
            body["related"] = related
        self.rest.request("POST", path, body)
        return v1

    def _bump(self, name: str, namespace: str, count: int, v1: bool) -> None:
        """A repeat: raise the existing event's count (core/v1) or series (events.k8s.io/v1)."""
        if v1:
            patch: dict[str, Any] = {"series": {"count": count, "lastObservedTime": _micro_now()}}
            path = f"/apis/events.k8s.io/v1/namespaces/{namespace}/events/{name}"
        else:
            patch = {"count": count, "lastTimestamp": _now()}
            path = f"/api/v1/namespaces/{namespace}/events/{name}"
        self.rest.request("PATCH", path, patch, content_type="application/merge-patch+json")
