"""Storage views and the component-helpers rules they carry."""

from __future__ import annotations

import pytest

from kubesched.api.errors import ObjectError
from kubesched.api.storage import (
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
    find_matching_volume,
)
from tests.plugins.storage import csinode_dict, pv_dict, pvc_dict, sc_dict, va_dict


def test_claim_class_prefers_the_beta_annotation() -> None:
    raw = pvc_dict("c", sc="field", annotations={"volume.beta.kubernetes.io/storage-class": "beta"})
    assert PersistentVolumeClaim.from_dict(raw).storage_class == "beta"
    assert PersistentVolumeClaim.from_dict(pvc_dict("c", sc=None)).storage_class == ""


@pytest.mark.parametrize(("ref_uid", "claim_uid", "want"), [("", "u1", True), ("u1", "u1", True), ("u2", "u1", False)])
def test_is_bound_to(ref_uid: str, claim_uid: str, want: bool) -> None:
    pv = PersistentVolume.from_dict(pv_dict("pv", claim=("default", "c"), claim_uid=ref_uid))
    assert pv.is_bound_to(PersistentVolumeClaim.from_dict(pvc_dict("c", uid=claim_uid))) is want


def test_local_node_names_and_affinity() -> None:
    pv = PersistentVolume.from_dict(pv_dict("pv", hosts=["a", "b"]))
    assert pv.local_node_names() == ["a", "b"]
    assert pv.matches_node({"kubernetes.io/hostname": "a"}) and not pv.matches_node({"kubernetes.io/hostname": "c"})
    assert PersistentVolume.from_dict(pv_dict("net")).matches_node({})


MATCH_CASES = [
    ("smallest that fits", [("p50", "50Gi"), ("p200", "200Gi"), ("p100", "100Gi")], "80Gi", "p100"),
    ("too small", [("p50", "50Gi")], "80Gi", None),
    ("exact size", [("p80", "80Gi")], "80Gi", "p80"),
]


@pytest.mark.parametrize(("name", "pvs", "size", "want"), MATCH_CASES, ids=[c[0] for c in MATCH_CASES])
def test_find_matching_volume(name: str, pvs: list[tuple[str, str]], size: str, want: str | None) -> None:
    volumes = [PersistentVolume.from_dict(pv_dict(n, size=s, sc="x")) for n, s in pvs]
    claim = PersistentVolumeClaim.from_dict(pvc_dict("c", size=size, sc="x"))
    found = find_matching_volume(claim, volumes, {}, frozenset())
    assert (found.name if found else None) == want


def test_find_matching_volume_excludes_chosen_and_prefers_pre_bound() -> None:
    claim = PersistentVolumeClaim.from_dict(pvc_dict("c", sc="x"))
    small = PersistentVolume.from_dict(pv_dict("small", sc="x", size="10Gi"))
    mine = PersistentVolume.from_dict(pv_dict("mine", sc="x", size="50Gi", claim=("default", "c")))
    assert find_matching_volume(claim, [small, mine], {}, frozenset()) is mine
    assert find_matching_volume(claim, [small], {}, frozenset({"small"})) is None


def _vac(obj: dict, vac: str) -> dict:
    obj["spec"]["volumeAttributesClassName"] = vac
    return obj


@pytest.mark.parametrize(
    ("claim_vac", "gate", "want"),
    [
        ("gold", True, "gold-pv"),
        ("", True, "plain-pv"),
        ("silver", True, None),
        # Gate off: the class is not looked at, the smallest fitting volume wins.
        ("gold", False, "plain-pv"),
    ],
)
def test_find_matching_volume_attributes_class(claim_vac: str, gate: bool, want: str | None) -> None:
    volumes = [
        PersistentVolume.from_dict(pv_dict("plain-pv", sc="x", size="10Gi")),
        PersistentVolume.from_dict(_vac(pv_dict("gold-pv", sc="x", size="20Gi"), "gold")),
    ]
    claim = PersistentVolumeClaim.from_dict(_vac(pvc_dict("c", sc="x", size="5Gi"), claim_vac))
    found = find_matching_volume(claim, volumes, {}, frozenset(), match_attributes_class=gate)
    assert (found.name if found else None) == want
    # A volume pre-bound to the claim is skipped too when its class differs.
    mine = PersistentVolume.from_dict(_vac(pv_dict("mine", sc="x", claim=("default", "c")), "other"))
    assert (find_matching_volume(claim, [mine], {}, frozenset(), match_attributes_class=gate) is mine) is not gate


def test_volume_attachment_view() -> None:
    va = VolumeAttachment.from_dict(va_dict("va", attacher="d", node="n1", pv="pv"))
    assert (va.name, va.attacher, va.node_name, va.persistent_volume_name) == ("va", "d", "n1", "pv")
    assert VolumeAttachment.from_dict(va_dict("inline")).persistent_volume_name is None


def test_storage_class_topology() -> None:
    sc = StorageClass.from_dict(
        sc_dict("s", topologies=[{"matchLabelExpressions": [{"key": "zone", "values": ["a", "b"]}]}])
    )
    assert sc.allows_topology({"zone": "b"}) and not sc.allows_topology({"zone": "c"})
    assert StorageClass.from_dict(sc_dict("any")).allows_topology({})
    assert StorageClass.from_dict(sc_dict("unset", mode=None)).volume_binding_mode is None


def test_csinode_counts() -> None:
    node = CSINode.from_dict(csinode_dict("n", drivers={"d": 5, "e": None}))
    assert node.driver("d").allocatable_count == 5  # type: ignore[union-attr]
    assert node.driver("e").allocatable_count is None  # type: ignore[union-attr]
    bad = csinode_dict("n", drivers={"d": 1})
    bad["spec"]["drivers"][0]["allocatable"]["count"] = "five"
    with pytest.raises(ObjectError, match=r"spec.drivers\[0\].allocatable.count"):
        CSINode.from_dict(bad)


def test_bad_quantity_names_the_field() -> None:
    raw = pvc_dict("c")
    raw["spec"]["resources"]["requests"]["storage"] = "lots"
    with pytest.raises(ObjectError, match=r"spec\.resources\.requests\.storage"):
        PersistentVolumeClaim.from_dict(raw)


def test_nodes_may_report_attachable_volume_limits() -> None:
    """Kubelets publish ``attachable-volumes-*`` in node capacity; the API server accepts them."""
    from kubesched.api.validation import validate_object
    from tests.factories import node_dict

    node = node_dict("n", extra={"attachable-volumes-csi-ebs.csi.aws.com": "39", "attachable-volumes-aws-ebs": "25"})
    validate_object(node)
    bad = node_dict("n", extra={"volumes": "3"})
    with pytest.raises(ObjectError, match="must be a standard resource type"):
        validate_object(bad)
