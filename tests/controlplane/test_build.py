"""build.sh: the cache folder it builds into, the release stamped into the binaries (with a stand-in for
Go), and what the real binaries report about themselves."""

from __future__ import annotations

import json
import re
import ssl
import subprocess
import urllib.request
from pathlib import Path

import pytest

from testing.controlplane.fixture import ControlPlane
from tests.controlplane.fake_go import REPO, FakeGo

GO_MOD = REPO / "testing" / "controlplane" / "go.mod"
PINNED = re.findall(r"^require k8s\.io/kubernetes (v\S+)$", GO_MOD.read_text(), re.MULTILINE)[0]
ETCD = re.findall(r"^\tgo\.etcd\.io/etcd/server/v3 (v\S+) ", GO_MOD.read_text(), re.MULTILINE)[0]
KUBERNETES_BINARIES = ["kube-apiserver", "kubectl", "kube-scheduler", "kube-controller-manager"]
VERSION_PACKAGES = ["k8s.io/component-base/version", "k8s.io/client-go/pkg/version"]


def build_call(go: FakeGo, name: str) -> str:
    return next(call for call in go.builds() if f"/{name}.tmp." in call)


def test_builds_into_a_stamped_folder_named_after_the_pins(tmp_path: Path) -> None:
    go = FakeGo(tmp_path)
    proc = go.run_build_script()
    assert proc.returncode == 0, proc.stderr
    bin_dir = Path(proc.stdout.strip())
    assert bin_dir == go.cache / f"{PINNED}-etcd-{ETCD}-stamped" / "bin"
    assert sorted(p.name for p in bin_dir.iterdir()) == sorted([*KUBERNETES_BINARIES, "etcd"])


@pytest.mark.parametrize("name", KUBERNETES_BINARIES)
def test_the_kubernetes_binaries_are_stamped_with_the_pinned_release(tmp_path: Path, name: str) -> None:
    go = FakeGo(tmp_path)
    assert go.run_build_script().returncode == 0
    call = build_call(go, name)
    major, minor = PINNED[1:].split(".")[:2]
    for package in VERSION_PACKAGES:
        for var, value in [
            ("gitVersion", PINNED),
            ("gitMajor", major),
            ("gitMinor", minor),
            ("gitTreeState", "clean"),
            ("buildDate", "2026-02-10T12:53:36Z"),
        ]:
            assert f"-X '{package}.{var}={value}'" in call


def test_etcd_is_built_without_the_kubernetes_stamp(tmp_path: Path) -> None:
    go = FakeGo(tmp_path)
    assert go.run_build_script().returncode == 0
    assert "-X" not in build_call(go, "etcd")


def test_only_the_missing_binaries_are_built_and_a_full_cache_needs_no_go(tmp_path: Path) -> None:
    go = FakeGo(tmp_path)
    bin_dir = Path(go.run_build_script().stdout.strip())
    (bin_dir / "kubectl").unlink()
    go.log.unlink()
    proc = go.run_build_script()
    assert [call.split()[-1] for call in go.builds()] == ["k8s.io/kubernetes/cmd/kubectl"]
    assert "building kubectl (1/1)" in proc.stderr
    go.log.unlink()
    proc = go.run_build_script()
    assert (proc.returncode, proc.stderr, go.calls()) == (0, "", [])


def test_a_compiler_failure_fails_the_script_with_its_message(tmp_path: Path) -> None:
    go = FakeGo(tmp_path)
    proc = go.run_build_script(FAKE_GO_FAIL="1")
    assert proc.returncode != 0
    assert "compile: something went wrong" in proc.stderr
    assert proc.stdout == ""


# -- the real binaries ----------------------------------------------------------------------------------
@pytest.mark.controlplane
def test_kubectl_version_reports_the_pinned_release_for_client_and_server(control_plane: ControlPlane) -> None:
    info = json.loads(control_plane.kubectl("version", "-o", "json").stdout)
    assert info["clientVersion"]["gitVersion"] == PINNED
    assert info["serverVersion"]["gitVersion"] == PINNED


@pytest.mark.controlplane
def test_the_api_server_reports_the_pinned_release(control_plane: ControlPlane) -> None:
    request = urllib.request.Request(
        f"{control_plane.url}/version", headers={"Authorization": f"Bearer {control_plane.admin_token}"}
    )
    context = ssl.create_default_context(cafile=str(control_plane.ca_file))
    with urllib.request.urlopen(request, context=context, timeout=30) as resp:
        info = json.load(resp)
    assert (info["gitVersion"], info["major"], info["minor"]) == (PINNED, *PINNED[1:].split(".")[:2])


@pytest.mark.controlplane
@pytest.mark.parametrize("name", ["kube-scheduler", "kube-controller-manager", "kube-apiserver"])
def test_the_components_report_the_pinned_release(controlplane_bin_dir: Path, name: str) -> None:
    proc = subprocess.run(
        [str(controlplane_bin_dir / name), "--version"], capture_output=True, text=True, timeout=60, check=True
    )
    assert proc.stdout.strip() == f"Kubernetes {PINNED}"
