"""What would let pending pods schedule: each kind of change, found and checked by simulating it."""

from __future__ import annotations

from typing import Any

from kubesched.sim.explain_pending import explain_pending
from kubesched.sim.whatif import Remedy
from tests.sim.scenarios import POOL_LABEL, deployment, node, pod


def _remedies(scenario: list[dict[str, Any]], **options: Any) -> dict[str, list[Remedy]]:
    """Kind -> the remedies tried for the only group of pending pods."""
    report = explain_pending(scenario, tie_break="name", **options)
    assert len(report.groups) == 1, [g.describe() for g in report.groups]
    out: dict[str, list[Remedy]] = {}
    for remedy in report.remedies[0]:
        out.setdefault(remedy.kind, []).append(remedy)
    return out


def _pooled(name: str, pool: str, cpu: str = "2", **kw: Any) -> dict[str, Any]:
    n = node(name, cpu=cpu, **kw)
    n["metadata"]["labels"][POOL_LABEL] = pool
    return n


def test_the_closest_node_is_short_of_the_least_share_and_growing_it_by_that_schedules_the_pod() -> None:
    scenario = [
        node("n1", cpu="2"),
        node("n2", cpu="4"),
        pod("used-1", cpu="1500m", node_name="n1"),
        pod("used-2", cpu="3800m", node_name="n2"),
        pod("p", cpu="1"),
    ]
    [closest] = _remedies(scenario)["closestNode"]
    # n1 lacks 0.5 of 2 cpu (25%), n2 0.8 of 4 (20%): n2 is closer.
    assert closest.details == {"pod": "default/p", "node": "n2", "short": {"cpu": "800m"}, "landedOn": "n2"}
    assert closest.helps and closest.to_dict()["checked"] is True


def test_preemption_with_a_higher_priority_evicts_the_pods_it_names() -> None:
    scenario = [node("n1", cpu="2"), pod("low", cpu="2", node_name="n1"), pod("p", cpu="1")]
    [preempting] = _remedies(scenario)["preemption"]
    assert preempting.helps and preempting.details["victims"] == ["default/low"]
    assert preempting.details["nodes"] == ["n1"] and preempting.details["priority"] == 1


def test_nodes_of_a_pool_the_pods_could_use_are_added_the_fewest_that_schedule_them_all() -> None:
    taint = [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]
    scenario = [
        _pooled("general-1", "general"),
        _pooled("gpu-1", "gpu", cpu="16", taints=taint),
        pod("used", cpu="2", node_name="general-1"),
        *(pod(f"p{i}", cpu="1500m") for i in range(3)),
    ]
    [added] = _remedies(scenario, max_pools=5)["addNodes"]  # the tainted pool is not tried
    assert added.details == {"pool": f"{POOL_LABEL}=general", "template": "general-1", "nodes": 3}
    assert (added.schedules, added.of) == (3, 3)


def test_a_constraint_is_relaxed_through_the_workload_template_when_pods_belong_to_one() -> None:
    web = deployment("web", 2)
    web["spec"]["template"]["spec"]["nodeSelector"] = {"disktype": "ssd"}
    relaxed = _remedies([node("n1", cpu="4"), web])["relax"]
    by_change = {r.change: r for r in relaxed}
    assert by_change["drop the node selector"].helps
    assert (by_change["drop the node selector"].schedules, by_change["drop the node selector"].of) == (2, 2)
    assert "drop the required node affinity" not in by_change  # no pod has one: nothing to drop


def test_required_anti_affinity_dropped_lets_the_pod_share_the_node() -> None:
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    running, pending = pod("db-0", node_name="n1"), pod("db-1", affinity=anti)
    for p in (running, pending):
        p["metadata"]["labels"] = {"app": "db"}
    relaxed = _remedies([node("n1", cpu="4"), running, pending])["relax"]
    # Only what the pod has is dropped: it has no pod affinity to drop.
    assert [(r.change, r.helps) for r in relaxed] == [("drop the required pod anti-affinity", True)]


def test_a_taint_that_kept_the_pod_out_is_tolerated() -> None:
    taint = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    scenario = [node("n1", cpu="4", taints=taint), pod("p")]
    [tolerate] = _remedies(scenario)["relax"]
    assert tolerate.change == "tolerate the taint dedicated=batch:NoSchedule" and tolerate.helps


def test_without_what_if_nothing_is_simulated_beyond_the_run() -> None:
    report = explain_pending([node("n1", cpu="1"), pod("p", cpu="2")], what_if=False)
    assert report.remedies == {} and report.simulations == 0 and report.pending == 1
