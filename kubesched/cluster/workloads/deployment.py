"""The Deployment controller: one ReplicaSet per pod template, named and labelled by the template's hash.

As in kube-controller-manager (pkg/controller/deployment), the new ReplicaSet's name is
``<deployment>-<pod-template-hash>``, the hash (:func:`compute_hash`) over the template and the
deployment's ``status.collisionCount``, and the hash is added to the set's selector, its labels and its
template's labels, so the pods of two revisions never match each other's selector. A name already
taken by a set with another template is a hash collision: the count goes up and the hash moves.

Rollouts happen in one step: the new set gets every replica and older sets are scaled to zero (what
the Recreate strategy does; RollingUpdate's surge and unavailability budgets are not simulated).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from kubesched.cluster.workloads.common import (
    POD_TEMPLATE_HASH_LABEL,
    compute_hash,
    int_field,
    meta,
    owner_reference,
    spec,
)

if TYPE_CHECKING:
    from kubesched.cluster.workloads.manager import ControllerManager

REVISION_ANNOTATION = "deployment.kubernetes.io/revision"


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
        if new is None:
            new = self._create_replica_set(dep, template, replicas, sets)
            if new is None:
                return
        elif int_field(spec(new).get("replicas"), 1) != replicas:
            self.manager.update({**new, "spec": {**spec(new), "replicas": replicas}})
        for old in sets:
            if old is not new and meta(old).get("uid") != meta(new).get("uid") and \
                    int_field(spec(old).get("replicas"), 1) != 0:
                self.manager.update({**old, "spec": {**spec(old), "replicas": 0}})
        self._update_status(dep, new)

    def _create_replica_set(self, dep: dict[str, Any], template: dict[str, Any], replicas: int,
                            sets: list[dict[str, Any]]) -> dict[str, Any] | None:
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
        revision = 1 + max((int(meta(rs).get("annotations", {}).get(REVISION_ANNOTATION, "0") or 0)
                            for rs in sets), default=0)
        rs = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": rs_name,
                "namespace": namespace,
                "labels": labels,
                "annotations": {REVISION_ANNOTATION: str(revision)},
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
