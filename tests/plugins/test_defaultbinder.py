from __future__ import annotations

from typing import Any

import pytest

from kubesched.cluster.protocol import ApiError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import BindPlugin
from kubesched.framework.status import Code
from kubesched.plugins import defaultbinder
from tests.factories import as_handle, make_pod


class FakeCluster:
    def __init__(self, fail: Exception | None = None) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.fail = fail

    def bind(self, namespace: str, name: str, node_name: str, *, uid: str | None = None) -> None:
        self.calls.append((namespace, name, node_name, uid))
        if self.fail is not None:
            raise self.fail


class FakeHandle:
    def __init__(self, cluster: FakeCluster) -> None:
        self.cluster = cluster


def test_bind_calls_the_binding_subresource() -> None:
    cluster = FakeCluster()
    plugin = defaultbinder.new(None, as_handle(FakeHandle(cluster)))
    assert isinstance(plugin, BindPlugin)
    assert plugin.name == "DefaultBinder"
    pod = make_pod("web", namespace="shop", uid="u-1")
    assert plugin.bind(CycleState(), pod, "node-a") is None
    assert cluster.calls == [("shop", "web", "node-a", "u-1")]


def test_api_error_becomes_error_status() -> None:
    err = ApiError('pods "web" is already assigned to node "b"')
    plugin = defaultbinder.new(None, as_handle(FakeHandle(FakeCluster(err))))
    status = plugin.bind(CycleState(), make_pod("web"), "node-a")
    assert status is not None
    assert status.code is Code.ERROR
    assert status.error is err
    assert status.reasons == (str(err),)


def test_other_exceptions_propagate() -> None:
    plugin = defaultbinder.new(None, as_handle(FakeHandle(FakeCluster(KeyError("boom")))))
    with pytest.raises(KeyError):
        plugin.bind(CycleState(), make_pod("web"), "node-a")
