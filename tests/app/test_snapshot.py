"""Snapshots: a cluster's scheduling state written as manifests that simulate reads back."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from kubesched import simulate
from kubesched.app.cli import main
from kubesched.app.snapshot import write_snapshot
from kubesched.cluster.kinds import kind_info
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.scenario.live import SNAPSHOT_FILES, clean, take_snapshot

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def simulated():
    return simulate([REPO / "examples" / "cluster"], tie_break="name")


def test_server_managed_fields_are_removed_and_what_matters_kept() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "namespace": "a",
            "uid": "u",
            "resourceVersion": "7",
            "generation": 1,
            "managedFields": [{}],
            "creationTimestamp": "2024-01-01T00:00:00Z",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "keep": "me"},
        },
        "spec": {"nodeName": "n1", "containers": []},
        "status": {
            "phase": "Running",
            "startTime": "2024-01-01T00:00:01Z",
            "podIP": "10.0.0.1",
            "conditions": [{"type": "Ready"}],
        },
    }
    out = clean(pod)
    assert out is not None
    assert out["metadata"] == {
        "name": "p",
        "namespace": "a",
        "creationTimestamp": "2024-01-01T00:00:00Z",
        "annotations": {"keep": "me"},
    }
    assert out["status"] == {"phase": "Running", "startTime": "2024-01-01T00:00:01Z"}
    assert clean({**pod, "status": {"phase": "Succeeded"}}) is None
    pending = clean({**pod, "spec": {"containers": []}, "status": {"phase": "Pending", "conditions": []}})
    assert pending is not None and "status" not in pending
    node = clean(
        {
            "kind": "Node",
            "metadata": {"name": "n"},
            "status": {"allocatable": {"cpu": "1"}, "capacity": {"cpu": "1"}, "conditions": [], "nodeInfo": {}},
        }
    )
    assert node is not None and node["status"] == {"allocatable": {"cpu": "1"}, "capacity": {"cpu": "1"}}
    pv = clean(
        {
            "kind": "PersistentVolume",
            "metadata": {"name": "v"},
            "status": {"phase": "Bound"},
            "spec": {"claimRef": {"name": "c", "namespace": "a", "uid": "old", "resourceVersion": "3"}},
        }
    )
    assert pv is not None and pv["spec"]["claimRef"] == {"name": "c", "namespace": "a"}
    assert clean({"kind": "PriorityClass", "metadata": {"name": "system-node-critical"}, "value": 1}) is None


def test_dra_objects_keep_what_allocation_reads() -> None:
    """A claim keeps its allocation (the devices it holds), not its reservations (pod uids that a loaded
    scenario does not keep); a pod keeps the names of the claims made for it from templates, bound or not."""
    allocation = {"devices": {"results": [{"request": "r", "driver": "d", "pool": "p", "device": "g0"}]}}
    claim = clean(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "a", "uid": "u"},
            "spec": {"devices": {}},
            "status": {"allocation": allocation, "reservedFor": [{"resource": "pods", "name": "p", "uid": "old"}]},
        }
    )
    assert claim is not None and claim["status"] == {"allocation": allocation}
    pending = clean(
        {
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "a"},
            "spec": {"containers": []},
            "status": {"phase": "Pending", "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x"}]},
        }
    )
    assert pending is not None
    assert pending["status"] == {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x"}]}


def test_a_snapshot_of_a_simulated_cluster_simulates_to_the_same_placement(simulated, tmp_path: Path) -> None:
    counts = write_snapshot(simulated.cluster, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(name for name, _ in SNAPSHOT_FILES)
    assert counts["Node"] == 12 and counts["PersistentVolumeClaim"] == 3
    pods = list(yaml.safe_load_all((tmp_path / "60-pods.yaml").read_text()))
    assert all("uid" not in p["metadata"] and "resourceVersion" not in p["metadata"] for p in pods)
    again = simulate([tmp_path])
    # Every bound pod is existing load now; the ones the first run left pending are pending again.
    before = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in simulated.pods()}
    after = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in again.pods()}
    assert {k: v for k, v in after.items() if before.get(k)} == {k: v for k, v in before.items() if v}
    still_pending = sorted(k.split("/", 1)[1] for k, v in again.final.items() if v is None)
    assert still_pending == sorted(
        k.split("/", 1)[1] for k, v in simulated.final.items() if v is None and k not in simulated.deleted
    )


def test_take_snapshot_reads_any_lister(simulated) -> None:
    snapshot = take_snapshot(simulated.cluster, kinds=["Namespace"])
    assert list(snapshot) == ["Namespace"]
    assert {"web", "batch", "ml", "monitoring", "payments"} <= {n["metadata"]["name"] for n in snapshot["Namespace"]}


class _FakeApiServer(BaseHTTPRequestHandler):
    """Serves list responses, as the API server shapes them, for the paths of the snapshot's kinds from one
    simulated cluster; ``failing`` answers one path with 403."""

    cluster: EmbeddedCluster
    paths = {
        "/api/v1/namespaces": "Namespace",
        "/api/v1/nodes": "Node",
        "/api/v1/pods": "Pod",
        "/api/v1/persistentvolumes": "PersistentVolume",
        "/api/v1/persistentvolumeclaims": "PersistentVolumeClaim",
        "/apis/scheduling.k8s.io/v1/priorityclasses": "PriorityClass",
        "/apis/storage.k8s.io/v1/storageclasses": "StorageClass",
        "/apis/storage.k8s.io/v1/csinodes": "CSINode",
        "/apis/policy/v1/poddisruptionbudgets": "PodDisruptionBudget",
        "/apis/resource.k8s.io/v1/deviceclasses": "DeviceClass",
        "/apis/resource.k8s.io/v1/resourceslices": "ResourceSlice",
        "/apis/resource.k8s.io/v1/resourceclaimtemplates": "ResourceClaimTemplate",
        "/apis/resource.k8s.io/v1/resourceclaims": "ResourceClaim",
    }
    seen: list[str] = []
    failing = ""
    #: Paths answered 404, as by an API server that does not serve their group version.
    absent: frozenset[str] = frozenset()

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        kind = None if path in self.absent else self.paths.get(path)
        self.seen.append(path)
        if kind is None or path == self.failing:
            self.send_response(404 if kind is None else 403)
            self.end_headers()
            if kind is not None:
                self.wfile.write(
                    json.dumps({"kind": "Status", "reason": "Forbidden", "message": f"{path} is forbidden"}).encode()
                )
            return
        items, rv = self.cluster.list(kind)
        body = json.dumps(
            {
                "kind": f"{kind}List",
                "apiVersion": kind_info(kind).preferred_api_version,
                "metadata": {"resourceVersion": rv},
                "items": [{k: v for k, v in i.items() if k not in ("kind", "apiVersion")} for i in items],
            }
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def kubeconfig(simulated, tmp_path: Path) -> Iterator[Path]:
    assert simulated.cluster is not None
    _FakeApiServer.cluster = simulated.cluster
    _FakeApiServer.seen = []
    _FakeApiServer.failing = ""
    _FakeApiServer.absent = frozenset()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeApiServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "test",
        "clusters": [{"name": "test", "cluster": {"server": f"http://127.0.0.1:{server.server_port}"}}],
        "users": [{"name": "test", "user": {"token": "t"}}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    yield path
    server.shutdown()


def test_snapshot_command(kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "snap"
    assert main(["snapshot", "--kubeconfig", str(kubeconfig), "-o", str(out_dir)]) == 0
    assert capsys.readouterr().out.startswith(f"Snapshot written to {out_dir}: ")
    assert set(_FakeApiServer.seen) == set(_FakeApiServer.paths)
    assert simulate([out_dir]).final is not None
    # What was written is what the same cluster's snapshot holds when read in process.
    written = [d for name, _ in SNAPSHOT_FILES for d in yaml.safe_load_all((out_dir / name).read_text()) if d]
    direct = [obj for objects in take_snapshot(_FakeApiServer.cluster).values() for obj in objects]

    def canonical(objects: list[dict]) -> list[str]:
        return sorted(json.dumps(obj, sort_keys=True) for obj in objects)

    assert canonical(written) == canonical(direct)


def test_snapshot_reads_the_kubeconfig_that_kubectl_would(
    kubeconfig: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}:{kubeconfig}")
    assert main(["snapshot", "-o", str(tmp_path / "snap")]) == 0
    assert capsys.readouterr().out.startswith("Snapshot written to ")


def test_a_kind_the_credentials_may_not_list_is_one_error_line(
    kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _FakeApiServer.failing = "/apis/policy/v1/poddisruptionbudgets"
    assert main(["snapshot", "--kubeconfig", str(kubeconfig), "-o", str(tmp_path / "snap")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kubesched: error: http://127.0.0.1:") and err.count("\n") == 1
    assert "Forbidden: /apis/policy/v1/poddisruptionbudgets is forbidden" in err


def test_a_cluster_without_dra_is_snapshot_without_dra_objects(
    kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before Kubernetes 1.34 resource.k8s.io/v1 is not served (404): the snapshot has no DRA objects."""
    _FakeApiServer.absent = frozenset(p for p in _FakeApiServer.paths if "/resource.k8s.io/" in p)
    assert main(["snapshot", "--kubeconfig", str(kubeconfig), "-o", str(tmp_path / "snap")]) == 0
    summary = capsys.readouterr().out
    assert "Node" in summary and "DeviceClass" not in summary


def test_snapshot_command_reports_an_unreachable_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "kubeconfig"
    bad.write_text("apiVersion: v1\nkind: Config\nclusters: []\n")
    assert main(["snapshot", "--kubeconfig", str(bad), "-o", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err.startswith(f"kubesched: error: {bad}: ")
