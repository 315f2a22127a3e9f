"""Preemption by ``kubesched run`` against a real kube-apiserver, as v1.34 does it: asynchronously.

The victims' deletions are held in flight by an admission webhook (kube-apiserver waits for its answer in
the middle of each DELETE), so the test decides how long preempting takes: meanwhile the scheduling loop
binds another pod, and once the deletions go through the preemptor is bound where it was nominated.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml

from testing.controlplane.webhook import HoldingWebhook
from tests.live.conftest import Live, node, pod

pytestmark = pytest.mark.controlplane

HOLD = {"kubesched.test/hold-deletion": "true"}
WEBHOOK = "hold-victim-deletions"


@pytest.fixture
def webhook(live: Live, tmp_path: Path) -> Iterator[HoldingWebhook]:
    """The webhook, registered for deletions of pods labelled ``HOLD``, and known to be in force."""
    hook = HoldingWebhook(tmp_path / "webhook")
    try:
        live.kubectl(
            "create",
            "-f",
            "-",
            input=yaml.safe_dump(
                hook.configuration(WEBHOOK, resource="pods", operations=["DELETE"], object_labels=HOLD)
            ),
        )
        # kube-apiserver picks the configuration up from a watch: delete probes until one is reviewed.
        live.wait(lambda: _probe_reviewed(live, hook), 60, "the webhook to review a deletion")
        yield hook
    finally:
        hook.release()
        live.kubectl("delete", "validatingwebhookconfiguration", WEBHOOK, "--ignore-not-found", check=False)
        hook.close()


def _probe_reviewed(live: Live, hook: HoldingWebhook) -> bool:
    """Create and delete a labelled pod; whether the webhook saw that deletion."""
    probe = pod("probe", nodeName="absent", terminationGracePeriodSeconds=0)
    probe["metadata"]["labels"] = dict(HOLD)
    live.apply(probe)
    live.kubectl("delete", "pod", "probe", "--grace-period=0", "--force", "--wait=true", check=False)
    return hook.wait_reviewed("DELETE", "default/probe", 1.0)


def test_the_loop_binds_other_pods_while_the_victims_are_being_deleted(live: Live, webhook: HoldingWebhook) -> None:
    live.run_kubelet_standin()
    live.apply(
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": 10},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
        node("full", cpu="2"),
        node("spare", cpu="1"),
    )
    victims = [pod(f"victim-{i}", cpu="1", priorityClassName="low", nodeName="full") for i in range(2)]
    for victim in victims:
        victim["metadata"]["labels"] = dict(HOLD)
    live.apply(*victims)
    for i, victim in enumerate(victims):  # running, as a kubelet reports it: victim-0 started first
        live.kubectl(
            "patch",
            "pod",
            victim["metadata"]["name"],
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps({"status": {"phase": "Running", "startTime": f"2024-01-01T00:00:0{i}Z"}}),
        )
    live.start_scheduler()
    webhook.hold()
    live.apply(pod("preemptor", cpu="2", priorityClassName="high"))
    # The first victim's DELETE (the more important one goes first) is in flight, held.
    assert webhook.wait_reviewed("DELETE", "default/victim-0")
    live.wait(lambda: live.pods()["preemptor"]["status"].get("nominatedNodeName") == "full", 20, "the nomination")

    live.apply(pod("bystander", cpu="500m", priorityClassName="low"))
    assert live.wait_bound("bystander", timeout=20) == {"bystander": "spare"}
    assert webhook.still_held("default/victim-0")
    pods = live.pods()
    assert {"victim-0", "victim-1"} <= set(pods) and not pods["preemptor"]["spec"].get("nodeName")
    assert ("DELETE", "default/victim-1") not in webhook.reviewed  # the last victim waits for the others

    webhook.release()
    assert live.wait_bound("preemptor") == {"preemptor": "full"}
    assert not {"victim-0", "victim-1"} & set(live.pods())

    def preempted(name: str) -> list[dict[str, Any]]:
        return [e for e in live.events(name) if e["reason"] == "Preempted"]

    for name in ("victim-0", "victim-1"):
        events = live.wait(partial(preempted, name), 20, f"the Preempted event of {name}")
        assert events[0]["note"] == f"Preempted by pod {pods['preemptor']['metadata']['uid']} on node full"
    # The preemptor's FailedScheduling says only why nothing fitted: preemption succeeded.
    failed = [e for e in live.events("preemptor") if e["reason"] == "FailedScheduling"]
    assert [e["note"] for e in failed][:1] == ["0/2 nodes are available: 2 Insufficient cpu."]
