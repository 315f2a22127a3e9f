"""Recording: what the scheduling cycle reports, and the sinks that keep, stream or drop it.

The scheduler has one :class:`Recorder` (``Scheduler.recorder``); the default records nothing. Every
scheduling cycle reports the steps of its attempt to one :class:`AttemptObserver` (:mod:`.observer`),
behind which the metrics and the recorders sit; when something records, the :class:`RecordingObserver`
asks the recorder for an attempt as the cycle begins and hands it every report: the rejected rows
with their statuses, the feasible rows, the score arrays, the PostFilter/Reserve/Permit/Bind outcome,
and how it ended. The data stays as the cycle made it (NumPy rows, Status objects, score arrays);
dicts exist only when someone reads a record.

Sinks, combined with :class:`Recorders`:

- :class:`OutcomeListener` / :class:`OutcomeStream`: an :class:`AttemptOutcome` (pod, attempt, result,
  message) per attempt, handed to a callback as the attempt ends, or kept until ``take()`` along
  with the set of pods ever attempted. This is what a driver loop needs for its own bookkeeping
  (loop detection, never-attempted pods) whatever the user asked to record. :class:`AttemptTally`
  keeps only the count and the set: the simulator attaches it and a listener
  (``Scheduler.add_recorder``), so it never needs full records.
- :class:`SummaryRecorder`: an :class:`AttemptSummary` per attempt (pod, attempt, profile, result,
  node, message, feasible count, top nodes by score, nomination, victims). ``simulate``'s default.
- :class:`FullRecorder`: every attempt; ``records`` / ``dicts`` build trace records on first read.
- :class:`TraceWriter`: the JSON Lines trace (``.jsonl`` or ``.jsonl.gz``) written as attempts end.

``simulate(..., record="summary" | "full" | "none")`` picks among the first three (:func:`recorders_for`).
"""

from kubesched.recording.attempt import NULL_ATTEMPT, Attempt, AttemptSink, NullAttempt
from kubesched.recording.full import FullRecorder, LazyDicts, LazyRecords
from kubesched.recording.jsonl import AttemptEncoder, TraceFile
from kubesched.recording.observer import AttemptObserver, ObservedCycle, Observers, RecordingObserver
from kubesched.recording.recorder import NullRecorder, Recorder, Recorders
from kubesched.recording.summary import (
    AttemptOutcome,
    AttemptSummary,
    AttemptTally,
    OutcomeListener,
    OutcomeStream,
    SummaryDicts,
    SummaryRecorder,
)
from kubesched.recording.trace_writer import TraceWriter

#: The ``record=`` choices of :func:`kubesched.simulate`.
RECORD_MODES = ("summary", "full", "none")


def recorders_for(mode: str) -> tuple[SummaryRecorder | None, FullRecorder | None]:
    """The sinks a ``record=`` mode asks for: summaries for "summary", summaries and full records for "full"."""
    if mode not in RECORD_MODES:
        raise ValueError(f"record must be one of {', '.join(map(repr, RECORD_MODES))}, not {mode!r}")
    if mode == "none":
        return None, None
    return SummaryRecorder(), (FullRecorder() if mode == "full" else None)


__all__ = [
    "NULL_ATTEMPT",
    "RECORD_MODES",
    "Attempt",
    "AttemptEncoder",
    "AttemptObserver",
    "AttemptOutcome",
    "AttemptSink",
    "AttemptSummary",
    "AttemptTally",
    "FullRecorder",
    "LazyDicts",
    "LazyRecords",
    "NullAttempt",
    "NullRecorder",
    "ObservedCycle",
    "Observers",
    "OutcomeListener",
    "OutcomeStream",
    "Recorder",
    "Recorders",
    "RecordingObserver",
    "SummaryDicts",
    "SummaryRecorder",
    "TraceFile",
    "TraceWriter",
    "recorders_for",
]
