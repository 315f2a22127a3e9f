"""Queue moves for pods rejected by PodTopologySpread and InterPodAffinity, end to end through the scheduler.

The plugins register the cluster events that can help such pods (assigned pods added, updated or
deleted; node labels changed). A rejected pod must wait in the unschedulable pool until one of those
happens, and then get scheduled: in v1.30 (queueing hints off) on any registered event, in v1.34 when
the plugin's hint says the event may help.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.factories import node_dict, pod_dict
from tests.fakeplugins import Harness


def _after_backoff(h: Harness) -> None:
    """Let moved pods finish their backoff, then schedule what is active."""
    h.settle()
    h.clock.advance(10)
    h.scheduler.run_periodic()
    h.run()


ZONE = "topology.kubernetes.io/zone"
NO_PREEMPTION = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {"schedulerName": "default-scheduler", "plugins": {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}}
    ],
}


def _spread(max_skew: int = 1) -> dict[str, Any]:
    return {
        "topologySpreadConstraints": [
            {
                "maxSkew": max_skew,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ]
    }


def _requires(app: str, key: str = ZONE) -> dict[str, Any]:
    return {
        "affinity": {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}
                ]
            }
        }
    }


@pytest.mark.parametrize("version", ["1.30", "1.34"])
def test_spread_rejection_waits_for_a_matching_pod_to_leave(version: str) -> None:
    # Zone b is full; zone a already has a web pod, so a second there would make the skew 2 - 0 > 1.
    h = Harness(
        NO_PREEMPTION,
        objects=[
            node_dict("a1", labels={ZONE: "a"}),
            node_dict("b1", cpu="1", labels={ZONE: "b"}),
            pod_dict("web-0", node_name="a1", labels={"app": "web"}),
            pod_dict("filler", node_name="b1", cpu="1"),
        ],
        version=version,
    )
    h.create(pod_dict("web-2", cpu="100m", labels={"app": "web"}, spec=_spread()))
    h.run()
    assert h.where("web-2") == "unschedulable"
    assert "node(s) didn't match pod topology spread constraints" in (h.records[-1].message or "")
    h.cluster.delete("Pod", "default", "web-0")  # an unrelated deletion would not do: this one matches
    h.settle()
    assert h.where("web-2") in ("active", "backoff")
    _after_backoff(h)
    assert h.node_of("web-2") == "a1"


@pytest.mark.parametrize("version", ["1.30", "1.34"])
def test_spread_rejection_moves_when_a_node_gets_the_topology_label(version: str) -> None:
    # a1 would make the skew 2 - 0 > 1 (zone b is full), and "plain" has no zone at all.
    h = Harness(
        NO_PREEMPTION,
        objects=[
            node_dict("a1", labels={ZONE: "a"}),
            node_dict("b1", cpu="1", labels={ZONE: "b"}),
            node_dict("plain"),
            pod_dict("web-0", node_name="a1", labels={"app": "web"}),
            pod_dict("filler", node_name="b1", cpu="1"),
        ],
        version=version,
    )
    h.create(pod_dict("web-2", cpu="100m", labels={"app": "web"}, spec=_spread()))
    h.run()
    assert h.where("web-2") == "unschedulable"
    node = h.cluster.get("Node", None, "plain")
    node["metadata"]["labels"][ZONE] = "b"
    h.cluster.update(node)
    _after_backoff(h)
    assert h.node_of("web-2") == "plain"


@pytest.mark.parametrize("version", ["1.30", "1.34"])
def test_affinity_rejection_waits_for_a_matching_pod_to_be_bound(version: str) -> None:
    h = Harness(
        NO_PREEMPTION,
        objects=[node_dict("a1", labels={ZONE: "a"}), node_dict("b1", labels={ZONE: "b"})],
        version=version,
    )
    h.create(pod_dict("cache", spec=_requires("db")))
    h.run()
    assert h.where("cache") == "unschedulable"
    assert "node(s) didn't match pod affinity rules" in (h.records[-1].message or "")
    h.create(pod_dict("unrelated", labels={"app": "web"}, spec={"nodeSelector": {ZONE: "a"}}))
    h.run()
    h.settle()
    assert h.where("cache") == "unschedulable"  # a bound pod its terms do not select moves nothing
    h.create(pod_dict("db", labels={"app": "db"}, spec={"nodeSelector": {ZONE: "b"}}))
    h.run()
    _after_backoff(h)
    assert h.node_of("db") == "b1" and h.node_of("cache") == "b1"


def _blocked_by_existing_anti_affinity(version: str) -> Harness:
    """db-2 has no terms of its own; the bound pod "db" refuses it by its own anti-affinity."""
    anti = {
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
                ]
            }
        }
    }
    blocker = pod_dict("db", node_name="n1", labels={"app": "db"}, spec=anti)
    h = Harness(NO_PREEMPTION, objects=[node_dict("n1"), blocker], version=version)
    h.create(pod_dict("db-2", labels={"app": "db"}))
    h.run()
    assert h.where("db-2") == "unschedulable"
    assert "node(s) didn't satisfy existing pods anti-affinity rules" in (h.records[-1].message or "")
    h.cluster.delete("Pod", "default", "db")
    return h


def test_anti_affinity_rejection_waits_for_the_blocking_pod_to_leave() -> None:
    h = _blocked_by_existing_anti_affinity("1.30")
    _after_backoff(h)
    assert h.node_of("db-2") == "n1"


def test_v134_an_existing_pods_anti_affinity_is_lifted_only_by_the_leftover_flush() -> None:
    """v1.34's hint reads the rejected pod's own anti-affinity terms: db-2 has none, so the blocker's
    deletion does not move it; it waits for the 5-minute flush of the unschedulable pool."""
    h = _blocked_by_existing_anti_affinity("1.34")
    _after_backoff(h)
    assert h.where("db-2") == "unschedulable" and h.node_of("db-2") is None
    h.clock.advance(300)
    h.scheduler.run_periodic()
    _after_backoff(h)
    assert h.node_of("db-2") == "n1"
