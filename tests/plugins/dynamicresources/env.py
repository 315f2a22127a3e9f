"""A DynamicResources plugin on an embedded cluster whose watch feeds the listers at once (an informer)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.cluster.listers import Listers
from kubesched.cluster.protocol import WatchEvent
from kubesched.config.features import feature_gates
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Status
from kubesched.plugins.dynamicresources import DynamicResources
from tests.dra import DRIVER, device_class_dict
from tests.factories import as_handle, node_dict

GPU_CLASS = device_class_dict("gpu", f'device.driver == "{DRIVER}"')
DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")


class Handle:
    """What the plugin reads of the framework handle."""

    def __init__(self, listers: Listers, cluster: Any, features: Any, extra: Mapping[str, Any]) -> None:
        self.listers = listers
        self.cluster = cluster
        self.features = features
        self.extra = extra


class Env:
    """Objects go through the embedded API server (admission, defaults) into the listers, synchronously."""

    def __init__(
        self,
        *objs: dict[str, Any],
        version: str | None = None,
        gates: Mapping[str, bool] | None = None,
        nodes: Iterable[dict[str, Any]] = (),
    ) -> None:
        self.features = feature_gates(version, gates)
        self.cluster = EmbeddedCluster(features=self.features, synchronous=True)
        self.listers = Listers()
        self.cluster.watch(DRA_KINDS, self._inform)
        self.nodes = {n["metadata"]["name"]: Node.from_dict(n) for n in (list(nodes) or [node_dict("n1")])}
        for obj in objs:
            self.cluster.create(obj)
        self.handle = Handle(self.listers, self.cluster, self.features, {"tie_break": "name"})
        self.plugin = DynamicResources(None, as_handle(self.handle))

    def _inform(self, event: WatchEvent) -> None:
        self.listers.apply(event.type, event.kind, event.obj)

    def inform(self, obj: dict[str, Any]) -> None:
        """An object the listers hold without the API server's say (one being deleted, say)."""
        self.listers.apply("ADDED", obj["kind"], obj)

    def create(self, *objs: dict[str, Any]) -> None:
        for obj in objs:
            self.cluster.create(obj)

    def pod(self, obj: dict[str, Any]) -> Pod:
        """The pod as stored (uid given by the API server); created when it is not there yet."""
        meta = obj["metadata"]
        found = self.cluster.lookup("Pod", meta.get("namespace") or "default", meta["name"])
        return Pod.from_dict(copy.deepcopy(found if found is not None else self.cluster.create(obj)))

    def claim(self, name: str, namespace: str = "default") -> dict[str, Any]:
        return self.cluster.get("ResourceClaim", namespace, name)

    def node_info(self, name: str) -> NodeInfo:
        return NodeInfo(self.nodes[name])

    def filter_all(self, state: CycleState, pod: Pod) -> dict[str, Status | None]:
        return {name: self.plugin.filter(state, pod, self.node_info(name)) for name in self.nodes}

    def cycle(self, pod: Pod) -> tuple[CycleState, Status | None]:
        """PreFilter, and the state it wrote."""
        state = CycleState()
        _, status = self.plugin.pre_filter(state, pod)
        return state, status
