"""The Handle a plugin gets: snapshot lister, pods, waiting pods, events, parallelizer, PodsToActivate."""

from __future__ import annotations

from kubesched import simulate
from tests.factories import node_dict, pod_dict
from tests.framework import handle_plugins


def test_a_plugin_reaches_every_part_of_the_handle() -> None:
    handle_plugins.SEEN.clear()
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"multiPoint": {"enabled": [{"name": "tests.framework.handle_plugins:UsesHandle"}]}},
            }
        ],
    }
    objs = [
        node_dict("a"),
        node_dict("b"),
        pod_dict("held", labels={"role": "hold"}),
        pod_dict("free", labels={"role": "go"}),
    ]
    result = simulate(objs, config=cfg, burst=True)
    seen = handle_plugins.SEEN
    assert seen["squares"] == [0, 1, 4, 9] and seen["nodes"] == 2 and seen["extenders"] == []
    # "held" waited at Permit when "free" was bound; PostBind saw it waiting and rejected it.
    assert seen["waiting"] == ["held"] and seen["pending_plugins"] == ["UsesHandle"]
    assert result.final["default/free"] in ("a", "b")
    held = [r for r in result.attempts if r["pod"] == "default/held"]
    assert held[0]["result"] == "Unschedulable" and "removed" in held[0]["message"]
    assert result.cluster is not None
    events = [e for e in result.cluster.list("Event")[0] if e.get("reason") == "Noted"]
    assert [e["message"] for e in events] == [f"bound to {result.final['default/free']}"]


def test_pods_to_activate_reach_the_queue() -> None:
    # A gated sleeper only moves when something activates it; the plugin activates sleepers.
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"multiPoint": {"enabled": [{"name": "tests.framework.handle_plugins:UsesHandle"}]}},
            }
        ],
    }
    sleeper = pod_dict("sleeper", cpu="3", labels={"role": "sleeper"})
    big = pod_dict("big", cpu="3", node_name="a")

    def sleeper_attempts(waker_role: str) -> int:
        objs = [node_dict("a"), big, sleeper, pod_dict("waker", cpu="0", labels={"role": waker_role})]
        result = simulate(objs, config=cfg)
        return sum(1 for r in result.attempts if r["pod"] == "default/sleeper")

    # Rejected for cpu, the sleeper waits for an event that could help; the waker's Permit put it in
    # PodsToActivate, so it was tried again after the waker's cycle. Without that, it is not.
    assert sleeper_attempts("noop") == 1
    assert sleeper_attempts("go") == 2
