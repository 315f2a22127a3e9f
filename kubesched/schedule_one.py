"""One pod through the scheduler: the scheduling cycle, the binding cycle and failure handling.

The scheduling cycle runs alone (one pod at a time against a snapshot): PreFilter, Filter over a
rotating window of nodes, PostFilter (preemption) when nothing fits, PreScore / Score, host
selection, then assume + Reserve + Permit. The binding cycle (WaitOnPermit, PreBind, Bind, PostBind)
is handed to the scheduler's executor so the next scheduling cycle can start before it ends.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cache.snapshot import NodeInfoList
from kubesched.extender import EXTENDER_NAME, ExtenderError, extenders_binding, find_nodes_that_pass_extenders
from kubesched.extender import prioritize as extender_prioritize
from kubesched.framework.cycle_state import PODS_TO_ACTIVATE_KEY, CycleState, PodsToActivate
from kubesched.framework.diagnosis import Diagnosis, FitError
from kubesched.framework.interfaces import PreFilterResult
from kubesched.framework.preemption import EXTENDER_VERDICTS_KEY
from kubesched.framework.runtime import FilterOutcome, Framework, ScoreOutcome
from kubesched.framework.status import Code, Status
from kubesched.recording import ATTEMPT_KEY, Attempt, NullAttempt, attempt_of
from kubesched.recording.trace import ERROR, UNSCHEDULABLE

if TYPE_CHECKING:
    from kubesched.queue.queued_pod_info import QueuedPodInfo
    from kubesched.scheduler import Scheduler

log = logging.getLogger(__name__)

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
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


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes are enough: all of a small cluster, an adaptive share of a big one."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)


# -- the scheduling cycle -------------------------------------------------------------------------------
def schedule_one(sched: Scheduler, qpi: QueuedPodInfo) -> None:
    """Run one scheduling attempt for a popped pod and, on success, start its binding cycle."""
    pod = qpi.pod
    fwk = sched.framework_for(pod)
    if fwk is None or sched.skip_pod_schedule(pod):
        sched.queue.done(pod.uid)
        return
    state = CycleState()
    state.write(PODS_TO_ACTIVATE_KEY, PodsToActivate())
    state.plugin_timer = sched.plugin_timer(fwk)
    attempt = sched.begin_attempt(qpi, fwk.profile_name)
    if attempt.enabled:
        state.write(ATTEMPT_KEY, attempt)
    try:
        result, assumed = scheduling_cycle(sched, fwk, state, qpi)
    except SchedulingFailure as failure:
        handle_scheduling_failure(sched, fwk, state, qpi, failure.status, failure.nominated_node, failure.error)
        return
    _activate_pods(sched, state)
    sched.submit(lambda: _run_binding(sched, fwk, state, result, qpi, assumed))


def scheduling_cycle(sched: Scheduler, fwk: Framework, state: CycleState,
                     qpi: QueuedPodInfo) -> tuple[ScheduleResult, Pod]:
    pod = qpi.pod
    attempt = attempt_of(state)
    try:
        result = schedule_pod(sched, fwk, state, pod)
    except FitError as fit:
        # A replica whose gate closed mid-cycle (Lease lost) must not preempt: victims are deletions.
        if not fwk.has_post_filter_plugins() or not sched.may_act():
            raise SchedulingFailure(Status(Code.UNSCHEDULABLE), "", fit) from None
        post_result, status = fwk.run_post_filter_plugins(state, pod, fit.diagnosis.node_status)
        sched.metrics_post_filter(fwk, state.get(VICTIMS_KEY))
        fit.diagnosis.post_filter_msg = status.message
        nominated = "" if post_result is None else post_result.nominated_node_name
        mode_override = post_result is not None and post_result.mode == "override"
        attempt.post_filtered(status.plugin or "", status.message or "success", state.get(VICTIMS_KEY), nominated)
        ext_verdicts = state.get(EXTENDER_VERDICTS_KEY)
        verdicts = attempt.extender_verdicts() if ext_verdicts else None
        if verdicts is not None:
            verdicts.update(ext_verdicts)
        # An overriding result sets the nomination (or clears it when it names no node).
        raise SchedulingFailure(Status(Code.UNSCHEDULABLE), (nominated or None) if mode_override else "",
                                fit) from None
    except _CycleError as err:
        raise SchedulingFailure(err.status, None, err.error) from None

    host = result.suggested_host
    assumed = sched.assume(pod, host)
    reserve = fwk.run_reserve_plugins_reserve(state, assumed, host)
    if reserve is not None:
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        sched.cache.forget_pod(assumed)
        attempt.failed_at("reserve", reserve.plugin, reserve.message)
        _raise_single_node(pod, host, reserve)
    permit = fwk.run_permit_plugins(state, assumed, host)
    if permit is not None and permit.code is not Code.WAIT:
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        sched.cache.forget_pod(assumed)
        attempt.failed_at("permit", permit.plugin, permit.message)
        _raise_single_node(pod, host, permit)
    return result, assumed


def _raise_single_node(pod: Pod, host: str, status: Status) -> None:
    if status.is_rejected():
        diag = Diagnosis({host: status}, set(), set())
        diag.add_plugin_status(status)
        raise SchedulingFailure(Status(status.code), None, FitError(pod, 1, diag))
    raise SchedulingFailure(status, None, status.as_error())


class _CycleError(Exception):
    def __init__(self, status: Status, error: BaseException | None = None) -> None:
        super().__init__(status.message)
        self.status = status
        self.error = error


def schedule_pod(sched: Scheduler, fwk: Framework, state: CycleState, pod: Pod) -> ScheduleResult:
    snapshot = sched.update_snapshot()
    if len(snapshot) == 0:
        raise _CycleError(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_NODES_AVAILABLE,)),
                          RuntimeError(NO_NODES_AVAILABLE))
    feasible, diagnosis, evaluated = find_nodes_that_fit_pod(sched, fwk, state, pod)
    if len(feasible) == 0:
        raise FitError(pod, len(snapshot), diagnosis)
    attempt = attempt_of(state)
    attempt.feasible(snapshot.names, feasible)
    attempt.evaluated(evaluated)
    if len(feasible) == 1:
        return ScheduleResult(snapshot.node_infos[int(feasible[0])].name, evaluated, 1)
    nodes = NodeInfoList(snapshot, feasible)
    verdicts = attempt.extender_verdicts() if fwk.extenders else None
    scores = prioritize_nodes(fwk, state, pod, nodes, record_raw=attempt.raw_scores, verdicts=verdicts)
    host, tie_rows = select_host(sched, nodes, scores.total)
    attempt.scored(feasible, scores.plugin_scores, scores.total, scores.raw_scores, tie_rows)
    if attempt.raw_scores:
        # With the raw scores, the weights: a trace reader (explain) shows raw, normalised and weighted.
        attempt.weighted({p: fwk.score_weights.get(p, 1) for p in scores.plugin_scores})
    return ScheduleResult(host, evaluated, len(feasible))


def find_nodes_that_fit_pod(sched: Scheduler, fwk: Framework, state: CycleState,
                            pod: Pod) -> tuple[np.ndarray, Diagnosis, int]:
    """PreFilter, then Filter over the candidate nodes (the nominated node first, if any)."""
    snapshot = sched.snapshot
    attempt = attempt_of(state)
    diagnosis = Diagnosis({}, set(), set())
    pre_result, status = fwk.run_pre_filter_plugins(state, pod)
    if status is not None:
        if not status.is_rejected():
            raise _CycleError(status, status.as_error())
        diagnosis.node_status = {info.name: status for info in snapshot.node_infos}
        diagnosis.pre_filter_msg = status.message
        diagnosis.add_plugin_status(status)
        attempt.rejected_all(snapshot.names, status)
        return np.zeros(0, dtype=np.int64), diagnosis, len(snapshot)

    if pod.nominated_node_name:
        row = snapshot.index.get(pod.nominated_node_name)
        if row is not None:
            outcome = fwk.find_nodes_that_pass_filters(state, pod, snapshot, np.array([row]), 1)
            if outcome.error is not None:
                raise _CycleError(outcome.error, outcome.error.as_error())
            if len(outcome.feasible):
                _record_filter(snapshot, outcome, diagnosis)
                feasible = _run_extender_filters(sched, pod, snapshot, outcome.feasible, diagnosis, attempt)
                if len(feasible):
                    return feasible, diagnosis, 1 + len(diagnosis.node_status)
            # The nominated node no longer fits: its rejection is part of the diagnosis.
            for name, st in outcome.node_status_map(snapshot).items():
                diagnosis.node_status[name] = st
            attempt.rejected(snapshot.names, outcome.rejected_rows, outcome.rejected_statuses)

    rows = _candidate_rows(snapshot, pre_result)
    if attempt.enabled and pre_result is not None and not pre_result.all_nodes():
        attempt.skipped_outside(snapshot.names, rows)
    n = len(rows)
    if n == 0:
        return np.zeros(0, dtype=np.int64), diagnosis, 0
    num_to_find = num_feasible_nodes_to_find(fwk.percentage_of_nodes_to_score, n)
    if not fwk.has_score_plugins():
        num_to_find = 1
    start = sched.next_start_node_index % n
    ordered = np.concatenate([rows[start:], rows[:start]]) if start else rows
    if not fwk.has_filter_plugins():
        feasible = ordered[:num_to_find]
        processed = len(feasible)
        sched.next_start_node_index = (sched.next_start_node_index + processed) % len(snapshot)
        return _run_extender_filters(sched, pod, snapshot, feasible, diagnosis, attempt), diagnosis, processed
    outcome = fwk.find_nodes_that_pass_filters(state, pod, snapshot, ordered, num_to_find)
    processed = outcome.processed
    sched.next_start_node_index = (sched.next_start_node_index + processed) % len(snapshot)
    if outcome.error is not None:
        raise _CycleError(outcome.error, outcome.error.as_error())
    _record_filter(snapshot, outcome, diagnosis)
    attempt.rejected(snapshot.names, outcome.rejected_rows, outcome.rejected_statuses)
    attempt.evaluated(processed)
    return _run_extender_filters(sched, pod, snapshot, outcome.feasible, diagnosis, attempt), diagnosis, processed


def _run_extender_filters(sched: Scheduler, pod: Pod, snapshot: Any, feasible: np.ndarray, diagnosis: Diagnosis,
                          attempt: Attempt | NullAttempt) -> np.ndarray:
    """The feasible rows the extenders keep; the nodes they drop join the diagnosis (and the attempt)."""
    if not sched.extenders or len(feasible) == 0:
        return feasible
    infos = [snapshot.node_infos[i] for i in feasible.tolist()]
    verdicts = attempt.extender_verdicts()
    before = dict(diagnosis.node_status)
    try:
        kept = find_nodes_that_pass_extenders(sched.extenders, pod, infos, diagnosis.node_status, verdicts)
    except ExtenderError as err:
        raise _CycleError(Status(Code.ERROR, (str(err),), error=err), err) from None
    if len(kept) != len(infos):
        diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
    if attempt.enabled:
        dropped = [(name, status) for name, status in diagnosis.node_status.items() if before.get(name) is not status]
        if dropped:
            rows = np.asarray([snapshot.index[name] for name, _ in dropped], dtype=np.int64)
            attempt.rejected(snapshot.names, rows, [status for _, status in dropped])
    return np.asarray([snapshot.index[n.name] for n in kept], dtype=np.int64)


def _candidate_rows(snapshot: Any, pre_result: PreFilterResult | None) -> np.ndarray:
    if pre_result is None or pre_result.all_nodes():
        return np.arange(len(snapshot), dtype=np.int64)
    assert pre_result.node_names is not None
    rows = sorted(snapshot.index[name] for name in pre_result.node_names if name in snapshot.index)
    return np.asarray(rows, dtype=np.int64)


def _record_filter(snapshot: Any, outcome: FilterOutcome, diagnosis: Diagnosis) -> None:
    """Add the Filter rejections of ``outcome`` to the diagnosis."""
    statuses = outcome.rejected_statuses
    diagnosis.node_status.update(zip(snapshot.names[outcome.rejected_rows].tolist(), statuses, strict=True))
    # Batch filters share one Status object among all the nodes they reject for the same reason.
    for status in {id(s): s for s in statuses}.values():
        diagnosis.add_plugin_status(status)


def prioritize_nodes(fwk: Framework, state: CycleState, pod: Pod, nodes: NodeInfoList,
                     *, record_raw: bool = False, verdicts: dict[str, Any] | None = None) -> ScoreOutcome:
    extenders = fwk.extenders
    if not fwk.has_score_plugins() and not extenders:
        return ScoreOutcome(total=np.ones(len(nodes), dtype=np.int64))
    status = fwk.run_pre_score_plugins(state, pod, nodes)
    if status is not None:
        raise _CycleError(status, status.as_error())
    scores = fwk.run_score_plugins(state, pod, nodes, record_raw=record_raw)
    if isinstance(scores, Status):
        raise _CycleError(scores, scores.as_error())
    if extenders:
        for name, values in extender_prioritize(extenders, pod, list(nodes), verdicts).items():
            weighted = np.asarray(values, dtype=np.int64)
            scores.plugin_scores[name] = weighted
            scores.total += weighted
    return scores


def select_host(sched: Scheduler, nodes: NodeInfoList, totals: np.ndarray) -> tuple[str, np.ndarray]:
    """The best-scoring node and the snapshot rows of every node sharing its score; ties broken at
    random (or by name when the scheduler is told to).

    Only the chosen name is looked up in the random case: with uniform nodes every node may tie.
    """
    tied = np.flatnonzero(totals == totals.max())
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
def handle_scheduling_failure(sched: Scheduler, fwk: Framework, state: CycleState, qpi: QueuedPodInfo,
                              status: Status, nominated_node: str | None, error: BaseException | None) -> None:
    """Requeue the pod, keep or change its nomination, and tell the cluster why it is pending."""
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
    attempt_of(state).failed(UNSCHEDULABLE if rejected else ERROR, message, nominated_node)

    current = sched.current_pod(pod)
    if current is not None and not current.node_name:
        qpi.pod = current
        sched.queue.add_unschedulable_if_not_present(qpi, sched.queue.scheduling_cycle)
    else:
        sched.queue.done(pod.uid)
    if nominated_node is None:
        sched.queue.delete_nominated_pod_if_exists(pod)
    elif nominated_node:
        sched.queue.add_nominated_pod(qpi.pod, nominated_node)
    elif qpi.pod.nominated_node_name:
        sched.queue.add_nominated_pod(qpi.pod, "")
    sched.record_event(pod, "Warning", "FailedScheduling", message)
    sched.patch_unschedulable(pod, "Unschedulable" if rejected else "SchedulerError", message, nominated_node)


# -- the binding cycle --------------------------------------------------------------------------------
def _run_binding(sched: Scheduler, fwk: Framework, state: CycleState, result: ScheduleResult,
                 qpi: QueuedPodInfo, assumed: Pod) -> None:
    """WaitOnPermit (asynchronously), then PreBind, Bind and PostBind."""
    waiting = fwk.waiting_pods.get(assumed.uid)
    if waiting is None:
        _bind_after_permit(sched, fwk, state, result, qpi, assumed, None)
        return

    def resume(status: Status | None) -> None:
        fwk.waiting_pods.remove(assumed.uid)
        sched.submit(lambda: _bind_after_permit(sched, fwk, state, result, qpi, assumed, status))

    waiting.on_done(resume)


def _bind_after_permit(sched: Scheduler, fwk: Framework, state: CycleState, result: ScheduleResult,
                       qpi: QueuedPodInfo, assumed: Pod, permit: Status | None) -> None:
    host = result.suggested_host
    if permit is not None:
        if permit.is_rejected():
            diag = Diagnosis({host: permit}, {permit.plugin}, set())
            _binding_failed(sched, fwk, state, result, qpi, assumed, Status(permit.code), FitError(assumed, 1, diag))
        else:
            _binding_failed(sched, fwk, state, result, qpi, assumed, permit, permit.as_error())
        return
    if not sched.may_act():
        _abandon_binding(sched, fwk, state, qpi, assumed, host)
        return

    inline = True

    def after_pre_bind(status: Status | None) -> None:
        if not inline:
            # PreBind waited (claims being bound) and was resolved from an event or a timer: the
            # rest of the binding cycle runs as a task of its own.
            sched.waiting_in_pre_bind.discard(assumed.uid)
            sched.submit(lambda: _after_pre_bind(sched, fwk, state, result, qpi, assumed, status))
            return
        _after_pre_bind(sched, fwk, state, result, qpi, assumed, status)

    sched.waiting_in_pre_bind.add(assumed.uid)
    fwk.run_pre_bind_plugins(state, assumed, host, after_pre_bind)
    inline = False


def _after_pre_bind(sched: Scheduler, fwk: Framework, state: CycleState, result: ScheduleResult,
                    qpi: QueuedPodInfo, assumed: Pod, status: Status | None) -> None:
    sched.waiting_in_pre_bind.discard(assumed.uid)
    if status is not None:
        _bind_failed(sched, fwk, state, result, qpi, assumed, status)
        return
    _bind(sched, fwk, state, result, qpi, assumed)


def _bind(sched: Scheduler, fwk: Framework, state: CycleState, result: ScheduleResult,
          qpi: QueuedPodInfo, assumed: Pod) -> None:
    """Bind and PostBind, after PreBind succeeded."""
    host = result.suggested_host
    if not sched.may_act():
        _abandon_binding(sched, fwk, state, qpi, assumed, host)
        return
    status = _run_bind(sched, fwk, state, assumed, host)
    sched.cache.finish_binding(assumed)
    if status is not None and status.code is not Code.SUCCESS:
        _bind_failed(sched, fwk, state, result, qpi, assumed, status)
        return
    sched.record_event(assumed, "Normal", "Scheduled", f"Successfully assigned {assumed.key} to {host}")
    attempt_of(state).scheduled(host)
    sched.metrics_scheduled(fwk.profile_name, qpi)
    fwk.run_post_bind_plugins(state, assumed, host)
    sched.queue.done(assumed.uid)
    _activate_pods(sched, state)


def _activate_pods(sched: Scheduler, state: CycleState) -> None:
    """Move the pods plugins asked for (PodsToActivate) into activeQ."""
    pods = state.get(PODS_TO_ACTIVATE_KEY)
    if pods is not None and pods.map:
        sched.queue.activate(pods.take())


def _run_bind(sched: Scheduler, fwk: Framework, state: CycleState, assumed: Pod, host: str) -> Status | None:
    """An interested binding extender binds the pod; otherwise the Bind plugins do."""
    if sched.extenders:
        verdicts = attempt_of(state).extender_verdicts()
        bound, status = extenders_binding(sched.extenders, assumed, host, verdicts)
        if bound:
            if status is None and sched.bind_for_extenders:
                status = sched.bind_on_behalf_of_extender(assumed, host)
            return status
    return fwk.run_bind_plugins(state, assumed, host)


def _bind_failed(sched: Scheduler, fwk: Framework, state: CycleState, result: ScheduleResult,
                 qpi: QueuedPodInfo, assumed: Pod, status: Status) -> None:
    """PreBind or Bind failed: the attempt notes which plugin said what, then the binding is undone."""
    attempt_of(state).failed_at("bind", status.plugin, status.message)
    _binding_failed(sched, fwk, state, result, qpi, assumed, status, status.as_error())


def _abandon_binding(sched: Scheduler, fwk: Framework, state: CycleState, qpi: QueuedPodInfo,
                     assumed: Pod, host: str) -> None:
    """The gate closed (the Lease is lost): undo the assumption and requeue the pod without a word to
    the cluster, since a replica that no longer leads must not write; the next leader schedules it."""
    log.warning("not binding pod %s to %s: this scheduler no longer leads", assumed.key, host)
    fwk.run_reserve_plugins_unreserve(state, assumed, host)
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


def _binding_failed(sched: Scheduler, fwk: Framework, state: CycleState, result: ScheduleResult,
                    qpi: QueuedPodInfo, assumed: Pod, status: Status, error: BaseException | None) -> None:
    host = result.suggested_host
    fwk.run_reserve_plugins_unreserve(state, assumed, host)
    try:
        sched.cache.forget_pod(assumed)
    except Exception:
        log.exception("forgetting pod %s failed", assumed.key)
        handle_scheduling_failure(sched, fwk, state, qpi, status, None, error)
        return
    if status.is_rejected():
        # The freed room may help others, but not the rejected pod itself: move them only once
        # it is back in the queue.
        handle_scheduling_failure(sched, fwk, state, qpi, status, None, error)
        sched.on_assumed_pod_forgotten(assumed, exclude_self=True)
        return
    sched.on_assumed_pod_forgotten(assumed, exclude_self=False)
    handle_scheduling_failure(sched, fwk, state, qpi, status, None, error)
