"""A live cluster as a scenario: read once through the REST client, fed to the one pipeline, needing list only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kubesched.app.cli import main
from kubesched.cluster.kinds import kind_info
from kubesched.scenario.live import LIVE_KINDS, LiveSource
from kubesched.scenario.pipeline import load_scenario
from tests.app.test_snapshot import _FakeApiServer, simulated  # noqa: F401  (fixtures)
from tests.app.test_snapshot import kubeconfig as snapshot_kubeconfig  # noqa: F401

REPO = Path(__file__).resolve().parents[2]


class _WithServices(_FakeApiServer):
    paths = {**_FakeApiServer.paths, "/api/v1/services": "Service"}


@pytest.fixture
def kubeconfig(snapshot_kubeconfig: Path) -> Iterator[Path]:  # noqa: F811
    pytest.importorskip("kubernetes")  # the live extra's client (the core's tests run without it too)
    _FakeApiServer.paths = _WithServices.paths
    try:
        yield snapshot_kubeconfig
    finally:
        _FakeApiServer.paths = {k: v for k, v in _WithServices.paths.items() if v != "Service"}


def test_the_role_shipped_grants_list_on_exactly_the_kinds_read() -> None:
    [role] = [d for d in yaml.safe_load_all((REPO / "deploy" / "whatif-rbac.yaml").read_text()) if d]
    granted = {
        (group, resource)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        if rule["verbs"] == ["list"]
    }
    read = set()
    for kind in LIVE_KINDS:
        version = kind_info(kind).preferred_api_version
        read.add((version.rpartition("/")[0] if "/" in version else "", kind_info(kind).resource))
    assert granted == read


def test_a_live_source_reads_each_kind_once_and_passes_the_pipeline(kubeconfig: Path) -> None:
    source = LiveSource(kubeconfig=str(kubeconfig))
    scenario = load_scenario([source])
    assert source.name.startswith("cluster http://127.0.0.1:")
    assert sorted(_FakeApiServer.seen) == sorted(set(_FakeApiServer.seen))  # one list per kind (one page each)
    assert len(_FakeApiServer.seen) == len(LIVE_KINDS)
    kinds = {m.kind for m in scenario.manifests}
    assert {"Node", "Pod", "Namespace", "PersistentVolumeClaim"} <= kinds
    assert all(m.source == source.name for m in scenario.manifests)
    load_scenario([source])  # read once: a second load asks the cluster nothing
    assert len(_FakeApiServer.seen) == len(LIVE_KINDS)


def test_simulate_reads_a_live_cluster_and_adds_files_to_it(
    kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "added"},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            }
        )
    )
    assert main(["simulate", "--kubeconfig", str(kubeconfig), str(extra), "-o", "json", "--tie-break", "name"]) == 0
    document = json.loads(capsys.readouterr().out)
    pods = {p["pod"]: p for p in document["pods"]}
    assert pods["default/added"]["node"]


def test_without_a_scenario_or_a_cluster_the_command_says_what_to_give(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate"]) == 2
    assert (
        "no scenario: give manifest files or folders (SCENARIO...), or read a live cluster" in capsys.readouterr().err
    )


def test_a_kind_the_credentials_may_not_list_names_the_cluster(
    kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _FakeApiServer.failing = "/api/v1/services"
    assert (
        main(
            [
                "plan",
                "--kubeconfig",
                str(kubeconfig),
                "--node-template",
                str(REPO / "examples" / "capacity" / "gpu-node.yaml"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("kubesched: error: http://127.0.0.1:") and "Forbidden: /api/v1/services is forbidden" in err


def test_live_finds_the_cluster_as_kubectl_does(
    kubeconfig: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}:{kubeconfig}")
    assert (
        main(
            [
                "capacity",
                "--live",
                "--pod",
                str(REPO / "examples" / "capacity" / "web-replica.yaml"),
                "--max",
                "2",
                "-o",
                "json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["replicas"] == 2
