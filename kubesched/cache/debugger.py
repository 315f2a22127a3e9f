"""The cache debugger: does the scheduler see the cluster as the informers see it?

kube-scheduler answers SIGUSR2 (backend/cache/debugger) by comparing its cache with the informers'
listers, then dumping the cache and the queue to its log; ``kubesched run`` does the same
(:meth:`CacheDebugger.listen_for_signal`), with the same lines:

- ``"Cache mismatch" missedNodes=[…] redundantNodes=[…]``: nodes the listers hold and the cache lacks,
  and cached nodes the listers do not hold (a deleted node that still holds pods counts as cached);
- ``"Cache mismatch" missedPods=[…] redundantPods=[…]``: pod uids the listers hold that are neither on a
  cached node nor pending in the queue, and the other way round (a uid held twice is redundant once);
- kubesched adds ``"Cache mismatch" mismatchedPods=[…]``: pods both hold whose node differs (cached on
  one node and bound to another, or bound and still pending in the queue, or assumed on a node the
  cluster has not bound them to), which the uid comparison alone cannot see;
- ``"Dump of cached NodeInfo" nodes=…``: per node its name, whether it was deleted, requested and
  allocatable resources, its pods and the pods nominated to it; kubesched adds ``assumedPods``, the
  pods assumed and not yet confirmed by the cluster;
- ``"Dump of scheduling queue" summary="activeQ:…; backoffQ:…; unschedulablePods:…" pods=…``.

A mismatch line is written only when something differs. As upstream, the comparison reads the listers,
the cache and the queue one after the other, so a pod caught between two of them (being scheduled,
its binding in flight) shows as a difference that the next comparison no longer has. The comparison
itself is made of plain functions over names and uids, so a test can put a fresh list from the API
server in place of the listers.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubesched.api.objects import Pod
from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched.cache.cache import Cache
from kubesched.cache.node_info import NodeInfo
from kubesched.klog import Logger

log = logging.getLogger(__name__)
logger = Logger(__name__)

#: Read by the comparer: every object of one kind as the API serves it (an informer's store, a fresh list).
Lister = Callable[[], Iterable[Mapping[str, Any]]]
#: How often the signal thread looks at the stop event while no signal came.
SIGNAL_POLL_SECONDS = 0.5
#: Where a pending pod is, for the node comparison: in the queue, on no node.
QUEUED = "(queue)"
UNBOUND = "(none)"


class QueueView(Protocol):
    """What the debugger reads of the scheduling queue."""

    def pending_pod_list(self) -> list[Pod]: ...

    def pending_pods(self) -> dict[str, int]: ...

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]: ...


@dataclass(frozen=True, slots=True)
class CacheDiff:
    """What one comparison found; empty lists everywhere when the cache agrees with the listers."""

    missed_nodes: list[str] = field(default_factory=list)
    redundant_nodes: list[str] = field(default_factory=list)
    missed_pods: list[str] = field(default_factory=list)
    redundant_pods: list[str] = field(default_factory=list)
    mismatched_pods: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (
            self.missed_nodes or self.redundant_nodes or self.missed_pods or self.redundant_pods or self.mismatched_pods
        )


# -- the comparer's pieces -----------------------------------------------------------------------------
def compare_strings(actual: Iterable[str], cached: Iterable[str]) -> tuple[list[str], list[str]]:
    """(missed, redundant): what ``actual`` has and ``cached`` lacks, and the other way round, both sorted.
    A value ``cached`` holds more often than ``actual`` is redundant once per extra time."""
    want, have = sorted(actual), sorted(cached)
    missed: list[str] = []
    redundant: list[str] = []
    i = j = 0
    while i < len(want) or j < len(have):
        if j == len(have) or (i < len(want) and want[i] < have[j]):
            missed.append(want[i])
            i += 1
        elif i == len(want) or want[i] > have[j]:
            redundant.append(have[j])
            j += 1
        else:
            i += 1
            j += 1
    return missed, redundant


def compare_nodes(
    nodes: Iterable[Mapping[str, Any]], node_infos: Mapping[str, NodeInfo]
) -> tuple[list[str], list[str]]:
    """Node names the listers hold against the cached ones: (missed, redundant)."""
    return compare_strings((_meta(n).get("name") or "" for n in nodes), node_infos)


def compare_pods(
    pods: Iterable[Mapping[str, Any]], waiting: Iterable[Pod], node_infos: Mapping[str, NodeInfo]
) -> tuple[list[str], list[str]]:
    """Pod uids the listers hold against those on cached nodes and pending in the queue: (missed, redundant)."""
    cached = [p.uid for info in node_infos.values() for p in info.pods]
    cached += [p.uid for p in waiting]
    return compare_strings((str(_meta(p).get("uid") or "") for p in pods), cached)


def compare_pod_nodes(
    pods: Iterable[Mapping[str, Any]], waiting: Iterable[Pod], node_infos: Mapping[str, NodeInfo]
) -> list[str]:
    """Pods the listers and the scheduler both hold whose node differs, one line each, sorted:
    ``namespace/name(uid): cache n1, cluster n2`` (``(queue)`` for a pending pod, ``(none)`` unbound)."""
    placed: dict[str, list[str]] = {}
    for name, info in node_infos.items():
        for pod in info.pods:
            placed.setdefault(pod.uid, []).append(name)
    for pod in waiting:
        placed.setdefault(pod.uid, []).append(QUEUED)
    found = []
    for obj in pods:
        meta = _meta(obj)
        where = placed.get(str(meta.get("uid") or ""))
        if where is None:
            continue  # missing altogether: compare_pods reports it
        bound = str((obj.get("spec") or {}).get("nodeName") or "")
        expected = bound or QUEUED
        if any(place != expected for place in where):
            found.append(
                f"{meta.get('namespace') or ''}/{meta.get('name') or ''}({meta.get('uid')}): "
                f"cache {', '.join(sorted(where))}, cluster {bound or UNBOUND}"
            )
    return sorted(found)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


# -- the dumper's text, as kube-scheduler prints it ----------------------------------------------------------
def print_resource(resources: Mapping[str, int]) -> str:
    """A resource list as Go prints kube-scheduler's ``*framework.Resource`` with ``%+v``."""
    scalar = " ".join(
        f"{name}:{value}"
        for name, value in sorted(resources.items())
        if name not in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)
    )
    return (
        f"&{{MilliCPU:{resources.get(CPU, 0)} Memory:{resources.get(MEMORY, 0)} "
        f"EphemeralStorage:{resources.get(EPHEMERAL_STORAGE, 0)} AllowedPodNumber:{resources.get(PODS, 0)} "
        f"ScalarResources:map[{scalar}]}}"
    )


def print_pod(pod: Pod) -> str:
    return (
        f"name: {pod.name}, namespace: {pod.namespace}, uid: {pod.uid}, phase: {pod.phase}, "
        f"nominated node: {pod.nominated_node_name}\n"
    )


def print_node_info(name: str, info: NodeInfo, nominated: Sequence[Pod]) -> str:
    requested = {k: v for k, v in info.requested.items() if k != PODS}  # upstream never counts pods there
    text = (
        f"Node name: {name}\nDeleted: {'true' if info.node is None else 'false'}\n"
        f"Requested Resources: {print_resource(requested)}\n"
        f"Allocatable Resources:{print_resource(info.allocatable)}\n"
        f"Scheduled Pods(number: {len(info.pods)}):\n"
    )
    text += "".join(print_pod(p) for p in info.pods)
    if nominated:
        text += f"Nominated Pods(number: {len(nominated)}):\n" + "".join(print_pod(p) for p in nominated)
    return text


def queue_summary(counts: Mapping[str, int]) -> str:
    """kube-scheduler's summary of PendingPods (gated pods wait among the unschedulable ones there)."""
    return (
        f"activeQ:{counts.get('active', 0)}; backoffQ:{counts.get('backoff', 0)}; "
        f"unschedulablePods:{counts.get('unschedulable', 0) + counts.get('gated', 0)}"
    )


# -- the debugger ------------------------------------------------------------------------------------------
class CacheDebugger:
    """The comparer and the dumper over one scheduler's cache and queue (see the module docstring)."""

    def __init__(self, node_lister: Lister, pod_lister: Lister, cache: Cache, queue: QueueView) -> None:
        self.node_lister = node_lister
        self.pod_lister = pod_lister
        self.cache = cache
        self.queue = queue

    def compare(self) -> CacheDiff:
        """Compare the cache (and the queue's pending pods) with the listers; log what differs."""
        if v := logger.v(3):
            v.info("Cache comparer started")
        nodes, pods = list(self.node_lister()), list(self.pod_lister())
        dump = self.cache.dump()
        waiting = self.queue.pending_pod_list()
        missed_nodes, redundant_nodes = compare_nodes(nodes, dump.nodes)
        if missed_nodes or redundant_nodes:
            logger.info("Cache mismatch", "missedNodes", missed_nodes, "redundantNodes", redundant_nodes)
        missed_pods, redundant_pods = compare_pods(pods, waiting, dump.nodes)
        if missed_pods or redundant_pods:
            logger.info("Cache mismatch", "missedPods", missed_pods, "redundantPods", redundant_pods)
        mismatched = compare_pod_nodes(pods, waiting, dump.nodes)
        if mismatched:
            logger.info("Cache mismatch", "mismatchedPods", mismatched)
        if v := logger.v(3):
            v.info("Cache comparer finished")
        return CacheDiff(missed_nodes, redundant_nodes, missed_pods, redundant_pods, mismatched)

    def dump_all(self) -> None:
        """Log the cached nodes (with their pods) and the scheduling queue."""
        dump = self.cache.dump()
        blocks = [
            print_node_info(name, info, self.queue.nominated_pods_for_node(name))
            for name, info in sorted(dump.nodes.items())
        ]
        # A blank line between nodes, as upstream, for the eye.
        logger.info("Dump of cached NodeInfo", "nodes", "\n\n".join(blocks), "assumedPods", sorted(dump.assumed_pods))
        pending = self.queue.pending_pod_list()
        logger.info(
            "Dump of scheduling queue",
            "summary",
            queue_summary(self.queue.pending_pods()),
            "pods",
            "".join(print_pod(p) for p in pending),
        )

    def listen_for_signal(self, stop: threading.Event) -> bool:
        """Compare and dump on every SIGUSR2 until ``stop`` is set, from a thread of its own (the signal
        handler only wakes it). False where no handler can be installed: outside the main thread, or
        where there is no SIGUSR2."""
        sigusr2 = getattr(signal, "SIGUSR2", None)
        if sigusr2 is None or threading.current_thread() is not threading.main_thread():
            return False
        wake = threading.Event()
        signal.signal(sigusr2, lambda _signum, _frame: wake.set())

        def serve() -> None:
            while not stop.is_set():
                if not wake.wait(SIGNAL_POLL_SECONDS):
                    continue
                wake.clear()
                try:
                    self.compare()
                    self.dump_all()
                except Exception:  # a debugging aid must never take the scheduler down
                    log.exception("cache debugger failed")

        threading.Thread(target=serve, name="cache-debugger", daemon=True).start()
        return True
