"""Snapshot reading helpers: label columns, taint groups and lazily materialised node lists."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.api.taints import Taint
from kubesched.cache.cache import Cache
from kubesched.cache.snapshot import Snapshot
from kubesched.clock import VirtualClock
from tests.factories import make_node, make_pod, make_snapshot

ZONE = "topology.kubernetes.io/zone"
DISK = "disk"  # not a zone label: node order stays insertion order
NO_SCHED = {"key": "gpu", "value": "true", "effect": "NoSchedule"}
PREFER = {"key": "spot", "effect": "PreferNoSchedule"}


def labelled(*zones: str | None) -> Snapshot:
    return make_snapshot([make_node(f"n{i}", labels={DISK: z} if z else {}) for i, z in enumerate(zones)])


def test_label_column_codes_and_values() -> None:
    snapshot = labelled("b", "a", None, "b", "c")
    col = snapshot.label_column(DISK)
    assert col.values == ("b", "a", "c")  # first appearance in node order
    assert col.codes.tolist() == [0, 1, -1, 0, 2]
    assert [col.values[c] if c >= 0 else None for c in col.codes] == ["b", "a", None, "b", "c"]


@pytest.mark.parametrize(
    ("per_value", "when_missing", "want"),
    [
        ([True, False, False], False, [True, False, False, True, False]),
        ([True, False, False], True, [True, False, True, True, False]),
        ([False, False, False], False, [False] * 5),
        ([1, 0, 1], False, [True, False, False, True, True]),  # any truthy dtype
    ],
)
def test_label_column_mask(per_value: list[Any], when_missing: bool, want: list[bool]) -> None:
    col = labelled("b", "a", None, "b", "c").label_column(DISK)
    mask = col.mask(np.array(per_value), when_missing)
    assert mask.dtype == bool and mask.tolist() == want


def test_label_column_of_a_key_no_node_has() -> None:
    col = labelled("a", None).label_column("absent")
    assert col.values == () and col.codes.tolist() == [-1, -1]
    assert col.mask(np.array([], dtype=bool), True).tolist() == [True, True]
    assert col.mask(np.array([], dtype=bool), False).tolist() == [False, False]


def test_label_column_is_cached_until_node_objects_change() -> None:
    cache = Cache(clock=VirtualClock().now)
    cache.add_node(make_node("n1", labels={ZONE: "a"}))
    cache.add_node(make_node("n2", labels={ZONE: "a"}))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    first = snapshot.label_column(ZONE)
    assert snapshot.label_column(ZONE) is first
    version = snapshot.node_objects_version

    cache.add_pod(make_pod("p", node_name="n1"))  # pods do not touch labels: the column survives
    cache.update_snapshot(snapshot)
    assert snapshot.label_column(ZONE) is first

    cache.update_node(None, make_node("n2", labels={ZONE: "b"}))
    cache.update_snapshot(snapshot)
    assert snapshot.node_objects_version > version
    assert snapshot.label_column(ZONE).values == ("a", "b")
    assert snapshot.label_column(ZONE).codes.tolist() == [0, 1]


def test_taint_groups() -> None:
    snapshot = make_snapshot(
        [
            make_node("n0", taints=[NO_SCHED]),
            make_node("n1"),
            make_node("n2", taints=[NO_SCHED]),
            make_node("n3", taints=[NO_SCHED, PREFER]),
            make_node("n4", taints=[PREFER, NO_SCHED]),  # order matters: a different list
            make_node("n5"),
        ]
    )
    ids, groups = snapshot.taint_groups()
    assert ids.tolist() == [0, 1, 0, 2, 3, 1]
    gpu, spot = Taint("gpu", "true", "NoSchedule"), Taint("spot", "", "PreferNoSchedule")
    assert groups == [(gpu,), (), (gpu, spot), (spot, gpu)]
    assert snapshot.taint_groups()[0] is ids  # cached


def test_taint_groups_follow_node_updates() -> None:
    cache = Cache(clock=VirtualClock().now)
    cache.add_node(make_node("n1"))
    cache.add_node(make_node("n2"))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    assert snapshot.taint_groups()[0].tolist() == [0, 0]
    cache.update_node(None, make_node("n2", taints=[NO_SCHED]))
    cache.update_snapshot(snapshot)
    ids, groups = snapshot.taint_groups()
    assert ids.tolist() == [0, 1] and groups[1] == (Taint("gpu", "true", "NoSchedule"),)


def test_node_info_list_by_indices() -> None:
    snapshot = make_snapshot([make_node(f"n{i}") for i in range(4)])
    subset = snapshot.nodes(np.array([2, 0, 3]))
    assert len(subset) == 3
    assert [info.name for info in subset] == ["n2", "n0", "n3"]
    assert subset[0].name == "n2" and subset[-1].name == "n3"
    assert [info.name for info in subset[1:]] == ["n0", "n3"]
    assert subset[1] is snapshot.node_infos[0]
    assert [info.name for info in snapshot.all_nodes()] == ["n0", "n1", "n2", "n3"]
    assert list(snapshot.nodes(np.array([], dtype=np.int64))) == []


class _Untouchable(list[Any]):
    def __getitem__(self, i: Any) -> Any:
        raise AssertionError("node infos read before a per-node access")


def test_node_info_list_is_lazy() -> None:
    """Length and indices come from the index array; NodeInfo objects are gathered only on first access."""
    snapshot = make_snapshot([make_node(f"n{i}") for i in range(3)])
    infos = snapshot.node_infos
    subset = snapshot.nodes(np.array([1, 2]))
    snapshot.node_infos = _Untouchable(infos)
    assert len(subset) == 2 and subset.indices.tolist() == [1, 2]
    snapshot.node_infos = infos
    first = subset[0]
    snapshot.node_infos = _Untouchable(infos)
    assert subset[1].name == "n2" and subset[0] is first  # materialised once, then kept


def test_get_and_resource_column() -> None:
    snapshot = make_snapshot([make_node("a", extra={"nvidia.com/gpu": "2"}), make_node("b")])
    assert snapshot.get("a") is snapshot.node_infos[0] and snapshot.get("zzz") is None
    assert len(snapshot) == 2
    gpu = snapshot.resource_column("nvidia.com/gpu")
    assert gpu is not None and snapshot.allocatable[:, gpu].tolist() == [2, 0]
    assert snapshot.resource_column("cpu") == 0 and snapshot.resource_column("example.com/none") is None
    assert snapshot.names.tolist() == ["a", "b"]
