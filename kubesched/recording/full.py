"""Full records on request: every attempt kept in columnar form, turned into trace records when read.

Keeping an attempt costs the arrays its cycle made (rows, statuses, score arrays), not a dict per
node and plugin; :class:`LazyRecords` builds an :class:`~kubesched.recording.trace.AttemptRecord` the first time
an attempt is read and keeps it, and :class:`LazyDicts` does the same for the JSON-shaped dicts.
Memory still grows with nodes x attempts here: that is what asking for every full record means.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

from kubesched.recording.attempt import Attempt
from kubesched.recording.recorder import Recorder
from kubesched.recording.trace import AttemptRecord

T = TypeVar("T")


class FullRecorder(Recorder):
    """Keeps every attempt; ``records`` and ``dicts`` read them as trace records and dicts."""

    enabled = True
    raw_scores = True

    def __init__(self) -> None:
        self.attempts: list[Attempt] = []
        self._lock = threading.Lock()
        self.records: LazyRecords = LazyRecords(self.attempts)
        self.dicts: LazyDicts = LazyDicts(self.records)

    def finished(self, attempt: Attempt) -> None:
        with self._lock:
            self.attempts.append(attempt)

    def in_cycle_order(self) -> FullRecorder:
        """The same attempts, as a recorder whose lists follow the order their scheduling cycles ran."""
        ordered = FullRecorder()
        ordered.attempts.extend(sorted(self.attempts, key=lambda a: a.cycle))
        return ordered


class _Lazy(Sequence[T], Generic[T]):
    """A read-only sequence whose items are made from another's on first read, then kept."""

    def __init__(self, source: Sequence[Any], make: Callable[[Any], T]) -> None:
        self._source = source
        self._make = make
        self._made: dict[int, T] = {}

    def __len__(self) -> int:
        return len(self._source)

    def _item(self, i: int) -> T:
        n = len(self._source)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        made = self._made.get(i)
        if made is None:
            made = self._made[i] = self._make(self._source[i])
        return made

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> list[T]: ...
    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            return [self._item(k) for k in range(*i.indices(len(self)))]
        return self._item(i)

    def __iter__(self) -> Iterator[T]:
        return (self._item(k) for k in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"<{len(self)} {type(self).__name__}>"


class LazyRecords(_Lazy[AttemptRecord]):
    """Attempts read as :class:`~kubesched.recording.trace.AttemptRecord` values."""

    def __init__(self, attempts: Sequence[Attempt]) -> None:
        super().__init__(attempts, Attempt.to_record)

    @property
    def attempts(self) -> Sequence[Attempt]:
        """The columnar attempts behind the records, for readers that need a part of each without
        building every record (the HTML report)."""
        return self._source


class LazyDicts(_Lazy[dict[str, Any]]):
    """Records read as their conformance-shaped dicts (:meth:`AttemptRecord.to_dict`)."""

    def __init__(self, records: Sequence[AttemptRecord]) -> None:
        super().__init__(records, AttemptRecord.to_dict)
