"""The changes a what-if tries, made on a scenario's manifests: a node resized, a pod's priority raised,
one of its constraints dropped or a taint tolerated, nodes of a pool added.

A pending pod's spec lives in the scenario either as the pod itself (a bare pod, every pod read from a
live cluster) or as its workload's pod template (``spec.template.spec``), which every pod of the
workload shares: :class:`ScenarioEdits` finds it and hands back the scenario with the change, checked by
the pipeline as any scenario is. Nothing here changes the scenario it was given.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kubesched.api.objects import Node
from kubesched.api.resources import CPU
from kubesched.scenario.manifests import Manifest
from kubesched.scenario.pipeline import Scenario

if TYPE_CHECKING:
    from kubesched.sim.simulate import SimulationResult

#: The PriorityClass a preemption what-if gives the pods.
PREEMPTOR_CLASS = "kubesched-whatif-preemptor"
#: The largest priority a user-defined PriorityClass may have (larger ones are the system classes').
HIGHEST_USER_PRIORITY = 1_000_000_000
WORKLOAD_TEMPLATE_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController")

#: A change to a pod spec: takes a private copy and changes it in place; False when it had nothing to change.
SpecEdit = Callable[[dict[str, Any]], bool]


def _key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


class ScenarioEdits:
    """Where the pods, workloads and nodes of a scenario are, to hand back changed copies of it."""

    def __init__(self, scenario: Scenario, result: SimulationResult) -> None:
        self.scenario = scenario
        self.workload_of = dict(result.workloads)
        self.pods: dict[str, int] = {}
        self.workloads: dict[str, int] = {}
        self.nodes: dict[str, int] = {}
        for index, m in enumerate(scenario.manifests):
            if m.kind == "Pod":
                self.pods[_key(m.obj)] = index
            elif m.kind in WORKLOAD_TEMPLATE_KINDS:
                self.workloads[f"{m.kind} {_key(m.obj)}"] = index
            elif m.kind == "Node":
                self.nodes[str((m.obj.get("metadata") or {}).get("name"))] = index

    def spec_holder(self, pod: str) -> int | None:
        """The position of the manifest whose pod spec ``pod`` has: the pod, or its workload."""
        if pod in self.pods:
            return self.pods[pod]
        workload = self.workload_of.get(pod)
        return self.workloads.get(workload) if workload is not None else None

    def node(self, name: str) -> dict[str, Any] | None:
        index = self.nodes.get(name)
        return self.scenario.manifests[index].obj if index is not None else None

    def pod_specs_edited(
        self, pods: Iterable[str], edit: SpecEdit, extra: Iterable[dict[str, Any]] = ()
    ) -> tuple[Scenario, int] | None:
        """The scenario with ``edit`` made to the spec of each pod (once per workload), and how many
        specs it changed; None when it changed none (no pod has what the edit removes)."""
        changed: dict[int, dict[str, Any]] = {}
        for pod in pods:
            index = self.spec_holder(pod)
            if index is None or index in changed:
                continue
            obj = copy.deepcopy(self.scenario.manifests[index].obj)
            if edit(pod_spec(obj)):
                changed[index] = obj
        if not changed:
            return None
        added = [Manifest("<what-if>", i + 1, obj) for i, obj in enumerate(extra)]
        return self.scenario.changed(changed, added), len(changed)

    def node_resized(self, name: str, more: Mapping[str, int]) -> Scenario:
        """The scenario with node ``name`` offering ``more`` (scheduler units) on top of its allocatable."""
        index = self.nodes[name]
        obj = copy.deepcopy(self.scenario.manifests[index].obj)
        parsed = Node.from_dict(obj)
        status = obj.setdefault("status", {})
        allocatable = dict(parsed.allocatable)
        for resource, amount in more.items():
            allocatable[resource] = allocatable.get(resource, 0) + amount
        status["allocatable"] = {r: quantity(r, v) for r, v in allocatable.items()}
        capacity = {r: max(v, parsed.capacity.get(r, 0)) for r, v in allocatable.items()}
        status["capacity"] = {r: quantity(r, v) for r, v in capacity.items()}
        return self.scenario.changed({index: obj})

    def nodes_added(self, nodes: Iterable[dict[str, Any]]) -> Scenario:
        return self.scenario.extended([Manifest("<what-if>", i + 1, n) for i, n in enumerate(nodes)])


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    """The pod spec inside a pod or a workload (its template's), made if missing."""
    if obj.get("kind") == "Pod":
        spec: dict[str, Any] = obj.setdefault("spec", {})
        return spec
    template = obj.setdefault("spec", {}).setdefault("template", {})
    inner: dict[str, Any] = template.setdefault("spec", {})
    return inner


def quantity(resource: str, amount: int) -> str:
    """A scheduler-unit amount as a Kubernetes quantity: cpu in millicores, the rest whole units."""
    return f"{amount}m" if resource == CPU else str(amount)


# -- changes to a pod spec -----------------------------------------------------------------------------
def preemptor(spec: dict[str, Any]) -> bool:
    """The pod gets the what-if's high-priority class, and may preempt."""
    spec["priorityClassName"] = PREEMPTOR_CLASS
    spec.pop("priority", None)
    spec.pop("preemptionPolicy", None)
    return True


def preemptor_class(value: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": PREEMPTOR_CLASS},
        "value": value,
        "description": "kubesched what-if: a pending pod given a higher priority",
    }


def without_spread(index: int) -> SpecEdit:
    """Drop the ``index``-th hard (DoNotSchedule) topology spread constraint."""

    def edit(spec: dict[str, Any]) -> bool:
        hard = [
            i
            for i, c in enumerate(spec.get("topologySpreadConstraints") or [])
            if (c or {}).get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"
        ]
        if index >= len(hard):
            return False
        del spec["topologySpreadConstraints"][hard[index]]
        return True

    return edit


def with_node_selector_dropped(spec: dict[str, Any]) -> bool:
    return spec.pop("nodeSelector", None) is not None


def without_required(block: str, field: str = "requiredDuringSchedulingIgnoredDuringExecution") -> SpecEdit:
    """Drop the required terms of ``affinity.<block>`` (nodeAffinity, podAffinity, podAntiAffinity)."""

    def edit(spec: dict[str, Any]) -> bool:
        part = (spec.get("affinity") or {}).get(block) or {}
        return part.pop(field, None) is not None

    return edit


def tolerating(key: str, value: str, effect: str) -> SpecEdit:
    """Tolerate the taint ``key=value:effect``."""

    def edit(spec: dict[str, Any]) -> bool:
        toleration = (
            {"key": key, "operator": "Equal", "value": value, "effect": effect}
            if value
            else {"key": key, "operator": "Exists", "effect": effect}
        )
        spec["tolerations"] = [*(spec.get("tolerations") or []), toleration]
        return True

    return edit
