"""The parts of a policy/v1 PodDisruptionBudget that preemption reads.

Parsing is lenient on purpose about the selector: a PDB whose selector is invalid does not stop
preemption, it just protects no pod, as in kube-scheduler. Field types are checked (ObjectError).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api import fields
from kubesched.api.errors import ObjectError
from kubesched.api.labels import LabelSelector
from kubesched.api.objects import Pod


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    """The parts of a policy/v1 PodDisruptionBudget preemption reads.

    ``selector`` is None when the PDB selects nothing: selector absent, empty (``{}``) or invalid —
    kube-scheduler treats all three as matching no pod.
    """

    namespace: str
    name: str
    selector: LabelSelector | None
    disruptions_allowed: int
    disrupted_pods: frozenset[str]

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> PodDisruptionBudget:
        meta = fields.mapping(raw.get("metadata"), "metadata")
        spec = fields.mapping(raw.get("spec"), "spec")
        status = fields.mapping(raw.get("status"), "status")
        selector: LabelSelector | None
        try:
            selector = LabelSelector.from_dict(spec.get("selector"))
        except (ObjectError, TypeError, ValueError):
            selector = None
        if selector is not None and selector.empty:
            selector = None
        allowed = fields.integer(status.get("disruptionsAllowed"), "status.disruptionsAllowed")
        return cls(
            namespace=str(meta.get("namespace") or "default"),
            name=str(meta.get("name") or ""),
            selector=selector,
            disruptions_allowed=allowed,
            disrupted_pods=frozenset(fields.mapping(status.get("disruptedPods"), "status.disruptedPods")),
        )

    def selects(self, pod: Pod) -> bool:
        if self.namespace != pod.namespace or self.selector is None:
            return False
        return self.selector.matches(pod.labels)
