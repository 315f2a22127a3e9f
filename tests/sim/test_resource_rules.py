"""The scheduler reads every pod with its emulated version's resource rules, end to end.

The same small cluster is simulated at v1.30 and v1.34: a bound pod with a sidecar counts for more
in v1.34's scores, pod-level requests count only where the gate is on, and a node smaller than the
pod is an unresolvable rejection (so preemption does not try it) from v1.34.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.sim.simulate import simulate
from tests.factories import node_dict, pod_dict


def _nodes() -> list[dict[str, Any]]:
    return [node_dict("sc-1", cpu="2", memory="4Gi"), node_dict("sc-2", cpu="2", memory="4Gi")]


def _sidecar_pod() -> dict[str, Any]:
    sidecar = {
        "name": "proxy",
        "image": "envoy",
        "restartPolicy": "Always",
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
    }
    return pod_dict("with-sidecar", node_name="sc-1", spec={"initContainers": [sidecar]})


@pytest.mark.parametrize(
    ("version", "fit_scores"), [("1.30", {"sc-1": 90, "sc-2": 90}), ("1.34", {"sc-1": 88, "sc-2": 90})]
)
def test_sidecars_count_in_the_non_zero_requests_from_v1_34(version: str, fit_scores: dict[str, int]) -> None:
    """v1.30: max(100m app default, 50m sidecar); v1.34: 100m + 50m (and 200Mi + 64Mi)."""
    objects = [
        *_nodes(),
        _sidecar_pod(),
        pod_dict("plain", cpu="120m", memory="220Mi", node_name="sc-2"),
        pod_dict("incoming", cpu="100m", memory="128Mi"),
    ]
    result = simulate(objects, emulated_version=version, tie_break="name", record="full")
    (attempt,) = result.attempts
    assert {node: s["NodeResourcesFit"] for node, s in attempt["scores"].items()} == fit_scores


@pytest.mark.parametrize(
    ("version", "gates", "node"),
    [("1.30", None, "sc-1"), ("1.34", None, "sc-2"), ("1.34", {"PodLevelResources": False}, "sc-1")],
)
def test_pod_level_requests_count_where_the_gate_is_on(version: str, gates: dict[str, bool] | None, node: str) -> None:
    """A bound pod asking 1900m for itself (100m in its container) fills sc-1 only when pod-level
    requests count; the incoming pod then needs sc-2."""
    heavy = pod_dict("heavy", cpu="100m", node_name="sc-1", spec={"resources": {"requests": {"cpu": "1900m"}}})
    light = pod_dict("light", cpu="500m", node_name="sc-2")
    objects = [*_nodes(), heavy, light, pod_dict("incoming", cpu="1")]
    result = simulate(objects, emulated_version=version, feature_gates=gates, tie_break="name", record="full")
    assert result.attempts[0]["node"] == node


@pytest.mark.parametrize(
    ("version", "code", "preemption"),
    [
        ("1.30", "Unschedulable", "2 No preemption victims found for incoming pod"),
        ("1.34", "UnschedulableAndUnresolvable", "2 Preemption is not helpful for scheduling"),
    ],
)
def test_a_node_smaller_than_the_pod_is_unresolvable_from_v1_34(version: str, code: str, preemption: str) -> None:
    objects = [*_nodes(), pod_dict("huge", cpu="3")]
    result = simulate(objects, emulated_version=version, tie_break="name", record="full")
    attempt = result.attempts[0]
    assert {f["code"] for f in attempt["filter"].values()} == {code}
    assert attempt["message"].endswith(f"preemption: 0/2 nodes are available: {preemption}.")
