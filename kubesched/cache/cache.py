"""The scheduler cache: what is (or is about to be) running where.

Bound pods and nodes arrive from cluster events; a pod the scheduler has decided on is *assumed*
onto its node at once, so the next cycle sees its requests before the bind reaches the API server.
The bind's confirmation (the pod coming back with ``spec.nodeName``) turns the assumed pod into an
added one; an assumed pod whose binding finished but that was never confirmed expires after a TTL.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.cache.node_info import ImageStateSummary, NodeInfo, next_generation
from kubesched.cache.snapshot import Snapshot
from kubesched.klog import Logger, kobj, kref

LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
LABEL_REGION_BETA = "failure-domain.beta.kubernetes.io/region"

logger = Logger(__name__)


class CacheError(RuntimeError):
    """An operation the cache's state machine does not allow (e.g. assuming a pod twice)."""


def zone_key(node: Node) -> str:
    """The failure domain a node belongs to (region and zone), '' when it has neither label."""
    labels = node.labels
    zone = labels.get(LABEL_ZONE_BETA, labels.get(LABEL_ZONE, ""))
    region = labels.get(LABEL_REGION_BETA, labels.get(LABEL_REGION, ""))
    if not zone and not region:
        return ""
    return f"{region}:\x00:{zone}"


class NodeTree:
    """Node names grouped by zone; listing takes one node of each zone in turn.

    The interleaved order is what the scheduler walks when it samples a fraction of the nodes, so
    every zone gets looked at early. Each zone keeps its names in a dict used as an ordered set, so
    that adding or removing a node costs the same with a million nodes as with ten.
    """

    def __init__(self) -> None:
        self._zones: dict[str, dict[str, None]] = {}
        self._count = 0

    def add(self, node: Node) -> None:
        zone = zone_key(node)
        names = self._zones.setdefault(zone, {})
        if node.name in names:
            logger.info("Did not add to the NodeTree because it already exists", "node", kobj(node))
            return
        names[node.name] = None
        self._count += 1
        if v := logger.v(2):
            v.info("Added node to NodeTree", "node", kobj(node), "zone", zone)

    def remove(self, node: Node) -> None:
        key = zone_key(node)
        names = self._zones.get(key)
        if names and node.name in names:
            del names[node.name]
            self._count -= 1
            if not names:
                del self._zones[key]
            if v := logger.v(2):
                v.info("Removed node from NodeTree", "node", kobj(node), "zone", key)
            return
        logger.error(None, "Did not remove Node in NodeTree because it was not found", "node", kobj(node), "zone", key)

    def update(self, old: Node, new: Node) -> None:
        if zone_key(old) != zone_key(new):
            self.remove(old)
            self.add(new)

    def __len__(self) -> int:
        return self._count

    def list(self) -> list[str]:
        zones = list(self._zones.values())
        if len(zones) == 1:
            return list(zones[0])
        # Round robin over the zones: the first node of each, then the second of each, and so on (the
        # zones' ends padded with None, which filter drops; no node is named "").
        return list(filter(None, itertools.chain.from_iterable(itertools.zip_longest(*zones))))


@dataclass(frozen=True, slots=True)
class Dump:
    """What :meth:`Cache.dump` copies: node infos by node name, and the uids of the assumed pods."""

    nodes: dict[str, NodeInfo]
    assumed_pods: frozenset[str]


@dataclass(slots=True)
class _PodState:
    pod: Pod
    deadline: datetime | None = None
    binding_finished: bool = False


class Cache:
    """Thread-safe store of node infos with assume / confirm / forget / expire for pods."""

    def __init__(self, clock: Callable[[], datetime], ttl: timedelta | None = timedelta(0)) -> None:
        self._clock = clock
        #: How long an assumed pod whose binding finished may stay unconfirmed (0 or None: forever).
        self._ttl = ttl
        self._lock = threading.RLock()
        self._nodes: dict[str, NodeInfo] = {}
        self._tree = NodeTree()
        self._pod_states: dict[str, _PodState] = {}
        self._assumed: set[str] = set()
        self._images: dict[str, tuple[int, set[str]]] = {}
        self._nodes_changed = True
        #: Whether some image's node count moved since the last full copy (image spread is per cluster).
        self._images_changed = True
        #: Nodes whose info changed since the last snapshot update.
        self._dirty: set[str] = set()
        #: Nodes that joined the tree since the last snapshot update, and whether any node left it or moved
        #: zone since (then the kept nodes' order may have changed, and the joins alone do not say it).
        self._joined: dict[str, None] = {}
        self._reordered = False
        #: The generation given to the snapshot updated last: only that one may take the joins alone.
        self._last_generation = -1

    # -- nodes ---------------------------------------------------------------------------------------
    def add_node(self, node: Node) -> NodeInfo:
        with self._lock:
            info = self._nodes.get(node.name)
            if info is None:
                info = NodeInfo()
                self._nodes[node.name] = info
            same_images = info.node is not None and info.node.images == node.images
            if not same_images:
                self._remove_images(info.node)
            if info.node is None:
                self._tree.add(node)
                self._nodes_changed = True
                self._joined[node.name] = None
            else:
                self._tree.update(info.node, node)
                if zone_key(info.node) != zone_key(node):
                    self._nodes_changed = self._reordered = True
            if not same_images:
                self._add_images(node)
            info.set_node(node)
            self._dirty.add(node.name)
            return info

    def update_node(self, old: Node | None, new: Node) -> NodeInfo:
        return self.add_node(new)

    def remove_node(self, node: Node) -> None:
        """Forget a node; its pods stay (as on an unknown node) until their own deletions arrive."""
        with self._lock:
            info = self._nodes.get(node.name)
            if info is None or info.node is None:
                return
            self._remove_images(info.node)
            self._tree.remove(info.node)
            if info.pods:
                info.node = None
                info.name = ""
            else:
                del self._nodes[node.name]
            self._nodes_changed = self._reordered = True

    def _add_images(self, node: Node) -> None:
        for image in node.images:
            for name in image.names:
                _, nodes = self._images.setdefault(name, (image.size_bytes, set()))
                if node.name not in nodes:
                    nodes.add(node.name)
                    self._images_changed = True

    def _remove_images(self, node: Node | None) -> None:
        if node is None:
            return
        for image in node.images:
            for name in image.names:
                entry = self._images.get(name)
                if entry is not None and node.name in entry[1]:
                    entry[1].discard(node.name)
                    self._images_changed = True
                    if not entry[1]:
                        del self._images[name]

    # -- pods ----------------------------------------------------------------------------------------
    def _node_for(self, name: str) -> NodeInfo:
        self._dirty.add(name)
        info = self._nodes.get(name)
        if info is None:
            info = NodeInfo()  # a pod may arrive before its node: keep it on a placeholder
            self._nodes[name] = info
        return info

    def assume_pod(self, pod: Pod, node_name: str) -> None:
        """Account ``pod`` on ``node_name`` before the bind is confirmed (``pod`` carries the node)."""
        uid = pod.uid
        with self._lock:
            if uid in self._pod_states:
                raise CacheError(f"pod {pod.key}({uid}) is in the cache, so can't be assumed")
            self._node_for(node_name).add_pod(pod)
            self._pod_states[uid] = _PodState(pod)
            self._assumed.add(uid)

    def finish_binding(self, pod: Pod) -> None:
        """The bind call returned: the assumed pod may now expire if no confirmation arrives."""
        uid = pod.uid
        with self._lock:
            state = self._pod_states.get(uid)
            if v := logger.v(5):
                v.info("Finished binding for pod, can be expired", "podKey", uid, "pod", kobj(pod))
            if state is not None and uid in self._assumed:
                state.binding_finished = True
                state.deadline = self._clock() + self._ttl if self._ttl else None

    def forget_pod(self, pod: Pod) -> None:
        """Undo an assume (the scheduling or binding cycle failed)."""
        with self._lock:
            state = self._pod_states.get(pod.uid)
            if state is None:
                raise CacheError(f"pod {pod.key} wasn't assumed so cannot be forgotten")
            if state.pod.node_name != pod.node_name and pod.node_name:
                raise CacheError(f"pod {pod.key} was assumed on {state.pod.node_name} but assigned to {pod.node_name}")
            if pod.uid not in self._assumed:
                raise CacheError(f"pod {pod.key} wasn't assumed so cannot be forgotten")
            self._remove_from_node(state.pod)
            del self._pod_states[pod.uid]
            self._assumed.discard(pod.uid)

    def add_pod(self, pod: Pod) -> None:
        """A bound pod arrived from the cluster (possibly confirming an assumed one)."""
        uid = pod.uid
        with self._lock:
            state = self._pod_states.get(uid)
            if state is not None and uid in self._assumed:
                if state.pod.node_name != pod.node_name:
                    # Bound somewhere else than assumed: move it. (The line names the nodes as
                    # kube-scheduler's does: "assumedNode" is where the pod is bound.)
                    logger.info(
                        "Pod was added to a different node than it was assumed",
                        "podKey",
                        pod.uid,
                        "pod",
                        kobj(pod),
                        "assumedNode",
                        kref("", pod.node_name),
                        "currentNode",
                        kref("", state.pod.node_name),
                    )
                    self._remove_from_node(state.pod)
                    self._node_for(pod.node_name).add_pod(pod)
                else:
                    self._replace_on_node(state.pod, pod)
                self._assumed.discard(uid)
                state.pod = pod
                state.deadline = None
                return
            if state is not None:
                self._update(state, pod)
                return
            self._node_for(pod.node_name).add_pod(pod)
            self._pod_states[uid] = _PodState(pod)

    def update_pod(self, old: Pod | None, new: Pod) -> None:
        with self._lock:
            state = self._pod_states.get(new.uid)
            if state is None or new.uid in self._assumed:
                self.add_pod(new)
                return
            self._update(state, new)

    def _update(self, state: _PodState, new: Pod) -> None:
        if state.pod.node_name == new.node_name:
            self._replace_on_node(state.pod, new)
        else:
            self._remove_from_node(state.pod)
            self._node_for(new.node_name).add_pod(new)
        state.pod = new

    def remove_pod(self, pod: Pod) -> None:
        uid = pod.uid
        with self._lock:
            state = self._pod_states.pop(uid, None)
            self._assumed.discard(uid)
            if state is not None:
                self._remove_from_node(state.pod)

    def _replace_on_node(self, old: Pod, new: Pod) -> None:
        """``new`` in place of ``old`` (the same uid) on their node."""
        if old.node_name in self._nodes:
            self._node_for(old.node_name).replace_pod(new)
            return
        self._node_for(new.node_name).add_pod(new)

    def _remove_from_node(self, pod: Pod) -> None:
        info = self._nodes.get(pod.node_name)
        if info is None:
            return
        info.remove_pod(pod)
        self._dirty.add(pod.node_name)
        if info.node is None and not info.pods:
            del self._nodes[pod.node_name]

    def is_assumed(self, pod: Pod) -> bool:
        with self._lock:
            return pod.uid in self._assumed

    def get_pod(self, uid: str) -> Pod | None:
        with self._lock:
            state = self._pod_states.get(uid)
            return None if state is None else state.pod

    def cleanup_expired_assumed_pods(self) -> list[Pod]:
        """Drop assumed pods whose binding finished long ago without a confirming event."""
        now = self._clock()
        expired: list[Pod] = []
        with self._lock:
            for uid in list(self._assumed):
                state = self._pod_states[uid]
                if not state.binding_finished:
                    if v := logger.v(5):
                        v.info(
                            "Could not expire cache for pod as binding is still in progress",
                            "podKey",
                            uid,
                            "pod",
                            kobj(state.pod),
                        )
                    continue
                if state.deadline is not None and now > state.deadline:
                    logger.info("Pod expired", "podKey", uid, "pod", kobj(state.pod))
                    expired.append(state.pod)
                    self._remove_from_node(state.pod)
                    del self._pod_states[uid]
                    self._assumed.discard(uid)
        return expired

    # -- views ---------------------------------------------------------------------------------------
    def node_count(self) -> int:
        with self._lock:
            return len(self._tree)

    def assumed_pod_count(self) -> int:
        with self._lock:
            return len(self._assumed)

    def pod_count(self) -> int:
        with self._lock:
            return sum(len(info.pods) for info in self._nodes.values())

    def dump(self) -> Dump:
        """A copy of every node info (a deleted node still holding pods too) and the assumed pods' uids,
        taken under one lock (kube-scheduler's ``Cache.Dump``, for the cache debugger)."""
        with self._lock:
            return Dump({name: info.snapshot() for name, info in self._nodes.items()}, frozenset(self._assumed))

    def node_infos(self) -> dict[str, NodeInfo]:
        """The live node infos (for reports and debugging, not for scheduling: use a snapshot)."""
        with self._lock:
            return dict(self._nodes)

    def _image_summaries(self, node: Node) -> dict[str, ImageStateSummary]:
        out: dict[str, ImageStateSummary] = {}
        for image in node.images:
            for name in image.names:
                if name not in out:
                    size, nodes = self._images[name]
                    out[name] = ImageStateSummary(size=size, num_nodes=len(nodes))
        return out

    def _clone(self, info: NodeInfo) -> NodeInfo:
        clone = info.snapshot()
        node = info.node
        assert node is not None
        # A node without images (the usual case) needs no summary: its copy gets an empty map of its own.
        clone.image_states = self._image_summaries(node) if node.images else {}
        return clone

    def update_snapshot(self, snapshot: Snapshot) -> None:
        """Bring ``snapshot`` up to date, copying only nodes whose generation moved."""
        with self._lock:
            if self._nodes_changed or len(snapshot.node_infos) != len(self._tree):
                # The node set changed. Copy every node again only when an image's spread moved (each
                # copy carries per-image node counts); otherwise unchanged nodes keep their copies, as
                # kube-scheduler keeps unchanged NodeInfos and only rebuilds the list. The snapshot moves
                # kept rows to their new node-tree positions and writes only new or changed nodes.
                names = self._tree.list()
                index = dict(zip(names, range(len(names)), strict=True))
                get, current = snapshot.index.get, snapshot.node_infos
                joined = self._joined_rows(snapshot, names, index)
                if joined is not None and not self._images_changed:
                    old_rows, infos, fresh = self._after_joins(current, index, joined)
                elif self._images_changed or not current:
                    old_rows = np.array([get(name, -1) for name in names], dtype=np.int64)
                    fresh = list(range(len(names)))
                    infos = [None] * len(names)  # type: ignore[list-item]
                else:
                    old_rows = np.array([get(name, -1) for name in names], dtype=np.int64)
                    # Kept nodes keep their copies (joining nodes get a stand-in, replaced just below).
                    infos = [current[row] for row in old_rows.tolist()]
                    fresh = (old_rows < 0).nonzero()[0].tolist()
                    fresh += [i for i in map(index.get, self._dirty) if i is not None and old_rows[i] >= 0]
                    fresh.sort()
                for i in fresh:
                    infos[i] = self._clone(self._nodes[names[i]])
                snapshot.update_nodes(infos, names, index, old_rows, fresh)
                self._nodes_changed = False
                self._images_changed = False
            else:
                for name in self._dirty:
                    live = self._nodes.get(name)
                    if live is None or live.node is None:
                        continue
                    # Replacing a node also updates the snapshot's used PVCs for it.
                    snapshot.replace_node(self._clone(live))
            self._dirty.clear()
            self._joined.clear()
            self._reordered = False
            snapshot.generation = self._last_generation = next_generation()

    def _joined_rows(self, snapshot: Snapshot, names: list[str], index: dict[str, int]) -> list[int] | None:
        """The new rows of the nodes that joined since ``snapshot`` was last updated, ascending, when joining
        is all that changed the node list; None otherwise.

        Nodes only joining keep every other node's relative order (a node joins at the end of its zone, a
        new zone comes last), so the new list is the old one with these rows inserted: no need to look
        every node up again. A node that left or moved zone, or a snapshot another update came between,
        takes the general path."""
        if (
            self._reordered
            or not self._joined
            or snapshot.generation != self._last_generation
            or len(names) != len(snapshot.node_infos) + len(self._joined)
        ):
            return None
        rows = [index.get(name, -1) for name in self._joined]
        if min(rows) < 0 or any(name in snapshot.index for name in self._joined):
            return None
        return sorted(rows)

    def _after_joins(
        self, current: list[NodeInfo], index: dict[str, int], joined: list[int]
    ) -> tuple[np.ndarray, list[NodeInfo], list[int]]:
        """(old row of each new row, the node list with stand-ins at the joined rows, the rows to copy)."""
        old_rows = np.full(len(current) + len(joined), -1, dtype=np.int64)
        kept = np.ones(len(old_rows), dtype=bool)
        kept[joined] = False
        old_rows[kept] = np.arange(len(current), dtype=np.int64)
        infos = list(current)
        for row in joined:  # ascending: each lands at its final row
            infos.insert(row, None)  # type: ignore[arg-type]  # a stand-in, copied over below
        changed = [i for i in map(index.get, self._dirty) if i is not None and old_rows[i] >= 0]
        return old_rows, infos, sorted(joined + changed)
