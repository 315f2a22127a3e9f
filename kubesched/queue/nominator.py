"""Which pending pods were nominated to which node (by preemption), as the scheduler remembers it.

The scheduler writes a nomination here *before* it patches ``status.nominatedNodeName``, so the
next scheduling cycles already account for the preemptor; the pod object it later receives may
therefore lag behind what is stored here. Filters then treat nominated pods of equal or higher
priority as if they were already running on that node.

Nominations are kept per node in the order they were made, and by pod uid.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from kubesched.api.objects import Pod

MODE_OVERRIDE = "override"
MODE_NOOP = "noop"

PodLister = Callable[[Pod], Pod | None]
"""Returns the live version of a pod (looked up by namespace/name), or None when it is gone."""


class NominationsView(dict[str, tuple[Pod, ...]]):
    """Every nomination by node as of one version of the nominator, which can say which nodes' entries
    changed since an earlier view (:meth:`changed_since`): a reader that keeps sums renews only those."""

    __slots__ = ("_log", "version")

    def __init__(
        self,
        entries: Mapping[str, tuple[Pod, ...]] | None = None,
        version: int = 0,
        log: tuple[tuple[int, int, frozenset[str]], ...] = (),
    ) -> None:
        super().__init__(entries or {})
        self.version = version
        self._log = log

    def changed_since(self, version: int) -> set[str] | None:
        """The nodes whose entries differ between the view of ``version`` and this one; None when
        that is no longer known (then compare every entry)."""
        changed: set[str] = set()
        for start, end, nodes in reversed(self._log):
            if end <= version:
                break
            if end <= self.version:
                changed |= nodes
            if start <= version:
                return changed
        return changed if version == self.version else None


#: How many renewals of the view the nominator remembers the changed nodes of.
VIEW_LOG = 64


class Nominator:
    """Nominated pods per node; safe to share between threads (uses the lock it is given)."""

    def __init__(self, pod_lister: PodLister | None = None, lock: AbstractContextManager[Any] | None = None) -> None:
        self._pod_lister = pod_lister
        # Reentrant by default so the scheduling queue can call in while holding the same lock.
        self._lock: AbstractContextManager[Any] = lock if lock is not None else threading.RLock()
        self._by_node: dict[str, dict[str, Pod]] = {}
        self._node_of: dict[str, str] = {}
        #: Bumped by every change; :meth:`nominations` renews its view only when it moved.
        self._version = 0
        self._view: tuple[int, NominationsView] = (0, NominationsView())
        #: (version renewed from, version renewed to, nodes changed) of the last views (a new tuple each time:
        #: views are read without the lock).
        self._log: tuple[tuple[int, int, frozenset[str]], ...] = ()
        #: Nodes whose nominations changed since the view was last renewed: the next view copies the
        #: last one and rebuilds only their entries (unchanged nodes keep the very same tuples).
        self._dirty: set[str] = set()

    # -- public API --------------------------------------------------------------------------------
    def add_nominated_pod(self, pod: Pod, nominated_node_name: str = "", mode: str | None = None) -> None:
        """Record ``pod`` as nominated to a node, replacing any earlier nomination.

        ``mode`` follows ``PostFilterResult.mode``: ``"override"`` takes ``nominated_node_name`` as
        the node (an empty name just clears the nomination); ``"noop"`` / ``""`` keeps whatever the
        pod object says (``status.nominatedNodeName``). Without a mode, a non-empty name overrides
        and an empty one falls back to the pod's own.
        """
        with self._lock:
            self._add(pod, nominated_node_name, mode)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        with self._lock:
            self._delete(pod.uid)

    def update_nominated_pod(self, old_pod: Pod | None, new_pod: Pod) -> None:
        """Swap in the new pod object, keeping an in-memory nomination the update does not know yet.

        An update that neither carries nor clears a nominated node (both objects have none) must not
        drop a nomination made in memory moments ago, whose status patch has not arrived yet.
        """
        with self._lock:
            self._update(old_pod, new_pod)

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        """Pods nominated to ``node_name``, in nomination order (a copy)."""
        if node_name not in self._by_node:
            return []  # the common case, answered without taking the lock
        with self._lock:
            return list(self._by_node.get(node_name, {}).values())

    def nominations(self) -> NominationsView:
        """Every nomination by node, in nomination order: one read for a whole scheduling cycle (the
        view is shared and rebuilt only after a change; callers must not change it)."""
        version, view = self._view
        if version == self._version:
            return view
        with self._lock:
            base = self._view[1]
            self._log = (*self._log[1 - VIEW_LOG :], (base.version, self._version, frozenset(self._dirty)))
            view = NominationsView(base, self._version, self._log)
            for node in self._dirty:
                pods = self._by_node.get(node)
                if pods:
                    view[node] = tuple(pods.values())
                else:
                    view.pop(node, None)
            self._dirty.clear()
            self._view = (self._version, view)
            return view

    def nominated_node_of(self, uid: str) -> str | None:
        """The node a pod is nominated to in memory (None when it has no nomination)."""
        with self._lock:
            return self._node_of.get(uid)

    def nominated_node_names(self) -> list[str]:
        """Nodes with at least one nominated pod."""
        with self._lock:
            return list(self._by_node)

    def __len__(self) -> int:
        with self._lock:
            return len(self._node_of)

    # -- lock held ---------------------------------------------------------------------------------
    def _add(self, pod: Pod, nominated_node_name: str = "", mode: str | None = None) -> None:
        self._delete(pod.uid)
        if mode is None:
            mode = MODE_OVERRIDE if nominated_node_name else MODE_NOOP
        node_name = nominated_node_name if mode == MODE_OVERRIDE else pod.nominated_node_name
        if not node_name:
            # Nothing to nominate to (kube-scheduler files these under node "", which no one reads).
            return
        current: Pod | None = pod
        if self._pod_lister is not None:
            current = self._pod_lister(pod)
        if current is None or current.node_name:
            # The pod is gone or already bound: a nomination would only block capacity.
            return
        self._node_of[pod.uid] = node_name
        self._by_node.setdefault(node_name, {})[pod.uid] = pod
        self._dirty.add(node_name)
        self._version += 1

    def _delete(self, uid: str) -> None:
        node_name = self._node_of.pop(uid, None)
        if node_name is None:
            return
        self._version += 1
        self._dirty.add(node_name)
        pods = self._by_node.get(node_name)
        if pods is not None:
            pods.pop(uid, None)
            if not pods:
                del self._by_node[node_name]

    def _update(self, old_pod: Pod | None, new_pod: Pod) -> None:
        override: str | None = None
        old_uid = old_pod.uid if old_pod is not None else new_pod.uid
        old_nnn = old_pod.nominated_node_name if old_pod is not None else ""
        if not old_nnn and not new_pod.nominated_node_name:
            override = self._node_of.get(old_uid)
        self._delete(old_uid)
        if override is not None:
            self._add(new_pod, override, MODE_OVERRIDE)
        else:
            self._add(new_pod, "", MODE_NOOP)
