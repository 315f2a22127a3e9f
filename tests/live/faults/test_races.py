"""Races around a binding in flight: its node deleted, its pod deleted (and created again by name)."""

from __future__ import annotations

from typing import Any

import pytest

from testing.controlplane.faults import Hold, Reset
from tests.live.faults.support import FaultEnv, node, pod

pytestmark = pytest.mark.controlplane

#: The nodes these tests delete are tainted, so that only the test's own pod (which tolerates the taint
#: and prefers them) can land there: a churn pod bound to one would break the run's invariants.
DOOMED_TAINT = [{"key": "doomed", "effect": "NoSchedule"}]
PREFER_DOOMED: dict[str, Any] = {
    "affinity": {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "preference": {"matchExpressions": [{"key": "doomed", "operator": "Exists"}]}}
            ]
        }
    },
    "tolerations": [{"key": "doomed", "operator": "Exists", "effect": "NoSchedule"}],
}


def hold_binding(env: FaultEnv, name: str) -> Hold:
    hold = Hold()
    env.proxy.add(hold, method="POST", path=rf".*/pods/{name}/binding")
    return hold


def uid(env: FaultEnv, name: str) -> str:
    found = env.admin.pod(name)
    assert found is not None
    return str(found["metadata"]["uid"])


def assumed_on_deleted_node(env: FaultEnv, node_name: str, pod_uid: str) -> bool:
    report = env.scheduler.debug()
    return node_name in report.deleted_nodes and pod_uid in report.nodes[node_name] and pod_uid in report.assumed


def test_a_node_deleted_while_a_pod_is_assumed_on_it(env: FaultEnv) -> None:
    env.admin.create_node(node("doomed", labels={"doomed": "true"}, taints=DOOMED_TAINT))
    hold = hold_binding(env, "doomed-1")
    env.admin.create_pod(pod("doomed-1", **PREFER_DOOMED))
    assert hold.caught.wait(60)
    pod_uid = uid(env, "doomed-1")
    env.admin.delete_node("doomed")
    # The cache keeps the deleted node while the assumed pod is on it (its dump says Deleted: true).
    env.wait(lambda: assumed_on_deleted_node(env, "doomed", pod_uid), 30, "the deletion seen with the pod assumed")
    # The binding fails: the assumed pod is forgotten (the deleted node with it) and scheduled again,
    # on a node that exists.
    hold.release(Reset())
    where = env.wait_bound("doomed-1")
    assert where["doomed-1"] != "doomed"
    env.settle()


def test_a_binding_that_lands_after_its_node_was_deleted_is_tracked_until_the_pod_goes(env: FaultEnv) -> None:
    # The binding left before the deletion was seen: the API server accepts it (it does not check the
    # node), as it would from kube-scheduler. The cache keeps the pod on the deleted node, and the
    # debugger names that node, until the pod is deleted (the pod garbage collector's job; the test's here).
    env.admin.create_node(node("doomed-late", labels={"doomed": "true"}, taints=DOOMED_TAINT))
    hold = hold_binding(env, "doomed-2")
    env.admin.create_pod(pod("doomed-2", **PREFER_DOOMED))
    assert hold.caught.wait(60)
    pod_uid = uid(env, "doomed-2")
    env.admin.delete_node("doomed-late")
    env.wait(lambda: assumed_on_deleted_node(env, "doomed-late", pod_uid), 30, "the deletion seen")
    hold.release()
    assert env.wait_bound("doomed-2") == {"doomed-2": "doomed-late"}

    def reported() -> bool:
        report = env.scheduler.debug()
        return not report.assumed and any('redundantNodes=["doomed-late"]' in line for line in report.mismatches)

    env.wait(reported, 30, "the debugger to report the deleted node holding the pod")
    env.admin.delete_pod("doomed-2")
    env.settle()


def test_a_pod_deleted_while_its_binding_is_in_flight(env: FaultEnv) -> None:
    hold = hold_binding(env, "vanishing")
    env.admin.create_pod(pod("vanishing"))
    assert hold.caught.wait(60)
    pod_uid = uid(env, "vanishing")
    since = env.scheduler.log_size()
    env.admin.delete_pod("vanishing")
    env.scheduler.wait_log(r'"Delete event for unscheduled pod" pod="default/vanishing"', since)
    # Assumed in the cache, gone from the cluster: the debugger sees the binding in flight.
    report = env.scheduler.debug()
    assert pod_uid in report.assumed
    assert any(pod_uid in line and "redundantPods" in line for line in report.mismatches)
    hold.release()
    env.scheduler.wait_log(r'"Pod doesn\'t exist in informer cache" pod="default/vanishing"', since)
    assert [e.upstream_status for e in env.bindings("vanishing")] == [404]
    env.settle()


def test_a_pod_deleted_and_created_again_while_its_binding_is_in_flight(env: FaultEnv) -> None:
    hold = hold_binding(env, "reborn")
    env.admin.create_pod(pod("reborn"))
    assert hold.caught.wait(60)
    old_uid = uid(env, "reborn")
    env.admin.delete_pod("reborn")
    env.wait(lambda: env.admin.pod("reborn") is None, 30, "the pod to go")
    env.admin.create_pod(pod("reborn"))
    env.wait_bound("reborn")  # the new pod (a new uid) is scheduled on its own
    new_uid = uid(env, "reborn")
    hold.release()
    # The old binding names the old uid: the API server refuses it, and the new pod stays bound once.
    env.wait(lambda: len(env.bindings("reborn")) == 2, 30, "the old binding's answer")
    answers = {e.body["metadata"]["uid"]: e.upstream_status for e in env.bindings("reborn")}
    assert answers == {old_uid: 409, new_uid: 201}
    env.settle()
