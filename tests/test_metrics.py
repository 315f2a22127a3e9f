"""kube-scheduler's metrics (kubesched.metrics): names, types, labels, and who moves them.

The end-to-end test runs a small cluster through the scheduler on the embedded cluster (binding,
an unschedulable pod, a preemption), then scrapes /metrics from a started server and checks every
family kube-scheduler exposes for this, with its type and labels, and that it moved.
"""

from __future__ import annotations

import random
import ssl
import time
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kubesched.app.server import start_server
from kubesched.clock import VirtualClock
from kubesched.config import load_config
from kubesched.config.features import feature_gates
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.framework.cycle_state import CycleState
from kubesched.live.leaderelection import LeaderElector
from kubesched.metrics import MetricsObserver, PluginTimer, SchedulerMetrics, exponential_buckets
from kubesched.scheduler import Scheduler
from tests.factories import node_dict, pod_dict
from tests.fakeplugins import API

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


def pod_of_class(name: str, cls: str, cpu: str, **kw: Any) -> dict[str, Any]:
    pod = pod_dict(name, cpu=cpu, spec={"priorityClassName": cls, **kw})
    del pod["spec"]["priority"]
    return pod


class Run:
    """A scheduler on an embedded cluster and a virtual clock, stepped until idle."""

    def __init__(self, metrics: SchedulerMetrics, objects: list[dict[str, Any]]) -> None:
        self.clock = VirtualClock()
        self.cluster = EmbeddedCluster(self.clock.now)
        for obj in objects:
            self.cluster.create(obj)
        self.scheduler = Scheduler(
            self.cluster,
            load_config(dict(API)),
            clock=self.clock,
            tie_break="name",
            rng=random.Random(0),
            metrics=metrics,
        )
        self.scheduler.start()
        self.settle()

    def create(self, *objs: dict[str, Any]) -> None:
        for obj in objs:
            self.cluster.create(obj)
        self.settle()

    def settle(self) -> None:
        while True:
            self.cluster.deliver_pending()
            if not self.scheduler.run_pending_tasks() and not self.cluster.pending_event_count():
                return

    def run(self) -> None:
        while self.scheduler.schedule_next():
            self.settle()

    def node_of(self, name: str) -> str | None:
        return (self.cluster.get("Pod", "default", name).get("spec") or {}).get("nodeName")


def scrape(metrics: SchedulerMetrics) -> dict[str, Any]:
    server = start_server(metrics.registry, port=0, bind_address="127.0.0.1")
    try:
        assert server.certificate_pem is not None
        context = ssl.create_default_context(cadata=server.certificate_pem.decode())
        with urllib.request.urlopen(f"{server.url}/metrics", context=context, timeout=10) as response:
            text = response.read().decode()
    finally:
        server.stop()
    return {family.name: family for family in text_string_to_metric_families(text)}


def samples(family: Any, suffix: str = "") -> list[Any]:
    return [s for s in family.samples if s.name == family.name + suffix]


def labelled(family: Any, suffix: str = "", **labels: str) -> float:
    """The sum of the samples whose labels include ``labels``."""
    return sum(s.value for s in samples(family, suffix) if all(s.labels.get(k) == v for k, v in labels.items()))


@pytest.fixture(scope="module")
def scraped() -> Iterator[tuple[dict[str, Any], Run]]:
    metrics = SchedulerMetrics(plugin_sample_percent=100)
    run = Run(
        metrics,
        [priority_class("low", 0), priority_class("high", 1000), node_dict("n1", cpu="2"), node_dict("n2", cpu="2")],
    )
    elector = LeaderElector(run.cluster, run.clock, identity="me", jitter_factor=0.0, metrics=metrics)
    elector.start()
    run.create(pod_of_class("lo-1", "low", "2"), pod_of_class("lo-2", "low", "2"))
    run.run()
    run.create(pod_of_class("huge", "low", "16"))  # fits nowhere, nothing to preempt for it
    run.run()
    run.create(pod_of_class("hi", "high", "2"))  # preempts one of the low pods
    run.run()
    run.clock.advance(1)
    run.settle()
    run.scheduler.run_periodic()
    run.run()
    assert run.node_of("hi") in ("n1", "n2")
    yield scrape(metrics), run


EXPECTED = {
    # name: (type, label names of its samples)
    "scheduler_schedule_attempts": ("counter", {"result", "profile"}),
    "scheduler_scheduling_attempt_duration_seconds": ("histogram", {"result", "profile"}),
    "scheduler_pod_scheduling_sli_duration_seconds": ("histogram", {"attempts"}),
    "scheduler_pod_scheduling_attempts": ("histogram", set()),
    "scheduler_pending_pods": ("gauge", {"queue"}),
    "scheduler_queue_incoming_pods": ("counter", {"queue", "event"}),
    "scheduler_unschedulable_pods": ("gauge", {"plugin", "profile"}),
    "scheduler_preemption_attempts": ("counter", set()),
    "scheduler_preemption_victims": ("histogram", set()),
    "scheduler_framework_extension_point_duration_seconds": ("histogram", {"extension_point", "status", "profile"}),
    "scheduler_plugin_execution_duration_seconds": ("histogram", {"plugin", "extension_point", "status"}),
    "scheduler_cache_size": ("gauge", {"type"}),
    "leader_election_master_status": ("gauge", {"name"}),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_family_is_served_with_its_type_and_labels(scraped: tuple[dict[str, Any], Run], name: str) -> None:
    families, _ = scraped
    kind, labels = EXPECTED[name]
    assert name in families
    family = families[name]
    assert family.type == kind
    assert family.samples, f"{name} has no samples"
    for sample in family.samples:
        assert set(sample.labels) - {"le"} == labels


def test_attempts_by_result(scraped: tuple[dict[str, Any], Run]) -> None:
    families, _ = scraped
    attempts = families["scheduler_schedule_attempts"]
    profile = "default-scheduler"
    # lo-1, lo-2, hi bound; huge and hi (before its victim was gone) unschedulable.
    assert labelled(attempts, "_total", result="scheduled", profile=profile) == 3
    assert labelled(attempts, "_total", result="unschedulable", profile=profile) >= 2
    durations = families["scheduler_scheduling_attempt_duration_seconds"]
    assert labelled(durations, "_count", result="scheduled", profile=profile) == 3
    assert [s.labels["le"] for s in samples(durations, "_bucket")][:2] == ["0.001", "0.002"]
    sli = families["scheduler_pod_scheduling_sli_duration_seconds"]
    assert labelled(sli, "_count", attempts="1") == 2  # lo-1, lo-2
    assert labelled(sli, "_count", attempts="2") == 1  # hi, bound on its second attempt
    assert labelled(families["scheduler_pod_scheduling_attempts"], "_count") == 3


def test_queue_metrics(scraped: tuple[dict[str, Any], Run]) -> None:
    families, _ = scraped
    pending = families["scheduler_pending_pods"]
    assert {s.labels["queue"] for s in pending.samples} == {"active", "backoff", "unschedulable", "gated"}
    assert labelled(pending, queue="unschedulable") == 1  # huge
    assert labelled(pending, queue="active") == 0
    incoming = families["scheduler_queue_incoming_pods"]
    # v1.34 names a new pending pod's event after its resource (v1.30: PodAdd).
    assert labelled(incoming, "_total", queue="active", event="UnschedulablePodAdd") == 4
    assert labelled(incoming, "_total", queue="unschedulable", event="ScheduleAttemptFailure") >= 1
    unschedulable = families["scheduler_unschedulable_pods"]
    # huge waits, rejected by NodeResourcesFit; hi's count went back down when it was popped again.
    assert labelled(unschedulable, plugin="NodeResourcesFit", profile="default-scheduler") == 1


def test_preemption_metrics(scraped: tuple[dict[str, Any], Run]) -> None:
    families, _ = scraped
    # PostFilter (DefaultPreemption) ran after every attempt that found no node: for huge (no candidate,
    # twice: the victim's deletion requeued it) and for hi (one victim).
    failed = labelled(families["scheduler_schedule_attempts"], "_total", result="unschedulable")
    assert failed == 3
    assert labelled(families["scheduler_preemption_attempts"], "_total") == failed
    victims = families["scheduler_preemption_victims"]
    assert labelled(victims, "_count") == 1 and labelled(victims, "_sum") == 1


def test_framework_and_plugin_timings(scraped: tuple[dict[str, Any], Run]) -> None:
    families, _ = scraped
    points = families["scheduler_framework_extension_point_duration_seconds"]
    seen = {(s.labels["extension_point"], s.labels["status"]) for s in samples(points, "_count") if s.value}
    assert {
        ("PreFilter", "Success"),
        ("PreScore", "Success"),
        ("Score", "Success"),
        ("Reserve", "Success"),
        ("Permit", "Success"),
        ("PreBind", "Success"),
        ("Bind", "Success"),
        ("PostBind", "Success"),
        ("PostFilter", "Unschedulable"),
        ("PostFilter", "Success"),
    } <= seen
    assert not any(point == "Filter" for point, _ in seen)  # timed per node upstream: not at all
    plugins = families["scheduler_plugin_execution_duration_seconds"]
    seen_plugins = {
        (s.labels["plugin"], s.labels["extension_point"], s.labels["status"])
        for s in samples(plugins, "_count")
        if s.value
    }
    assert {
        ("NodeResourcesFit", "Filter", "Success"),
        ("NodeResourcesFit", "Filter", "Unschedulable"),
        ("NodeResourcesFit", "PreFilter", "Success"),
        ("DefaultBinder", "Bind", "Success"),
        ("DefaultPreemption", "PostFilter", "Success"),
        ("TaintToleration", "Score", "Success"),
        ("TaintToleration", "ScoreExtensionNormalize", "Success"),
    } <= seen_plugins


def test_cache_size_and_leader_status(scraped: tuple[dict[str, Any], Run]) -> None:
    families, _ = scraped
    cache = families["scheduler_cache_size"]
    assert labelled(cache, type="nodes") == 2
    assert labelled(cache, type="pods") == 2  # hi and the low pod that stayed
    assert labelled(cache, type="assumed_pods") == 0
    assert labelled(families["leader_election_master_status"], name="kube-scheduler") == 1


def test_plugins_are_timed_on_the_sampled_share_of_cycles() -> None:
    def plugin_samples(percent: int) -> tuple[float, float]:
        metrics = SchedulerMetrics(plugin_sample_percent=percent, rng=random.Random(7))
        run = Run(metrics, [node_dict("n1", cpu="100", pods="300")])
        run.create(*[pod_dict(f"p{i}", cpu="100m") for i in range(200)])
        run.run()
        bind = (
            metrics.registry.get_sample_value(
                "scheduler_plugin_execution_duration_seconds_count",
                {"plugin": "DefaultBinder", "extension_point": "Bind", "status": "Success"},
            )
            or 0.0
        )
        point = (
            metrics.registry.get_sample_value(
                "scheduler_framework_extension_point_duration_seconds_count",
                {"extension_point": "Bind", "status": "Success", "profile": "default-scheduler"},
            )
            or 0.0
        )
        return bind, point

    assert plugin_samples(0) == (0.0, 200.0)
    sampled, every = plugin_samples(10)
    assert every == 200.0 and 8 <= sampled <= 35
    assert plugin_samples(100) == (200.0, 200.0)


def test_unschedulable_pods_go_down_when_the_pod_is_deleted() -> None:
    metrics = SchedulerMetrics()
    run = Run(metrics, [node_dict("n1", cpu="1")])
    run.create(pod_dict("big", cpu="4"))
    run.run()
    labels = {"plugin": "NodeResourcesFit", "profile": "default-scheduler"}
    assert metrics.registry.get_sample_value("scheduler_unschedulable_pods", labels) == 1
    run.cluster.delete("Pod", "default", "big")
    run.settle()
    assert metrics.registry.get_sample_value("scheduler_unschedulable_pods", labels) == 0


def test_two_schedulers_never_share_counts() -> None:
    first, second = SchedulerMetrics(), SchedulerMetrics()
    run = Run(first, [node_dict("n1")])
    Run(second, [node_dict("n1")])
    run.create(pod_dict("p"))
    run.run()
    labels = {"result": "scheduled", "profile": "default-scheduler"}
    assert first.registry.get_sample_value("scheduler_schedule_attempts_total", labels) == 1
    assert second.registry.get_sample_value("scheduler_schedule_attempts_total", labels) is None


def test_buckets_are_kube_schedulers() -> None:
    assert exponential_buckets(0.001, 2, 15)[-1] == pytest.approx(16.384)
    assert exponential_buckets(0.00001, 1.5, 20)[1] == pytest.approx(0.000015)
    assert len(exponential_buckets(1, 2, 7)) == 7


def test_a_histogram_counts_every_observation_across_folds_and_threads() -> None:
    """Observations are folded into the buckets in batches: what a scrape reads is every observation,
    the sum added in the order they came, however many batches and threads made them."""
    import threading

    metrics = SchedulerMetrics()
    sample = metrics.registry.get_sample_value
    values = [random.Random(3).random() * 40 for _ in range(1000)]
    for v in values:
        metrics.pod_scheduling_attempts.observe(v)
    total = 0.0
    for v in values:
        total += v
    assert sample("scheduler_pod_scheduling_attempts_count") == 1000
    assert sample("scheduler_pod_scheduling_attempts_sum") == total
    assert sample("scheduler_pod_scheduling_attempts_bucket", {"le": "1.0"}) == sum(v <= 1 for v in values)

    def observe_many() -> None:
        for _ in range(5000):
            metrics.pod_scheduling_attempts.observe(2)

    threads = [threading.Thread(target=observe_many) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sample("scheduler_pod_scheduling_attempts_count") == 21000
    assert sample("scheduler_pod_scheduling_attempts_bucket", {"le": "2.0"}) == sum(v <= 2 for v in values) + 20000


def test_an_unlabelled_histogram_is_served_once_observed_and_counts_every_observation() -> None:
    metrics = SchedulerMetrics()
    sample = metrics.registry.get_sample_value
    assert sample("scheduler_pod_scheduling_attempts_count") is None
    for attempts in (1, 1, 3, 40):
        metrics.pod_scheduling_attempts.observe(attempts)
    assert sample("scheduler_pod_scheduling_attempts_count") == 4
    assert sample("scheduler_pod_scheduling_attempts_sum") == 45
    assert [sample("scheduler_pod_scheduling_attempts_bucket", {"le": le}) for le in ("1.0", "2.0", "4.0", "+Inf")] == [
        2,
        2,
        3,
        4,
    ]
    with pytest.raises(KeyError):  # a labelled histogram has no unlabelled child
        metrics.scheduling_attempt_duration.observe(0.1)


class _Cycle:
    """The parts of a scheduling cycle the metrics read."""

    def __init__(
        self, profile: str = "default-scheduler", attempts: int = 1, queued_at: datetime | None = None
    ) -> None:
        self.profile, self.attempts, self.queued_at = profile, attempts, queued_at
        self.started = time.perf_counter()
        self.state = CycleState()


@pytest.mark.parametrize(("percent", "timed"), [(0, False), (100, True)])
def test_the_observer_times_plugins_on_sampled_cycles_only(percent: int, timed: bool) -> None:
    observer = MetricsObserver(SchedulerMetrics(plugin_sample_percent=percent), lambda: T0, {})
    cycle = _Cycle()
    observer.begin(cycle)
    assert (cycle.state.plugin_timer is not None) is timed


def test_the_observer_counts_each_ending_once_under_its_result() -> None:
    metrics = SchedulerMetrics()
    observer = MetricsObserver(metrics, lambda: T0 + timedelta(seconds=3), {})
    observer.failed(_Cycle(), True, "no room", None)
    observer.failed(_Cycle(profile="calm"), False, "broken", None)
    observer.scheduled(_Cycle(attempts=2, queued_at=T0), "n1")
    observer.scheduled(_Cycle(attempts=20), "n1")  # never queued as far as the scheduler knows: no SLI
    sample = metrics.registry.get_sample_value
    assert sample("scheduler_schedule_attempts_total", {"result": "unschedulable", "profile": "default-scheduler"}) == 1
    assert sample("scheduler_schedule_attempts_total", {"result": "error", "profile": "calm"}) == 1
    assert sample("scheduler_schedule_attempts_total", {"result": "scheduled", "profile": "default-scheduler"}) == 2
    assert sample("scheduler_pod_scheduling_attempts_count") == 2
    assert sample("scheduler_pod_scheduling_sli_duration_seconds_sum", {"attempts": "2"}) == 3.0
    assert sample("scheduler_pod_scheduling_sli_duration_seconds_count", {"attempts": "15+"}) is None


def test_only_a_post_filter_run_that_calls_the_preemption_plugin_is_a_preemption_attempt() -> None:
    metrics = SchedulerMetrics()
    observer = MetricsObserver(metrics, lambda: T0, {"default-scheduler": "DefaultPreemption"})
    both = ("DynamicResources", "DefaultPreemption")
    observer.post_filtered(_Cycle(), "DefaultPreemption", "ok", ["ns/a", "ns/b"], "n1", None, both)
    observer.post_filtered(_Cycle(), "DynamicResources", "none", None, "", None, both)
    # An earlier PostFilter plugin ended the run (an Error): preemption never ran.
    observer.post_filtered(_Cycle(), "DynamicResources", "not found", None, "", None, both[:1])
    observer.post_filtered(_Cycle(profile="calm"), "Other", "ok", ["ns/c"], "n1", None, ("Other",))
    sample = metrics.registry.get_sample_value
    assert sample("scheduler_preemption_attempts_total") == 2
    assert (sample("scheduler_preemption_victims_count"), sample("scheduler_preemption_victims_sum")) == (1, 2)


@pytest.mark.parametrize(("gates", "registered"), [(None, True), ("SchedulerAsyncPreemption=false", False)])
def test_async_preemption_metrics_exist_only_with_the_gate(gates: str | None, registered: bool) -> None:
    metrics = SchedulerMetrics()
    config = load_config(dict(API), features=feature_gates(None, gates))
    Scheduler(EmbeddedCluster(), config, clock=VirtualClock(), metrics=metrics)
    names = {family.name for family in metrics.registry.collect()}
    assert ("scheduler_preemption_goroutines_duration_seconds" in names) is registered
    assert ("scheduler_preemption_goroutines_execution" in names) is registered
    metrics.observe_preemption_goroutine("error", 0.25)
    sample = metrics.registry.get_sample_value
    assert sample("scheduler_preemption_goroutines_execution_total", {"result": "error"}) == (1 if registered else None)
    assert sample("scheduler_preemption_goroutines_duration_seconds_sum", {"result": "error"}) == (
        0.25 if registered else None
    )


def _exposed(metrics: SchedulerMetrics) -> list[tuple[str, dict[str, str], float]]:
    """Every sample of the registry, the creation times read as present only."""
    return [
        (s.name, s.labels, 1.0 if s.name.endswith("_created") else s.value)
        for family in metrics.registry.collect()
        for s in family.samples
    ]


def test_the_hooks_that_update_values_straight_expose_what_inc_and_set_would() -> None:
    hooked, plain = SchedulerMetrics(), SchedulerMetrics()
    hooked.pending_pods_changed({"active": 3, "backoff": 0})
    hooked.pending_pods_changed({"active": 2, "backoff": 1})
    for _ in range(2):
        hooked.incoming_pod("active", "PodAdd")
        hooked.observe_attempt("scheduled", "default-scheduler", 0.5)
    plain.pending_pods.labels(queue="active").set(2)
    plain.pending_pods.labels(queue="backoff").set(1)
    plain.queue_incoming_pods.labels(queue="active", event="PodAdd").inc(2)
    plain.schedule_attempts.labels(result="scheduled", profile="default-scheduler").inc(2)
    for _ in range(2):
        plain.scheduling_attempt_duration.labels(result="scheduled", profile="default-scheduler").observe(0.5)
    assert _exposed(hooked) == _exposed(plain)
    assert hooked.registry.get_sample_value("scheduler_pending_pods", {"queue": "active"}) == 2.0
    assert (
        hooked.registry.get_sample_value("scheduler_queue_incoming_pods_total", {"queue": "active", "event": "PodAdd"})
        == 2.0
    )


def test_a_plugin_timer_labels_each_call_by_plugin_and_point_and_keys_a_method_once() -> None:
    class Fit:
        name = "NodeResourcesFit"

        def score_nodes(self) -> None: ...

        def reserve(self) -> None: ...

    metrics, plugin = SchedulerMetrics(), Fit()
    timer = PluginTimer(metrics)
    for _ in range(3):
        timer.observe(plugin.score_nodes, "Success", 0.0)
        timer.observe(plugin.reserve, "Error", 0.0)
        timer.observe(lambda: None, "Success", 0.0)  # a callable made per call, no plugin behind it
    count = "scheduler_plugin_execution_duration_seconds_count"
    sample = metrics.registry.get_sample_value
    assert sample(count, {"plugin": "NodeResourcesFit", "extension_point": "Score", "status": "Success"}) == 3
    assert sample(count, {"plugin": "NodeResourcesFit", "extension_point": "Reserve", "status": "Error"}) == 3
    assert sample(count, {"plugin": "NoneType", "extension_point": "<lambda>", "status": "Success"}) == 3
    assert len(metrics._plugin_calls) == 3


def test_the_queue_to_bound_latency_is_labelled_by_attempts_up_to_15_plus() -> None:
    metrics = SchedulerMetrics()
    for attempts in (1, 14, 15, 20, 1):
        metrics.observe_scheduled("default-scheduler", 0.1, attempts, 2.0)
    count = "scheduler_pod_scheduling_sli_duration_seconds_count"
    sample = metrics.registry.get_sample_value
    assert [sample(count, {"attempts": label}) for label in ("1", "14", "15", "15+", "20")] == [2, 1, None, 2, None]
