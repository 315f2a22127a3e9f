"""QueueingHints: which cluster events may make a rejected pod schedulable, as each plugin judges it.

Every profile gets a :data:`QueueingHintMap` (registered event -> the plugins that registered it, each
with its hint function), built by :func:`build_queueing_hint_map` as kube-scheduler's
buildQueueingHintMap does. :class:`QueueingHints` answers the queue's question for one pod and one
event (isPodWorthRequeuing): skip it, queue it after its backoff, or queue it at once (a plugin that
answered Pending says the event may help).

With SchedulerQueueingHints off (v1.30) every hint is the default "queue", and events match by v1.30's
rule; with it on (v1.34) plugins' own hints run, and events match by v1.34's stricter rule.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Generic, TypeVar

from kubesched.api.objects import Pod
from kubesched.framework.interfaces import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    QueueingHintFn,
)
from kubesched.queue import events as ev
from kubesched.queue.queued_pod_info import QueuedPodInfo

log = logging.getLogger(__name__)


class Strategy(IntEnum):
    """Where an event sends a pod waiting in the unschedulable pool (kube-scheduler's queueingStrategy)."""

    SKIP = 0
    AFTER_BACKOFF = 1
    IMMEDIATELY = 2


def default_queueing_hint(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """The hint of a registration without one: the event may always help."""
    return QueueingHint.QUEUE


@dataclass(frozen=True, slots=True)
class QueueingHintFunction:
    """One plugin's hint for one registered event."""

    plugin_name: str
    fn: QueueingHintFn = default_queueing_hint

    @property
    def always_queue(self) -> bool:
        return self.fn is default_queueing_hint


QueueingHintMap = dict[ClusterEvent, list[QueueingHintFunction]]
Registration = ClusterEvent | ClusterEventWithHint


def as_event_with_hint(registration: Registration) -> ClusterEventWithHint:
    return registration if isinstance(registration, ClusterEventWithHint) else ClusterEventWithHint(registration)


def build_queueing_hint_map(
    registrations: Iterable[tuple[str, Sequence[Registration]]], hints_enabled: bool
) -> QueueingHintMap:
    """Registered event -> hint functions, for one profile's plugins (name, registered events).

    A plugin registering nothing is left out. Without a hint, or with hints disabled, the hint is the
    default. A plugin asking for node additions but not taint updates also gets ``Node/UpdateNodeTaint``
    with the default hint (kube-scheduler keeps this in v1.34 too)."""
    out: QueueingHintMap = {}
    for plugin, events in registrations:
        wants_node_add = wants_taint_update = False
        for registration in events:
            with_hint = as_event_with_hint(registration)
            event, fn = with_hint.event, with_hint.queueing_hint_fn
            if fn is None or not hints_enabled:
                fn = default_queueing_hint
            if event.resource == ev.NODE:
                wants_node_add |= bool(event.action & ActionType.ADD)
                wants_taint_update |= bool(event.action & ActionType.UPDATE_NODE_TAINT)
            out.setdefault(event, []).append(QueueingHintFunction(plugin, fn))
        if wants_node_add and not wants_taint_update:
            out.setdefault(ClusterEvent(ev.NODE, ActionType.UPDATE_NODE_TAINT), []).append(QueueingHintFunction(plugin))
    return out


def hint_map_from_event_map(event_map: Mapping[ClusterEvent, Iterable[str]]) -> QueueingHintMap:
    """A v1.30 event map (event -> plugin names) as a hint map of default hints."""
    return {event: [QueueingHintFunction(name) for name in sorted(names)] for event, names in event_map.items()}


def unrolled_wildcard_events() -> list[ClusterEvent]:
    """What a plugin that says nothing about events is taken to register: every action of every
    resource (kube-scheduler's UnrollWildCardResource; used for the extenders)."""
    resources = (
        ev.POD,
        ev.NODE,
        ev.PERSISTENT_VOLUME,
        ev.PERSISTENT_VOLUME_CLAIM,
        ev.CSI_NODE,
        ev.CSI_DRIVER,
        ev.CSI_STORAGE_CAPACITY,
        ev.STORAGE_CLASS,
        ev.RESOURCE_CLAIM,
        ev.DEVICE_CLASS,
    )
    return [ClusterEvent(resource, ActionType.ALL) for resource in resources]


T = TypeVar("T")


class PerPod(Generic[T]):
    """What a hint derives from the pod it judges, computed once per pod object.

    Hints run for every (event, rejected pod) pair: a plugin parses the pod once here instead of on
    every call. Entries are keyed by uid and valid for that very pod object; the memo forgets
    everything when it grows past ``limit`` pods."""

    __slots__ = ("_compute", "_entries", "_limit")

    def __init__(self, compute: Callable[[Pod], T], limit: int = 4096) -> None:
        self._compute = compute
        self._entries: dict[str, tuple[Pod, T]] = {}
        self._limit = limit

    def __call__(self, pod: Pod) -> T:
        entry = self._entries.get(pod.uid)
        if entry is not None and entry[0] is pod:
            return entry[1]
        value = self._compute(pod)
        if len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[pod.uid] = (pod, value)
        return value


def object_meta(obj: Any) -> tuple[str, str]:
    """(namespace, name) of an event's object: a parsed one (``meta``) or an object dict."""
    meta = getattr(obj, "meta", None)
    if meta is not None:
        return str(meta.namespace or ""), str(meta.name or "")
    raw = (obj.get("metadata") if isinstance(obj, Mapping) else None) or {}
    return str(raw.get("namespace") or ""), str(raw.get("name") or "")


Matcher = Callable[[ClusterEvent, ClusterEvent], bool]


def match_v130(registered: ClusterEvent, incoming: ClusterEvent) -> bool:
    return incoming.matches(registered)


_Key = tuple[str, str, int]
#: The profile name of a hint map that serves every profile.
ANY_PROFILE = ""


class QueueingHints:
    """The queue's hint maps per profile, with the matching of each incoming event cached.

    An incoming event is matched against the registrations once per profile (and per resource and
    action); each pod then runs only the hints of the plugins that rejected it.
    """

    def __init__(
        self,
        maps: Mapping[str, QueueingHintMap],
        *,
        v134_matching: bool,
        on_error: Callable[[BaseException, str, ClusterEvent, QueuedPodInfo], None] | None = None,
    ) -> None:
        self._maps = {profile: dict(m) for profile, m in maps.items()}
        self._match: Matcher = ev.match_cluster_events if v134_matching else match_v130
        self._v134 = v134_matching
        self._fns: dict[_Key, tuple[QueueingHintFunction, ...] | None] = {}
        self._interested: dict[tuple[str, int], frozenset[str]] = {}
        self._of_interest: dict[tuple[str, int], bool] = {}
        self._on_error = on_error

    @property
    def maps(self) -> Mapping[str, QueueingHintMap]:
        return self._maps

    def plugin_events(self) -> dict[str, list[ClusterEvent]]:
        """Every event each plugin registered, in any profile (the gating events of its PreEnqueue)."""
        out: dict[str, list[ClusterEvent]] = {}
        for hint_map in self._maps.values():
            for event, fns in hint_map.items():
                for f in fns:
                    out.setdefault(f.plugin_name, []).append(event)
        return out

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        """Whether some profile's plugin registered an event that ``event`` matches (wildcards: always)."""
        if event.is_wildcard():
            return True
        key = (event.resource, int(event.action))
        cached = self._of_interest.get(key)
        if cached is None:
            cached = any(self._match(registered, event) for m in self._maps.values() for registered in m)
            self._of_interest[key] = cached
        return cached

    def interested_plugins(self, event: ClusterEvent) -> frozenset[str]:
        """Plugins, in any profile, whose registrations ``event`` matches."""
        key = (event.resource, int(event.action))
        names = self._interested.get(key)
        if names is None:
            names = frozenset(
                f.plugin_name
                for m in self._maps.values()
                for registered, fns in m.items()
                if self._match(registered, event)
                for f in fns
            )
            self._interested[key] = names
        return names

    def _hint_fns(self, profile: str, event: ClusterEvent) -> tuple[QueueingHintFunction, ...] | None:
        key = (profile, event.resource, int(event.action))
        if key in self._fns:
            return self._fns[key]
        hint_map = self._maps.get(profile)
        if hint_map is None:
            hint_map = self._maps.get(ANY_PROFILE)
        fns = (
            None
            if hint_map is None
            else tuple(f for registered, fns in hint_map.items() if self._match(registered, event) for f in fns)
        )
        self._fns[key] = fns
        return fns

    def worth_requeuing(self, qpi: QueuedPodInfo, event: ClusterEvent, old_obj: Any, new_obj: Any) -> Strategy:
        """isPodWorthRequeuing: what ``event`` means for a pod waiting in the unschedulable pool."""
        pending = qpi.pending_plugins
        rejectors = qpi.unschedulable_plugins | pending if pending else qpi.unschedulable_plugins
        if not rejectors:
            return Strategy.AFTER_BACKOFF
        if event.is_wildcard():
            # v1.34: a wildcard carrying an object is aimed at that pod alone (ForceActivate).
            if self._v134 and new_obj is not None and not (isinstance(new_obj, Pod) and new_obj.uid == qpi.pod.uid):
                return Strategy.SKIP
            return Strategy.AFTER_BACKOFF
        fns = self._hint_fns(qpi.pod.scheduler_name, event)
        if fns is None:
            return Strategy.AFTER_BACKOFF  # a profile the queue was not told about
        strategy = Strategy.SKIP
        for f in fns:
            if f.plugin_name not in rejectors:
                continue
            if not f.always_queue and self._run(f, qpi, event, old_obj, new_obj) is QueueingHint.QUEUE_SKIP:
                continue
            if f.plugin_name in pending:
                return Strategy.IMMEDIATELY
            if not pending:
                return Strategy.AFTER_BACKOFF
            strategy = Strategy.AFTER_BACKOFF
        return strategy

    def _run(
        self, f: QueueingHintFunction, qpi: QueuedPodInfo, event: ClusterEvent, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """One hint; a hint that raises or answers something else than a QueueingHint counts as QUEUE."""
        try:
            hint = f.fn(qpi.pod, old_obj, new_obj)
        except Exception as err:
            self._report(err, f.plugin_name, event, qpi)
            return QueueingHint.QUEUE
        if hint is QueueingHint.QUEUE_SKIP or hint is QueueingHint.QUEUE:
            return hint
        if isinstance(hint, QueueingHint):
            return QueueingHint(hint)
        self._report(TypeError(f"returned {type(hint).__name__}, expected QueueingHint"), f.plugin_name, event, qpi)
        return QueueingHint.QUEUE

    def _report(self, err: BaseException, plugin: str, event: ClusterEvent, qpi: QueuedPodInfo) -> None:
        if self._on_error is not None:
            self._on_error(err, plugin, event, qpi)
        else:
            log.error(
                "QueueingHintFn returns error: plugin %s, event %s, pod %s: %s",
                plugin,
                event.event_label,
                qpi.pod.key,
                err,
            )
