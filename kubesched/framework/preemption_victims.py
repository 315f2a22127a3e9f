"""What becomes of a chosen preemption candidate's victims, and of the nominations to its node.

:class:`VictimPreemption` is the API side of preemption (kube-scheduler's ``PreemptPod``,
``prepareCandidate`` and ``prepareCandidateAsync``): each victim gets the DisruptionTarget condition and
is deleted (or, when it waits at Permit, rejected), with a ``Preempted`` event; pods of lower priority
nominated to the node lose their nomination. Two ways of doing it:

* in the scheduling cycle (v1.30, or v1.34 with ``SchedulerAsyncPreemption`` off): every victim, then
  the nominations; a failure fails the PostFilter;
* off the scheduling loop (v1.34's asynchronous preemption): the cycle only marks the preemptor as
  preempting (:class:`PreemptingPods`, which DefaultPreemption's PreEnqueue reads) and hands a job to
  the scheduler: withdraw the nominations, preempt every victim but the last, unmark the preemptor, then
  preempt the last victim, whose deletion is the event that lets the preemptor back into the queue.
  Errors are logged and re-activate the preemptor.

The job is a generator that yields after each step that writes to the cluster: a simulation runs one
step per task and delivers the cluster's events in between (each API call's watch event is seen before
the next call, in victim order); a live scheduler runs the whole job on its pool. kube-scheduler deletes
all victims but the last in parallel; here they go one after another in the candidate's order, one of
the orders kube-scheduler can produce.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kubesched.api.objects import Pod
from kubesched.cluster.protocol import NotFound
from kubesched.framework.status import Status
from kubesched.klog import Logger, kobj

if TYPE_CHECKING:
    from kubesched.config.features import FeatureGates
    from kubesched.framework.extender import Victims
    from kubesched.framework.handle import Handle

DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
#: The ``result`` label of the preemption goroutine metrics.
RESULT_SUCCESS = "success"
RESULT_ERROR = "error"

logger = Logger(__name__)


class ChosenCandidate(Protocol):
    """The node chosen for the preemptor and the pods to preempt there, in order."""

    @property
    def name(self) -> str: ...
    @property
    def victims(self) -> Victims: ...


#: ``run_async(job)``: run a job off the scheduling loop (the scheduler's; see module docstring).
AsyncRunner = Callable[[Iterator[None]], None]


class GoroutineMetrics(Protocol):
    def observe_preemption_goroutine(self, result: str, seconds: float) -> None: ...


class PreemptionCancelled(RuntimeError):
    """A victim left alone because preempting an earlier one failed (the job's context is cancelled)."""


class PreemptingPods:
    """Uids of preemptors whose victims are being preempted off the loop; thread-safe."""

    def __init__(self) -> None:
        self._uids: set[str] = set()
        self._lock = threading.Lock()

    def add(self, uid: str) -> None:
        with self._lock:
            self._uids.add(uid)

    def discard(self, uid: str) -> None:
        with self._lock:
            self._uids.discard(uid)

    def __contains__(self, uid: object) -> bool:
        # One membership test of a set is atomic: asked by PreEnqueue for every pod queued, without the lock.
        return uid in self._uids

    def __len__(self) -> int:
        with self._lock:
            return len(self._uids)


def pod_conditions(pod: Pod) -> list[Mapping[str, Any]]:
    status = pod.raw.get("status") or {}
    return list(status.get("conditions") or [])


def condition_changes(pod: Pod, condition: Mapping[str, Any]) -> bool:
    """Whether setting ``condition`` changes the pod (apipod.UpdatePodCondition's "updated"): a new type,
    or another status, reason or message, or a probe time the new condition would drop."""
    for existing in pod_conditions(pod):
        if existing.get("type") == condition["type"]:
            return any(existing.get(k, "") != condition[k] for k in ("status", "reason", "message")) or bool(
                existing.get("lastProbeTime")
            )
    return True


def pod_generation(pod: Pod) -> int:
    try:
        return int((pod.raw.get("metadata") or {}).get("generation") or 0)
    except (TypeError, ValueError):
        return 0


def condition_observed_generation(pod: Pod, condition_type: str, tracking: bool) -> int:
    """The ``observedGeneration`` a condition written now carries: the pod's generation when
    PodObservedGenerationTracking is on or the pod's condition of that type already has one, else 0."""
    if tracking:
        return pod_generation(pod)
    for existing in pod_conditions(pod):
        if existing.get("type") == condition_type and existing.get("observedGeneration"):
            return pod_generation(pod)
    return 0


def _object_ref(pod: Pod) -> dict[str, str]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "namespace": pod.namespace,
        "name": pod.name,
        "uid": pod.uid,
        "resourceVersion": pod.meta.resource_version,
    }


@dataclass
class VictimPreemption:
    """Preempts victims for one preemption plugin, as the emulated version does (read once)."""

    plugin_name: str
    handle: Handle
    #: v1.34: DisruptionTarget always, observedGeneration, a victim already gone counts as preempted.
    v134: bool = field(init=False)
    #: Whether the DisruptionTarget condition is written (v1.30: the PodDisruptionConditions gate).
    disruption_condition: bool = field(init=False)
    observed_generation: bool = field(init=False)

    def __post_init__(self) -> None:
        features: FeatureGates | None = getattr(self.handle, "features", None)
        self.v134 = features is None or features.at_least("1.34")
        self.disruption_condition = self.v134 or features is None or features.enabled("PodDisruptionConditions")
        self.observed_generation = features is not None and features.enabled("PodObservedGenerationTracking")

    @property
    def logger_name(self) -> str:
        return f"PostFilter.{self.plugin_name}"

    # -- one victim (PreemptPod) ----------------------------------------------------------------------
    def preempt_pod(self, node: str, preemptor: Pod, victim: Pod, *, cancelled: bool = False) -> None:
        """Reject the victim if it waits at Permit; otherwise mark it (DisruptionTarget) and delete it.
        Raises what the cluster raised; a victim already deleted is preempted (v1.34) without an event."""
        get_waiting_pod = getattr(self.handle, "get_waiting_pod", None)
        waiting = get_waiting_pod(victim.uid) if get_waiting_pod is not None else None
        if waiting is not None:
            waiting.reject(self.plugin_name, "preempted")
            if v := logger.v(2):
                v.info(
                    "Preemptor pod rejected a waiting pod",
                    "logger",
                    self.logger_name,
                    "preemptor",
                    kobj(preemptor),
                    "waitingPod",
                    kobj(victim),
                    "node",
                    node,
                )
        elif not self._delete(node, preemptor, victim, cancelled):
            return
        self._record_preempted(victim, preemptor, node)

    def _delete(self, node: str, preemptor: Pod, victim: Pod, cancelled: bool) -> bool:
        """The condition patch and the DELETE; False when the victim was already gone."""
        if self.disruption_condition:
            self._mark_disrupted(preemptor, victim, cancelled)
        try:
            if cancelled:
                raise PreemptionCancelled("context canceled")
            self.handle.cluster.delete("Pod", victim.namespace, victim.name)
        except NotFound as err:
            if not self.v134:
                logger.error(
                    err, "Preempted pod", "logger", self.logger_name, "pod", kobj(victim), "preemptor", kobj(preemptor)
                )
                raise
            if v := logger.v(2):
                v.info(
                    "Victim Pod is already deleted",
                    "logger",
                    self.logger_name,
                    "preemptor",
                    kobj(preemptor),
                    "victim",
                    kobj(victim),
                    "node",
                    node,
                )
            return False
        except Exception as err:
            logger.error(
                err,
                "Tried to preempted pod" if self.v134 else "Preempted pod",
                "logger",
                self.logger_name,
                "pod",
                kobj(victim),
                "preemptor",
                kobj(preemptor),
            )
            raise
        if v := logger.v(2):
            v.info(
                "Preemptor Pod preempted victim Pod",
                "logger",
                self.logger_name,
                "preemptor",
                kobj(preemptor),
                "victim",
                kobj(victim),
                "node",
                node,
            )
        return True

    def _mark_disrupted(self, preemptor: Pod, victim: Pod, cancelled: bool) -> None:
        """The victim's DisruptionTarget condition, patched unless it already says so."""
        condition = self._disruption_condition(preemptor, victim)
        if not condition_changes(victim, condition):
            return
        try:
            if cancelled:
                raise PreemptionCancelled("context canceled")
            self.handle.cluster.patch_pod_status(victim.namespace, victim.name, conditions=[condition], reply=False)
        except Exception as err:
            logger.error(
                err,
                "Could not add DisruptionTarget condition due to preemption",
                "logger",
                self.logger_name,
                "pod",
                kobj(victim),
                "preemptor",
                kobj(preemptor),
            )
            raise

    def _disruption_condition(self, preemptor: Pod, victim: Pod) -> dict[str, Any]:
        condition: dict[str, Any] = {
            "type": DISRUPTION_TARGET,
            "status": "True",
            "reason": REASON_PREEMPTION_BY_SCHEDULER,
            "message": f"{preemptor.scheduler_name}: preempting to accommodate a higher priority pod",
        }
        if self.v134:
            generation = condition_observed_generation(victim, DISRUPTION_TARGET, self.observed_generation)
            if generation:
                condition["observedGeneration"] = generation
        return condition

    def _record_preempted(self, victim: Pod, preemptor: Pod, node: str) -> None:
        event = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"namespace": victim.namespace},
            "regarding": _object_ref(victim),
            "related": _object_ref(preemptor),
            "type": "Normal",
            "reason": "Preempted",
            "action": "Preempting",
            "note": f"Preempted by pod {preemptor.uid} on node {node}",
            "reportingController": preemptor.scheduler_name,
            "reportingInstance": preemptor.scheduler_name,
        }
        try:  # events are best effort, as with an event recorder
            self.handle.cluster.record_event(event)
        except Exception as err:
            if v := logger.v(4):
                v.info(
                    "Could not record the Preempted event",
                    "logger",
                    self.logger_name,
                    "pod",
                    kobj(victim),
                    "err",
                    str(err),
                )

    # -- nominations to the node -----------------------------------------------------------------------
    def lower_priority_nominated_pods(self, preemptor: Pod, node: str) -> list[Pod]:
        """Pods nominated to ``node`` with a lower priority than the preemptor: they may not fit any more."""
        return [p for p in self.handle.nominator.nominated_pods_for_node(node) if p.priority < preemptor.priority]

    def clear_nominated_node_name(self, pods: Sequence[Pod]) -> list[Exception]:
        """Clear status.nominatedNodeName where set; the errors, which the caller only logs."""
        errors: list[Exception] = []
        for p in pods:
            if not p.nominated_node_name:
                continue
            try:
                self.handle.cluster.patch_pod_status(p.namespace, p.name, nominated_node_name="", reply=False)
            except Exception as err:
                errors.append(err)
        return errors

    # -- in the cycle (prepareCandidate) ---------------------------------------------------------------
    def prepare_candidate(self, candidate: ChosenCandidate, preemptor: Pod) -> Status | None:
        """Preempt every victim (the first failure stops and fails the PostFilter), then withdraw
        lower-priority nominations to the node (their failures are only logged)."""
        for victim in candidate.victims.pods:
            try:
                self.preempt_pod(candidate.name, preemptor, victim)
            except Exception as err:
                return Status.from_error(err)
        errors = self.clear_nominated_node_name(self.lower_priority_nominated_pods(preemptor, candidate.name))
        if errors:
            logger.error(_aggregate(errors), "Cannot clear 'NominatedNodeName' field", "logger", self.logger_name)
        return None

    # -- off the loop (prepareCandidateAsync) ----------------------------------------------------------
    def prepare_candidate_async(self, candidate: ChosenCandidate, preemptor: Pod, preempting: PreemptingPods) -> None:
        """Mark the preemptor as preempting and hand the rest to the scheduler (run now without one)."""
        preempting.add(preemptor.uid)
        job = self.async_job(candidate, preemptor, preempting)
        run_async: AsyncRunner | None = _extra(self.handle).get("run_async")
        if run_async is None:
            for _ in job:
                pass
            return
        run_async(job)

    def async_job(self, candidate: ChosenCandidate, preemptor: Pod, preempting: PreemptingPods) -> Iterator[None]:
        """The steps of the asynchronous preemption, yielding after each one that wrote to the cluster."""
        started = time.perf_counter()
        failed = False
        try:
            failed = yield from self._async_steps(candidate, preemptor, preempting)
        finally:
            preempting.discard(preemptor.uid)
            self._finish(preemptor, failed, time.perf_counter() - started)

    def _async_steps(
        self, candidate: ChosenCandidate, preemptor: Pod, preempting: PreemptingPods
    ) -> Generator[None, None, bool]:
        """Nominations, victims but the last, unmark, the last victim; returns whether anything failed."""
        node, victims = candidate.name, list(candidate.victims.pods)
        if v := logger.v(2):
            v.info(
                "Start the preemption asynchronously",
                "logger",
                self.logger_name,
                "preemptor",
                kobj(preemptor),
                "node",
                node,
                "numVictims",
                len(victims),
            )
        failed = False
        errors = self.clear_nominated_node_name(self.lower_priority_nominated_pods(preemptor, node))
        if errors:
            logger.error(
                _aggregate(errors),
                "Cannot clear 'NominatedNodeName' field from lower priority pods on the same target node",
                "logger",
                self.logger_name,
                "node",
                node,
            )
            failed = True
        if not victims:
            return failed
        yield
        cancelled = yield from self._all_but_last(node, preemptor, victims[:-1])
        failed = failed or cancelled
        # Unmarked before the last deletion, so that deletion's event finds the preemptor no longer gated.
        preempting.discard(preemptor.uid)
        try:
            self.preempt_pod(node, preemptor, victims[-1], cancelled=cancelled)
        except Exception as err:
            logger.error(err, "Error occurred during async preemption", "logger", self.logger_name)
            failed = True
        if v := logger.v(2):
            v.info(
                "Async Preemption finished completely",
                "logger",
                self.logger_name,
                "preemptor",
                kobj(preemptor),
                "node",
                node,
                "result",
                RESULT_ERROR if failed else RESULT_SUCCESS,
            )
        return failed

    def _all_but_last(self, node: str, preemptor: Pod, victims: Sequence[Pod]) -> Generator[None, None, bool]:
        """Preempt ``victims`` one step each; returns whether one failed, which cancels the rest (later
        victims are left alone, and the last one's API calls fail)."""
        cancelled = False
        for victim in victims:
            if cancelled:
                continue
            try:
                self.preempt_pod(node, preemptor, victim)
            except Exception as err:
                logger.error(err, "Error occurred during async preemption", "logger", self.logger_name)
                cancelled = True
            yield
        return cancelled

    def _finish(self, preemptor: Pod, failed: bool, seconds: float) -> None:
        """The goroutine metrics; after a failure the preemptor is moved to activeQ, lest it wait for an
        event that never comes."""
        extra = _extra(self.handle)
        metrics: GoroutineMetrics | None = extra.get("metrics")
        if metrics is not None:
            metrics.observe_preemption_goroutine(RESULT_ERROR if failed else RESULT_SUCCESS, seconds)
        activate: Callable[[Mapping[str, Pod]], None] | None = extra.get("activate")
        if failed and activate is not None:
            activate({preemptor.name: preemptor})


def _extra(handle: Handle) -> Mapping[str, Any]:
    return getattr(handle, "extra", None) or {}


def _aggregate(errors: Sequence[Exception]) -> Exception:
    """utilerrors.NewAggregate: the lone error, or one listing them all."""
    if len(errors) == 1:
        return errors[0]
    return RuntimeError("[" + ", ".join(str(e) for e in errors) + "]")
