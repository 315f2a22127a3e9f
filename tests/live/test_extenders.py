"""HTTP extenders with ``kubesched run`` against a real kube-apiserver: the same code as in simulations."""

from __future__ import annotations

from typing import Any

import pytest

from tests.extender.server import ExtenderServer
from tests.live.conftest import Live, node, pod

pytestmark = pytest.mark.controlplane


def test_extender_filter_and_prioritize_decide_the_node(live: Live) -> None:
    server = ExtenderServer()

    def filter_(args: Any) -> Any:
        names = args["NodeNames"]
        return {"NodeNames": [n for n in names if n != "n-a"], "FailedNodes": {"n-a": "licence server says no"}}

    server.handlers["filter"] = filter_
    server.handlers["prioritize"] = lambda args: [
        {"Host": n, "Score": 10 if n == "n-c" else 0} for n in args["NodeNames"]
    ]
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "extenders": [
            {
                "urlPrefix": server.url,
                "filterVerb": "filter",
                "prioritizeVerb": "prioritize",
                "weight": 5,
                "nodeCacheCapable": True,
            }
        ],
    }
    try:
        live.apply(node("n-a"), node("n-b"), node("n-c"))
        live.start_scheduler(config=config)
        live.apply(pod("licensed"))
        assert live.wait_bound("licensed") == {"licensed": "n-c"}
        assert [verb for verb, _ in server.calls][:2] == ["filter", "prioritize"]
        # Every node refused: the extender's reason is in the FailedScheduling event.
        server.handlers["filter"] = lambda args: {
            "NodeNames": [],
            "FailedNodes": {n: "licence server says no" for n in args["NodeNames"]},
        }
        live.apply(pod("refused"))
        events = live.wait(
            lambda: [e for e in live.events("refused") if e["reason"] == "FailedScheduling"], 60, "FailedScheduling"
        )
        assert events[0]["note"].startswith("0/3 nodes are available: 3 licence server says no.")
    finally:
        server.close()
