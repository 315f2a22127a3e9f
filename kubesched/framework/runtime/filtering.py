"""The Filter extension point: one node at a time, and batches of snapshot rows.

A plugin with a batch form (``filter_nodes``) decides a whole batch in a few array operations; the
others are called node by node. A node that equal-or-higher-priority pods are nominated to is checked
twice, as kube-scheduler does: with those pods, and, when that passes, without them; a rejection with
them is the node's verdict. The walk filters every node without nominated pods first, then checks the
nominated nodes with them. For a node that passed without them, only the plugins whose verdict can
change with the pods on the node run again: those that declare they read only the node do not, and
when the rest declare :class:`~kubesched.framework.capabilities.FitChecks`, the check of every such
node in a batch is one vectorised call per plugin.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.capabilities import FitChecks
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import PodNominator
from kubesched.framework.interfaces import BatchFilterPlugin, BatchFilterResult, FilterPlugin, minus_ones
from kubesched.framework.nominated_sums import COUNT, NominatedSums, kept_for
from kubesched.framework.runtime.calls import PluginReturnError, call_status, shown
from kubesched.framework.status import Code, Status, status_label

log = logging.getLogger(__name__)


class FilteringFramework(Protocol):
    """What the Filter walk needs of a profile's framework (the runtime's Framework is one)."""

    @property
    def filter_plugins(self) -> Sequence[FilterPlugin]: ...

    @property
    def batch_filters(self) -> Mapping[str, BatchFilterPlugin]: ...

    @property
    def node_only_filters(self) -> frozenset[str]: ...

    @property
    def nominator(self) -> PodNominator: ...

    def arithmetic_filters(self, state: CycleState) -> list[tuple[FilterPlugin, FitChecks | None]] | None: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None: ...


#: Per node of a batch: -1 when every plugin passed it, else the index of its rejection's Status.
Verdicts = tuple[np.ndarray, list[Status]]


@dataclass(slots=True)
class FilterFailure:
    """A Filter plugin's error: its Error status and, when one node's check raised it, that node's
    index in the batch (the node gets the status as its verdict, as kube-scheduler records it)."""

    status: Status
    at: int | None = None


@dataclass(slots=True)
class FilterOutcome:
    """What the Filter pass found: feasible nodes (snapshot rows, in visiting order) and rejections."""

    feasible: np.ndarray
    rejected_rows: np.ndarray
    rejected_statuses: list[Status]
    processed: int
    error: Status | None = None

    def node_status_map(self, snapshot: Snapshot) -> dict[str, Status]:
        return dict(zip(snapshot.names[self.rejected_rows].tolist(), self.rejected_statuses, strict=True))

    @classmethod
    def failed(cls, processed: int, failure: FilterFailure, batch: np.ndarray) -> FilterOutcome:
        """The walk stopped at an error; the node whose check failed, if known, is its only verdict."""
        rows = np.zeros(0, np.int64) if failure.at is None else batch[failure.at : failure.at + 1]
        return cls(np.zeros(0, np.int64), rows, [failure.status] * len(rows), processed, error=failure.status)


# -- one node -------------------------------------------------------------------------------------
def run_filter_plugins(
    plugins: Sequence[FilterPlugin], state: CycleState, pod: Pod, node_info: NodeInfo
) -> Status | None:
    """The ``plugins`` not skipped in ``state`` on one node, stopping at the first that rejects it."""
    for plugin in plugins:
        if plugin.name in state.skip_filter_plugins:
            continue
        status = call_status(plugin.filter, state, pod, node_info)
        if status is not None and status.code is not Code.SUCCESS:
            if not status.is_rejected():
                status = Status(
                    Code.ERROR, (f'running "{plugin.name}" filter plugin: {status.message}',), error=status.error
                )
            status.plugin = plugin.name
            return status
    return None


def filter_with_nominated(
    fwk: FilteringFramework,
    state: CycleState,
    pod: Pod,
    node_info: NodeInfo,
    nominated: Sequence[Pod],
    *,
    passed_without: bool = False,
) -> Status | None:
    """The node as if the ``nominated`` pods were on it (the first half of kube-scheduler's check).

    ``passed_without``: every filter already passed the node without them, so the plugins whose
    verdict ignores the node's pods need not run again.
    """
    info_with = node_info.snapshot()
    state_with = state.clone()
    if passed_without:
        state_with.skip_filter_plugins |= fwk.node_only_filters
    for other in nominated:
        info_with.add_pod(other)
        status = fwk.run_pre_filter_extension_add_pod(state_with, pod, other, info_with)
        if status is not None:
            return status
    return run_filter_plugins(fwk.filter_plugins, state_with, pod, info_with)


def nominated_for(fwk: FilteringFramework, pod: Pod, node_name: str) -> list[Pod]:
    """Pods nominated to ``node_name`` that ``pod`` must leave room for (equal or higher priority)."""
    nominated = fwk.nominator.nominations().get(node_name)
    if not nominated:
        return []
    return [p for p in nominated if p.priority >= pod.priority and p.uid != pod.uid]


# -- a walk over snapshot rows --------------------------------------------------------------------
def find_nodes_that_pass_filters(
    fwk: FilteringFramework, state: CycleState, pod: Pod, snapshot: Snapshot, rows: np.ndarray, num_to_find: int
) -> FilterOutcome:
    """Visit ``rows`` in order until ``num_to_find`` feasible nodes are found (or all are visited).

    The result is what a sequential walk would give, which is one of the outcomes kube-scheduler's
    parallel walk can give.
    """
    plugins = [p for p in fwk.filter_plugins if p.name not in state.skip_filter_plugins]
    nominated = _NominatedRows(fwk, state, pod, snapshot, rows)
    feasible_parts: list[np.ndarray] = []
    rejected_rows: list[np.ndarray] = []
    rejected_statuses: list[Status] = []
    found = pos = 0
    chunk = max(num_to_find, 64)
    while pos < len(rows) and found < num_to_find:
        batch = rows[pos : pos + chunk]
        verdicts = filter_batch(plugins, fwk.batch_filters, state, pod, snapshot, batch)
        if isinstance(verdicts, FilterFailure):
            return FilterOutcome.failed(pos, verdicts, batch)
        verdict, statuses = verdicts
        error = nominated.recheck(batch, verdict, statuses)
        if error is not None:
            return FilterOutcome.failed(pos, error, batch)
        passed = (verdict < 0).nonzero()[0]
        need = num_to_find - found
        if len(passed) > need:
            cut = int(passed[need - 1]) + 1  # visit stops right after the last node needed
            batch, verdict, passed = batch[:cut], verdict[:cut], passed[:need]
        feasible_parts.append(batch[passed])
        if statuses:  # without a status, nothing in the batch was rejected
            failed = (verdict >= 0).nonzero()[0]
            rejected_rows.append(batch[failed])
            rejected_statuses.extend(map(statuses.__getitem__, verdict[failed].tolist()))
        found += len(passed)
        pos += len(batch)
        chunk = max(chunk * 2, 256)
    feasible, rejected = _joined(feasible_parts), _joined(rejected_rows)
    return FilterOutcome(feasible, rejected, rejected_statuses, len(feasible) + len(rejected))


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """The parts as one array (the only part itself: a walk usually ends within its first batch)."""
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


_NO_ROWS = np.zeros(0, dtype=np.int64)
_NO_ROWS.flags.writeable = False


class _NominatedRows:
    """The rows of a walk that pods are nominated to, and how to re-check them with those pods."""

    __slots__ = ("_array", "_fit_checks", "_fwk", "_pod", "_rows", "_snapshot", "_state", "_sums")

    def __init__(
        self, fwk: FilteringFramework, state: CycleState, pod: Pod, snapshot: Snapshot, walk: np.ndarray
    ) -> None:
        self._fwk, self._state, self._pod, self._snapshot = fwk, state, pod, snapshot
        self._sums: _Sums | None = None
        self._rows: dict[int, list[Pod]] = {}  # with kept sums, the pods are asked for through _pods_on
        nominations = fwk.nominator.nominations()
        self._fit_checks: list[tuple[str, FitChecks]] | None = None
        if not nominations:  # the common case: nothing to re-check
            self._array = _NO_ROWS
            return
        if (plan := fwk.arithmetic_filters(state)) is not None:
            self._fit_checks = [(plugin.name, checks) for plugin, checks in plan if checks is not None]
            if all(hasattr(checks, "filter_shifted") for _, checks in self._fit_checks):
                self._sums = _Sums(kept_for(fwk).at(pod.priority), nominations, snapshot, pod)
                self._array = walk[self._sums.count(walk) > 0]
                return
        rows: dict[int, list[Pod]] = {}
        index, priority, uid = snapshot.index, pod.priority, pod.uid
        if len(walk) < len(nominations):  # a short walk (the nominated node alone): look its nodes up
            named = (
                (row, nominations.get(name))
                for row, name in zip(walk.tolist(), snapshot.names[walk].tolist(), strict=True)
            )
            found = ((row, pods) for row, pods in named if pods)
        else:
            found = ((index.get(name), pods) for name, pods in nominations.items())
        for row, pods in found:
            if row is not None and (nominated := [p for p in pods if p.priority >= priority and p.uid != uid]):
                rows[row] = nominated
        self._rows = rows
        self._array = np.fromiter(rows, dtype=np.int64, count=len(rows))

    def recheck(self, batch: np.ndarray, verdict: np.ndarray, statuses: list[Status]) -> FilterFailure | None:
        """Nodes of ``batch`` with nominated pods, checked with those pods too (the first pass of
        run_filter_plugins_with_nominated_pods): a rejection there is the node's verdict, whatever the
        pass without them (``verdict``, ``statuses``) found, which stands only when that first pass
        passes. Verdicts are changed in place; an Error status stops the walk."""
        if not len(self._array):
            return None
        if self._sums is not None and self._fit_checks is not None:
            return self._recheck_shifted(batch, verdict, statuses)
        ks = np.isin(batch, self._array).nonzero()[0].tolist()
        if not ks:
            return None
        passed = [k for k in ks if verdict[k] < 0]
        with_pods = dict(zip(passed, self._passed_without(batch, passed), strict=True))
        infos = self._snapshot.node_infos
        for k in ks:
            if k in with_pods:
                status = with_pods[k]
            else:  # rejected without them: every filter runs again, in order, with them
                row = int(batch[k])
                status = filter_with_nominated(self._fwk, self._state, self._pod, infos[row], self._pods_on(row))
            if status is not None:
                if status.code is Code.ERROR:
                    return FilterFailure(status, k)
                statuses.append(status)
                verdict[k] = len(statuses) - 1
        return None

    def _recheck_shifted(self, batch: np.ndarray, verdict: np.ndarray, statuses: list[Status]) -> FilterFailure | None:
        """:meth:`recheck` with the nodes that passed without their nominated pods checked from the
        kept sums of those pods, all at once."""
        assert self._sums is not None and self._fit_checks is not None
        ks = np.isin(batch, self._array).nonzero()[0]
        rejected = ks[verdict[ks] >= 0].tolist()
        passed = ks[verdict[ks] < 0]
        if len(passed):
            found = _fit_shifted(self._fit_checks, self._snapshot, batch[passed], self._sums)
            hit = found.status_index >= 0
            verdict[passed[hit]] = found.status_index[hit] + len(statuses)
            statuses.extend(found.statuses)
        infos = self._snapshot.node_infos
        for k in rejected:  # rejected without them: every filter runs again, in order, with them
            row = int(batch[k])
            status = filter_with_nominated(self._fwk, self._state, self._pod, infos[row], self._pods_on(row))
            if status is not None:
                if status.code is Code.ERROR:
                    return FilterFailure(status, k)
                statuses.append(status)
                verdict[k] = len(statuses) - 1
        return None

    def _passed_without(self, batch: np.ndarray, ks: list[int]) -> Iterable[Status | None]:
        """The first pass on the nodes ``batch[ks]`` that passed every filter without their nominated
        pods (filters that read only the node pass them again): vectorised when the filters allow."""
        extras = [self._pods_on(int(batch[k])) for k in ks]
        if self._fit_checks is not None:
            return _fit_with_pods(self._fit_checks, self._snapshot, batch[ks], extras)
        infos = self._snapshot.node_infos
        return [
            filter_with_nominated(self._fwk, self._state, self._pod, infos[int(batch[k])], extra, passed_without=True)
            for k, extra in zip(ks, extras, strict=True)
        ]

    def _pods_on(self, row: int) -> list[Pod]:
        """The pods nominated to the row that the pod must leave room for."""
        if self._sums is None:
            return self._rows[row]
        pod = self._pod
        nominated = self._fwk.nominator.nominations().get(self._snapshot.node_infos[row].name, ())
        return [p for p in nominated if p.priority >= pod.priority and p.uid != pod.uid]


class _Sums:
    """The kept sums of the pods nominated to each row for one pod (see nominated_sums)."""

    __slots__ = ("_kept", "_nominations", "_pod", "_snapshot")

    def __init__(
        self, kept: NominatedSums, nominations: Mapping[str, tuple[Pod, ...]], snapshot: Snapshot, pod: Pod
    ) -> None:
        self._kept, self._nominations, self._snapshot, self._pod = kept, nominations, snapshot, pod

    def count(self, rows: np.ndarray) -> np.ndarray:
        return self.requested(rows, COUNT)

    def requested(self, rows: np.ndarray, name: str) -> np.ndarray:
        sums = self._kept.gather(self._nominations, self._snapshot, self._pod, rows, name)
        return np.zeros(len(rows), dtype=np.int64) if sums is None else sums


def _fit_shifted(
    fit_checks: Sequence[tuple[str, FitChecks]], snapshot: Snapshot, rows: np.ndarray, sums: _Sums
) -> BatchFilterResult:
    """:func:`_fit_with_pods` from the kept sums of the nominated pods, as one batch result."""
    index = minus_ones(len(rows), np.int64)
    statuses: list[Status] = []
    for name, checks in fit_checks:
        result = checks.filter_shifted(  # type: ignore[attr-defined]
            snapshot, rows, sums.count(rows), partial(sums.requested, rows)
        )
        first = (index < 0) & (result.status_index >= 0)  # the first rejection in profile order stands
        index[first] = result.status_index[first] + len(statuses)
        for status in result.statuses:
            status.plugin = name
        statuses.extend(result.statuses)
    return BatchFilterResult(index, statuses)


def _fit_with_pods(
    fit_checks: Sequence[tuple[str, FitChecks]], snapshot: Snapshot, rows: np.ndarray, extras: Sequence[Sequence[Pod]]
) -> list[Status | None]:
    """Per row, the first FitChecks rejection (in profile order) with the row's extra pods placed."""
    out: list[Status | None] = [None] * len(rows)
    for name, checks in fit_checks:
        for k, status in enumerate(checks.filter_with_pods(snapshot, rows, extras)):
            if status is not None and out[k] is None:
                status.plugin = name
                out[k] = status
    return out


# -- one batch ------------------------------------------------------------------------------------
def filter_batch(
    plugins: Sequence[FilterPlugin],
    batch_forms: Mapping[str, BatchFilterPlugin],
    state: CycleState,
    pod: Pod,
    snapshot: Snapshot,
    batch: np.ndarray,
) -> Verdicts | FilterFailure:
    """Per node of ``batch``: -1 when every plugin passed, else the index of the first rejection.

    ``batch_forms`` holds the plugins whose batch form is used. A plugin error is returned as is.
    """
    verdict = minus_ones(len(batch), np.int64)
    statuses: list[Status] = []
    alive: np.ndarray | None = None  # positions still passing; None until a plugin rejects one
    for plugin in plugins:
        if alive is None:
            rows = batch
        elif len(alive) == 0:
            break
        else:
            rows = batch[alive]
        batch_form = batch_forms.get(plugin.name)
        if batch_form is not None:
            result = _batch_verdicts(batch_form, state, pod, snapshot, rows)
        else:
            result = _node_verdicts(plugin, state, pod, snapshot, rows)
        if isinstance(result, FilterFailure):
            if result.at is not None and alive is not None:
                result.at = int(alive[result.at])
            return result
        # No status: nothing rejected (a verdict would have nothing to point at).
        failed = (result.status_index >= 0).nonzero()[0] if result.statuses else _NO_ROWS
        if len(failed):
            if batch_form is not None and (error := _checked_rejections(plugin.name, result.statuses)):
                return FilterFailure(error)
            if alive is None:
                alive = np.arange(len(batch))
            verdict[alive[failed]] = result.status_index[failed] + len(statuses)
            statuses.extend(result.statuses)
            alive = alive[result.status_index < 0]
    return verdict, statuses


def _batch_verdicts(
    plugin: BatchFilterPlugin, state: CycleState, pod: Pod, snapshot: Snapshot, rows: np.ndarray
) -> BatchFilterResult | FilterFailure:
    """One plugin's batch form over ``rows``, checked; an Error status when it fails."""
    started = time.perf_counter()
    try:
        result = plugin.filter_nodes(state, pod, snapshot, rows)
        if result is None:  # the plugin has no batch answer this cycle: node by node
            return _node_verdicts(plugin, state, pod, snapshot, rows)
        if type(result) is not BatchFilterResult or len(result.status_index) != len(rows):
            raise PluginReturnError(
                f"filter_nodes returned {shown(result)}, expected a BatchFilterResult for {len(rows)} nodes"
            )
    except Exception as exc:  # a plugin bug must not take the scheduler down
        log.warning("filter plugin %s failed", plugin.name, exc_info=True)
        return FilterFailure(Status(Code.ERROR, (f'running "{plugin.name}" filter plugin: {exc}',), error=exc))
    if state.plugin_timer is not None:
        state.plugin_timer.observe(
            plugin.filter_nodes, status_label(result.statuses[0] if result.statuses else None), started
        )
    return result


def _checked_rejections(name: str, statuses: list[Status]) -> Status | None:
    """A batch form's statuses named after the plugin; an Error status if one of them is no rejection."""
    for status in statuses:
        if status.code is Code.ERROR or not status.is_rejected():
            return Status(
                Code.ERROR, (f'running "{name}" filter plugin: {status.message}',), plugin=name, error=status.error
            )
        status.plugin = name
    return None


def _node_verdicts(
    plugin: FilterPlugin, state: CycleState, pod: Pod, snapshot: Snapshot, rows: np.ndarray
) -> BatchFilterResult | FilterFailure:
    """One plugin's per-node form over ``rows``, in order, stopping at an error (at that node)."""
    infos = snapshot.node_infos
    index = minus_ones(len(rows))
    statuses: list[Status] = []
    for k, row in enumerate(rows.tolist()):
        status = call_status(plugin.filter, state, pod, infos[row])
        if status is None or status.code is Code.SUCCESS:
            continue
        if not status.is_rejected():
            return FilterFailure(
                Status(
                    Code.ERROR,
                    (f'running "{plugin.name}" filter plugin: {status.message}',),
                    plugin=plugin.name,
                    error=status.error,
                ),
                k,
            )
        status.plugin = plugin.name
        statuses.append(status)
        index[k] = len(statuses) - 1
    return BatchFilterResult(index, statuses)
