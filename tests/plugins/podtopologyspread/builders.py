"""What the PodTopologySpread tests build: nodes, pods, constraints, the plugin, and runs of it that
assert the batch and per-node forms agree."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.cache.snapshot import Snapshot
from kubesched.cluster.listers import Listers
from kubesched.config.features import feature_gates
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    NodeScore,
)
from kubesched.framework.status import Code, Status
from kubesched.plugins import podtopologyspread as pts
from tests.factories import as_handle, node_dict, pod_dict

HOST = "kubernetes.io/hostname"
ZONE = "zone"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
DNS = "DoNotSchedule"
SA = "ScheduleAnyway"
MISSING = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, pts.ERR_REASON_NODE_LABEL_NOT_MATCH)
SKEW = (Code.UNSCHEDULABLE, pts.ERR_REASON_CONSTRAINTS_NOT_MATCH)


# -- builders -------------------------------------------------------------------------------------------
def node(
    name: str,
    labels: Mapping[str, str] | None = None,
    *,
    hostname: bool = True,
    taints: Sequence[Mapping[str, str]] = (),
) -> Node:
    raw = node_dict(name, labels=labels, taints=taints)
    if not hostname:
        del raw["metadata"]["labels"][HOST]
    return Node.from_dict(raw)


def pod(
    name: str,
    labels: Mapping[str, str] | None = None,
    *,
    on: str = "",
    ns: str = "default",
    terminating: bool = False,
    spread: Sequence[Mapping[str, Any]] = (),
    node_selector: Mapping[str, str] | None = None,
    affinity: Mapping[str, Any] | None = None,
    tolerations: Sequence[Mapping[str, str]] = (),
    owner: Mapping[str, Any] | None = None,
) -> Pod:
    spec: dict[str, Any] = {}
    if spread:
        spec["topologySpreadConstraints"] = [dict(c) for c in spread]
    if node_selector is not None:
        spec["nodeSelector"] = dict(node_selector)
    if affinity is not None:
        spec["affinity"] = dict(affinity)
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    raw = pod_dict(name, namespace=ns, node_name=on, labels=labels, spec=spec)
    if terminating:
        raw["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if owner is not None:
        raw["metadata"]["ownerReferences"] = [dict(owner)]
    return Pod.from_dict(raw)


def spread(
    max_skew: int,
    key: str,
    when: str,
    selector: Mapping[str, Any] | None = None,
    *,
    min_domains: int | None = None,
    affinity_policy: str | None = None,
    taints_policy: str | None = None,
    match_label_keys: Sequence[str] | None = None,
) -> dict[str, Any]:
    c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not None:
        c["labelSelector"] = dict(selector)
    if min_domains is not None:
        c["minDomains"] = min_domains
    if affinity_policy is not None:
        c["nodeAffinityPolicy"] = affinity_policy
    if taints_policy is not None:
        c["nodeTaintsPolicy"] = taints_policy
    if match_label_keys is not None:
        c["matchLabelKeys"] = list(match_label_keys)
    return c


class FakeHandle:
    def __init__(self, snapshot: Snapshot, listers: Listers | None = None, version: str = "1.34") -> None:
        self.snapshot = snapshot
        self.listers = listers if listers is not None else Listers()
        self.features = feature_gates(version)


def make_plugin(
    snapshot: Snapshot, args: Any = None, listers: Listers | None = None, version: str = "1.34"
) -> pts.PodTopologySpread:
    return pts.new(args, as_handle(FakeHandle(snapshot, listers, version)))


def listers_with(*objs: Mapping[str, Any]) -> Listers:
    listers = Listers()
    for obj in objs:
        listers.apply("ADDED", str(obj["kind"]), obj)
    return listers


def service(name: str, selector: Mapping[str, str] | None, ns: str = "default") -> dict[str, Any]:
    spec: dict[str, Any] = {} if selector is None else {"selector": dict(selector)}
    return {"kind": "Service", "apiVersion": "v1", "metadata": {"name": name, "namespace": ns}, "spec": spec}


Verdict = tuple[Code, str] | None


def status_tuple(status: Status | None) -> Verdict:
    return None if status is None else (status.code, status.message)


def run_filter(
    plugin: pts.PodTopologySpread, incoming: Pod, snapshot: Snapshot, state: CycleState | None = None
) -> dict[str, Verdict] | Status:
    """Per-node verdicts (after PreFilter unless a state is given), asserting batch == per-node."""
    if state is None:
        state = CycleState()
        _, status = plugin.pre_filter(state, incoming)
        if status is not None:
            return status
    rows = np.arange(len(snapshot))
    batch = plugin.filter_nodes(state, incoming, snapshot, rows)
    out: dict[str, Verdict] = {}
    for k, info in enumerate(snapshot.node_infos):
        per_node = status_tuple(plugin.filter(state, incoming, info))
        idx = int(batch.status_index[k])
        assert status_tuple(None if idx < 0 else batch.statuses[idx]) == per_node, info.name
        out[info.name] = per_node
    return out


def run_score(
    plugin: pts.PodTopologySpread, incoming: Pod, snapshot: Snapshot, filtered: Sequence[str] | None = None
) -> dict[str, int] | Status:
    """Normalized scores of the filtered nodes, asserting batch == per-node."""
    names = [i.name for i in snapshot.node_infos] if filtered is None else list(filtered)
    nodes = snapshot.nodes(np.array([snapshot.index[n] for n in names], dtype=np.int64))
    state = CycleState()
    status = plugin.pre_score(state, incoming, nodes)
    if status is not None:
        return status
    per_node = []
    for info in nodes:
        score, st = plugin.score(state, incoming, info)
        assert st is None
        per_node.append(NodeScore(info.name, score))
    raw = plugin.score_nodes(state, incoming, nodes)
    assert raw.tolist() == [s.score for s in per_node]
    assert plugin.normalize_score(state, incoming, per_node) is None
    batch = plugin.normalize_scores(state, incoming, raw.copy())
    assert batch.tolist() == [s.score for s in per_node]
    return {s.name: s.score for s in per_node}


def pods_on(counts: Mapping[str, int], labels: Mapping[str, str] | None = None, **kw: Any) -> list[Pod]:
    return [pod(f"p-{n}-{i}", labels or {"foo": ""}, on=n, **kw) for n, k in counts.items() for i in range(k)]


def hosts(*names: str) -> list[Node]:
    return [node(n) for n in names]


def zoned(**zones: str) -> list[Node]:
    return [node(n.replace("_", "-"), {ZONE: z}) for n, z in zones.items()]


def zone_nodes() -> list[Node]:
    """Two zones of two nodes: node-a, node-b in zone1; node-x, node-y in zone2."""
    return [
        node("node-a", {ZONE: "zone1"}),
        node("node-b", {ZONE: "zone1"}),
        node("node-x", {ZONE: "zone2"}),
        node("node-y", {ZONE: "zone2"}),
    ]
