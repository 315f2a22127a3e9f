"""Scheduler.reconfigure: a new configuration's profiles decide from the next scheduling cycle on, while
the queue, the cache and the pods in flight are kept; a configuration it cannot run changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import ConfigError, load_config
from kubesched.plugins.registry import PluginLoadError
from tests.factories import node_dict, pod_dict
from tests.fakeplugins import Harness, PermitPlugin, config_dict, profile_with, ref

#: n1 is preferred by every pod (NodeAffinity, weight 2 by default) but has a PreferNoSchedule taint
#: (TaintToleration, weight 3): 2 x 100 against 3 x 100, n2 wins; NodeAffinity at weight 5 turns it round.
NODES = [
    node_dict("n1", labels={"zone": "a"}, taints=[{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]),
    node_dict("n2", labels={"zone": "b"}),
]
PREFERS_N1 = {
    "affinity": {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                }
            ]
        }
    }
}


def preferring(name: str, **extra: Any) -> dict[str, Any]:
    return pod_dict(name, cpu="100m", spec={**PREFERS_N1, **extra})


def weights(affinity: int) -> dict[str, Any]:
    return config_dict(profile_with({"score": {"enabled": [{"name": "NodeAffinity", "weight": affinity}]}}))


def test_new_weights_decide_the_next_pod() -> None:
    h = Harness(objects=NODES)
    h.create(preferring("before"))
    h.run()
    assert h.node_of("before") == "n2"
    h.scheduler.reconfigure(load_config(weights(5)))
    h.create(preferring("after"))
    h.run()
    assert h.node_of("after") == "n1"
    assert h.scheduler.profiles["default-scheduler"].score_weights["NodeAffinity"] == 5


def test_pending_pods_stay_queued_and_the_new_plugin_set_judges_them() -> None:
    tainted = node_dict("tainted", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])
    h = Harness(objects=[tainted])
    h.create(pod_dict("p", cpu="100m"))
    h.run()
    assert h.where("p") == "unschedulable"
    no_taints = profile_with(
        {
            "filter": {"disabled": [{"name": "TaintToleration"}]},
            "multiPoint": {"disabled": [{"name": "TaintToleration"}]},
        }
    )
    h.scheduler.reconfigure(load_config(config_dict(no_taints)))
    assert h.where("p") in ("active", "backoff")  # moved out of the unschedulable pool, still queued
    h.clock.advance(10)
    h.scheduler.run_periodic()
    h.run()
    assert h.node_of("p") == "tainted"


def test_a_refused_configuration_changes_nothing() -> None:
    h = Harness(objects=NODES)
    h.create(preferring("waiting", nodeSelector={"zone": "nowhere"}))
    h.run()
    before = (h.scheduler.profiles, h.scheduler.config, h.scheduler.queue.pending_pods())
    with pytest.raises(ConfigError, match=r"parallelism: Forbidden: changes only at a restart"):
        h.scheduler.reconfigure(load_config(config_dict(parallelism=4)))
    with pytest.raises(ConfigError, match=r"leaderElection.leaseDuration: Forbidden"):
        h.scheduler.reconfigure(load_config(config_dict(leaderElection={"leaseDuration": "30s"})))
    unknown = profile_with({"score": {"enabled": [{"name": "tests.nowhere:Plugin"}]}})
    with pytest.raises(PluginLoadError):
        h.scheduler.reconfigure(load_config(config_dict(unknown)))
    assert (h.scheduler.profiles, h.scheduler.config, h.scheduler.queue.pending_pods()) == before
    assert h.where("waiting") == "unschedulable"


def test_a_profile_added_takes_its_pending_pods_and_one_removed_lets_them_go() -> None:
    h = Harness(objects=NODES)
    h.create(pod_dict("mine", cpu="100m", spec={"schedulerName": "other", "nodeSelector": {"zone": "nowhere"}}))
    h.run()
    assert h.where("mine") is None  # no profile for "other": not ours
    both = config_dict({}, {"schedulerName": "other"})
    h.scheduler.reconfigure(load_config(both))
    assert h.where("mine") == "active"
    h.run()
    assert h.where("mine") == "unschedulable"
    h.scheduler.reconfigure(load_config(config_dict()))
    assert h.where("mine") is None
    h.create(pod_dict("later", cpu="100m", spec={"schedulerName": "other"}))
    h.run()
    assert h.node_of("later") is None and h.where("later") is None


def test_a_pod_held_at_permit_finishes_under_the_profile_it_started_with() -> None:
    permit = {
        "plugins": {"permit": {"enabled": [{"name": ref(PermitPlugin)}]}},
        "pluginConfig": [{"name": ref(PermitPlugin), "args": {"mode": "wait", "timeout": 60}}],
    }
    h = Harness(config_dict(permit), objects=NODES)
    h.create(pod_dict("held", cpu="100m"))
    h.run()
    old = h.plugin(PermitPlugin)
    assert h.node_of("held") is None and h.scheduler.waiting_pod_count() == 1
    allowing = {**permit, "pluginConfig": [{"name": ref(PermitPlugin), "args": {"mode": "allow"}}]}
    h.scheduler.reconfigure(load_config(config_dict(allowing)))
    new = h.plugin(PermitPlugin)
    assert new is not old and new.args == {"mode": "allow"}
    # The new profile sees the pod its predecessor holds (as a gang plugin must) and lets it go.
    held_uid = h.pod("held")["metadata"]["uid"]
    assert new.handle.get_waiting_pod(held_uid) is not None
    new.allow(held_uid)
    h.settle()
    assert h.node_of("held") is not None
    h.create(pod_dict("next", cpu="100m"))
    h.run()
    assert h.node_of("next") is not None and [c[0] for c in new.calls] == ["permit"]
