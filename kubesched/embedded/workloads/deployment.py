"""The Deployment controller: one ReplicaSet per pod template, named and labelled by the template's hash.

As in kube-controller-manager (pkg/controller/deployment), the new ReplicaSet's name is
``<deployment>-<pod-template-hash>``, the hash (:func:`compute_hash`) over the template and the
deployment's ``status.collisionCount``, and the hash is added to the set's selector, its labels and its
template's labels, so the pods of two revisions never match each other's selector. A name already
taken by a set with another template is a hash collision: the count goes up and the hash moves.

A template change rolls out as the controller does: with RollingUpdate (the default) the new set
grows within ``maxSurge`` over the desired count while old sets shrink, unhealthy replicas first, as
far as ``maxUnavailable`` allows; each step waits for the previous one's pods to become available,
which here means bound. With Recreate every old pod is gone before the new set grows.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from kubesched.embedded.disruption import scaled_int_or_percent
from kubesched.embedded.workloads.common import (
    POD_TEMPLATE_HASH_LABEL,
    compute_hash,
    int_field,
    key_of,
    meta,
    owner_reference,
    spec,
)

if TYPE_CHECKING:
    from kubesched.embedded.workloads.manager import ControllerManager

REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"


def _replicas(rs: dict[str, Any]) -> int:
    return int_field(spec(rs).get("replicas"), 1)


def _available(rs: dict[str, Any]) -> int:
    return int_field((rs.get("status") or {}).get("availableReplicas"), 0)


def template_without_hash(template: dict[str, Any]) -> dict[str, Any]:
    """A ReplicaSet's template as its deployment wrote it (EqualIgnoreHash)."""
    out = copy.deepcopy(template)
    labels = (out.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(POD_TEMPLATE_HASH_LABEL, None)
    return out


class DeploymentController:
    kind = "Deployment"

    def __init__(self, manager: ControllerManager) -> None:
        self.manager = manager

    def sync(self, namespace: str, name: str) -> None:
        dep = self.manager.get("Deployment", namespace, name)
        if dep is None or meta(dep).get("deletionTimestamp"):
            return
        template = spec(dep).get("template") or {}
        sets = self.manager.owned(dep, "ReplicaSet")
        new = next((rs for rs in sets if template_without_hash(spec(rs).get("template") or {}) == template), None)
        replicas = int_field(spec(dep).get("replicas"), 1)
        old = [rs for rs in sets if rs is not new]
        old.sort(key=lambda rs: (str(meta(rs).get("creationTimestamp")), str(meta(rs).get("name"))))
        recreate = (spec(dep).get("strategy") or {}).get("type") == "Recreate"
        if spec(dep).get("paused"):
            # A paused deployment is only scaled: its newest set (or its only one) takes the count.
            current = new or (sets[-1] if len(sets) == 1 else None)
            if current is not None:
                self._scale(current, replicas)
            return
        if new is None:
            first = 0 if (recreate and any(_replicas(rs) for rs in old)) else replicas
            if not recreate and old:
                first = self._new_replicas(dep, replicas, old, 0)
            new = self._create_replica_set(dep, template, first, sets)
            if new is None:
                return
        elif recreate:
            self._recreate(dep, replicas, new, old)
        elif not any(_replicas(rs) for rs in old):
            self._scale(new, replicas)  # no rollout under way: a plain scale
        else:
            self._scale(new, self._new_replicas(dep, replicas, old, _replicas(new)))
            self._scale_down_old(dep, replicas, new, old)
        self._update_status(dep, self.manager.get("ReplicaSet", namespace, meta(new)["name"]) or new)

    # -- strategies (pkg/controller/deployment: rolling.go, recreate.go) -------------------------------
    def _surge_and_unavailable(self, dep: dict[str, Any], replicas: int) -> tuple[int, int]:
        """ResolveFenceposts: maxSurge rounds up, maxUnavailable down; both zero means one unavailable."""
        rolling = (spec(dep).get("strategy") or {}).get("rollingUpdate") or {}
        try:
            surge = scaled_int_or_percent(rolling.get("maxSurge", "25%"), replicas, round_up=True)
            unavailable = scaled_int_or_percent(rolling.get("maxUnavailable", "25%"), replicas, round_up=False)
        except ValueError:
            surge, unavailable = 1, 0
        if surge == 0 and unavailable == 0:
            unavailable = 1
        return surge, min(unavailable, replicas)

    def _max_replicas(self, dep: dict[str, Any]) -> int:
        """MaxSurge added to the desired count (what the max-replicas annotation records)."""
        replicas = int_field(spec(dep).get("replicas"), 1)
        if (spec(dep).get("strategy") or {}).get("type") == "Recreate":
            return replicas
        return replicas + self._surge_and_unavailable(dep, replicas)[0]

    def _new_replicas(self, dep: dict[str, Any], replicas: int, old: list[dict[str, Any]], current: int) -> int:
        """NewRSNewReplicas: grow the new set as far as maxSurge allows over the desired count."""
        surge, _ = self._surge_and_unavailable(dep, replicas)
        total = current + sum(_replicas(rs) for rs in old)
        if total >= replicas + surge:
            return current
        return current + min(replicas + surge - total, replicas - current)

    def _scale_down_old(
        self, dep: dict[str, Any], replicas: int, new: dict[str, Any], old: list[dict[str, Any]]
    ) -> None:
        """reconcileOldReplicaSets: shrink old sets, unhealthy replicas first, keeping enough available."""
        _, unavailable = self._surge_and_unavailable(dep, replicas)
        min_available = replicas - unavailable
        new_now = self.manager.get("ReplicaSet", *key_of(new)) or new
        new_unavailable = _replicas(new_now) - _available(new_now)
        all_count = _replicas(new_now) + sum(_replicas(rs) for rs in old)
        budget = all_count - min_available - new_unavailable
        if budget <= 0:
            return
        remaining = []
        for rs in old:  # cleanupUnhealthyReplicas, oldest first
            unhealthy = min(budget, _replicas(rs) - _available(rs))
            if unhealthy > 0:
                rs = self._scale(rs, _replicas(rs) - unhealthy)
                budget -= unhealthy
            remaining.append(rs)
        available = _available(new_now) + sum(_available(rs) for rs in remaining)
        to_remove = available - min_available
        for rs in remaining:  # scaleDownOldReplicaSetsForRollingUpdate, oldest first
            if to_remove <= 0:
                break
            step = min(_replicas(rs), to_remove)
            if step > 0:
                self._scale(rs, _replicas(rs) - step)
                to_remove -= step

    def _recreate(self, dep: dict[str, Any], replicas: int, new: dict[str, Any], old: list[dict[str, Any]]) -> None:
        """Recreate: every old pod gone before the new set grows."""
        for rs in old:
            self._scale(rs, 0)
        if any(self.manager.pod_counts(rs)[0] for rs in old):
            return
        self._scale(new, replicas)

    def _scale(self, rs: dict[str, Any], replicas: int) -> dict[str, Any]:
        if _replicas(rs) == replicas:
            return rs
        return self.manager.update({**rs, "spec": {**spec(rs), "replicas": replicas}}) or rs

    def _create_replica_set(
        self, dep: dict[str, Any], template: dict[str, Any], replicas: int, sets: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        namespace, name = str(meta(dep).get("namespace")), str(meta(dep).get("name"))
        collisions = int_field((dep.get("status") or {}).get("collisionCount"), 0)
        while True:
            pod_hash = compute_hash(template, collisions if collisions else None)
            rs_name = f"{name}-{pod_hash}"
            if self.manager.get("ReplicaSet", namespace, rs_name) is None:
                break
            collisions += 1
        rs_template = copy.deepcopy(template)
        rs_template.setdefault("metadata", {}).setdefault("labels", {})[POD_TEMPLATE_HASH_LABEL] = pod_hash
        selector = copy.deepcopy(spec(dep).get("selector") or {})
        selector.setdefault("matchLabels", {})[POD_TEMPLATE_HASH_LABEL] = pod_hash
        labels = dict((template.get("metadata") or {}).get("labels") or {})
        labels[POD_TEMPLATE_HASH_LABEL] = pod_hash
        revision = 1 + max(
            (int(meta(rs).get("annotations", {}).get(REVISION_ANNOTATION, "0") or 0) for rs in sets), default=0
        )
        rs = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": rs_name,
                "namespace": namespace,
                "labels": labels,
                "annotations": {
                    DESIRED_REPLICAS_ANNOTATION: str(int_field(spec(dep).get("replicas"), 1)),
                    MAX_REPLICAS_ANNOTATION: str(self._max_replicas(dep)),
                    REVISION_ANNOTATION: str(revision),
                },
                "ownerReferences": [owner_reference(dep)],
            },
            "spec": {"replicas": replicas, "selector": selector, "template": rs_template},
        }
        if collisions:
            dep = {**dep, "status": {**(dep.get("status") or {}), "collisionCount": collisions}}
            dep = self.manager.update(dep) or dep
        return self.manager.create(rs)

    def _update_status(self, dep: dict[str, Any], new: dict[str, Any]) -> None:
        rs_status = new.get("status") or {}
        status = {
            "observedGeneration": meta(dep).get("generation", 1),
            "replicas": rs_status.get("replicas", 0),
            "updatedReplicas": rs_status.get("replicas", 0),
            "readyReplicas": rs_status.get("readyReplicas", 0),
            "availableReplicas": rs_status.get("availableReplicas", 0),
        }
        current = dep.get("status") or {}
        if {k: current.get(k) for k in status} != status:
            self.manager.update({**dep, "status": {**current, **status}})
