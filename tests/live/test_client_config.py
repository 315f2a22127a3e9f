"""Where the connection settings come from: --kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster, as kubectl."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.live.client_config import ClientConfigError, kubeconfig_paths, load_client_configuration


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home folder, no $KUBECONFIG and no pod around: nothing to find until a test puts it there."""
    from kubernetes.config import incluster_config

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(tmp_path / "sa" / "token"))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(tmp_path / "sa" / "ca.crt"))
    return home


def kubeconfig(
    path: Path, server: str, *, token: str = "t", context: str | None = "main", name: str = "main", **cluster: Any
) -> Path:
    """A kubeconfig with one cluster, user and context, all called ``name``."""
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": server, **cluster}}],
        "users": [{"name": name, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
    }
    if context is not None:
        doc["current-context"] = context
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc))
    return path


def token(cfg: Any) -> str:
    """The Authorization header the configuration sends ("" for none)."""
    return str(cfg.auth_settings().get("BearerToken", {}).get("value") or "")


def in_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sa").mkdir()
    (tmp_path / "sa" / "token").write_text("sa-token")
    (tmp_path / "sa" / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")


def test_the_flag_wins_over_everything_else(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kubeconfig(home / ".kube" / "config", "https://home:6443")
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig(tmp_path / "env", "https://env:6443")))
    in_cluster(tmp_path, monkeypatch)
    flag = kubeconfig(tmp_path / "flag", "https://flag:6443", token="f")
    cfg = load_client_configuration(str(flag))
    assert (cfg.host, token(cfg)) == ("https://flag:6443", "Bearer f")


def test_kubeconfig_env_lists_files_merged_first_wins(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kubeconfig(home / ".kube" / "config", "https://home:6443")
    first = kubeconfig(tmp_path / "a", "https://a:6443", token="a", name="a", context="a")
    # The second file defines "a" again (ignored: the first file keeps it) and its own context "b",
    # and names "b" current: the first file's current-context wins, as in client-go.
    second = tmp_path / "b"
    second.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "b",
                "clusters": [
                    {"name": "a", "cluster": {"server": "https://not-a:6443"}},
                    {"name": "b", "cluster": {"server": "https://b:6443"}},
                ],
                "users": [{"name": "b", "user": {"token": "b"}}],
                "contexts": [{"name": "b", "context": {"cluster": "b", "user": "b"}}],
            }
        )
    )
    empty = tmp_path / "empty"
    empty.write_text("")
    entries = [str(tmp_path / "missing"), str(first), "", str(empty), str(second), str(first)]
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join(entries))
    assert kubeconfig_paths() == [str(first), str(empty), str(second)]
    cfg = load_client_configuration()
    assert (cfg.host, token(cfg)) == ("https://a:6443", "Bearer a")
    other = load_client_configuration(context="b")  # the second file's context is there too
    assert (other.host, token(other)) == ("https://b:6443", "Bearer b")


def test_kubeconfig_env_replaces_the_home_file(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kubeconfig(home / ".kube" / "config", "https://home:6443")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    with pytest.raises(ClientConfigError, match=r"\$KUBECONFIG \(.*missing\) names no existing file"):
        load_client_configuration()
    in_cluster(tmp_path, monkeypatch)  # nothing listed exists: on to the pod's service account
    assert load_client_configuration().host == "https://10.0.0.1:443"


def test_the_home_file_when_kubeconfig_is_unset_or_empty(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kubeconfig(home / ".kube" / "config", "https://home:6443", token="h")
    in_cluster(tmp_path, monkeypatch)
    cfg = load_client_configuration()
    assert (cfg.host, token(cfg)) == ("https://home:6443", "Bearer h")
    monkeypatch.setenv("KUBECONFIG", "")
    assert load_client_configuration().host == "https://home:6443"


def test_in_cluster_when_no_file_is_found(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    in_cluster(tmp_path, monkeypatch)
    cfg = load_client_configuration()
    assert (cfg.host, token(cfg).lower()) == ("https://10.0.0.1:443", "bearer sa-token")  # the case is free
    assert cfg.ssl_ca_cert == str(tmp_path / "sa" / "ca.crt")


def test_an_empty_home_file_is_no_settings(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (home / ".kube").mkdir()
    (home / ".kube" / "config").write_text("# nothing yet\n")
    in_cluster(tmp_path, monkeypatch)
    assert load_client_configuration().host == "https://10.0.0.1:443"


def test_nothing_found_is_one_clear_line(home: Path) -> None:
    with pytest.raises(ClientConfigError) as err:
        load_client_configuration()
    message = str(err.value)
    assert message == (
        "no kubeconfig found: no --kubeconfig given, ~/.kube/config does not exist, and not running "
        "in a cluster (KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT not set)"
    )
    with pytest.raises(ClientConfigError, match=r"^--context other: no kubeconfig found"):
        load_client_configuration(context="other")


def test_incomplete_in_cluster_files_are_named(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    with pytest.raises(ClientConfigError, match=r"^in-cluster configuration: Service token file does not exist\."):
        load_client_configuration()


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (None, "{path}: No such file or directory"),
        ("", "{path}: invalid kubeconfig: the file is empty"),
        ("clusters: [\n", "{path}: invalid kubeconfig: while parsing"),
        ("- a list\n", "{path}: invalid kubeconfig: not a mapping"),
        ("apiVersion: v1\nkind: Config\nclusters: []\n", "{path}: invalid kubeconfig: Invalid kube-config file."),
    ],
)
def test_a_bad_kubeconfig_is_named(home: Path, tmp_path: Path, text: str | None, want: str) -> None:
    path = tmp_path / "kc"
    if text is not None:
        path.write_text(text)
    with pytest.raises(ClientConfigError) as err:
        load_client_configuration(str(path))
    assert str(err.value).startswith(want.format(path=path))


def test_master_alone_has_no_credentials_and_reads_no_file(home: Path) -> None:
    kubeconfig(home / ".kube" / "config", "https://home:6443")
    cfg = load_client_configuration(master="http://127.0.0.1:8080/")
    assert (cfg.host, token(cfg)) == ("http://127.0.0.1:8080", "")


def test_master_replaces_the_server_of_the_kubeconfig(home: Path, tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "kc", "https://from-file:6443", token="k")
    cfg = load_client_configuration(str(path), master="https://override:6443")
    assert (cfg.host, token(cfg)) == ("https://override:6443", "Bearer k")


def test_relative_certificate_paths_are_read_from_the_files_folder(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "conf"
    path = kubeconfig(folder / "kc", "https://a:6443", **{"certificate-authority": "ca.crt"})
    (folder / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KUBECONFIG", str(path))
    assert load_client_configuration().ssl_ca_cert == str(folder / "ca.crt")
