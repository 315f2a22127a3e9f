"""``kubesched run``'s log against a real kube-apiserver: kube-scheduler's lines for each binding and each pod
left waiting, in klog's text format and in the JSON format, and nothing from the HTTP library at ``--v 4``."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.live.conftest import Live, node, pod

pytestmark = pytest.mark.controlplane

HEADER = re.compile(r"^[IWE]\d{4} \d{2}:\d{2}:\d{2}\.\d{6} [ \d]{7} [\w.]+:\d+\] ")
WAITING = (
    '"Unable to schedule pod; no fit; waiting" pod="default/big" err="0/1 nodes are available: 1 Insufficient '
    "cpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
    'scheduling."'
)


def log_lines(proc: subprocess.Popen) -> list[str]:
    path: Path = proc.log_path  # type: ignore[attr-defined]
    return path.read_text(errors="replace").splitlines()


def test_text_lines_for_a_binding_and_a_pod_left_waiting(live: Live) -> None:
    live.apply(node("n1", cpu="2"))
    proc = live.start_scheduler()  # --v 2
    live.apply(pod("web-1", cpu="500m"), pod("big", cpu="8"))
    live.wait(lambda: any(line.endswith(WAITING) for line in log_lines(proc)), 60, "the waiting pod's line")
    bound = live.wait(
        lambda: [line for line in log_lines(proc) if '"Successfully bound pod to node"' in line],
        60,
        "the binding's line",
    )
    assert bound[0].startswith("I") and HEADER.match(bound[0])
    assert re.search(
        r' schedule_one\.py:\d+\] "Successfully bound pod to node" pod="default/web-1" node="n1" '
        r"evaluatedNodes=1 feasibleNodes=1$",
        bound[0],
    ), bound[0]
    lines = log_lines(proc)
    assert all(HEADER.match(line) for line in lines), lines  # one klog line each, no stray output
    assert any('"Starting Kubernetes Scheduler" version=' in line for line in lines)
    assert not any('"Add event for unscheduled pod"' in line for line in lines)  # a V3 line


def test_json_lines_at_v4_with_nothing_from_the_http_library(live: Live) -> None:
    live.apply(node("n1", cpu="2"))
    proc = live.start_scheduler("--v", "4", "--logging-format", "json")
    live.apply(pod("web-1", cpu="500m"), pod("big", cpu="8"))

    def parsed() -> list[dict]:
        return [json.loads(line) for line in log_lines(proc) if line.endswith("}")]

    live.wait(
        lambda: any(o["msg"] == "Unable to schedule pod; no fit; waiting" for o in parsed()),
        60,
        "the waiting pod's line",
    )
    bound = live.wait(
        lambda: [o for o in parsed() if o["msg"] == "Successfully bound pod to node"], 60, "the binding's line"
    )
    assert {k: bound[0][k] for k in ("v", "pod", "node", "evaluatedNodes", "feasibleNodes")} == {
        "v": 2,
        "pod": {"name": "web-1", "namespace": "default"},
        "node": "n1",
        "evaluatedNodes": 1,
        "feasibleNodes": 1,
    }
    assert isinstance(bound[0]["ts"], float) and bound[0]["caller"].startswith("kubesched/schedule_one.py:")
    objs = [json.loads(line) for line in log_lines(proc)]  # every line is one JSON object
    assert any(o["msg"] == "About to try and schedule pod" and o["v"] == 4 for o in objs)
    callers = {o["caller"].split(":")[0] for o in objs}
    assert not any("urllib3" in c or "connectionpool" in c for c in callers), callers
