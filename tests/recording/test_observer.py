"""The attempt lifecycle (kubesched.recording.observer): one report per step, fanned out, recorded on the cycle."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.recording import NULL_ATTEMPT, Attempt, FullRecorder, NullAttempt, Observers, RecordingObserver
from kubesched.recording.trace import ERROR, UNSCHEDULABLE
from kubesched.util.hooks import ignores_report
from tests.factories import make_pod

NAMES = np.array(["n1", "n2", "n3"], dtype=object)


@dataclass
class Cycle:
    pod: Pod
    profile: str = "default-scheduler"
    attempts: int = 2
    queued_at: datetime | None = None
    started: float = 0.0
    number: int = 7
    state: CycleState = field(default_factory=CycleState)
    record: Attempt | NullAttempt = NULL_ATTEMPT


class Log:
    """An observer noting (name, step) for every report; its verdict map when it keeps one."""

    def __init__(
        self,
        name: str,
        log: list[tuple[str, str]],
        verdicts: dict[str, Any] | None = None,
        detailed: bool = False,
        raw_scores: bool = False,
    ) -> None:
        self.name, self.log, self.verdicts = name, log, verdicts
        self.detailed, self.raw_scores = detailed, raw_scores

    def extender_verdicts(self, cycle: Any) -> dict[str, Any] | None:
        self.log.append((self.name, "extender_verdicts"))
        return self.verdicts

    def __getattr__(self, step: str) -> Any:
        return lambda cycle, *args: self.log.append((self.name, step))


def test_every_report_reaches_every_observer_in_order() -> None:
    log: list[tuple[str, str]] = []
    both = Observers([Log("a", log), Log("b", log)])
    cycle = Cycle(make_pod("p"))
    both.begin(cycle)
    both.rejected(cycle, NAMES, np.array([0]), [Status(Code.UNSCHEDULABLE, plugin="X")])
    both.post_filtered(cycle, "DefaultPreemption", "none", None, "", None)
    both.failed(cycle, True, "no room", None)
    assert log == [(o, step) for step in ("begin", "rejected", "post_filtered", "failed") for o in "ab"]


def test_flags_and_the_verdict_map_come_from_whoever_keeps_them() -> None:
    log: list[tuple[str, str]] = []
    kept: dict[str, Any] = {}
    plain = Observers([Log("a", log), Log("b", log)])
    assert not plain.detailed and not plain.raw_scores and plain.extender_verdicts(Cycle(make_pod("p"))) is None
    keeping = Observers([Log("a", log), Log("b", log, kept, detailed=True, raw_scores=True)])
    assert keeping.detailed and keeping.raw_scores
    assert keeping.extender_verdicts(Cycle(make_pod("p"))) is kept


class Deaf(Log):
    """A Log that drops its Filter and Score reports, as the metrics do."""

    @ignores_report
    def feasible(self, cycle: Any, names: Any, rows: Any) -> None:
        self.log.append((self.name, "feasible"))

    @ignores_report
    def extender_verdicts(self, cycle: Any) -> None:
        self.log.append((self.name, "extender_verdicts"))


def test_a_report_an_observer_ignores_is_not_handed_to_it() -> None:
    log: list[tuple[str, str]] = []
    kept: dict[str, Any] = {}
    listening = Log("b", log, kept)
    both = Observers([Deaf("a", log), listening])
    cycle = Cycle(make_pod("p"))
    both.begin(cycle)
    both.feasible(cycle, NAMES, np.array([0]))
    assert both.extender_verdicts(cycle) is kept
    both.scheduled(cycle, "n1")
    ends = [("a", "scheduled"), ("b", "scheduled")]
    assert log == [("a", "begin"), ("b", "begin"), ("b", "feasible"), ("b", "extender_verdicts"), *ends]
    alone = Observers([Deaf("a", log)])
    log.clear()
    alone.feasible(cycle, NAMES, np.array([0]))
    assert alone.extender_verdicts(cycle) is None
    assert log == []


def test_the_recording_observer_keeps_the_attempt_on_the_cycle() -> None:
    full = FullRecorder()
    observer = RecordingObserver(full)
    assert observer.detailed and observer.raw_scores
    cycle = Cycle(make_pod("p"))
    observer.begin(cycle)
    attempt = cycle.record
    assert isinstance(attempt, Attempt)
    assert (attempt.pod, attempt.attempt, attempt.profile, attempt.cycle) == ("default/p", 2, "default-scheduler", 7)
    observer.feasible(cycle, NAMES, np.array([1, 2]))
    observer.scored(cycle, np.array([1, 2]), {"S": np.array([3, 9])}, np.array([3, 9]), {}, np.array([2]))
    observer.post_filtered(cycle, "P", "said so", ["ns/v"], "n2", {"ext": {"preempt": "ok"}})
    verdicts = observer.extender_verdicts(cycle)
    assert verdicts == {"ext": {"preempt": "ok"}}
    assert full.attempts == []  # not over yet
    observer.scheduled(cycle, "n3")
    [record] = full.records
    assert (record.result, record.node, record.victims) == ("Scheduled", "n3", ["ns/v"])
    assert record.total == {"n2": 3, "n3": 9}


def test_a_failure_is_unschedulable_or_an_error() -> None:
    full = FullRecorder()
    observer = RecordingObserver(full)
    for unschedulable in (True, False):
        cycle = Cycle(make_pod("p"))
        observer.begin(cycle)
        observer.failed(cycle, unschedulable, "why", "n1")
    assert [(r.result, r.message, r.nominated_node) for r in full.records] == [
        (UNSCHEDULABLE, "why", "n1"),
        (ERROR, "why", "n1"),
    ]
