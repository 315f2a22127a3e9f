"""Arrival and duration annotations: read as Go durations, and checked before any run."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.scenario.manifests import Manifest
from kubesched.scenario.timing import (
    ARRIVAL_ANNOTATION,
    DURATION_ANNOTATION,
    arrival_seconds,
    check_timing,
    duration_seconds,
    parse_duration_seconds,
)
from kubesched.sim.capacity import capacity
from kubesched.sim.plan import plan
from kubesched.sim.simulate import SimulationError, simulate
from tests.factories import node_dict, pod_dict


def timed(name: str, arrival: str | None = None, duration: str | None = None, **kw: Any) -> dict[str, Any]:
    pod = pod_dict(name, **kw)
    annotations = {}
    if arrival is not None:
        annotations[ARRIVAL_ANNOTATION] = arrival
    if duration is not None:
        annotations[DURATION_ANNOTATION] = duration
    pod["metadata"]["annotations"] = annotations
    return pod


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("90s", 90.0),
        ("1h30m", 5400.0),
        ("250ms", 0.25),
        ("0s", 0.0),
    ],
)
def test_durations_are_go_durations_in_seconds(text: str, want: float) -> None:
    assert parse_duration_seconds(text, "here") == want


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("soon", "^here: .*not a valid duration"),
        ("-5s", r"^here: duration must not be negative, got '-5s'$"),
    ],
)
def test_bad_durations_name_where_they_are(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_duration_seconds(text, "here")


def test_annotations_are_read_from_the_pod() -> None:
    pod = timed("p", "2m", "1h")
    assert (arrival_seconds(pod, "x"), duration_seconds(pod, "x")) == (120.0, 3600.0)
    assert (arrival_seconds(pod_dict("q"), "x"), duration_seconds(pod_dict("q"), "x")) == (None, None)


def test_only_pending_pods_are_checked() -> None:
    bound = timed("b", "soon", node_name="n1")  # created at the start, whatever it says
    check_timing([Manifest("s.yaml", 1, bound)])
    with pytest.raises(ValueError, match=r"^s\.yaml: document 2: metadata\.annotations\[kubesched\.io/arrival\]"):
        check_timing([Manifest("s.yaml", 1, bound), Manifest("s.yaml", 2, timed("p", "soon"))])


def test_a_bad_arrival_names_the_document_and_annotation() -> None:
    with pytest.raises(SimulationError, match=r"document 2.*kubesched.io/arrival.*not a valid duration"):
        simulate([node_dict("n1"), timed("p", "soon")])


def test_a_bad_duration_names_the_annotation() -> None:
    with pytest.raises(SimulationError, match=r"kubesched.io/duration"):
        simulate([node_dict("n1"), timed("p", duration="-5s")])


def test_capacity_and_plan_check_them_too() -> None:
    scenario = [node_dict("n1"), timed("p", "soon")]
    with pytest.raises(SimulationError, match=r"document 2.*kubesched.io/arrival"):
        capacity(scenario, pod_dict("probe"))
    with pytest.raises(SimulationError, match=r"document 2.*kubesched.io/arrival"):
        plan(scenario, node_dict("extra"), max_nodes=1)


@pytest.mark.parametrize(
    "text",
    ["0s", "1.s", ".5s", "12.345s", "999999999.999999s", "0.000001s", "1.0000005s", "1h30m", "250ms", "+2s"],
)
def test_durations_in_the_generated_form_read_as_the_general_parser_reads_them(text: str) -> None:
    from datetime import timedelta

    from kubesched.config.decode import as_duration

    expected = as_duration(text, "x") / timedelta(seconds=1)
    assert parse_duration_seconds(text, "x") == expected
    assert parse_duration_seconds(text, "x") == expected  # read again (remembered)


def test_a_remembered_duration_still_refuses_bad_text_naming_where() -> None:
    parse_duration_seconds("1h", "first")
    with pytest.raises(ValueError, match="second"):
        parse_duration_seconds("1 h", "second")
    with pytest.raises(ValueError, match="fourth"):
        parse_duration_seconds("1e3s", "fourth")
    with pytest.raises(ValueError, match=r"third.*negative"):
        parse_duration_seconds("-1.5s", "third")
