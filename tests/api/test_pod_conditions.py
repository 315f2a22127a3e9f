"""Pod conditions as the scheduler writes them (kubesched.api.pod_conditions), as pkg/api/v1/pod's
CalculatePodConditionObservedGeneration and UpdatePodCondition decide."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.objects import Pod
from kubesched.api.pod_conditions import (
    condition_changes,
    observed_generation,
    pod_generation,
    with_observed_generation,
)

UNSCHEDULABLE = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "no room"}


def pod(generation: int | None = 3, *conditions: dict[str, Any]) -> Pod:
    meta: dict[str, Any] = {"name": "p", "namespace": "default"}
    if generation is not None:
        meta["generation"] = generation
    return Pod.from_dict(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "x"}]},
            "status": {"conditions": list(conditions)},
        }
    )


@pytest.mark.parametrize(
    ("p", "tracking", "want"),
    [
        (pod(3), True, 3),
        (pod(3), False, 0),
        # Tracking off, but the condition of that type already carries one: keep it current.
        (pod(3, {**UNSCHEDULABLE, "observedGeneration": 2}), False, 3),
        (pod(3, {"type": "Ready", "status": "True", "observedGeneration": 2}), False, 0),
        (pod(None), True, 0),  # a pod without a generation (before v1.34)
    ],
)
def test_observed_generation(p: Pod, tracking: bool, want: int) -> None:
    assert observed_generation(p, "PodScheduled", tracking=tracking) == want


def test_with_observed_generation_sets_it_only_when_there_is_one() -> None:
    assert with_observed_generation(pod(2), dict(UNSCHEDULABLE), tracking=True)["observedGeneration"] == 2
    assert "observedGeneration" not in with_observed_generation(pod(2), dict(UNSCHEDULABLE), tracking=False)
    assert pod_generation(pod(None)) == 0


@pytest.mark.parametrize(
    ("existing", "changes"),
    [
        ((), True),
        (({**UNSCHEDULABLE, "lastTransitionTime": "2024-01-01T00:00:00Z"},), False),
        # observedGeneration is no change of its own.
        (({**UNSCHEDULABLE, "observedGeneration": 1},), False),
        (({**UNSCHEDULABLE, "message": "other"},), True),
        (({**UNSCHEDULABLE, "reason": "SchedulerError"},), True),
        (({**UNSCHEDULABLE, "lastProbeTime": "2024-01-01T00:00:00Z"},), True),
        (({**UNSCHEDULABLE, "lastProbeTime": None},), False),
        (({"type": "Ready", "status": "True"},), True),
    ],
)
def test_condition_changes(existing: tuple[dict[str, Any], ...], changes: bool) -> None:
    assert condition_changes(pod(5, *existing), {**UNSCHEDULABLE, "observedGeneration": 5}) is changes
