"""kube-scheduler's log lines about pods and nodes, written by a whole scheduler (schedule_one, eventhandlers,
the queue, the cache, preemption) at the verbosity kube-scheduler writes them."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.factories import node_dict, pod_dict
from tests.fakeplugins import ErrorBinder, Harness, config_dict, profile_with, ref
from tests.klog.capture import captured

BODY = re.compile(r"^[IWE]\d{4} [\d:.]+ +\d+ [\w.]+:\d+\] (.*)$")


def bodies(text: str) -> list[str]:
    """Each line without its header."""
    out = []
    for line in text.splitlines():
        match = BODY.match(line)
        assert match, line
        out.append(match.group(1))
    return out


def run(h: Harness, *objects: dict[str, Any]) -> None:
    h.create(*objects)
    h.run()


def test_at_v2_each_binding_and_each_pod_left_waiting() -> None:
    h = Harness(objects=[node_dict("n1", cpu="2"), node_dict("n2", cpu="2")])
    with captured(2) as out:
        run(h, pod_dict("web-1", cpu="1"), pod_dict("big", cpu="8"))
    lines = bodies(out.getvalue())
    assert '"Successfully bound pod to node" pod="default/web-1" node="n1" evaluatedNodes=2 feasibleNodes=2' in lines
    waiting = [line for line in lines if line.startswith('"Unable to schedule pod; no fit; waiting"')]
    assert waiting == [
        '"Unable to schedule pod; no fit; waiting" pod="default/big" err="0/2 nodes are available: '
        "2 Insufficient cpu. no new claims to deallocate, preemption: 0/2 nodes are available: "
        '2 Preemption is not helpful for scheduling."'
    ]
    assert not any("event for" in line or "Attempting" in line for line in lines)  # V3 lines stay hidden


def test_at_v3_events_and_attempts() -> None:
    h = Harness()
    with captured(3) as out:
        run(h, node_dict("n1"), pod_dict("p", cpu="1"))
    lines = bodies(out.getvalue())
    for want in [
        '"Add event for node" node="n1"',
        '"Added node to NodeTree" node="n1" zone=""',
        '"Add event for unscheduled pod" pod="default/p"',
        '"Attempting to schedule pod" pod="default/p"',
        '"Attempting to bind pod to node" logger="Bind.DefaultBinder" pod="default/p" node="n1"',
        '"Delete event for unscheduled pod" pod="default/p"',  # the pod leaves the pending pods
        '"Add event for scheduled pod" pod="default/p"',
    ]:
        assert want in lines, (want, lines)
    assert lines.index('"Attempting to schedule pod" pod="default/p"') < lines.index(
        '"Add event for scheduled pod" pod="default/p"'
    )
    assert not any("About to try" in line for line in lines)  # V4


def test_queue_moves_at_v4_and_v5() -> None:
    h = Harness(objects=[node_dict("n1", cpu="1")])
    with captured(5) as out:
        run(h, pod_dict("big", cpu="2"))
        run(h, node_dict("n2", cpu="4"))
    lines = bodies(out.getvalue())
    # v1.34 names a new pending pod's event after its resource (v1.30: PodAdd).
    assert (
        '"Pod moved to an internal scheduling queue" pod="default/big" event="UnschedulablePodAdd" queue="Active"'
    ) in lines
    assert (
        '"Pod moved to an internal scheduling queue" pod="default/big" event="ScheduleAttemptFailure" '
        'queue="Unschedulable"'
    ) in lines
    assert (
        '"Pod moved to an internal scheduling queue" pod="default/big" event="NodeAdd" queue="Backoff" hint=1'
    ) in lines
    # Preemption found no candidate: the nomination is cleared (kube-scheduler's ModeOverride, 1).
    assert (
        '"Updating pod condition and nominated node name" pod="default/big" conditionType="PodScheduled" '
        'conditionStatus="False" conditionReason="Unschedulable" nominatedNodeName="" nominatingMode=1'
    ) in lines


def test_no_nodes() -> None:
    h = Harness()
    with captured(2) as out:
        run(h, pod_dict("p"))
    assert bodies(out.getvalue()) == [
        '"Unable to schedule pod; no nodes are registered to the cluster; waiting" pod="default/p"'
    ]


def test_an_error_is_logged_at_every_verbosity() -> None:
    plugins = {"bind": {"enabled": [{"name": ref(ErrorBinder)}], "disabled": [{"name": "*"}]}}
    h = Harness(config_dict(profile_with(plugins)), objects=[node_dict("n1")])
    with captured(0) as out:
        run(h, pod_dict("p"))
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("E")
    assert lines[0].endswith(
        f'] "Error scheduling pod; retrying" err="running Bind plugin \\"{ref(ErrorBinder)}\\": '
        'binding exploded" pod="default/p"'
    )


def test_preemption_names_preemptor_and_victim() -> None:
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 100}
    h = Harness(objects=[node_dict("n1", cpu="1"), high])
    run(h, pod_dict("low", cpu="1"))
    preemptor = pod_dict("high", cpu="1", spec={"priorityClassName": "high"})
    del preemptor["spec"]["priority"]  # admission fills it in from the class
    with captured(2) as out:
        run(h, preemptor)
    lines = bodies(out.getvalue())
    assert (
        '"Preemptor Pod preempted victim Pod" logger="PostFilter.DefaultPreemption" preemptor="default/high" '
        'victim="default/low" node="n1"'
    ) in lines
    assert (
        '"the target node for the preemption is determined" logger="PostFilter.DefaultPreemption" node="n1" '
        'pod="default/high"'
    ) in lines


def test_json_lines_parse() -> None:
    h = Harness(objects=[node_dict("n1")])
    with captured(5, "json") as out:
        run(h, pod_dict("p"))
    objs = [json.loads(line) for line in out.getvalue().splitlines()]
    bound = [o for o in objs if o["msg"] == "Successfully bound pod to node"]
    assert bound and bound[0]["pod"] == {"name": "p", "namespace": "default"} and bound[0]["v"] == 2
    assert all(o["caller"].endswith(".py:" + o["caller"].rsplit(":", 1)[1]) for o in objs)
