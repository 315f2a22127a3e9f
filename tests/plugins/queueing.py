"""What the plugins' queueing-hint tests share: handles pinned to a version, and pods and nodes to feed hints.

A hint table row names the behaviour, the pod the plugin rejected, the event's old and new objects,
and the hint expected; :func:`check` runs one row.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.config.features import feature_gates
from kubesched.framework.interfaces import ClusterEvent, ClusterEventWithHint, QueueingHint
from tests.factories import node_dict, pod_dict

#: A framework handle as v1.30 builds plugins (SchedulerQueueingHints off) and as v1.34 does.
V130 = SimpleNamespace(features=feature_gates("1.30"))
V134 = SimpleNamespace(features=feature_gates("1.34"))

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def pod(name: str = "p", **kw: Any) -> Pod:
    return Pod.from_dict(pod_dict(name, **kw))


def node(name: str = "n", **kw: Any) -> Node:
    return Node.from_dict(node_dict(name, **kw))


def registrations(plugin: Any) -> list[tuple[ClusterEvent, bool]]:
    """A plugin's registered events, each with whether it carries a hint of its own."""
    out = []
    for reg in plugin.events_to_register():
        if isinstance(reg, ClusterEventWithHint):
            out.append((reg.event, reg.queueing_hint_fn is not None))
        else:
            out.append((reg, False))
    return out


def hint_for(plugin: Any, event: ClusterEvent) -> Callable[[Pod, Any, Any], QueueingHint]:
    """The hint a plugin registered for exactly ``event``."""
    for reg in plugin.events_to_register():
        if isinstance(reg, ClusterEventWithHint) and reg.event == event and reg.queueing_hint_fn is not None:
            return reg.queueing_hint_fn
    raise AssertionError(f"no hint registered for {event}")
