"""The embedded controllers against upstream kube-controller-manager v1.34 on the reference API server.

The same workloads go to both; the pods, ReplicaSets and claims they make must have the same shape:
names (and their random-suffix form), labels, owner references, the DaemonSet pod's affinity and
tolerations, the StatefulSet pod's hostname, subdomain and claims, the Job pod's finalizer. Hash
values differ by design (upstream hashes a Go struct dump), so only where they appear is compared.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from typing import Any

import pytest
import yaml

from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.embedded.controlplane import ControlPlane
from kubesched.embedded.workloads.common import NAME_ALPHABET
from tests.live.conftest import Live

pytestmark = pytest.mark.controlplane

CONTAINER = [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]
OBJECTS: list[dict[str, Any]] = [
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "kcm-n1", "labels": {"kubernetes.io/hostname": "kcm-n1"}},
    },
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "kcm-web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "kcm-web"}},
            "template": {"metadata": {"labels": {"app": "kcm-web"}}, "spec": {"containers": CONTAINER}},
        },
    },
    {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "kcm-db", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "podManagementPolicy": "Parallel",
            "serviceName": "kcm-db",
            "selector": {"matchLabels": {"app": "kcm-db"}},
            "template": {"metadata": {"labels": {"app": "kcm-db"}}, "spec": {"containers": CONTAINER}},
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                }
            ],
        },
    },
    {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "kcm-agent", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "kcm-agent"}},
            "template": {
                "metadata": {"labels": {"app": "kcm-agent"}},
                "spec": {"containers": CONTAINER, "hostNetwork": True},
            },
        },
    },
    {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "kcm-etl", "namespace": "default"},
        "spec": {
            "parallelism": 2,
            "completions": 3,
            "template": {"spec": {"restartPolicy": "Never", "containers": CONTAINER}},
        },
    },
]
EXPECTED_PODS = 2 + 2 + 1 + 2


def _upstream(live: Live) -> dict[str, list[dict[str, Any]]]:
    plane = live.plane
    kcm = subprocess.Popen(
        [
            str(plane.bin_dir / "kube-controller-manager"),
            f"--kubeconfig={plane.admin_kubeconfig}",
            "--controllers=deployment,replicaset,statefulset,daemonset,job",
            "--leader-elect=false",
            "--use-service-account-credentials=false",
            "--secure-port=0",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        plane.kubectl("create", "-f", "-", input=yaml.safe_dump_all(OBJECTS))
        deadline = time.monotonic() + 90
        while True:
            pods = [
                p
                for p in json.loads(plane.kubectl("get", "pods", "-n", "default", "-o", "json").stdout)["items"]
                if p["metadata"]["name"].startswith("kcm-")
            ]
            if len(pods) >= EXPECTED_PODS or time.monotonic() > deadline:
                break
            time.sleep(1)
        out = {"Pod": pods}
        for kind, resource in (("ReplicaSet", "replicasets"), ("PersistentVolumeClaim", "persistentvolumeclaims")):
            items = json.loads(plane.kubectl("get", resource, "-n", "default", "-o", "json").stdout)["items"]
            # Only this test's objects: the session's API server is shared with other tests.
            out[kind] = [i for i in items if "kcm-" in i["metadata"]["name"]]
        return out
    finally:
        kcm.terminate()
        kcm.wait(timeout=30)
        plane.kubectl("delete", "-f", "-", "--wait=false", input=yaml.safe_dump_all(OBJECTS), check=False)


def _embedded() -> dict[str, list[dict[str, Any]]]:
    cluster = EmbeddedCluster(synchronous=True)
    ControlPlane(cluster).start()
    for obj in OBJECTS:
        cluster.create(obj)
    return {kind: cluster.list(kind, "default")[0] for kind in ("Pod", "ReplicaSet", "PersistentVolumeClaim")}


def _by_owner(pods: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for pod in pods:
        (ref,) = pod["metadata"]["ownerReferences"]
        out.setdefault(ref["kind"], []).append(pod)
    return out


def _shape(pod: dict[str, Any]) -> dict[str, Any]:
    """What a controller decides about its pod. Tolerations only for DaemonSet pods: on other pods the
    API server's DefaultTolerationSeconds admission adds not-ready/unreachable for 300s, which is
    admission's doing (the embedded cluster does not have that plugin), not the controller's."""
    meta, spec = pod["metadata"], pod["spec"]
    daemon = meta["ownerReferences"][0]["kind"] == "DaemonSet"
    return {
        "generateName": str(meta.get("generateName")).replace(
            (meta.get("labels") or {}).get("pod-template-hash") or "\0", "<hash>"
        ),
        "labels": sorted(meta.get("labels") or {}),
        "owner": [(r["kind"], r["controller"], r["blockOwnerDeletion"]) for r in meta["ownerReferences"]],
        "finalizers": meta.get("finalizers"),
        "affinity": spec.get("affinity"),
        "tolerations": spec.get("tolerations") if daemon else None,
        "hostname": spec.get("hostname"),
        "subdomain": spec.get("subdomain"),
        "claims": [v for v in spec.get("volumes") or [] if "persistentVolumeClaim" in v],
    }


def test_pods_sets_and_claims_have_kube_controller_manager_shapes(live: Live) -> None:
    real, ours = _upstream(live), _embedded()
    assert len(real["Pod"]) == len(ours["Pod"]) == EXPECTED_PODS
    real_pods, our_pods = _by_owner(real["Pod"]), _by_owner(ours["Pod"])
    assert sorted(real_pods) == sorted(our_pods) == ["DaemonSet", "Job", "ReplicaSet", "StatefulSet"]
    for kind in real_pods:
        assert sorted(json.dumps(_shape(p), sort_keys=True) for p in real_pods[kind]) == sorted(
            json.dumps(_shape(p), sort_keys=True) for p in our_pods[kind]
        ), kind
    random_suffix = re.compile(f"^[{NAME_ALPHABET}]{{5}}$")
    for pods in (real_pods, our_pods):
        for kind in ("DaemonSet", "Job", "ReplicaSet"):
            for pod in pods[kind]:
                assert random_suffix.match(pod["metadata"]["name"][len(pod["metadata"]["generateName"]) :])
        assert sorted(p["metadata"]["name"] for p in pods["StatefulSet"]) == ["kcm-db-0", "kcm-db-1"]
    (real_rs,), (our_rs,) = real["ReplicaSet"], ours["ReplicaSet"]
    for rs in (real_rs, our_rs):
        pod_hash = rs["metadata"]["labels"]["pod-template-hash"]
        assert rs["metadata"]["name"] == f"kcm-web-{pod_hash}"
        assert rs["spec"]["selector"]["matchLabels"] == {"app": "kcm-web", "pod-template-hash": pod_hash}
    assert real_rs["metadata"]["annotations"] == our_rs["metadata"]["annotations"]
    claims = [
        sorted((c["metadata"]["name"], json.dumps(c["metadata"].get("labels"))) for c in side["PersistentVolumeClaim"])
        for side in (real, ours)
    ]
    assert claims[0] == claims[1] == [("data-kcm-db-0", '{"app": "kcm-db"}'), ("data-kcm-db-1", '{"app": "kcm-db"}')]
