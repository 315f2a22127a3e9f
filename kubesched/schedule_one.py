"""One pod through the scheduler: the scheduling cycle, the binding cycle and failure handling.

The scheduling cycle runs alone (one pod at a time against a snapshot): PreFilter, Filter over a
rotating window of nodes (:mod:`kubesched.feasible_nodes`), PostFilter (preemption) when nothing fits,
PreScore / Score, host selection, then assume + Reserve + Permit. The binding cycle (WaitOnPermit,
PreBind, Bind, PostBind) is handed to the scheduler's executor so the next scheduling cycle can start
before it ends.

A :class:`~kubesched.cycle.SchedulingCycle`, made once per popped pod, carries the pod, its framework,
its CycleState and the node it was assumed on from one phase to the next. What the cycle uses of the
scheduler is :class:`~kubesched.cycle.SchedulerParts`. Every step of the attempt is reported once, to
the cycle's :class:`~kubesched.recording.AttemptObserver`, behind which the metrics and the recorders sit.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.frozen import evolve
from kubesched.api.objects import Pod
from kubesched.cache.cache import CacheError
from kubesched.cache.snapshot import NodeInfoList
from kubesched.cluster.protocol import ApiError
from kubesched.cycle import CycleError, SchedulerParts, SchedulingCycle
from kubesched.extender import extenders_binding
from kubesched.extender import prioritize as extender_prioritize
from kubesched.feasible_nodes import find_nodes_that_fit_pod
from kubesched.framework.cycle_state import PODS_TO_ACTIVATE_KEY, CycleState, PodsToActivate
from kubesched.framework.diagnosis import Diagnosis, FitError, NodeToStatus
from kubesched.framework.preemption import EXTENDER_VERDICTS_KEY
from kubesched.framework.runtime import Framework, ScoreOutcome
from kubesched.framework.status import Code, Status
from kubesched.klog import Logger, kobj
from kubesched.pod_status import pod_scheduled_false, update_pod
from kubesched.queue import events as qevents
from kubesched.queue.queued_pod_info import QueuedPodInfo

log = logging.getLogger(__name__)
#: kube-scheduler's lines about each pod, at their verbosity (see docs/live.md, "Logs").
logger = Logger(__name__)

NO_NODES_AVAILABLE = "no nodes available to schedule pods"
#: Key under which DefaultPreemption leaves the victims of its last preemption (for traces).
VICTIMS_KEY = "DefaultPreemption/victims"


@dataclass(slots=True)
class ScheduleResult:
    suggested_host: str = ""
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
    #: "" leave the pod's nomination alone; None clear it; a name nominate that node.
    nominated_node: str | None = ""


class SchedulingFailure(Exception):
    """Carries the status of a failed scheduling cycle and what to do with the pod's nomination."""

    def __init__(self, status: Status, nominated_node: str | None = None, error: BaseException | None = None) -> None:
        super().__init__(status.message)
        self.status = status
        self.nominated_node = nominated_node
        self.error = error


# -- the scheduling cycle -------------------------------------------------------------------------------
def schedule_one(sched: SchedulerParts, qpi: QueuedPodInfo) -> None:
    """Run one scheduling attempt for a popped pod and, on success, start its binding cycle."""
    pod = qpi.pod
    if v := logger.v(4):
        v.info("About to try and schedule pod", "pod", kobj(pod))
    fwk = sched.profiles.get(pod.scheduler_name)
    if fwk is None:
        logger.error(
            LookupError(f'profile not found for scheduler name "{pod.scheduler_name}"'),
            "Error occurred",
            "pod",
            kobj(pod),
        )
    if fwk is None or skip_pod_schedule(sched, pod):
        sched.queue.done(pod.uid)
        return
    if v := logger.v(3):
        v.info("Attempting to schedule pod", "pod", kobj(pod))
    state = CycleState()
    state.write(PODS_TO_ACTIVATE_KEY, PodsToActivate())
    cycle = SchedulingCycle(
        qpi, pod, fwk, state, sched.observer, next(sched.cycle_numbers), time.perf_counter(), assumed=pod
    )
    cycle.observer.begin(cycle)
    try:
        scheduling_cycle(sched, cycle)
    except SchedulingFailure as failure:
        handle_scheduling_failure(sched, cycle, failure.status, failure.nominated_node, failure.error)
        return
    _activate_pods(sched, state)
    sched.submit(lambda: _run_binding(sched, cycle))


def skip_pod_schedule(sched: SchedulerParts, pod: Pod) -> bool:
    """A pod being deleted, or one already assumed, is not scheduled again."""
    if pod.meta.deletion_timestamp is not None:
        if v := logger.v(3):
            v.info("Skip schedule deleting pod", "pod", kobj(pod))
        return True
    return sched.cache.is_assumed(pod)


def scheduling_cycle(sched: SchedulerParts, cycle: SchedulingCycle) -> None:
    """Find a host and hold it (assume, Reserve, Permit); a failure raises :class:`SchedulingFailure`."""
    pod, fwk, state = cycle.pod, cycle.fwk, cycle.state
    try:
        result = schedule_pod(sched, cycle)
    except FitError as fit:
        raise _post_filter(sched, cycle, fit) from None
    except CycleError as err:
        if not isinstance(err.error, NoNodesAvailable):  # said when the failure is handled
            logger.error(err.error, "Error selecting node for pod", "pod", kobj(pod))
        raise SchedulingFailure(err.status, None, err.error) from None

    host = result.suggested_host
    assumed = assume(sched, pod, host)
    cycle.host, cycle.assumed = host, assumed
    cycle.evaluated_nodes, cycle.feasible_nodes = result.evaluated_nodes, result.feasible_nodes
    reserve = fwk.run_reserve_plugins_reserve(state, assumed, host)
    if reserve is not None:
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        sched.cache.forget_pod(assumed)
        cycle.observer.failed_at(cycle, "reserve", reserve.plugin, reserve.message)
        _raise_single_node(pod, host, reserve)
    permit = fwk.run_permit_plugins(state, assumed, host)
    if permit is not None and permit.code is not Code.WAIT:
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        sched.cache.forget_pod(assumed)
        cycle.observer.failed_at(cycle, "permit", permit.plugin, permit.message)
        _raise_single_node(pod, host, permit)


def _post_filter(sched: SchedulerParts, cycle: SchedulingCycle, fit: FitError) -> SchedulingFailure:
    """Nothing fits: let the PostFilter plugins (preemption) try, and say what becomes of the nomination."""
    fwk, state = cycle.fwk, cycle.state
    if not fwk.has_post_filter_plugins():
        if v := logger.v(3):
            v.info("No PostFilter plugins are registered, so no preemption will be performed", "pod", kobj(cycle.pod))
        return SchedulingFailure(Status(Code.UNSCHEDULABLE), "", fit)
    # A replica whose gate closed mid-cycle (Lease lost) must not preempt: victims are deletions.
    if not sched.may_act():
        return SchedulingFailure(Status(Code.UNSCHEDULABLE), "", fit)
    post_result, status = fwk.run_post_filter_plugins(state, cycle.pod, fit.diagnosis.node_status)
    fit.diagnosis.post_filter_msg = status.message
    if status.code is Code.ERROR:
        logger.error(
            None, "Status after running PostFilter plugins for pod", "pod", kobj(cycle.pod), "status", status.message
        )
    elif v := logger.v(5):
        v.info("Status after running PostFilter plugins for pod", "pod", kobj(cycle.pod), "status", status.message)
    nominated = "" if post_result is None else post_result.nominated_node_name
    cycle.observer.post_filtered(
        cycle,
        status.plugin or "",
        status.message or "success",
        state.get(VICTIMS_KEY),
        nominated,
        state.get(EXTENDER_VERDICTS_KEY),
        fwk.post_filter_plugins_ran(status),
    )
    # An overriding result sets the nomination (or clears it when it names no node).
    mode_override = post_result is not None and post_result.mode == "override"
    return SchedulingFailure(Status(Code.UNSCHEDULABLE), (nominated or None) if mode_override else "", fit)


def _raise_single_node(pod: Pod, host: str, status: Status) -> None:
    if status.is_rejected():
        diag = Diagnosis(NodeToStatus({host: status}))
        diag.add_plugin_status(status)
        raise SchedulingFailure(Status(status.code), None, FitError(pod, 1, diag))
    raise SchedulingFailure(status, None, status.as_error())


class NoNodesAvailable(RuntimeError):
    """The cluster has no node at all (kube-scheduler's ErrNoNodesAvailable)."""


def assume(sched: SchedulerParts, pod: Pod, host: str) -> Pod:
    """The pod as bound to ``host``, assumed in the cache (no longer a nominee anywhere)."""
    assumed = evolve(pod, node_name=host)
    sched.cache.assume_pod(assumed, host)
    sched.queue.delete_nominated_pod_if_exists(assumed)
    return assumed


def schedule_pod(sched: SchedulerParts, cycle: SchedulingCycle) -> ScheduleResult:
    """The node for the pod: Filter, then Score when more than one node is left."""
    pod, fwk, state, observer = cycle.pod, cycle.fwk, cycle.state, cycle.observer
    sched.cache.update_snapshot(sched.snapshot)
    snapshot = sched.snapshot
    if len(snapshot) == 0:
        raise CycleError(
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_NODES_AVAILABLE,)), NoNodesAvailable(NO_NODES_AVAILABLE)
        )
    feasible, diagnosis, evaluated = find_nodes_that_fit_pod(sched, cycle)
    if len(feasible) == 0:
        raise FitError(pod, len(snapshot), diagnosis)
    observer.feasible(cycle, snapshot.names, feasible)
    observer.evaluated(cycle, evaluated)
    if len(feasible) == 1:
        return ScheduleResult(snapshot.node_infos[int(feasible[0])].name, evaluated, 1)
    nodes = NodeInfoList(snapshot, feasible)
    verdicts = observer.extender_verdicts(cycle) if fwk.extenders else None
    raw_scores = observer.raw_scores
    scores = prioritize_nodes(fwk, state, pod, nodes, record_raw=raw_scores, verdicts=verdicts)
    host, tie_rows = select_host(sched, nodes, scores.total)
    observer.scored(cycle, feasible, scores.plugin_scores, scores.total, scores.raw_scores, tie_rows)
    if raw_scores:
        # With the raw scores, the weights: a trace reader (explain) shows raw, normalised and weighted.
        observer.weighted(cycle, {p: fwk.score_weights.get(p, 1) for p in scores.plugin_scores})
    return ScheduleResult(host, evaluated, len(feasible))


def prioritize_nodes(
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    nodes: NodeInfoList,
    *,
    record_raw: bool = False,
    verdicts: dict[str, Any] | None = None,
) -> ScoreOutcome:
    extenders = fwk.extenders
    if not fwk.has_score_plugins() and not extenders:
        return ScoreOutcome(total=np.ones(len(nodes), dtype=np.int64))
    status = fwk.run_pre_score_plugins(state, pod, nodes)
    if status is not None:
        raise CycleError(status, status.as_error())
    scores = fwk.run_score_plugins(state, pod, nodes, record_raw=record_raw)
    if isinstance(scores, Status):
        raise CycleError(scores, scores.as_error())
    if extenders:
        for name, values in extender_prioritize(extenders, pod, list(nodes), verdicts).items():
            weighted = np.asarray(values, dtype=np.int64)
            scores.plugin_scores[name] = weighted
            scores.total += weighted
    return scores


def select_host(sched: SchedulerParts, nodes: NodeInfoList, totals: np.ndarray) -> tuple[str, np.ndarray]:
    """The best-scoring node and the snapshot rows of every node sharing its score; ties broken at
    random (or by name when the scheduler is told to).

    Only the chosen name is looked up in the random case: with uniform nodes every node may tie.
    """
    tied = (totals == np.maximum.reduce(totals)).nonzero()[0]
    rows = nodes.indices[tied]
    names = nodes.snapshot.names
    if len(rows) == 1:
        host = str(names[rows[0]])
    elif sched.tie_break == "name":
        host = str(min(names[rows]))
    else:
        host = str(names[rows[sched.rng.randrange(len(rows))]])
    return host, rows


# -- failure handling ---------------------------------------------------------------------------------
def handle_scheduling_failure(
    sched: SchedulerParts,
    cycle: SchedulingCycle,
    status: Status,
    nominated_node: str | None,
    error: BaseException | None,
) -> None:
    """Requeue the pod, keep or change its nomination, and tell the cluster why it is pending."""
    qpi = cycle.qpi
    pod = qpi.pod
    rejected = status.is_rejected()
    if isinstance(error, FitError):
        qpi.unschedulable_plugins = set(error.diagnosis.unschedulable_plugins)
        qpi.pending_plugins = set(error.diagnosis.pending_plugins)
        message = str(error)
    elif error is not None:
        message = str(error)
    else:
        message = status.message
    cycle.observer.failed(cycle, rejected, message, nominated_node)
    _log_failure(pod, error if error is not None else status.as_error(), message)

    current = sched.current_pod(pod)
    if current is not None and not current.node_name:
        qpi.pod = current
        sched.queue.add_unschedulable_if_not_present(qpi, sched.queue.scheduling_cycle)
    else:
        if current is None:
            logger.info("Pod doesn't exist in informer cache", "pod", kobj(pod), "err", f'pod "{pod.name}" not found')
        else:
            logger.info(
                "Pod has been assigned to node. Abort adding it back to queue.",
                "pod",
                kobj(pod),
                "node",
                current.node_name,
            )
        sched.queue.done(pod.uid)
    if nominated_node is None:
        sched.queue.delete_nominated_pod_if_exists(pod)
    elif nominated_node:
        sched.queue.add_nominated_pod(qpi.pod, nominated_node)
    elif qpi.pod.nominated_node_name:
        sched.queue.add_nominated_pod(qpi.pod, "")
    sched.events.pod_event(pod, "Warning", "FailedScheduling", message)
    update_pod_status(sched, pod, "Unschedulable" if rejected else "SchedulerError", message, nominated_node)


def _log_failure(pod: Pod, error: BaseException, message: str) -> None:
    """kube-scheduler's line for a failed attempt: waiting for room, or an error to retry after."""
    if isinstance(error, NoNodesAvailable):
        if v := logger.v(2):
            v.info("Unable to schedule pod; no nodes are registered to the cluster; waiting", "pod", kobj(pod))
    elif isinstance(error, FitError):
        if v := logger.v(2):
            v.info("Unable to schedule pod; no fit; waiting", "pod", kobj(pod), "err", message)
    else:
        logger.error(error, "Error scheduling pod; retrying", "pod", kobj(pod))


def update_pod_status(sched: SchedulerParts, pod: Pod, reason: str, message: str, nominated_node: str | None) -> None:
    """Set PodScheduled=False (and the nomination, when it changes) on the pod's status."""
    if not sched.may_act():
        return
    condition = pod_scheduled_false(pod, reason, message, tracking=sched.cycle_rules.track_observed_generation)
    update_pod(sched.cluster, pod, sched.current_pod(pod), condition, nominated_node)


# -- the binding cycle --------------------------------------------------------------------------------
def _run_binding(sched: SchedulerParts, cycle: SchedulingCycle) -> None:
    """WaitOnPermit (asynchronously), then PreBind, Bind and PostBind."""
    waiting = cycle.fwk.waiting_pods.get(cycle.assumed.uid)
    if waiting is None:
        _bind_after_permit(sched, cycle, None)
        return

    def resume(status: Status | None) -> None:
        cycle.fwk.waiting_pods.remove(cycle.assumed.uid)
        sched.submit(lambda: _bind_after_permit(sched, cycle, status))

    waiting.on_done(resume)


def _bind_after_permit(sched: SchedulerParts, cycle: SchedulingCycle, permit: Status | None) -> None:
    host, assumed = cycle.host, cycle.assumed
    if permit is not None:
        if permit.is_rejected():
            diag = Diagnosis(NodeToStatus({host: permit}), {permit.plugin})
            _binding_failed(sched, cycle, Status(permit.code), FitError(assumed, 1, diag))
        else:
            _binding_failed(sched, cycle, permit, permit.as_error())
        return
    # Permit allowed the pod: for the queue its attempt is over, events from now on cannot concern it.
    sched.queue.done(assumed.uid)
    if not sched.may_act():
        _abandon_binding(sched, cycle)
        return

    inline = True

    def after_pre_bind(status: Status | None) -> None:
        if not inline:
            # PreBind waited (claims being bound) and was resolved from an event or a timer: the
            # rest of the binding cycle runs as a task of its own.
            sched.waiting_in_pre_bind.discard(assumed.uid)
            sched.submit(lambda: _after_pre_bind(sched, cycle, status))
            return
        _after_pre_bind(sched, cycle, status)

    sched.waiting_in_pre_bind.add(assumed.uid)
    cycle.fwk.run_pre_bind_plugins(cycle.state, assumed, host, after_pre_bind)
    inline = False


def _after_pre_bind(sched: SchedulerParts, cycle: SchedulingCycle, status: Status | None) -> None:
    sched.waiting_in_pre_bind.discard(cycle.assumed.uid)
    if status is not None:
        _bind_failed(sched, cycle, status)
        return
    _bind(sched, cycle)


def _bind(sched: SchedulerParts, cycle: SchedulingCycle) -> None:
    """Bind and PostBind, after PreBind succeeded."""
    host, assumed = cycle.host, cycle.assumed
    if not sched.may_act():
        _abandon_binding(sched, cycle)
        return
    status = _run_bind(sched, cycle)
    sched.cache.finish_binding(assumed)
    if status is not None and status.code is not Code.SUCCESS:
        if v := logger.v(1):
            v.info("Failed to bind pod", "pod", kobj(assumed))
        _bind_failed(sched, cycle, status)
        return
    sched.events.pod_event(assumed, "Normal", "Scheduled", f"Successfully assigned {assumed.key} to {host}")
    if v := logger.v(2):
        v.info(
            "Successfully bound pod to node",
            "pod",
            kobj(assumed),
            "node",
            host,
            "evaluatedNodes",
            cycle.evaluated_nodes,
            "feasibleNodes",
            cycle.feasible_nodes,
        )
    cycle.observer.scheduled(cycle, host)
    cycle.fwk.run_post_bind_plugins(cycle.state, assumed, host)
    sched.queue.done(assumed.uid)
    _activate_pods(sched, cycle.state)


def _activate_pods(sched: SchedulerParts, state: CycleState) -> None:
    """Move the pods plugins asked for (PodsToActivate) into activeQ."""
    pods = state.get(PODS_TO_ACTIVATE_KEY)
    if pods is not None and pods.map:
        sched.queue.activate(pods.take())


def _run_bind(sched: SchedulerParts, cycle: SchedulingCycle) -> Status | None:
    """An interested binding extender of the pod's profile (whatever a reload did since) binds it; else Bind plugins."""
    host, assumed, extenders = cycle.host, cycle.assumed, cycle.fwk.extenders
    if extenders:
        verdicts = cycle.observer.extender_verdicts(cycle)
        bound, status = extenders_binding(extenders, assumed, host, verdicts)
        if bound:
            if status is None and sched.bind_for_extenders:
                status = _bind_on_behalf_of_extender(sched, assumed, host)
            return status
    return cycle.fwk.run_bind_plugins(cycle.state, assumed, host)


def _bind_on_behalf_of_extender(sched: SchedulerParts, pod: Pod, host: str) -> Status | None:
    """Record the Binding a binding extender agreed to (it cannot reach an embedded cluster itself)."""
    try:
        sched.cluster.bind(pod.namespace, pod.name, host, uid=pod.uid or None)
    except ApiError as err:
        return Status.from_error(err)
    return None


def _bind_failed(sched: SchedulerParts, cycle: SchedulingCycle, status: Status) -> None:
    """PreBind or Bind failed: the attempt notes which plugin said what, then the binding is undone."""
    cycle.observer.failed_at(cycle, "bind", status.plugin, status.message)
    _binding_failed(sched, cycle, status, status.as_error())


def _abandon_binding(sched: SchedulerParts, cycle: SchedulingCycle) -> None:
    """The gate closed (the Lease is lost): undo the assumption and requeue the pod without a word to
    the cluster, since a replica that no longer leads must not write; the next leader schedules it."""
    host, assumed, qpi = cycle.host, cycle.assumed, cycle.qpi
    log.warning("not binding pod %s to %s: this scheduler no longer leads", assumed.key, host)
    cycle.fwk.run_reserve_plugins_unreserve(cycle.state, assumed, host)
    try:
        sched.cache.forget_pod(assumed)
    except Exception:
        log.exception("forgetting pod %s failed", assumed.key)
    qpi.unschedulable_plugins = set()
    qpi.pending_plugins = set()
    current = sched.current_pod(qpi.pod)
    if current is not None and not current.node_name:
        qpi.pod = current
        sched.queue.add_unschedulable_if_not_present(qpi, sched.queue.scheduling_cycle)
    else:
        sched.queue.done(qpi.pod.uid)


def _binding_failed(sched: SchedulerParts, cycle: SchedulingCycle, status: Status, error: BaseException | None) -> None:
    host, assumed = cycle.host, cycle.assumed
    cycle.fwk.run_reserve_plugins_unreserve(cycle.state, assumed, host)
    try:
        sched.cache.forget_pod(assumed)
    except CacheError as err:
        # The pod's binding was confirmed by the cluster meanwhile (the server bound it, the answer was
        # lost): nothing to forget, as kube-scheduler logs it.
        logger.error(err, "scheduler cache ForgetPod failed")
        handle_scheduling_failure(sched, cycle, status, None, error)
        return
    if status.is_rejected():
        # The freed room may help others, but not the rejected pod itself: move them only once
        # it is back in the queue.
        handle_scheduling_failure(sched, cycle, status, None, error)
        _on_assumed_pod_forgotten(sched, assumed, exclude_self=True)
        return
    _on_assumed_pod_forgotten(sched, assumed, exclude_self=False)
    handle_scheduling_failure(sched, cycle, status, None, error)


def _on_assumed_pod_forgotten(sched: SchedulerParts, pod: Pod, *, exclude_self: bool) -> None:
    """The room an assumed pod held is free again: pods waiting for it may fit now."""
    precheck = (lambda other: other.uid != pod.uid) if exclude_self else None
    sched.queue.move_all_to_active_or_backoff_queue(qevents.AssignedPodDelete, pod, None, precheck)
