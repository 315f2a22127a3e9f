"""The worked examples of docs/plugins.md (examples/plugins/), run the way the guide runs them."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched import simulate
from kubesched.app.cli import main
from kubesched.cache.snapshot import NodeInfoList
from kubesched.config import load_config
from kubesched.config.features import feature_gates
from kubesched.scenario.pipeline import load_scenario
from kubesched.sim.simulate import Simulation
from tests.factories import make_node, make_pod, make_snapshot, node_dict, pod_dict

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "plugins"


@pytest.fixture(autouse=True)
def _examples_on_path() -> Iterator[None]:
    sys.path.insert(0, str(EXAMPLES))
    yield
    sys.path.remove(str(EXAMPLES))


def _config(*plugins: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    profile: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"enabled": [{"name": p} for p in plugins]}},
    }
    if args:
        profile["pluginConfig"] = [{"name": plugins[0], "args": args}]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [profile]}


def test_the_guide_scenario_runs_as_documented(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "simulate",
            str(EXAMPLES / "scenario.yaml"),
            "--config",
            str(EXAMPLES / "config-examples.yaml"),
            "--burst",
            "-v",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "default/new-trainer  -> gpu-b" in out  # packed next to the running trainer
    assert "default/web: 0/3 nodes are available: 1 node(s) are dedicated to another team" in out
    assert "Scheduled 5/6 pending pods" in out


# -- GPUBinPacking ------------------------------------------------------------------------------------
GPU = "nvidia.com/gpu"


def _gpu_pod(name: str, gpus: int, **kw: Any) -> dict[str, Any]:
    """A pod asking for GPUs (extended resources need their limit set, equal to the request)."""
    pod = pod_dict(name, requests={GPU: str(gpus)}, **kw)
    pod["spec"]["containers"][0]["resources"]["limits"] = {GPU: str(gpus)}
    return pod


def _gpu_nodes(used: list[int], total: int = 4) -> list[dict[str, Any]]:
    objs = []
    for i, n in enumerate(used):
        objs.append(node_dict(f"gpu-{i}", extra={GPU: str(total)}))
        if n:
            objs.append(_gpu_pod(f"load-{i}", n, node_name=f"gpu-{i}"))
    return objs


def test_gpu_pods_pack_onto_the_fullest_node_that_fits() -> None:
    pod = _gpu_pod("job", 1)
    result = simulate(
        [*_gpu_nodes([0, 3, 1]), node_dict("cpu-only"), pod], config=_config("gpu_binpack:GPUBinPacking"), record="full"
    )
    assert result.final == {"default/job": "gpu-1"}
    scores = result.attempts[0]["scores"]
    assert scores["gpu-1"]["GPUBinPacking"] == 100 and scores["gpu-0"]["GPUBinPacking"] == 25
    assert "cpu-only" in result.attempts[0]["filter"]  # no GPUs: NodeResourcesFit already said no


def test_pods_without_gpus_skip_the_plugin() -> None:
    result = simulate(
        [*_gpu_nodes([0, 1]), pod_dict("web", cpu="1")], config=_config("gpu_binpack:GPUBinPacking"), record="full"
    )
    assert all("GPUBinPacking" not in s for s in result.attempts[0]["scores"].values())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), min_size=1, max_size=12), st.integers(0, 4))
def test_gpu_batch_form_equals_the_per_node_form(nodes: list[tuple[int, int]], request: int) -> None:
    from gpu_binpack import GPUBinPacking

    plugin = GPUBinPacking(None, None)
    node_objs, pods = [], []
    for i, (total, used) in enumerate(nodes):
        node_objs.append(make_node(f"n{i}", extra={GPU: str(total)} if total else {}))
        if used and total:
            pods.append(make_pod(f"p{i}", requests={GPU: str(min(used, total))}, node_name=f"n{i}"))
    snapshot = make_snapshot(node_objs, pods)
    pod = make_pod("x", requests={GPU: str(request)} if request else {})
    infos = NodeInfoList(snapshot, np.arange(len(snapshot)))
    per_node = [plugin.score(None, pod, info)[0] for info in infos]
    assert plugin.score_nodes(None, pod, infos).tolist() == per_node


# -- DedicatedNodes -----------------------------------------------------------------------------------
def test_dedicated_nodes_reject_other_teams_and_registered_events_wake_them() -> None:
    cfg = load_config(_config("dedicated_filter:DedicatedNodes"))
    objs = [
        node_dict("data-1", labels={"dedicated": "data"}),
        pod_dict("web", labels={"team": "web"}),
        pod_dict("filler", node_name="data-1"),
    ]
    sim = Simulation(load_scenario(objs), cfg)
    sim.load()
    result = sim.run()
    assert result.final == {"default/web": None}
    assert "1 node(s) are dedicated to another team" in result.attempts[0]["message"]
    web = next(p for p in sim.scheduler.pods() if p.name == "web")
    # A pod deletion cannot help a DedicatedNodes rejection: the pod stays where it is.
    sim.cluster.delete("Pod", "default", "filler")
    sim.driver.settle()
    assert sim.scheduler.queue.queue_of(web.uid) == "unschedulable"
    assert sim.outcomes.count == 1
    # Relabelling the node is an event the plugin registered: the pod is retried and placed.
    node = sim.cluster.get("Node", None, "data-1")
    del node["metadata"]["labels"]["dedicated"]
    sim.cluster.update(node)
    sim.driver.settle()
    assert sim.result().final == {"default/web": "data-1"}


@pytest.mark.parametrize(("version", "retried"), [("1.30", True), ("1.34", False)])
def test_dedicated_nodes_hint_skips_a_node_relabelled_for_another_team(version: str, retried: bool) -> None:
    """The plugin's queueing hint (v1.34) lets only a node the pod may use wake it; v1.30 ignores
    hints and retries the pod on every registered event."""
    cfg = load_config(_config("dedicated_filter:DedicatedNodes"), features=feature_gates(version))
    objs = [node_dict("data-1", labels={"dedicated": "data"}), pod_dict("web", labels={"team": "web"})]
    sim = Simulation(load_scenario(objs), cfg)
    sim.load()
    sim.run()
    web = next(p for p in sim.scheduler.pods() if p.name == "web")
    node = sim.cluster.get("Node", None, "data-1")
    node["metadata"]["labels"]["dedicated"] = "ml"
    sim.cluster.update(node)
    sim.cluster.deliver_pending()
    assert sim.scheduler.queue.queue_of(web.uid) == ("backoff" if retried else "unschedulable")
    node = sim.cluster.get("Node", None, "data-1")
    node["metadata"]["labels"]["dedicated"] = "web"
    sim.cluster.update(node)
    sim.driver.settle()
    assert sim.result().final == {"default/web": "data-1"}


# -- BatchQuorum --------------------------------------------------------------------------------------
def _shards(n: int) -> list[dict[str, Any]]:
    return [pod_dict(f"shard-{i}", cpu="1", labels={"batch": "index"}) for i in range(n)]


def test_quorum_releases_the_batch_together() -> None:
    result = simulate(
        [node_dict("a"), *_shards(3)], config=_config("quorum_permit:BatchQuorum", args={"quorum": 3}), burst=True
    )
    assert all(result.final.values())
    assert result.virtual_seconds < 1


def test_quorum_not_reached_times_out_and_frees_the_nodes() -> None:
    result = simulate(
        [node_dict("a"), *_shards(2)],
        config=_config("quorum_permit:BatchQuorum", args={"quorum": 3, "timeoutSeconds": 5}),
        burst=True,
    )
    assert set(result.final.values()) == {None}
    assert any(
        "rejected due to timeout after waiting 5s at plugin BatchQuorum" in (r["message"] or "")
        for r in result.attempts
    )
    assert result.virtual_seconds >= 5
    assert not any(p["spec"].get("nodeName") for p in result.pods())
