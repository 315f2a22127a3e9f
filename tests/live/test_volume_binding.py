"""A WaitForFirstConsumer claim on a local PV against the real API server and upstream PV controller.

``kubesched run`` (as its own process, as ``system:kube-scheduler``) must choose the PV's node although
the scoring alone prefers the bigger nodes, pre-bind the PV to the claim (the PV's claimRef, as
kube-scheduler's volume binder writes it), wait in PreBind until kube-controller-manager's
persistentvolume-binder-controller has completed the binding (the claim's volumeName), and only then
bind the pod. Everything is checked by reading the objects back from the API server.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.controlplane.fixture import free_port
from tests.live.conftest import Live, node, pod

pytestmark = pytest.mark.controlplane

CLASS = "kubesched-wffc"
PV = "kubesched-local-pv"
CLAIM = "kubesched-local-claim"
VOLUME_NODE = "vol-c"
CLAIM_SIZE = "1Gi"

STORAGE_CLASS = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": CLASS},
    "provisioner": "kubernetes.io/no-provisioner",
    "volumeBindingMode": "WaitForFirstConsumer",
}
LOCAL_PV = {
    "apiVersion": "v1",
    "kind": "PersistentVolume",
    "metadata": {"name": PV},
    "spec": {
        "capacity": {"storage": "5Gi"},
        "accessModes": ["ReadWriteOnce"],
        "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": CLASS,
        "local": {"path": "/mnt/disks/vol1"},
        "nodeAffinity": {
            "required": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [VOLUME_NODE]}]}
                ]
            }
        },
    },
}
PVC = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": CLAIM, "namespace": "default"},
    "spec": {
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": CLASS,
        "resources": {"requests": {"storage": CLAIM_SIZE}},
    },
}
# The PV's node is the smallest and last by name: neither LeastAllocated nor the name tie-break picks it.
NODES = [
    node("vol-a", cpu="8", memory="16Gi"),
    node("vol-b", cpu="8", memory="16Gi"),
    node(VOLUME_NODE, cpu="2", memory="4Gi"),
]


def _start_pv_controller(live: Live, log: Path) -> subprocess.Popen:
    plane = live.plane
    out = open(log, "w")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(
        [
            str(plane.bin_dir / "kube-controller-manager"),
            f"--kubeconfig={plane.admin_kubeconfig}",
            "--controllers=persistentvolume-binder-controller",
            "--leader-elect=false",
            "--use-service-account-credentials=false",
            f"--secure-port={free_port()}",
            "--bind-address=127.0.0.1",
        ],
        stdout=out,
        stderr=subprocess.STDOUT,
    )


def _remove(live: Live, kind: str, name: str, namespaced: bool) -> None:
    """Delete even though no protection controller runs to lift the protection finalizers."""
    ns = ["-n", "default"] if namespaced else []
    live.kubectl("patch", kind, name, *ns, "--type=merge", "-p", '{"metadata":{"finalizers":null}}', check=False)
    live.kubectl("delete", kind, name, *ns, "--ignore-not-found", "--wait=false", check=False)


@pytest.fixture
def storage(live: Live) -> Iterator[Live]:
    for kind, name, namespaced in (("pvc", CLAIM, True), ("pv", PV, False), ("storageclass", CLASS, False)):
        _remove(live, kind, name, namespaced)
    yield live
    live.kubectl("delete", "pods", "--all", "-n", "default", "--grace-period=0", "--force", "--wait=false", check=False)
    for kind, name, namespaced in (("pvc", CLAIM, True), ("pv", PV, False), ("storageclass", CLASS, False)):
        _remove(live, kind, name, namespaced)


def _wait_pv_controller_ready(live: Live, kcm: subprocess.Popen, log: Path, timeout: float = 90.0) -> None:
    """The controller has synced when it reports the unbound WaitForFirstConsumer claim as waiting."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if kcm.poll() is not None:
            raise AssertionError(f"kube-controller-manager exited ({kcm.returncode}):\n{_tail(log)}")
        events = live.get("events")["items"]
        if any(e.get("reason") == "WaitForFirstConsumer" and e["involvedObject"].get("name") == CLAIM for e in events):
            return
        time.sleep(0.5)
    raise AssertionError(
        f"persistentvolume-binder-controller did not see claim {CLAIM} within {timeout:.0f}s; "
        f"kube-controller-manager log:\n{_tail(log)}"
    )


def _tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def test_wait_for_first_consumer_claim_binds_to_the_local_pv_node(storage: Live) -> None:
    live = storage
    live.apply(*NODES, STORAGE_CLASS, LOCAL_PV, PVC)
    kcm_log = live.tmp / "kube-controller-manager.log"
    kcm = _start_pv_controller(live, kcm_log)
    try:
        _wait_pv_controller_ready(live, kcm, kcm_log)
        # WaitForFirstConsumer: the controller leaves the claim alone until a pod is scheduled.
        assert live.get("pvc", CLAIM)["status"]["phase"] == "Pending"
        assert "claimRef" not in live.get("pv", PV)["spec"]

        live.start_scheduler()
        live.apply(pod("consumer", volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": CLAIM}}]))
        try:
            where = live.wait_bound("consumer", timeout=120)
        except AssertionError as err:
            raise AssertionError(f"{err}\nkube-controller-manager log:\n{_tail(kcm_log)}") from None
        assert where == {"consumer": VOLUME_NODE}

        # Read as soon as the pod is bound: PreBind waited for the controller to finish the binding.
        claim = live.get("pvc", CLAIM)
        volume = live.get("pv", PV)
        assert claim["spec"]["volumeName"] == PV
        assert claim["status"]["phase"] == "Bound"
        assert claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
        ref = volume["spec"]["claimRef"]
        assert (ref["namespace"], ref["name"], ref["uid"]) == ("default", CLAIM, claim["metadata"]["uid"])
        # The scheduler made the claimRef; the controller only confirms it.
        assert volume["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
        # A matching static PV: nothing to provision, so no node is selected for a provisioner.
        assert "volume.kubernetes.io/selected-node" not in claim["metadata"].get("annotations", {})
        live.wait(lambda: live.get("pv", PV)["status"].get("phase") == "Bound", 30, f"PV {PV} phase Bound")

        scheduled = live.wait(
            lambda: [e for e in live.events("consumer") if e["reason"] == "Scheduled"], 20, "the Scheduled event"
        )
        assert f"to {VOLUME_NODE}" in scheduled[0]["note"]
        assert kcm.poll() is None, f"kube-controller-manager exited:\n{_tail(kcm_log)}"
    finally:
        kcm.terminate()
        try:
            kcm.wait(30)
        except subprocess.TimeoutExpired:
            kcm.kill()
            kcm.wait(10)
