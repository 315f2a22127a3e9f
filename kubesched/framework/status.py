"""Status: what an extension point says about a pod (and a node).

``None`` is success everywhere a plugin returns a status, as a nil status is in kube-scheduler, so the
hot path allocates nothing for nodes that pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum


class Code(IntEnum):
    """Outcome codes, in kube-scheduler's order (the numbers are stable and used in arrays)."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    #: Rejected, and preemption on this node cannot help.
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


@dataclass(slots=True)
class Status:
    """A non-success result: code, reasons (joined into the message) and the plugin that said it."""

    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    error: BaseException | None = field(default=None, compare=False)

    @classmethod
    def of(cls, code: Code, *reasons: str) -> Status:
        return cls(code, tuple(reasons))

    @classmethod
    def from_error(cls, err: BaseException) -> Status:
        return cls(Code.ERROR, (str(err),), error=err)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    def is_wait(self) -> bool:
        return self.code is Code.WAIT

    def is_skip(self) -> bool:
        return self.code is Code.SKIP

    def is_rejected(self) -> bool:
        """Unschedulable, unresolvable or pending: the pod cannot go there now, and it is no error."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def with_plugin(self, plugin: str) -> Status:
        self.plugin = plugin
        return self

    def as_error(self) -> BaseException:
        """The error behind this status; wrapped when the status words it differently (a plugin's
        exception inside ``running "X" filter plugin: …``), so the message is never lost."""
        if self.error is not None and (str(self.error) == self.message or not self.reasons):
            return self.error
        err = RuntimeError(self.message)
        err.__cause__ = self.error
        return err

    def __str__(self) -> str:
        return f"{self.code.label}: {self.message}" if self.reasons else self.code.label


def is_success(status: Status | None) -> bool:
    return status is None or status.code is Code.SUCCESS


def code_of(status: Status | None) -> Code:
    return Code.SUCCESS if status is None else status.code


def status_label(outcome: object) -> str:
    """The ``status`` label metrics give an extension point's outcome: a Status, a ``(value, Status)``
    pair, or None for success."""
    if isinstance(outcome, tuple):
        outcome = outcome[-1] if outcome else None
    return outcome.code.label if isinstance(outcome, Status) else "Success"


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def error(message: str) -> Status:
    return Status(Code.ERROR, (message,))


SKIP = Code.SKIP
