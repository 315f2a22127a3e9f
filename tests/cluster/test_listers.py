"""The listers plugins read: objects whose fields plugins read are type-checked on the way in."""

from __future__ import annotations

import pytest

from kubesched.api.errors import ObjectError
from kubesched.cluster.listers import Listers, listed_kinds
from kubesched.config.features import feature_gates


def test_a_malformed_service_is_refused_and_changes_nothing() -> None:
    listers = Listers()
    good = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "web"},
            "spec": {"selector": {"app": "web"}}}
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
        listers.apply("ADDED", "Namespace", {"apiVersion": "v1", "kind": "Namespace",
                                             "metadata": {"name": "web", "labels": {"team": 1}}})
    assert listers.namespace_labels("web") is None


def test_volume_attachments_are_parsed_and_move_the_storage_version() -> None:
    listers = Listers()
    va = {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va"},
          "spec": {"attacher": "ebs.csi.aws.com", "nodeName": "n1", "source": {"persistentVolumeName": "pv"}}}
    before = listers.storage_version
    listers.apply("ADDED", "VolumeAttachment", va)
    assert [(a.name, a.node_name, a.persistent_volume_name) for a in listers.volume_attachments()] == [
        ("va", "n1", "pv")]
    assert listers.storage_version > before
    listers.apply("DELETED", "VolumeAttachment", va)
    assert listers.volume_attachments() == []


@pytest.mark.parametrize(("version", "watched"), [("1.30", False), ("1.34", True)])
def test_volume_attachments_are_listed_from_v1_34(version: str, watched: bool) -> None:
    assert ("VolumeAttachment" in listed_kinds(feature_gates(version))) is watched
    assert "CSINode" in listed_kinds(feature_gates(version))
