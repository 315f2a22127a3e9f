"""The embedded PV controller: bindings completed, Immediate claims matched or provisioned,
WaitForFirstConsumer claims provisioned for the scheduler's selected node, all from watch events."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.features import feature_gates
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.embedded.controlplane import ControlPlane
from tests.plugins.storage import pv_dict, pvc_dict, sc_dict


def cluster_with(*objs: dict[str, Any], version: str = "1.34") -> tuple[EmbeddedCluster, ControlPlane]:
    plane = ControlPlane(EmbeddedCluster(features=feature_gates(version)))
    plane.start()
    cluster = plane.cluster
    for obj in objs:
        obj = dict(obj)
        obj["metadata"] = {k: v for k, v in obj["metadata"].items() if k not in ("resourceVersion", "uid")}
        cluster.create(obj)
    cluster.deliver_pending()
    return cluster, plane


def claim(cluster: EmbeddedCluster, name: str) -> dict[str, Any]:
    return cluster.get("PersistentVolumeClaim", "default", name)


def volume(cluster: EmbeddedCluster, name: str) -> dict[str, Any]:
    return cluster.get("PersistentVolume", None, name)


def test_pre_bound_claim_and_volume_are_completed() -> None:
    cluster, _ = cluster_with(pv_dict("pv", phase="", claim=("default", "c")), pvc_dict("c", volume="pv"))
    c = claim(cluster, "c")
    assert c["status"]["phase"] == "Bound"
    assert c["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    v = volume(cluster, "pv")
    assert v["status"]["phase"] == "Bound" and v["spec"]["claimRef"]["uid"] == c["metadata"]["uid"]


def test_unclaimed_volume_becomes_available() -> None:
    cluster, _ = cluster_with(pv_dict("pv", phase=""))
    assert volume(cluster, "pv")["status"]["phase"] == "Available"


@pytest.mark.parametrize(("sizes", "want"), [(["5Gi", "20Gi", "15Gi"], "pv-15Gi"), (["5Gi"], None)])
def test_immediate_claim_binds_the_smallest_match(sizes: list[str], want: str | None) -> None:
    pvs = [pv_dict(f"pv-{s}", size=s, sc="manual") for s in sizes]
    cluster, controllers = cluster_with(
        sc_dict("manual", provisioner="kubernetes.io/no-provisioner", mode="Immediate"),
        *pvs,
        pvc_dict("c", size="10Gi", sc="manual"),
    )
    assert claim(cluster, "c")["spec"].get("volumeName") == want
    if want is None:
        assert controllers.warnings == [
            "pvc default/c: Immediate claim with no matching PV and no provisioner; it stays unbound"
        ]


@pytest.mark.parametrize(("version", "want"), [("1.34", "pv-gold"), ("1.30", "pv-plain")])
def test_immediate_claim_matches_its_volume_attributes_class_from_v1_34(version: str, want: str) -> None:
    gold = pv_dict("pv-gold", size="20Gi", sc="manual")
    gold["spec"]["volumeAttributesClassName"] = "gold"
    wanted = pvc_dict("c", size="10Gi", sc="manual")
    wanted["spec"]["volumeAttributesClassName"] = "gold"
    cluster, _ = cluster_with(
        sc_dict("manual", provisioner="kubernetes.io/no-provisioner", mode="Immediate"),
        pv_dict("pv-plain", size="15Gi", sc="manual"),
        gold,
        wanted,
        version=version,
    )
    assert claim(cluster, "c")["spec"].get("volumeName") == want


def test_immediate_claim_is_provisioned_by_its_class() -> None:
    cluster, _ = cluster_with(sc_dict("gp3", mode="Immediate"), pvc_dict("c", sc="gp3"))
    c = claim(cluster, "c")
    v = volume(cluster, c["spec"]["volumeName"])
    assert v["spec"]["csi"]["driver"] == "ebs.csi.aws.com" and "nodeAffinity" not in v["spec"]
    assert c["status"]["phase"] == "Bound"


def test_wait_for_first_consumer_waits_for_the_selected_node() -> None:
    cluster, _ = cluster_with(sc_dict("gp3"), pvc_dict("c", sc="gp3"))
    assert not claim(cluster, "c")["spec"].get("volumeName")
    c = claim(cluster, "c")
    c["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] = "n1"
    cluster.update(c)
    cluster.deliver_pending()
    c = claim(cluster, "c")
    v = volume(cluster, c["spec"]["volumeName"])
    term = v["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]
    assert term == {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}
    assert c["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"


def test_claim_ref_set_by_the_scheduler_is_completed() -> None:
    cluster, _ = cluster_with(
        sc_dict("local", provisioner="kubernetes.io/no-provisioner"),
        pv_dict("pv", sc="local"),
        pvc_dict("c", sc="local"),
    )
    v = volume(cluster, "pv")
    c = claim(cluster, "c")
    v["spec"]["claimRef"] = {"namespace": "default", "name": "c", "uid": c["metadata"]["uid"]}
    cluster.update(v)
    cluster.deliver_pending()
    assert claim(cluster, "c")["spec"]["volumeName"] == "pv"
    assert volume(cluster, "pv")["status"]["phase"] == "Bound"
