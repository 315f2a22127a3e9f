"""Prometheus metrics under kube-scheduler's names.

Each scheduler owns its own registry (no process-wide singletons), so several schedulers (tests,
simulations) can live in one process; a live scheduler serves this registry on /metrics.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

_ATTEMPT_BUCKETS = tuple(0.001 * 2**i for i in range(15))


class SchedulerMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts", "Number of attempts to schedule pods, by the result.",
            ["result", "profile"], registry=self.registry)
        self.scheduling_attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"], buckets=_ATTEMPT_BUCKETS, registry=self.registry)
        self.pending_pods = Gauge(
            "scheduler_pending_pods", "Number of pending pods, by the queue type.",
            ["queue"], registry=self.registry)
        self.queue_incoming_pods = Counter(
            "scheduler_queue_incoming_pods", "Number of pods added to scheduling queues by event and queue type.",
            ["queue", "event"], registry=self.registry)
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts", "Total preemption attempts in the cluster till now",
            registry=self.registry)
        self.pod_scheduling_attempts = Histogram(
            "scheduler_pod_scheduling_attempts", "Number of attempts to successfully schedule a pod.",
            buckets=(1, 2, 4, 8, 16), registry=self.registry)
        self.unschedulable_pods = Gauge(
            "scheduler_unschedulable_pods", "The number of unschedulable pods broken down by plugin name.",
            ["plugin", "profile"], registry=self.registry)

        self.leader_election_master_status = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates "
            "master. 'name' is the string used to identify the lease. Please make sure to group by name.",
            ["name"], registry=self.registry)
        self.leader_election_slowpath = Counter(
            "leader_election_slowpath",
            "Total number of slow path exercised in renewing leader leases. 'name' is the string used to "
            "identify the lease. Please make sure to group by name.",
            ["name"], registry=self.registry)

    # LeaderMetrics (kubesched.leaderelection)
    def leader_on(self, name: str) -> None:
        self.leader_election_master_status.labels(name=name).set(1)

    def leader_off(self, name: str) -> None:
        self.leader_election_master_status.labels(name=name).set(0)

    def leader_slowpath(self, name: str) -> None:
        self.leader_election_slowpath.labels(name=name).inc()

    def observe_attempt(self, result: str, profile: str, seconds: float) -> None:
        self.schedule_attempts.labels(result=result, profile=profile).inc()
        self.scheduling_attempt_duration.labels(result=result, profile=profile).observe(seconds)

    def set_pending(self, counts: dict[str, int]) -> None:
        for queue, value in counts.items():
            self.pending_pods.labels(queue=queue).set(value)
