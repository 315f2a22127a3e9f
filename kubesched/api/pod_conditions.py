"""Pod status conditions as the scheduler writes them: which generation they observed, and when a
write would change nothing.

From v1.34 (PodObservedGenerationTracking) the API server counts a pod's spec changes in
``metadata.generation``, and whoever sets a condition records the generation it looked at in the
condition's ``observedGeneration``. Comparing conditions ignores that field, so a pod whose generation
moved gets no new write for an otherwise identical condition.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.objects import Pod

#: The condition fields whose change makes a write (lastTransitionTime follows the status).
COMPARED_FIELDS = ("status", "reason", "message", "lastProbeTime")


def pod_generation(pod: Pod) -> int:
    """``metadata.generation`` (0 when the API server sets none, as before v1.34 for pods)."""
    value = (pod.raw.get("metadata") or {}).get("generation")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def condition_of(pod: Pod, condition_type: str) -> Mapping[str, Any] | None:
    """The pod's condition of ``condition_type`` (the first, as the API's helpers find it)."""
    for condition in (pod.raw.get("status") or {}).get("conditions") or ():
        if isinstance(condition, Mapping) and condition.get("type") == condition_type:
            return condition
    return None


def observed_generation(pod: Pod, condition_type: str, *, tracking: bool) -> int:
    """The ``observedGeneration`` a new condition of ``condition_type`` carries, 0 for none.

    The pod's generation when generation tracking is on (``tracking``: the PodObservedGenerationTracking
    gate), or when the pod's condition of that type already carries one (so a write never clears it).
    """
    if tracking:
        return pod_generation(pod)
    existing = condition_of(pod, condition_type)
    if existing is not None and existing.get("observedGeneration"):
        return pod_generation(pod)
    return 0


def with_observed_generation(pod: Pod, condition: dict[str, Any], *, tracking: bool) -> dict[str, Any]:
    """``condition`` with its ``observedGeneration`` set when it has one to carry."""
    generation = observed_generation(pod, condition["type"], tracking=tracking)
    if generation:
        condition["observedGeneration"] = generation
    return condition


def condition_changes(pod: Pod, condition: Mapping[str, Any]) -> bool:
    """Whether setting ``condition`` would change the pod: it has none of that type, or one that
    differs in status, reason, message or probe time (``observedGeneration`` does not count)."""
    existing = condition_of(pod, condition["type"])
    if existing is None:
        return True
    return any((existing.get(k) or "") != (condition.get(k) or "") for k in COMPARED_FIELDS)
