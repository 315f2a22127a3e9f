"""SchedulingGates' v1.34 registration and queueing hint (v1.30's empty list: test_schedulinggates.py)."""

from __future__ import annotations

import pytest

from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.plugins import schedulinggates
from tests.plugins.queueing import QUEUE, SKIP, V134, hint_for, pod, registrations

GATES_GONE = ClusterEvent("Pod", ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)


def test_v134_registers_the_update_that_removes_the_last_gate() -> None:
    assert registrations(schedulinggates.new(None, V134)) == [(GATES_GONE, True)]


@pytest.mark.parametrize(
    ("name", "updated_uid", "want"),
    [
        ("the gated pod's own gates are gone", "target", QUEUE),
        ("another pod's gates are gone", "other", SKIP),
    ],
)
def test_is_schedulable_after_gates_eliminated(name: str, updated_uid: str, want: object) -> None:
    target = pod("p", uid="target", spec={"schedulingGates": [{"name": "g"}]})
    updated = pod("q", uid=updated_uid)
    hint = hint_for(schedulinggates.new(None, V134), GATES_GONE)
    assert hint(target, target, updated) is want
