"""``kubesched snapshot`` against the reference kube-apiserver: what it writes, and that simulate reads it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched import simulate
from kubesched.app.cli import main
from tests.live.conftest import Live, node

pytestmark = pytest.mark.controlplane


def _pod(name: str, cpu: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "snap"}},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}},
                }
            ],
            **spec,
        },
    }


def test_snapshot_of_the_reference_api_server_simulates(
    live: Live, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    objects = [
        node("snap-a", cpu="2", memory="8Gi"),
        node("snap-b", cpu="4", memory="8Gi"),
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "snap-high"},
            "value": 1000,
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "snap-local"},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "snap-data", "namespace": "default"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "snap-local",
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "snap-pdb", "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "snap"}}},
        },
        _pod("snap-running", "1500m", nodeName="snap-a"),
        _pod("snap-pending", "1", priorityClassName="snap-high"),
    ]
    live.apply(*objects)
    try:
        out = tmp_path / "snap"
        assert main(["snapshot", "--kubeconfig", str(live.plane.admin_kubeconfig), "-o", str(out)]) == 0
        assert capsys.readouterr().out.startswith(f"Snapshot written to {out}: ")
        docs = [d for f in sorted(out.iterdir()) for d in yaml.safe_load_all(f.read_text()) if d]
        assert {
            "Namespace",
            "Node",
            "Pod",
            "PriorityClass",
            "StorageClass",
            "PersistentVolumeClaim",
            "PodDisruptionBudget",
        } <= {d["kind"] for d in docs}
        for d in docs:
            assert not {"uid", "resourceVersion", "managedFields", "selfLink"} & set(d["metadata"])
        names = {(d["kind"], d["metadata"]["name"]) for d in docs}
        assert ("PriorityClass", "system-node-critical") not in names
        assert ("PriorityClass", "snap-high") in names
        result = simulate([out], tie_break="name")
        assert result.final == {"default/snap-pending": "snap-b"}  # snap-a has 0.5 cpu left
        running = next(p for p in result.pods() if p["metadata"]["name"] == "snap-running")
        assert running["spec"]["nodeName"] == "snap-a"
    finally:
        live.kubectl("delete", "-f", "-", "--wait=false", input=yaml.safe_dump_all(objects[2:6]), check=False)
