"""The listers plugins read: objects whose fields plugins read are type-checked on the way in."""

from __future__ import annotations

import pytest

from kubesched.api.errors import ObjectError
from kubesched.cluster.listers import Listers, listed_kinds
from kubesched.config.features import feature_gates


def test_a_malformed_service_is_refused_and_changes_nothing() -> None:
    listers = Listers()
    good = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s", "namespace": "web"},
        "spec": {"selector": {"app": "web"}},
    }
    listers.apply("ADDED", "Service", good)
    bad = {**good, "spec": "selector=app"}
    with pytest.raises(ObjectError, match="spec: expected a mapping"):
        listers.apply("MODIFIED", "Service", bad)
    assert listers.list("Service", "web") == [good]
    listers.apply("DELETED", "Service", bad)  # a deletion needs only the key
    assert listers.list("Service") == []


def test_namespace_labels_must_be_strings() -> None:
    listers = Listers()
    with pytest.raises(ObjectError, match=r"metadata\.labels\.team: expected a string"):
        listers.apply(
            "ADDED",
            "Namespace",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "web", "labels": {"team": 1}}},
        )
    assert listers.namespace_labels("web") is None


def test_volume_attachments_are_parsed_and_move_the_storage_version() -> None:
    listers = Listers()
    va = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": "va"},
        "spec": {"attacher": "ebs.csi.aws.com", "nodeName": "n1", "source": {"persistentVolumeName": "pv"}},
    }
    before = listers.storage_version
    listers.apply("ADDED", "VolumeAttachment", va)
    assert [(a.name, a.node_name, a.persistent_volume_name) for a in listers.volume_attachments()] == [
        ("va", "n1", "pv")
    ]
    assert listers.storage_version > before
    listers.apply("DELETED", "VolumeAttachment", va)
    assert listers.volume_attachments() == []


@pytest.mark.parametrize(("version", "watched"), [("1.30", False), ("1.34", True)])
def test_volume_attachments_are_listed_from_v1_34(version: str, watched: bool) -> None:
    assert ("VolumeAttachment" in listed_kinds(feature_gates(version))) is watched
    assert "CSINode" in listed_kinds(feature_gates(version))


def test_dra_objects_are_kept_parsed_and_move_their_version() -> None:
    from tests.dra import claim_dict, device_class_dict, request_dict, slice_dict

    listers = Listers()
    listers.apply("ADDED", "DeviceClass", device_class_dict("gpu", "true"))
    listers.apply("ADDED", "ResourceSlice", slice_dict("s", ["g0"], node="n1"))
    listers.apply("ADDED", "ResourceClaim", claim_dict("c", request_dict("r"), namespace="ml"))
    assert listers.dra_version == 3 and listers.storage_version == 0
    device_class = listers.device_class("gpu")
    assert device_class is not None and device_class.selectors == ("true",)
    assert [s.name for s in listers.resource_slices()] == ["s"]
    claim = listers.resource_claim("ml", "c")
    assert claim is not None and claim.spec.requests[0].name == "r"
    with pytest.raises(ObjectError, match=r"spec\.selectors\[0\]\.cel\.expression"):
        listers.apply("MODIFIED", "DeviceClass", device_class_dict("gpu", "1 +"))
    assert listers.device_class("gpu") is device_class
    listers.apply("DELETED", "ResourceClaim", claim_dict("c", request_dict("r"), namespace="ml"))
    assert listers.resource_claims() == [] and listers.dra_version == 4


def test_view_handlers_hear_every_change_of_a_parsed_kind_with_old_and_new_views() -> None:
    from tests.dra import claim_dict, request_dict

    listers = Listers()
    heard: list[tuple[str | None, str | None]] = []
    listers.add_view_handler(
        "ResourceClaim",
        lambda old, new: heard.append((old and old.meta.resource_version, new and new.meta.resource_version)),
    )
    claim = claim_dict("c", request_dict("r"))
    for event, rv in (("ADDED", "1"), ("MODIFIED", "2"), ("DELETED", "3")):
        listers.apply(event, "ResourceClaim", {**claim, "metadata": {**claim["metadata"], "resourceVersion": rv}})
    assert heard == [(None, "1"), ("1", "2"), ("2", None)]
    with pytest.raises(ValueError, match="not kept parsed"):
        listers.add_view_handler("Service", lambda old, new: None)


def test_derived_state_is_made_once_and_shared() -> None:
    listers = Listers()
    made: list[int] = []

    def make() -> list[int]:
        made.append(1)
        listers.add_view_handler("ResourceSlice", lambda old, new: None)  # a maker may subscribe
        return made

    assert listers.derived("x", make) is listers.derived("x", make) and made == [1]
