"""Why each pod deleted during a simulation went: preempted, completed, timeline, scale-down, garbage-collected.

The driver sees a deletion as a watch event, and the event does not say who deleted the pod. Every
deleter is known exactly instead, never guessed from timing:

* **preempted**: kube-scheduler marks a victim with the ``DisruptionTarget`` condition (reason
  ``PreemptionByScheduler``) before deleting it, so the deleted object carries it; the preemptor is the
  pod whose attempt chose the victim.
* **completed**: the driver deletes a pod whose ``kubesched.io/duration`` ran out itself, and notes the
  resourceVersion the cluster gave that deletion.
* **timeline**: a step's writes are the resourceVersions the cluster handed out while it ran: a deleted
  pod, the pods of a deleted namespace, the pods of a drained node.
* **scale-down** and **garbage-collected**: the workload controllers report each pod they delete
  (:data:`~kubesched.embedded.workloads.manager.SCALE_DOWN`: fewer replicas, a daemon pod whose node
  no longer fits, a pod of an old revision replaced; :data:`~kubesched.embedded.workloads.manager.GARBAGE_COLLECTED`:
  its owner was deleted).

Anything else (a pod deleted through the Python API by hand) is ``deleted``.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.embedded.workloads.manager import GARBAGE_COLLECTED, SCALE_DOWN
from kubesched.util.slots import slot_builder

PREEMPTED = "preempted"
COMPLETED = "completed"
TIMELINE = "timeline"
#: A deletion no part of the simulation made.
OTHER = "deleted"
REASONS = (PREEMPTED, TIMELINE, COMPLETED, SCALE_DOWN, GARBAGE_COLLECTED, OTHER)

#: The condition kube-scheduler puts on a victim before deleting it (and the reason it gives).
_DISRUPTION_TARGET = "DisruptionTarget"
_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


@dataclass(frozen=True, slots=True)
class Deletion:
    """One pod deleted during a run: when (virtual seconds), from which node, why and by whom.

    ``by`` is the preemptor (``namespace/name``) for ``preempted``, the step (``FILE: step N: drain
    Node/x``) for ``timeline``, the workload (``ReplicaSet ns/name``) for ``scale-down`` and
    ``garbage-collected``; None otherwise or when unknown.
    """

    pod: str
    reason: str
    at: float
    node: str | None = None
    by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "reason": self.reason, "at": self.at, "node": self.node, "by": self.by}


_make_deletion = slot_builder(Deletion)


def _version(obj: Mapping[str, Any]) -> int | None:
    text = str((obj.get("metadata") or {}).get("resourceVersion") or "")
    return int(text) if text.isdigit() else None


def _preempted(obj: Mapping[str, Any]) -> bool:
    return any(
        c.get("type") == _DISRUPTION_TARGET
        and c.get("reason") == _PREEMPTION_BY_SCHEDULER
        and c.get("status") == "True"
        for c in (obj.get("status") or {}).get("conditions") or ()
    )


def _owner(obj: Mapping[str, Any]) -> str | None:
    """``Kind namespace/name`` of the object's controller."""
    meta = obj.get("metadata") or {}
    for ref in meta.get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller"):
            return f"{ref.get('kind')} {meta.get('namespace') or 'default'}/{ref.get('name')}"
    return None


class DeletionLog:
    """The deletions of a run, each with its reason; deleters say what they delete before the event comes."""

    def __init__(self, cluster: EmbeddedCluster) -> None:
        self.cluster = cluster
        self.deletions: list[Deletion] = []
        self._noted: dict[int, tuple[str, str | None]] = {}  # resourceVersion of a deletion -> why
        self._spans: deque[tuple[int, int, str, str | None]] = deque()  # (after, up to, why, by)
        self._preemptors: dict[str, str] = {}  # victim -> the pod whose attempt chose it, latest first

    def note(self, deleted: Mapping[str, Any], reason: str, by: str | None = None) -> None:
        """``deleted`` (the object a delete call returned) was deleted for ``reason``."""
        version = _version(deleted)
        if version is not None:
            self._noted[version] = (reason, by)

    def note_workload_deletion(self, deleted: Mapping[str, Any], reason: str) -> None:
        """What the controller manager reports: a pod it deleted (scale-down or garbage collection)."""
        self.note(deleted, reason, _owner(deleted))

    @contextlib.contextmanager
    def span(self, reason: str, by: str | None = None) -> Iterator[None]:
        """Every deletion the cluster makes inside the block is for ``reason``."""
        before = int(self.cluster.resource_version())
        try:
            yield
        finally:
            after = int(self.cluster.resource_version())
            if after > before:
                self._spans.append((before, after, reason, by))

    def preempting(self, preemptor: str, victims: Iterable[str]) -> None:
        """An attempt of ``preemptor`` chose ``victims`` (their deletions come as watch events)."""
        for victim in victims:
            self._preemptors[victim] = preemptor

    def observe(self, obj: Mapping[str, Any], key: str, at: float) -> Deletion:
        """A pod's DELETED event: the deletion, with why, appended to :attr:`deletions`."""
        reason, by = self._why(obj, key)
        # One per deleted pod: straight through the slots (what __init__ makes, at half the cost).
        deletion = _make_deletion(key, reason, at, (obj.get("spec") or {}).get("nodeName") or None, by)
        self.deletions.append(deletion)
        return deletion

    def _why(self, obj: Mapping[str, Any], key: str) -> tuple[str, str | None]:
        version = _version(obj)
        if version is not None:
            noted = self._noted.pop(version, None)
            if noted is not None:
                return noted
            while self._spans and self._spans[0][1] < version:
                self._spans.popleft()  # events come in resourceVersion order: older spans are over
            for after, up_to, reason, by in self._spans:
                if after < version <= up_to:
                    return reason, by
        if _preempted(obj):
            return PREEMPTED, self._preemptors.get(key)
        return OTHER, None
