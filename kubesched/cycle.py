"""What one pod's scheduling attempt carries and what it uses of the scheduler.

A :class:`SchedulingCycle` is made once per popped pod and handed from phase to phase, from the
scheduling cycle to the end of the binding cycle; :class:`SchedulerParts` is what those phases use of
their scheduler. The phases themselves are :mod:`kubesched.schedule_one` and, for the search of the
nodes that fit, :mod:`kubesched.feasible_nodes`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from kubesched.api.objects import Pod
from kubesched.cache.cache import Cache
from kubesched.cache.snapshot import Snapshot
from kubesched.cluster.protocol import Cluster
from kubesched.cycle_rules import CycleRules
from kubesched.extender import HTTPExtender
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Status
from kubesched.profile.events import ClusterEventRecorder
from kubesched.queue.queued_pod_info import QueuedPodInfo
from kubesched.queue.scheduling_queue import SchedulingQueue
from kubesched.recording import NULL_ATTEMPT, Attempt, AttemptObserver, NullAttempt


class SchedulerParts(Protocol):
    """What a scheduling cycle uses of its scheduler (:class:`kubesched.scheduler.Scheduler` is one)."""

    #: For binding on a binding extender's behalf and writing the pod's status.
    cluster: Cluster
    cache: Cache
    queue: SchedulingQueue
    snapshot: Snapshot
    #: Whether the scheduler records the Binding once a binding extender said yes (the embedded cluster).
    bind_for_extenders: bool
    events: ClusterEventRecorder
    #: Where each new attempt's lifecycle is reported (the metrics, and the recorders when any).
    observer: AttemptObserver
    cycle_numbers: Iterator[int]
    #: Ties between the best nodes: "random" (from ``rng``, as kube-scheduler) or "name" (the first name).
    tie_break: str
    rng: random.Random
    #: Uids of the pods whose binding cycle waits in PreBind.
    waiting_in_pre_bind: set[str]
    #: Where the next Filter pass starts in the snapshot's node order (kube-scheduler's nextStartNodeIndex).
    next_start_node_index: int
    #: What the emulated version changes in the cycle.
    cycle_rules: CycleRules

    @property
    def profiles(self) -> Mapping[str, Framework]: ...
    @property
    def extenders(self) -> Sequence[HTTPExtender]: ...

    def may_act(self) -> bool:
        """The leadership gate: whether this replica may pop, preempt, bind and write."""
        ...

    def submit(self, task: Callable[[], None]) -> None:
        """Run ``task`` (a binding cycle) on the scheduler's executor."""
        ...

    def current_pod(self, pod: Pod) -> Pod | None:
        """The latest version of ``pod`` the scheduler has seen (None once deleted)."""
        ...


@dataclass(slots=True, eq=False)
class SchedulingCycle:
    """One popped pod's way through the scheduler, from the scheduling cycle to the end of its binding."""

    qpi: QueuedPodInfo
    #: The pod as popped.
    pod: Pod
    fwk: Framework
    state: CycleState
    #: Where every step of this attempt is reported (kept, so an attempt ends where it began).
    observer: AttemptObserver
    number: int
    #: ``time.perf_counter()`` when the cycle began (the attempt's duration runs from here).
    started: float
    #: The pod as assumed on ``host`` (the popped pod until then).
    assumed: Pod
    #: The node the pod was assumed on ("" until then).
    host: str = ""
    #: What the recorders keep of this attempt (kept by the recording observer).
    record: Attempt | NullAttempt = NULL_ATTEMPT
    #: Nodes Filter looked at, and those that passed (for the "Successfully bound" line).
    evaluated_nodes: int = 0
    feasible_nodes: int = 0

    @property
    def profile(self) -> str:
        return self.fwk.profile_name

    @property
    def attempts(self) -> int:
        return self.qpi.attempts

    @property
    def queued_at(self) -> datetime | None:
        return self.qpi.initial_attempt_timestamp


class CycleError(Exception):
    """Ends the scheduling cycle before a host is held: the status to report, and the error behind it."""

    def __init__(self, status: Status, error: BaseException | None = None) -> None:
        super().__init__(status.message)
        self.status = status
        self.error = error
