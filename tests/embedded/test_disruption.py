"""The disruption controller emulation: PDB status from bound, matching, non-terminal pods."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.embedded.controlplane import ControlPlane
from kubesched.embedded.disruption import scaled_int_or_percent, update_pdb_status
from tests.embedded.conftest import pod


def pdb(name: str, namespace: str = "default", selector: Any = None, **spec: Any) -> dict:
    body: dict = dict(spec)
    if selector is not None:
        body["selector"] = selector
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": body,
    }


def labelled(name: str, app: str, node: str | None = "n1", phase: str | None = None, ns: str = "default") -> dict:
    p = pod(name, ns)
    p["metadata"]["labels"] = {"app": app}
    if node:
        p["spec"]["nodeName"] = node
    if phase:
        p["status"] = {"phase": phase}
    return p


WEB = {"matchLabels": {"app": "web"}}

ROWS: list[tuple[str, dict, tuple[int, int, int, int]]] = [
    # name, spec, (expected, healthy, desired, allowed) with 4 healthy web pods
    ("minAvailable int", {"minAvailable": 2}, (4, 4, 2, 2)),
    ("minAvailable above healthy", {"minAvailable": 5}, (4, 4, 5, 0)),
    ("minAvailable percent rounds up", {"minAvailable": "30%"}, (4, 4, 2, 2)),
    ("minAvailable 100%", {"minAvailable": "100%"}, (4, 4, 4, 0)),
    ("maxUnavailable int", {"maxUnavailable": 1}, (4, 4, 3, 1)),
    ("maxUnavailable above expected", {"maxUnavailable": 9}, (4, 4, 0, 4)),
    ("maxUnavailable percent rounds up", {"maxUnavailable": "30%"}, (4, 4, 2, 2)),
    ("maxUnavailable 0", {"maxUnavailable": 0}, (4, 4, 4, 0)),
    ("neither", {}, (4, 4, 0, 4)),
    ("bad percent", {"minAvailable": "half"}, (4, 4, 0, 0)),
]


@pytest.mark.parametrize(("name", "spec", "want"), ROWS, ids=[r[0] for r in ROWS])
def test_pdb_status(cluster: EmbeddedCluster, name: str, spec: dict, want: tuple[int, int, int, int]) -> None:
    for i in range(4):
        cluster.create(labelled(f"web-{i}", "web"))
    cluster.create(labelled("pending", "web", node=None))
    cluster.create(labelled("done", "web", phase="Succeeded"))
    cluster.create(labelled("failed", "web", phase="Failed"))
    cluster.create(labelled("db", "db"))
    cluster.create(labelled("elsewhere", "web", ns="other"))
    cluster.create(pdb("budget", selector=WEB, **spec))
    assert update_pdb_status(cluster) == 1
    status = cluster.get("PodDisruptionBudget", "default", "budget")["status"]
    got = (
        status["expectedPods"],
        status["currentHealthy"],
        status["desiredHealthy"],
        status["disruptionsAllowed"],
    )
    assert got == want
    assert status["observedGeneration"] == 1
    (cond,) = status["conditions"]
    assert cond["type"] == "DisruptionAllowed"
    assert cond["status"] == ("True" if want[3] > 0 else "False")


def test_pdb_status_recomputed_and_only_written_on_change(cluster: EmbeddedCluster) -> None:
    cluster.create(pdb("budget", selector=WEB, minAvailable=1))
    update_pdb_status(cluster)
    status = cluster.get("PodDisruptionBudget", "default", "budget")["status"]
    assert (status["expectedPods"], status["disruptionsAllowed"]) == (0, 0)
    assert update_pdb_status(cluster) == 0
    cluster.create(labelled("a", "web"))
    cluster.create(labelled("b", "web"))
    assert update_pdb_status(cluster) == 1
    status = cluster.get("PodDisruptionBudget", "default", "budget")["status"]
    assert (status["expectedPods"], status["disruptionsAllowed"]) == (2, 1)


@pytest.mark.parametrize(("selector", "healthy"), [(None, 0), ({}, 2), (WEB, 1)])
def test_selector_semantics(cluster: EmbeddedCluster, selector: Any, healthy: int) -> None:
    cluster.create(labelled("a", "web"))
    cluster.create(labelled("b", "db"))
    cluster.create(pdb("budget", selector=selector, maxUnavailable=0))
    if selector is None:
        obj = cluster.get("PodDisruptionBudget", "default", "budget")
        obj["spec"].pop("selector", None)
        cluster.update(obj)
    update_pdb_status(cluster)
    assert cluster.get("PodDisruptionBudget", "default", "budget")["status"]["currentHealthy"] == healthy


def test_user_provided_status_is_kept(cluster: EmbeddedCluster) -> None:
    pinned = pdb("budget", selector=WEB, minAvailable=0)
    pinned["status"] = {"disruptionsAllowed": 0, "currentHealthy": 9, "desiredHealthy": 9, "expectedPods": 9}
    cluster.create(labelled("a", "web"))
    cluster.create(pinned)
    assert update_pdb_status(cluster) == 0
    assert cluster.get("PodDisruptionBudget", "default", "budget")["status"]["currentHealthy"] == 9


@pytest.mark.parametrize(
    ("value", "total", "round_up", "want"),
    [(3, 10, True, 3), ("50%", 5, True, 3), ("50%", 5, False, 2), ("0%", 7, True, 0), ("100%", 7, True, 7)],
)
def test_scaled_int_or_percent(value: Any, total: int, round_up: bool, want: int) -> None:
    assert scaled_int_or_percent(value, total, round_up=round_up) == want


@pytest.mark.parametrize("value", ["3", "x%", True, None])
def test_scaled_int_or_percent_rejects(value: Any) -> None:
    with pytest.raises(ValueError):
        scaled_int_or_percent(value, 10, round_up=True)


def test_disruption_controller_follows_watch_events() -> None:
    plane = ControlPlane()
    plane.start()
    cluster = plane.cluster
    cluster.create(pdb("budget", selector=WEB, minAvailable=1))
    cluster.deliver_pending()
    assert cluster.get("PodDisruptionBudget", "default", "budget")["status"]["expectedPods"] == 0
    cluster.create(labelled("w1", "web"))
    cluster.create(labelled("w2", "web"))
    cluster.deliver_pending()
    status = cluster.get("PodDisruptionBudget", "default", "budget")["status"]
    assert (status["expectedPods"], status["disruptionsAllowed"]) == (2, 1)
    cluster.delete("Pod", "default", "w1")
    cluster.deliver_pending()
    status = cluster.get("PodDisruptionBudget", "default", "budget")["status"]
    assert (status["expectedPods"], status["disruptionsAllowed"]) == (1, 0)


def test_disruption_controller_follows_pods_across_budgets() -> None:
    """A relabelled pod leaves the budget that selected it and joins the one that now does; binding
    and finishing count too, while updates that change none of these leave every budget alone."""
    plane = ControlPlane()
    plane.start()
    cluster = plane.cluster
    cluster.create(pdb("web", selector=WEB, minAvailable=0))
    cluster.create(pdb("db", selector={"matchLabels": {"app": "db"}}, minAvailable=0))
    cluster.create(labelled("p", "web", node=None))
    cluster.deliver_pending()

    def healthy() -> tuple[int, int]:
        return tuple(
            cluster.get("PodDisruptionBudget", "default", b)["status"]["currentHealthy"] for b in ("web", "db")
        )

    assert healthy() == (0, 0)
    cluster.bind("default", "p", "n1")
    cluster.deliver_pending()
    assert healthy() == (1, 0)
    versions = [cluster.get("PodDisruptionBudget", "default", b)["metadata"]["resourceVersion"] for b in ("web", "db")]
    cluster.patch_pod_status("default", "p", conditions=[{"type": "Ready", "status": "True"}])
    cluster.deliver_pending()
    assert [
        cluster.get("PodDisruptionBudget", "default", b)["metadata"]["resourceVersion"] for b in ("web", "db")
    ] == versions
    moved = cluster.get("Pod", "default", "p")
    moved["metadata"]["labels"] = {"app": "db"}
    cluster.update(moved)
    cluster.deliver_pending()
    assert healthy() == (0, 1)
    done = cluster.get("Pod", "default", "p")
    done["status"]["phase"] = "Succeeded"
    cluster.update(done)
    cluster.deliver_pending()
    assert healthy() == (0, 0)
