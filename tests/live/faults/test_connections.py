"""Connections reset, watch streams cut in the middle of an event, and 410 Gone on watch."""

from __future__ import annotations

import time

import pytest

from testing.controlplane.faults import CutWatch, Hold, Reset, Respond, WatchError
from tests.live.faults.support import CHURN_TAINT, FaultEnv, node, pod

pytestmark = pytest.mark.controlplane

PODS = "/api/v1/pods"
NODES = "/api/v1/nodes"


def test_connection_resets_lose_nothing_and_bind_nothing_twice(env: FaultEnv) -> None:
    # Reset before the request reaches the server, and after the server bound the pod.
    env.proxy.add(Reset(), method="POST", path=r".*/pods/reset-before/binding")
    env.proxy.add(Reset(forward_first=True), method="POST", path=r".*/pods/reset-after/binding")
    env.admin.create_pod(pod("reset-before"))
    env.admin.create_pod(pod("reset-after"))
    env.wait_bound("reset-before", "reset-after")
    # Then every open connection at once: watches, bindings, events.
    assert env.proxy.cut() > 0
    env.admin.create_pod(pod("after-cut"))
    env.wait_bound("after-cut")
    env.settle()
    before = env.bindings("reset-before")
    assert (before[0].status, before[0].upstream_status, before[-1].status) == (0, 0, 201)
    after = env.bindings("reset-after")
    # A write whose connection broke is not sent again by the client; the server had bound the pod.
    assert after[0].upstream_status == 201 and all(e.upstream_status == 409 for e in after[1:])


def test_watch_streams_cut_mid_event_resume_from_the_last_whole_event(env: FaultEnv) -> None:
    env.proxy.add(CutWatch(after_events=1), verb="watch", path=PODS, times=2)
    env.proxy.add(CutWatch(after_events=0), verb="watch", path=NODES, times=1)
    since = env.scheduler.log_size()
    env.proxy.cut()  # the informers watch again, and the new watches are the ones cut
    names = [f"cut-{i}" for i in range(4)]
    for name in names:
        env.admin.create_pod(pod(name))
    env.admin.create_node(node("cut-node", taints=[CHURN_TAINT]))
    env.wait_bound(*names)
    env.wait(
        lambda: len([e for e in env.proxy.seen(verb="watch") if e.action == "CutWatch"]) == 3,
        60,
        "three watches cut mid-event",
    )
    # A stream that ran is watched again at once from the last whole event (client-go's reflector).
    env.scheduler.wait_log(r"watch from \d+ broke after \d+ events, watching again", since)
    env.settle()
    env.admin.delete_node("cut-node")
    env.settle()


def test_gone_on_watch_relists_and_the_relist_catches_up(env: FaultEnv) -> None:
    env.admin.create_pod(pod("gone-bound"))
    env.wait_bound("gone-bound")
    # The pods watch is refused with 410 Expired; the nodes watch gets a 410 ERROR event in its stream.
    # The relists are held while the cluster changes, so only the relist can tell the scheduler.
    # Every watch is answered so until the relist is held: a watch sent again on a pooled connection
    # the cut was closing never got its 410, and the client's retry must get one too.
    gone_pods = env.proxy.add(Respond(410), verb="watch", path=PODS, times=None)
    gone_nodes = env.proxy.add(WatchError(410), verb="watch", path=NODES, times=None)
    hold_pods, hold_nodes = Hold(), Hold()
    env.proxy.add(hold_pods, verb="list", path=PODS)
    env.proxy.add(hold_nodes, verb="list", path=NODES)
    since, cut_at = env.scheduler.log_size(), time.monotonic()
    env.proxy.cut()
    env.wait_caught(hold_pods, "relist of pods", cut_at, since)
    env.wait_caught(hold_nodes, "relist of nodes", cut_at, since)
    env.proxy.remove(gone_pods)
    env.proxy.remove(gone_nodes)
    env.admin.delete_pod("gone-bound")
    env.admin.create_pod(pod("gone-new"))
    env.admin.create_node(node("gone-node", taints=[CHURN_TAINT]))
    hold_pods.release()
    hold_nodes.release()
    env.wait_bound("gone-new")
    for kind in ("Pod", "Node"):
        env.scheduler.wait_log(rf"{kind}: resourceVersion \d+ is gone, listing again", since)
    # The relist asks for the latest state, not the watch cache's.
    for path in (PODS, NODES):
        relists = [e for e in env.proxy.seen(verb="list", path=path) if e.action == "Hold"]
        assert relists and "resourceVersion" not in relists[-1].info.query
    env.settle()
    report = env.scheduler.debug()
    assert "gone-node" in report.nodes
    env.admin.delete_node("gone-node")
    env.settle()
