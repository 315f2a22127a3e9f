"""The one surface the scheduler talks to when it needs the cluster.

It is shaped like the Kubernetes API (list + resourceVersion, watch, the pods/binding subresource,
status patches, events), so that the embedded in-memory cluster used by the simulator and a client of a
real API server are interchangeable. Objects are plain dicts exactly as the API server serves them.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Collection
from dataclasses import dataclass
from types import EllipsisType
from typing import Any, ClassVar, Literal, Protocol

EventType = Literal["ADDED", "MODIFIED", "DELETED"]


class ApiError(Exception):
    """An error as the API server reports it: HTTP status ``code``, machine ``reason`` and ``message``.

    Callers branch on the class (or ``reason``) exactly as client-go callers branch on
    ``apierrors.IsConflict`` and friends; the message is the server's text, meant for events and logs.
    """

    default_code: ClassVar[int] = 500
    default_reason: ClassVar[str] = "InternalError"

    def __init__(self, message: str, *, code: int | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = self.default_code if code is None else code
        self.reason = self.default_reason if reason is None else reason

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class NotFound(ApiError):
    """404: the object does not exist (``pods "web-1" not found``)."""

    default_code = 404
    default_reason = "NotFound"

    @classmethod
    def of(cls, resource: str, name: str) -> NotFound:
        return cls(f'{resource} "{name}" not found')


class Conflict(ApiError):
    """409: a precondition failed (stale resourceVersion, UID mismatch, pod already bound)."""

    default_code = 409
    default_reason = "Conflict"

    @classmethod
    def of(cls, resource: str, name: str, detail: str) -> Conflict:
        return cls(f'Operation cannot be fulfilled on {resource} "{name}": {detail}')

    @classmethod
    def modified(cls, resource: str, name: str) -> Conflict:
        return cls.of(
            resource,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )


class AlreadyExists(ApiError):
    """409: create of an object whose name is taken (``pods "web-1" already exists``)."""

    default_code = 409
    default_reason = "AlreadyExists"

    @classmethod
    def of(cls, resource: str, name: str) -> AlreadyExists:
        return cls(f'{resource} "{name}" already exists')


class Invalid(ApiError):
    """422: the object (or the request) cannot be accepted as written."""

    default_code = 422
    default_reason = "Invalid"

    @classmethod
    def of(cls, kind: str, name: str, path: str, detail: str) -> Invalid:
        return cls(f'{kind} "{name}" is invalid: {path}: {detail}')


class Forbidden(ApiError):
    """403: an admission plugin refused the request (``pods "x" is forbidden: ...``)."""

    default_code = 403
    default_reason = "Forbidden"

    @classmethod
    def of(cls, resource: str, name: str, detail: str) -> Forbidden:
        return cls(f'{resource} "{name}" is forbidden: {detail}')


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One change seen by a watcher.

    ``old`` is the previous state for MODIFIED (informers hand both to update handlers), None otherwise;
    for DELETED ``obj`` is the last state of the object.
    """

    type: EventType
    kind: str
    obj: dict[str, Any]
    old: dict[str, Any] | None = None


class Watch(Protocol):
    """A running watch; ``stop`` ends delivery to its handler (events already delivered stay delivered)."""

    def stop(self) -> None: ...


class Cluster(Protocol):
    """What the scheduler may ask of a cluster.

    Every returned object is the caller's own copy. Cluster-scoped kinds take ``namespace=None``.
    """

    #: True for a cluster living in this process (the embedded one): nothing outside the process, an
    #: HTTP extender say, can reach it, so the scheduler writes what such a party would write for it.
    in_process: bool

    def list(self, kind: str, namespace: str | None = None) -> tuple[builtins.list[dict[str, Any]], str]:
        """All objects of ``kind`` (in ``namespace`` if given) and the list's resourceVersion."""
        ...

    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any]: ...

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Admit and store ``obj``; returns the stored object (uid, resourceVersion, defaults filled in)."""
        ...

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Replace the stored object; Conflict when obj's resourceVersion is set and stale."""
        ...

    def update_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The status subresource (a ResourceClaim's allocation and reservations): replace the status only."""
        ...

    def delete(self, kind: str, namespace: str | None, name: str, *, uid: str | None = None) -> dict[str, Any]:
        """Delete at once (no grace period); Conflict when ``uid`` differs. Returns the last state."""
        ...

    def watch(self, kinds: Collection[str], handler: Callable[[WatchEvent], None]) -> Watch:
        """Deliver every later change of ``kinds`` to ``handler`` in order (list first for the present)."""
        ...

    def bind(self, namespace: str, name: str, node_name: str, *, uid: str | None = None) -> None:
        """The pods/binding subresource: set spec.nodeName; Conflict if the pod is already bound."""
        ...

    def patch_pod_status(
        self,
        namespace: str,
        name: str,
        *,
        conditions: builtins.list[dict[str, Any]] | None = None,
        nominated_node_name: str | EllipsisType | None = ...,
        reply: bool = True,
    ) -> dict[str, Any]:
        """Merge ``conditions`` by type; set status.nominatedNodeName ("" or None clears, ``...`` keeps).
        ``reply=False``: the caller drops the answer, so an empty dict may come back instead."""
        ...

    def record_event(self, event: dict[str, Any]) -> None:
        """Record a core/v1 Event (best effort, as an event recorder is)."""
        ...
