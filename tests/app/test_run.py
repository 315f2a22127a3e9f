"""``kubesched run``'s flags and configuration, without a cluster (the live tests are in tests/live)."""

from __future__ import annotations

import logging
import socket
import threading
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from kubesched.app.cli import build_parser, main
from kubesched.app.run import effective_config, run


def parse(*argv: str):
    return build_parser().parse_args(["run", *argv])


def write(tmp_path: Path, config: dict) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(
        yaml.safe_dump({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **config})
    )
    return str(path)


def test_leader_election_flags_override_the_file(tmp_path: Path) -> None:
    path = write(
        tmp_path, {"leaderElection": {"leaderElect": True, "resourceName": "from-file", "leaseDuration": "30s"}}
    )
    config = effective_config(
        parse(
            "--config",
            path,
            "--leader-elect=false",
            "--leader-elect-renew-deadline",
            "20s",
            "--leader-elect-resource-namespace",
            "schedulers",
        )
    )
    le = config.leader_election
    assert (le.leader_elect, le.resource_name, le.resource_namespace) == (False, "from-file", "schedulers")
    assert (le.lease_duration, le.renew_deadline) == (timedelta(seconds=30), timedelta(seconds=20))


def test_without_flags_the_file_and_defaults_stand(tmp_path: Path) -> None:
    config = effective_config(
        parse(
            "--config",
            write(
                tmp_path,
                {"clientConnection": {"qps": 5000, "burst": 5000}, "profiles": [{"schedulerName": "kubesched"}]},
            ),
        )
    )
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


def test_a_bad_configuration_ends_with_one_line_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, {"parallelism": -1})
    assert main(["run", "--config", path, "--secure-port", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kubesched: error:") and "parallelism" in err[0]


def test_no_kubeconfig_outside_a_cluster_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(logging.root, "handlers", [])  # run's log set-up ends with the test
    for command in (["run", "--secure-port", "0"], ["snapshot", "-o", str(tmp_path / "snap")]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.startswith("kubesched: error: no kubeconfig found: ") and err.count("\n") == 1
        assert "not running in a cluster" in err


def test_run_finds_the_kubeconfig_and_logs_the_address_it_listens_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """$KUBECONFIG is read when no flag names a file; the log names the address bound (not the loopback
    address a local client would use)."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:9"}}],  # nothing answers there
                "users": [{"name": "c", "user": {"token": "t"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "c"}}],
            }
        )
    )
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    stop = threading.Event()
    stop.set()  # stop while the informers still wait for the API server
    with socket.socket() as probe:  # a port free a moment ago (--secure-port 0 turns serving off)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = parse("--leader-elect=false", "--secure-port", str(port), "--bind-address", "0.0.0.0", "--plain-http")
    with caplog.at_level(logging.INFO):
        assert run(args, stop=stop) == 0
    serving = [r.getMessage() for r in caplog.records if r.getMessage().startswith("serving ")]
    assert serving == [f"serving /healthz /livez /readyz /metrics on http://0.0.0.0:{port}"]
    assert any(r.getMessage() == f"connection settings from {kubeconfig}" for r in caplog.records)
