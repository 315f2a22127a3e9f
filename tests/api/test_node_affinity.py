"""Required node affinity: nodeSelector AND required terms, one row per rule."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.node_affinity import RequiredNodeAffinity
from tests.factories import make_node, make_pod


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": operator, **({"values": list(values)} if values else {})}]}


ZONE = "topology.kubernetes.io/zone"
NAME_IS_N1 = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}


@pytest.mark.parametrize(
    ("spec", "labels", "want"),
    [
        pytest.param({}, {}, True, id="nothing-required"),
        pytest.param({"nodeSelector": {"disk": "ssd"}}, {"disk": "ssd"}, True, id="selector-matches"),
        pytest.param({"nodeSelector": {"disk": "ssd"}}, {"disk": "hdd"}, False, id="selector-differs"),
        pytest.param({"nodeSelector": {"disk": "ssd"}}, {}, False, id="selector-label-missing"),
        pytest.param({"affinity": required(expr(ZONE, "In", "a", "b"))}, {ZONE: "b"}, True, id="in"),
        pytest.param({"affinity": required(expr(ZONE, "NotIn", "a"))}, {}, True, id="not-in-without-the-label"),
        pytest.param({"affinity": required(expr(ZONE, "DoesNotExist"))}, {ZONE: "a"}, False, id="does-not-exist"),
        pytest.param(
            {"affinity": required(expr(ZONE, "In", "a"), expr(ZONE, "In", "c"))}, {ZONE: "c"}, True, id="terms-are-ored"
        ),
        pytest.param({"affinity": required(NAME_IS_N1)}, {}, True, id="match-fields-name"),
        pytest.param(
            {"nodeSelector": {"disk": "ssd"}, "affinity": required(expr(ZONE, "In", "a"))},
            {ZONE: "a"},
            False,
            id="selector-and-affinity-both-needed",
        ),
    ],
)
def test_required_node_affinity(spec: dict[str, Any], labels: dict[str, str], want: bool) -> None:
    pod = make_pod("p", spec=spec)
    assert RequiredNodeAffinity.of(pod).matches(make_node("n1", labels=labels)) is want


def test_a_name_field_pins_the_node() -> None:
    pinned = RequiredNodeAffinity.of(make_pod("p", spec={"affinity": required(NAME_IS_N1)}))
    assert (pinned.matches(make_node("n1")), pinned.matches(make_node("n2"))) == (True, False)
