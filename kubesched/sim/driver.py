"""The one driver loop: how the simulator, the tests' harness and the benchmarks move a scheduler.

The driver owns the virtual clock and the embedded cluster; the scheduler is driven only through its
public surface (``start``, ``schedule_next``, ``run_pending_tasks``, ``idle``, ``backoff_end``,
``waiting_pod_count``, ``rejecting_plugins``, ``park``). The driver watches the cluster like any other
client: that is how it knows when pods are bound or deleted and whether anything changed in the cluster
between two failed attempts of a pod.

Everything that happens later is a clock timer: the scheduler's own backoff and leftover flushes and
Permit timeouts, and the driver's scenario actions (arrivals, pod completions, timeline steps). Two ways
of running share the loop:

* :meth:`Driver.settle` - the untimed rule the conformance corpus was recorded under: run until the
  scheduler is idle, delivering every pending event and letting every backoff finish before each
  scheduling cycle (so queue order alone decides which pod goes next).
* :meth:`Driver.run` - discrete-event time: scheduling cycles take :data:`CYCLE_TIME` each and, when
  the scheduler has nothing to do, the clock jumps to the next timer; the run ends when no scenario
  action is left and the scheduler has nothing it will retry by itself (backoffs, Permit waits).

From the same watch the driver keeps the run's progress (every pod that appears unbound is one more to
place; it is done once bound or deleted, and whatever is left is given up by :meth:`Driver.finish`) and
its deletions, each with why (:mod:`kubesched.sim.deletions`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from kubesched.clock import VirtualClock
from kubesched.cluster.protocol import ApiError, WatchEvent
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.recording.attempt import Attempt
from kubesched.recording.recorder import Recorder
from kubesched.recording.trace import ERROR, SCHEDULED
from kubesched.scenario.timing import DURATION_ANNOTATION, parse_duration_seconds
from kubesched.scheduler import Scheduler
from kubesched.sim.deletions import COMPLETED, DeletionLog
from kubesched.sim.timeseries import TimeSeries
from kubesched.util.gc_tuning import freezing_loop, long_lived_heap

#: Virtual time one scheduling cycle takes: keeps queue timestamps strictly ordered.
CYCLE_TIME = timedelta(milliseconds=1)
#: The message part kube-scheduler gives a pod whose Permit wait ran out.
TIMEOUT_REJECTION = "rejected due to timeout after waiting"

#: Kinds whose every change may make a pod rejected for its devices schedulable (DynamicResources).
DEVICE_KINDS = ("ResourceClaim", "ResourceSlice", "DeviceClass")

Action = Callable[[], object]  # what an action returns is not used
#: ``progress(done, total)``: pods placed or given up, out of the pods seen (or expected) to place so far.
Progress = Callable[[int, int], None]


class _AttemptListener(Recorder):
    """Hands every finished attempt to the driver: outcomes for loop detection, victims for deletions."""

    enabled = True

    def __init__(self, driver: Driver) -> None:
        self.driver = driver

    def finished(self, attempt: Attempt) -> None:
        self.driver.outcome(attempt.pod, attempt.result, attempt.message)
        if attempt.victims:
            self.driver.deletions.preempting(attempt.pod, attempt.victims)


class Driver:
    """Drives one :class:`Scheduler` on one :class:`EmbeddedCluster` and :class:`VirtualClock`."""

    def __init__(
        self,
        cluster: EmbeddedCluster,
        scheduler: Scheduler,
        clock: VirtualClock,
        *,
        series: TimeSeries | None = None,
        detect_loops: bool = True,
        progress: Progress | None = None,
    ) -> None:
        self.cluster = cluster
        self.scheduler = scheduler
        self.clock = clock
        self.start_time = clock.now()
        self._seconds_at, self._seconds = self.start_time, 0.0
        self.series = series
        #: Pods that failed twice with nothing changing in the cluster in between, and were parked.
        self.looping: list[str] = []
        #: Pods deleted as completed because their ``kubesched.io/duration`` ran out: key -> node.
        self.completed: dict[str, str] = {}
        self._changes = 0  # cluster changes that can make a rejected pod schedulable
        self._last_failure: dict[str, int] = {}
        #: Per pod: the cluster-change count and the failure messages seen since it changed.
        self._messages: dict[str, tuple[int, set[str | None]]] = {}
        #: Inside :meth:`settle`: no timer will ever change anything, so a repeated failure is a loop.
        self._settling = False
        self._outcomes: list[tuple[str, str, str | None, int]] = []
        self._actions = 0  # scenario actions still ahead on the clock
        self._watch: Any = None
        #: Also what tells the driver which pods preemption chose (a victim's preemptor in ``deletions``).
        self._detect_loops = detect_loops
        #: Every pod deleted since :meth:`start`, with why.
        self.deletions = DeletionLog(cluster)
        self.progress = progress
        self._total = 0
        self._done = 0
        self._unplaced: set[str] = set()  # uids of pods seen unbound, neither bound nor deleted yet
        self._expected: set[str] = set()  # keys already counted in the total, before they appear

    # -- wiring ----------------------------------------------------------------------------------------
    def start(self) -> None:
        """Watch the cluster (and list what is already there), start the scheduler, deliver events."""
        self._watch = self.cluster.watch(("Node", "Pod", *DEVICE_KINDS), self._observe, read_only=True)
        for kind in ("Node", "Pod"):
            for obj in self._watch.existing(kind):
                self._observe(WatchEvent("ADDED", kind, obj, None))
        self._changes = 0
        self.scheduler.start()
        if self._detect_loops:
            self.scheduler.add_recorder(_AttemptListener(self))
        self.cluster.deliver_pending()
        if self.series is not None:
            self.series.sample(self.seconds())

    def expect(self, keys: Iterable[str]) -> None:
        """Count pods (``namespace/name``) the scenario will create in the progress total from now on."""
        for key in keys:
            if key not in self._expected:
                self._expected.add(key)
                self._total += 1
        self._report()

    def finish(self) -> None:
        """The run is over: pods still unbound are given up as pending, so progress is complete."""
        self._done = self._total
        self._unplaced.clear()
        self._expected.clear()
        self._report()

    def _report(self) -> None:
        if self.progress is not None:
            self.progress(self._done, self._total)

    def seconds(self) -> float:
        """Virtual seconds since the driver was made (worked out once per moment of the clock: every
        event and action at one moment asks)."""
        now = self.clock.now()
        if now is not self._seconds_at:
            self._seconds_at, self._seconds = now, (now - self.start_time).total_seconds()
        return self._seconds

    def at(self, seconds: float, action: Action) -> None:
        """Run ``action`` when the virtual clock reaches ``seconds`` after the start (at once, if due)."""
        self._after(seconds - self.seconds(), action)

    def _after(self, delay: float, action: Callable[..., object], *args: Any) -> None:
        """Run ``action(*args)`` ``delay`` seconds from now (at once, if not positive)."""
        if delay <= 0:
            action(*args)
            return
        self._actions += 1
        # A partial of the action and its arguments, not closures: one object per pending action (a run
        # keeps one per running pod).
        self.clock.call_later(delay, partial(self._fire, action, *args))

    def _fire(self, action: Callable[..., object], *args: Any) -> None:
        self._actions -= 1
        action(*args)

    def feed(self, arrivals: Iterator[tuple[float, Action]]) -> None:
        """Schedule a lazy, time-ordered stream of ``(seconds, action)``: one timer at a time, so a
        million arrivals never sit in memory together."""

        def next_one() -> None:
            for when, action in arrivals:
                if when <= self.seconds():
                    action()
                    continue

                def fire(action: Action = action) -> None:
                    action()
                    next_one()

                self.at(when, fire)
                return

        next_one()

    # -- the loop --------------------------------------------------------------------------------------
    def drain(self) -> None:
        """Deliver watch events and run binding tasks until neither is left."""
        sched, cluster = self.scheduler, self.cluster
        while True:
            cluster.deliver_pending()
            ran = sched.run_pending_tasks()
            if self._outcomes:
                self._check_loops()
            if not ran and not cluster.pending_event_count():
                return

    def settle(self) -> None:
        """Run until the scheduler is idle, every backoff finished before each cycle (untimed rule)."""
        self._settling = True
        try:
            with long_lived_heap():
                self._settle()
        finally:
            self._settling = False

    def _settle(self) -> None:
        sched, clock = self.scheduler, self.clock
        while True:
            self.drain()
            end = sched.backoff_end()
            if end is not None:
                # The backoff flush timer moves them, at its first tick once the last backoff is over.
                clock.advance_to(max(end, self._next_timer_or(end)))
                self._sample()
                continue
            if sched.schedule_next():
                clock.advance_to(clock.now() + CYCLE_TIME)
                self._sample()
                continue
            if sched.waiting_pod_count():
                clock.advance_to(self._next_timer_or(clock.now() + CYCLE_TIME))
                self._sample()
                continue
            return

    def run(self) -> None:
        """Discrete-event time until no scenario action is left and the scheduler is done."""
        with long_lived_heap(), freezing_loop() as tick:
            self._run(tick)

    def _run(self, tick: Callable[[], None]) -> None:
        sched, clock = self.scheduler, self.clock
        while True:
            tick()
            self.drain()
            if sched.schedule_next():
                clock.advance_to(clock.now() + CYCLE_TIME)
                self._sample()
                continue
            if not (self._actions or sched.backoff_end() is not None or sched.waiting_pod_count()):
                return
            clock.advance_to(self._next_timer_or(clock.now() + CYCLE_TIME))
            self._sample()

    def run_until_idle(self) -> int:
        """Schedule and bind, without moving the clock, until nothing is ready; returns the cycles run.

        What the benchmarks time: the burst is already queued and no pod needs a retry."""
        cycles = 0
        with long_lived_heap():
            while self.scheduler.schedule_next():
                cycles += 1
                self.drain()
            self.drain()
        return cycles

    def _next_timer_or(self, fallback: datetime) -> datetime:
        nxt = self.clock.next_timer()
        return fallback if nxt is None else nxt

    def _sample(self) -> None:
        if self.series is not None:
            self.series.maybe_sample(self.seconds())

    # -- watching ------------------------------------------------------------------------------------
    def _observe(self, event: WatchEvent) -> None:
        kind = event.kind
        if kind in DEVICE_KINDS:
            self._changes += 1
            return
        if kind == "Node":
            self._changes += 1
            if self.series is not None:
                self.series.node_event(event)
            return
        obj, etype = event.obj, event.type
        bound = bool((obj.get("spec") or {}).get("nodeName"))
        deleted = etype == "DELETED"
        if deleted or bound:
            self._changes += 1
        now = self.seconds()
        if self.series is not None:
            self.series.pod_event(event, now)
        if deleted:
            self.deletions.observe(obj, _key(obj), now)
        if self.progress is not None:
            self._count(event, bound)
        if bound and (
            etype == "ADDED" or (etype == "MODIFIED" and not ((event.old or {}).get("spec") or {}).get("nodeName"))
        ):
            annotations = (obj.get("metadata") or {}).get("annotations") or {}
            duration = annotations.get(DURATION_ANNOTATION)
            if duration is not None:
                self._complete_after(obj, now, parse_duration_seconds(duration, DURATION_ANNOTATION))

    def _complete_after(self, obj: dict[str, Any], now: float, seconds: float) -> None:
        """Complete the pod ``seconds`` after ``now`` (the driver's seconds at this moment)."""
        meta = obj["metadata"]
        ns, name, uid = meta.get("namespace") or "default", meta["name"], meta.get("uid")
        # What at(now + seconds) schedules, without asking the clock again (the same float sums).
        self._after((now + seconds) - now, self._complete, ns, name, uid, obj["spec"]["nodeName"])

    def _complete(self, ns: str, name: str, uid: str | None, node: str) -> None:
        """The pod's duration ran out: delete it as completed, unless it was deleted or replaced meanwhile."""
        try:
            deleted = self.cluster.delete("Pod", ns, name, uid=uid, reply=False)
        except ApiError:
            return
        self.deletions.note(deleted, COMPLETED)
        self.completed[f"{ns}/{name}"] = node

    def _count(self, event: WatchEvent, bound: bool) -> None:
        """Progress: an unbound pod appearing is one more to place; bound or deleted, it is placed."""
        uid = str((event.obj.get("metadata") or {}).get("uid"))
        if event.type == "ADDED" and not bound:
            key = _key(event.obj)
            if key in self._expected:
                self._expected.discard(key)
            else:
                self._total += 1
            self._unplaced.add(uid)
        elif (bound or event.type == "DELETED") and uid in self._unplaced:
            self._unplaced.discard(uid)
            self._done += 1
        else:
            return
        self._report()

    # -- loop detection ------------------------------------------------------------------------------
    def outcome(self, pod: str, result: str, message: str | None = None) -> None:
        """One attempt's outcome, noted with how many cluster changes had been seen by then; it is
        judged once the attempt's pod is back in the queue."""
        self._outcomes.append((pod, result, message, self._changes))

    def _check_loops(self) -> None:
        """A pod that fails twice with no cluster change in between, and that nothing would ever wake
        (an error, a rejection no plugin owns, a Permit or PreBind timeout), is parked: kube-scheduler
        would retry it for ever, a simulation has to end."""
        outcomes, self._outcomes = self._outcomes, []
        for pod, result, message, seen in outcomes:
            if result == SCHEDULED:
                self._last_failure.pop(pod, None)
                continue
            previous = self._last_failure.get(pod)
            self._last_failure[pod] = seen
            # Settling, the same rejection again with nothing changed in the cluster: only the scheduler's
            # own doing (a gang's members forgotten and retried) moved the pod, and it would go on forever.
            # In time, the 5-minute leftover flush retries such pods by design.
            since, messages = self._messages.get(pod, (seen, set()))
            if since != seen:
                messages = set()
            repeated = self._settling and message in messages
            self._messages[pod] = (seen, messages | {message})
            if previous != seen:
                continue
            if result != ERROR and not repeated and TIMEOUT_REJECTION not in (message or ""):
                rejectors = self.scheduler.rejecting_plugins(pod)
                if rejectors is None or rejectors:
                    continue
            if self.scheduler.park(pod):
                self.looping.append(pod)


def _key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
