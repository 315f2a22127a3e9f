"""Victim selection's first check, asked of every potential node at once.

Selecting victims on a node starts by asking whether the preemptor fits there with every lower-priority
pod gone (and the pods nominated there at equal or higher priority in place); a node where it does not,
or that hosts no lower-priority pod, is no candidate. On a crowded cluster most nodes fail that check,
and asking it node by node is most of what a dry run costs. When the Filter verdicts are arithmetic
(:meth:`Handle.arithmetic_filters`: node-only plugins and FitChecks), the check is a few array
operations over the snapshot's columns: :class:`VictimScreen` gives each node that fails it the status
the node-by-node selection would give it, in the same order of plugins, and leaves the others to it.

What the lower-priority pods of a node request is kept per row and per priority (a
:class:`~kubesched.cache.row_cache.RowValueCache`): one cycle changes few nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.cache.row_cache import RowValueCache
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.capabilities import FitChecks
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import BatchFilterResult, FilterPlugin
from kubesched.framework.nominated_sums import COUNT, NominatedSumsByPriority
from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle

#: Key of a row's lower-priority pod count in the cache (a resource name keys its requests).
_COUNT = COUNT


class VictimScreen:
    """Statuses of the nodes where victim selection fails at its first check (see the module)."""

    __slots__ = ("_lower", "_nominated")

    def __init__(self) -> None:
        self._lower = RowValueCache(capacity=8, min_rows=64)
        self._nominated = NominatedSumsByPriority()

    def statuses(
        self,
        handle: Handle,
        state: CycleState,
        pod: Pod,
        infos: Sequence[NodeInfo],
        plan: Sequence[tuple[FilterPlugin, FitChecks | None]],
        no_victims: Status,
    ) -> tuple[list[Status | None], dict[str, int]] | None:
        """Per node of ``infos`` (snapshot nodes): the status its victim selection ends with at the first
        check, or None when the check passes; and the nodes where it passes, with the generation they
        were seen at. ``no_victims`` is the status of a node without any lower-priority pod. None when
        a FitChecks of the plan cannot answer for many nodes at once or a node-only plugin fails with
        an error (the node-by-node path words errors)."""
        shifted = [getattr(checks, "shortages_shifted", None) for _, checks in plan]
        if any(checks is not None and ask is None for (_, checks), ask in zip(plan, shifted, strict=True)):
            return None  # (asked by attribute: isinstance on a runtime protocol costs more than the screen)
        snapshot = handle.snapshot
        rows = _rows_of(snapshot, infos)
        # Per node, its status's place in ``found`` (-1: None, the check passes).
        verdict, found = np.full(len(rows), -1, dtype=np.int64), [no_victims]
        lower_count = self._lower_sum(snapshot, rows, pod.priority, _COUNT)
        alive = (lower_count > 0).nonzero()[0]
        verdict[lower_count == 0] = 0
        shift = self._shift(handle, snapshot, pod)
        for (plugin, _), ask in zip(plan, shifted, strict=True):
            live = rows[alive]
            if ask is not None:
                result = ask(snapshot, live, shift(live, _COUNT), partial(shift, live))
            elif (result := _node_only_verdicts(handle, plugin, state, pod, snapshot, live)) is None:
                return None
            alive = _record(verdict, found, alive, result)
        passed = rows[alive]
        out: list[Status | None] = list(map([*found, None].__getitem__, verdict.tolist()))  # -1 picks None
        return out, dict(zip(snapshot.names[passed].tolist(), snapshot.row_generation[passed].tolist(), strict=True))

    def _shift(self, handle: Handle, snapshot: Snapshot, pod: Pod) -> Callable[[np.ndarray, str], np.ndarray]:
        """What the preemptor's first check changes on rows, by resource (``""``: the pod count): the
        lower-priority pods gone, the pods nominated there that it must leave room for added."""
        nominated = self._nominated.at(pod.priority)
        view = handle.nominator.nominations()

        def shift(rows: np.ndarray, name: str) -> np.ndarray:
            delta = -self._lower_sum(snapshot, rows, pod.priority, name)
            added = nominated.gather(view, snapshot, pod, rows, name)
            return delta if added is None else delta + added

        return shift

    def _lower_sum(self, snapshot: Snapshot, rows: np.ndarray, priority: int, name: str) -> np.ndarray:
        """Per row: how many pods below ``priority`` it hosts (``name`` empty), or what they request of
        resource ``name``."""
        infos = snapshot.node_infos

        def compute(changed: np.ndarray) -> np.ndarray:
            if name == _COUNT:
                values = (sum(1 for p in infos[r].pods if p.priority < priority) for r in changed.tolist())
            else:
                values = (
                    sum(p.requests.get(name, 0) for p in infos[r].pods if p.priority < priority)
                    for r in changed.tolist()
                )
            return np.fromiter(values, dtype=np.int64, count=len(changed))

        return self._lower.values(snapshot, (priority, name), rows, compute)


def _rows_of(snapshot: Snapshot, infos: Sequence[NodeInfo]) -> np.ndarray:
    """The snapshot rows of ``infos`` (snapshot nodes); most often every node, in row order."""
    if len(infos) == len(snapshot) and list(infos) == snapshot.node_infos:  # compared by identity first
        return np.arange(len(infos), dtype=np.int64)
    index = snapshot.index
    return np.fromiter((index[info.name] for info in infos), dtype=np.int64, count=len(infos))


def _record(verdict: np.ndarray, found: list[Status], alive: np.ndarray, result: BatchFilterResult) -> np.ndarray:
    """Give the rejected positions of ``alive`` their statuses (added to ``found``); the positions still
    alive."""
    index = result.status_index
    rejected = index >= 0
    verdict[alive[rejected]] = index[rejected] + len(found)
    found.extend(result.statuses)
    kept: np.ndarray = alive[~rejected]
    return kept


def _node_only_verdicts(
    handle: Handle, plugin: FilterPlugin, state: CycleState, pod: Pod, snapshot: Snapshot, rows: np.ndarray
) -> BatchFilterResult | None:
    """A node-only plugin's rejections on ``rows`` (its batch form when it has one), named after it; None
    when it fails with an error or answers something other than a rejection."""
    batch_form = getattr(handle, "batch_filters", {}).get(plugin.name)
    try:
        if batch_form is not None:
            result = batch_form.filter_nodes(state, pod, snapshot, rows)
            if type(result) is not BatchFilterResult or len(result.status_index) != len(rows):
                return None
        else:
            infos = snapshot.node_infos
            result = BatchFilterResult.from_node_statuses([plugin.filter(state, pod, infos[r]) for r in rows.tolist()])
    except Exception:  # the node-by-node path reports it
        return None
    for status in result.statuses:
        if status.code is Code.ERROR or not status.is_rejected():
            return None
        status.plugin = plugin.name
    return result
