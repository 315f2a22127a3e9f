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
    path.write_text(
        "- {at: 2m, action: drain, object: Node/n2}\n"
        "- {at: 90, action: delete, object: Pod/p}\n"
        "- {at: 90s, action: create, object: {apiVersion: v1, kind: Node, metadata: {name: n3}}}\n"
    )
    steps = load_timeline(path)
    where = str(path)
    assert steps == [
        Step(90.0, "delete", f"{where}: step 2", kind="Pod", namespace="default", name="p"),
        Step(90.0, "create", f"{where}: step 3", obj={"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n3"}}),
        Step(120.0, "drain", f"{where}: step 1", kind="Node", name="n2"),
    ]


def test_an_empty_file_is_no_step(tmp_path: Path) -> None:
    path = tmp_path / "timeline.yaml"
    path.write_text("")
    assert load_timeline(path) == []


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ({"at": "1s", "action": "explode", "object": "n1"}, "action: expected one of"),
        ({"action": "cordon", "object": "n1"}, "at: required"),
        ({"at": "soon", "action": "cordon", "object": "n1"}, "not a valid duration"),
        ({"at": "1s", "action": "cordon"}, "object: required"),
        ({"at": "1s", "action": "cordon", "object": "Pod/default/p"}, "cordon applies to nodes"),
        ({"at": "1s", "action": "delete", "object": "Gizmo/x"}, "unknown kind"),
        ({"at": "1s", "action": "create", "object": {"metadata": {}}}, "manifest with a kind"),
        ({"at": "1s", "action": "cordon", "object": "n1", "extra": 1}, "unknown field"),
    ],
)
def test_bad_timeline_steps_name_the_step_and_field(step: dict[str, Any], message: str) -> None:
    with pytest.raises(TimelineError, match=message):
        load_timeline([{"at": 0, "action": "cordon", "object": "n1"}, step])
    # simulate() reports it as its own error, before the run.
    with pytest.raises(SimulationError, match="step 2"):
        simulate([node_dict("n1"), pod_dict("p")], timeline=[{"at": 0, "action": "cordon", "object": "n1"}, step])


NEW_NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}, "spec": {"unschedulabel": True}}


def test_objects_to_create_are_checked_for_unknown_fields() -> None:
    steps = [{"at": "1s", "action": "create", "object": NEW_NODE}]
    with pytest.raises(
        TimelineError,
        match=r"^timeline: step 1: object: spec.unschedulabel: unknown field "
        r'"unschedulabel" \(did you mean "unschedulable"\?\)$',
    ):
        load_timeline(steps)
    (step,) = load_timeline(steps, "ignore")
    assert step.obj is not None and step.obj["spec"] == {}
    assert NEW_NODE["spec"] == {"unschedulabel": True}  # the step given is left alone


def test_warn_reports_a_timeline_object_with_the_scenario() -> None:
    result = simulate(
        [node_dict("n1"), pod_dict("p")],
        timeline=[{"at": "1s", "action": "create", "object": NEW_NODE}],
        validate="warn",
    )
    assert result.warnings[0].startswith("timeline: step 1: object: spec.unschedulabel: unknown field")
    assert result.cluster is not None and result.cluster.get("Node", None, "n2")["spec"] == {}


def test_repeated_keys_in_a_timeline_file_name_the_step_and_lines(tmp_path: Path) -> None:
    path = tmp_path / "timeline.yaml"
    path.write_text(
        "- {at: 1s, action: cordon, object: n1}\n"
        "- at: 2s\n  action: create\n  object:\n    apiVersion: v1\n    kind: Node\n"
        "    metadata: {name: n2, name: n3}\n"
    )
    with pytest.raises(
        TimelineError,
        match=rf'^{path}: step 2: object: metadata.name: duplicate field "name" '
        r"\(line 7\)$",
    ):
        load_timeline(path)
    steps = load_timeline(path, "warn")
    assert steps[1].obj is not None and steps[1].obj["metadata"] == {"name": "n3"}


def test_an_unknown_step_field_gets_a_hint() -> None:
    with pytest.raises(TimelineError, match=r'unknown field\(s\) actoin \(did you mean "action"\?\)'):
        load_timeline([{"at": "1s", "actoin": "cordon", "object": "n1"}])
