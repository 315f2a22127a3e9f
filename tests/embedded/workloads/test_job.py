"""Job controller: parallelism, completions, failures, indexed jobs, completion by duration."""

from __future__ import annotations

from kubesched.embedded.workloads.job import COMPLETION_INDEX, CONTROLLER_UID_LABEL, JOB_NAME_LABEL
from tests.embedded.workloads.conftest import bind, node, pods_of, set_phase, workload


def active(cluster) -> list[dict]:
    return [p for p in pods_of(cluster, "etl-") if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]


def test_parallelism_pods_until_completions_succeed(env) -> None:
    cluster, _, _ = env
    job = cluster.create(workload("Job", "etl", parallelism=2, completions=3))
    pods = active(cluster)
    assert len(pods) == 2
    assert pods[0]["metadata"]["labels"][CONTROLLER_UID_LABEL] == job["metadata"]["uid"]
    assert pods[0]["metadata"]["labels"][JOB_NAME_LABEL] == "etl"
    set_phase(cluster, pods[0]["metadata"]["name"], "Succeeded")
    assert len(active(cluster)) == 2  # 1 done, 2 to go, both running
    for pod in active(cluster):
        set_phase(cluster, pod["metadata"]["name"], "Succeeded")
    assert active(cluster) == []
    status = cluster.get("Job", "default", "etl")["status"]
    assert status["succeeded"] == 3
    assert any(c["type"] == "Complete" and c["status"] == "True" for c in status["conditions"])


def test_failed_pods_are_replaced_until_the_backoff_limit(env) -> None:
    cluster, _, _ = env
    cluster.create(workload("Job", "etl", completions=1, backoffLimit=1))
    set_phase(cluster, active(cluster)[0]["metadata"]["name"], "Failed")
    set_phase(cluster, active(cluster)[0]["metadata"]["name"], "Failed")
    assert active(cluster) == []
    status = cluster.get("Job", "default", "etl")["status"]
    assert status["failed"] == 2
    assert any(c["type"] == "Failed" for c in status["conditions"])


def test_indexed_job_names_pods_by_index_and_reruns_only_missing_indexes(env) -> None:
    cluster, _, _ = env
    cluster.create(workload("Job", "etl", completions=3, parallelism=3, completionMode="Indexed"))
    pods = active(cluster)
    indexes = sorted(p["metadata"]["annotations"][COMPLETION_INDEX] for p in pods)
    assert indexes == ["0", "1", "2"]
    one = next(p for p in pods if p["metadata"]["annotations"][COMPLETION_INDEX] == "1")
    assert one["metadata"]["name"].startswith("etl-1-")
    set_phase(cluster, one["metadata"]["name"], "Failed")
    replaced = [p for p in active(cluster) if p["metadata"]["annotations"][COMPLETION_INDEX] == "1"]
    assert len(replaced) == 1 and replaced[0]["metadata"]["name"] != one["metadata"]["name"]


def test_a_pod_deleted_after_running_its_duration_counts_as_completed(env) -> None:
    cluster, _, clock = env
    cluster.create(node("n1"))
    job = workload("Job", "etl", completions=2)
    job["spec"]["template"]["metadata"]["annotations"] = {"kubesched.io/duration": "30s"}
    cluster.create(job)
    (first,) = active(cluster)
    bind(cluster, first)
    clock.advance(30)
    cluster.delete("Pod", "default", first["metadata"]["name"])
    (second,) = active(cluster)
    bind(cluster, second)
    clock.advance(5)  # preempted long before its 30s
    cluster.delete("Pod", "default", second["metadata"]["name"])
    status = cluster.get("Job", "default", "etl")["status"]
    assert (status["succeeded"], status["failed"]) == (1, 1)
    assert len(active(cluster)) == 1


def test_pods_carry_the_tracking_finalizer_until_counted(env) -> None:
    cluster, _, _ = env
    cluster.create(workload("Job", "etl", completions=1))
    (pod,) = active(cluster)
    assert pod["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]
    set_phase(cluster, pod["metadata"]["name"], "Succeeded")
    assert not cluster.get("Pod", "default", pod["metadata"]["name"])["metadata"].get("finalizers")
