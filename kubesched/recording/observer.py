"""The lifecycle of one scheduling attempt, as the cycle reports it: once, to one observer.

A scheduling cycle tells its :class:`AttemptObserver` every step of its attempt: that it began, what
the Filter phase rejected and kept, the scores, the PostFilter outcome, a Reserve / Permit / Bind
plugin's refusal, and how the attempt ended (scheduled, or failed as unschedulable or with an error).
Everything that watches attempts sits behind this one interface:

- the metrics (:class:`kubesched.metrics.MetricsObserver`): attempt counts and durations, the
  queue-to-bound latency, preemption attempts, the sampled plugin timings;
- the recorders (:class:`RecordingObserver`): each report goes on to the attempt its recorder began.

:class:`Observers` hands each report to several observers, in order. An observer is made once per
scheduler and sees many attempts at once (binding cycles overlap), so what it keeps about one attempt
lives on the cycle it is handed (:class:`ObservedCycle`): reporting allocates nothing, and an attempt
nobody records costs only the metrics' own updates.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Status
from kubesched.recording.attempt import Attempt, NullAttempt
from kubesched.recording.recorder import Recorder
from kubesched.recording.trace import ERROR, UNSCHEDULABLE
from kubesched.util.hooks import reports_ignored


class ObservedCycle(Protocol):
    """What an observer reads from the cycle it observes, and the slot the recorders keep their attempt in."""

    @property
    def pod(self) -> Pod: ...
    @property
    def profile(self) -> str: ...
    @property
    def attempts(self) -> int:
        """The pod's attempt count, this one included."""
        ...

    @property
    def queued_at(self) -> datetime | None:
        """When the pod first entered the queue (None when unknown)."""
        ...

    @property
    def started(self) -> float:
        """``time.perf_counter()`` when the cycle began."""
        ...

    @property
    def number(self) -> int:
        """The cycle's place among the scheduler's cycles (1, 2, ...)."""
        ...

    @property
    def state(self) -> CycleState: ...

    #: What the recorders keep of this attempt (the do-nothing attempt unless one records it).
    record: Attempt | NullAttempt


class AttemptObserver(Protocol):
    """One scheduling attempt's lifecycle, step by step; ``cycle`` says which attempt."""

    @property
    def detailed(self) -> bool:
        """Whether per-node detail the cycle would not compute otherwise is wanted (skipped nodes,
        the nodes extenders dropped)."""
        ...

    @property
    def raw_scores(self) -> bool:
        """Whether the Score plugins' raw scores (before NormalizeScore and weights) are wanted."""
        ...

    def begin(self, cycle: ObservedCycle) -> None: ...

    # -- the Filter phase: rows index the snapshot's node-name array ``names`` ---------------------
    def rejected_all(self, cycle: ObservedCycle, names: np.ndarray, status: Status) -> None:
        """PreFilter rejected the pod: ``status`` stands for every node."""
        ...

    def skipped_outside(self, cycle: ObservedCycle, names: np.ndarray, rows: np.ndarray) -> None:
        """A PreFilterResult narrowed the candidates to ``rows``."""
        ...

    def rejected(self, cycle: ObservedCycle, names: np.ndarray, rows: np.ndarray, statuses: Sequence[Status]) -> None:
        """Filter (or an extender) rejected ``rows``, one status each."""
        ...

    def evaluated(self, cycle: ObservedCycle, count: int) -> None: ...
    def feasible(self, cycle: ObservedCycle, names: np.ndarray, rows: np.ndarray) -> None: ...

    # -- Score ---------------------------------------------------------------------------------------
    def scored(
        self,
        cycle: ObservedCycle,
        rows: np.ndarray,
        plugin_scores: dict[str, np.ndarray],
        total: np.ndarray,
        raw_scores: dict[str, np.ndarray],
        tie_rows: np.ndarray,
    ) -> None: ...
    def weighted(self, cycle: ObservedCycle, weights: dict[str, int]) -> None: ...

    def extender_verdicts(self, cycle: ObservedCycle) -> dict[str, Any] | None:
        """The map extenders write their verdicts into, or None when nobody keeps them."""
        ...

    # -- after Filter ----------------------------------------------------------------------------------
    def post_filtered(
        self,
        cycle: ObservedCycle,
        plugin: str,
        message: str,
        victims: Sequence[str] | None,
        nominated: str,
        extender_verdicts: Mapping[str, Any] | None,
        ran: Collection[str] = (),
    ) -> None:
        """PostFilter ran (nothing fit): who answered what, the chosen victims, the nominated node, and
        the PostFilter plugins that were called (``ran``)."""
        ...

    def failed_at(self, cycle: ObservedCycle, point: str, plugin: str, message: str) -> None:
        """A Reserve, Permit or Bind plugin said no (``point``: "reserve", "permit" or "bind")."""
        ...

    # -- the end -------------------------------------------------------------------------------------
    def failed(self, cycle: ObservedCycle, unschedulable: bool, message: str, nominated_node: str | None) -> None:
        """The attempt ended without a binding: unschedulable, or an error when not."""
        ...

    def scheduled(self, cycle: ObservedCycle, node: str) -> None:
        """The pod was bound to ``node``."""
        ...


class RecordingObserver:
    """The recorders' side: the attempt a recorder began for the cycle gets every report.

    One per scheduler (it keeps its attempt in the cycle's one ``record`` slot): several recorders join
    behind it as :class:`~kubesched.recording.Recorders`."""

    __slots__ = ("recorder",)

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    @property
    def detailed(self) -> bool:
        return self.recorder.enabled

    @property
    def raw_scores(self) -> bool:
        return self.recorder.raw_scores

    def begin(self, cycle: ObservedCycle) -> None:
        pod = cycle.pod
        cycle.record = self.recorder.begin(
            pod.key, cycle.attempts, cycle.profile, pod.nominated_node_name or None, cycle.number
        )

    def rejected_all(self, cycle: ObservedCycle, names: np.ndarray, status: Status) -> None:
        cycle.record.rejected_all(names, status)

    def skipped_outside(self, cycle: ObservedCycle, names: np.ndarray, rows: np.ndarray) -> None:
        cycle.record.skipped_outside(names, rows)

    def rejected(self, cycle: ObservedCycle, names: np.ndarray, rows: np.ndarray, statuses: Sequence[Status]) -> None:
        cycle.record.rejected(names, rows, statuses)

    def evaluated(self, cycle: ObservedCycle, count: int) -> None:
        cycle.record.evaluated(count)

    def feasible(self, cycle: ObservedCycle, names: np.ndarray, rows: np.ndarray) -> None:
        cycle.record.feasible(names, rows)

    def scored(
        self,
        cycle: ObservedCycle,
        rows: np.ndarray,
        plugin_scores: dict[str, np.ndarray],
        total: np.ndarray,
        raw_scores: dict[str, np.ndarray],
        tie_rows: np.ndarray,
    ) -> None:
        cycle.record.scored(rows, plugin_scores, total, raw_scores, tie_rows)

    def weighted(self, cycle: ObservedCycle, weights: dict[str, int]) -> None:
        cycle.record.weighted(weights)

    def extender_verdicts(self, cycle: ObservedCycle) -> dict[str, Any] | None:
        return cycle.record.extender_verdicts()

    def post_filtered(
        self,
        cycle: ObservedCycle,
        plugin: str,
        message: str,
        victims: Sequence[str] | None,
        nominated: str,
        extender_verdicts: Mapping[str, Any] | None,
        ran: Collection[str] = (),
    ) -> None:
        record = cycle.record
        record.post_filtered(plugin, message, victims, nominated)
        if extender_verdicts:
            verdicts = record.extender_verdicts()
            if verdicts is not None:
                verdicts.update(extender_verdicts)

    def failed_at(self, cycle: ObservedCycle, point: str, plugin: str, message: str) -> None:
        cycle.record.failed_at(point, plugin, message)

    def failed(self, cycle: ObservedCycle, unschedulable: bool, message: str, nominated_node: str | None) -> None:
        cycle.record.failed(UNSCHEDULABLE if unschedulable else ERROR, message, nominated_node)

    def scheduled(self, cycle: ObservedCycle, node: str) -> None:
        cycle.record.scheduled(node)


def _listeners(observers: Sequence[AttemptObserver], hook: str) -> tuple[Callable[..., Any], ...]:
    """The bound ``hook`` of every observer in ``observers`` that does something with it, in order."""
    bound = (getattr(o, hook) for o in observers)
    return tuple(b for b in bound if not reports_ignored(b))


def _fan_out(listeners: tuple[Callable[..., Any], ...]) -> Callable[..., None]:
    """One hook calling each of ``listeners`` in turn (the cycle reports by position, as the
    :class:`AttemptObserver` hooks list their arguments); the one listener itself when alone."""
    if len(listeners) == 1:
        return listeners[0]

    def fan_out(*args: Any) -> None:
        for listener in listeners:
            listener(*args)

    return fan_out


class Observers:
    """Several observers behind one: each report goes to every one of them, in the order given.

    Each hook is decided once, when the observers are joined: it calls only the observers that do
    something with it (:func:`ignores_report`), and is the one observer's own method when only one
    does, so a report costs no call per observer that would drop it. The observers are fixed for the
    life of the join (a new set of observers is a new :class:`Observers`)."""

    __slots__ = (
        "begin",
        "evaluated",
        "extender_verdicts",
        "failed",
        "failed_at",
        "feasible",
        "observers",
        "post_filtered",
        "rejected",
        "rejected_all",
        "scheduled",
        "scored",
        "skipped_outside",
        "weighted",
    )

    begin: Callable[[ObservedCycle], None]
    rejected_all: Callable[[ObservedCycle, np.ndarray, Status], None]
    skipped_outside: Callable[[ObservedCycle, np.ndarray, np.ndarray], None]
    rejected: Callable[[ObservedCycle, np.ndarray, np.ndarray, Sequence[Status]], None]
    evaluated: Callable[[ObservedCycle, int], None]
    feasible: Callable[[ObservedCycle, np.ndarray, np.ndarray], None]
    scored: Callable[..., None]
    weighted: Callable[[ObservedCycle, dict[str, int]], None]
    extender_verdicts: Callable[[ObservedCycle], dict[str, Any] | None]
    post_filtered: Callable[..., None]
    failed_at: Callable[[ObservedCycle, str, str, str], None]
    failed: Callable[[ObservedCycle, bool, str, str | None], None]
    scheduled: Callable[[ObservedCycle, str], None]

    def __init__(self, observers: Sequence[AttemptObserver]) -> None:
        self.observers = tuple(observers)
        for hook in _REPORTS:
            setattr(self, hook, _fan_out(_listeners(self.observers, hook)))
        self.extender_verdicts = _first_verdicts(_listeners(self.observers, "extender_verdicts"))

    # Asked once or twice per cycle: plain loops, no generator to make.
    @property
    def detailed(self) -> bool:
        for o in self.observers:  # noqa: SIM110
            if o.detailed:
                return True
        return False

    @property
    def raw_scores(self) -> bool:
        for o in self.observers:  # noqa: SIM110
            if o.raw_scores:
                return True
        return False


def _first_verdicts(
    listeners: tuple[Callable[..., Any], ...],
) -> Callable[[ObservedCycle], dict[str, Any] | None]:
    """The first map that keeps verdicts among ``listeners``' (there is one map per attempt)."""
    if len(listeners) == 1:
        return listeners[0]

    def first(cycle: ObservedCycle) -> dict[str, Any] | None:
        for listener in listeners:
            verdicts = listener(cycle)
            if verdicts is not None:
                return verdicts  # type: ignore[no-any-return]
        return None

    return first


#: The hooks :class:`Observers` fans out as they are (every one but ``extender_verdicts``, which answers).
_REPORTS = (
    "begin",
    "rejected_all",
    "skipped_outside",
    "rejected",
    "evaluated",
    "feasible",
    "scored",
    "weighted",
    "post_filtered",
    "failed_at",
    "failed",
    "scheduled",
)
