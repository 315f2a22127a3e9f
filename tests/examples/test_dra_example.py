"""examples/dra: two GPU models behind DeviceClasses, a shared claim, an All claim, templates used by a
Deployment, a Job and a pod; every pod gets the devices it claims on the node it runs on.

What the example must come to is checked on upstream kube-scheduler v1.34 too (``-m controlplane``):
the same objects on the real control plane, with kube-controller-manager's workload and resourceclaim
controllers.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from kubesched.app.cli import main
from kubesched.scenario.manifests import load_manifests
from kubesched.sim.simulate import SimulationResult, simulate
from testing.controlplane.components import start_kube_controller_manager, start_kube_scheduler
from testing.controlplane.fixture import ControlPlane
from testing.differential.client import ApiError, Client

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "dra"
#: What each claim or template of the example asks for: (model, devices; None for all of a node's).
ASKS = {
    "notebook-gpu": ("a100", 1),
    "whole-t4-node": ("t4", None),
    "one-a100": ("a100", 1),
    "two-a100": ("a100", 2),
    "one-t4": ("t4", 1),
}
PODS = 9


def check_allocations(
    pods: Iterable[Mapping[str, Any]], claims: Mapping[str, Mapping[str, Any]], slices: Iterable[Mapping[str, Any]]
) -> None:
    """Every pod is bound and each of its claims holds what it asks for, on the pod's node, reserved for
    it; the notebooks share one claim; no device is in two claims. ``claims`` by name (one namespace)."""
    models = {
        (s["spec"]["pool"]["name"], d["name"]): d["attributes"]["model"]["string"]
        for s in slices
        for d in s["spec"]["devices"]
    }
    node_devices = Counter(pool for pool, _ in models)
    taken: dict[tuple[str, str], str] = {}
    sharers: dict[str, set[str]] = {}
    for pod in pods:
        name, node = pod["metadata"]["name"], pod["spec"].get("nodeName")
        assert node, f"pod {name} is not bound"
        statuses = {s["name"]: s["resourceClaimName"] for s in pod["status"].get("resourceClaimStatuses") or []}
        for entry in pod["spec"]["resourceClaims"]:
            source = entry.get("resourceClaimName") or entry["resourceClaimTemplateName"]
            claim = claims[entry.get("resourceClaimName") or statuses[entry["name"]]]
            devices = [(r["pool"], r["device"]) for r in claim["status"]["allocation"]["devices"]["results"]]
            model, count = ASKS[source]
            assert {pool for pool, _ in devices} == {node}, (name, devices)
            assert {models[d] for d in devices} == {model}, (name, devices)
            assert len(devices) == (node_devices[node] if count is None else count), (name, devices)
            assert name in {ref["name"] for ref in claim["status"]["reservedFor"]}
            sharers.setdefault(claim["metadata"]["name"], set()).add(name)
            for device in devices:
                assert taken.setdefault(device, claim["metadata"]["name"]) == claim["metadata"]["name"], device
    assert sharers["notebook-gpu"] == {"notebook-1", "notebook-2"}
    assert sum(len(s) for s in sharers.values()) == PODS  # one claim entry per pod, every pod seen


@pytest.fixture(scope="module")
def result() -> SimulationResult:
    return simulate([EXAMPLE], seed=0)


def test_the_example_loads(result: SimulationResult) -> None:
    """Every object passes the API server's validation, the workloads' pods included."""
    assert len(result.final) == PODS
    assert set(result.workloads.values()) == {"Deployment ml/inference", "Job ml/training"}


def test_every_pod_gets_the_devices_it_claims_on_its_node(result: SimulationResult) -> None:
    assert result.cluster is not None
    claims = {c["metadata"]["name"]: c for c in result.cluster.objects("ResourceClaim")}
    check_allocations(result.cluster.objects("Pod"), claims, result.cluster.objects("ResourceSlice"))


def test_simulate_schedules_the_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(EXAMPLE)]) == 0
    assert capsys.readouterr().out.startswith(f"Scheduled {PODS}/{PODS} pending pods")


# -- the same on upstream ---------------------------------------------------------------------------
CONTROLLERS = ("deployment-controller", "replicaset-controller", "job-controller", "resourceclaim-controller")


def _create(client: Client, obj: dict[str, Any]) -> None:
    body = {k: v for k, v in obj.items() if k != "status"}
    try:
        client.create(body)
    except ApiError as err:  # the namespace stays between the runs (deleting one takes a while)
        if not (obj["kind"] == "Namespace" and err.status == 409):
            raise
    if obj["kind"] == "Node":
        client.patch(
            "Node",
            obj["metadata"]["name"],
            {
                "status": {
                    **obj["status"],
                    "allocatable": obj["status"]["capacity"],
                    "conditions": [{"type": "Ready", "status": "True"}],
                }
            },
            subresource="status",
        )


def _bound(client: Client) -> list[dict[str, Any]]:
    return [p for p in client.list("Pod", "ml")[0] if p["spec"].get("nodeName")]


def _start_kubesched(plane: ControlPlane, work_dir: Path) -> subprocess.Popen:
    """``kubesched run`` as a user starts it, with the scheduler's credentials and no leader election."""
    config = work_dir / "kubesched-config.yaml"
    config.write_text(
        json.dumps(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "leaderElection": {"leaderElect": False},
            }
        )
    )
    log_path = work_dir / "kubesched.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kubesched",
                "run",
                "--kubeconfig",
                str(plane.scheduler_kubeconfig),
                "--config",
                str(config),
                "--secure-port",
                "0",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=dict(os.environ, PYTHONPATH=str(REPO)),
            cwd=REPO,
        )
    proc.log_path = log_path  # type: ignore[attr-defined]
    return proc


@pytest.mark.controlplane
@pytest.mark.parametrize("scheduler", ["kube-scheduler", "kubesched"])
def test_the_example_schedules_as_expected_on_the_control_plane(
    control_plane: ControlPlane, tmp_path: Path, scheduler: str
) -> None:
    """Upstream kube-controller-manager makes the template claims and runs the workloads; kube-scheduler
    v1.34, or ``kubesched run``, allocates the devices and binds every pod."""
    client = Client(control_plane.url, control_plane.admin_token, str(control_plane.ca_file))
    objects = [m.obj for m in load_manifests([EXAMPLE])]
    procs: list[subprocess.Popen] = []
    try:
        for obj in objects:
            _create(client, obj)
        procs.append(start_kube_controller_manager(control_plane, tmp_path, controllers=CONTROLLERS))
        if scheduler == "kubesched":
            procs.append(_start_kubesched(control_plane, tmp_path))
        else:
            procs.append(
                start_kube_scheduler(control_plane, tmp_path, config={"leaderElection": {"leaderElect": False}})
            )
        deadline = time.monotonic() + 120
        while len(_bound(client)) < PODS and time.monotonic() < deadline:
            time.sleep(0.5)
        log = procs[-1].log_path.read_text(errors="replace")  # type: ignore[attr-defined]
        assert len(_bound(client)) == PODS, log[-4000:]
        claims = {c["metadata"]["name"]: c for c in client.list("ResourceClaim", "ml")[0]}
        check_allocations(_bound(client), claims, client.list("ResourceSlice")[0])
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(30)
        for kind in ("Job", "Deployment", "ReplicaSet", "Pod", "ResourceClaim", "ResourceClaimTemplate"):
            for obj in client.list(kind, "ml")[0]:
                _delete(client, obj, "ml")
        for obj in objects:
            if obj["kind"] in ("Node", "DeviceClass", "ResourceSlice"):
                _delete(client, obj, None)


def _delete(client: Client, obj: Mapping[str, Any], namespace: str | None) -> None:
    kind, name = obj["kind"], obj["metadata"]["name"]
    with contextlib.suppress(ApiError):
        if obj["metadata"].get("finalizers"):
            client.patch(kind, name, {"metadata": {"finalizers": None}}, namespace)
        client.delete(kind, name, namespace)
    # A Job's deletion leaves the orphan finalizer for a garbage collector that does not run here.
    with contextlib.suppress(ApiError):
        client.patch(kind, name, {"metadata": {"finalizers": None}}, namespace)
