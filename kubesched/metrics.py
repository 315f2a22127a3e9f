"""Prometheus metrics under kube-scheduler's names, types, labels and buckets (v1.34 metrics.go).

Each :class:`SchedulerMetrics` owns its own registry (no process-wide singletons), so several schedulers
(tests, simulations) live in one process without sharing counts; ``kubesched run`` serves the registry on
/metrics (:mod:`kubesched.app.server`).

Who updates what:

- the scheduling queue, through its ``QueueMetrics`` hooks: ``scheduler_pending_pods{queue}``,
  ``scheduler_queue_incoming_pods_total{queue,event}``, ``scheduler_unschedulable_pods{plugin,profile}``
  (up when a failed pod is put back for the plugins that rejected it or a PreEnqueue plugin gates it,
  down when it is popped again or deleted);
- the scheduling cycle, through :class:`MetricsObserver` (its side of the attempt lifecycle,
  :class:`kubesched.recording.AttemptObserver`): ``scheduler_schedule_attempts_total`` and
  ``scheduler_scheduling_attempt_duration_seconds{result,profile}`` as an attempt ends,
  ``scheduler_pod_scheduling_sli_duration_seconds{attempts}`` (queue entry to bound, on the scheduler's
  clock) and ``scheduler_pod_scheduling_attempts`` once a pod is bound, ``scheduler_preemption_attempts_total``
  and ``scheduler_preemption_victims`` (after DefaultPreemption's PostFilter), and which cycles time
  their plugins;
- asynchronous preemption (registered only with ``SchedulerAsyncPreemption``, as upstream), as each job
  ends: ``scheduler_preemption_goroutines_duration_seconds{result}`` and
  ``scheduler_preemption_goroutines_execution_total{result}``;
- the framework (:class:`FrameworkMetrics`, one per profile):
  ``scheduler_framework_extension_point_duration_seconds{extension_point,status,profile}`` around every
  extension point but Filter (timed per node upstream, so not at all), and on one cycle in ten
  (``PLUGIN_METRICS_SAMPLE_PERCENT``) ``scheduler_plugin_execution_duration_seconds{plugin,
  extension_point,status}`` around each plugin call (each batch call for the vectorised plugins);
- read when scraped: ``scheduler_cache_size{type}`` (nodes, pods, assumed_pods) from the cache;
- the configuration reloader of ``kubesched run`` (:mod:`kubesched.app.reload`), registered only with a
  ``--config`` file, named as kube-apiserver's reloading configuration controllers name theirs:
  ``scheduler_config_controller_automatic_reloads_total{status}`` and
  ``scheduler_config_controller_automatic_reload_last_timestamp_seconds{status}`` (status "success" or
  "failure") as each reload ends, and ``scheduler_config_controller_last_config_info{hash}`` (1, with the
  sha256 of the file running);
- the leader elector: ``leader_election_master_status{name}`` and ``leader_election_slowpath_total{name}``
  (client-go's names, without the scheduler_ prefix).

Label children are cached in dicts, so the hot path does one dict lookup and one observe per update.
Histograms are :class:`Histogram` below rather than prometheus_client's: an observation is one list
append, folded into the buckets a few hundred at a time (prometheus_client's takes a lock for the sum
and another for the bucket, and checks exemplars), rendered through the same registry as a histogram
family.
"""

from __future__ import annotations

import random
import threading
import time
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence, Sized
from datetime import datetime
from types import MethodType
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from kubesched.util.hooks import ignores_report

#: kube-scheduler's pluginMetricsSamplePercent: the share of scheduling cycles whose plugins are timed.
PLUGIN_METRICS_SAMPLE_PERCENT = 10


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """prometheus.ExponentialBuckets: ``count`` upper bounds from ``start``, each ``factor`` times the last."""
    return tuple(start * factor**i for i in range(count))


class SchedulerMetrics:
    """Every metric of one scheduler, registered in ``registry`` (a fresh one by default)."""

    #: Asynchronous preemption's metrics, once :meth:`register_async_preemption` made them.
    preemption_goroutines_duration: Histogram | None = None
    preemption_goroutines_execution: Counter | None = None
    #: The configuration reload metrics, once :meth:`register_config_reload` made them.
    config_reloads: Counter | None = None
    config_reload_timestamp: Gauge | None = None
    config_info: Gauge | None = None

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        *,
        plugin_sample_percent: int = PLUGIN_METRICS_SAMPLE_PERCENT,
        rng: random.Random | None = None,
    ) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.plugin_sample_percent = plugin_sample_percent
        self._rng = rng or random.Random()
        r = self.registry
        self._register_attempt_metrics(r)
        self._register_queue_metrics(r)
        self._register_framework_metrics(r)
        self._cache_size = _CacheSizeCollector()
        r.register(self._cache_size)

        self._pending: dict[str, Any] = {}
        self._pending_last: dict[str, int] = {}
        self._incoming: dict[tuple[str, str], Any] = {}
        self._unschedulable: dict[tuple[str, str], Any] = {}
        self._attempts: dict[tuple[str, str], tuple[Any, Any]] = {}
        self._sli: dict[int, Any] = {}
        self._plugin: dict[tuple[str, str, str], Any] = {}
        # (bound plugin method, status), or (id of the plugin object, method, status) for another
        # callable -> child; plugins live as long as the scheduler (see forget_plugins).
        self._plugin_calls: dict[tuple[Any, ...], Any] = {}
        self._profiles: dict[str, FrameworkMetrics] = {}

    def _register_attempt_metrics(self, r: CollectorRegistry) -> None:
        """The scheduling attempts': their results and latency, and a pod's attempts until it is scheduled."""
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be "
            "scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            registry=r,
        )
        self.scheduling_attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.pod_scheduling_sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and "
            "might involve multiple scheduling attempts.",
            ["attempts"],
            buckets=exponential_buckets(0.01, 2, 20),
            registry=r,
        )
        self.pod_scheduling_attempts = Histogram(
            "scheduler_pod_scheduling_attempts",
            "Number of attempts to successfully schedule a pod.",
            (),
            buckets=exponential_buckets(1, 2, 5),
            registry=r,
        )

    def _register_queue_metrics(self, r: CollectorRegistry) -> None:
        """The scheduling queue's: pods per sub-queue, pods moved in by event, unschedulable pods per plugin."""
        self.pending_pods = Gauge(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' "
            "means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that "
            "the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that "
            "the scheduler never attempted to schedule because they are gated.",
            ["queue"],
            registry=r,
        )
        self.queue_incoming_pods = Counter(
            "scheduler_queue_incoming_pods",
            "Number of pods added to scheduling queues by event and queue type.",
            ["queue", "event"],
            registry=r,
        )
        self.unschedulable_pods = Gauge(
            "scheduler_unschedulable_pods",
            "The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for "
            "all plugins that caused it to not schedule and so this metric have meaning only when broken "
            "down by plugin.",
            ["plugin", "profile"],
            registry=r,
        )

    def _register_framework_metrics(self, r: CollectorRegistry) -> None:
        """Preemption's, the framework's (extension points, plugin calls) and leader election's metrics."""
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts", "Total preemption attempts in the cluster till now", registry=r
        )
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims",
            "Number of selected preemption victims",
            (),
            buckets=exponential_buckets(1, 2, 7),
            registry=r,
        )
        self.framework_extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"],
            buckets=exponential_buckets(0.0001, 2, 12),
            registry=r,
        )
        self.plugin_execution_duration = Histogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"],
            buckets=exponential_buckets(0.00001, 1.5, 20),
            registry=r,
        )
        self.leader_election_master_status = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates "
            "master. 'name' is the string used to identify the lease. Please make sure to group by name.",
            ["name"],
            registry=r,
        )
        self.leader_election_slowpath = Counter(
            "leader_election_slowpath",
            "Total number of slow path exercised in renewing leader leases. 'name' is the string used to "
            "identify the lease. Please make sure to group by name.",
            ["name"],
            registry=r,
        )

    # -- the queue's hooks (called under the queue's lock: dict lookups and sets only) ------------------
    def pending_pods_changed(self, counts: Mapping[str, int]) -> None:
        last = self._pending_last
        for queue, value in counts.items():
            if last.get(queue) == value:
                continue
            last[queue] = value
            child = self._pending.get(queue)
            if child is None:
                child = self._pending[queue] = self.pending_pods.labels(queue=queue)
            child.set(value)

    def incoming_pod(self, queue: str, event: str) -> None:
        child = self._incoming.get((queue, event))
        if child is None:
            child = self._incoming[(queue, event)] = self.queue_incoming_pods.labels(queue=queue, event=event)
        child.inc()

    def unschedulable_reason(self, profile: str, plugins: Iterable[str], delta: int) -> None:
        for plugin in plugins:
            child = self._unschedulable.get((plugin, profile))
            if child is None:
                child = self._unschedulable[(plugin, profile)] = self.unschedulable_pods.labels(
                    plugin=plugin, profile=profile
                )
            child.inc(delta)

    # -- the scheduler's --------------------------------------------------------------------------------
    def observe_attempt(self, result: str, profile: str, seconds: float) -> None:
        children = self._attempts.get((result, profile))
        if children is None:
            children = self._attempts[(result, profile)] = (
                self.schedule_attempts.labels(result=result, profile=profile),
                self.scheduling_attempt_duration.labels(result=result, profile=profile),
            )
        children[0].inc()
        children[1].observe(seconds)

    def observe_scheduled(self, profile: str, seconds: float, attempts: int, sli_seconds: float | None) -> None:
        """A pod got bound: its attempt, its attempt count and (when known) its queue-to-bound latency."""
        self.observe_attempt("scheduled", profile, seconds)
        self.pod_scheduling_attempts.observe(attempts)
        if sli_seconds is not None:
            counted = attempts if attempts < 15 else 15  # keyed by the count: its label is made once
            child = self._sli.get(counted)
            if child is None:
                label = "15+" if counted == 15 else str(counted)
                child = self._sli[counted] = self.pod_scheduling_sli_duration.labels(attempts=label)
            child.observe(max(sli_seconds, 0.0))

    def observe_preemption(self, victims: int | None) -> None:
        """DefaultPreemption ran for a pod; ``victims`` of the chosen candidate when it found one."""
        self.preemption_attempts.inc()
        if victims is not None:
            self.preemption_victims.observe(victims)

    def register_async_preemption(self) -> None:
        """Register the asynchronous preemption metrics (once; kube-scheduler does with the gate on)."""
        if self.preemption_goroutines_duration is not None:
            return
        self.preemption_goroutines_duration = Histogram(
            "scheduler_preemption_goroutines_duration_seconds",
            "Duration in seconds for running goroutines for the preemption.",
            ["result"],
            buckets=exponential_buckets(0.01, 2, 20),
            registry=self.registry,
        )
        self.preemption_goroutines_execution = Counter(
            "scheduler_preemption_goroutines_execution",
            "Number of preemption goroutines executed.",
            ["result"],
            registry=self.registry,
        )

    def register_config_reload(self) -> None:
        """Register the configuration reload metrics (once; ``kubesched run`` with a ``--config`` file),
        named as kube-apiserver's reloading configuration controllers name theirs."""
        if self.config_reloads is not None:
            return
        self.config_reloads = Counter(
            "scheduler_config_controller_automatic_reloads",
            "Total number of reloads of the scheduler configuration file split by status.",
            ["status"],
            registry=self.registry,
        )
        self.config_reload_timestamp = Gauge(
            "scheduler_config_controller_automatic_reload_last_timestamp_seconds",
            "Timestamp of the last reload of the scheduler configuration file split by status.",
            ["status"],
            registry=self.registry,
        )
        self.config_info = Gauge(
            "scheduler_config_controller_last_config_info",
            "Information about the configuration file the scheduler runs with, with its hash as label.",
            ["hash"],
            registry=self.registry,
        )

    def observe_config_reload(self, status: str, config_hash: str | None = None) -> None:
        """A reload ended: ``status`` "success" (then ``config_hash`` is the file's) or "failure"."""
        if self.config_reloads is None or self.config_reload_timestamp is None:
            return
        self.config_reloads.labels(status=status).inc()
        self.config_reload_timestamp.labels(status=status).set_to_current_time()
        if config_hash is not None:
            self.set_config_hash(config_hash)

    def set_config_hash(self, config_hash: str) -> None:
        """``scheduler_config_controller_last_config_info{hash}``: the file now running (one series)."""
        if self.config_info is not None:
            self.config_info.clear()
            self.config_info.labels(hash=config_hash).set(1)

    def observe_preemption_goroutine(self, result: str, seconds: float) -> None:
        """An asynchronous preemption ended: ``result`` is "success" or "error" (nothing when unregistered)."""
        if self.preemption_goroutines_duration is None or self.preemption_goroutines_execution is None:
            return
        self.preemption_goroutines_duration.labels(result=result).observe(seconds)
        self.preemption_goroutines_execution.labels(result=result).inc()

    def set_cache_source(self, source: Callable[[], Mapping[str, int]]) -> None:
        """Where ``scheduler_cache_size`` reads its counts when scraped ({"nodes": n, "pods": n, ...})."""
        self._cache_size.source = source

    def for_profile(self, profile: str) -> FrameworkMetrics:
        fm = self._profiles.get(profile)
        if fm is None:
            fm = self._profiles[profile] = FrameworkMetrics(self, profile)
        return fm

    def forget_plugins(self) -> None:
        """The plugins were replaced (a configuration reload): their timing children are looked up afresh,
        so that a new plugin never reuses a child keyed by a dead one's id and the old ones are let go."""
        self._plugin_calls = {}

    def sample_plugin_metrics(self) -> bool:
        """Whether this scheduling cycle times its plugins (``plugin_sample_percent`` of cycles)."""
        return self._rng.random() * 100 < self.plugin_sample_percent

    def observe_plugin(self, plugin: str, point: str, status: str, seconds: float) -> None:
        child = self._plugin.get((plugin, point, status))
        if child is None:
            child = self._plugin[(plugin, point, status)] = self.plugin_execution_duration.labels(
                plugin=plugin, extension_point=point, status=status
            )
        child.observe(seconds)

    # -- the leader elector's (kubesched.live.leaderelection.LeaderMetrics) -----------------------------------
    def leader_on(self, name: str) -> None:
        self.leader_election_master_status.labels(name=name).set(1)

    def leader_off(self, name: str) -> None:
        self.leader_election_master_status.labels(name=name).set(0)

    def leader_slowpath(self, name: str) -> None:
        self.leader_election_slowpath.labels(name=name).inc()


class FrameworkMetrics:
    """One profile's framework timings: extension points always, plugins on sampled cycles."""

    __slots__ = ("_children", "_parent", "profile")

    def __init__(self, parent: SchedulerMetrics, profile: str) -> None:
        self._parent = parent
        self.profile = profile
        self._children: dict[tuple[str, str], Any] = {}

    def observe_extension_point(self, point: str, status: str, seconds: float) -> None:
        child = self._children.get((point, status))
        if child is None:
            child = self._children[(point, status)] = self._parent.framework_extension_point_duration.labels(
                extension_point=point, status=status, profile=self.profile
            )
        child.observe(seconds)

    def plugin_timer(self) -> PluginTimer | None:
        """A timer for this cycle's plugin calls, or None when the cycle is not sampled."""
        return PluginTimer(self._parent) if self._parent.sample_plugin_metrics() else None


class _PluginTimerSlot(Protocol):
    """Where a cycle carries its plugin timer (the CycleState)."""

    plugin_timer: Any


class TimedCycle(Protocol):
    """What the metrics read from a scheduling cycle."""

    @property
    def profile(self) -> str: ...
    @property
    def attempts(self) -> int: ...
    @property
    def queued_at(self) -> datetime | None: ...
    @property
    def started(self) -> float: ...
    @property
    def state(self) -> _PluginTimerSlot: ...


class MetricsObserver:
    """The metrics' side of a scheduling attempt's lifecycle (see :class:`kubesched.recording.AttemptObserver`).

    It keeps nothing per attempt: the cycle carries when it started, and the plugin timer of a sampled
    cycle rides on its CycleState. The Filter and Score details are the recorders' business."""

    __slots__ = ("_metrics", "_now", "_preempting")
    detailed = False
    raw_scores = False

    def __init__(self, metrics: SchedulerMetrics, now: Callable[[], datetime], preempting: Mapping[str, str]) -> None:
        """``now`` is the scheduler's clock (for the queue-to-bound latency); ``preempting`` maps the
        profiles that preempt to their preemption plugin: a PostFilter run that calls it is a preemption
        attempt (as upstream counts them)."""
        self._metrics = metrics
        self._now = now
        self._preempting = dict(preempting)

    def begin(self, cycle: TimedCycle) -> None:
        """Time this cycle's plugin calls when it is among the sampled share."""
        if self._metrics.sample_plugin_metrics():
            cycle.state.plugin_timer = PluginTimer(self._metrics)

    # The Filter and Score reports: the recorders' business (left out when joined with them).
    @ignores_report
    def rejected_all(self, cycle: object, names: object, status: object) -> None: ...
    @ignores_report
    def skipped_outside(self, cycle: object, names: object, rows: object) -> None: ...
    @ignores_report
    def rejected(self, cycle: object, names: object, rows: object, statuses: object) -> None: ...
    @ignores_report
    def evaluated(self, cycle: object, count: int) -> None: ...
    @ignores_report
    def feasible(self, cycle: object, names: object, rows: object) -> None: ...
    @ignores_report
    def scored(
        self, cycle: object, rows: object, plugin_scores: object, total: object, raw_scores: object, tie_rows: object
    ) -> None: ...
    @ignores_report
    def weighted(self, cycle: object, weights: object) -> None: ...
    @ignores_report
    def extender_verdicts(self, cycle: object) -> None:
        return None

    def post_filtered(
        self,
        cycle: TimedCycle,
        plugin: str,
        message: str,
        victims: Sized | None,
        nominated: str,
        extender_verdicts: object,
        ran: Collection[str] = (),
    ) -> None:
        """A preemption attempt, with the chosen candidate's victims, when the profile's preemption plugin
        was among the PostFilter plugins that ran (``ran``)."""
        if self._preempting.get(cycle.profile) in ran:
            self._metrics.observe_preemption(len(victims) if victims else None)

    @ignores_report
    def failed_at(self, cycle: object, point: str, plugin: str, message: str) -> None: ...

    def failed(self, cycle: TimedCycle, unschedulable: bool, message: str, nominated_node: str | None) -> None:
        self._metrics.observe_attempt(
            "unschedulable" if unschedulable else "error", cycle.profile, time.perf_counter() - cycle.started
        )

    def scheduled(self, cycle: TimedCycle, node: str) -> None:
        entered = cycle.queued_at
        sli = (self._now() - entered).total_seconds() if entered is not None else None
        self._metrics.observe_scheduled(cycle.profile, time.perf_counter() - cycle.started, cycle.attempts, sli)


#: Plugin method -> the extension point label kube-scheduler uses for it.
EXTENSION_POINT_OF_METHOD = {
    "pre_filter": "PreFilter",
    "add_pod": "PreFilterExtensionAddPod",
    "remove_pod": "PreFilterExtensionRemovePod",
    "filter": "Filter",
    "filter_nodes": "Filter",
    "post_filter": "PostFilter",
    "pre_score": "PreScore",
    "score": "Score",
    "score_nodes": "Score",
    "normalize_score": "ScoreExtensionNormalize",
    "normalize_scores": "ScoreExtensionNormalize",
    "reserve": "Reserve",
    "unreserve": "Unreserve",
    "permit": "Permit",
    "pre_bind": "PreBind",
    "bind": "Bind",
    "post_bind": "PostBind",
}


class PluginTimer:
    """Times plugin calls of one sampled cycle (carried on the CycleState as ``plugin_timer``)."""

    __slots__ = ("_metrics",)

    def __init__(self, metrics: SchedulerMetrics) -> None:
        self._metrics = metrics

    def observe(self, fn: Callable[..., Any], label: str, started: float) -> None:
        """Record the call of the bound plugin method ``fn`` that began at ``started`` (perf_counter)
        and ended with the status code ``label`` ("Success", "Unschedulable", ...)."""
        seconds = time.perf_counter() - started
        children = self._metrics._plugin_calls
        # A bound method is its own key (hashed and compared by its object and function); any other
        # callable is keyed by its owner's id and its name, so one made per call adds no key.
        key = (
            (fn, label)
            if type(fn) is MethodType
            else (id(getattr(fn, "__self__", None)), getattr(fn, "__name__", "?"), label)
        )
        child = children.get(key)
        if child is None:
            owner = getattr(fn, "__self__", None)
            method = getattr(fn, "__name__", "?")
            plugin = getattr(owner, "name", None) or type(owner).__name__
            child = children[key] = self._metrics.plugin_execution_duration.labels(
                plugin=str(plugin), extension_point=EXTENSION_POINT_OF_METHOD.get(method, method), status=label
            )
        child.observe(seconds)


class _CacheSizeCollector(Collector):
    """scheduler_cache_size{type}, read from the scheduler's cache when scraped."""

    def __init__(self) -> None:
        self.source: Callable[[], Mapping[str, int]] | None = None

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "scheduler_cache_size",
            "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
            labels=["type"],
        )
        if self.source is not None:
            for kind, value in self.source().items():
                family.add_metric([kind], value)
        yield family


class Histogram(Collector):
    """A (labelled) histogram with prometheus_client's ``labels(...)`` / ``observe(v)`` surface, kept as one
    count array and one sum per child (:class:`_HistogramChild`); collected as a histogram family."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: Sequence[str] = (),
        *,
        buckets: Sequence[float],
        registry: CollectorRegistry,
    ) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        bounds = [float(b) for b in buckets]
        if bounds[-1] != float("inf"):
            bounds.append(float("inf"))
        self.bounds = tuple(bounds)
        self._children: dict[tuple[str, ...], _HistogramChild] = {}
        #: The one child of a histogram without labels, once observed (see :meth:`observe`).
        self._unlabelled: _HistogramChild | None = None
        self._lock = threading.Lock()
        registry.register(self)

    def labels(self, **labels: str) -> _HistogramChild:
        key = tuple(str(labels[n]) for n in self.labelnames)
        child = self._children.get(key)
        if child is None:
            with self._lock:
                child = self._children.setdefault(key, _HistogramChild(self.bounds))
        return child

    def observe(self, value: float) -> None:
        """Observe on the unlabelled histogram (its child made on the first observation, as by :meth:`labels`)."""
        child = self._unlabelled
        if child is None:
            child = self._unlabelled = self.labels()
        child.observe(value)

    def describe(self) -> Iterator[HistogramMetricFamily]:
        yield HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)

    def collect(self) -> Iterator[HistogramMetricFamily]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        les = [floatToGoString(b) for b in self.bounds]
        for key, child in list(self._children.items()):
            counts, total = child.snapshot()
            cumulative, running = [], 0
            for le, count in zip(les, counts, strict=True):
                running += count
                cumulative.append((le, float(running)))
            family.add_metric(list(key), cumulative, sum_value=total)
        yield family


class _HistogramChild:
    """One label set's buckets and sum. An observation is appended to ``_seen`` (an atomic list append,
    no lock); every :data:`_FOLD_AT` observations, and before a read, the values seen are folded into
    the counts and the sum under the lock, in the order they came, so the sum is the one observing
    them one by one gives."""

    __slots__ = ("_bounds", "_counts", "_lock", "_seen", "_sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self._bounds = bounds
        self._counts = [0] * len(bounds)
        self._sum = 0.0
        self._seen: list[float] = []
        self._lock = threading.Lock()

    def observe(self, value: float) -> None:
        seen = self._seen
        seen.append(value)
        if len(seen) >= _FOLD_AT:
            self._fold()

    def _fold(self) -> None:
        with self._lock:
            seen = self._seen
            n = len(seen)
            values = seen[:n]
            del seen[:n]  # values appended meanwhile by other threads stay for the next fold
            counts, bounds, total = self._counts, self._bounds, self._sum
            for value in values:
                counts[bisect_left(bounds, value)] += 1
                total += value
            self._sum = total

    def snapshot(self) -> tuple[list[int], float]:
        self._fold()
        with self._lock:
            return list(self._counts), self._sum


#: How many observations a histogram child holds before it folds them into its buckets.
_FOLD_AT = 256
