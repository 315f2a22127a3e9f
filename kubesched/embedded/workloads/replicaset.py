"""The ReplicaSet controller: keep ``spec.replicas`` active pods that the set controls.

Missing pods are created from the template (named ``<set>-<5 random characters>`` as generateName
would name them); surplus pods are deleted in the order kube-controller-manager prefers: unassigned
before assigned, then the newest first. Status counts replicas and ready replicas (a bound pod is
ready: the simulation has no kubelet).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.embedded.workloads.common import int_field, is_active, meta, pod_from_template, spec

if TYPE_CHECKING:
    from kubesched.embedded.workloads.manager import ControllerManager


def deletion_rank(pod: dict[str, Any]) -> tuple[int, str, str]:
    """Sort key: the pods to delete first come first (unassigned, then newer, then by name)."""
    assigned = 1 if spec(pod).get("nodeName") else 0
    created = str(meta(pod).get("creationTimestamp") or "")
    # Newer first: invert the timestamp's characters so that a plain ascending sort puts it first.
    newer_first = "".join(chr(0x10FFFF - ord(c)) for c in created)
    return assigned, newer_first, str(meta(pod).get("name"))


class ReplicaSetController:
    kind = "ReplicaSet"

    def __init__(self, manager: ControllerManager) -> None:
        self.manager = manager

    def sync(self, namespace: str, name: str) -> None:
        rs = self.manager.get("ReplicaSet", namespace, name)
        if rs is None or meta(rs).get("deletionTimestamp"):
            return
        want = int_field(spec(rs).get("replicas"), 1)
        active, _ = self.manager.pod_counts(rs)
        if active < want:
            template = spec(rs).get("template") or {}
            for _ in range(want - active):
                base = f"{name}-"
                pod_name = self.manager.free_pod_name(namespace, base)
                if self.manager.create(pod_from_template(rs, template, name=pod_name, generate_name=base)) is None:
                    break
        elif active > want:
            pods = [p for p in self.manager.owned(rs, "Pod") if is_active(p)]
            for pod in sorted(pods, key=deletion_rank)[: active - want]:
                self.manager.delete(pod)
        self._update_status(rs)

    def _update_status(self, rs: dict[str, Any]) -> None:
        active, ready = self.manager.pod_counts(rs)
        status = {
            "replicas": active,
            "fullyLabeledReplicas": active,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "observedGeneration": meta(rs).get("generation", 1),
        }
        if {k: (rs.get("status") or {}).get(k) for k in status} != status:
            self.manager.update({**rs, "status": {**(rs.get("status") or {}), **status}})
