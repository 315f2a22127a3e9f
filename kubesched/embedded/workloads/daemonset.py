"""The DaemonSet controller: one pod on every node that should run it, scheduled by the scheduler.

Which nodes should (pkg/controller/daemon NodeShouldRunDaemonPod): the template's nodeName, if set,
names the node; the template's nodeSelector and required node affinity match it; and every NoSchedule
and NoExecute taint is tolerated, counting the tolerations the controller adds to each daemon pod
(not-ready and unreachable NoExecute; disk-, memory-, pid-pressure and unschedulable NoSchedule;
network-unavailable NoSchedule for hostNetwork pods). A node that stops qualifying keeps its pod only
when no NoExecute taint is untolerated.

Each pod pins itself to its node with a required node affinity term ``matchFields metadata.name In
[node]`` in place of the template's required terms, and the scheduler places it (no nodeName is set).
New nodes get their pods as soon as the node's watch event arrives. A template change replaces the
pods node by node (RollingUpdate, ``maxUnavailable`` nodes at a time; OnDelete leaves them).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from kubesched.api.errors import ObjectError
from kubesched.api.node_affinity import RequiredNodeAffinity
from kubesched.api.objects import Node, Pod
from kubesched.api.taints import find_untolerated_taint
from kubesched.embedded.disruption import scaled_int_or_percent
from kubesched.embedded.workloads.common import (
    CONTROLLER_REVISION_HASH_LABEL,
    compute_hash,
    is_active,
    is_bound,
    meta,
    pod_from_template,
    spec,
)

if TYPE_CHECKING:
    from kubesched.embedded.workloads.manager import ControllerManager

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


def daemon_pod(ds: dict[str, Any]) -> Pod | None:
    """The pod the DaemonSet would create (NewPod: its template with the daemon tolerations), parsed."""
    template_spec = copy.deepcopy(spec(ds).get("template") or {}).get("spec") or {}
    daemon_tolerations(template_spec)
    try:
        return Pod.from_dict({"metadata": {"name": "daemon", "namespace": "default"}, "spec": template_spec})
    except ObjectError:
        return None


def should_run(ds: dict[str, Any], node: Node, pod: Pod | None = None) -> tuple[bool, bool]:
    """(should run a pod there, may keep one already running there), as NodeShouldRunDaemonPod.

    ``pod`` is :func:`daemon_pod` of ``ds``, when the caller has it already.
    """
    pod = pod or daemon_pod(ds)
    if pod is None:
        return False, False
    wanted = (spec(ds).get("template") or {}).get("spec", {}).get("nodeName")
    if wanted and wanted != node.name:
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
    terms = (
        ((spec(pod).get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    ).get("nodeSelectorTerms") or []
    for term in terms:
        for field in term.get("matchFields") or []:
            if (
                field.get("key") == "metadata.name"
                and field.get("operator") == "In"
                and len(field.get("values") or []) == 1
            ):
                return str(field["values"][0])
    return None


class DaemonSetController:
    kind = "DaemonSet"

    def __init__(self, manager: ControllerManager) -> None:
        self.manager = manager
        #: Per DaemonSet uid: (generation, its parsed daemon pod, the nodes that should run it).
        self._state: dict[str, tuple[str, Pod | None, set[str]]] = {}
        #: DaemonSets with pods of an older template left: every change looks at all nodes then.
        self._rolling: set[str] = set()
        self._nodes: dict[str, tuple[str, Node | None]] = {}  # name -> (resourceVersion, parsed)

    def sync(self, namespace: str, name: str, only_node: str | None = None) -> None:
        """Bring the set's pods in line on every node, or on ``only_node`` (a node or pod change)."""
        ds = self.manager.get("DaemonSet", namespace, name)
        if ds is None or meta(ds).get("deletionTimestamp"):
            return
        uid, generation = str(meta(ds).get("uid")), str(meta(ds).get("generation"))
        state = self._state.get(uid)
        if state is None or state[0] != generation:
            state = (generation, daemon_pod(ds), set())
            self._state[uid] = state
            only_node = None  # a new or changed spec looks at every node
        elif only_node is None and uid not in self._rolling:
            return  # a status write of ours: nothing changed that a node would see
        if uid in self._rolling:
            only_node = None
        _, pod, desired = state
        by_node: dict[str, list[dict[str, Any]]] = {}
        for owned in self.manager.owned(ds, "Pod"):
            if is_active(owned):
                by_node.setdefault(target_node(owned) or "", []).append(owned)
        revision = compute_hash(spec(ds).get("template") or {})
        names = [only_node] if only_node is not None else [n["metadata"]["name"] for n in self.manager.nodes()]
        for node_name in names:
            node = self._node(node_name)
            run, keep = should_run(ds, node, pod) if node is not None else (False, False)
            pods = by_node.pop(node_name, [])
            if run:
                desired.add(node_name)
            else:
                desired.discard(node_name)
            if run and not pods:
                self._create_pod(ds, node_name, revision)
            elif not keep:
                for p in pods:
                    self.manager.delete(p)
            elif len(pods) > 1:
                # Duplicates: keep the bound (or oldest) one, as the controller does.
                pods.sort(
                    key=lambda p: (not is_bound(p), str(meta(p).get("creationTimestamp")), str(meta(p).get("name")))
                )
                for p in pods[1:]:
                    self.manager.delete(p)
        if only_node is None:
            for pods in by_node.values():  # pods for nodes that no longer exist
                for p in pods:
                    self.manager.delete(p)
            self._roll(ds, uid, desired, revision)
        self._update_status(ds, len(desired))

    def _roll(self, ds: dict[str, Any], uid: str, desired: set[str], revision: str) -> None:
        """RollingUpdate: replace pods of an older template, ``maxUnavailable`` nodes at a time.

        A node counts as unavailable while it has no bound pod; pods of the old template that are
        not bound yet are replaced at once. OnDelete leaves old pods alone.
        """
        strategy = spec(ds).get("updateStrategy") or {}
        if strategy.get("type") == "OnDelete":
            self._rolling.discard(uid)
            return
        try:
            budget = scaled_int_or_percent(
                (strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1), len(desired), round_up=True
            )
        except ValueError:
            budget = 1
        by_node: dict[str, list[dict[str, Any]]] = {}
        for owned in self.manager.owned(ds, "Pod"):
            if is_active(owned):
                by_node.setdefault(target_node(owned) or "", []).append(owned)
        unavailable = sum(1 for n in desired if not any(is_bound(p) for p in by_node.get(n, [])))
        left = False
        for node_name in sorted(desired):
            old = [
                p
                for p in by_node.get(node_name, [])
                if (meta(p).get("labels") or {}).get(CONTROLLER_REVISION_HASH_LABEL) != revision
            ]
            if not old:
                continue
            bound = any(is_bound(p) for p in old)
            if bound and unavailable >= max(budget, 1):
                left = True
                continue
            for p in old:
                self.manager.delete(p)
            unavailable += bound
            if not any(p not in old for p in by_node.get(node_name, [])):
                self._create_pod(ds, node_name, revision)
            left = True  # the new pod must become available before the next round
        if left:
            self._rolling.add(uid)
        else:
            self._rolling.discard(uid)

    def _node(self, name: str) -> Node | None:
        raw = self.manager.get("Node", "", name)
        if raw is None:
            self._nodes.pop(name, None)
            return None
        rv = str(meta(raw).get("resourceVersion"))
        cached = self._nodes.get(name)
        if cached is None or cached[0] != rv:
            try:
                parsed: Node | None = Node.from_dict(raw)
            except ObjectError:
                parsed = None
            cached = (rv, parsed)
            self._nodes[name] = cached
        return cached[1]

    def _create_pod(self, ds: dict[str, Any], node_name: str, revision: str) -> None:
        namespace, name = str(meta(ds).get("namespace")), str(meta(ds).get("name"))
        base = f"{name}-"
        pod_name = self.manager.free_pod_name(namespace, base)
        pod = pod_from_template(
            ds,
            spec(ds).get("template") or {},
            name=pod_name,
            generate_name=base,
            extra_labels={
                CONTROLLER_REVISION_HASH_LABEL: revision,
                TEMPLATE_GENERATION_LABEL: str(meta(ds).get("generation", 1)),
            },
        )
        daemon_tolerations(pod["spec"])
        pin_to_node(pod["spec"], node_name)
        pod["spec"].pop("nodeName", None)
        self.manager.create(pod)

    def _update_status(self, ds: dict[str, Any], desired: int) -> None:
        _, ready = self.manager.pod_counts(ds)
        status = {
            "observedGeneration": meta(ds).get("generation", 1),
            "desiredNumberScheduled": desired,
            "currentNumberScheduled": ready,
            "numberReady": ready,
            "numberAvailable": ready,
            "numberMisscheduled": 0,
        }
        current = ds.get("status") or {}
        if {k: current.get(k) for k in status} != status:
            self.manager.update({**ds, "status": {**current, **status}})
