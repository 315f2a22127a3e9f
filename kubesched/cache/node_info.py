"""NodeInfo: one node and everything the scheduler has placed (or assumed) on it.

A NodeInfo is mutated only by the cache. Each change takes a fresh value from a global generation
counter, which is how the snapshot learns which nodes to refresh before a scheduling cycle without
rebuilding everything.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import CPU, MEMORY

_generations = itertools.count(1)

DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"


def next_generation() -> int:
    """A process-wide increasing number: newer changes always compare greater."""
    return next(_generations)


@dataclass(frozen=True, slots=True)
class ImageStateSummary:
    """An image on a node: its size and on how many nodes it is present (as of the last refresh)."""

    size: int
    num_nodes: int


class HostPortInfo:
    """Host ports in use on a node: ip -> {(protocol, port)}; 0.0.0.0 overlaps every ip."""

    __slots__ = ("_ports",)

    def __init__(self) -> None:
        self._ports: dict[str, dict[tuple[str, int], int]] = {}

    @staticmethod
    def _sanitize(ip: str, protocol: str) -> tuple[str, str]:
        return ip or DEFAULT_BIND_ALL_HOST_IP, protocol or "TCP"

    def add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        by_ip = self._ports.setdefault(ip, {})
        by_ip[(protocol, port)] = by_ip.get((protocol, port), 0) + 1

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        by_ip = self._ports.get(ip)
        if not by_ip or (protocol, port) not in by_ip:
            return
        by_ip[(protocol, port)] -= 1
        if by_ip[(protocol, port)] <= 0:
            del by_ip[(protocol, port)]
        if not by_ip:
            del self._ports[ip]

    def conflicts(self, ip: str, protocol: str, port: int) -> bool:
        """Whether a new (ip, protocol, port) would clash with a port already in use."""
        if port <= 0:
            return False
        ip, protocol = self._sanitize(ip, protocol)
        entry = (protocol, port)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(entry in ports for ports in self._ports.values())
        return entry in self._ports.get(ip, {}) or entry in self._ports.get(DEFAULT_BIND_ALL_HOST_IP, {})

    def __len__(self) -> int:
        return sum(len(p) for p in self._ports.values())

    def copy(self) -> HostPortInfo:
        clone = HostPortInfo.__new__(HostPortInfo)
        ports = self._ports
        # Most nodes use no host port: their copy starts empty without running the comprehension.
        clone._ports = {ip: dict(by_ip) for ip, by_ip in ports.items()} if ports else {}
        return clone


def has_pod_affinity(pod: Pod) -> bool:
    """Whether the pod declares pod (anti-)affinity at all (an empty block counts, as in Go)."""
    return pod.pod_affinity.declared


def has_required_anti_affinity(pod: Pod) -> bool:
    return bool(pod.pod_affinity.required_anti_affinity)


def pvc_keys(pod: Pod) -> Iterable[str]:
    for volume in pod.volumes:
        claim = volume.get("persistentVolumeClaim")
        if claim and claim.get("claimName"):
            yield f"{pod.namespace}/{claim['claimName']}"


def _counts_the_same(old: Pod, new: Pod) -> bool:
    """Whether ``new`` adds to a node's sums (requests, ports, PVC references) exactly what ``old``
    did: the fields are the very same objects, as when one version was made from the other."""
    return (
        old.requests is new.requests
        and old.host_ports is new.host_ports
        and old.volumes is new.volumes
        and old.non_zero_cpu == new.non_zero_cpu
        and old.non_zero_memory == new.non_zero_memory
        and old.meta.namespace == new.meta.namespace
    )


class NodeInfo:
    """Aggregated scheduling state of one node (requests, pods, ports, images)."""

    __slots__ = (
        "generation",
        "image_states",
        "name",
        "node",
        "non_zero_cpu",
        "non_zero_memory",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "pvc_ref_counts",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node | None = None, pods: Iterable[Pod] = ()) -> None:
        self.node: Node | None = node
        #: The node's name ("" without a node), kept beside ``node``: read for every node on every change.
        self.name = node.name if node is not None else ""
        self.pods: list[Pod] = []
        self.pods_with_affinity: list[Pod] = []
        self.pods_with_required_anti_affinity: list[Pod] = []
        self.requested: dict[str, int] = {}
        self.non_zero_cpu = 0
        self.non_zero_memory = 0
        self.used_ports = HostPortInfo()
        self.image_states: Mapping[str, ImageStateSummary] = {}
        self.pvc_ref_counts: dict[str, int] = {}
        self.generation = next_generation()
        for pod in pods:
            self.add_pod(pod)

    @property
    def allocatable(self) -> Mapping[str, int]:
        return self.node.allocatable if self.node is not None else {}

    def set_node(self, node: Node) -> None:
        self.node = node
        self.name = node.name
        self.generation = next_generation()

    def add_pod(self, pod: Pod) -> None:
        self.pods.append(pod)
        affinity = pod.pod_affinity  # what has_pod_affinity and has_required_anti_affinity read
        if affinity.declared:
            self.pods_with_affinity.append(pod)
        if affinity.required_anti_affinity:
            self.pods_with_required_anti_affinity.append(pod)
        self._account(pod, +1)

    def remove_pod(self, pod: Pod) -> bool:
        """Remove the pod with the same uid; False when it is not on this node."""
        pods = self.pods
        try:
            # Usually ``pod`` itself is listed (the cache removes the object it added, preemption one it
            # listed): found by identity (pods compare by identity) without reading every pod's uid. As
            # uids are unique on a node, no other pod holds its uid then.
            i = pods.index(pod)
        except ValueError:
            i = self._position_of_uid(pod.meta.uid)
            if i < 0:
                return False
        existing = pods.pop(i)
        uid = existing.meta.uid
        if self.pods_with_affinity:
            self.pods_with_affinity = [p for p in self.pods_with_affinity if p.meta.uid != uid]
        if self.pods_with_required_anti_affinity:
            self.pods_with_required_anti_affinity = [
                p for p in self.pods_with_required_anti_affinity if p.meta.uid != uid
            ]
        self._account(existing, -1)
        return True

    def _position_of_uid(self, uid: str) -> int:
        """Where the pod with this uid is in ``pods``, -1 when absent. Looked for from the end: uids are
        unique on a node, and the version a binding confirms is the pod assumed last."""
        pods = self.pods
        i = len(pods) - 1
        while i >= 0 and pods[i].meta.uid != uid:
            i -= 1
        return i

    def replace_pod(self, pod: Pod) -> None:
        """Put ``pod`` in place of the pod with its uid (removed, then added last, as a remove and an add
        would). A new version of the same pod that counts for the same (a binding confirmed, a status
        update: the parsed fields are shared) keeps the node's sums as they are."""
        uid = pod.meta.uid
        i = self._position_of_uid(uid)
        if i < 0:
            self.add_pod(pod)
            return
        pods = self.pods
        existing = pods[i]
        if not _counts_the_same(existing, pod):
            self.remove_pod(existing)
            self.add_pod(pod)
            return
        del pods[i]
        pods.append(pod)
        # What has_pod_affinity and has_required_anti_affinity read, read once per version.
        old_affinity, affinity = existing.pod_affinity, pod.pod_affinity
        if old_affinity.declared or affinity.declared:
            self.pods_with_affinity = [p for p in self.pods_with_affinity if p.meta.uid != uid]
            if affinity.declared:
                self.pods_with_affinity.append(pod)
        if old_affinity.required_anti_affinity or affinity.required_anti_affinity:
            self.pods_with_required_anti_affinity = [
                p for p in self.pods_with_required_anti_affinity if p.meta.uid != uid
            ]
            if affinity.required_anti_affinity:
                self.pods_with_required_anti_affinity.append(pod)
        self.generation = next(_generations)

    def _account(self, pod: Pod, sign: int) -> None:
        requested = self.requested
        for name, value in pod.requests.items():
            requested[name] = requested.get(name, 0) + sign * value
        self.non_zero_cpu += sign * pod.non_zero_cpu
        self.non_zero_memory += sign * pod.non_zero_memory
        if pod.host_ports:  # most pods use no host port and no PVC: no loop to set up
            self._account_ports(pod, sign)
        if pod.volumes:
            self._account_pvcs(pod, sign)
        self.generation = next(_generations)  # next_generation(), without the call

    def _account_ports(self, pod: Pod, sign: int) -> None:
        for port in pod.host_ports:
            if sign > 0:
                self.used_ports.add(port.host_ip, port.protocol, port.host_port)
            else:
                self.used_ports.remove(port.host_ip, port.protocol, port.host_port)

    def _account_pvcs(self, pod: Pod, sign: int) -> None:
        for key in pvc_keys(pod):
            count = self.pvc_ref_counts.get(key, 0) + sign
            if count > 0:
                self.pvc_ref_counts[key] = count
            else:
                self.pvc_ref_counts.pop(key, None)

    def requested_cpu(self) -> int:
        return self.requested.get(CPU, 0)

    def requested_memory(self) -> int:
        return self.requested.get(MEMORY, 0)

    def snapshot(self) -> NodeInfo:
        """A copy the scheduling cycle can read while the cache keeps changing (pods shared, lists copied)."""
        clone = NodeInfo.__new__(NodeInfo)
        clone.node = self.node
        clone.name = self.name
        clone.pods = self.pods.copy()
        clone.pods_with_affinity = self.pods_with_affinity.copy()
        clone.pods_with_required_anti_affinity = self.pods_with_required_anti_affinity.copy()
        clone.requested = self.requested.copy()
        clone.non_zero_cpu = self.non_zero_cpu
        clone.non_zero_memory = self.non_zero_memory
        clone.used_ports = self.used_ports.copy()
        clone.image_states = self.image_states
        clone.pvc_ref_counts = self.pvc_ref_counts.copy()
        clone.generation = self.generation
        return clone

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, pods={len(self.pods)}, generation={self.generation})"
