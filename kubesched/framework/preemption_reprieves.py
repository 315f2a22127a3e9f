"""The victims the reprieves of earlier dry runs left on each node, for the next preemptor alike.

Selecting victims on a node ends by putting its lower-priority pods back one by one, most important
first, keeping each that still lets the preemptor fit. When the verdicts are arithmetic, what that
leaves depends on the node's pods, the pods nominated there, the preemptor's priority and the checks
its Filter asks (their shape), nothing else: preemptors alike, one after another, would work the same
answer out again on every node that did not change in between. The order of the victims does not
depend on the clock either, as every pod without a start time counts as started after every pod with
one. PodDisruptionBudgets are left out: their status moves with every eviction.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence

from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.framework.capabilities import FitChecks, ShiftedFitChecks
from kubesched.framework.interfaces import FilterPlugin

#: What one node's reprieves left: its victims (in preemption order) and how many violate a budget.
Reprieved = tuple[list[Pod], int]


def checks_shapes(plan: Sequence[tuple[FilterPlugin, FitChecks | None]]) -> tuple[Hashable, ...] | None:
    """The shapes of the plan's FitChecks, in order; None when one of them does not tell its shape."""
    shapes: list[Hashable] = []
    for _, checks in plan:
        if checks is not None:
            if not isinstance(checks, ShiftedFitChecks):
                return None
            shapes.append(checks.shape)
    return tuple(shapes)


class ReprieveCache:
    """Per node, the last reprieves' outcome and what decided it (see the module)."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        #: node name -> (key, the nominations there, the outcome)
        self._entries: dict[str, tuple[Hashable, tuple[Pod, ...], Reprieved]] = {}

    def outcome(
        self,
        pod: Pod,
        node_info: NodeInfo,
        nominated: tuple[Pod, ...],
        shapes: tuple[Hashable, ...],
        compute: Callable[[], Reprieved],
    ) -> Reprieved:
        """The outcome kept for the node when nothing that decides it changed since, else ``compute()``'s.
        ``nominated`` is the nominator's tuple of the pods nominated to the node (compared by identity)."""
        kept = self.kept(pod, node_info, nominated, shapes)
        if kept is not None:
            return kept
        victims, violating = compute()
        self._entries[node_info.name] = (_key(pod, node_info, nominated, shapes), nominated, (list(victims), violating))
        return victims, violating

    def kept(
        self, pod: Pod, node_info: NodeInfo, nominated: tuple[Pod, ...], shapes: tuple[Hashable, ...]
    ) -> Reprieved | None:
        """The outcome kept for the node (a copy), or None when something that decides it changed."""
        entry = self._entries.get(node_info.name)
        if entry is None or entry[1] is not nominated or entry[0] != _key(pod, node_info, nominated, shapes):
            return None
        victims, violating = entry[2]
        return list(victims), violating

    def kept_all(
        self,
        pod: Pod,
        infos: Sequence[NodeInfo | None],
        nominations: Mapping[str, tuple[Pod, ...]],
        shapes: tuple[Hashable, ...],
    ) -> list[Reprieved | None]:
        """:meth:`kept` for each node of ``infos`` (None where a node is None), the nominations of each
        read from ``nominations`` (the nominator's, by node name)."""
        entries, nominated_on = self._entries.get, nominations.get
        out: list[Reprieved | None] = []
        for info in infos:
            entry = entries(info.name) if info is not None else None
            if entry is None:
                out.append(None)
                continue
            assert info is not None
            nominated = nominated_on(info.name, ())
            if entry[1] is not nominated or entry[0] != _key(pod, info, nominated, shapes):
                out.append(None)
                continue
            victims, violating = entry[2]
            out.append((list(victims), violating))
        return out


def _key(pod: Pod, node_info: NodeInfo, nominated: tuple[Pod, ...], shapes: tuple[Hashable, ...]) -> Hashable:
    own = next((other.uid for other in nominated if other.uid == pod.uid), None) if nominated else None
    return node_info.generation, pod.priority, own, shapes
