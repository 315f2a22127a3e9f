"""Small per-attempt results: the outcome stream a driver reads, and the summary users get by default.

Both keep a fixed amount per attempt, however many nodes the cluster has: memory grows with attempts,
never with nodes x attempts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, overload

from kubesched.recording.attempt import Attempt, NameOrder
from kubesched.recording.recorder import Recorder
from kubesched.util.slots import slot_builder

#: How many of the best-scoring nodes a summary names.
TOP_NODES = 3


class AttemptOutcome(NamedTuple):
    """How one attempt ended: the pod (``ns/name``), the attempt number, the result and its message."""

    pod: str
    attempt: int
    result: str
    message: str | None = None

    @classmethod
    def of(cls, attempt: Attempt) -> AttemptOutcome:
        return cls(attempt.pod, attempt.attempt, attempt.result, attempt.message)


class OutcomeListener(Recorder):
    """Calls ``listener`` with each attempt's :class:`AttemptOutcome` the moment the attempt ends."""

    enabled = True

    def __init__(self, listener: Callable[[AttemptOutcome], None]) -> None:
        self.listener = listener

    def finished(self, attempt: Attempt) -> None:
        self.listener(AttemptOutcome.of(attempt))


class AttemptTally(Recorder):
    """How many attempts ended and which pods were attempted: what a simulation's result reports,
    without keeping anything per attempt."""

    enabled = True

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.attempted: set[str] = set()
        self.count = 0

    def finished(self, attempt: Attempt) -> None:
        with self._lock:
            self._tally(attempt)

    def _tally(self, attempt: Attempt) -> None:
        """Count the attempt (the caller holds the lock)."""
        self.attempted.add(attempt.pod)
        self.count += 1


class OutcomeStream(AttemptTally):
    """Every attempt's outcome, in the order attempts ended, for a driver to take as they come.

    :meth:`take` hands over what ended since the last call (and forgets it); :attr:`attempted` keeps
    the pods that were attempted at least once.
    """

    def __init__(self) -> None:
        super().__init__()
        #: Plain tuples until taken: cheaper to make, and ones of strings and numbers the garbage
        #: collector stops tracking.
        self._fresh: list[tuple[str, int, str, str | None]] = []

    def finished(self, attempt: Attempt) -> None:
        outcome = (attempt.pod, attempt.attempt, attempt.result, attempt.message)
        with self._lock:
            self._fresh.append(outcome)
            self._tally(attempt)

    def take(self) -> list[AttemptOutcome]:
        """The outcomes of attempts that ended since the previous call."""
        with self._lock:
            fresh, self._fresh = self._fresh, []
        return [AttemptOutcome._make(outcome) for outcome in fresh]


@dataclass(frozen=True, slots=True)
class AttemptSummary:
    """What one attempt decided, without the per-node detail (that is in the full record and the trace)."""

    pod: str
    attempt: int
    profile: str
    result: str
    node: str | None = None
    message: str | None = None
    #: Nodes that passed every filter (0 for a failed attempt, as in its trace record).
    feasible: int = 0
    evaluated_nodes: int = 0
    #: The best (node, total score) pairs, best first; empty when nothing was scored.
    top_nodes: tuple[tuple[str, int], ...] = ()
    nominated_node: str | None = None
    victims: tuple[str, ...] = ()
    #: Order of the scheduling cycle that made the attempt (see :attr:`Attempt.cycle`).
    cycle: int = 0

    @classmethod
    def of(cls, attempt: Attempt, top: int = TOP_NODES, order: NameOrder | None = None) -> AttemptSummary:
        values = (
            attempt.pod,
            attempt.attempt,
            attempt.profile,
            attempt.result,
            attempt.node,
            attempt.message,
            attempt.feasible_count(),
            attempt.evaluated_nodes,
            tuple(attempt.top_nodes(top, order)),
            attempt.nominated_node,
            tuple(attempt.victims or ()),
            attempt.cycle,
        )
        # Every attempt makes one: straight through the slots (what __init__ makes, at half the cost).
        return _make_summary(*values) if cls is AttemptSummary else cls(*values)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, with the trace's key names for the fields both have."""
        out: dict[str, Any] = {"pod": self.pod, "attempt": self.attempt, "profile": self.profile, "result": self.result}
        if self.node is not None:
            out["node"] = self.node
        if self.message is not None:
            out["message"] = self.message
        out["feasibleCount"] = self.feasible
        out["evaluatedNodes"] = self.evaluated_nodes
        out["topNodes"] = [{"node": n, "score": s} for n, s in self.top_nodes]
        if self.nominated_node:
            out["nominatedNode"] = self.nominated_node
        if self.victims:
            out["victims"] = list(self.victims)
        return out


_make_summary = slot_builder(AttemptSummary)


class SummaryRecorder(Recorder):
    """Keeps an :class:`AttemptSummary` per attempt (``summaries``, in the order attempts ended)."""

    enabled = True

    def __init__(self, top: int = TOP_NODES) -> None:
        self.top = top
        self.summaries: list[AttemptSummary] = []
        self._order = NameOrder()

    def finished(self, attempt: Attempt) -> None:
        self.summaries.append(AttemptSummary.of(attempt, self.top, self._order))

    def in_cycle_order(self) -> list[AttemptSummary]:
        """The summaries in the order their scheduling cycles ran (a binding that waited ends late)."""
        return sorted(self.summaries, key=lambda s: s.cycle)


class SummaryDicts(Sequence[dict[str, Any]]):
    """Summaries read as dicts (:meth:`AttemptSummary.to_dict`), each built when it is read."""

    def __init__(self, summaries: Sequence[AttemptSummary]) -> None:
        self._summaries = summaries

    def __len__(self) -> int:
        return len(self._summaries)

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(i, slice):
            return [s.to_dict() for s in self._summaries[i]]
        return self._summaries[i].to_dict()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (s.to_dict() for s in self._summaries)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"<{len(self)} attempt summaries>"
