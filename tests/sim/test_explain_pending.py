"""The text and JSON of every pending pod explained: groups, what helps, each pod's decision."""

from __future__ import annotations

import io
import re

from kubesched.sim.explain_pending import explain_pending, print_pending
from tests.sim.scenarios import node, pod

SCENARIO = [node("n1", cpu="2"), pod("used", cpu="1500m", node_name="n1"), pod("a", cpu="1"), pod("b", cpu="1")]


def _text(*, brief: bool = False) -> str:
    out = io.StringIO()
    print_pending(explain_pending(SCENARIO, tie_break="name"), out, width=100, rich_output=False, brief=brief)
    return out.getvalue()


def test_the_groups_with_what_helps_each_checked() -> None:
    assert (
        _text(brief=True)
        == """\
2 pending pods in a simulation of objects (0 of the 2 pods to schedule were scheduled), 1 cause:

2 pods: NodeResourcesFit: Insufficient cpu (1 node)
  pods: default/a, default/b
  what would let them schedule:
    - closest node: n1 with 0.5 cpu more takes default/a
    - preemption: with priority 1 (above every pod's), preempting 1 pod (default/used): 2 of 2
      schedule
    - add 1 node like n1 (pool topology.kubernetes.io/zone=a): 2 of 2 schedule

Each change was checked by simulating the scenario with it (4 simulations).
"""
    )


def test_each_pod_decision_follows_as_explain_prints_it() -> None:
    text = _text()
    assert text.count("Pod default/a, attempt 1 of 1 (profile default-scheduler): Unschedulable") == 1
    assert text.count("n1           rejected by NodeResourcesFit: Insufficient cpu") == 2


def test_the_document_names_its_schema_and_links_pods_to_groups() -> None:
    document = explain_pending(SCENARIO, tie_break="name", what_if=False).to_dict()
    assert document["schemaVersion"] == 1 and "remedies" not in document["groups"][0]
    assert [(p["pod"], p["group"]) for p in document["pods"]] == [("default/a", 0), ("default/b", 0)]
    assert document["groups"][0]["causes"] == [
        {"plugin": "NodeResourcesFit", "reason": "Insufficient cpu", "nodes": [1, 1]}
    ]


def test_a_pod_rejected_by_dynamic_resources_gets_device_counts_per_node_group() -> None:
    from tests.sim.test_device_use import EXAMPLE, TRAINER

    report = explain_pending([EXAMPLE, TRAINER], pod="ml/trainer", what_if=False)
    out = io.StringIO()
    print_pending(report, out, rich_output=False)
    lines = out.getvalue().splitlines()
    at = lines.index("Devices on the nodes DynamicResources rejected (the cluster after the run):")
    assert lines[at + 1] == "  a100-0, a100-1 (2 nodes):"
    assert re.fullmatch(
        r"    claim ml/trainer-gpus-\w+, request gpus \(2 of class gpu-a100\): 5 of 5 devices match, "
        r"4 already allocated",
        lines[at + 2],
    )
    assert lines[at + 3] == "  t4-0, t4-1 (2 nodes):" and lines[at + 4].endswith("none of 2 devices match")
    [entry] = report.to_dict()["pods"]
    assert [d["nodes"] for d in entry["devices"]] == [["a100-0", "a100-1"], ["t4-0", "t4-1"]]


def test_pods_rejected_for_other_reasons_get_no_device_lines() -> None:
    assert (
        "Devices on the nodes" not in _text()
        and "devices" not in explain_pending(SCENARIO, what_if=False).to_dict()["pods"][0]
    )


def test_nodes_added_by_a_what_if_bring_their_devices() -> None:
    from tests.sim.test_device_use import EXAMPLE, TRAINER

    report = explain_pending([EXAMPLE, TRAINER], max_pools=1)
    [added] = [r for r in report.remedies[0] if r.kind == "addNodes"]
    assert added.helps and added.details["nodes"] == 1 and added.details["template"] == "a100-0"
