"""Which nodes fit the pod: PreFilter, then Filter over the candidate nodes, then the extenders' filters.

The nominated node, when the pod has one, is tried first. Otherwise Filter walks the candidates (every
node, or those a PreFilterResult kept) from where the last cycle stopped, round the snapshot's node
order, and stops once it found enough feasible nodes (:func:`num_feasible_nodes_to_find`), as
kube-scheduler's findNodesThatFitPod does. What Filter rejected goes into the :class:`Diagnosis` when
it is read: the pod fits nowhere, or extenders filter after Filter.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched.cycle import CycleError, SchedulerParts, SchedulingCycle
from kubesched.extender import EXTENDER_NAME, ExtenderError, find_nodes_that_pass_extenders
from kubesched.framework.diagnosis import Diagnosis, NodeToStatus
from kubesched.framework.interfaces import PreFilterResult
from kubesched.framework.runtime import FilterOutcome
from kubesched.framework.status import Code, Status, unresolvable

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes are enough: all of a small cluster, an adaptive share of a big one."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)


def find_nodes_that_fit_pod(sched: SchedulerParts, cycle: SchedulingCycle) -> tuple[np.ndarray, Diagnosis, int]:
    """PreFilter, then Filter over the candidate nodes (the nominated node first, if any)."""
    pod, fwk, state, observer = cycle.pod, cycle.fwk, cycle.state, cycle.observer
    snapshot = sched.snapshot
    diagnosis = Diagnosis()
    pre_result, status, narrowing = fwk.run_pre_filter_plugins(state, pod)
    rules = sched.cycle_rules
    if rules.pre_filter_result_diagnosis:
        diagnosis.unschedulable_plugins.update(narrowing)
    if status is not None:
        if not status.is_rejected():
            raise CycleError(status, status.as_error())
        diagnosis.node_status = NodeToStatus({info.name: status for info in snapshot.node_infos}, absent=status)
        diagnosis.pre_filter_msg = status.message
        diagnosis.add_plugin_status(status)
        observer.rejected_all(cycle, snapshot.names, status)
        return np.zeros(0, dtype=np.int64), diagnosis, len(snapshot)

    if pod.nominated_node_name:
        found = _evaluate_nominated_node(sched, cycle, diagnosis)
        if found is not None:
            return found, diagnosis, 1 + len(diagnosis.node_status)

    rows = None if pre_result is None or pre_result.all_nodes() else _candidate_rows(snapshot, pre_result)
    if rows is not None:
        if observer.detailed:
            observer.skipped_outside(cycle, snapshot.names, rows)
        if rules.pre_filter_result_diagnosis:
            diagnosis.node_status.absent = unresolvable(f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}]")
    n = len(rows) if rows is not None else len(snapshot)
    if n == 0:
        return np.zeros(0, dtype=np.int64), diagnosis, 0
    num_to_find = num_feasible_nodes_to_find(fwk.percentage_of_nodes_to_score, n)
    if not fwk.has_score_plugins():
        num_to_find = 1
    start = sched.next_start_node_index % n
    if rows is None:  # every node, from the start index round: a view, nothing copied
        ordered = snapshot.rotated_rows(start)
    else:
        ordered = np.concatenate([rows[start:], rows[:start]]) if start else rows
    if not fwk.has_filter_plugins():
        feasible = ordered[:num_to_find]
        processed = len(feasible)
        sched.next_start_node_index = (sched.next_start_node_index + processed) % len(snapshot)
        return _run_extender_filters(sched, cycle, feasible, diagnosis), diagnosis, processed
    outcome = fwk.find_nodes_that_pass_filters(state, pod, snapshot, ordered, num_to_find)
    processed = outcome.processed
    sched.next_start_node_index = (sched.next_start_node_index + processed) % len(snapshot)
    observer.rejected(cycle, snapshot.names, outcome.rejected_rows, outcome.rejected_statuses)  # an Error: its node
    observer.evaluated(cycle, processed if outcome.error is None else len(outcome.rejected_rows))
    if outcome.error is not None:
        raise CycleError(outcome.error, outcome.error.as_error())
    if not len(outcome.feasible) or sched.extenders:
        # The diagnosis is read only when the pod fits nowhere; extenders add to it after Filter.
        _record_filter(snapshot, outcome, diagnosis)
    return _run_extender_filters(sched, cycle, outcome.feasible, diagnosis), diagnosis, processed


def _evaluate_nominated_node(sched: SchedulerParts, cycle: SchedulingCycle, diagnosis: Diagnosis) -> np.ndarray | None:
    """The nominated node's row when it still passes every filter; None to search every node."""
    snapshot = sched.snapshot
    row = snapshot.index.get(cycle.pod.nominated_node_name or "")
    if row is None:
        return None
    outcome = cycle.fwk.find_nodes_that_pass_filters(cycle.state, cycle.pod, snapshot, np.array([row]), 1)
    if outcome.error is not None:
        cycle.observer.rejected(cycle, snapshot.names, outcome.rejected_rows, outcome.rejected_statuses)
        raise CycleError(outcome.error, outcome.error.as_error())
    if len(outcome.feasible):
        _record_filter(snapshot, outcome, diagnosis)
        feasible = _run_extender_filters(sched, cycle, outcome.feasible, diagnosis)
        if len(feasible):
            return feasible
    # The nominated node no longer fits: its rejection is part of the diagnosis.
    for name, st in outcome.node_status_map(snapshot).items():
        diagnosis.node_status[name] = st
    cycle.observer.rejected(cycle, snapshot.names, outcome.rejected_rows, outcome.rejected_statuses)
    return None


def _run_extender_filters(
    sched: SchedulerParts, cycle: SchedulingCycle, feasible: np.ndarray, diagnosis: Diagnosis
) -> np.ndarray:
    """The feasible rows the extenders keep; the nodes they drop join the diagnosis (and the attempt)."""
    if not sched.extenders or len(feasible) == 0:
        return feasible
    snapshot, observer = sched.snapshot, cycle.observer
    infos = [snapshot.node_infos[i] for i in feasible.tolist()]
    verdicts = observer.extender_verdicts(cycle)
    before = dict(diagnosis.node_status)
    try:
        kept = find_nodes_that_pass_extenders(sched.extenders, cycle.pod, infos, diagnosis.node_status, verdicts)
    except ExtenderError as err:
        raise CycleError(Status(Code.ERROR, (str(err),), error=err), err) from None
    if len(kept) != len(infos):
        diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
    if observer.detailed:
        dropped = [(name, status) for name, status in diagnosis.node_status.items() if before.get(name) is not status]
        if dropped:
            rows = np.asarray([snapshot.index[name] for name, _ in dropped], dtype=np.int64)
            observer.rejected(cycle, snapshot.names, rows, [status for _, status in dropped])
    return np.asarray([snapshot.index[n.name] for n in kept], dtype=np.int64)


def _candidate_rows(snapshot: Any, pre_result: PreFilterResult) -> np.ndarray:
    """The snapshot rows of the nodes a narrowing PreFilterResult keeps, in row order."""
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
