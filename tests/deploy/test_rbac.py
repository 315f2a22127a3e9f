"""The Deployment's RBAC against the real API server: ``kubesched run`` under the manifest's ServiceAccount
(a TokenRequest token, as its pods get one) with the shipped configuration, through scheduling, binding,
an unschedulable pod, a preemption, a volume bound in PreBind, a scrape of /metrics (token and access
reviews), leader election and the release of its Lease at SIGTERM.

kube-apiserver's audit log (testing.controlplane.audit) tells every call the account made: none was
refused, each is allowed by a rule the manifest grants, and each rule the manifest adds to kube-scheduler's
own ClusterRoles (the documented baseline: what the bootstrap policy grants the user system:kube-scheduler)
was used. What the baseline grants and kubesched did not use is printed (docs/live.md lists it).
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from testing.controlplane.audit import AuditReader, Request
from testing.controlplane.fixture import ControlPlane, free_port
from tests.deploy.test_manifests import MANIFEST, documents, one
from tests.live.conftest import Live, node, pod
from tests.live.test_volume_binding import (
    CLAIM,
    CLASS,
    LOCAL_PV,
    PV,
    PVC,
    STORAGE_CLASS,
    VOLUME_NODE,
    _start_pv_controller,
    _wait_pv_controller_ready,
)

pytestmark = pytest.mark.controlplane

ACCOUNT = "system:serviceaccount:kube-system:kubesched"
SCRAPER = "kubesched-test-user"  # a static user of the plane, allowed to read /metrics below
BASELINE = ("system:kube-scheduler", "system:volume-scheduler")
#: (group, resource, verb) each step of the flow must have made, or the flow missed what it is for.
EXERCISED = {
    ("", "pods/binding", "create"),
    ("", "pods/status", "patch"),
    ("", "pods", "delete"),
    ("", "persistentvolumes", "update"),
    ("events.k8s.io", "events", "create"),
    ("coordination.k8s.io", "leases", "create"),
    ("coordination.k8s.io", "leases", "get"),
    ("coordination.k8s.io", "leases", "update"),
    ("authentication.k8s.io", "tokenreviews", "create"),
    ("authorization.k8s.io", "subjectaccessreviews", "create"),
    ("", "nodes", "watch"),
    ("", "pods", "list"),
}


def resource_of(r: Request) -> str:
    return f"{r.resource}/{r.subresource}" if r.subresource else r.resource


def allows(rule: dict[str, Any], r: Request) -> bool:
    """Whether an RBAC PolicyRule allows a resource request (as the RBAC authorizer matches them)."""

    def has(values: list[str], value: str) -> bool:
        return "*" in values or value in values

    return (
        has(rule.get("apiGroups", []), r.group)
        and has(rule.get("resources", []), resource_of(r))
        and has(rule.get("verbs", []), r.verb)
        and (not rule.get("resourceNames") or r.name in rule["resourceNames"])
    )


def pods_of(live: Live) -> None:
    """The flow: a plain pod, a volume bound in PreBind, a preemption, an unschedulable pod."""
    spec = {"schedulerName": "kubesched"}
    live.apply(pod("plain", **spec))
    live.wait_bound("plain")
    live.apply(pod("consumer", **spec, volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": CLAIM}}]))
    assert live.wait_bound("consumer", timeout=120) == {"consumer": VOLUME_NODE}
    live.apply(
        *(
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
            for name, value in (("rbac-low", 10), ("rbac-high", 1000))
        )
    )
    live.apply(*(pod(f"victim-{i}", cpu="3", priorityClassName="rbac-low", **spec) for i in range(2)))
    live.wait_bound("victim-0", "victim-1")
    live.apply(pod("preemptor", cpu="3", priorityClassName="rbac-high", **spec))
    live.wait_bound("preemptor", timeout=60)
    live.apply(pod("too-big", cpu="100", **spec))
    live.wait(
        lambda: (live.pods()["too-big"]["status"].get("conditions") or [{}])[0].get("reason") == "Unschedulable",
        30,
        "too-big to be reported unschedulable",
    )


def scrape(port: int, token: str) -> int:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # kubesched's self-signed certificate
    request = urllib.request.Request(f"https://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as resp:
            resp.read()
            return int(resp.status)
    except urllib.error.HTTPError as err:
        return err.code


@pytest.fixture
def deployed(audited_control_plane: ControlPlane, tmp_path: Path) -> Iterator[Live]:
    """The manifest applied for real (server-side), with a scraper allowed to read /metrics; all removed after."""
    live = Live(audited_control_plane, tmp_path)
    live.reset()
    for kind, name in (("pvc", CLAIM), ("pv", PV), ("storageclass", CLASS)):
        live.kubectl("delete", kind, name, "-n", "default", "--ignore-not-found", "--wait=false", check=False)
    applied = live.kubectl("apply", "--server-side", "-f", str(MANIFEST)).stdout.strip().splitlines()
    assert len(applied) == len(documents()) and all(line.endswith("serverside-applied") for line in applied)
    live.kubectl("create", "clusterrole", "rbac-metrics-reader", "--verb=get", "--non-resource-url=/metrics")
    live.kubectl(
        "create", "clusterrolebinding", "rbac-metrics-reader", "--clusterrole=rbac-metrics-reader", f"--user={SCRAPER}"
    )
    try:
        yield live
    finally:
        live.stop()
        live.kubectl("delete", "-f", str(MANIFEST), "--ignore-not-found", "--wait=false", check=False)
        for kind in ("clusterrolebinding", "clusterrole"):
            live.kubectl("delete", kind, "rbac-metrics-reader", check=False)
        for kind, name in (("priorityclass", "rbac-low"), ("priorityclass", "rbac-high")):
            live.kubectl("delete", kind, name, check=False)
        for kind, name in (("pvc", CLAIM), ("pv", PV), ("storageclass", CLASS)):
            live.kubectl(
                "patch",
                kind,
                name,
                "-n",
                "default",
                "--type=merge",
                "-p",
                '{"metadata":{"finalizers":null}}',
                check=False,
            )
            live.kubectl("delete", kind, name, "-n", "default", "--ignore-not-found", "--wait=false", check=False)


def test_the_deployments_account_is_never_refused_and_uses_all_it_adds_to_kube_schedulers_roles(deployed: Live) -> None:
    live = deployed
    plane = live.plane
    audit = AuditReader(plane.audit_log)
    live.run_kubelet_standin()  # preemption victims are deleted gracefully: finish it
    live.apply(
        node("rb-a", cpu="4", memory="8Gi"), node(VOLUME_NODE, cpu="4", memory="8Gi"), STORAGE_CLASS, LOCAL_PV, PVC
    )
    kcm = _start_pv_controller(live, live.tmp / "kube-controller-manager.log")
    try:
        _wait_pv_controller_ready(live, kcm, live.tmp / "kube-controller-manager.log")
        port = free_port()
        config = yaml.safe_load(one("ConfigMap")["data"]["config.yaml"])
        proc = live.start_scheduler(
            "--secure-port",
            str(port),
            "--bind-address",
            "127.0.0.1",
            config=config,
            kubeconfig=plane.service_account_kubeconfig("kube-system", "kubesched"),
        )
        pods_of(live)
        assert scrape(port, plane.extra_tokens[SCRAPER]) == 200
        print(f"\nkubesched resident memory: {_rss_mib(proc.pid)} MiB")
        proc.terminate()
        assert proc.wait(30) == 0
    finally:
        kcm.terminate()
        kcm.wait(30)
    released = live.get("lease", "kubesched", namespace="kube-system")["spec"]
    assert released["holderIdentity"] == ""

    calls = [r for r in audit.requests() if r.user == ACCOUNT]
    log = Path(proc.log_path).read_text()  # type: ignore[attr-defined]
    assert [r for r in calls if r.code in (401, 403)] == []
    assert "forbidden" not in log.lower()
    used = {(r.group, resource_of(r), r.verb) for r in calls if r.resource}
    assert used >= EXERCISED, EXERCISED - used
    check_grants(live, [r for r in calls if r.resource])


def check_grants(live: Live, calls: list[Request]) -> None:
    baseline = [
        rule
        for name in BASELINE
        for rule in json.loads(live.kubectl("get", "clusterrole", name, "-o", "json").stdout)["rules"]
    ]
    added = one("Role")["rules"]
    refused = [r for r in calls if not any(allows(rule, r) for rule in baseline + added)]
    assert refused == []
    for rule in added:  # everything the manifest grants beyond kube-scheduler's roles is used
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    for name in rule.get("resourceNames", [""]):
                        assert any(
                            (r.group, resource_of(r), r.verb) == (group, resource, verb) and r.name == (name or r.name)
                            for r in calls
                        ), (group, resource, verb, name)
    unused = sorted(
        {
            (group or "core", resource, verb)
            for rule in baseline
            for group in rule["apiGroups"]
            for resource in rule["resources"]
            for verb in rule["verbs"]
        }
        - {(r.group or "core", resource_of(r), r.verb) for r in calls}
    )
    print("granted by kube-scheduler's roles, not used by kubesched in this flow:")
    for entry in unused:
        print("  ", "/".join(entry))


def _rss_mib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return -1
