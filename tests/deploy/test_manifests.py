"""deploy/kubesched.yaml: what the Deployment promises (three replicas electing a leader on a Lease of
their own, probes on the endpoints kubesched serves, requests, a budget, the configuration mounted so
that a ConfigMap edit reaches the file), the configuration loads, and a real API server accepts every
object."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from kubesched.config import load_config
from testing.controlplane.fixture import ControlPlane

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
            assert doc["subjects"] == [{"kind": "ServiceAccount", "name": account["name"],
                                        "namespace": account["namespace"]}]
            bound[doc["roleRef"]["name"]] = doc["roleRef"]["kind"]
    role = one("Role")
    assert bound == {"system:kube-scheduler": "ClusterRole", "system:volume-scheduler": "ClusterRole",
                     role["metadata"]["name"]: "Role"}
    election = shipped_config().leader_election
    assert role["metadata"]["namespace"] == election.resource_namespace
    assert role["rules"] == [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                              "resourceNames": [election.resource_name], "verbs": ["get", "update"]}]


@pytest.mark.controlplane
def test_a_real_api_server_accepts_the_manifests(control_plane: ControlPlane) -> None:
    proc = control_plane.kubectl("apply", "--server-side", "--dry-run=server", "-f", str(MANIFEST))
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == len(documents())
    assert all(line.endswith("(server dry run)") for line in lines), lines
