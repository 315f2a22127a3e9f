"""The scheduler: cluster events in, decisions out.

:class:`Scheduler` wires the parts kube-scheduler has: the event handlers that feed bound pods and
nodes to the cache and pending pods to the queue (:mod:`kubesched.eventhandlers`), one framework per
profile (:mod:`kubesched.profile`), the scheduling loop and the binding cycles
(:mod:`kubesched.schedule_one`), and the metrics and recorders that observe every attempt. It talks to
the cluster only through the cluster protocol, so the same object schedules an embedded (simulated)
cluster or a live one. A driver (the simulator's loop, ``kubesched run``) moves it through the methods
below; :meth:`Scheduler.reconfigure` gives a running scheduler new profiles (a configuration reload).
"""

from __future__ import annotations

import itertools
import logging
import random
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

from kubesched.api.objects import Pod
from kubesched.api.resources import resource_rules
from kubesched.cache.cache import Cache
from kubesched.cache.snapshot import Snapshot
from kubesched.clock import Clock
from kubesched.cluster.listers import LISTED_KINDS, Listers, listed_kinds
from kubesched.cluster.protocol import Cluster, WatchEvent
from kubesched.config.errors import ConfigError
from kubesched.config.features import FeatureGates
from kubesched.config.reload import restart_only_changes
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.cycle_rules import CycleRules
from kubesched.eventhandlers import EventHandlers, PodStore
from kubesched.extender import HTTPExtender, build_extenders
from kubesched.framework.handle import PluginFactory
from kubesched.framework.runtime import Framework
from kubesched.metrics import MetricsObserver, SchedulerMetrics
from kubesched.profile import ClusterEventRecorder, FrameworkOptions, ProfileMap, new_map
from kubesched.queue.scheduling_queue import SchedulingQueue
from kubesched.recording import AttemptObserver, NullRecorder, Observers, Recorder, Recorders, RecordingObserver
from kubesched.schedule_one import schedule_one

log = logging.getLogger(__name__)

#: Every kind the scheduler may watch; :func:`watched_kinds` picks those of an emulated version.
WATCHED_KINDS = ("Node", "Pod", *LISTED_KINDS)


def watched_kinds(features: FeatureGates) -> tuple[str, ...]:
    """The kinds kube-scheduler of ``features.version`` watches (VolumeAttachments from v1.34 on)."""
    return ("Node", "Pod", *listed_kinds(features))


#: kube-scheduler's flush periods: backoffQ every second, the unschedulable leftovers every 30 s.
BACKOFF_FLUSH_PERIOD = 1.0
LEFTOVER_FLUSH_PERIOD = 30.0
#: Binding cycles in flight at once, live. kube-scheduler starts a goroutine for each; here a thread
#: takes one, and a binding spends nearly all its time waiting for the API server, so the pool is sized
#: for a loaded server's latency rather than for the cores: with 16 threads, all 16 waited on the API
#: server through a burst while the scheduling loop had nothing left to pop (docs/benchmarks.md).
BINDING_WORKERS = 64


class _JobStep:
    """A job of :meth:`Scheduler.run_async` queued as a task: each call runs its next step."""

    __slots__ = ("job",)

    def __init__(self, job: Iterator[None]) -> None:
        self.job = job

    def step(self) -> bool:
        """Run to the job's next ``yield``; whether there is more to run."""
        return next(self.job, _DONE) is not _DONE


_DONE = object()


def _run_to_end(job: Iterator[None]) -> None:
    for _ in job:
        pass


class Scheduler:
    """kube-scheduler's Scheduler: cache, queue, profiles and the loop that joins them."""

    def __init__(
        self,
        cluster: Cluster,
        config: KubeSchedulerConfiguration,
        *,
        clock: Clock,
        rng: random.Random | None = None,
        tie_break: str = "random",
        registry: Mapping[str, PluginFactory] | None = None,
        executor: Callable[[Callable[[], None]], None] | None = None,
        metrics: SchedulerMetrics | None = None,
        gate: Callable[[], bool] | None = None,
        bind_for_extenders: bool | None = None,
    ) -> None:
        if tie_break not in ("random", "name"):
            raise ValueError(f"tie_break must be 'random' or 'name', not {tie_break!r}")
        self.cluster = cluster
        self.config = config
        #: The emulated kube-scheduler version and gates (the configuration was defaulted for them).
        self.features = config.features
        self.cycle_rules = CycleRules.of(self.features)
        self.clock = clock
        #: Whether this replica may act (e.g. ``LeaderElector.is_leader``): consulted before every pop and
        #: again before PreBind and Bind, so a replica that lost its Lease stops popping at once and never
        #: binds afterwards. None means always (no leader election).
        self.gate = gate
        self.rng = rng or random.Random()
        self.tie_break = tie_break
        self.metrics = metrics or SchedulerMetrics()
        if self.features.enabled("SchedulerAsyncPreemption"):
            self.metrics.register_async_preemption()
        self.snapshot = Snapshot()
        self.cache = Cache(clock.now, ttl=timedelta(0))
        self.pod_store = PodStore()
        self.listers = Listers()
        self.events = ClusterEventRecorder(cluster, clock, gate=self.may_act)
        self.next_start_node_index = 0
        self.cycle_numbers: Iterator[int] = itertools.count(1)
        #: Pods whose binding cycle waits in PreBind (for the cluster to bind their claims).
        self.waiting_in_pre_bind: set[str] = set()
        self._tasks: deque[Callable[[], None] | _JobStep] = deque()
        self._tasks_lock = threading.Lock()
        self._executor = executor
        self._watch: Any = None
        self._housekeeping: list[Any] = []
        self._registry = registry
        # A reload swaps the profiles between two scheduling cycles (the loop holds _cycle_lock through
        # one) and between two watch events (handle_event holds _events_lock through one).
        self._cycle_lock = threading.Lock()
        self._events_lock = threading.RLock()

        self.extenders: list[HTTPExtender] = build_extenders(config.extenders)
        # A binding extender binds through the API server itself. The embedded cluster lives in this
        # process where no extender can reach it, so there the scheduler records the Binding on the
        # extender's behalf once the extender said yes.
        self.bind_for_extenders = cluster.in_process if bind_for_extenders is None else bind_for_extenders
        self._wire(self._new_profiles(config, self.extenders))

    def _new_profiles(self, config: KubeSchedulerConfiguration, extenders: list[HTTPExtender]) -> ProfileMap:
        """A framework per profile, reading the scheduler's snapshot, listers, pods and extenders."""
        return new_map(
            config,
            FrameworkOptions(
                cluster=self.cluster,
                clock=self.clock,
                snapshot=lambda: self.snapshot,
                listers=self.listers,
                extenders=extenders,
                event_recorder=self.events,
                pod_lister=self.pod_store.list,
                # pod_lister: the scheduler's informer view of a pod (what kube-scheduler's podLister answers),
                # so no plugin needs a live GET in the scheduling or binding cycle. run_async, activate and
                # metrics serve preemption off the scheduling loop.
                extra_handle={
                    "rng": self.rng,
                    "tie_break": self.tie_break,
                    "pod_lister": self.pod_store.current,
                    "run_async": self.run_async,
                    "activate": lambda pods: self.queue.activate(pods),
                    "metrics": self.metrics,
                },
            ),
            self._registry,
        )

    def _wire(self, profiles: ProfileMap) -> None:
        """The queue as the profiles order and gate it, the event handlers, and what observes attempts."""
        config = self.config
        self.profiles: dict[str, Framework] = profiles.frameworks
        self.warnings: list[str] = list(profiles.warnings)
        # Kinds beyond the built-in ones that plugins register events for (Coscheduling's PodGroup).
        base = watched_kinds(self.features)
        self.extra_kinds = profiles.extra_kinds(base)
        self.watched_kinds = (*base, *self.extra_kinds)
        less, sort_key = profiles.queue_sort()
        events = self._queue_events(profiles)
        self.queue = SchedulingQueue(
            less=less,
            sort_key=sort_key,
            clock=self.clock.now,
            pod_initial_backoff=timedelta(seconds=config.pod_initial_backoff_seconds),
            pod_max_backoff=timedelta(seconds=config.pod_max_backoff_seconds),
            pre_enqueue=profiles.pre_enqueue_plugins(),
            namespace_labels=self.namespace_labels,
            metrics=self.metrics,
            features=self.features,
            **events,
        )
        profiles.set_pod_nominator(self.queue)
        self.handlers = EventHandlers(
            cache=self.cache,
            queue=self.queue,
            pods=self.pod_store,
            listers=self.listers,
            profiles=self.profiles,
            extra_kinds=self.extra_kinds,
            events=self.events,
            rules=resource_rules(self.features),
            features=self.features,
        )
        profiles.instrument(self.metrics)
        cache = self.cache
        self.metrics.set_cache_source(
            lambda: {"assumed_pods": cache.assumed_pod_count(), "pods": cache.pod_count(), "nodes": cache.node_count()}
        )
        self._metrics_observer = MetricsObserver(self.metrics, self.clock.now, profiles.preempting())
        self.observer: AttemptObserver = self._metrics_observer
        self._recorder: Recorder = NullRecorder()

    # -- a new configuration while running ------------------------------------------------------------
    def _queue_events(self, profiles: ProfileMap) -> dict[str, Any]:
        """What requeues pods: v1.34 (SchedulerQueueingHints) the plugins' hints; v1.30 registered events."""
        if self.features.enabled("SchedulerQueueingHints"):
            return {"queueing_hint_map_per_profile": profiles.queueing_hint_maps(True, extenders=bool(self.extenders))}
        return {"cluster_event_map_per_profile": profiles.cluster_event_maps()}

    def reconfigure(self, config: KubeSchedulerConfiguration) -> None:
        """Schedule with ``config``'s profiles, extenders and backoff from the next scheduling cycle on,
        keeping the queue (every pending pod), the cache and the watch; a pod already in its scheduling
        or binding cycle finishes under the profile it started with.

        What can fail fails before anything changes (a field only a restart changes, a plugin that cannot
        be built, a kind the watch lacks), raising a ConfigError, FrameworkError or PluginLoadError that
        names the field or plugin; the running profiles then stay."""
        problem = restart_only_changes(self.config, config)
        if problem is not None:
            raise problem
        extenders = self.extenders if config.extenders == self.config.extenders else build_extenders(config.extenders)
        profiles = self._new_profiles(config, extenders)
        unwatched = [k for k in profiles.extra_kinds(watched_kinds(self.features)) if k not in self.extra_kinds]
        if unwatched:
            raise ConfigError(
                "profiles",
                f"plugins register events for {', '.join(unwatched)}, which the running "
                "scheduler does not watch: only a restart adds a watch",
            )
        with self._cycle_lock, self._events_lock:
            self._swap(config, profiles, extenders)

    def _swap(self, config: KubeSchedulerConfiguration, profiles: ProfileMap, extenders: list[HTTPExtender]) -> None:
        """Put ``profiles`` in the running ones' place (no cycle and no watch event runs meanwhile)."""
        old = self.profiles
        for name, fwk in profiles.frameworks.items():
            if name in old:  # pods held at Permit stay where the profile's plugins look for them
                fwk.waiting_pods = old[name].waiting_pods
        self.config, self.extenders = config, extenders
        self.profiles = profiles.frameworks
        self.warnings = list(profiles.warnings)
        profiles.set_pod_nominator(self.queue)
        self.metrics.forget_plugins()
        profiles.instrument(self.metrics)
        less, sort_key = profiles.queue_sort()
        self.queue.reconfigure(
            less,
            sort_key=sort_key,
            pod_initial_backoff=timedelta(seconds=config.pod_initial_backoff_seconds),
            pod_max_backoff=timedelta(seconds=config.pod_max_backoff_seconds),
            pre_enqueue=profiles.pre_enqueue_plugins(),
            **self._queue_events(profiles),
        )
        self.handlers.profiles = self.profiles
        self._metrics_observer = MetricsObserver(self.metrics, self.clock.now, profiles.preempting())
        self.recorder = self._recorder  # the observers again, around the new metrics observer
        gained, lost = self.profiles.keys() - old.keys(), old.keys() - self.profiles.keys()
        if gained or lost:
            # Pending pods of a scheduler name that gained a profile are ours now; of one that lost it, not.
            for pod in self.pod_store.all():
                if pod.node_name:
                    continue
                if pod.scheduler_name in lost:
                    self.queue.delete(pod)
                elif pod.scheduler_name in gained:
                    self.queue.add(pod)

    # -- wiring to the cluster -------------------------------------------------------------------------
    def start(self) -> None:
        """Watch the cluster, list what exists (listing after watching misses nothing), and arm the
        queue's and cache's periodic housekeeping on the clock."""
        self._watch = self.cluster.watch(self.watched_kinds, self.handle_event)
        if not getattr(self._watch, "replays_existing", False):
            # An informer hands what exists over as ADDED events itself; any other watch is listed.
            existing = getattr(self._watch, "existing", None)  # an embedded watch's own listing
            for kind in self.watched_kinds:
                items = existing(kind) if existing is not None else self.cluster.list(kind)[0]
                for obj in items:
                    self.handle_event(WatchEvent("ADDED", kind, obj, None))
        first_flush = BACKOFF_FLUSH_PERIOD
        if self.features.enabled("SchedulerPopFromBackoffQ"):
            # v1.34 flushes backoffQ on whole seconds, the windows its backoffs are aligned to.
            now = self.clock.now()
            first_flush -= now.microsecond / 1e6
        self._every(BACKOFF_FLUSH_PERIOD, self._flush_backoff, first=first_flush)
        self._every(LEFTOVER_FLUSH_PERIOD, self.queue.flush_unschedulable_pods_leftover)

    def has_synced(self) -> bool:
        """Whether the watch has handed over everything that existed (an embedded watch always has)."""
        check = getattr(self._watch, "has_synced", None)
        return self._watch is not None and (check is None or bool(check()))

    def stop(self) -> None:
        if self._watch is not None:
            self._watch.stop()
        for timer in self._housekeeping:
            timer.cancel()
        self._housekeeping.clear()
        self.queue.close()

    def _every(self, period: float, job: Callable[[], None], first: float | None = None) -> None:
        """Run ``job`` every ``period`` seconds of clock time (the first time after ``first`` seconds,
        when given) until :meth:`stop` (wait.Until's role)."""
        slot = len(self._housekeeping)

        def tick() -> None:
            try:
                job()
            except Exception:
                log.exception("periodic %s failed", getattr(job, "__name__", "job"))
            if self._housekeeping:
                self._housekeeping[slot] = self.clock.call_later(period, tick)

        self._housekeeping.append(self.clock.call_later(period if first is None else first, tick))

    def _flush_backoff(self) -> None:
        self.queue.flush_backoff_q_completed()
        self.cache.cleanup_expired_assumed_pods()

    def run_periodic(self) -> None:
        """Every periodic flush at once, whatever its period (for tests that step by hand)."""
        self.queue.flush_backoff_q_completed()
        self.queue.flush_unschedulable_pods_leftover()
        self.cache.cleanup_expired_assumed_pods()

    def handle_event(self, event: WatchEvent) -> None:
        """Route one watch event to the cache, the queue or the listers (:mod:`kubesched.eventhandlers`)."""
        with self._events_lock:
            self.handlers.handle(event)

    def namespace_labels(self, name: str) -> Mapping[str, str]:
        return self.listers.namespace_labels(name) or {}

    # -- what the cycles and plugins read --------------------------------------------------------------
    def list_pods(self, namespace: str | None = None, labels: Mapping[str, str] | None = None) -> list[Pod]:
        """Known pods (pending and bound), in ``namespace`` and with ``labels`` when given."""
        return self.pod_store.list(namespace, labels)

    def pods(self) -> list[Pod]:
        return self.pod_store.all()

    def current_pod(self, pod: Pod) -> Pod | None:
        """The latest version of ``pod`` the scheduler has seen (None once deleted)."""
        return self.pod_store.current(pod)

    def framework_for(self, pod: Pod) -> Framework | None:
        return self.profiles.get(pod.scheduler_name)

    def update_snapshot(self) -> Snapshot:
        self.cache.update_snapshot(self.snapshot)
        return self.snapshot

    # -- observing attempts ----------------------------------------------------------------------------
    @property
    def recorder(self) -> Recorder:
        """What scheduling attempts are reported to (see :mod:`kubesched.recording`); the default keeps nothing."""
        return self._recorder

    @recorder.setter
    def recorder(self, recorder: Recorder) -> None:
        self._recorder = recorder
        # Cycles report to the metrics alone unless something records: then to both, metrics first.
        self.observer = (
            Observers([self._metrics_observer, RecordingObserver(recorder)])
            if recorder.enabled
            else self._metrics_observer
        )

    def add_recorder(self, recorder: Recorder) -> None:
        """Report attempts to ``recorder`` as well as to the recorders already attached."""
        current = self._recorder
        if isinstance(current, Recorders):
            current.add(recorder)
            self.recorder = current  # it may record now where it did not
        elif current.enabled:
            self.recorder = Recorders([current, recorder])
        else:
            self.recorder = recorder

    # -- the loop --------------------------------------------------------------------------------------
    def may_act(self) -> bool:
        """The gate: True when this replica may pop and bind (it leads, or there is no election)."""
        return self.gate is None or self.gate()

    def schedule_next(self, *, block: bool = False, timeout: float | None = None) -> bool:
        """Pop one pod and run its scheduling cycle; False when there was nothing to pop or the gate is
        closed (the pods stay queued for when it opens)."""
        if not self.may_act():
            return False
        qpi = self.queue.pop(block=block, timeout=timeout)
        if qpi is None:
            return False
        with self._cycle_lock:
            schedule_one(self, qpi)
        return True

    def submit(self, task: Callable[[], None]) -> None:
        """Hand a binding cycle to the executor (a thread pool live, a task list in simulation)."""
        if self._executor is not None:
            self._executor(task)
            return
        with self._tasks_lock:
            self._tasks.append(task)

    def run_async(self, job: Iterator[None]) -> None:
        """Run a job off the scheduling loop (asynchronous preemption): live, all of it as one task of the
        pool; in simulation one step (up to the job's next ``yield``) per queued task."""
        if self._executor is not None:
            self._executor(lambda: _run_to_end(job))
            return
        with self._tasks_lock:
            self._tasks.append(_JobStep(job))

    def run_pending_tasks(self) -> int:
        """Run queued tasks (binding cycles, job steps) until none is left, or until a job step ran: what
        it wrote to the cluster is to be seen before the job goes on. Returns how many ran."""
        ran = 0
        while True:
            with self._tasks_lock:
                if not self._tasks:
                    return ran
                task = self._tasks.popleft()
            ran += 1
            if isinstance(task, _JobStep):
                if task.step():
                    with self._tasks_lock:
                        self._tasks.append(task)
                return ran
            task()

    def has_pending_tasks(self) -> bool:
        with self._tasks_lock:
            return bool(self._tasks)

    def run_forever(self, stop: threading.Event) -> None:
        """Live mode: housekeeping on clock timers, binding on a pool, scheduling on this thread."""
        workers = max(self.config.parallelism, BINDING_WORKERS)
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="binder")

        def logged(task: Callable[[], None]) -> None:
            try:
                task()
            except Exception:
                # The binding cycle undoes and requeues its own failures; anything escaping it is a bug,
                # and a pool would otherwise keep it silently in a future nobody reads.
                log.exception("binding task failed")

        def run_in_pool(task: Callable[[], None]) -> None:
            pool.submit(logged, task)

        self._executor = run_in_pool
        try:
            while not stop.is_set():
                if not self.may_act():
                    stop.wait(0.1)
                    continue
                self.schedule_next(block=True, timeout=0.5)
        finally:
            pool.shutdown(wait=True)
            self.stop()

    # -- what a driver may ask (the simulator's loop uses only these and the cluster) -------------------
    def idle(self) -> bool:
        """Nothing to do right now: no binding task queued and no pod ready to pop."""
        return not self.has_pending_tasks() and not self.queue.poppable()

    def backoff_end(self) -> datetime | None:
        """When the last pod now backing off may be retried (None when none is backing off)."""
        expiries = self.queue.backoff_expiries()
        return expiries[-1] if expiries else None

    def waiting_pod_count(self) -> int:
        """Pods held at Permit or in PreBind, waiting to be allowed, rejected or timed out."""
        return len(self.waiting_in_pre_bind) + sum(len(fwk.waiting_pods.all()) for fwk in self.profiles.values())

    def rejecting_plugins(self, key: str) -> frozenset[str] | None:
        """The plugins whose verdict keeps a queued pod (``ns/name``) waiting; None if it is not queued."""
        pod = self.pod_store.by_key(key)
        qpi = self.queue.get_pod(pod.uid) if pod is not None else None
        if qpi is None:
            return None
        return frozenset(qpi.unschedulable_plugins) | frozenset(qpi.pending_plugins)

    def park(self, key: str) -> bool:
        """Stop retrying a pending pod (``ns/name``): it leaves the queue and stays pending in the cluster.

        For drivers that must end: kube-scheduler would retry such a pod for ever. Returns whether the
        pod was queued."""
        pod = self.pod_store.by_key(key)
        if pod is None or self.queue.get_pod(pod.uid) is None:
            return False
        self.queue.delete(pod)
        return True
