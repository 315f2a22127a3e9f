"""The DRA seeds (``generate(seed, dra=True)``) on the real control plane, upstream kube-scheduler alone:
kube-apiserver v1.34 accepts every generated object, kube-scheduler decides every pod, and a bound pod's
claims hold devices of its node. (kubesched's decisions on them are compared in test_differential.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.controlplane.fixture import ControlPlane
from testing.differential.generator import generate
from testing.differential.upstream import Oracle, Step
from testing.differential.verdict import BOUND, NONE, UNSCHEDULABLE

pytestmark = pytest.mark.controlplane

#: Seeds with devices: templates, claims of the pods' own, shared and already allocated ones.
SEEDS = (1, 2, 4, 11, 14)


@pytest.fixture(scope="module")
def steps(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Step]]:
    with Oracle(control_plane, Path(tmp_path_factory.mktemp("oracle-dra"))) as oracle:
        return {seed: oracle.play(generate(seed, dra=True)) for seed in SEEDS}


def _claiming(steps: dict[int, list[Step]]) -> list[Step]:
    return [s for seed in SEEDS for s in steps[seed] if s.created["spec"].get("resourceClaims")]


def test_every_object_is_accepted_and_every_pod_decided(steps: dict[int, list[Step]]) -> None:
    assert all(generate(seed, dra=True).devices for seed in SEEDS)
    undecided = [(s.seed, s.pod, s.notes) for seed in SEEDS for s in steps[seed] if s.upstream.kind == NONE]
    assert undecided == []
    assert len(_claiming(steps)) >= 8


def test_bound_pods_hold_devices_of_their_node(steps: dict[int, list[Step]]) -> None:
    bound = [s for s in _claiming(steps) if s.upstream.kind == BOUND]
    assert bound, "no pod with claims was bound"
    for step in bound:
        assert step.upstream.devices, (step.seed, step.pod)
        for entry, allocation in step.upstream.devices.items():
            pools = {d["pool"] for d in allocation["devices"]}
            assert pools == {step.upstream.node}, (step.seed, step.pod, entry, allocation)


def test_states_carry_the_devices_upstream_decided_on(steps: dict[int, list[Step]]) -> None:
    for seed in SEEDS:
        kinds = {o["kind"] for s in steps[seed] for o in s.state}
        assert {"ResourceSlice", "DeviceClass", "ResourceClaimTemplate"} <= kinds
        assert all(o["metadata"]["name"] != "differential-probe" for s in steps[seed] for o in s.state)


def test_some_claims_cannot_be_satisfied(steps: dict[int, list[Step]]) -> None:
    texts = [s.upstream.message or "" for s in _claiming(steps) if s.upstream.kind == UNSCHEDULABLE]
    assert any("cannot allocate all claims" in t or "does not exist" in t or "deallocation" in t for t in texts)
