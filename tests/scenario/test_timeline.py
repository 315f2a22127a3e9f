"""Timeline files read and checked: steps sorted by time, every bad step named with its field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubesched.scenario.timeline import Step, TimelineError, load_timeline
from kubesched.sim.simulate import SimulationError, simulate
from tests.factories import node_dict, pod_dict


def test_steps_are_parsed_and_sorted_by_time(tmp_path: Path) -> None:
    path = tmp_path / "timeline.yaml"
    path.write_text("- {at: 2m, action: drain, object: Node/n2}\n"
                    "- {at: 90, action: delete, object: Pod/p}\n"
                    "- {at: 90s, action: create, object: {apiVersion: v1, kind: Node, metadata: {name: n3}}}\n")
    steps = load_timeline(path)
    where = str(path)
    assert steps == [
        Step(90.0, "delete", f"{where}: step 2", kind="Pod", namespace="default", name="p"),
        Step(90.0, "create", f"{where}: step 3",
             obj={"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n3"}}),
        Step(120.0, "drain", f"{where}: step 1", kind="Node", name="n2"),
    ]


def test_an_empty_file_is_no_step(tmp_path: Path) -> None:
    path = tmp_path / "timeline.yaml"
    path.write_text("")
    assert load_timeline(path) == []


@pytest.mark.parametrize(("step", "message"), [
    ({"at": "1s", "action": "explode", "object": "n1"}, "action: expected one of"),
    ({"action": "cordon", "object": "n1"}, "at: required"),
    ({"at": "soon", "action": "cordon", "object": "n1"}, "not a valid duration"),
    ({"at": "1s", "action": "cordon"}, "object: required"),
    ({"at": "1s", "action": "cordon", "object": "Pod/default/p"}, "cordon applies to nodes"),
    ({"at": "1s", "action": "delete", "object": "Gizmo/x"}, "unknown kind"),
    ({"at": "1s", "action": "create", "object": {"metadata": {}}}, "manifest with a kind"),
    ({"at": "1s", "action": "cordon", "object": "n1", "extra": 1}, "unknown field"),
])
def test_bad_timeline_steps_name_the_step_and_field(step: dict[str, Any], message: str) -> None:
    with pytest.raises(TimelineError, match=message):
        load_timeline([{"at": 0, "action": "cordon", "object": "n1"}, step])
    # simulate() reports it as its own error, before the run.
    with pytest.raises(SimulationError, match="step 2"):
        simulate([node_dict("n1"), pod_dict("p")], timeline=[{"at": 0, "action": "cordon", "object": "n1"}, step])


