"""An in-memory cluster: the API server, its admission plugins and watch fan-out, nothing else.

The simulator runs the real scheduler against it. Two things make that deterministic: time and UIDs come
from injected sources, and watch events are queued until ``deliver_pending`` is called, so the simulation
decides exactly when the scheduler's informers see a change (``synchronous=True`` delivers at once).

Stored dicts are never mutated in place: every write stores a fresh dict, so queued events can point at
stored states and copies are made only when something leaves the cluster.
"""

from __future__ import annotations

import builtins
import threading
import uuid
from collections import deque
from collections.abc import Callable, Collection, Iterable
from datetime import UTC, datetime, timedelta
from types import EllipsisType
from typing import Any

from kubesched.api.errors import ObjectError
from kubesched.api.objects import parse_time
from kubesched.api.timestamps import format_time
from kubesched.cluster.kinds import KindInfo, kind_info
from kubesched.cluster.protocol import (
    AlreadyExists,
    Conflict,
    EventType,
    Invalid,
    NotFound,
    WatchEvent,
)
from kubesched.config.features import FeatureGates, feature_gates
from kubesched.embedded import dra_admission
from kubesched.embedded.admission import admit_create, admit_update, system_priority_classes
from kubesched.embedded.stored import Key, copy_json, key_of, merge_conditions, shallow_status_copy
from kubesched.util.slots import slot_builder

_NAME_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # what the API server uses for generateName
#: Recorded events live this long (kube-apiserver's --event-ttl default) ...
EVENT_TTL = timedelta(hours=1)
#: ... and at most this many are kept, the oldest going first: a simulation writes events far faster
#: than an hour of its clock passes.
MAX_EVENTS = 10_000


_copy: Callable[[dict[str, Any]], dict[str, Any]] = copy_json  # the stored objects


#: WatchEvent(...) with its slots set straight: every write to a watched kind queues one.
_watch_event = slot_builder(WatchEvent)

_EVENT = kind_info("Event")
_POD = kind_info("Pod")


def _unregistered(info: KindInfo, api_version: object) -> Invalid:
    return Invalid(
        f"no kind {info.kind!r} is registered for version {api_version!r} (expected {' or '.join(info.api_versions)})"
    )


def _utc_now() -> datetime:
    return datetime.now(UTC)


class _Watcher:
    """One registered watch: the kinds it wants and the first event sequence number it may see."""

    __slots__ = ("_cluster", "active", "after_seq", "handler", "kinds", "private_copies")

    def __init__(
        self,
        cluster: EmbeddedCluster,
        kinds: frozenset[str],
        handler: Callable[[WatchEvent], None],
        after_seq: int,
        private_copies: bool = True,
    ) -> None:
        self._cluster = cluster
        self.kinds = kinds
        self.handler = handler
        self.private_copies = private_copies
        self.after_seq = after_seq
        self.active = True

    def stop(self) -> None:
        self.active = False
        self._cluster._remove_watcher(self)

    def existing(self, kind: str) -> builtins.list[dict[str, Any]]:
        """What exists of ``kind`` now, in key order, handed over as this watch hands objects over: the
        stored states themselves when it reads them without copies. Listing after watching misses nothing."""
        if self.private_copies:
            return self._cluster.list(kind)[0]
        with self._cluster._lock:
            bucket = self._cluster._store.get(kind, {})
            return [bucket[k] for k in sorted(bucket)]


class EmbeddedCluster:
    """The Cluster protocol in memory, with API-server defaulting and admission applied on create.

    ``clock`` stamps creationTimestamp, condition transition times and events; ``uid_factory`` makes
    metadata.uid. Both are injected so that a simulation replays identically.
    """

    in_process = True

    def __init__(
        self,
        clock: Callable[[], datetime] = _utc_now,
        uid_factory: Callable[[], str] | None = None,
        *,
        synchronous: bool = False,
        read_only_watchers: bool = False,
        event_ttl: timedelta = EVENT_TTL,
        max_events: int = MAX_EVENTS,
        features: FeatureGates | None = None,
    ) -> None:
        #: The emulated version and gates: what this API server does to an object on create follows
        #: them, as kube-apiserver's own feature gates decide (matchLabelKeys merges, pod-level resources).
        self.features = features or feature_gates()
        #: From v1.34 a pod's metadata.generation is 1 at creation and counts its spec changes.
        self._pod_generation = self.features.at_least("1.34")
        self._clock = clock
        self._uid_factory: Callable[[], str] = uid_factory or (lambda: str(uuid.uuid4()))
        self._synchronous = synchronous
        #: Every watcher is read-only (see :meth:`watch`): what a simulator whose consumers never change
        #: what they are handed uses to skip a copy per event and watcher.
        self._read_only_watchers = read_only_watchers
        self._lock = threading.RLock()
        self._store: dict[str, dict[Key, dict[str, Any]]] = {}
        self._rv = 0
        self._event_seq = 0
        self._queue: deque[tuple[int, WatchEvent]] = deque()
        self._watchers: list[_Watcher] = []
        #: The watchers of each watched kind, in registration order (kept with the watchers: each write
        #: asks whether its kind is watched, each event who watches it).
        self._watchers_of: dict[str, tuple[_Watcher, ...]] = {}
        self._delivery_lock = threading.RLock()
        self._delivering = False
        self._user_status_uids: set[str] = set()
        self._event_ttl = event_ttl
        self._max_events = max_events
        #: Events written through record_event, oldest first, with when they were written.
        self._events: deque[tuple[datetime, Key]] = deque()
        #: The latest start time of the pods created running (see :meth:`_kubelet_start_time`).
        self._newest_start: datetime | None = None
        for pc in system_priority_classes():
            self.create(pc)

    # ------------------------------------------------------------------------------------------------
    # reads

    def list(self, kind: str, namespace: str | None = None) -> tuple[builtins.list[dict[str, Any]], str]:
        """Objects in key order (namespace, name), as etcd returns them, and the current resourceVersion."""
        info = kind_info(kind)
        ns = self._namespace_arg(info, namespace, allow_all=True)
        with self._lock:
            bucket = self._store.get(kind, {})
            keys = sorted(k for k in bucket if ns is None or k[0] == ns)
            return [_copy(bucket[k]) for k in keys], str(self._rv)

    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
        info = kind_info(kind)
        ns = self._namespace_arg(info, namespace, allow_all=False) or ""
        with self._lock:
            obj = self._store.get(kind, {}).get((ns, name))
            if obj is None:
                raise NotFound.of(info.qualified_resource, name)
            return _copy(obj)

    # AdmissionStore: admission plugins read the store under the write lock, without copies.
    def lookup(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        return self._store.get(kind, {}).get((namespace or "", name))

    def objects(self, kind: str) -> Iterable[dict[str, Any]]:
        return list(self._store.get(kind, {}).values())

    def count(self, kind: str) -> int:
        """How many objects of ``kind`` are stored (read by controllers that have nothing to do without any)."""
        return len(self._store.get(kind, {}))

    def now(self) -> str:
        """The clock's current time as the API serialises it (what controllers stamp on status)."""
        return format_time(self._clock())

    def resource_version(self) -> str:
        """The resourceVersion of the last write."""
        with self._lock:
            return str(self._rv)

    def pdb_status_is_user_provided(self, namespace: str, name: str) -> bool:
        """Whether this PodDisruptionBudget was created with a status (then no controller touches it)."""
        with self._lock:
            obj = self._store.get("PodDisruptionBudget", {}).get((namespace, name))
            return obj is not None and obj["metadata"]["uid"] in self._user_status_uids

    # ------------------------------------------------------------------------------------------------
    # writes

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        return _copy(self._create(obj))

    def load(self, obj: dict[str, Any]) -> None:
        """Create ``obj`` as :meth:`create` does, without the copy it hands back: what a scenario loader,
        which never reads the result, calls for each of thousands of objects. A uid the object carries is
        kept: loading restores a cluster's state (a snapshot), whose claims' ``reservedFor`` and owners'
        references name the objects by uid."""
        self._create(obj, keep_uid=True)

    def _create(self, obj: dict[str, Any], *, owned: bool = False, keep_uid: bool = False) -> dict[str, Any]:
        """Create ``obj`` and return the stored object itself (callers must not change it). ``owned``:
        the caller built ``obj`` for this call and lets it go, so it is stored without a copy.
        ``keep_uid``: a non-empty uid in ``obj`` stays (else the server assigns one, as on any create)."""
        info, obj = self._incoming(obj, take_copy=not owned)
        meta = obj["metadata"]
        with self._lock:
            if not meta.get("name") and meta.get("generateName"):
                meta["name"] = self._generate_name(info, meta)
            name = meta.get("name")
            if not isinstance(name, str) or not name:
                raise Invalid.of(info.kind, "", "metadata.name", "Required value: name or generateName is required")
            ns = meta.get("namespace", "")
            self._stamp_new(info, meta, ns, name, keep_uid=keep_uid)
            if info.kind == "Pod" and not self._pod_generation:
                del meta["generation"]
            admit_create(obj, self, self.features)
            if info.kind == "Pod":
                self._note_start(obj)
            if info.namespaced:
                self._ensure_namespace(ns)
            if info.kind == "PodDisruptionBudget" and obj.get("status"):
                self._user_status_uids.add(meta["uid"])
            stored = self._store_new(obj, admitted=True)
        self._after_write()
        return stored

    def _stamp_new(self, info: KindInfo, meta: dict[str, Any], ns: str, name: str, *, keep_uid: bool) -> None:
        """What every create does to a new object's metadata, once it is named (the caller holds the
        lock): refused when the name is taken, then a fresh uid, creation time and generation."""
        if (ns, name) in self._store.get(info.kind, {}):
            raise AlreadyExists.of(info.qualified_resource, name)
        meta.pop("resourceVersion", None)
        meta.pop("deletionTimestamp", None)
        if not (keep_uid and isinstance(meta.get("uid"), str) and meta["uid"]):
            meta["uid"] = self._uid_factory()
        if not meta.get("creationTimestamp"):
            meta["creationTimestamp"] = self.now()
        meta["generation"] = 1

    def _ensure_namespace(self, ns: str) -> None:
        """A namespaced object's namespace exists once the object does (the caller holds the lock)."""
        if ("", ns) not in self._store.get("Namespace", {}):
            self._store_new({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        info, obj = self._incoming(obj)
        meta = obj["metadata"]
        with self._lock:
            current = self._stored_for_write(info, meta)
            cur_meta = current["metadata"]
            for key in ("uid", "creationTimestamp", "generation"):
                if key in cur_meta:
                    meta[key] = cur_meta[key]
                else:
                    meta.pop(key, None)
            bump = info.kind != "Pod" and obj.get("spec") != current.get("spec")
            admit_update(obj, current, self.features)
            # A pod's spec is compared as stored, defaults and admission applied (updatePodGeneration).
            if bump or (info.kind == "Pod" and self._pod_generation and obj.get("spec") != current.get("spec")):
                meta["generation"] = cur_meta.get("generation", 0) + 1
            stored = self._store_update(info, current, obj)
        self._after_write()
        return _copy(stored)

    def _stored_for_write(self, info: KindInfo, meta: dict[str, Any]) -> dict[str, Any]:
        """The stored object a write of ``meta`` replaces (caller holds the lock): the name is required, a
        set resourceVersion must be the stored one, and a set uid must match."""
        name = meta.get("name")
        if not isinstance(name, str) or not name:
            raise Invalid.of(info.kind, "", "metadata.name", "Required value: name is required")
        current = self._current(info, meta.get("namespace", ""), name)
        cur_meta = current["metadata"]
        rv = meta.get("resourceVersion")
        if rv and str(rv) != cur_meta["resourceVersion"]:
            raise Conflict.modified(info.qualified_resource, name)
        self._check_uid(info, name, meta.get("uid"), cur_meta["uid"])
        return current

    def update_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The status subresource (a ResourceClaim's): the stored object with ``obj``'s status; Conflict when
        obj's resourceVersion is set and stale. Spec and metadata changes in ``obj`` are ignored."""
        info, obj = self._incoming(obj)
        with self._lock:
            current = self._stored_for_write(info, obj["metadata"])
            new = dra_admission.status_update(current, obj, self)
            stored = self._store_update(info, current, new)
        self._after_write()
        return _copy(stored)

    def delete(
        self, kind: str, namespace: str | None, name: str, *, uid: str | None = None, reply: bool = True
    ) -> dict[str, Any]:
        """Delete at once; deleting a Namespace deletes everything in it first (what its finalizer does).
        Without ``reply`` only a copy of the deleted object's metadata comes back (its resourceVersion
        is what a caller noting the deletion reads), not a copy of the whole object."""
        info = kind_info(kind)
        ns = self._namespace_arg(info, namespace, allow_all=False) or ""
        with self._lock:
            current = self._current(info, ns, name)
            self._check_uid(info, name, uid, current["metadata"]["uid"])
            if kind == "Namespace":
                for other_kind, bucket in list(self._store.items()):
                    for key in sorted(k for k in bucket if k[0] == name):
                        self._store_delete(other_kind, key)
            last = self._store_delete(kind, (ns, name))
        self._after_write()
        return _copy(last) if reply else {"metadata": copy_json(last["metadata"])}

    def bind(self, namespace: str, name: str, node_name: str, *, uid: str | None = None) -> None:
        """The pods/binding subresource: spec.nodeName and PodScheduled=True, refused if already bound."""
        info = _POD
        with self._lock:
            current = self._current(info, namespace, name)
            self._check_uid("pods/binding", name, uid, current["metadata"]["uid"])
            if current["metadata"].get("deletionTimestamp"):
                raise Conflict.of("pods/binding", name, f"pod {name} is being deleted, cannot be assigned to a host")
            bound_to = (current.get("spec") or {}).get("nodeName")
            if bound_to:
                raise Conflict.of("pods/binding", name, f'pod {name} is already assigned to node "{bound_to}"')
            new = shallow_status_copy(current)
            new["spec"] = {**(current.get("spec") or {}), "nodeName": node_name}
            status = new["status"]
            # The node's kubelet admits the pod at once and reports when it started. (Its phase stays
            # as it is: nothing here runs containers, and workloads read "bound" as running.)
            if not status.get("startTime"):
                status["startTime"] = self._kubelet_start_time()
            scheduled = {"type": "PodScheduled", "status": "True", "lastProbeTime": None}
            conditions = status.get("conditions")
            status["conditions"] = (
                merge_conditions(conditions, [scheduled], self.now(), replace=True)
                if conditions
                else [{**scheduled, "lastTransitionTime": self.now()}]  # what merging into none makes
            )
            if node_name:  # spec.nodeName was empty: a change, nothing to compare
                self._store_changed(info, current, new)
            else:
                self._store_update(info, current, new)
        self._after_write()

    def _note_start(self, pod: dict[str, Any]) -> None:
        """Remember the start of a pod created running (bound, or with a start time of its own)."""
        try:
            started = parse_time((pod.get("status") or {}).get("startTime"), "status.startTime")
        except ObjectError:  # the scheduler reports the pod as malformed; no start to remember
            return
        if started is not None and (self._newest_start is None or started > self._newest_start):
            self._newest_start = started

    def _kubelet_start_time(self) -> str:
        """When a pod bound now starts, as the kubelet stamps it: now, on a timeline that begins after
        the scenario's objects. Their timestamps follow their place in the scenario and may run ahead of
        the clock; a pod bound during a run started after every pod that was running before it was
        bound, so it starts no earlier than a second after the latest of those starts."""
        now = self._clock()
        if now.tzinfo is None:
            now = now.replace(tzinfo=UTC)
        if self._newest_start is not None and self._newest_start >= now:
            now = self._newest_start + timedelta(seconds=1)
        return format_time(now)

    def patch_pod_status(
        self,
        namespace: str,
        name: str,
        *,
        conditions: builtins.list[dict[str, Any]] | None = None,
        nominated_node_name: str | EllipsisType | None = ...,
        reply: bool = True,
    ) -> dict[str, Any]:
        """Merge conditions by type (transition time moves only with status) and set the nomination;
        without ``reply`` the stored pod is not copied for an answer nobody reads ({} comes back)."""
        info = _POD
        with self._lock:
            current = self._current(info, namespace, name)
            new = shallow_status_copy(current)
            status = new["status"]
            if conditions:
                status["conditions"] = merge_conditions(
                    status.get("conditions") or [], copy_json(conditions), self.now(), replace=False
                )
            if nominated_node_name is not ...:
                if nominated_node_name:
                    status["nominatedNodeName"] = nominated_node_name
                else:
                    status.pop("nominatedNodeName", None)
            stored = self._store_update(info, current, new)
        self._after_write()
        return _copy(stored) if reply else {}

    def record_event(self, event: dict[str, Any]) -> None:
        """Store a core/v1 Event; name, namespace, timestamps and count are filled in when missing.

        Events expire as on an API server (after ``event_ttl``), and beyond ``max_events`` the
        oldest go first, so a long simulation does not keep every event it ever wrote. An event is
        written once and never read back by its recorder: what ``event`` nests is stored as it is.
        """
        event = dict(event)  # only these two levels change here
        event.setdefault("apiVersion", "v1")
        event["kind"] = "Event"
        meta = event["metadata"] = dict(event.get("metadata") or {})
        involved = event.get("involvedObject") or event.get("regarding") or {}
        at = self._clock()  # one reading: the event's times, its generated name and its expiry
        now = format_time(at)
        with self._lock:
            if not meta.get("namespace"):
                meta["namespace"] = involved.get("namespace") or "default"
            named = bool(meta.get("name"))
            if not named:
                base = involved.get("name") or "event"
                stamp = int(at.timestamp() * 1e9)
                taken, name = self._store.get("Event", {}), f"{base}.{stamp:x}"
                while (meta["namespace"], name) in taken:
                    stamp += 1
                    name = f"{base}.{stamp:x}"
                meta["name"] = name
        if event["apiVersion"] == "v1":
            event.setdefault("firstTimestamp", now)
            event.setdefault("lastTimestamp", now)
            event.setdefault("count", 1)
        else:
            event.setdefault("eventTime", now)
        if named:
            self._expire_events(key_of(self._create(event, owned=True)), at)
        else:
            self._create_event(event)
            self._expire_events((meta["namespace"], meta["name"]), at)

    def _create_event(self, event: dict[str, Any]) -> dict[str, Any]:
        """:meth:`_create` for an Event that :meth:`record_event` built and named: the same checks and
        stamps in the same order, less the steps that cannot apply to it (a copy, generateName, the name's
        type, defaulting and admission: the API server has none for Events)."""
        info = _EVENT
        api_version = event["apiVersion"] or info.preferred_api_version
        if api_version not in info.api_versions:
            raise _unregistered(info, api_version)
        event["apiVersion"] = api_version
        meta = event["metadata"]
        ns, name = meta["namespace"], meta["name"]
        with self._lock:
            self._stamp_new(info, meta, ns, name, keep_uid=False)
            self._ensure_namespace(ns)
            stored = self._store_new(event, admitted=True)
        self._after_write()
        return stored

    def _expire_events(self, written: Key, now: datetime) -> None:
        """Note an event written at ``now``; delete the events past their TTL or beyond the window's size."""
        expired = False
        with self._lock:
            events = self._events
            events.append((now, written))
            bucket = self._store.get("Event", {})
            while events and (len(events) > self._max_events or events[0][0] + self._event_ttl <= now):
                _, key = events.popleft()
                if key in bucket:
                    self._store_drop("Event", key)
                    expired = True
        if expired:
            self._after_write()

    # ------------------------------------------------------------------------------------------------
    # watch

    def watch(
        self,
        kinds: Collection[str],
        handler: Callable[[WatchEvent], None],
        *,
        private_copies: bool = True,
        read_only: bool = False,
    ) -> _Watcher:
        """Register ``handler`` for changes of ``kinds`` made after this call.

        Each event hands the handler its own copy of the objects. A watcher that never changes what it
        is handed (``read_only=True``, or ``private_copies=False`` as the cluster's own controllers
        pass, or every watcher of a cluster made with ``read_only_watchers``) reads the stored states
        directly (never changed in place, see above) instead.
        """
        wanted = frozenset(kinds)
        for kind in wanted:
            kind_info(kind)
        with self._lock:
            watcher = _Watcher(
                self, wanted, handler, self._event_seq, private_copies and not (read_only or self._read_only_watchers)
            )
            self._watchers.append(watcher)
            self._index_watchers()
            return watcher

    def pending_event_count(self) -> int:
        return len(self._queue)  # one atomic read: the lock would guard nothing more

    def deliver_pending(self) -> int:
        """Deliver queued events in order to every watcher of their kind; returns how many events reached
        at least one watcher.

        Events that handlers cause while this runs are delivered in the same call, after the ones
        already queued. A re-entrant call from a handler returns 0 and leaves delivery to the outer call.
        """
        if not self._queue and not self._delivering:
            return 0  # nothing queued and no delivery under way (read in this order): nothing to wait for
        with self._delivery_lock:
            if self._delivering:
                return 0
            self._delivering = True
            try:
                delivered = 0
                while True:
                    with self._lock:
                        if not self._queue:
                            return delivered
                        seq, event = self._queue.popleft()
                        targets = self._watchers_of.get(event.kind, ())
                    handed = False
                    for watcher in targets:
                        if watcher.active and watcher.after_seq < seq:
                            handed = True
                            if not watcher.private_copies:
                                watcher.handler(event)
                                continue
                            watcher.handler(
                                WatchEvent(
                                    event.type,
                                    event.kind,
                                    _copy(event.obj),
                                    _copy(event.old) if event.old is not None else None,
                                )
                            )
                    delivered += handed
            finally:
                self._delivering = False

    def _remove_watcher(self, watcher: _Watcher) -> None:
        with self._lock:
            if watcher in self._watchers:
                self._watchers.remove(watcher)
                self._index_watchers()

    def _index_watchers(self) -> None:
        """Recompute which kinds are watched and by whom (new tuples: a delivery under way keeps its own)."""
        kinds = {k for w in self._watchers for k in w.kinds}
        self._watchers_of = {k: tuple(w for w in self._watchers if k in w.kinds) for k in kinds}

    # ------------------------------------------------------------------------------------------------
    # internals (callers hold self._lock)

    def _incoming(self, obj: dict[str, Any], *, take_copy: bool = True) -> tuple[KindInfo, dict[str, Any]]:
        """Check kind, apiVersion and metadata of a written object; returns its info and a private copy
        (``obj`` itself when ``take_copy`` is False)."""
        if not isinstance(obj, dict):
            raise Invalid(f"object must be a mapping, not {type(obj).__name__}")
        info = kind_info(str(obj.get("kind")))
        api_version = obj.get("apiVersion") or info.preferred_api_version
        if api_version not in info.api_versions:
            raise _unregistered(info, api_version)
        if take_copy:
            obj = _copy(obj)
        obj["apiVersion"] = api_version
        meta = obj.get("metadata")
        if meta is None:
            meta = obj["metadata"] = {}
        if not isinstance(meta, dict):
            raise Invalid.of(info.kind, "", "metadata", "must be a mapping")
        if info.namespaced:
            if not meta.get("namespace"):
                meta["namespace"] = "default"
        else:
            meta.pop("namespace", None)
        return info, obj

    def _namespace_arg(self, info: KindInfo, namespace: str | None, *, allow_all: bool) -> str | None:
        if not info.namespaced:
            if namespace:
                raise Invalid(f"{info.kind} is cluster-scoped: no namespace may be given (got {namespace!r})")
            return None
        if not namespace and not allow_all:
            raise Invalid(f"{info.kind} is namespaced: a namespace is required")
        return namespace or None

    def _current(self, info: KindInfo, namespace: str, name: str) -> dict[str, Any]:
        obj = self._store.get(info.kind, {}).get((namespace if info.namespaced else "", name))
        if obj is None:
            raise NotFound.of(info.qualified_resource, name)
        return obj

    @staticmethod
    def _check_uid(resource: KindInfo | str, name: str, wanted: str | None, actual: str) -> None:
        """Conflict when a uid precondition names another object (the resource's name for the error is
        worked out only then: most writes carry no precondition, or the right one)."""
        if wanted and wanted != actual:
            raise Conflict.of(
                resource if isinstance(resource, str) else resource.qualified_resource,
                name,
                f"Precondition failed: UID in precondition: {wanted}, UID in object meta: {actual}",
            )

    def _generate_name(self, info: KindInfo, meta: dict[str, Any]) -> str:
        ns = meta.get("namespace", "")
        n = self._rv * 7919 + 1
        while True:
            suffix = ""
            for _ in range(5):
                n, digit = divmod(n, len(_NAME_SUFFIX_ALPHABET))
                suffix += _NAME_SUFFIX_ALPHABET[digit]
            name: str = meta["generateName"] + suffix
            if (ns, name) not in self._store.get(info.kind, {}):
                return name
            n = n * 31 + 7

    def _next_rv(self) -> str:
        self._rv += 1
        return str(self._rv)

    def _store_new(self, obj: dict[str, Any], *, admitted: bool = False) -> dict[str, Any]:
        """Store a new object; objects made by the cluster itself (namespaces) are admitted here."""
        if not admitted:
            meta = obj["metadata"]
            meta["uid"] = self._uid_factory()
            meta["creationTimestamp"] = self.now()
            meta["generation"] = 1
            admit_create(obj, self, self.features)
        obj["metadata"]["resourceVersion"] = self._next_rv()
        self._store.setdefault(obj["kind"], {})[key_of(obj)] = obj
        self._enqueue("ADDED", obj["kind"], obj, None)
        return obj

    def _store_update(self, info: KindInfo, current: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        """Store ``new`` in place of ``current`` unless nothing changed (then no write, no event)."""
        new["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        if new == current:
            return current
        return self._store_changed(info, current, new)

    def _store_changed(self, info: KindInfo, current: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        """:meth:`_store_update` for a write known to change the object: no comparison first."""
        new["metadata"]["resourceVersion"] = self._next_rv()
        self._store[info.kind][key_of(new)] = new
        self._enqueue("MODIFIED", info.kind, new, current)
        return new

    def _unstore(self, kind: str, key: Key) -> dict[str, Any]:
        """Take an object out of the store (the caller moves the resourceVersion on)."""
        current = self._store[kind].pop(key)
        self._user_status_uids.discard(current["metadata"]["uid"])
        return current

    def _store_delete(self, kind: str, key: Key) -> dict[str, Any]:
        current = self._unstore(kind, key)
        last = dict(current)
        last["metadata"] = {**current["metadata"], "resourceVersion": self._next_rv()}
        self._enqueue("DELETED", kind, last, None)
        return last

    def _store_drop(self, kind: str, key: Key) -> None:
        """:meth:`_store_delete` where nobody reads the last state: unwatched, it is not even built."""
        if kind in self._watchers_of:
            self._store_delete(kind, key)
            return
        self._unstore(kind, key)
        self._rv += 1

    def _enqueue(self, event_type: EventType, kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Queue an event only if someone watches its kind: later watchers list instead."""
        if kind not in self._watchers_of:
            return
        self._event_seq += 1
        self._queue.append((self._event_seq, _watch_event(event_type, kind, obj, old)))

    def _after_write(self) -> None:
        if self._synchronous:
            self.deliver_pending()
