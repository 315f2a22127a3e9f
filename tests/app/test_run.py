"""``kubesched run``'s flags and configuration, without a cluster (the live tests are in tests/live)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from kubesched.app.cli import build_parser, main
from kubesched.app.run import effective_config


def parse(*argv: str):  # type: ignore[no-untyped-def]
    return build_parser().parse_args(["run", *argv])


def write(tmp_path: Path, config: dict) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                    "kind": "KubeSchedulerConfiguration", **config}))
    return str(path)


def test_leader_election_flags_override_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, {"leaderElection": {"leaderElect": True, "resourceName": "from-file",
                                               "leaseDuration": "30s"}})
    config = effective_config(parse("--config", path, "--leader-elect=false", "--leader-elect-renew-deadline",
                                    "20s", "--leader-elect-resource-namespace", "schedulers"))
    le = config.leader_election
    assert (le.leader_elect, le.resource_name, le.resource_namespace) == (False, "from-file", "schedulers")
    assert (le.lease_duration, le.renew_deadline) == (timedelta(seconds=30), timedelta(seconds=20))


def test_without_flags_the_file_and_defaults_stand(tmp_path: Path) -> None:
    config = effective_config(parse("--config", write(tmp_path, {"clientConnection": {"qps": 5000, "burst": 5000},
                                                                 "profiles": [{"schedulerName": "kubesched"}]})))
    assert config.leader_election.leader_elect is True
    assert config.leader_election.resource_name == "kube-scheduler"
    assert (config.client_connection["qps"], config.client_connection["burst"]) == (5000, 5000)
    assert [p.scheduler_name for p in config.profiles] == ["kubesched"]


def test_bare_leader_elect_flag_means_true() -> None:
    assert parse("--leader-elect").leader_elect is True
    assert parse().leader_elect is None


def test_bad_duration_flag_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse("--leader-elect-lease-duration", "soon")
    assert exit_info.value.code == 2
    assert "invalid duration 'soon'" in capsys.readouterr().err


def test_a_bad_configuration_ends_with_one_line_naming_the_field(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, {"parallelism": -1})
    assert main(["run", "--config", path, "--secure-port", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kubesched: error:") and "parallelism" in err[0]


def test_no_kubeconfig_outside_a_cluster_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert main(["run", "--secure-port", "0"]) == 2
    assert "not running in a cluster" in capsys.readouterr().err
