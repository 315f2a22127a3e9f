"""Offline simulation: the real scheduler against an embedded cluster on a virtual clock.

The driver plays a scenario the way the conformance corpus was recorded: every object but the
pending pods is created first; pending pods then arrive one at a time, each once the scheduler has
gone idle (no cycle or binding in flight, active and backoff queues empty). Before each scheduling
cycle every pending cluster event is delivered and every backoff is allowed to finish, as a slow
scheduling loop would see it, so the queue order alone decides which pod goes next.
"""

from __future__ import annotations

import copy
import random
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kubesched.api.errors import ObjectError
from kubesched.api.objects import Node, Pod
from kubesched.clock import VirtualClock
from kubesched.cluster.controllers import start_controllers
from kubesched.cluster.embedded import EmbeddedCluster, format_time
from kubesched.cluster.manifests import Manifest, ManifestError
from kubesched.cluster.podgroups import PodGroupController
from kubesched.cluster.protocol import ApiError
from kubesched.cluster.workloads import start_workload_controllers
from kubesched.config import ConfigError, KubeSchedulerConfiguration, load_config
from kubesched.scheduler import Scheduler
from kubesched.sim.scenario import (
    SimulationError,
    bound_pod_warnings,
    check_admission,
    check_options,
    creation_order,
    scenario_manifests,
)
from kubesched.trace import ERROR, SCHEDULED, AttemptRecord

START_TIME = datetime(2024, 1, 1, tzinfo=UTC)
#: Virtual time one scheduling cycle takes: keeps queue timestamps strictly ordered.
CYCLE_TIME = timedelta(milliseconds=1)


@dataclass
class SimulationResult:
    """What happened: every attempt (trace records) and where each pending pod ended up."""

    attempts: list[dict[str, Any]]
    final: dict[str, str | None]
    records: list[AttemptRecord] = field(repr=False, default_factory=list)
    nominated: dict[str, str] = field(default_factory=dict)
    deleted: list[str] = field(default_factory=list)
    never_attempted: list[str] = field(default_factory=list)
    looping: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    cluster: EmbeddedCluster | None = field(default=None, repr=False)
    scheduler: Scheduler | None = field(default=None, repr=False)
    virtual_seconds: float = 0.0
    #: Pod -> ``Kind namespace/name`` of the workload whose controller created it.
    workloads: dict[str, str] = field(default_factory=dict)

    def pods(self) -> list[dict[str, Any]]:
        assert self.cluster is not None
        return self.cluster.list("Pod")[0]

    def nodes(self) -> list[dict[str, Any]]:
        assert self.cluster is not None
        return self.cluster.list("Node")[0]


def _deterministic_uids(seed: int) -> Callable[[], str]:
    rng = random.Random(f"uids-{seed}")
    return lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _to_manifests(objects_or_paths: Iterable[Any] | str | Path) -> list[Manifest]:
    return scenario_manifests(objects_or_paths)


def _validate(manifests: Sequence[Manifest]) -> None:
    """Parse pods and nodes once up front so that a bad field is reported with file and document."""
    for m in manifests:
        try:
            if m.kind == "Pod":
                Pod.from_dict(m.obj)
            elif m.kind == "Node":
                Node.from_dict(m.obj)
        except ObjectError as err:
            raise ManifestError.from_object_error(m, err) from None


def _is_pending_pod(obj: Mapping[str, Any]) -> bool:
    return obj.get("kind") == "Pod" and not (obj.get("spec") or {}).get("nodeName")


def _key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


class Simulation:
    """A scenario loaded into an embedded cluster with a scheduler attached, ready to run."""

    def __init__(self, manifests: Sequence[Manifest], config: KubeSchedulerConfiguration, *, seed: int = 0,
                 tie_break: str = "random", progress: Callable[[int, int], None] | None = None) -> None:
        self.clock = VirtualClock(START_TIME)
        self.cluster = EmbeddedCluster(clock=self.clock.now, uid_factory=_deterministic_uids(seed))
        # kube-controller-manager's part: PV binding and provisioning, PodDisruptionBudget status.
        self.controllers = start_controllers(self.cluster)
        self.scheduler = Scheduler(self.cluster, config, clock=self.clock, rng=random.Random(seed),
                                   tie_break=tie_break)
        self.workloads = start_workload_controllers(self.cluster, random.Random(f"names-{seed}"))
        self.records: list[AttemptRecord] = []
        self.scheduler.observers.append(self.records.append)
        PodGroupController(self.cluster).start()
        self.manifests = manifests
        self.progress = progress
        self.warnings: list[str] = list(self.scheduler.warnings)
        self.looping: list[str] = []
        self._interesting_events = 0
        self._last_failure: dict[str, int] = {}
        #: Per pod: the cluster-change count and the failure messages seen since it changed.
        self._messages: dict[str, tuple[int, set[str | None]]] = {}
        self._checked = 0
        self.pending: list[Manifest] = []
        self._created: list[str] = []
        handle = self.scheduler.handle_event

        def counting_handler(event: Any) -> None:
            # Changes to nodes and to bound pods are what can make a rejected pod schedulable.
            if event.kind == "Node" or (event.kind == "Pod" and (
                    (event.obj.get("spec") or {}).get("nodeName") or event.type == "DELETED")):
                self._interesting_events += 1
            handle(event)

        self.scheduler.handle_event = counting_handler  # type: ignore[method-assign]

    # -- loading -------------------------------------------------------------------------------------
    def load(self) -> None:
        """Create every object except pending pods, in document order, and start the scheduler."""
        for index, m in enumerate(self.manifests):
            obj = copy.deepcopy(m.obj)
            meta = obj.setdefault("metadata", {})
            meta.setdefault("creationTimestamp", format_time(START_TIME + timedelta(seconds=index)))
            if _is_pending_pod(obj):
                self.pending.append(Manifest(m.source, m.doc_index, obj))
                continue
            self._create(m, obj)
        # Controllers settle what was loaded (claims bound, budgets counted) before scheduling starts.
        self.cluster.deliver_pending()
        self.scheduler.start()

    def _create(self, m: Manifest, obj: dict[str, Any]) -> None:
        try:
            self.cluster.create(obj)
        except ApiError as err:
            if obj.get("kind") == "Namespace" and err.code == 409:
                return  # already created because an earlier object referenced it
            raise ManifestError.at(m, "", err.message) from None
        if obj.get("kind") == "Pod":
            self._created.append(_key(obj))

    # -- running -------------------------------------------------------------------------------------
    def run(self, *, burst: bool = False) -> SimulationResult:
        total = len(self.pending)
        if self.workloads.has_workloads():
            self.settle()  # the controllers create their pods as the workloads' watch events arrive
        if burst:
            for m in self.pending:
                self._create(m, m.obj)
            self.settle()
        else:
            for i, m in enumerate(self.pending):
                self._create(m, m.obj)
                self.settle()
                if self.progress is not None:
                    self.progress(i + 1, total)
        return self.result()

    def settle(self) -> None:
        """Run until the scheduler is idle: no events, tasks, backoffs or active pods left."""
        sched = self.scheduler
        queue = sched.queue
        while True:
            self.cluster.deliver_pending()
            ran = sched.run_pending_tasks()
            self._watch_for_loops()
            if ran or self.cluster.pending_event_count():
                continue
            expiries = list(queue.backoff_expiries())
            if expiries:
                self.clock.advance_to(max(expiries))
                queue.flush_backoff_q_completed()
                continue
            if sched.schedule_next():
                self.clock.advance_to(self.clock.now() + CYCLE_TIME)
                self._watch_for_loops()
                continue
            if self._waiting_on_permit():
                nxt = self.clock.next_timer()
                if nxt is not None:
                    self.clock.advance_to(nxt)
                    self._watch_for_loops()
                    continue
            return

    def _waiting_on_permit(self) -> bool:
        """A binding cycle waits at Permit or in PreBind: only a timer can end the wait."""
        return bool(self.scheduler.waiting_in_pre_bind) or any(
            fwk.waiting_pods.all() for fwk in self.scheduler.profiles.values())

    def _watch_for_loops(self) -> None:
        """Stop retrying a pod that failed twice with no cluster change in between.

        Such a pod (an error, or a rejection no plugin owns) would be retried from backoff forever;
        kube-scheduler would too, but a simulation has to end. Records come from scheduling cycles,
        binding cycles and permit timeouts alike, so every step checks the ones it produced.
        """
        fresh, self._checked = self.records[self._checked:], len(self.records)
        for record in fresh:
            if record.result == SCHEDULED:
                self._last_failure.pop(record.pod, None)
                continue
            seen = self._interesting_events
            previous = self._last_failure.get(record.pod)
            self._last_failure[record.pod] = seen
            # The same rejection again, with nothing changed in the cluster: only the scheduler's own
            # doing (a gang's members forgotten and retried) moved the pod, and it would go on forever.
            since, messages = self._messages.get(record.pod, (seen, set()))
            if since != seen:
                messages = set()
            repeated = record.message in messages
            self._messages[record.pod] = (seen, messages | {record.message})
            if previous != seen:
                continue
            pod = next((p for p in self.scheduler.pods() if p.key == record.pod), None)
            if pod is None:
                continue
            qpi = self.scheduler.queue.get_pod(pod.uid)
            if qpi is not None and (record.result == ERROR or repeated
                                    or not (qpi.unschedulable_plugins or qpi.pending_plugins)):
                self.scheduler.queue.delete(pod)
                self.looping.append(record.pod)

    # -- results -------------------------------------------------------------------------------------
    def result(self) -> SimulationResult:
        pods = {(_key(p)): p for p in self.cluster.list("Pod")[0]}
        final: dict[str, str | None] = {}
        nominated: dict[str, str] = {}
        # Pods the workload controllers made count too; one that is gone ran (it was bound: a completed
        # job pod), was preempted (a victim), or was removed before it was ever placed (left out).
        ran = {r.pod: r.node for r in self.records if r.result == SCHEDULED}
        victims = {v for r in self.records for v in r.victims or ()}
        gone = [k for k in self.workloads.created_pods if k not in pods]
        keys = [_key(m.obj) for m in self.pending]
        keys += [k for k in self.workloads.created_pods if k in pods or k in ran or k in victims]
        for key in keys:
            pod = pods.get(key)
            final[key] = ((pod.get("spec") or {}).get("nodeName") or None) if pod else None
            if pod is None and key in ran and key not in victims:
                final[key] = ran[key]
            nnn = ((pod or {}).get("status") or {}).get("nominatedNodeName")
            if pod and nnn and not final[key]:
                nominated[key] = nnn
        attempted = {r.pod for r in self.records}
        never = sorted(k for k in final if k not in attempted and k not in self.looping)
        warnings = list(self.warnings) + self.controllers.warnings
        for key in never:
            pod = pods.get(key)
            name = ((pod or {}).get("spec") or {}).get("schedulerName", "default-scheduler")
            if pod is not None and name not in self.scheduler.profiles:
                warnings.append(f'pod {key}: schedulerName "{name}" matches no profile; never scheduled')
        deleted = sorted(k for k in self._created if k not in pods)
        deleted += sorted(k for k in gone if k in victims)
        warnings += [f"workload controllers: {e}" for e in self.workloads.errors]
        # Attempts in scheduling-cycle order (a binding that waited reports late).
        records = sorted(self.records, key=lambda r: r.cycle)
        return SimulationResult(
            attempts=[r.to_dict() for r in records],
            final=final,
            records=records,
            nominated=nominated,
            deleted=deleted,
            never_attempted=never,
            looping=sorted(set(self.looping)),
            warnings=warnings,
            cluster=self.cluster,
            scheduler=self.scheduler,
            virtual_seconds=(self.clock.now() - START_TIME).total_seconds(),
            workloads={k: w for k, w in self.workloads.pod_workloads.items() if k in final},
        )


def resolve_config(config: str | Path | Mapping[str, Any] | KubeSchedulerConfiguration | None,
                   *, default_percentage: int | None = None) -> KubeSchedulerConfiguration:
    """Load a config from a path or dict (or take a built one)."""
    if isinstance(config, KubeSchedulerConfiguration):
        return config
    try:
        return load_config(config)
    except ConfigError:
        raise
    except (OSError, ValueError) as err:
        raise SimulationError(f"{config}: {err}") from None


def simulate(
    objects_or_paths: Iterable[Any] | str | Path,
    config: str | Path | Mapping[str, Any] | KubeSchedulerConfiguration | None = None,
    seed: int = 0,
    burst: bool = False,
    tie_break: str = "random",
    *,
    progress: Callable[[int, int], None] | None = None,
) -> SimulationResult:
    """Simulate scheduling the pending pods of a scenario; see the module docstring for the timing.

    ``objects_or_paths`` takes manifest files or folders, or object dicts (a mix is fine).
    """
    check_options(config, seed, burst, tie_break, progress)
    manifests = creation_order(_to_manifests(objects_or_paths))
    _validate(manifests)
    check_admission(manifests)
    cfg = resolve_config(config)
    sim = Simulation(manifests, cfg, seed=seed, tie_break=tie_break, progress=progress)
    sim.warnings.extend(bound_pod_warnings(manifests))
    sim.load()
    return sim.run(burst=burst)
