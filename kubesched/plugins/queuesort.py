"""PrioritySort: the default order of the active queue."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from kubesched.api.objects import Pod
from kubesched.framework.handle import Handle
from kubesched.plugins import names

NAME = names.PRIORITY_SORT


class QueuedPod(Protocol):
    """What the sort reads from a queued pod info."""

    @property
    def pod(self) -> Pod: ...

    @property
    def timestamp(self) -> datetime: ...


class PrioritySort:
    """Higher priority first; among equal priorities, the pod queued earlier first."""

    name = NAME

    def less(self, a: QueuedPod, b: QueuedPod) -> bool:
        pa, pb = a.pod.priority, b.pod.priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)

    def sort_key(self, info: QueuedPod) -> tuple[int, datetime]:
        """A heap key ordering exactly like :meth:`less` (a < b on keys iff less(a, b))."""
        return (-info.pod.priority, info.timestamp)


def new(args: Any, handle: Handle) -> PrioritySort:
    return PrioritySort()
