"""Workloads in simulations: controllers' pods are scheduled, reported and grouped by workload."""

from __future__ import annotations

from kubesched import simulate
from kubesched.sim.report import format_summary, workload_pods
from tests.sim.scenarios import deployment, node, pod


def test_deployment_pods_are_simulated_and_grouped_with_the_pending_one_named() -> None:
    result = simulate([node("n1", cpu="2"), deployment("web", 5, cpu="500m")], seed=1)
    web = {k: v for k, v in result.final.items() if k.startswith("default/web-")}
    assert len(web) == 5
    assert sum(1 for v in web.values() if v == "n1") == 4
    (group,) = workload_pods(result)
    assert (group.workload, group.total, group.scheduled, len(group.pending)) == ("Deployment default/web", 5, 4, 1)
    summary = format_summary(result)
    assert "Deployment default/web: 4/5 scheduled; 1 pending: web-" in summary
    assert "0/1 nodes are available: 1 Insufficient cpu." in summary


def test_workload_pods_come_before_bare_pending_pods_and_names_repeat_with_the_seed() -> None:
    scenario = [node("n1", cpu="4"), deployment("web", 2), pod("solo")]
    first, again = simulate(scenario, seed=3), simulate(scenario, seed=3)
    assert list(first.final) == list(again.final)
    assert next(iter(first.final)) == "default/solo"  # bare pending pods are listed first
    assert all(v == "n1" for v in first.final.values())


def test_daemonset_pods_follow_eligibility_and_are_placed_on_their_own_node() -> None:
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}}, "spec": pod("a", "100m")["spec"]},
        },
    }
    tainted = node("n3", taints=[{"key": "gpu", "value": "x", "effect": "NoSchedule"}])
    result = simulate([node("n1"), node("n2"), tainted, ds])
    placed = [v for k, v in result.final.items() if k.startswith("default/agent-")]
    assert sorted(v for v in placed if v is not None) == ["n1", "n2"] and None not in placed


def test_a_preempted_workload_pod_is_reported_as_deleted_and_replaced() -> None:
    low = deployment("batch", 2, cpu="1")
    high = pod("urgent", cpu="1")
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    high["spec"]["priorityClassName"] = "high"
    result = simulate([node("n1", cpu="2"), pc, low, high], seed=0)
    assert result.final["default/urgent"] == "n1"
    assert len(result.deleted) == 1 and result.deleted[0].startswith("default/batch-")
    # The ReplicaSet replaced its victim; the replacement cannot fit.
    batch = [k for k in result.final if k.startswith("default/batch-") and k not in result.deleted]
    assert len(batch) == 2 and sum(1 for k in batch if result.final[k]) == 1
