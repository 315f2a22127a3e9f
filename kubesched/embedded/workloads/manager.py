"""The controller manager of the embedded cluster: one watch, an informer-like cache, a controller per kind.

kube-controller-manager's workload controllers watch their objects and the pods they own, and write
through the API server. Here one watch on the workload kinds, pods and nodes feeds a cache shared by
the controllers (as the shared informer factory does), and every change syncs the workload it concerns.

The cache is written through: a pod a controller creates is in the cache at once, before its watch
event comes back. That is what kube-controller-manager's "expectations" achieve; without it a
ReplicaSet would see one of its three new pods, decide two are missing and create them again.

Deleting an owner deletes what it controls, as the garbage collector does with background propagation.
Pods without a controller whose labels a ReplicaSet, StatefulSet or DaemonSet selects are adopted
(ClaimPods), so a scenario's existing pods count towards the workload they belong to.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from kubesched.api.errors import ObjectError
from kubesched.api.labels import LabelSelector
from kubesched.api.timestamps import format_time
from kubesched.cluster.protocol import ApiError, Cluster, Conflict, NotFound, WatchEvent
from kubesched.embedded.workloads.common import (
    NameGenerator,
    controller_of,
    is_active,
    is_bound,
    key_of,
    meta,
    owner_reference,
)
from kubesched.embedded.workloads.daemonset import DaemonSetController, target_node
from kubesched.embedded.workloads.deployment import DeploymentController
from kubesched.embedded.workloads.job import JobController
from kubesched.embedded.workloads.replicaset import ReplicaSetController
from kubesched.embedded.workloads.statefulset import StatefulSetController

_Key = tuple[str, str]

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job")
WATCHED_KINDS = (*WORKLOAD_KINDS, "Pod", "Node")
#: Controllers that adopt orphan pods matching their selector (a Job's selector is its own uid).
ADOPTING_KINDS = ("ReplicaSet", "StatefulSet", "DaemonSet")
#: Why the manager deleted a pod: its controller removed it (fewer replicas, a daemon pod whose node no
#: longer fits, a pod of an older revision replaced), or the garbage collector did, with its owner.
SCALE_DOWN = "scale-down"
GARBAGE_COLLECTED = "garbage-collected"

#: Told of each pod the manager deletes: the deleted object as the API returned it, and why.
PodDeletionListener = Callable[[dict[str, Any], str], None]


class WorkloadController(Protocol):
    """One controller: syncs one object of its kind to the state its spec asks for."""

    kind: str

    def sync(self, namespace: str, name: str) -> None: ...


class ControllerManager:
    """Runs the workload controllers on a cluster once started; ``created_pods`` lists the pods they made,
    in order."""

    def __init__(self, cluster: Cluster, rng: random.Random | None = None) -> None:
        self.cluster = cluster
        self.names = NameGenerator(rng or random.Random(0))
        self.objects: dict[str, dict[_Key, dict[str, Any]]] = {kind: {} for kind in WATCHED_KINDS}
        self._owned: dict[str, dict[tuple[str, _Key], None]] = {}  # owner uid -> {(kind, key)}
        self._by_uid: dict[str, tuple[str, _Key]] = {}
        #: Owner uid -> [active pods, bound pods]: lets a sync that has nothing to do return at once.
        self._pod_counts: dict[str, list[int]] = {}
        self.created_pods: list[str] = []
        self._queue: OrderedDict[tuple[str, _Key, str | None], None] = OrderedDict()
        self._syncing = False
        #: Pod key -> ``Kind namespace/name`` of the workload it belongs to (a ReplicaSet's Deployment).
        self.pod_workloads: dict[str, str] = {}
        #: Errors the controllers met writing to the cluster (a real one would emit an event and retry).
        self.errors: list[str] = []
        self.daemons = DaemonSetController(self)
        self.jobs = JobController(self)
        controllers: list[WorkloadController] = [
            DeploymentController(self),
            ReplicaSetController(self),
            StatefulSetController(self),
            self.daemons,
            self.jobs,
        ]
        self.controllers = {c.kind: c for c in controllers}
        self._watches: list[Any] = []
        self._pods_watched = False
        #: Told of every pod the manager deletes (a simulation reports why each pod went).
        self.pod_deletion_listener: PodDeletionListener | None = None

    def start(self) -> None:
        """Watch the workload kinds, then list and sync the workloads that exist already (pods and nodes
        are watched too once there is a workload)."""
        self._watches.append(self.cluster.watch(WORKLOAD_KINDS, self.handle))
        for kind in WORKLOAD_KINDS:
            for obj in self.cluster.list(kind)[0]:
                self._store(kind, obj)
        if any(self.objects[kind] for kind in WORKLOAD_KINDS):
            self._watch_pods_and_nodes()
        for kind in WORKLOAD_KINDS:
            for key, obj in list(self.objects[kind].items()):
                self._adopt_orphans(kind, obj)
                self.sync(kind, key)

    def _watch_pods_and_nodes(self) -> None:
        """Start watching pods and nodes (list, then watch), once there is a workload to care about.

        Until then the manager costs a scenario of bare pods nothing: no copy of every pod event.
        """
        if self._pods_watched:
            return
        self._pods_watched = True
        self._watches.append(self.cluster.watch(("Pod", "Node"), self.handle))
        for kind in ("Pod", "Node"):
            for obj in self.cluster.list(kind)[0]:
                self._store(kind, obj)

    def has_workloads(self) -> bool:
        """Whether any workload object exists (then the simulation lets the controllers run first)."""
        return any(self.objects[kind] or self.cluster.list(kind)[0] for kind in WORKLOAD_KINDS)

    def stop(self) -> None:
        for watch in self._watches:
            watch.stop()
        self._watches.clear()
        self._pods_watched = False

    # -- the informer side ----------------------------------------------------------------------------
    def handle(self, event: WatchEvent) -> None:
        kind, obj = event.kind, event.obj
        key = key_of(obj)
        if kind in self.controllers and event.type != "DELETED":
            self._watch_pods_and_nodes()
        if event.type == "DELETED":
            current = self.objects[kind].get(key)
            if current is not None and meta(current).get("uid") == meta(obj).get("uid"):
                self._forget(kind, current)
        elif not self._is_stale(kind, obj):
            self._store(kind, obj)
        if kind == "Pod":
            self.jobs.observe(event)
            if event.type != "DELETED" and controller_of(obj) is None and is_active(obj):
                self._adopt_pod(obj)
        if kind in self.controllers:
            if event.type == "DELETED":
                self._collect_garbage(meta(obj).get("uid"))
            else:
                if event.type == "ADDED":
                    self._adopt_orphans(kind, obj)
                self.sync(kind, key)
        owner = self.owner_of(obj)
        if owner is not None:
            if owner[0] == "DaemonSet" and kind == "Pod":
                self.sync(*owner, only_node=target_node(obj) or "")
            else:
                self.sync(*owner)
        if kind == "Node":
            # A node change concerns that node only: each DaemonSet looks at it alone.
            for ds_key in list(self.objects["DaemonSet"]):
                self.sync("DaemonSet", ds_key, only_node=key[1])

    def _is_stale(self, kind: str, obj: Mapping[str, Any]) -> bool:
        """An event older than what a write of ours already put in the cache (written through)."""
        current = self.objects[kind].get(key_of(obj))
        if current is None or meta(current).get("uid") != meta(obj).get("uid"):
            return False
        new_rv, cur_rv = str(meta(obj).get("resourceVersion")), str(meta(current).get("resourceVersion"))
        return new_rv.isdigit() and cur_rv.isdigit() and int(new_rv) < int(cur_rv)

    def _store(self, kind: str, obj: dict[str, Any]) -> None:
        key = key_of(obj)
        old = self.objects[kind].get(key)
        if old is not None:
            self._forget(kind, old)
        self.objects[kind][key] = obj
        uid = str(meta(obj).get("uid") or "")
        if uid:
            self._by_uid[uid] = (kind, key)
        ref = controller_of(obj)
        if ref is not None:
            self._owned.setdefault(str(ref.get("uid")), {})[(kind, key)] = None
            if kind == "Pod":
                self._count(str(ref.get("uid")), obj, 1)

    def _count(self, owner_uid: str, pod: Mapping[str, Any], sign: int) -> None:
        counts = self._pod_counts.setdefault(owner_uid, [0, 0])
        counts[0] += sign * is_active(pod)
        counts[1] += sign * is_bound(pod)

    def pod_counts(self, owner: Mapping[str, Any]) -> tuple[int, int]:
        """(active, bound) pods that ``owner`` controls, kept up to date as pods come and go."""
        active, bound = self._pod_counts.get(str(meta(owner).get("uid")), (0, 0))
        return active, bound

    def _forget(self, kind: str, obj: Mapping[str, Any]) -> None:
        key = key_of(obj)
        self.objects[kind].pop(key, None)
        self._by_uid.pop(str(meta(obj).get("uid") or ""), None)
        ref = controller_of(obj)
        owned = self._owned.get(str(ref.get("uid")), {}) if ref is not None else {}
        if ref is not None and (kind, key) in owned:
            del owned[(kind, key)]
            if kind == "Pod":
                self._count(str(ref.get("uid")), obj, -1)

    def owner_of(self, obj: Mapping[str, Any]) -> tuple[str, _Key] | None:
        """(kind, key) of the workload that controls ``obj``, when it is one the manager knows."""
        ref = controller_of(obj)
        if ref is None:
            return None
        found = self._by_uid.get(str(ref.get("uid")))
        if found is None or found[0] not in self.controllers:
            return None
        return found

    def top_owner(self, obj: Mapping[str, Any]) -> str | None:
        """``Kind namespace/name`` of the outermost workload controlling ``obj`` (Deployment over ReplicaSet)."""
        found = self.owner_of(obj)
        if found is None:
            return None
        while True:
            owner = self.objects[found[0]].get(found[1])
            above = self.owner_of(owner) if owner is not None else None
            if above is None:
                return f"{found[0]} {found[1][0]}/{found[1][1]}"
            found = above

    def owned(self, owner: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
        """The objects of ``kind`` that ``owner`` controls (its pods, its ReplicaSets), in key order."""
        entries = self._owned.get(str(meta(owner).get("uid")), {})
        found = [self.objects[k].get(key) for k, key in entries if k == kind]
        return sorted((o for o in found if o is not None), key=key_of)

    def get(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self.objects[kind].get((namespace, name))

    def free_pod_name(self, namespace: str, base: str) -> str:
        """A generated ``base`` + suffix that no Pod in ``namespace`` has yet."""
        while True:
            name = self.names.generate(base)
            if self.get("Pod", namespace, name) is None:
                return name

    def exists(self, kind: str, namespace: str, name: str) -> bool:
        """Whether the cluster has the object (asked of the API for kinds the manager does not watch)."""
        if kind in self.objects:
            return (namespace, name) in self.objects[kind]
        try:
            self.cluster.get(kind, namespace or None, name)
        except NotFound:
            return False
        return True

    def cluster_now(self) -> str:
        """The cluster's current time as the API writes it (the embedded cluster's clock when it has one)."""
        now = getattr(self.cluster, "now", None)
        return str(now()) if callable(now) else format_time(datetime.now(UTC))

    def nodes(self) -> Iterator[dict[str, Any]]:
        return iter(sorted(self.objects["Node"].values(), key=key_of))

    # -- syncing --------------------------------------------------------------------------------------
    def sync(self, kind: str, key: _Key, *, only_node: str | None = None) -> None:
        """Sync one workload; a sync asked for while another runs waits for it (one worker, as a
        workqueue gives), so a controller never acts on a half-written view of its own writes."""
        self._queue[(kind, key, only_node)] = None
        if self._syncing:
            return
        self._syncing = True
        try:
            while self._queue:
                (kind, key, only), _ = self._queue.popitem(last=False)
                if key not in self.objects[kind]:
                    continue
                if only is not None:
                    self.daemons.sync(*key, only_node=only)
                else:
                    self.controllers[kind].sync(*key)
        finally:
            self._syncing = False

    def _collect_garbage(self, owner_uid: Any) -> None:
        for kind, (namespace, name) in list(self._owned.pop(str(owner_uid), {})):
            self._delete_now(kind, namespace, name)

    def _delete_now(self, kind: str, namespace: str, name: str) -> None:
        deleted = self._try(lambda: self.cluster.delete(kind, namespace or None, name))
        self._deleted(deleted, GARBAGE_COLLECTED)

    def _deleted(self, obj: dict[str, Any] | None, reason: str) -> None:
        if obj is not None and obj.get("kind") == "Pod" and self.pod_deletion_listener is not None:
            self.pod_deletion_listener(obj, reason)

    # -- adoption (ClaimPods) ------------------------------------------------------------------------
    def _selector(self, owner: Mapping[str, Any]) -> LabelSelector | None:
        """The owner's pod selector; None when absent, empty or malformed (then it adopts nothing)."""
        try:
            selector = LabelSelector.from_dict((owner.get("spec") or {}).get("selector"))
        except ObjectError:
            return None
        return None if selector is None or selector.empty else selector

    def _claims(self, kind: str, owner: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
        """Whether ``owner`` would adopt the orphan ``pod`` (same namespace, selector matches; a
        StatefulSet also wants its own name pattern, ``<set>-<ordinal>``)."""
        if kind not in ADOPTING_KINDS or key_of(owner)[0] != key_of(pod)[0]:
            return False
        selector = self._selector(owner)
        if selector is None or not selector.matches(meta(pod).get("labels") or {}):
            return False
        if kind == "StatefulSet":
            prefix = f"{key_of(owner)[1]}-"
            return key_of(pod)[1].startswith(prefix) and key_of(pod)[1][len(prefix) :].isdigit()
        return True

    def _adopt_orphans(self, kind: str, owner: dict[str, Any]) -> None:
        if kind not in ADOPTING_KINDS:
            return
        for pod in list(self.objects["Pod"].values()):
            if controller_of(pod) is None and is_active(pod) and self._claims(kind, owner, pod):
                self._adopt(owner, pod)

    def _adopt_pod(self, pod: dict[str, Any]) -> None:
        for kind in ADOPTING_KINDS:
            for owner in list(self.objects[kind].values()):
                if self._claims(kind, owner, pod):
                    self._adopt(owner, pod)
                    return

    def _adopt(self, owner: Mapping[str, Any], pod: dict[str, Any]) -> None:
        """Make ``owner`` the pod's controller, as controllers adopt matching orphans."""
        refs = [*(meta(pod).get("ownerReferences") or []), owner_reference(owner)]
        stored = self.update({**pod, "metadata": {**meta(pod), "ownerReferences": refs}})
        if stored is not None:
            workload = self.top_owner(stored)
            if workload is not None:
                self.pod_workloads["/".join(key_of(stored))] = workload

    # -- writes (through the API, into the cache at once) ---------------------------------------------
    def create(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        """Create ``obj``; the stored object, or None when the API refused it (recorded in ``errors``)."""
        stored = self._try(lambda: self.cluster.create(obj))
        if stored is None:
            return None
        if stored["kind"] in self.objects:
            self._store(stored["kind"], stored)
        if stored["kind"] == "Pod":
            pod_key = "/".join(key_of(stored))
            self.created_pods.append(pod_key)
            workload = self.top_owner(stored)
            if workload is not None:
                self.pod_workloads[pod_key] = workload
        return stored

    def update(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        """Write ``obj``; on a conflict (our copy was stale) read it afresh and sync it again, as a
        controller requeues its key, instead of reporting an error."""
        kind, key = str(obj.get("kind")), key_of(obj)
        try:
            stored = self.cluster.update(obj)
        except Conflict:
            fresh = self._try(lambda: self.cluster.get(kind, key[0] or None, key[1]))
            if fresh is not None and kind in self.objects:
                self._store(kind, fresh)
                if kind in self.controllers:
                    self.sync(kind, key)
            return None
        except NotFound:
            return None
        except ApiError as err:
            self.errors.append(err.message)
            return None
        self._store(kind, stored)
        return stored

    def delete(self, obj: Mapping[str, Any]) -> None:
        kind = str(obj.get("kind"))
        namespace, name = key_of(obj)
        deleted = self._try(lambda: self.cluster.delete(kind, namespace or None, name))
        if deleted is not None:
            self._forget(kind, obj)
            self._deleted(deleted, SCALE_DOWN)

    def _try(self, write: Callable[[], dict[str, Any]]) -> dict[str, Any] | None:
        try:
            return write()
        except NotFound:
            return None
        except ApiError as err:
            self.errors.append(err.message)
            return None
