"""The recorder the scheduling cycle reports to, and the one that does nothing (the default).

A scheduling cycle's recording observer (:class:`~kubesched.recording.RecordingObserver`) asks the
scheduler's recorder for an attempt once, when the cycle begins (:meth:`Recorder.begin`); every report
after that goes to the attempt it got back. The do-nothing recorder is never asked: a scheduler whose
recorder records nothing leaves the recording observer out, so an unrecorded cycle builds nothing.
When the attempt ends (scheduled, unschedulable or an error; for a scheduled pod that is after Bind) the
attempt calls :meth:`Recorder.finished` with itself, where a sink keeps, writes or drops it.

A driver loop that needs to know how attempts end (loop detection, pods never attempted) attaches an
:class:`~kubesched.recording.OutcomeListener` (a callback per attempt) or an
:class:`~kubesched.recording.OutcomeStream` (``take()`` after each step) with ``Scheduler.add_recorder``:
both keep a few fields per attempt, whatever else is recorded, so it never needs full records.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Self

from kubesched.recording.attempt import NULL_ATTEMPT, Attempt, NullAttempt


class Recorder:
    """The do-nothing recorder; sinks override :attr:`enabled` and :meth:`finished`."""

    #: Whether cycles report to this recorder at all.
    enabled = False
    #: Whether the cycle should keep every Score plugin's raw scores (before NormalizeScore and weights).
    raw_scores = False

    def begin(
        self, pod: str, attempt: int, profile: str, start_nominated_node: str | None = None, cycle: int = 0
    ) -> Attempt | NullAttempt:
        """The attempt a scheduling cycle of ``pod`` (the ``cycle``-th) reports to."""
        if not self.enabled:
            return NULL_ATTEMPT
        return Attempt(self, pod, attempt, profile, start_nominated_node, cycle)

    def finished(self, attempt: Attempt) -> None:
        """``attempt`` ended; the recorder must not change it (others may read it too)."""

    def close(self) -> None:
        """Release files and the like; the recorder may not be used afterwards."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class NullRecorder(Recorder):
    """Records nothing: the scheduler's default."""


class Recorders(Recorder):
    """Several recorders fed by one attempt per cycle (each sees every finished attempt, in order)."""

    def __init__(self, recorders: Iterable[Recorder] = ()) -> None:
        self.recorders: list[Recorder] = [r for r in recorders if r.enabled]
        self.enabled = bool(self.recorders)
        self.raw_scores = any(r.raw_scores for r in self.recorders)

    def add(self, recorder: Recorder) -> None:
        if recorder.enabled:
            self.recorders.append(recorder)
            self.enabled = True
            self.raw_scores = self.raw_scores or recorder.raw_scores

    def finished(self, attempt: Attempt) -> None:
        for recorder in self.recorders:
            recorder.finished(attempt)

    def close(self) -> None:
        for recorder in self.recorders:
            recorder.close()
