"""Scheduling never reads the cluster: filters, scores, preemption (PDBs, the latest preemptor) and binding
read the cache and the listers, as kube-scheduler reads its informers. Against a live API server every
such read would be a GET or LIST in the hot path."""

from __future__ import annotations

from typing import Any

from tests.factories import node_dict, pod_dict
from tests.fakeplugins import Harness


def test_preemption_and_binding_make_no_get_or_list() -> None:
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "pdb", "namespace": "default"},
        "spec": {"minAvailable": 0, "selector": {"matchLabels": {"app": "low"}}},
    }
    h = Harness(
        objects=[
            node_dict("n1", cpu="2"),
            high,
            pdb,
            pod_dict("victim", cpu="1500m", node_name="n1", labels={"app": "low"}),
        ]
    )
    reads: list[tuple[str, Any]] = []

    def forbid(name: str) -> Any:
        def read(*args: Any, **kwargs: Any) -> Any:
            reads.append((name, args))
            raise AssertionError(f"live {name}{args} during scheduling")

        return read

    h.cluster.get = forbid("get")  # type: ignore[method-assign]
    h.cluster.list = forbid("list")  # type: ignore[method-assign]
    preemptor = pod_dict("preemptor", cpu="1500m", spec={"priorityClassName": "high"})
    del preemptor["spec"]["priority"]  # admission fills it in from the class
    h.create(preemptor)
    for _ in range(5):
        h.run()
        h.clock.advance(2)
        h.scheduler.run_periodic()  # backoff and unschedulable flushes
        h.settle()
    assert reads == []
    del h.cluster.get, h.cluster.list  # reads allowed again, for the checks
    pods = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in h.cluster.list("Pod")[0]}
    assert pods == {"preemptor": "n1"}
