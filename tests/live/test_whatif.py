"""What-if against the reference kube-apiserver, as a ServiceAccount bound to deploy/whatif-rbac.yaml's
ClusterRole and nothing else: simulate, capacity, plan and explain read the cluster and never write it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kubesched.app.cli import main
from testing.controlplane.fixture import write_kubeconfig
from tests.live.conftest import REPO, Live, node, pod

pytestmark = pytest.mark.controlplane

ROLE = REPO / "deploy" / "whatif-rbac.yaml"
ACCOUNT = "whatif-reader"


@pytest.fixture
def reader(live: Live, tmp_path: Path) -> Iterator[Path]:
    """A kubeconfig of a ServiceAccount bound to the what-if ClusterRole only, over a small cluster:
    node wa (2 cpu, 1.5 taken by a bound pod), node wb (4 cpu), and two pending pods, one of which
    no node can take."""
    live.kubectl("apply", "-f", str(ROLE))
    live.kubectl("create", "serviceaccount", ACCOUNT, "-n", "default")
    live.kubectl(
        "create", "clusterrolebinding", ACCOUNT, "--clusterrole=kubesched-whatif", f"--serviceaccount=default:{ACCOUNT}"
    )
    token = live.kubectl("create", "token", ACCOUNT, "-n", "default").stdout.strip()
    live.apply(
        node("wa", cpu="2"),
        node("wb", cpu="4"),
        pod("w-running", cpu="1500m", nodeName="wa"),
        pod("w-fits", cpu="1"),
        pod("w-huge", cpu="8"),
    )
    try:
        yield write_kubeconfig(tmp_path / "reader.kubeconfig", live.plane.url, ACCOUNT, token, live.plane.ca_file)
    finally:
        live.kubectl("delete", "clusterrolebinding", ACCOUNT, "--ignore-not-found", check=False)
        live.kubectl("delete", "serviceaccount", ACCOUNT, "-n", "default", "--ignore-not-found", check=False)
        live.kubectl("delete", "-f", str(ROLE), "--ignore-not-found", check=False)


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(argv) == 0, capsys.readouterr().err
    document: dict = json.loads(capsys.readouterr().out)
    return document


def test_the_what_if_commands_read_the_cluster_with_the_role_alone(
    live: Live, reader: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = ["--kubeconfig", str(reader), "--tie-break", "name", "-o", "json"]
    simulated = _json(["simulate", *flags], capsys)
    where = {p["pod"]: p["node"] for p in simulated["pods"]}
    assert where == {"default/w-fits": "wb", "default/w-huge": None}

    template = tmp_path / "replica.yaml"
    template.write_text(yaml.safe_dump(pod("replica", cpu="1")))
    fits = _json(["capacity", *flags, "--pod", str(template)], capsys)
    assert fits["replicas"] == 3 and fits["placements"] == {"wb": 3}  # wa has 0.5 cpu free, wb 3 after w-fits

    big = tmp_path / "big-node.yaml"
    big.write_text(yaml.safe_dump(node("big", cpu="16")))
    planned = _json(["plan", *flags, "--node-template", str(big)], capsys)
    assert planned == {"nodesToAdd": 1, "scheduled": 2, "pending": []}

    explained = _json(["explain", *flags], capsys)
    assert explained["pending"] == 1 and explained["source"].startswith("cluster https://127.0.0.1:")
    [group] = explained["groups"]
    assert group["pods"] == ["default/w-huge"] and group["causes"][0]["reason"] == "Insufficient cpu"
    helping = {r["kind"]: r for r in group["remedies"] if r["helps"]}
    # 8 cpu is more than a whole node of the cluster: no node like them helps, wb grown by 5 cpu does.
    assert "addNodes" not in helping
    assert (helping["closestNode"]["node"], helping["closestNode"]["short"]) == ("wb", {"cpu": "5000m"})

    # The role allows nothing but reading, and nothing was written: the pending pods are still pending.
    denied = live.kubectl("create", "-f", "-", "--kubeconfig", str(reader), input=yaml.safe_dump(pod("x")), check=False)
    assert denied.returncode != 0 and "forbidden" in denied.stderr
    assert live.node_of("w-fits") is None and live.node_of("w-huge") is None
