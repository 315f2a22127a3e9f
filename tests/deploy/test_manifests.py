"""deploy/kubesched.yaml: the configuration it ships loads, and a real API server accepts every object."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubesched.config import load_config

MANIFEST = Path(__file__).resolve().parents[2] / "deploy" / "kubesched.yaml"


def documents() -> list[dict]:
    return [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]


def test_the_shipped_configuration_is_a_kubesched_profile_with_leader_election() -> None:
    [config_map] = [d for d in documents() if d["kind"] == "ConfigMap"]
    config = load_config(yaml.safe_load(config_map["data"]["config.yaml"]))
    assert [p.scheduler_name for p in config.profiles] == ["kubesched"]
    assert config.leader_election.leader_elect
    [deployment] = [d for d in documents() if d["kind"] == "Deployment"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert (container["livenessProbe"]["httpGet"]["path"], container["readinessProbe"]["httpGet"]["path"]) == \
        ("/healthz", "/readyz")
    bound = {d["roleRef"]["name"] for d in documents() if d["kind"] == "ClusterRoleBinding"}
    assert bound == {"system:kube-scheduler", "system:volume-scheduler"}


@pytest.mark.controlplane
def test_a_real_api_server_accepts_the_manifests(control_plane) -> None:  # type: ignore[no-untyped-def]
    proc = control_plane.kubectl("apply", "--dry-run=server", "-f", str(MANIFEST))
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == len(documents())
    assert all(line.endswith("(server dry run)") for line in lines), lines
