"""The listers plugins read: objects whose fields plugins read are type-checked on the way in."""

from __future__ import annotations

import pytest

from kubesched.api.errors import ObjectError
from kubesched.cluster.listers import Listers


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
