"""Cache state machine (add / assume / confirm / forget / expire) and incremental snapshot updates.

The incremental ``update_snapshot`` is checked against a from-scratch rebuild (``make_snapshot``) after
random operation sequences: whatever path the cache takes, the snapshot must read the same.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.labels import LabelSelector
from kubesched.api.objects import Node, Pod
from kubesched.cache.cache import Cache, CacheError
from kubesched.cache.pod_index import REQUIRED_AFFINITY, REQUIRED_ANTI_AFFINITY
from kubesched.cache.snapshot import Snapshot
from kubesched.clock import VirtualClock
from tests.factories import make_node, make_pod, make_snapshot

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"

POD_AFFINITY = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": ZONE}
        ]
    }
}
REQUIRED_ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": ZONE}
        ]
    }
}


def new_cache(clock: VirtualClock | None = None, ttl: timedelta | None = timedelta(0)) -> Cache:
    return Cache(clock=(clock or VirtualClock()).now, ttl=ttl)


def on(pod: Pod, node: str) -> Pod:
    """The pod as the scheduler assumes it / as the API server returns it once bound."""
    return dataclasses.replace(pod, node_name=node)


def names(snapshot: Snapshot) -> list[str]:
    return [info.name for info in snapshot.node_infos]


def snap(cache: Cache, snapshot: Snapshot | None = None) -> Snapshot:
    snapshot = snapshot if snapshot is not None else Snapshot()
    cache.update_snapshot(snapshot)
    return snapshot


def requested_cpu(cache: Cache, node: str) -> int:
    info = cache.node_infos().get(node)
    return 0 if info is None else info.requested_cpu()


# -- node tree order -------------------------------------------------------------------------------------


def zoned(name: str, zone: str | None = None, **labels: str) -> Node:
    return make_node(name, labels={**({ZONE: zone} if zone else {}), **labels})


@pytest.mark.parametrize(
    ("nodes", "want"),
    [
        pytest.param([zoned("a"), zoned("b"), zoned("c")], ["a", "b", "c"], id="no zones keeps insertion order"),
        pytest.param(
            [zoned("a", "z1"), zoned("b", "z1"), zoned("c", "z2"), zoned("d", "z3"), zoned("e", "z2"), zoned("f")],
            ["a", "c", "d", "f", "b", "e"],
            id="zones round-robin in order of first appearance",
        ),
        pytest.param(
            [zoned("a", "z1"), zoned("b", "z1"), zoned("c", "z1"), zoned("d", "z2")],
            ["a", "d", "b", "c"],
            id="exhausted zones are skipped",
        ),
        pytest.param(
            [zoned("a", "z1"), zoned("b", **{BETA_ZONE: "z1"}), zoned("c", "z2", **{BETA_ZONE: "z1"})],
            ["a", "b", "c"],
            id="beta zone label wins over the GA one",
        ),
        pytest.param(
            [zoned("a", "z1", **{REGION: "r1"}), zoned("b", "z1", **{REGION: "r2"}), zoned("c", "z1")],
            ["a", "b", "c"],
            id="region is part of the zone key",
        ),
        pytest.param(
            [zoned("a", **{REGION: "r1"}), zoned("b"), zoned("c", **{REGION: "r1"})],
            ["a", "b", "c"],
            id="region alone is a zone",
        ),
    ],
)
def test_node_tree_interleaves_zones(nodes: list[Node], want: list[str]) -> None:
    cache = new_cache()
    for node in nodes:
        cache.add_node(node)
    assert names(snap(cache)) == want
    assert cache.node_count() == len(want)


def test_node_tree_removal_and_zone_change() -> None:
    cache = new_cache()
    for node in (zoned("a", "z1"), zoned("b", "z2"), zoned("c", "z1"), zoned("d", "z3")):
        cache.add_node(node)
    snapshot = snap(cache)
    assert names(snapshot) == ["a", "b", "d", "c"]
    cache.remove_node(zoned("b", "z2"))  # z2 empties and is forgotten
    assert names(snap(cache, snapshot)) == ["a", "d", "c"]
    cache.add_node(zoned("b", "z2"))  # comes back as the newest zone
    assert names(snap(cache, snapshot)) == ["a", "d", "b", "c"]
    cache.update_node(zoned("a", "z1"), zoned("a", "z3"))  # moves to the end of z3
    assert names(snap(cache, snapshot)) == ["c", "d", "b", "a"]
    cache.add_node(zoned("c", "z1"))  # re-adding an existing node does not duplicate it
    assert names(snap(cache, snapshot)) == ["c", "d", "b", "a"]
    assert cache.node_count() == 4


# -- pods and nodes --------------------------------------------------------------------------------------


def test_pod_on_unknown_node_then_node_arrives() -> None:
    cache = new_cache()
    cache.add_node(make_node("n1"))
    cache.add_pod(make_pod("p", cpu="500m", node_name="n9"))
    assert cache.node_count() == 1 and cache.pod_count() == 1
    snapshot = snap(cache)
    assert names(snapshot) == ["n1"]
    cache.add_node(make_node("n9"))
    snap(cache, snapshot)
    assert names(snapshot) == ["n1", "n9"]
    info = snapshot.get("n9")
    assert info is not None and [p.name for p in info.pods] == ["p"] and info.requested_cpu() == 500
    assert snapshot.requested[snapshot.index["n9"], snapshot.resource_columns["cpu"]] == 500


def test_remove_node_keeps_its_pods_until_they_go() -> None:
    cache = new_cache()
    cache.add_node(make_node("n1"))
    cache.add_node(make_node("n2"))
    pod = make_pod("p", cpu="1", node_name="n1")
    cache.add_pod(pod)
    snapshot = snap(cache)
    cache.remove_node(make_node("n1"))
    snap(cache, snapshot)
    assert names(snapshot) == ["n2"] and snapshot.index == {"n2": 0} and snapshot.get("n1") is None
    assert cache.node_count() == 1 and cache.pod_count() == 1
    cache.add_node(make_node("n1"))  # the node comes back before the pod's deletion: the pod is still there
    snap(cache, snapshot)
    info = snapshot.get("n1")
    assert info is not None and info.requested_cpu() == 1000
    cache.remove_node(make_node("n1"))
    cache.remove_pod(pod)
    assert "n1" not in cache.node_infos() and cache.pod_count() == 0
    cache.remove_node(make_node("never-added"))  # unknown node: nothing to do
    assert cache.node_count() == 1


def test_update_node_replaces_the_node_object() -> None:
    cache = new_cache()
    cache.add_node(make_node("n1", cpu="2"))
    snapshot = snap(cache)
    cache.update_node(make_node("n1", cpu="2"), make_node("n1", cpu="6", labels={"disk": "ssd"}))
    snap(cache, snapshot)
    info = snapshot.get("n1")
    assert info is not None and info.allocatable["cpu"] == 6000 and info.node is not None
    assert info.node.labels["disk"] == "ssd"
    assert snapshot.allocatable[0, snapshot.resource_columns["cpu"]] == 6000


def test_assume_then_confirm() -> None:
    cache = new_cache()
    cache.add_node(make_node("n1"))
    pod = make_pod("p", cpu="1")
    assumed = on(pod, "n1")
    cache.assume_pod(assumed, "n1")
    assert cache.is_assumed(pod) and requested_cpu(cache, "n1") == 1000
    bound = on(pod, "n1")
    cache.add_pod(bound)
    assert not cache.is_assumed(pod)
    assert cache.get_pod(pod.uid) is bound
    assert requested_cpu(cache, "n1") == 1000 and cache.pod_count() == 1  # counted once


def test_assume_then_forget() -> None:
    cache = new_cache()
    cache.add_node(make_node("n1"))
    assumed = on(make_pod("p", cpu="1"), "n1")
    cache.assume_pod(assumed, "n1")
    cache.forget_pod(assumed)
    assert not cache.is_assumed(assumed) and cache.get_pod(assumed.uid) is None
    assert requested_cpu(cache, "n1") == 0 and cache.pod_count() == 0
    cache.assume_pod(assumed, "n1")  # forgotten pods can be assumed again
    assert cache.is_assumed(assumed)


def test_assume_onto_unknown_node_then_forget_drops_the_placeholder() -> None:
    cache = new_cache()
    assumed = on(make_pod("p", cpu="1"), "ghost")
    cache.assume_pod(assumed, "ghost")
    assert "ghost" in cache.node_infos() and cache.node_count() == 0
    cache.forget_pod(assumed)
    assert "ghost" not in cache.node_infos()


def test_assume_twice_raises() -> None:
    cache = new_cache()
    cache.add_node(make_node("n1"))
    assumed = on(make_pod("p"), "n1")
    cache.assume_pod(assumed, "n1")
    with pytest.raises(CacheError):
        cache.assume_pod(assumed, "n1")
    added = make_pod("q", node_name="n1")
    cache.add_pod(added)
    with pytest.raises(CacheError):  # a pod already added cannot be assumed either
        cache.assume_pod(added, "n1")
    assert cache.pod_count() == 2


def test_forget_of_added_pod_raises() -> None:
    cache = new_cache()
    cache.add_node(make_node("n1"))
    pod = make_pod("p", cpu="1", node_name="n1")
    cache.add_pod(pod)
    with pytest.raises(CacheError, match="wasn't assumed"):
        cache.forget_pod(pod)
    assert requested_cpu(cache, "n1") == 1000


def test_forget_on_a_different_node_raises() -> None:
    cache = new_cache()
    assumed = on(make_pod("p"), "n1")
    cache.assume_pod(assumed, "n1")
    with pytest.raises(CacheError, match="was assumed on n1 but assigned to n2"):
        cache.forget_pod(on(assumed, "n2"))
    assert cache.is_assumed(assumed)


def test_forget_of_unknown_pod_raises() -> None:
    with pytest.raises(CacheError):
        new_cache().forget_pod(on(make_pod("p"), "n1"))


def test_assumed_pod_bound_to_another_node_moves() -> None:
    cache = new_cache()
    cache.add_node(make_node("n1"))
    cache.add_node(make_node("n2"))
    pod = make_pod("p", cpu="1")
    cache.assume_pod(on(pod, "n1"), "n1")
    snapshot = snap(cache)
    cache.add_pod(on(pod, "n2"))
    assert not cache.is_assumed(pod)
    assert requested_cpu(cache, "n1") == 0 and requested_cpu(cache, "n2") == 1000
    snap(cache, snapshot)
    col = snapshot.resource_columns["cpu"]
    assert snapshot.requested[snapshot.index["n1"], col] == 0
    assert snapshot.requested[snapshot.index["n2"], col] == 1000


@pytest.mark.parametrize(
    ("ttl", "finish", "advance", "expired"),
    [
        pytest.param(timedelta(seconds=30), True, 31, True, id="expires after the ttl"),
        pytest.param(timedelta(seconds=30), True, 30, False, id="not at exactly the deadline"),
        pytest.param(timedelta(seconds=30), True, 5, False, id="not before"),
        pytest.param(timedelta(seconds=30), False, 3600, False, id="binding not finished never expires"),
        pytest.param(timedelta(0), True, 3600, False, id="ttl 0 never expires"),
        pytest.param(None, True, 3600, False, id="ttl None never expires"),
    ],
)
def test_assumed_pod_expiry(ttl: timedelta | None, finish: bool, advance: float, expired: bool) -> None:
    clock = VirtualClock()
    cache = new_cache(clock, ttl)
    cache.add_node(make_node("n1"))
    assumed = on(make_pod("p", cpu="1"), "n1")
    cache.assume_pod(assumed, "n1")
    clock.advance(10)  # the deadline counts from finish_binding, not from assume
    if finish:
        cache.finish_binding(assumed)
    clock.advance(advance)
    got = cache.cleanup_expired_assumed_pods()
    assert [p.uid for p in got] == ([assumed.uid] if expired else [])
    assert cache.is_assumed(assumed) is not expired
    assert requested_cpu(cache, "n1") == (0 if expired else 1000)


def test_confirmed_pod_does_not_expire() -> None:
    clock = VirtualClock()
    cache = new_cache(clock, timedelta(seconds=30))
    cache.add_node(make_node("n1"))
    pod = make_pod("p", cpu="1")
    cache.assume_pod(on(pod, "n1"), "n1")
    cache.finish_binding(on(pod, "n1"))
    cache.add_pod(on(pod, "n1"))
    clock.advance(3600)
    assert cache.cleanup_expired_assumed_pods() == []
    assert requested_cpu(cache, "n1") == 1000


def test_expired_pod_comes_back_when_its_add_arrives() -> None:
    clock = VirtualClock()
    cache = new_cache(clock, timedelta(seconds=1))
    cache.add_node(make_node("n1"))
    pod = make_pod("p", cpu="1")
    cache.assume_pod(on(pod, "n1"), "n1")
    cache.finish_binding(on(pod, "n1"))
    clock.advance(2)
    assert len(cache.cleanup_expired_assumed_pods()) == 1
    cache.add_pod(on(pod, "n1"))
    assert requested_cpu(cache, "n1") == 1000 and not cache.is_assumed(pod)


def test_finish_binding_of_unassumed_pod_is_ignored() -> None:
    clock = VirtualClock()
    cache = new_cache(clock, timedelta(seconds=1))
    cache.add_node(make_node("n1"))
    pod = make_pod("p", cpu="1", node_name="n1")
    cache.add_pod(pod)
    cache.finish_binding(pod)
    cache.finish_binding(make_pod("unknown"))
    clock.advance(10)
    assert cache.cleanup_expired_assumed_pods() == [] and requested_cpu(cache, "n1") == 1000


def test_update_pod_moves_and_replaces() -> None:
    cache = new_cache()
    cache.add_node(make_node("n1"))
    cache.add_node(make_node("n2"))
    old = make_pod("p", cpu="1", node_name="n1", uid="u")
    cache.add_pod(old)
    bigger = make_pod("p", cpu="3", node_name="n1", uid="u")
    cache.update_pod(old, bigger)
    assert requested_cpu(cache, "n1") == 3000 and cache.get_pod("u") is bigger
    moved = make_pod("p", cpu="2", node_name="n2", uid="u")
    cache.update_pod(bigger, moved)
    assert requested_cpu(cache, "n1") == 0 and requested_cpu(cache, "n2") == 2000
    assert cache.pod_count() == 1


def test_update_of_unknown_pod_adds_it() -> None:
    cache = new_cache()
    pod = make_pod("p", cpu="1", node_name="n1")
    cache.update_pod(None, pod)
    assert cache.get_pod(pod.uid) is pod and requested_cpu(cache, "n1") == 1000


def test_update_of_assumed_pod_confirms_it() -> None:
    cache = new_cache()
    cache.add_node(make_node("n1"))
    pod = make_pod("p", cpu="1")
    cache.assume_pod(on(pod, "n1"), "n1")
    cache.update_pod(pod, on(pod, "n1"))
    assert not cache.is_assumed(pod) and requested_cpu(cache, "n1") == 1000


def test_remove_pod() -> None:
    cache = new_cache()
    cache.add_node(make_node("n1"))
    pod = make_pod("p", cpu="1", node_name="n1")
    cache.add_pod(pod)
    snapshot = snap(cache)
    cache.remove_pod(pod)
    assert cache.get_pod(pod.uid) is None and cache.pod_count() == 0 and requested_cpu(cache, "n1") == 0
    snap(cache, snapshot)
    assert snapshot.pod_count.tolist() == [0] and snapshot.requested.sum() == 0
    cache.remove_pod(pod)  # twice: nothing left to do
    assumed = on(make_pod("q", cpu="1"), "n1")
    cache.assume_pod(assumed, "n1")
    cache.remove_pod(assumed)  # deleting an assumed pod also drops it
    assert not cache.is_assumed(assumed) and requested_cpu(cache, "n1") == 0


# -- incremental snapshot --------------------------------------------------------------------------------


def test_untouched_nodes_keep_their_snapshot_objects() -> None:
    cache = new_cache()
    for name in ("n1", "n2", "n3"):
        cache.add_node(make_node(name))
    snapshot = snap(cache)
    before = {info.name: info for info in snapshot.node_infos}
    generation = snapshot.generation
    cache.add_pod(make_pod("p", cpu="1", node_name="n2"))
    snap(cache, snapshot)
    assert snapshot.get("n1") is before["n1"] and snapshot.get("n3") is before["n3"]
    n2 = snapshot.get("n2")
    assert n2 is not before["n2"] and n2 is not None and len(n2.pods) == 1
    assert before["n2"].pods == []  # the previous cycle's copy is left as it was
    assert snapshot.generation > generation
    cache.update_node(None, make_node("n3", labels={"disk": "ssd"}))  # a node object change is a change too
    snap(cache, snapshot)
    assert snapshot.get("n1") is before["n1"] and snapshot.get("n2") is n2 and snapshot.get("n3") is not before["n3"]
    # the snapshot's copies are not the cache's live infos
    assert all(info is not cache.node_infos()[info.name] for info in snapshot.node_infos)


def test_new_extended_resource_columns_appear() -> None:
    cache = new_cache()
    cache.add_node(make_node("n1"))
    snapshot = snap(cache)
    assert "nvidia.com/gpu" not in snapshot.resource_columns
    cache.add_node(make_node("n2", extra={"nvidia.com/gpu": "4"}))  # full rebuild path
    snap(cache, snapshot)
    gpu = snapshot.resource_columns["nvidia.com/gpu"]
    assert snapshot.allocatable[:, gpu].tolist() == [0, 4]
    cache.update_node(None, make_node("n1", extra={"example.com/fpga": "2"}))  # incremental path
    snap(cache, snapshot)
    fpga = snapshot.resource_columns["example.com/fpga"]
    assert snapshot.allocatable[:, fpga].tolist() == [2, 0]
    assert snapshot.allocatable[:, gpu].tolist() == [0, 4]
    assert snapshot.allocatable.shape == snapshot.requested.shape == (2, len(snapshot.resource_columns))
    cache.add_pod(make_pod("p", requests={"example.com/asic": "1"}, node_name="n2"))  # only requested
    snap(cache, snapshot)
    asic = snapshot.resource_columns["example.com/asic"]
    assert snapshot.requested[:, asic].tolist() == [0, 1] and snapshot.allocatable[:, asic].tolist() == [0, 0]
    assert "pods" not in snapshot.resource_columns
    assert snapshot.allowed_pods.tolist() == [110, 110]


def _term_rows(snapshot: Snapshot, kind: int) -> dict[str, list[str]]:
    """Per distinct term kind: the node names carrying it, repeated once per pod."""
    names = snapshot.names
    return {
        entry.term.topology_key: sorted(names[r] for r, c in entry.per_row.items() for _ in range(c))
        for entry in snapshot.affinity_terms.terms(kind)
    }


def test_affinity_term_index_follows_transitions() -> None:
    cache = new_cache()
    for name in ("n1", "n2"):
        cache.add_node(make_node(name))
    snapshot = snap(cache)
    assert all(not list(snapshot.affinity_terms.terms(k)) for k in range(4))
    a = make_pod("a", node_name="n2", spec={"affinity": POD_AFFINITY})
    b = make_pod("b", node_name="n1", spec={"affinity": REQUIRED_ANTI})
    cache.add_pod(a)
    snap(cache, snapshot)
    assert _term_rows(snapshot, REQUIRED_AFFINITY) == {ZONE: ["n2"]}
    cache.add_pod(b)
    cache.add_pod(make_pod("c", node_name="n1", spec={"affinity": REQUIRED_ANTI}))
    snap(cache, snapshot)
    assert _term_rows(snapshot, REQUIRED_ANTI_AFFINITY) == {ZONE: ["n1", "n1"]}
    cache.remove_pod(a)
    cache.remove_pod(b)
    snap(cache, snapshot)
    assert _term_rows(snapshot, REQUIRED_AFFINITY) == {}
    assert _term_rows(snapshot, REQUIRED_ANTI_AFFINITY) == {ZONE: ["n1"]}


def test_label_index_follows_pod_updates_and_deletes() -> None:
    cache = new_cache()
    cache.add_node(make_node("n1"))
    cache.add_node(make_node("n2"))
    snapshot = snap(cache)
    web = LabelSelector.from_dict({"matchLabels": {"app": "web"}})
    old = make_pod("a", node_name="n1", labels={"app": "web"})
    cache.add_pod(old)
    cache.add_pod(make_pod("b", node_name="n2", labels={"app": "web"}))
    snap(cache, snapshot)
    assert sorted(snapshot.names[snapshot.pods.rows_matching(None, web)]) == ["n1", "n2"]
    cache.update_pod(old, make_pod("a", node_name="n1", labels={"app": "db"}, uid=old.uid))
    snap(cache, snapshot)
    assert snapshot.names[snapshot.pods.rows_matching(["default"], web)].tolist() == ["n2"]
    assert snapshot.pods.rows_matching(["other"], web).tolist() == []


def test_used_pvcs() -> None:
    cache = new_cache()
    cache.add_node(make_node("n1"))
    snapshot = snap(cache)
    pod = make_pod("p", node_name="n1", spec={"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}]})
    cache.add_pod(pod)
    snap(cache, snapshot)
    assert snapshot.used_pvcs == {"default/c"}
    cache.remove_pod(pod)
    snap(cache, snapshot)
    assert snapshot.used_pvcs == set()


def test_image_state_summaries() -> None:
    cache = new_cache()
    cache.add_node(make_node("n1", images=[{"names": ["nginx:1", "nginx@sha"], "sizeBytes": 100}]))
    cache.add_node(
        make_node("n2", images=[{"names": ["nginx:1"], "sizeBytes": 100}, {"names": ["redis"], "sizeBytes": 50}])
    )
    snapshot = snap(cache)
    n1, n2 = snapshot.get("n1"), snapshot.get("n2")
    assert n1 is not None and n2 is not None
    assert {k: (v.size, v.num_nodes) for k, v in n1.image_states.items()} == {
        "nginx:1": (100, 2),
        "nginx@sha": (100, 1),
    }
    assert {k: (v.size, v.num_nodes) for k, v in n2.image_states.items()} == {"nginx:1": (100, 2), "redis": (50, 1)}
    # a node-set change recopies every node, so spread counts on untouched nodes follow
    cache.add_node(make_node("n3", images=[{"names": ["redis"], "sizeBytes": 50}]))
    snap(cache, snapshot)
    n2 = snapshot.get("n2")
    assert n2 is not None and {k: v.num_nodes for k, v in n2.image_states.items()} == {"nginx:1": 2, "redis": 2}
    cache.remove_node(make_node("n1"))
    cache.update_node(None, make_node("n2", images=[{"names": ["nginx:1"], "sizeBytes": 100}]))
    snap(cache, snapshot)
    n2, n3 = snapshot.get("n2"), snapshot.get("n3")
    assert n2 is not None and {k: v.num_nodes for k, v in n2.image_states.items()} == {"nginx:1": 1}
    assert n3 is not None and {k: v.num_nodes for k, v in n3.image_states.items()} == {"redis": 1}


# -- property: incremental == from scratch ---------------------------------------------------------------

ZONES = ("z1", "z2", "z3")
NODE_NAMES = tuple(f"n{i}" for i in range(9))
#: Weighted so that most cycles take the incremental path (node-set changes force a full rebuild).
OPS = (
    "add_node",
    "add_node",
    "remove_node",
    "add_pod",
    "add_pod",
    "add_pod",
    "assume",
    "assume",
    "assume",
    "forget",
    "forget",
    "confirm",
    "confirm",
    "move_pod",
    "move_pod",
    "remove_pod",
    "remove_pod",
    "snapshot",
    "snapshot",
    "snapshot",
)


def _node(name: str, variant: int) -> Node:
    # several extended resource names, so that updates keep bringing in new columns
    extra = {f"example.com/r{variant % 5}": str(variant % 3 + 1)} if variant % 2 else {}
    labels = {ZONE: ZONES[variant % 3]} if variant % 7 else {}  # some nodes in no zone at all
    if variant % 4 == 3:
        labels["tier"] = f"t{variant % 3}"
    taints = [{"key": "dedicated", "value": f"v{variant % 2}", "effect": "NoSchedule"}] if variant % 6 == 5 else ()
    return make_node(name, cpu=str(2 + variant % 4), labels=labels, extra=extra, pods=str(10 + variant), taints=taints)


def _pod(i: int, variant: int) -> Pod:
    spec: dict[str, Any] = {}
    if variant % 5 == 0:
        spec["affinity"] = REQUIRED_ANTI
    elif variant % 5 == 1:
        spec["affinity"] = POD_AFFINITY
    if variant % 4 == 0:
        spec["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": f"c{variant % 3}"}}]
    requests = {f"example.com/r{variant % 6}": "1"} if variant % 3 == 1 else None
    cpu = None if variant % 3 == 0 else f"{variant % 900 + 1}m"
    return make_pod(f"p{i}", cpu=cpu, memory=f"{variant % 50}Mi", requests=requests, spec=spec, uid=f"u{i}")


class Model:
    """What the cache should contain: plain dicts, no incremental cleverness."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, Pod] = {}  # uid -> pod with node_name
        self.assumed: set[str] = set()


def apply(cache: Cache, model: Model, snapshot: Snapshot, op: str, arg: int, counter: list[int]) -> None:
    name = NODE_NAMES[arg % len(NODE_NAMES)]
    uids = sorted(model.pods)
    uid = uids[arg % len(uids)] if uids else None
    if op == "add_node":
        node = _node(name, arg)
        cache.add_node(node) if name not in model.nodes else cache.update_node(model.nodes[name], node)
        model.nodes[name] = node
    elif op == "remove_node" and name in model.nodes:
        cache.remove_node(model.nodes.pop(name))
    elif op in ("add_pod", "assume"):
        counter[0] += 1
        pod = on(_pod(counter[0], arg), name)
        if op == "add_pod":
            cache.add_pod(pod)
        else:
            cache.assume_pod(pod, name)
            model.assumed.add(pod.uid)
        model.pods[pod.uid] = pod
    elif op == "forget" and model.assumed:
        uid = sorted(model.assumed)[arg % len(model.assumed)]
        cache.forget_pod(model.pods.pop(uid))
        model.assumed.discard(uid)
    elif op == "confirm" and model.assumed:
        uid = sorted(model.assumed)[arg % len(model.assumed)]
        bound = on(model.pods[uid], name)  # may land on another node than assumed
        cache.add_pod(bound)
        model.pods[uid] = bound
        model.assumed.discard(uid)
    elif op == "move_pod" and uid is not None and uid not in model.assumed:
        moved = on(model.pods[uid], name)
        cache.update_pod(model.pods[uid], moved)
        model.pods[uid] = moved
    elif op == "remove_pod" and uid is not None:
        cache.remove_pod(model.pods.pop(uid))
        model.assumed.discard(uid)
    elif op == "snapshot":
        cache.update_snapshot(snapshot)
        # Build the derived node columns, so that later node joins must carry them to the new rows.
        snapshot.label_column(ZONE)
        snapshot.label_column("tier")
        snapshot.taint_groups()


def start(cache: Cache, model: Model, snapshot: Snapshot, counter: list[int]) -> None:
    """Four nodes and a first snapshot, so that the operations that follow mostly update in place."""
    for i in range(4):
        apply(cache, model, snapshot, "add_node", i * 7, counter)
    cache.update_snapshot(snapshot)


def assert_same_as_rebuild(snapshot: Snapshot, model: Model, cache: Cache | None = None) -> None:
    want = make_snapshot(model.nodes.values(), model.pods.values())
    assert sorted(names(snapshot)) == sorted(names(want)) == sorted(model.nodes)
    if cache is not None:  # rows in node-tree order (zones interleaved), whatever the path taken
        assert names(snapshot) == cache._tree.list()
    for key in (ZONE, "tier"):
        labels = snapshot.label_column(key)
        decoded = [labels.values[c] if c >= 0 else None for c in labels.codes.tolist()]
        assert decoded == [model.nodes[n].labels.get(key) for n in names(snapshot)], key
        assert all(labels.code_of(v) == i for i, v in enumerate(labels.values))
    group_of, group_taints = snapshot.taint_groups()
    assert [group_taints[g] for g in group_of.tolist()] == [model.nodes[n].taints for n in names(snapshot)]
    assert snapshot.index == {n: i for i, n in enumerate(names(snapshot))}
    assert snapshot.names.tolist() == names(snapshot)
    order = [snapshot.index[n] for n in names(want)]
    for column in ("non_zero_requested", "pod_count", "allowed_pods"):
        got_col = getattr(snapshot, column)[order]
        assert np.array_equal(got_col, getattr(want, column)), column
    resources = set(want.resource_columns)
    assert resources <= set(snapshot.resource_columns)
    for resource in resources | set(snapshot.resource_columns):
        for column in ("allocatable", "requested"):
            got_values = getattr(snapshot, column)[order, snapshot.resource_columns[resource]]
            w = want.resource_columns.get(resource)
            want_values = getattr(want, column)[:, w] if w is not None else np.zeros(len(order), dtype=np.int64)
            assert np.array_equal(got_values, want_values), (column, resource)
    for info in snapshot.node_infos:
        other = want.get(info.name)
        assert other is not None
        assert sorted(p.uid for p in info.pods) == sorted(p.uid for p in other.pods)
        assert info.node is model.nodes[info.name]
    everything = LabelSelector()
    assert sorted(snapshot.names[snapshot.pods.rows_matching(None, everything)]) == sorted(
        want.names[want.pods.rows_matching(None, everything)]
    )
    for kind in range(4):
        got_terms = {
            (e.term, e.weight): {snapshot.names[r]: c for r, c in e.per_row.items()}
            for e in snapshot.affinity_terms.terms(kind)
        }
        want_terms = {
            (e.term, e.weight): {want.names[r]: c for r, c in e.per_row.items()}
            for e in want.affinity_terms.terms(kind)
        }
        assert got_terms == want_terms, kind
    assert snapshot.used_pvcs == want.used_pvcs
    assert_matches_model(snapshot, model)


def assert_matches_model(snapshot: Snapshot, model: Model) -> None:
    """The same numbers summed straight from the model's pods, independent of NodeInfo and Snapshot code."""
    on_node: dict[str, list[Pod]] = {name: [] for name in model.nodes}
    for pod in model.pods.values():
        if pod.node_name in on_node:
            on_node[pod.node_name].append(pod)
    cpu = snapshot.resource_columns["cpu"]
    for name, pods in on_node.items():
        i = snapshot.index[name]
        assert snapshot.pod_count[i] == len(pods)
        assert snapshot.requested[i, cpu] == sum(p.requests.get("cpu", 0) for p in pods)
        assert snapshot.non_zero_requested[i].tolist() == [
            sum(p.non_zero_cpu for p in pods),
            sum(p.non_zero_memory for p in pods),
        ]
        assert snapshot.allowed_pods[i] == model.nodes[name].allocatable["pods"]
    anti_per_node: dict[str, int] = {}
    for entry in snapshot.affinity_terms.terms(REQUIRED_ANTI_AFFINITY):
        for row, count in entry.per_row.items():
            anti_per_node[snapshot.names[row]] = anti_per_node.get(snapshot.names[row], 0) + count
    want_anti = {
        n: sum(
            len(p.affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"])
            for p in pods
            if "podAntiAffinity" in p.affinity
        )
        for n, pods in on_node.items()
    }
    assert anti_per_node == {n: c for n, c in want_anti.items() if c}
    labelled = snapshot.pods.rows_matching(None, LabelSelector())
    assert sorted(snapshot.names[labelled]) == sorted(n for n, pods in on_node.items() for _ in pods)
    assert snapshot.used_pvcs == {
        f"{p.namespace}/{v['persistentVolumeClaim']['claimName']}"
        for pods in on_node.values()
        for p in pods
        for v in p.volumes
    }


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 10_000)), max_size=60))
def test_incremental_snapshot_equals_rebuild(ops: list[tuple[str, int]]) -> None:
    cache = new_cache()
    model = Model()
    snapshot = Snapshot()
    counter = [0]
    start(cache, model, snapshot, counter)
    for op, arg in ops:
        apply(cache, model, snapshot, op, arg, counter)
    cache.update_snapshot(snapshot)
    assert_same_as_rebuild(snapshot, model, cache)
    assert cache.node_count() == len(model.nodes)
    assert cache.pod_count() == len(model.pods)


@pytest.mark.parametrize("seed", range(5))
def test_long_random_sequences_match_rebuild_at_every_cycle(seed: int) -> None:
    """Many cycles on one snapshot: each update must catch up with everything since the previous one."""
    rng = np.random.default_rng(seed)
    cache = new_cache()
    model = Model()
    snapshot = Snapshot()
    counter = [0]
    start(cache, model, snapshot, counter)
    for _ in range(300):
        op = OPS[int(rng.integers(len(OPS)))]
        apply(cache, model, snapshot, op, int(rng.integers(10_000)), counter)
        if op == "snapshot":
            assert_same_as_rebuild(snapshot, model, cache)
