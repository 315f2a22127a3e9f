"""The DaemonSet controller: one pod on every node that should run it, scheduled by the scheduler.

Which nodes should (pkg/controller/daemon NodeShouldRunDaemonPod): the template's nodeName, if set,
names the node; the template's nodeSelector and required node affinity match it; and every NoSchedule
and NoExecute taint is tolerated, counting the tolerations the controller adds to each daemon pod
(not-ready and unreachable NoExecute; disk-, memory-, pid-pressure and unschedulable NoSchedule;
network-unavailable NoSchedule for hostNetwork pods). A node that stops qualifying keeps its pod only
when no NoExecute taint is untolerated.

Each pod pins itself to its node with a required node affinity term ``matchFields metadata.name In
[node]`` in place of the template's required terms, and the scheduler places it (no nodeName is set).
New nodes get their pods as soon as the node's watch event arrives.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from kubesched.api.errors import ObjectError
from kubesched.api.objects import Node, Pod
from kubesched.api.taints import find_untolerated_taint
from kubesched.cluster.workloads.common import (
    CONTROLLER_REVISION_HASH_LABEL,
    compute_hash,
    is_active,
    is_bound,
    meta,
    pod_from_template,
    spec,
)
from kubesched.plugins.nodeaffinity import RequiredNodeAffinity

if TYPE_CHECKING:
    from kubesched.cluster.workloads.manager import ControllerManager

TEMPLATE_GENERATION_LABEL = "pod-template-generation"
NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"


def daemon_tolerations(pod_spec: dict[str, Any]) -> None:
    """util.AddOrUpdateDaemonPodTolerations: add (or replace by key and effect) the default tolerations."""
    defaults = [
        ("node.kubernetes.io/not-ready", NO_EXECUTE),
        ("node.kubernetes.io/unreachable", NO_EXECUTE),
        ("node.kubernetes.io/disk-pressure", NO_SCHEDULE),
        ("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
        ("node.kubernetes.io/pid-pressure", NO_SCHEDULE),
        ("node.kubernetes.io/unschedulable", NO_SCHEDULE),
    ]
    if pod_spec.get("hostNetwork"):
        defaults.append(("node.kubernetes.io/network-unavailable", NO_SCHEDULE))
    tolerations = [t for t in pod_spec.get("tolerations") or [] if isinstance(t, dict)]
    for key, effect in defaults:
        wanted = {"key": key, "operator": "Exists", "effect": effect}
        for i, existing in enumerate(tolerations):
            if existing.get("key") == key and existing.get("effect") == effect:
                tolerations[i] = wanted
                break
        else:
            tolerations.append(wanted)
    pod_spec["tolerations"] = tolerations


def pin_to_node(pod_spec: dict[str, Any], node_name: str) -> None:
    """util.ReplaceDaemonSetPodNodeNameNodeAffinity: the required terms become ``metadata.name In [node]``."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    affinity = pod_spec.setdefault("affinity", {}) or {}
    pod_spec["affinity"] = affinity
    node_affinity = affinity.setdefault("nodeAffinity", {}) or {}
    affinity["nodeAffinity"] = node_affinity
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {**required, "nodeSelectorTerms": [term]}


def should_run(ds: dict[str, Any], node: Node) -> tuple[bool, bool]:
    """(should run a pod there, may keep one already running there), as NodeShouldRunDaemonPod."""
    template_spec = copy.deepcopy(spec(ds).get("template") or {}).get("spec") or {}
    if template_spec.get("nodeName") and template_spec["nodeName"] != node.name:
        return False, False
    daemon_tolerations(template_spec)
    try:
        pod = Pod.from_dict({"metadata": {"name": "daemon", "namespace": "default"}, "spec": template_spec})
    except ObjectError:
        return False, False
    if not RequiredNodeAffinity.of(pod).matches(node):
        return False, False
    if find_untolerated_taint(node.taints, pod.tolerations, (NO_SCHEDULE, NO_EXECUTE)) is not None:
        keep = find_untolerated_taint(node.taints, pod.tolerations, (NO_EXECUTE,)) is None
        return False, keep
    return True, True


def target_node(pod: dict[str, Any]) -> str | None:
    """GetTargetNodeName: the node a daemon pod is for (its nodeName, else its pinning affinity)."""
    if spec(pod).get("nodeName"):
        return str(spec(pod)["nodeName"])
    terms = ((((spec(pod).get("affinity") or {}).get("nodeAffinity") or {})
              .get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or [])
    for term in terms:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and \
                    len(field.get("values") or []) == 1:
                return str(field["values"][0])
    return None


class DaemonSetController:
    kind = "DaemonSet"

    def __init__(self, manager: ControllerManager) -> None:
        self.manager = manager

    def sync(self, namespace: str, name: str) -> None:
        ds = self.manager.get("DaemonSet", namespace, name)
        if ds is None or meta(ds).get("deletionTimestamp"):
            return
        by_node: dict[str, list[dict[str, Any]]] = {}
        for pod in self.manager.owned(ds, "Pod"):
            if is_active(pod):
                by_node.setdefault(target_node(pod) or "", []).append(pod)
        revision = compute_hash(spec(ds).get("template") or {})
        desired = 0
        for raw in self.manager.nodes():
            try:
                node = Node.from_dict(raw)
            except ObjectError:
                continue
            run, keep = should_run(ds, node)
            pods = by_node.pop(node.name, [])
            desired += run
            if run and not pods:
                self._create_pod(ds, node.name, revision)
            elif not keep:
                for pod in pods:
                    self.manager.delete(pod)
            elif len(pods) > 1:
                # Duplicates: keep the bound (or oldest) one, as the controller does.
                pods.sort(key=lambda p: (not is_bound(p), str(meta(p).get("creationTimestamp")),
                                         str(meta(p).get("name"))))
                for pod in pods[1:]:
                    self.manager.delete(pod)
        for pods in by_node.values():  # pods for nodes that no longer exist
            for pod in pods:
                self.manager.delete(pod)
        self._update_status(ds, desired)

    def _create_pod(self, ds: dict[str, Any], node_name: str, revision: str) -> None:
        namespace, name = str(meta(ds).get("namespace")), str(meta(ds).get("name"))
        base = f"{name}-"
        while True:
            pod_name = self.manager.names.generate(base)
            if self.manager.get("Pod", namespace, pod_name) is None:
                break
        pod = pod_from_template(ds, spec(ds).get("template") or {}, name=pod_name, generate_name=base,
                                extra_labels={CONTROLLER_REVISION_HASH_LABEL: revision,
                                              TEMPLATE_GENERATION_LABEL: str(meta(ds).get("generation", 1))})
        daemon_tolerations(pod["spec"])
        pin_to_node(pod["spec"], node_name)
        pod["spec"].pop("nodeName", None)
        self.manager.create(pod)

    def _update_status(self, ds: dict[str, Any], desired: int) -> None:
        pods = [p for p in self.manager.owned(ds, "Pod") if is_active(p)]
        ready = sum(1 for p in pods if is_bound(p))
        status = {"observedGeneration": meta(ds).get("generation", 1), "desiredNumberScheduled": desired,
                  "currentNumberScheduled": ready, "numberReady": ready, "numberAvailable": ready,
                  "numberMisscheduled": 0}
        current = ds.get("status") or {}
        if {k: current.get(k) for k in status} != status:
            self.manager.update({**ds, "status": {**current, **status}})
