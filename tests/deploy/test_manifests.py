"""deploy/kubesched.yaml: what the Deployment promises (three replicas electing a leader on a Lease of
their own, probes on the endpoints kubesched serves, requests, a budget, the configuration mounted so
that a ConfigMap edit reaches the file), the configuration loads, a real API server accepts every
object, and an edit of the ConfigMap is applied by the running scheduler."""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from kubesched.config import load_config
from testing.controlplane.fixture import ControlPlane, free_port
from tests.deploy.kubelet import project
from tests.live.conftest import Live, pod
from tests.live.test_reload import NODES, PREFERS_ZONE_A, Served

MANIFEST = Path(__file__).resolve().parents[2] / "deploy" / "kubesched.yaml"


def documents() -> list[dict]:
    return [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]


def one(kind: str) -> dict:
    [doc] = [d for d in documents() if d["kind"] == kind]
    return doc


def container() -> dict:
    containers: list[dict] = one("Deployment")["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def flag(name: str) -> str:
    [value] = [a.split("=", 1)[1] for a in container()["args"] if a.startswith(f"--{name}=")]
    return value


def shipped_config() -> Any:
    config_map = one("ConfigMap")
    key = PurePosixPath(flag("config")).name
    return load_config(yaml.safe_load(config_map["data"][key]))


def test_three_replicas_elect_a_leader_on_a_lease_of_their_own() -> None:
    config = shipped_config()
    assert [p.scheduler_name for p in config.profiles] == ["kubesched"]
    election = config.leader_election
    assert election.leader_elect
    # Beside kube-scheduler: its Lease (kube-system/kube-scheduler) would make the two take turns.
    assert (election.resource_namespace, election.resource_name) == ("kube-system", "kubesched")
    assert one("Deployment")["spec"]["replicas"] == 3


def test_probes_are_the_endpoints_kubesched_serves_on_its_secure_port() -> None:
    c = container()
    port = int(flag("secure-port"))
    assert (c["livenessProbe"]["httpGet"]["path"], c["readinessProbe"]["httpGet"]["path"]) == ("/livez", "/readyz")
    for probe in (c["livenessProbe"], c["readinessProbe"]):
        assert (probe["httpGet"]["port"], probe["httpGet"]["scheme"]) == (port, "HTTPS")
    assert {p["containerPort"] for p in c["ports"]} == {port}


def test_requests_and_a_budget_that_keeps_two_of_three() -> None:
    assert set(container()["resources"]["requests"]) == {"cpu", "memory"}
    budget = one("PodDisruptionBudget")
    deployment = one("Deployment")
    assert budget["metadata"]["namespace"] == deployment["metadata"]["namespace"]
    assert budget["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert budget["spec"]["maxUnavailable"] == 1


def test_the_configuration_is_a_directory_mount_so_configmap_edits_reach_the_file() -> None:
    spec = one("Deployment")["spec"]["template"]["spec"]
    config_path = PurePosixPath(flag("config"))
    config_map = one("ConfigMap")["metadata"]["name"]
    [volume] = [v for v in spec["volumes"] if v.get("configMap", {}).get("name") == config_map]
    [mount] = [m for m in container()["volumeMounts"] if m["name"] == volume["name"]]
    assert "subPath" not in mount  # a subPath mount is a copy the kubelet never updates
    assert config_path.parent == PurePosixPath(mount["mountPath"])
    assert "items" not in volume["configMap"]  # every key, as a file named after it


def test_rbac_is_kube_schedulers_own_plus_its_lease() -> None:
    account = one("ServiceAccount")["metadata"]
    assert one("Deployment")["spec"]["template"]["spec"]["serviceAccountName"] == account["name"]
    bound = {}
    for doc in documents():
        if doc["kind"] in ("ClusterRoleBinding", "RoleBinding"):
            assert doc["subjects"] == [
                {"kind": "ServiceAccount", "name": account["name"], "namespace": account["namespace"]}
            ]
            bound[doc["roleRef"]["name"]] = doc["roleRef"]["kind"]
    role = one("Role")
    assert bound == {
        "system:kube-scheduler": "ClusterRole",
        "system:volume-scheduler": "ClusterRole",
        role["metadata"]["name"]: "Role",
    }
    election = shipped_config().leader_election
    assert role["metadata"]["namespace"] == election.resource_namespace
    assert role["rules"] == [
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "resourceNames": [election.resource_name],
            "verbs": ["get", "update"],
        }
    ]


@pytest.mark.controlplane
def test_a_real_api_server_accepts_the_manifests(control_plane: ControlPlane) -> None:
    proc = control_plane.kubectl("apply", "--server-side", "--dry-run=server", "-f", str(MANIFEST))
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == len(documents())
    assert all(line.endswith("(server dry run)") for line in lines), lines


@pytest.mark.controlplane
def test_an_edit_of_the_configmap_is_applied_by_the_running_replica(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    """The manifest applied, kubesched run as its ServiceAccount with the container's own flags and the
    ConfigMap projected into a folder as the kubelet projects it: an edit of the ConfigMap through the API
    reaches the file by the kubelet's link swap, and the leader applies it without a restart."""
    live = Live(control_plane, tmp_path)
    live.reset()
    live.kubectl("apply", "--server-side", "-f", str(MANIFEST))
    try:
        name = one("ConfigMap")["metadata"]["name"]
        folder = tmp_path / "etc-kubesched"

        def kubelet_sync() -> None:
            config_map = live.get("configmap", name, namespace="kube-system")
            project(folder, config_map["data"])

        kubelet_sync()
        port = free_port()
        mount = str(PurePosixPath(flag("config")).parent)
        args = [a.replace(mount, str(folder)) for a in container()["args"] if a != "run"]
        live.start_scheduler(
            *args,
            "--plain-http",
            f"--secure-port={port}",
            "--bind-address=127.0.0.1",
            kubeconfig=control_plane.service_account_kubeconfig("kube-system", "kubesched"),
        )
        served = Served(port)
        live.apply(*NODES)
        live.apply(pod("before", schedulerName="kubesched", **PREFERS_ZONE_A))
        assert live.wait_bound("before") == {"before": "n2"}
        holder = live.get("lease", "kubesched", namespace="kube-system")["spec"]["holderIdentity"]

        config = yaml.safe_load(one("ConfigMap")["data"]["config.yaml"])
        config["profiles"][0]["plugins"] = {"score": {"enabled": [{"name": "NodeAffinity", "weight": 5}]}}
        live.kubectl(
            "patch",
            "configmap",
            name,
            "-n",
            "kube-system",
            "--type=merge",
            "-p",
            json.dumps({"data": {"config.yaml": yaml.safe_dump(config)}}),
        )
        kubelet_sync()
        live.wait(lambda: served.reloads("success") == 1, 30, "the edited ConfigMap to be applied")
        live.apply(pod("after", schedulerName="kubesched", **PREFERS_ZONE_A))
        assert live.wait_bound("after") == {"after": "n1"}
        assert live.get("lease", "kubesched", namespace="kube-system")["spec"]["holderIdentity"] == holder
    finally:
        live.stop()
        live.kubectl("delete", "-f", str(MANIFEST), "--ignore-not-found", "--wait=false", check=False)
        live.kubectl("delete", "lease", "kubesched", "-n", "kube-system", "--ignore-not-found", check=False)
