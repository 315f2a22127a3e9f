"""Why each pod deleted during a simulation went, known from the deleter, never guessed from timing."""

from __future__ import annotations

from typing import Any

from kubesched import simulate
from kubesched.config import load_config
from kubesched.scenario.pipeline import load_scenario
from kubesched.sim.report import format_summary
from kubesched.sim.simulate import Simulation, SimulationResult
from tests.sim.scenarios import deployment, node, pod

HIGH = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}


def reasons(result: SimulationResult) -> list[tuple[str, str, str | None, str | None]]:
    return [(d.pod, d.reason, d.node, d.by) for d in result.deletions]


def with_duration(obj: dict[str, Any], duration: str) -> dict[str, Any]:
    obj["metadata"]["annotations"] = {"kubesched.io/duration": duration}
    return obj


def test_a_victim_is_preempted_by_its_preemptor_and_only_victims_are_in_deleted() -> None:
    result = simulate(
        [
            HIGH,
            node("n1", cpu="1"),
            pod("low", cpu="1", node_name="n1"),
            pod("urgent", cpu="1", priorityClassName="high"),
        ]
    )
    assert reasons(result) == [("default/low", "preempted", "n1", "default/urgent")]
    assert result.deleted == ["default/low"]
    assert "  default/low: preempted by default/urgent on n1" in format_summary(result)


def test_timeline_deletions_are_not_victims_even_when_the_pod_carries_a_disruption_condition() -> None:
    marked = pod("marked", node_name="n1")
    marked["status"] = {
        "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    }
    steps = [
        {"at": "10s", "action": "delete", "object": "Pod/default/marked"},
        {"at": "20s", "action": "delete", "object": "Pod/default/waiting"},
    ]
    result = simulate([node("n1"), marked, pod("waiting", cpu="8")], timeline=steps)
    assert reasons(result) == [
        ("default/marked", "timeline", "n1", "timeline: step 1: delete Pod/default/marked"),
        ("default/waiting", "timeline", None, "timeline: step 2: delete Pod/default/waiting"),
    ]
    assert result.deleted == []
    text = format_summary(result)
    headline = text.splitlines()[0]
    assert headline.startswith("Scheduled 0/1 pending pods") and headline.endswith("; 1 deleted.")
    assert "Preempted" not in text
    assert "Deleted by the timeline: 2\n  default/marked from n1 at 10.0s by timeline: step 1" in text
    assert "  default/waiting before it was placed at 20.0s" in text
    assert "Pending" not in text  # a pod the timeline deleted is gone, not pending


def test_a_deleted_namespace_takes_its_pods_with_the_step() -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    result = simulate(
        [node("n1"), namespace, pod("a", namespace="team"), pod("b", namespace="team")],
        timeline=[{"at": "1m", "action": "delete", "object": "Namespace/team"}],
    )
    assert sorted((p, r) for p, r, _, _ in reasons(result)) == [("team/a", "timeline"), ("team/b", "timeline")]


def test_pods_that_ran_their_duration_are_completed_and_job_pods_too() -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "report", "namespace": "default"},
        "spec": {
            "completions": 2,
            "parallelism": 2,
            "template": with_duration({"metadata": {}, "spec": pod("report")["spec"]}, "5m"),
        },
    }
    result = simulate([node("n1"), with_duration(pod("bare"), "1m"), job])
    assert sorted(r for _, r, _, _ in reasons(result)) == ["completed"] * 3
    assert all(n == "n1" for _, _, n, _ in reasons(result))
    assert result.deleted == [] and result.removed == []
    text = format_summary(result)
    assert "Completed: 3" in text and "Preempted" not in text
    assert "Job default/report: 2/2 scheduled" in text  # completed pods still count as scheduled


def test_a_pod_its_replica_set_does_not_need_is_scaled_down() -> None:
    # The ReplicaSet adopts an orphan carrying its labels; it has its one replica, so the newcomer goes.
    orphan = pod("orphan", cpu="100m") | {
        "metadata": {"name": "orphan", "namespace": "default", "labels": {"app": "web"}}
    }
    replica_set = deployment("web", 1, cpu="100m") | {"kind": "ReplicaSet"}
    result = simulate([node("n1"), replica_set], timeline=[{"at": "1m", "action": "create", "object": orphan}])
    (deletion,) = result.deletions
    assert (deletion.pod, deletion.reason, deletion.by) == ("default/orphan", "scale-down", "ReplicaSet default/web")
    assert "Scaled down: 1" in format_summary(result)
    assert "default/orphan" not in format_summary(result)  # listed with -v only
    assert "  default/orphan " in format_summary(result, verbose=True)


def test_a_daemon_pod_whose_node_went_is_scaled_down_by_its_daemon_set() -> None:
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}}, "spec": pod("a", "100m")["spec"]},
        },
    }
    result = simulate([node("n1"), node("n2"), ds], timeline=[{"at": "1m", "action": "delete", "object": "n2"}])
    (deletion,) = result.deletions
    assert (deletion.reason, deletion.node, deletion.by) == ("scale-down", "n2", "DaemonSet default/agent")
    assert deletion.pod in result.removed and deletion.pod not in result.deleted


def test_pods_of_a_deleted_deployment_are_garbage_collected() -> None:
    result = simulate(
        [node("n1"), deployment("web", 2, cpu="100m")],
        timeline=[{"at": "1m", "action": "delete", "object": "Deployment/default/web"}],
    )
    assert [r for _, r, _, _ in reasons(result)] == ["garbage-collected"] * 2
    assert all((by or "").startswith("ReplicaSet default/web-") for _, _, _, by in reasons(result))
    text = format_summary(result)
    assert "Garbage-collected with their owner: 2" in text
    assert "Workloads:" not in text  # its pods are gone: neither scheduled nor pending


def test_a_deletion_no_part_of_the_simulation_made_is_plain_deleted() -> None:
    sim = Simulation(load_scenario([node("n1"), pod("p")]), load_config(None))
    sim.load()
    sim.driver.at(30, lambda: sim.cluster.delete("Pod", "default", "p"))
    result = sim.run()
    assert reasons(result) == [("default/p", "deleted", "n1", None)]
    assert "Deleted: 1\n  default/p from n1 at 30.0s" in format_summary(result)


def test_a_workload_victim_is_preempted_and_its_replacement_counted() -> None:
    low = deployment("batch", 2, cpu="1")
    urgent = pod("urgent", cpu="1", priorityClassName="high")
    result = simulate([node("n1", cpu="2"), HIGH, low, urgent])
    (victim,) = result.deletions
    assert (victim.reason, victim.by, victim.node) == ("preempted", "default/urgent", "n1")
    assert result.deleted == [victim.pod] == result.removed
