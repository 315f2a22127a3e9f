from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from kubesched.api.objects import Pod
from kubesched.framework.interfaces import EnqueueExtensions, PreEnqueuePlugin
from kubesched.framework.status import Code
from kubesched.plugins import schedulinggates
from tests.factories import NO_HANDLE, make_pod
from tests.plugins.queueing import V130
from tests.plugins.test_helper import CONFORMANCE, replay, scenario_available


@pytest.mark.parametrize(
    ("name", "spec", "want"),
    [
        ("no gates", {}, None),
        ("empty gates", {"schedulingGates": []}, None),
        ("one gate", {"schedulingGates": [{"name": "foo"}]}, "waiting for scheduling gates: [foo]"),
        (
            "two gates, in order",
            {"schedulingGates": [{"name": "example.com/b"}, {"name": "a"}]},
            "waiting for scheduling gates: [example.com/b a]",
        ),
    ],
)
def test_pre_enqueue(name: str, spec: dict[str, Any], want: str | None) -> None:
    plugin = schedulinggates.new(None, NO_HANDLE)
    assert isinstance(plugin, PreEnqueuePlugin)
    status = plugin.pre_enqueue(make_pod("p", spec=spec))
    if want is None:
        assert status is None
    else:
        assert status is not None
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (want,)


def test_events_to_register_is_empty_as_in_v130() -> None:
    plugin = schedulinggates.new(None, V130)  # v1.34's registration: test_schedulinggates_hints.py
    assert isinstance(plugin, EnqueueExtensions)
    assert tuple(plugin.events_to_register()) == ()


@pytest.mark.skipif(not scenario_available("scheduling-gates"), reason="conformance corpus not available")
def test_conformance_gated_pods_never_attempted() -> None:
    golden = json.loads((CONFORMANCE / "scheduling-gates" / "golden.json").read_text())
    never = set(golden["neverAttempted"])
    attempted = {a.record["pod"] for a in replay("scheduling-gates")}
    plugin = schedulinggates.SchedulingGates()
    text = (CONFORMANCE / "scheduling-gates" / "scenario.yaml").read_text()
    docs = [d for d in yaml.safe_load_all(text) if d]
    for d in docs:
        if d.get("kind") != "Pod" or (d.get("spec") or {}).get("nodeName"):
            continue
        pod = Pod.from_dict(d)
        gated = plugin.pre_enqueue(pod) is not None
        assert gated == (pod.key in never)
        assert gated != (pod.key in attempted)
